"""The README's smallest suite runs as written: its two YAML blocks, its ``library_desk.py`` and its case line.

The keys table beside it lists every top-level key of oloproof.yaml (checked against the model's fields).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from scipy.stats import beta

import oloproof_nb as op
from oloproof_nb._config.suite_config import SuiteConfig

README = Path(__file__).resolve().parent.parent.parent / "README.md"


def _yaml_block(text: str, first_line: str) -> dict:
    block = re.search(r"```yaml\n(" + re.escape(first_line) + r".*?)```", text, re.S)
    assert block is not None, first_line
    return yaml.safe_load(block.group(1))


def _smallest_suite(folder: Path, n_cases: int) -> Path:
    """The README's smallest suite in ``folder``, its case line repeated for books b00, b01, …"""
    text = README.read_text(encoding="utf-8")
    suite = _yaml_block(text, "# oloproof.yaml — the smallest suite")
    release = _yaml_block(text, "# release.yaml — without it nothing is gated")
    assert suite["system"] == "library_desk:LoanDesk" and set(release["criteria"]) == {"answer_matches",
                                                                                         "state_matches"}
    desk = re.search(r"```python\n(# library_desk\.py.*?)```", text, re.S)
    case_line = re.search(r'```json\n(\{"id": "b00".*?)\n```', text, re.S)
    assert desk is not None and case_line is not None, "the README shows library_desk.py and a case line"
    folder.mkdir()
    (folder / "oloproof.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    (folder / "release.yaml").write_text(yaml.safe_dump(release), encoding="utf-8")
    (folder / "library_desk.py").write_text(desk.group(1), encoding="utf-8")
    lines = [case_line.group(1).replace("b00", f"b{i:02d}") for i in range(n_cases)]
    assert [json.loads(line)["id"] for line in lines] == [f"b{i:02d}" for i in range(n_cases)]
    (folder / "cases.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return folder


@pytest.mark.parametrize(("n_cases", "verdict"), [(12, "INSUFFICIENT_EVIDENCE"), (17, "PASS")])
def test_the_readmes_smallest_suite_runs_as_written(tmp_path: Path, n_cases: int, verdict: str) -> None:
    """The README gave the two YAML files but not the system they name, so they did not run as
    written. It now shows library_desk.py and a case line, and says what 12 and 17 such cases give."""
    folder = _smallest_suite(tmp_path / "library", n_cases)
    gate = op.gate(op.run(op.load_suite(folder), progress=False))
    table = gate.table.set_index("criterion")
    assert table["passed"].to_dict() == {"answer_matches": n_cases, "state_matches": n_cases}
    assert set(table["verdict"]) == {verdict}
    if verdict == "INSUFFICIENT_EVIDENCE":  # "each criterion INSUFFICIENT_EVIDENCE (`interval_includes_threshold`)"
        # and the reason says how many would decide it: "seventeen cases ... make it PASS"
        assert set(table["reason"]) == {"interval_includes_threshold; every row passes: with 12 independent rows no "
                                        "lower bound is above 0.025^(1/12); 0.8 needs at least 17 (README section 6, "
                                        "How big must a suite be?)"}
    assert gate.verdict == ("PASS" if verdict == "PASS" else "BLOCK")
    # every row passes: the exact (Clopper-Pearson) lower end is the beta quantile, 0.025 ** (1 / n):
    # 0.735 for 12 cases (below 0.8), 0.805 for 17; the README gives both
    low = beta.ppf(0.025, n_cases, 1)
    assert table["ci_low"].tolist() == pytest.approx([low, low], abs=1e-9)
    assert f"{low:.3f}" in README.read_text(encoding="utf-8")


def test_the_readmes_one_case_line_as_pasted_is_counted_in_the_singular(tmp_path: Path) -> None:
    """The first run of the README's suite has the one case line it shows; its reason said ``with 1 independent
    rows``."""
    folder = _smallest_suite(tmp_path / "library", 1)
    table = op.gate(op.run(op.load_suite(folder), progress=False)).table
    assert set(table["verdict"]) == {"INSUFFICIENT_EVIDENCE"}
    assert set(table["reason"]) == {"interval_includes_threshold; every row passes: with 1 independent row no lower "
                                    "bound is above 0.025^(1/1); 0.8 needs at least 17 (README section 6, How big "
                                    "must a suite be?)"}


def test_the_keys_table_lists_every_key_of_oloproof_yaml() -> None:
    text = README.read_text(encoding="utf-8")
    table = text[text.index("| key of oloproof.yaml |"):]
    table = table[:table.index("\n\n")]
    keys = {k for row in table.splitlines()[2:] for k in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert keys == set(SuiteConfig.model_fields)


def test_the_keys_table_gives_the_models_defaults() -> None:
    """Each default in the keys table is the model's: ``required`` where the key has none, ``none`` for an empty
    list or mapping, the value itself otherwise, and for ``tool_errors`` every signal of the default rule."""
    text = README.read_text(encoding="utf-8")
    table = text[text.index("| key of oloproof.yaml |"):]
    table = table[:table.index("\n\n")]
    shown: dict[str, str] = {}
    for row in table.splitlines()[2:]:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        for key in re.findall(r"`(\w+)`", cells[0]):
            shown[key] = cells[1]
    for key, field in SuiteConfig.model_fields.items():
        if field.is_required():
            assert shown[key] == "required", key
            continue
        default = field.get_default(call_default_factory=True)
        if key == "tool_errors":
            signals = ([f"{k}: false" for k in default.ok_keys] + list(default.error_keys)
                       + [f"{k}: {v}" for k in default.status_keys for v in default.status_values])
            assert re.findall(r"`([^`]+)`", shown[key]) == signals
        elif key == "metamorphic":
            assert shown[key] == "none" and not default.transforms
        elif isinstance(default, (list, dict)):
            assert shown[key] == "none" and not default, key
        elif isinstance(default, str):
            assert shown[key] == f"`{default}`", key
        else:
            assert float(shown[key]) == default, key


def test_the_smallest_suites_reset_gets_a_copy_it_may_change(tmp_path: Path) -> None:
    """``LoanDesk.reset`` keeps the dict it is given and ``lend`` changes it in place; a newcomer asked
    whether that changes the case itself. The README's comment says it is a copy: after a run of two epochs on one
    instance, the case's own ``initial_state`` is as the file wrote it, and the second epoch, reset from it, passes."""
    text = README.read_text(encoding="utf-8")
    desk = re.search(r"```python\n(# library_desk\.py.*?)```", text, re.S)
    assert desk is not None and "def reset(self, state): self.state = state" in desk.group(1)
    assert "a copy of its initial_state" in desk.group(1)
    suite = op.load_suite(_smallest_suite(tmp_path / "library", 2))
    run = op.run(suite, epochs=2, workers=1, progress=False)
    assert [case.initial_state for case in suite.cases] == [{"loans": {}}, {"loans": {}}]
    verdicts = run.verdicts
    assert len(verdicts) == 8 and set(verdicts["verdict"]) == {"pass"}
    changes = run.changes
    assert sorted(changes.loc[changes["path"] == "loans.b00", "epoch"]) == [1, 2]


def _release_table() -> dict[str, str]:
    text = README.read_text(encoding="utf-8")
    assert "| key of release.yaml |" in text, "section 1 tabulates release.yaml's keys beside oloproof.yaml's"
    table = text[text.index("| key of release.yaml |"):]
    table = table[:table.index("\n\n")]
    shown: dict[str, str] = {}
    for row in table.splitlines()[2:]:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        (key,) = re.findall(r"`(\w+)`", cells[0])
        shown[key] = cells[1]
    return shown


def test_the_release_keys_table_lists_every_key_of_release_yaml_with_its_default() -> None:
    """A newcomer whose 12-case suite with copies stayed ``too_few_clusters`` found ``min_clusters``'s
    default of 20 only in a coverage paragraph of section 6; section 1 tabulated oloproof.yaml's keys but not
    release.yaml's. The table lists every key a release.yaml may hold (``reductions`` is filled from ``criteria``,
    not written) with the model's default."""
    from oloproof_nb._config.release import ReleaseConfig

    shown = _release_table()
    assert set(shown) == set(ReleaseConfig.model_fields) - {"reductions"}
    default = ReleaseConfig()
    assert shown["criteria"] == "none" and default.criteria == {}
    for key in ("confidence", "min_clusters"):
        assert float(shown[key]) == getattr(default, key), key
    assert shown["allow_approximate_methods"] == str(default.allow_approximate_methods).lower()
    for key in ("method", "unclustered_method"):
        assert shown[key] == f"`{getattr(default, key)}`", key
    assert shown["bootstrap"] == (f"`resamples: {default.bootstrap.resamples}, seed: {default.bootstrap.seed}`")
    assert default.regression.criteria is None
    assert shown["regression"] == f"`margin: {default.regression.margin}`, every criterion"


def test_an_empty_object_in_expected_state_is_a_value_and_an_empty_state_means_nothing_changed(
        tmp_path: Path) -> None:
    """Section 1 now says a case that must change nothing gives ``"state": {}`` under ``mode: changes``
    and that ``{"bookings": {}}`` says bookings is left empty. A desk that changes nothing passes the first and
    fails the second on a case that starts with a booking (``1 of 1 expected paths differ: bookings``)."""
    text = README.read_text(encoding="utf-8")
    assert 'A case that must change nothing gives `"state": {}` under `mode: changes`' in text
    folder = _smallest_suite(tmp_path / "library", 1)
    start = {"loans": {}, "bookings": {"mon": {"r1": "ann"}}}
    cases = [{"id": "empty-state", "input": {}, "initial_state": start,
              "expected": {"answer": "no room", "state": {}}},
             {"id": "empty-object", "input": {}, "initial_state": start,
              "expected": {"answer": "no room", "state": {"bookings": {}}}}]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (folder / "idle_desk.py").write_text(
        "import oloproof_nb as op\n\nclass IdleDesk(op.RecordedAgent):\n    version = 'idle-1'\n"
        "    def reset(self, state): self.state = state\n    def snapshot(self): return self.state\n"
        "    def act(self, input, rec): return 'no room'\n", encoding="utf-8")
    config = yaml.safe_load((folder / "oloproof.yaml").read_text(encoding="utf-8"))
    (folder / "oloproof.yaml").write_text(yaml.safe_dump({**config, "system": "idle_desk:IdleDesk"}),
                                          encoding="utf-8")
    verdicts = op.run(op.load_suite(folder), progress=False).verdicts
    state = verdicts[verdicts["criterion"] == "state_matches"].set_index("case_id")
    assert state.loc["empty-state", "verdict"] == "pass"
    assert state.loc["empty-object", "verdict"] == "fail"
    assert state.loc["empty-object", "reason"] == "1 of 1 expected paths differ: bookings"


def _quoted(text: str, start: str) -> str:
    """The README's quote of the line that starts with ``start``, without its leading and trailing ``…``."""
    found = re.search(r"`…(" + re.escape(start) + r"[^`]*?) …`", text)
    assert found is not None, start
    return found.group(1)


def test_the_line_above_no_criteria_names_the_suite_s_release_yaml_by_its_recorded_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Section 8 quoted the line as ``demo/release.yaml names no criterion to gate; …``, the folder as the command
    was given it; the line names the suite's file by the absolute path the run recorded, whatever was given."""
    from oloproof_nb.cli import main

    text = README.read_text(encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    folder = _smallest_suite(tmp_path / "demo", 1)
    (folder / "release.yaml").write_text("", encoding="utf-8")  # an empty release.yaml gates nothing
    op.run(op.load_suite("demo"), progress=False)
    assert main(["gate", "demo"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "gate: BLOCK — exit 1: no_criteria: nothing was gated"
    quote = _quoted(text, "/demo/release.yaml names no criterion to gate;")
    assert lines[-2].startswith(str(tmp_path.resolve()) + quote)
    (folder / "release.yaml").unlink()  # none when the run started
    op.run(op.load_suite("demo"), progress=False)
    assert main(["gate", "demo"]) == 1
    lines = capsys.readouterr().out.splitlines()
    quote = _quoted(text, "/demo/release.yaml: there was none when the run started,")
    assert lines[-2].startswith(str(tmp_path.resolve()) + quote)
