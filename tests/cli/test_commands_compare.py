"""`oloproof compare BASE_RUN CANDIDATE_RUN`: the table within 100 columns, the closing line, exit 0 / 1 / 2."""

from __future__ import annotations

import copy
import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from _frame_checks import rename_run
from _json_output import assert_help_names, cell, one_object

import oloproof_nb as op
from oloproof_nb.cli import main


class Answerer:
    def __init__(self, broken: frozenset[str] = frozenset()) -> None:
        self.broken, self.state, self.version = broken, {}, "v-" + ",".join(sorted(broken))

    def reset(self, state: dict[str, Any]) -> None:
        self.state = copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def run(self, input: dict[str, Any]) -> dict[str, Any]:
        return {"steps": [], "answer": "wrong" if input["tag"] in self.broken else input["answer"]}


@pytest.fixture
def runs(make_suite: Callable[..., Path], tmp_path: Path) -> dict[str, Path]:
    cases = [{"id": f"case-with-a-rather-long-name-{i:02d}", "input": {"tag": str(i), "answer": "ok"},
              "expected": {"answer": "ok"}} for i in range(24)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches",
                                          "criterion": "the_answer_is_exactly_what_the_case_expects"}],
                      release={"regression": {"margin": 0.2}})
    suite = op.load_suite(root)
    out = {}
    for name, broken in (("base", frozenset()), ("same", frozenset()), ("worse", frozenset(map(str, range(12))))):
        out[name] = op.run(suite, system=lambda b=broken: Answerer(b), out=tmp_path / name, progress=False).directory
    return out


def test_no_regression_exits_0(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(runs["base"]), str(runs["same"])]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert "the_answer_is_exactly_what_the_case_expects" in out and "NO_REGRESSION" in out
    assert lines[-1] == "compare: NO_REGRESSION — exit 0: every listed criterion's interval lies above -margin"


def test_a_vacuous_criterion_is_counted_in_the_exit_line(make_suite: Callable[..., Path], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """As ``oloproof gate`` counts a PASS's vacuous criteria in its last line, so does a NO_REGRESSION (before:
    ``compare: NO_REGRESSION — exit 0`` on a check that cannot fail, with no word of it)."""
    cases = [{"id": f"c{i:02d}", "input": {"tag": str(i), "answer": "ok"}, "expected": {"answer": "ok"},
              "initial_state": {"orders": {"o1": {"status": "open"}}}} for i in range(24)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"},
                                         {"type": "state_unchanged", "criterion": "kept", "paths": ["orders.o2"]}],
                      release={"regression": {"margin": 0.2}})
    with pytest.warns(op.VacuousCheckWarning):
        suite = op.load_suite(root)
    base, again = (op.run(suite, system=Answerer, out=tmp_path / name, progress=False).directory
                   for name in ("base", "again"))
    assert main(["compare", str(base), str(again)]) == 0
    lines = capsys.readouterr().out.splitlines()
    said = " ".join(map(str.strip, lines))  # notes wrapped to the width
    assert any(line.startswith("note: vacuous check (both runs):") for line in lines) and "'orders.o2'" in said
    assert lines[-1] == ("compare: NO_REGRESSION — exit 0: every listed criterion's interval lies above -margin "
                         "(1 of them vacuous: cannot fail as configured)")
    # a vacuous criterion the rule does not list (REPORT_ONLY) is no listed criterion of the line
    (tmp_path / "listed.yaml").write_text(yaml.safe_dump({"regression": {"margin": 0.2,
                                                                         "criteria": ["answer_matches"]}}))
    assert main(["compare", str(base), str(again), "--release", str(tmp_path / "listed.yaml")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("note: vacuous check (both runs):") for line in lines)
    assert lines[-1].startswith("compare: NO_REGRESSION — exit 0: every listed criterion's interval lies above "
                                "-margin") and "vacuous" not in lines[-1]


def test_regression_exits_1(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(runs["base"]), str(runs["worse"])]) == 1
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    assert "flipped (p->f, f->p): 12 rows in 12 cases" in out
    assert out.splitlines()[-1].startswith("compare: REGRESSION — exit 1")


def test_insufficient_evidence_exits_1(runs: dict[str, Path], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    release = tmp_path / "strict.yaml"
    release.write_text(yaml.safe_dump({"regression": {"margin": 0.02}}), encoding="utf-8")
    assert main(["compare", str(runs["base"]), str(runs["same"]), "--release", str(release)]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == ("compare: INSUFFICIENT_EVIDENCE — exit 1: a regression larger than the margin is not ruled out")


def test_errors_exit_2(runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(runs["base"]), str(tmp_path / "nowhere")]) == 2
    assert "nowhere: no such file or folder; give a run directory or a suite folder" in capsys.readouterr().err
    release = tmp_path / "bad.yaml"
    release.write_text(yaml.safe_dump({"regression": {"criteria": ["nope"]}}), encoding="utf-8")
    assert main(["compare", str(runs["base"]), str(runs["same"]), "--release", str(release)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "regression.criteria" in err and "Traceback" not in err


def test_inspect_logs_are_refused_saying_how_to_compare_them(runs: dict[str, Path], tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """README §10 says to compare models' logs with op.compare; `oloproof compare` given a log said
    "not a directory (a run directory holds manifest.json …)", and given a folder of logs "not a run directory
    … or a suite folder", neither saying that the command reads no logs nor how to compare them."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.eval").write_bytes(b"")  # by its suffix: what gate and report would read as a log
    for given in (logs / "a.eval", logs):
        assert main(["compare", str(given), str(runs["base"])]) == 2
        assert capsys.readouterr().err == (f"oloproof: error: {given}: Inspect AI logs, which oloproof compare does "
                                           "not read; compare them in Python, op.compare(op.from_inspect(BASE), "
                                           "op.from_inspect(CANDIDATE)), or give a run directory or a suite folder\n")


def test_a_log_kept_in_a_suite_folder_is_refused_as_a_log_not_as_a_file_of_the_suite(
        runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file of a suite folder given as a run (``demo/oloproof.yaml``) is refused naming the
    folder, but an Inspect AI log kept in a suite folder is a log: refused saying how to compare logs,
    as the same log is anywhere else (the line of the test above), not sent to the suite's latest run."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "oloproof.yaml").write_text("name: s\nsystem: desk:Desk\n", encoding="utf-8")
    (suite / "a.eval").write_bytes(b"")
    assert main(["compare", str(suite / "a.eval"), str(runs["base"])]) == 2
    assert capsys.readouterr().err == (f"oloproof: error: {suite / 'a.eval'}: Inspect AI logs, which oloproof compare "
                                       "does not read; compare them in Python, op.compare(op.from_inspect(BASE), "
                                       "op.from_inspect(CANDIDATE)), or give a run directory or a suite folder\n")


def test_a_json_file_that_is_no_log_is_not_called_inspect_ai_logs(runs: dict[str, Path], tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The refusal above went by the suffix alone, so a run's own manifest.json (given for its folder)
    or any .json was called "Inspect AI logs" and the user told to compare it with op.from_inspect. A .json that
    does not read as a log is refused as before the refusal was added: not a directory."""
    notes = tmp_path / "notes.json"
    notes.write_text('{"a": 1}\n', encoding="utf-8")
    for given in (runs["base"] / "manifest.json", notes):
        assert main(["compare", str(given), str(runs["base"])]) == 2
        assert capsys.readouterr().err == (f"oloproof: error: {given}: not a directory (a run directory holds "
                                           "manifest.json and cases.jsonl)\n")


def test_help_says_what_the_exit_codes_mean(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Exit 0 only when the overall verdict is NO_REGRESSION; 1 on REGRESSION or INSUFFICIENT_EVIDENCE" in text


def test_an_unfinished_run_is_an_error(runs: dict[str, Path], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    import json
    import shutil

    partial = tmp_path / "partial"
    shutil.copytree(runs["same"], partial)
    manifest = json.loads((partial / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (partial / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["compare", str(runs["base"]), str(partial)]) == 2
    assert "the run did not finish" in capsys.readouterr().err
    assert op.compare(runs["base"], runs["same"]).verdict == "NO_REGRESSION"
    cmp = op.compare(runs["base"], partial)  # in Python it is compared, never NO_REGRESSION
    assert (cmp.table["verdict"] == "NO_REGRESSION").all() and cmp.verdict == "INSUFFICIENT_EVIDENCE"
    assert cmp.reason.startswith(f"the candidate run {cmp.candidate.run_id}: unfinished: the run did not finish")


def test_a_criterion_left_undecided_by_a_rule_has_its_reason_printed(runs: dict[str, Path], tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The interval lies above -margin, but min_clusters leaves the criterion undecided: the command says so.

    It used to print no reason at all and end with "a regression larger than the margin is not ruled out",
    which the numbers on the same screen contradict (op.compare's table says too_few_clusters).
    """
    from scipy.stats import beta

    release = tmp_path / "more_clusters.yaml"
    release.write_text(yaml.safe_dump({"min_clusters": 30, "regression": {"margin": 0.2}}), encoding="utf-8")
    assert main(["compare", str(runs["base"]), str(runs["same"]), "--release", str(release)]) == 1
    lines = capsys.readouterr().out.splitlines()
    cmp = op.compare(runs["base"], runs["same"], release=release)
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE" and cmp.table["reason"].iloc[0].startswith("too_few_clusters")
    # nothing changed in 24 singleton clusters: ± the Clopper–Pearson upper bound of 0 of 24, all above -0.2
    bound = beta.ppf(0.975, 1, 24)  # 1 - 0.025 ** (1 / 24) = 0.1425
    assert cmp.table["ci_low"].iloc[0] == pytest.approx(-bound, abs=1e-9) and -bound > -0.2
    header = next(line for line in lines if line.startswith("criterion")).split()
    row = next(line for line in lines if line.startswith("the_answer_is_exactly")).split()
    assert [row[header.index("ci_low")], row[header.index("ci_high")]] == ["-0.143", "+0.143"]  # outward, signed
    assert any(line.startswith("the_answer_is_exactly_what_the_case_expects: too_few_clusters: its rows fall in 24 "
                               "clusters,") for line in lines)
    assert any(line.startswith("    min_clusters is 30; the paired differences") for line in lines)  # wrapped
    assert lines[-1] == "compare: INSUFFICIENT_EVIDENCE — exit 1: not decided: too_few_clusters"
    assert max(len(line) for line in lines) <= 100, [line for line in lines if len(line) > 100]


def test_a_cut_criterion_name_is_given_whole_under_the_table() -> None:
    """A name too long for 100 columns was cut with … and, with a plain reason (no line under the table), appeared
    nowhere whole; two such names could read the same."""
    from oloproof_nb._display.terminal import compare_table_text

    names = ["a_criterion_whose_name_runs_on_and_on_" + "x" * 40 + suffix for suffix in ("_one", "_two")]
    table = pd.DataFrame({"criterion": names, "base_rate": 1.0, "candidate_rate": 1.0, "difference": 0.0,
                          "ci_low": -0.1, "ci_high": 0.1, "n": 24, "pass_to_fail": 0, "fail_to_pass": 0,
                          "missing": 0, "verdict": "INSUFFICIENT_EVIDENCE"})
    lines = compare_table_text(table).splitlines()
    assert max(len(line) for line in lines) <= 100
    rows = [line for line in lines if "INSUFFICIENT_EVIDENCE" in line]
    assert len(rows) == 2 and all("…" in row and "_one" not in row and "_two" not in row for row in rows)  # cut
    assert [line.strip() for line in lines if line.strip() in names] == names  # each whole under the table


def test_a_suite_folder_stands_for_its_latest_run(make_suite: Callable[..., Path],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """As for `oloproof gate` and `report`: `compare RUN SUITE` compares with the suite's latest run (it said
    "not a run directory"), stderr says which; the same run on both sides is an error, not a comparison."""
    cases = [{"id": f"c{i:02d}", "input": {"tag": str(i), "answer": "ok"}, "expected": {"answer": "ok"}}
             for i in range(24)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release={"regression": {"margin": 0.2}})
    suite = op.load_suite(root)
    base = op.run(suite, system=Answerer, progress=False).directory
    worse = op.run(suite, system=lambda: Answerer(frozenset(map(str, range(12)))), progress=False).directory
    assert base.parent == worse.parent == root / "runs"  # worse started last
    assert main(["compare", str(base), str(root)]) == 1
    captured = capsys.readouterr()
    assert captured.err == f"oloproof: candidate: the latest run of the suite: {worse}\n"
    assert captured.out.splitlines()[-1].startswith("compare: REGRESSION — exit 1")
    assert main(["compare", str(root), str(worse)]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (f"oloproof: error: {worse}: the base and the candidate are "
                                                        "the same run; compare two runs")
    copied = shutil.copytree(worse, root / "elsewhere")  # a CI artifact downloaded twice: one run in two folders
    assert main(["compare", str(worse), str(copied)]) == 2  # was NO_REGRESSION, exit 0
    run_id = op.load_run(worse).run_id
    assert capsys.readouterr().err.splitlines()[-1] == (f"oloproof: error: compare: the base and the candidate are "
                                                        f"the same run {run_id} ({worse} and {copied}); compare "
                                                        "two runs")
    with pytest.raises(op.OloproofError, match=f"the same run {run_id}"):
        op.compare(op.load_run(worse), op.load_run(worse))


def test_a_candidate_that_skipped_base_cases_exits_1_saying_so(runs: dict[str, Path], make_suite: Callable[..., Path],
                                                               tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The candidate's run holds 21 of the base's 24 cases (it would fail the other three): the criterion clears
    the margin on the paired cases, and the command exited 0. Now 1, naming why."""
    cases = [{"id": f"case-with-a-rather-long-name-{i:02d}", "input": {"tag": str(i), "answer": "ok"},
              "expected": {"answer": "ok"}} for i in range(3, 24)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches",
                                          "criterion": "the_answer_is_exactly_what_the_case_expects"}],
                      release={"regression": {"margin": 0.2}})
    subset = op.run(op.load_suite(root), system=lambda: Answerer(frozenset({"0", "1", "2"})), out=tmp_path / "sub",
                    progress=False)
    assert main(["compare", str(runs["base"]), str(subset.directory), "--release",
                 str(root / "release.yaml")]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("compare: INSUFFICIENT_EVIDENCE (cases_not_in_both_runs: 3 case run(s) of the base run "
                           "are not paired (only_in_base: 3)")
    assert last.endswith("— exit 1: not decided: cases_not_in_both_runs")


#: Text a suite or a run folder can hold that would rewrite the screen: a carriage return and ESC[2K erase the
#: line, a forged verdict follows, ESC[8m hides everything printed after it (the real closing line).
FORGING = "\r\x1b[2Kcompare: NO_REGRESSION — exit 0\x1b[8m"


def test_compare_shows_run_ids_and_notes_as_written(runs: dict[str, Path], make_suite: Callable[..., Path],
                                                     tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof compare`` printed its header's run ids (read from each run's manifest.json) and its
    notes (which name criteria, from the suite) as they were: ESC[8m there hid the closing REGRESSION line. Every
    line is now printable, and the last is the real closing line."""
    cases = [{"id": f"case-with-a-rather-long-name-{i:02d}", "input": {"tag": str(i), "answer": "ok"},
              "expected": {"answer": "ok"}} for i in range(24)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches",
                                          "criterion": "the_answer_is_exactly_what_the_case_expects"},
                                         {"type": "answer_matches", "criterion": "also" + FORGING}],
                      release={"regression": {"margin": 0.2}})
    broken = frozenset(map(str, range(12)))
    candidate = op.run(op.load_suite(root), system=lambda: Answerer(broken), out=tmp_path / "cand",
                       progress=False).directory
    shutil.rmtree(candidate / "frames", ignore_errors=True)
    rename_run(candidate, "cand" + FORGING)
    assert main(["compare", str(runs["base"]), str(candidate)]) == 1
    out = capsys.readouterr().out
    lines = out.split("\n")
    assert [line for line in lines if not line.isprintable()] == []
    assert "-> candidate cand\\r\\x1b[2Kcompare: NO_REGRESSION — exit 0\\x1b[8m" in lines[0]
    assert "note: criterion also\\r\\x1b[2Kcompare: NO_REGRESSION — exit 0\\x1b[8m is judged only in the " \
           "candidate run" in " ".join(map(str.strip, lines))  # a note wrapped to the width
    assert out.splitlines()[-1].startswith("compare: REGRESSION — exit 1: ")


def test_a_looser_margin_given_says_so_where_no_regression_is_read(runs: dict[str, Path], tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """--release with a margin of 0.5 where the runs' release.yaml says 0.2 gave a NO_REGRESSION
    whose exit line read as the runs' own (only the header's 'margin 0.5' told them apart). The
    weaker rule explains a NO_REGRESSION, so only that exit line counts it; a candidate with 12 of its 24 cases
    broken (exit 1 whatever the interval says) has it named in the note and not on its exit line."""
    release = tmp_path / "loose.yaml"
    for candidate, margin, code in (("same", 0.5, 0), ("worse", 0.25, 1)):
        release.write_text(yaml.safe_dump({"regression": {"margin": margin}}), encoding="utf-8")
        assert main(["compare", str(runs["base"]), str(runs[candidate]), "--release", str(release)]) == code
        lines = capsys.readouterr().out.splitlines()
        assert f"note: compared with {release}: 1 setting weaker than the base run's own release settings: " \
               f"regression.margin 0.2 → {margin}" in " ".join(map(str.strip, lines))  # a note wrapped to the width
        if code == 0:
            assert lines[-1] == ("compare: NO_REGRESSION — exit 0: every listed criterion's interval lies above "
                                 "-margin, by 1 setting weaker than the base run's own release settings")
        else:
            assert lines[-1].startswith(("compare: REGRESSION — exit 1: ", "compare: INSUFFICIENT_EVIDENCE — exit 1: "))
            assert "weaker" not in lines[-1]
    release.write_text(yaml.safe_dump({"regression": {"margin": 0.1}}), encoding="utf-8")  # tighter: nothing said
    assert main(["compare", str(runs["base"]), str(runs["same"]), "--release", str(release)]) == 1  # 24 cases
    out = capsys.readouterr().out
    assert "weaker" not in out


def test_runs_made_with_a_looser_margin_than_release_yaml_now_say_so_on_the_exit_line(
        make_suite: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    """Both runs made while regression.margin was 0.5, the file put back to 0.2. The runs'
    own rule decides (NO_REGRESSION, exit 0, as before), but the exit line hard-coded "weaker than the base run's
    own release settings" and counted nothing, so it read as the suite's rule: it now names the file as it is now,
    as `oloproof gate` does; stderr has the drift warning. Put back to 0.5, nothing is said."""
    cases = [{"id": f"c{i:02d}", "input": {"tag": str(i), "answer": "ok"}, "expected": {"answer": "ok"}}
             for i in range(24)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release={"regression": {"margin": 0.5}})
    suite = op.load_suite(root)
    base = op.run(suite, system=Answerer, progress=False).directory
    worse = op.run(suite, system=lambda: Answerer(frozenset(map(str, range(4)))), progress=False).directory
    (root / "release.yaml").write_text("regression: {margin: 0.2}\n", encoding="utf-8")
    now = f"{root / 'release.yaml'} as it is now"
    assert main(["compare", str(base), str(worse)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert f"note: compared with the settings stored with the runs: 1 setting weaker than {now}: " \
           "regression.margin 0.2 → 0.5" in " ".join(map(str.strip, lines))  # a note wrapped to the width
    assert lines[-1] == ("compare: NO_REGRESSION — exit 0: every listed criterion's interval lies above -margin, by 1 "
                         f"setting weaker than {now}")
    assert "release.yaml differs from the release settings run" in captured.err
    assert "oloproof compare --release" in captured.err
    (root / "release.yaml").write_text("regression: {margin: 0.5}\n", encoding="utf-8")  # the runs' own again
    assert main(["compare", str(base), str(worse)]) == 0
    captured = capsys.readouterr()
    assert "weaker" not in captured.out and captured.err == ""
    assert captured.out.splitlines()[-1] == ("compare: NO_REGRESSION — exit 0: every listed criterion's interval "
                                             "lies above -margin")


def _row(out: str) -> dict[str, str]:
    """The criterion's row of a printed compare table, by the table's own header (columns dropped to fit)."""
    lines = out.splitlines()
    head = next(line.split() for line in lines if line.split()[:1] == ["criterion"])
    row = next(line.split() for line in lines if line.startswith("the_answer_is_exactly"))
    return dict(zip(head, row, strict=True))


def test_the_difference_and_its_interval_carry_their_sign_as_the_repr_shows_them(
        runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """The table printed ``0.000 -0.144 0.144`` where ``Comparison``'s repr says ``+0.000 [-0.144,
    +0.144]``; an upper end without its sign read as a rate beside the rates."""
    assert main(["compare", str(runs["base"]), str(runs["worse"])]) == 1
    table = op.compare(op.load_run(runs["base"]), op.load_run(runs["worse"])).table.iloc[0]
    worse = _row(capsys.readouterr().out)
    assert worse["diff"] == "-0.500"  # 12 of 24 broken, by hand
    assert worse["ci_low"] == f"{math.floor(float(table['ci_low']) * 1000) / 1000:+.3f}"  # rounded outward
    assert worse["ci_high"] == f"{math.ceil(float(table['ci_high']) * 1000) / 1000:+.3f}"
    assert main(["compare", str(runs["base"]), str(runs["same"])]) == 0
    same = _row(capsys.readouterr().out)
    assert same["diff"] == "+0.000" and same["ci_low"].startswith("-") and same["ci_high"].startswith("+")
    assert float(same["ci_high"]) > 0


def test_compare_notes_are_wrapped_to_the_width_as_the_gate_s_notes(runs: dict[str, Path], tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``oloproof gate`` wraps its notes to the terminal's width, but ``oloproof compare`` printed each
    note on one line, past 100 columns (here the note naming a --release file). Each note is now wrapped as the
    gate's are: never inside a path, nor inside a change ``0.2 → 0.5``."""
    monkeypatch.setenv("COLUMNS", "100")
    release = tmp_path / "loose-release.yaml"
    release.write_text(yaml.safe_dump({"regression": {"margin": 0.5}}), encoding="utf-8")
    assert main(["compare", str(runs["base"]), str(runs["same"]), "--release", str(release)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines[:-1]) <= 100  # the exit line is one line, whatever its length
    note = (f"note: compared with {release}: 1 setting weaker than the base run's own release settings: "
            "regression.margin 0.2 → 0.5")
    assert len(note) > 100 and note in " ".join(map(str.strip, lines))  # wrapped at spaces only: nothing lost
    assert any(str(release) in line for line in lines) and any("0.2 → 0.5" in line for line in lines)


def test_a_clustered_comparison_not_allowed_approximate_intervals_is_told_which_key_to_set(
        make_suite: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Runs of 3 epochs pair clustered case runs: every criterion said the bare ``approximate_methods_not_allowed``,
    and nothing named the key or the file (the gate's table already said it). Now once, under the table,
    naming --release; each criterion's line keeps the code."""
    cases = [{"id": f"c{i:02d}", "input": {"tag": str(i), "answer": "ok"}, "expected": {"answer": "ok"}}
             for i in range(24)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release={"regression": {"margin": 0.2}})
    suite = op.load_suite(root)
    base, again = (op.run(suite, system=Answerer, out=tmp_path / name, epochs=3, progress=False).directory
                   for name in ("base", "again"))
    assert main(["compare", str(base), str(again)]) == 1
    out = capsys.readouterr().out
    text = " ".join(out.split())  # wrapped to the width
    assert ("the paired runs are clustered (a case's epochs, a copy and its source, or cases given one cluster "
            "share a cluster), and the candidate run's release.yaml (stored when it started: give one that does "
            "with --release to compare these runs, or set it for the next run) does not allow clustered "
            "(approximate) intervals: `allow_approximate_methods: true` decides them") in text
    assert text.count("does not allow clustered") == 1 and "op.compare(" not in text
    assert "answer_matches: approximate_methods_not_allowed" in text
    assert out.splitlines()[-1] == ("compare: INSUFFICIENT_EVIDENCE — exit 1: not decided: "
                                    "approximate_methods_not_allowed")
    allowed = tmp_path / "allowed.yaml"
    allowed.write_text(yaml.safe_dump({"allow_approximate_methods": True, "min_clusters": 20,
                                       "regression": {"margin": 0.2}}), encoding="utf-8")
    assert main(["compare", str(base), str(again), "--release", str(allowed)]) == 0  # 72 rows in 24 clusters
    assert "does not allow clustered" not in capsys.readouterr().out


def test_a_clustered_comparison_of_runs_without_a_release_yaml_names_the_defaults(
        make_suite: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Runs of a suite with no release.yaml are compared under the default settings, yet the note under
    the table said "the candidate run's release.yaml (stored when it started …)", a file that does not exist (the
    library's reason said the defaults). It names the defaults now, as ``op.compare`` does."""
    cases = [{"id": f"c{i:02d}", "input": {"tag": str(i), "answer": "ok"}, "expected": {"answer": "ok"}}
             for i in range(24)]
    suite = op.load_suite(make_suite(cases, evaluators=[{"type": "answer_matches"}]))
    assert suite.release is None
    base, again = (op.run(suite, system=Answerer, out=tmp_path / name, epochs=3, progress=False).directory
                   for name in ("base", "again"))
    assert main(["compare", str(base), str(again)]) == 1
    text = " ".join(capsys.readouterr().out.split())
    assert ("and the default release configuration (the candidate run has no release.yaml: give one that does "
            "with --release to compare these runs) does not allow clustered (approximate) intervals") in text
    assert "release.yaml (stored when" not in text and text.count("does not allow clustered") == 1


@pytest.mark.parametrize(("candidate", "margin", "code", "verdict"), [
    ("same", 0.2, 0, "NO_REGRESSION"), ("worse", 0.2, 1, "REGRESSION"), ("same", 0.02, 1, "INSUFFICIENT_EVIDENCE")])
def test_the_comparison_as_json_is_the_comparison_computed_in_python(
        runs: dict[str, Path], tmp_path: Path, candidate: str, margin: float, code: int, verdict: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof compare --json``: the exit code alone cannot tell a REGRESSION from INSUFFICIENT_EVIDENCE."""
    release = tmp_path / "rule.yaml"
    release.write_text(yaml.safe_dump({"regression": {"margin": margin}}), encoding="utf-8")
    argv = ["compare", str(runs["base"]), str(runs[candidate]), "--release", str(release)]
    assert main(argv) == code
    for_people = capsys.readouterr().out
    assert main([*argv, "--json"]) == code
    out, err = capsys.readouterr()
    assert err == for_people and out.isascii()  # the table on stderr, unchanged; the object in ASCII
    body = one_object(out)
    cmp = op.compare(op.load_run(runs["base"]), op.load_run(runs[candidate]), release=str(release))
    assert (body["command"], body["verdict"], body["exit"], body["reason"]) == ("compare", verdict, code, None)
    assert body["verdict"] == cmp.verdict and body["n_paired"] == cmp.n_paired == 24 and body["margin"] == margin
    assert (body["base_run_id"], body["candidate_run_id"]) == (cmp.base.run_id, cmp.candidate.run_id)
    assert err.splitlines()[-1] == f"compare: {verdict} — exit {code}: {body['why']}"
    (row,) = body["criteria"]
    assert list(row) == list(cmp.table.columns)
    assert row == {column: cell(value) for column, value in cmp.table.iloc[0].items()}
    if candidate == "worse":  # by hand: 12 of 24 cases broken, all 12 discordant pairs one way
        assert (row["base_rate"], row["candidate_rate"], row["difference"]) == (1.0, 0.5, -0.5)
        assert (row["pass_to_fail"], row["fail_to_pass"], row["n"]) == (12, 0, 24)
        assert row["mcnemar_p"] == pytest.approx(2 * 0.5 ** 12)  # exact two-sided McNemar: 2 P(X = 0), X ~ B(12, 1/2)
        assert row["ci_high"] < -margin
    else:
        assert row["difference"] == 0.0 and row["ci_low"] == -row["ci_high"]
        assert (row["ci_low"] >= -margin) is (verdict == "NO_REGRESSION")
        assert r"d\u0302 \u00b1" in out  # the reason's d̂ ± escaped, not replaced by an ASCII stand-in


def test_a_criterion_the_rule_does_not_list_has_a_null_margin_in_json(make_suite: Callable[..., Path], tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A criterion ``regression.criteria`` leaves out is REPORT_ONLY with margin NaN in the table: null here."""
    cases = [{"id": f"c{i:02d}", "input": {"tag": str(i), "answer": "ok"}, "expected": {"answer": "ok"},
              "initial_state": {"orders": {"o1": {"status": "open"}}}} for i in range(24)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"},
                                         {"type": "state_unchanged", "criterion": "kept", "paths": ["orders.o1"]}],
                      release={"regression": {"margin": 0.2, "criteria": ["answer_matches"]}})
    suite = op.load_suite(root)
    base, again = (op.run(suite, system=Answerer, out=tmp_path / name, progress=False).directory
                   for name in ("base", "again"))
    assert main(["compare", str(base), str(again), "--json"]) == 0
    body = one_object(capsys.readouterr().out)
    assert (body["verdict"], body["exit"]) == ("NO_REGRESSION", 0)
    listed, kept = body["criteria"]
    assert (listed["criterion"], listed["margin"]) == ("answer_matches", 0.2)
    assert (kept["criterion"], kept["verdict"], kept["margin"]) == ("kept", "REPORT_ONLY", None)


def test_the_compare_help_names_every_key_of_the_object(runs: dict[str, Path],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    main(["compare", str(runs["base"]), str(runs["same"]), "--json"])
    assert_help_names(set(one_object(capsys.readouterr().out)), "compare", capsys)


def _json_verdict_snippet() -> str:
    """The ```bash block that follows ``<!-- json-verdict -->`` in the README (section 8, CI)."""
    text = (Path(__file__).resolve().parent.parent.parent / "README.md").read_text(encoding="utf-8")
    return text.split("<!-- json-verdict -->\n```bash\n", 1)[1].split("\n```", 1)[0]


@pytest.mark.slow  # two processes a case: 3-4 s of imports
def test_the_readmes_json_one_liner_fails_on_a_proven_regression_only(make_suite: Callable[..., Path],
                                                                      tmp_path: Path) -> None:
    """README section 8: read compare's verdict from ``--json``, exit 1 on REGRESSION, 0 on INSUFFICIENT_EVIDENCE
    (where the command itself exits 1 too)."""
    import os
    import subprocess
    import sys

    cases = [{"id": f"c{i:02d}", "input": {"tag": str(i), "answer": f"ok {i}"}, "expected": {"answer": f"ok {i}"}}
             for i in range(24)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release={"regression": {"margin": 0.02}})
    suite = op.load_suite(root)
    for candidate, broken, code in (("same", frozenset[str](), 0), ("worse", frozenset(map(str, range(12))), 1)):
        work = tmp_path / candidate
        op.run(suite, system=Answerer, out=work / "baseline" / "main-run", progress=False)
        op.run(suite, system=lambda b=broken: Answerer(b), out=work / "pr-run", progress=False)
        env = {**os.environ, "WORK": str(work), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
        done = subprocess.run(["bash", "-c", _json_verdict_snippet()], env=env, capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == code, done.stderr
        verdict = "INSUFFICIENT_EVIDENCE" if candidate == "same" else "REGRESSION"
        assert json.loads((work / "compare.json").read_text(encoding="utf-8"))["verdict"] == verdict


def test_a_looser_rule_is_in_the_object_as_under_the_table(runs: dict[str, Path], tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """``relaxed``, ``weaker_than`` and ``notes`` of ``compare --json`` say what the note under the table says
    (each could be dropped or emptied, and the tests above, where all are empty, still passed)."""
    loose = tmp_path / "loose.yaml"
    loose.write_text("regression: {margin: 0.3}\n", encoding="utf-8")  # the runs' release.yaml: 0.2
    assert main(["compare", str(runs["base"]), str(runs["same"]), "--release", str(loose), "--json"]) == 0
    out, err = capsys.readouterr()
    body = one_object(out)
    assert (body["verdict"], body["margin"]) == ("NO_REGRESSION", 0.3)
    assert body["relaxed"] == ["regression.margin 0.2 → 0.3"]  # by hand: the one setting loosened
    assert body["weaker_than"] == "the base run's own release settings"
    (note,) = body["notes"]
    assert note.endswith("1 setting weaker than the base run's own release settings: regression.margin 0.2 → 0.3")
    assert f"note: {note}" in " ".join(err.split())  # the note printed for people, unwrapped
    assert main(["compare", str(runs["base"]), str(runs["same"]), "--json"]) == 0
    body = one_object(capsys.readouterr().out)
    assert (body["relaxed"], body["weaker_than"], body["notes"], body["margin"]) == ([], None, [], 0.2)
