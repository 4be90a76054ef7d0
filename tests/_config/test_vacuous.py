"""VacuousCheckWarning: checks that cannot fail are named at load_suite, stored with the run, marked by the gate."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from _vacuous_desk import SYSTEM, TYPO, suite

import oloproof_nb as op
from oloproof_nb.cli import main


def test_state_unchanged_typo_warns_naming_evaluator_path_and_nearest(tmp_path: Path) -> None:
    with pytest.warns(op.VacuousCheckWarning) as caught:
        s = op.load_suite(suite(tmp_path, [{"type": "answer_matches"}, TYPO]))
    message = str(caught[0].message)
    assert caught[0].filename == __file__  # the user's line, not a frame of oloproof_nb
    assert "evaluators[1] (state_unchanged, criterion other_order_untouched)" in message
    assert "'orders.ord-99'" in message and "did you mean orders.ord-999?" in message
    assert issubclass(op.VacuousCheckWarning, UserWarning)
    assert s.vacuous == {"other_order_untouched": [message]}


@pytest.mark.parametrize("ev", [
    {"type": "state_unchanged", "criterion": "orders_untouched", "paths": ["orders.*.status"]},
    {"type": "state_matches", "mode": "paths", "paths": ["orders.*.status"]},
])
def test_a_glob_in_exact_paths_is_named_as_no_pattern(tmp_path: Path, ev: dict[str, Any]) -> None:
    """A ToolSandbox-style minefield written ``orders.*.status`` (no order's status may change) is a
    path with a key named '*', which no case holds, so the check passed every case; the warning said "did you mean
    orders.ord-999.status?", which reads as if one order were the fix. It now says the paths are exact and names
    the subtree to give instead."""
    with pytest.warns(op.VacuousCheckWarning) as caught:
        op.load_suite(suite(tmp_path, [ev]))
    message = str(caught[0].message)
    assert "'orders.*.status'" in message and "did you mean" not in message
    assert "exact paths, not patterns" in message and "give orders to cover every path under it" in message


@pytest.mark.parametrize(("path", "key", "instead"), [
    ("orders.ord-*.status", "ord-*", "give orders to cover every path under it"),
    ('orders["ord-*"].status', "ord-*", "give orders to cover every path under it"),
    ("**.status", "**", "judge the whole state with state_matches mode: changes"),
    ("orders.*", "*", "give orders to cover every path under it"),
])
def test_a_wildcard_anywhere_in_a_key_of_exact_paths_is_named_as_no_pattern(tmp_path: Path, path: str, key: str,
                                                                           instead: str) -> None:
    """``*`` inside a key is a wildcard in ``ignore`` (``orders.ord-*.status`` matches every order's status there),
    so a minefield written that way in ``state_unchanged`` names a key called 'ord-*', which no case holds: the check
    passed every case and the warning said "did you mean orders.ord-999.status?" (one order as the fix), as it did
    for a whole-key ``*``; a ``**`` key, and a ``*`` as the last key, are named too."""
    from oloproof_nb._core.paths import parse_pattern, pattern_matches

    assert pattern_matches(parse_pattern("orders.ord-*.status"), ("orders", "ord-001", "status"))  # a pattern there
    with pytest.warns(op.VacuousCheckWarning) as caught:
        op.load_suite(suite(tmp_path, [{"type": "state_unchanged", "criterion": "untouched", "paths": [path]}]))
    message = str(caught[0].message)
    assert f"path {path!r} is in no case's initial_state" in message and "did you mean" not in message
    assert f"exact paths, not patterns ('{key}' is read as a key of that name)" in message and instead in message


def test_a_load_warning_names_the_users_line_when_the_package_loads_the_suite(tmp_path: Path) -> None:
    """``stacklevel=2`` named the package's frame that called ``load_suite``: for
    ``op.run(folder)``, oloproof_nb/_display/notebook.py. The warning names the first frame outside the package."""
    folder = suite(tmp_path / "s", [{"type": "answer_matches"}, TYPO])
    with pytest.warns(op.VacuousCheckWarning, match="orders.ord-99") as caught:
        op.run(folder, out=tmp_path / "run", progress=False)
    assert {w.filename for w in caught if issubclass(w.category, op.VacuousCheckWarning)} == {__file__}


def test_existing_path_and_absent_ok_do_not_warn(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        existing = op.load_suite(suite(tmp_path / "a", [{"type": "state_unchanged", "paths": ["orders.ord-999"]}]))
        absent_ok = op.load_suite(suite(tmp_path / "b", [{**TYPO, "absent_ok": True}]))
    assert existing.vacuous == {} and absent_ok.vacuous == {}  # nor are they listed as vacuous without a warning
    with pytest.warns(op.VacuousCheckWarning, match="orders.ord-99"):  # the same suite without absent_ok: it warns
        assert list(op.load_suite(suite(tmp_path / "c", [TYPO])).vacuous) == ["other_order_untouched"]


def test_state_matches_paths_entry_warns_unless_in_expected_state(tmp_path: Path) -> None:
    ev = {"type": "state_matches", "mode": "paths", "paths": ["orders.ord-001.refund"]}
    with pytest.warns(op.VacuousCheckWarning, match=r"state_matches.*initial_state or expected.state"):
        op.load_suite(suite(tmp_path / "a", [ev]))
    folder = suite(tmp_path / "b", [ev])
    lines = [json.loads(line) for line in (folder / "cases.jsonl").read_text().splitlines()]
    lines[0]["expected"]["state"] = {"orders": {"ord-001": {"refund": 5}}}
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in lines))
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        op.load_suite(folder)


def test_a_paths_entry_expected_only_as_absent_is_still_vacuous(tmp_path: Path) -> None:
    """``{"$absent": true}`` in expected.state at a path no initial_state holds says the path is
    absent, as it already is; the scan took the marker for the path, so a typo checked that way passed every
    case unwarned (while the same path in state_unchanged was warned)."""
    ev = {"type": "state_matches", "mode": "paths", "paths": ["orders.ord-09"]}
    folder = suite(tmp_path, [ev])
    lines = [json.loads(line) for line in (folder / "cases.jsonl").read_text().splitlines()]
    for line in lines:
        line["expected"]["state"] = {"orders": {"ord-09": {"$absent": True}}}
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in lines))
    with pytest.warns(op.VacuousCheckWarning, match=r"'orders.ord-09'"):
        op.load_suite(folder)
    lines[0]["expected"]["state"] = {"orders": {"ord-09": {"status": "open"}}}  # one case expects it to exist
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in lines))
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        op.load_suite(folder)


def test_gate_marks_vacuous_from_the_manifest_and_cli_prints_one_line(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    folder = suite(tmp_path, [{"type": "answer_matches"}, TYPO])
    with pytest.warns(op.VacuousCheckWarning):
        run = op.run(op.load_suite(folder), out=tmp_path / "run", progress=False)
    loaded = op.load_run(tmp_path / "run")
    assert loaded.manifest.suite_config.vacuous["other_order_untouched"]
    table = op.gate(loaded).table.set_index("criterion")
    assert bool(table.loc["other_order_untouched", "vacuous"]) and not bool(table.loc["answer_matches", "vacuous"])
    assert "vacuous check" in op.gate(run)._repr_html_()
    main(["gate", str(tmp_path / "run")])
    err = [line for line in capsys.readouterr().err.splitlines() if "vacuous" in line]
    assert len(err) == 1 and err[0].startswith("oloproof: warning: vacuous check: ") and "ord-999" in err[0]


def test_oloproof_run_prints_a_vacuous_check_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`oloproof run` loads the suite in a child process (which warned at load_suite) and gates in this one (which
    warned again from the run's findings): the README's one line on stderr was two. The child now hands its
    warnings to the parent, which prints each line once."""
    from _reliability_systems import main_in_process

    folder = suite(tmp_path, [{"type": "answer_matches"}, TYPO])
    proc = main_in_process(capsys, "run", str(folder), "--quiet")
    assert proc.returncode == 0, proc.stderr  # answer_matches passes; the vacuous check is not gated
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("oloproof: warning: vacuous check: ") and "ord-999" in lines[0]


def test_fault_recovery_of_a_tool_never_called_is_vacuous_after_the_run(tmp_path: Path) -> None:
    ev = {"type": "fault_recovery", "tool": "lokup", "fault": "error"}
    run = op.run(op.load_suite(suite(tmp_path, [{"type": "answer_matches"}, ev])), out=tmp_path / "run",
                 progress=False)
    with pytest.warns(op.VacuousCheckWarning, match=r"no case called tool 'lokup'.*did you mean lookup\?") as caught:
        g = op.gate(run)
    assert {w.filename for w in caught if issubclass(w.category, op.VacuousCheckWarning)} == {__file__}
    row = g.table.set_index("criterion").loc["recovers_from_error_at_lokup"]
    assert bool(row["vacuous"]) and row["n"] == 0 and "did you mean lookup?" in row["reason"]


#: A desk calling six tools, in this order.
SIX_TOOLS = SYSTEM.replace('''        rec.tool("lookup", self.lookup, order_id=input["order_id"])''', "".join(
    f'''        rec.tool("{name}", self.lookup, order_id=input["order_id"])\n'''
    for name in ("zulu_refund", "echo", "delta", "charlie", "bravo", "alpha")))


def test_a_fault_tool_never_called_is_matched_against_every_tool_called(tmp_path: Path) -> None:
    """The nearest tool is looked for among all six called, not the five listed (zulu_refnd:
    zulu_refund, the sixth in name order); with no near one, the first five in name order are listed (xyz, gated at
    threshold 0 too, keeps both findings); 'refund' is
    near 'issue_refund' as difflib's default cutoff reads it (by hand: 2·6 matching of 6 + 12 characters, 0.67)."""
    folder = suite(tmp_path / "s", [{"type": "fault_recovery", "tool": name, "fault": "error"}
                                    for name in ("zulu_refnd", "xyz")])
    (folder / "desk.py").write_text(SIX_TOOLS)
    (folder / "release.yaml").write_text(yaml.safe_dump({"criteria": {"recovers_from_error_at_xyz": 0}}))
    run = op.run(op.load_suite(folder), out=tmp_path / "run", progress=False)
    with pytest.warns(op.VacuousCheckWarning):
        g = op.gate(run)
    reasons = g.table.set_index("criterion")["reason"]
    assert "no case called tool 'zulu_refnd', so no fault was replayed; did you mean zulu_refund?" in \
        reasons["recovers_from_error_at_zulu_refnd"]
    assert "no case called tool 'xyz', so no fault was replayed; tools called: alpha, bravo, charlie, delta, echo; " \
        "criterion recovers_from_error_at_xyz: threshold 0 passes whatever the rows say" \
        in reasons["recovers_from_error_at_xyz"]  # both findings of a criterion gated at 0, one after the other
    (folder / "desk.py").write_text(SYSTEM.replace('"lookup", self.lookup', '"issue_refund", self.lookup'))
    (folder / "oloproof.yaml").write_text(yaml.safe_dump({"name": "v", "system": "desk:Desk", "evaluators": [
        {"type": "fault_recovery", "tool": "refund", "fault": "error"}]}))
    (folder / "release.yaml").write_text("criteria: {}\n")
    with pytest.warns(op.VacuousCheckWarning, match=r"no case called tool 'refund'.*did you mean issue_refund\?"):
        op.gate(op.run(op.load_suite(folder), out=tmp_path / "near", progress=False))


def test_no_tool_called_and_no_case_run_ended_is_said_without_a_count(tmp_path: Path) -> None:
    """A desk that calls no tool, every case run completed: the finding says no case called any
    tool, with no '(0 of 4 case runs ended …)' after it."""
    folder = suite(tmp_path / "s", [{"type": "fault_recovery", "tool": "lookup", "fault": "error"}])
    silent = SYSTEM.replace('        rec.tool("lookup", self.lookup, order_id=input["order_id"])\n', "")
    (folder / "desk.py").write_text(silent)
    run = op.run(op.load_suite(folder), out=tmp_path / "run", progress=False)
    assert set(run.cases["status"]) == {"completed"} and run.steps.empty
    with pytest.warns(op.VacuousCheckWarning) as caught:
        op.gate(run)
    (message,) = [str(w.message) for w in caught if issubclass(w.category, op.VacuousCheckWarning)]
    assert message.endswith("no case called tool 'lookup', so no fault was replayed; no case called any tool"), message


def test_cli_run_prints_each_load_warning_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["run", str(suite(tmp_path, [{"type": "answer_matches"}, TYPO])), "--out", str(tmp_path / "r"), "--quiet"])
    err = capsys.readouterr().err.splitlines()
    assert sum("vacuous check" in line for line in err) == 1


def test_report_marks_the_vacuous_criterion(tmp_path: Path) -> None:
    from oloproof_nb._display.report import write_report

    folder = suite(tmp_path, [{"type": "answer_matches"}, TYPO])
    with pytest.warns(op.VacuousCheckWarning):
        run = op.run(op.load_suite(folder), out=tmp_path / "run", progress=False)
    text = Path(write_report(run, tmp_path / "report.md")).read_text()
    assert "other_order_untouched (vacuous)" in text and "did you mean orders.ord-999?" in text


@pytest.mark.parametrize(("pattern", "mode"), [("*", "changes"), ("**", "whole"), ("**.*", "changes")])
def test_an_ignore_pattern_that_matches_every_path_is_named(tmp_path: Path, pattern: str, mode: str) -> None:
    """``ignore: ["*"]`` in changes mode let an agent change anything unseen (a payment to an attacker
    passed a case that expects no change); ``["**"]`` in whole mode compares nothing. Patterns that
    leave a path are not named."""
    ev = {"type": "state_matches", "mode": mode, "ignore": [pattern]}
    with pytest.warns(op.VacuousCheckWarning) as caught:
        s = op.load_suite(suite(tmp_path / "all", [ev]))
    assert s.vacuous == {"state_matches": [str(caught[0].message)]}
    assert f"evaluators[0] (state_matches, criterion state_matches): ignore pattern {pattern!r} matches every path"\
        in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        for i, narrow in enumerate(["*.ord-999", "orders.ord-000", "orders.ord-001.status"]):
            op.load_suite(suite(tmp_path / f"narrow{i}", [{**ev, "ignore": [narrow]}]))


@pytest.mark.parametrize("patterns", [["*.*"], ["orders"], ["orders.*"], ["*.ord-*", "orders.*"]])
def test_ignore_patterns_that_hide_every_change_below_the_top_are_named(tmp_path: Path, patterns: list[str]) -> None:
    """Every case's state is orders.<id>.status: patterns that hide any change under `orders` (an edit, a
    deletion, a new order or a new key of one) leave only a new top-level key to be seen; `*.*` let a
    drained account pass. Named at load."""
    ev = {"type": "state_matches", "mode": "changes", "ignore": patterns}
    with pytest.warns(op.VacuousCheckWarning, match=r"its ignore patterns .* hide every change below the "
                                                    r"top-level keys of every case's state"):
        s = op.load_suite(suite(tmp_path, [ev]))
    assert list(s.vacuous) == ["state_matches"]


@pytest.mark.parametrize("patterns", [["orders.*.status"], ["**.status"], ["**.updated_at"],
                                      ["*.ord-999", "orders.ord-00*"]])
def test_ignore_patterns_that_leave_a_change_to_see_are_not_named(tmp_path: Path, patterns: list[str]) -> None:
    """These cover every leaf the cases hold, yet a new order, or a new key of one, is still seen: the check
    can fail (a first version of this rule called them vacuous)."""
    ev = {"type": "state_matches", "mode": "changes", "ignore": patterns}
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        s = op.load_suite(suite(tmp_path, [ev]))
    assert s.vacuous == {}
    assert [type(e).__name__ for e in s.config.evaluators] == ["StateMatches"]  # the check was read, not dropped


def _whole_suite(tmp: Path, ignore: list[str], odd_note: bool = False, mode: str = "whole") -> Path:
    """Four cases that each expect their order refunded (mode: whole, or ``mode``); with ``odd_note`` the last one
    expects its note rewritten instead."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "desk.py").write_text(SYSTEM)
    cases = []
    for i in range(4):
        oid = f"ord-{i:03d}"
        initial = {"orders": {oid: {"status": "open", "note": "new"}, "ord-999": {"status": "open", "note": "x"}}}
        after = json.loads(json.dumps(initial))
        if odd_note and i == 3:
            after["orders"][oid]["note"] = "checked"
        else:
            after["orders"][oid]["status"] = "refunded"
        cases.append({"id": oid, "input": {"order_id": oid}, "initial_state": initial,
                      "expected": {"answer": "done", "state": after}})
    (tmp / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    ev = {"type": "state_matches", "mode": mode, "ignore": ignore}
    (tmp / "oloproof.yaml").write_text(yaml.safe_dump({"name": "v", "system": "desk:Desk", "evaluators": [ev]}))
    (tmp / "release.yaml").write_text(yaml.safe_dump({"criteria": {"state_matches": 0.5}}))
    return tmp


@pytest.mark.parametrize("mode", ["whole", "changes"])
def test_whole_mode_ignore_patterns_that_hide_every_expected_change_are_named(tmp_path: Path, mode: str) -> None:
    """In mode whole an ignore pattern hides the leaves expected.state names too. ``orders.*.status``,
    meant for the other orders' statuses, hid the only change the cases expect: an agent that refunded nothing
    passed every case, unwarned (the pattern matches neither every path nor every leaf below the top). Mode
    changes leaves them out as well (so it too passed the idle agent 4 of 4, unwarned)."""
    root = _whole_suite(tmp_path / "hidden", ["orders.*.status"], mode=mode)
    with pytest.warns(op.VacuousCheckWarning, match=r"its ignore patterns 'orders\.\*\.status' cover every leaf "
                                                    r"where expected\.state differs from initial_state in each of "
                                                    r"the 4 case\(s\) that expect a change"):
        s = op.load_suite(root)
    assert list(s.vacuous) == ["state_matches"]
    gate = op.gate(op.run(s, progress=False))  # the claim: the Desk changes nothing, and passes every case
    assert (gate.table.loc[0, "passed"], gate.table.loc[0, "n"], bool(gate.table.loc[0, "vacuous"])) == (4, 4, True)


@pytest.mark.parametrize("mode", ["whole", "changes"])
@pytest.mark.parametrize(("ignore", "odd_note"), [(["orders.*.note"], False), (["orders.*.status"], True),
                                                  (["orders.ord-999.*"], False)])
def test_whole_mode_ignore_patterns_that_leave_an_expected_change_are_not_named(tmp_path: Path, ignore: list[str],
                                                                                odd_note: bool, mode: str) -> None:
    """Not named when some case expects a change an idle agent fails: the refund (the pattern covers notes, or
    the other order), or the last case's rewritten note."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        s = op.load_suite(_whole_suite(tmp_path, ignore, odd_note, mode))
    assert s.vacuous == {}


def test_ignore_patterns_that_hide_everything_below_the_top_are_named_once_in_whole_mode(tmp_path: Path) -> None:
    """``orders.*`` in mode whole both hides every expected change and every change below the top-level keys:
    one finding (the wider one), not the same evaluator named twice for one cause."""
    with pytest.warns(op.VacuousCheckWarning) as caught:
        s = op.load_suite(_whole_suite(tmp_path, ["orders.*"]))
    assert len(s.vacuous["state_matches"]) == 1
    assert "hide every change below the top-level keys" in s.vacuous["state_matches"][0]
    assert len([w for w in caught if issubclass(w.category, op.VacuousCheckWarning)]) == 1


def test_patterns_that_leave_a_whole_order_replaced_to_see_are_not_named(tmp_path: Path) -> None:
    """``orders.*key`` and ``orders.*.*key`` match only keys ending in "key" (a new order or a new key of one
    named so), ``orders.*.status`` every status: yet an order replaced whole (``orders.ord-000`` set to a
    text) is a change at a path none of them covers, so the check can fail: not named."""
    ev = {"type": "state_matches", "mode": "changes", "ignore": ["orders.*key", "orders.*.*key", "orders.*.status"]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        s = op.load_suite(suite(tmp_path, [ev]))
    assert s.vacuous == {}


def _thin_suite(make_suite: Callable[..., Path], minimum: float) -> Path:
    """Four sources of the metamorphic test system; the copies of c0 and c1 end '!state' (their pairs fail
    same_state), those of c2 and c3 do not (theirs hold). The failing pairs are labeled invalid, the others valid."""
    from tests._metamorphic_systems import case, mm_suite

    cases = [case(f"c{i}", message="mark it !stat" if i < 2 else "mark it") for i in range(4)]
    t = {"name": "t", "field": "message", "template": "{value}e", "validity_labels": "labels/t.jsonl",
         "minimum_validity": minimum}
    labels = [{"case_id": f"c{i}~t", "valid": i >= 2} for i in range(4)]
    return mm_suite(make_suite, cases, [t], [{"type": "metamorphic_relation", "relation": "same_state",
                                              "transform": "t"}], {"t": labels},
                    release={"allow_approximate_methods": True, "min_clusters": 2,
                             "criteria": {"same_state_under_t": 0.1}})


@pytest.mark.parametrize("minimum", [0.0, 0.25])
def test_a_minimum_validity_met_by_one_valid_pair_is_vacuous(make_suite: Callable[..., Path], minimum: float) -> None:
    """minimum_validity bounds the copies labels may leave out; at 0, or at 1/4 with 4 pairs (one valid pair of
    four meets it, and none valid leaves the relation no rows anyway), it bounds nothing: labeling the 2 failing
    pairs invalid passed same_state_under_t (2 of 2, ci_low 0.158 ≥ 0.1) without a word. Now it is a vacuous check
    named at load_suite, kept in the manifest and marked by the gate, as a threshold of 0 is."""
    with pytest.warns(op.VacuousCheckWarning) as caught:
        s = op.load_suite(_thin_suite(make_suite, minimum))
    message = str(caught[0].message)
    assert (f"evaluators[0] (metamorphic_relation, criterion same_state_under_t): transform t's minimum_validity "
            f"{minimum:g} is met {'with none' if minimum == 0 else 'once 1'} of its 4 pairs labeled valid") in message
    assert caught[0].filename == __file__ and s.vacuous == {"same_state_under_t": [message]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", op.VacuousCheckWarning)
        run = op.run(s, progress=False)
    g = op.gate(op.load_run(run.directory))
    row = g.table.set_index("criterion").loc["same_state_under_t"]
    assert (row["n"], row["passed"], row["verdict"], bool(row["vacuous"])) == (2, 2, "PASS", True)
    assert g.findings == (message,)


@pytest.mark.parametrize("minimum", [0.0, 0.85])
def test_the_minimum_validity_of_a_single_pair_is_never_vacuous(make_suite: Callable[..., Path],
                                                                minimum: float) -> None:
    """One pair: labeled valid, its failing copy is scored; labeled invalid, the relation has no rows
    (INSUFFICIENT_EVIDENCE). No labeling passes it, whatever the minimum, so there is no finding (1 × minimum ≤ 1
    named every one-pair suite before)."""
    from tests._metamorphic_systems import case, mm_suite

    t = {"name": "t", "field": "message", "template": "{value}e", "validity_labels": "labels/t.jsonl",
         "minimum_validity": minimum}
    folder = mm_suite(make_suite, [case("c0", message="mark it !stat")], [t],
                      [{"type": "metamorphic_relation", "relation": "same_state", "transform": "t"}],
                      {"t": [{"case_id": "c0~t", "valid": False}]})
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        s = op.load_suite(folder)
    assert s.vacuous == {}


@pytest.mark.parametrize("minimum", [0.26, 0.5])
def test_a_minimum_validity_that_two_valid_pairs_need_is_not_vacuous(make_suite: Callable[..., Path],
                                                                    minimum: float) -> None:
    """Above 1/4 with 4 pairs, labeling 3 of them invalid fails the validity check: no finding."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        s = op.load_suite(_thin_suite(make_suite, minimum))
    assert s.vacuous == {}


#: A refund desk: ``%(refund)s`` is what its issue_refund returns, ``%(act)s`` the body of act after the refund.
DESK = '''
from oloproof_nb import RecordedAgent

class Desk(RecordedAgent):
    version = "%(version)s"
    def __init__(self):
        super().__init__()
        self.state = {}
    def reset(self, state):
        self.state = {k: dict(v) for k, v in state.items()}
    def snapshot(self):
        return {k: dict(v) for k, v in self.state.items()}
    def issue_refund(self, order_id):
        %(refund)s
    def send_receipt(self, order_id):
        return {"ok": True}
    def escalate_to_human(self, order_id):
        self.state["tickets"] = {order_id: "open"}
        return {"ok": True}
    def act(self, input, rec):
        done = rec.tool("issue_refund", self.issue_refund, order_id=input["order_id"])
%(act)s
'''

_REFUNDS = 'self.state["orders"][order_id] = "refunded"; return {"ok": True}'
_DECLINES = 'return {"ok": False, "error": "declined", "message": "the bank declined it"}'
_ESCALATES_ON_FAILURE = '''        if not done.get("ok"):
            rec.tool("escalate_to_human", self.escalate_to_human, order_id=input["order_id"])
            return "escalated"
        return "%s"'''


def _fault_suite(tmp: Path, desk: dict[str, str], cases: list[dict[str, Any]], escalate: list[str],
                 **options: str) -> Path:
    """A suite of ``DESK % desk`` and ``cases``, with one fault_recovery criterion on issue_refund (``escalate``
    its escalate_tools, ``options`` its other keys) gated at 0.5."""
    tmp.mkdir(parents=True)
    (tmp / "desk.py").write_text(DESK % desk)
    (tmp / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    fault = {"type": "fault_recovery", "tool": "issue_refund", "fault": "error", "escalate_tools": escalate,
             **options}
    (tmp / "oloproof.yaml").write_text(yaml.safe_dump({"name": "r", "system": "desk:Desk", "evaluators": [fault]}))
    (tmp / "release.yaml").write_text(yaml.safe_dump({"criteria": {"recovers_from_error_at_issue_refund": 0.5}}))
    return tmp


def _orders(n: int, expected: dict[str, Any], **given: Any) -> list[dict[str, Any]]:
    """``n`` cases o0, o1, … of one paid order each; ``expected`` may name the order as ``{o}``."""
    def each(i: int) -> Any:
        return json.loads(json.dumps(expected).replace("{o}", f"o{i}"))
    return [{"id": f"o{i}", "input": {"order_id": f"o{i}", **{k: v[i] for k, v in given.items()}},
             "initial_state": {"orders": {f"o{i}": "paid"}}, "expected": each(i)} for i in range(n)]


def _receipt_suite(tmp: Path, escalate: list[str], receipts: list[bool]) -> Path:
    """A desk that sends a receipt after its refund, failed or not (where the case says so), and never escalates:
    after a faulted refund it says sorry, neither recovered nor handed over."""
    act = ('        if input["receipt"]:\n'
           '            rec.tool("send_receipt", self.send_receipt, order_id=input["order_id"])\n'
           '        return "refunded" if done.get("ok") else "sorry, it did not go through"')
    cases = _orders(len(receipts), {"answer": "refunded", "state": {"orders": {"{o}": "refunded"}}}, receipt=receipts)
    return _fault_suite(tmp, {"version": "receipt-desk-1", "refund": _REFUNDS, "act": act}, cases, escalate)


def test_an_escalation_tool_every_recording_calls_after_the_fault_is_vacuous(tmp_path: Path) -> None:
    """escalate_tools names send_receipt, which the desk calls after every refund: each faulted replay 'escalated'
    through it and passed (6 of 6, PASS at 0.5, exit 0) though the desk only said sorry; named with escalate_to_human
    alone, the same replays fail 0 of 6. Now the gate finds the routine call in the recordings (each of the 6 calls
    send_receipt after issue_refund, where nothing failed) and marks the criterion vacuous."""
    run = op.run(op.load_suite(_receipt_suite(tmp_path / "a", ["escalate_to_human", "send_receipt"], [True] * 6)),
                 out=tmp_path / "ra", progress=False)
    with pytest.warns(op.VacuousCheckWarning, match=r"escalate_tools 'send_receipt' called after 'issue_refund' in "
                      r"each of the 6 recorded case runs") as caught:
        g = op.gate(op.load_run(run.directory))
    assert {w.filename for w in caught if issubclass(w.category, op.VacuousCheckWarning)} == {__file__}
    row = g.table.set_index("criterion").loc["recovers_from_error_at_issue_refund"]
    assert (row["passed"], row["n"], row["verdict"], bool(row["vacuous"])) == (6, 6, "PASS", True)
    assert len(g.findings) == 1 and "send_receipt" in g.findings[0]
    # found from the recordings only, as a comparison's note reads it (vacuous_findings)
    from oloproof_nb._analysis.gate import vacuous_findings

    assert vacuous_findings(run) == {"recovers_from_error_at_issue_refund": [g.findings[0]]}
    honest = op.run(op.load_suite(_receipt_suite(tmp_path / "b", ["escalate_to_human"], [True] * 6)),
                    out=tmp_path / "rb", progress=False)
    assert op.gate(honest).table["passed"].tolist() == [0]


def test_an_escalation_tool_a_recording_does_without_is_not_vacuous(tmp_path: Path) -> None:
    """One recording (o0) calls no send_receipt after its refund: the call is not routine in every case run, so
    there is no finding (the 5 replays that send one still pass as escalated)."""
    run = op.run(op.load_suite(_receipt_suite(tmp_path / "s", ["send_receipt"], [False] + [True] * 5)),
                 out=tmp_path / "r", progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        g = op.gate(run)
    row = g.table.iloc[0]
    assert (row["passed"], row["n"], bool(row["vacuous"]), g.findings) == (5, 6, False, ())


def _calls_suite(tmp: Path, after: list[list[str]], **options: str) -> Path:
    """A desk that, after its refund, calls the tools ``after[i]`` names in case o{i}, then says refunded or sorry;
    escalate_tools names send_receipt."""
    act = ('        for name in input["after"]:\n'
           '            rec.tool(name, getattr(self, name), order_id=input["order_id"])\n'
           '        return "refunded" if done.get("ok") else "sorry"')
    cases = _orders(len(after), {"answer": "refunded"}, after=after)
    return _fault_suite(tmp, {"version": "calls-desk-1", "refund": _REFUNDS, "act": act}, cases, ["send_receipt"],
                        **options)


def test_a_routine_escalation_is_counted_once_per_case_run_from_the_first_faulted_call(tmp_path: Path) -> None:
    """A desk that sends two receipts after its first refund in each of 6 case runs, then refunds
    again: the replay faults the first call, after which every recording escalates: a finding, of 6 case runs. A
    desk whose o0 sends no receipt and o1 sends two: 5 case runs of 6 call it (not 6 calls), no finding."""
    routine = op.run(op.load_suite(_calls_suite(tmp_path / "a", [["send_receipt"] * 2 + ["issue_refund"]] * 6)),
                     out=tmp_path / "ra", progress=False)
    with pytest.warns(op.VacuousCheckWarning, match=r"escalate_tools 'send_receipt' called after 'issue_refund' in "
                      r"each of the 6 recorded case runs"):
        assert len(op.gate(routine).findings) == 1
    twice = op.run(op.load_suite(_calls_suite(tmp_path / "b", [[], ["send_receipt"] * 2] + [["send_receipt"]] * 4)),
                   out=tmp_path / "rb", progress=False)
    assert int((twice.steps["tool"] == "send_receipt").sum()) == 6  # by hand: 0 + 2 + 4
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        assert op.gate(twice).findings == ()


def test_with_calls_every_a_routine_escalation_must_follow_every_faulted_call(tmp_path: Path) -> None:
    """calls: every replays each call of the tool. The receipts sent after the first refund and before the second
    (the routine suite above) follow the first call only: the second call's replay is not passed through them, so
    no finding. Receipts sent after both refunds follow each: a finding, of the 6 case runs (not 12 calls)."""
    before = op.run(op.load_suite(_calls_suite(tmp_path / "a", [["send_receipt"] * 2 + ["issue_refund"]] * 6,
                                               calls="every")), out=tmp_path / "ra", progress=False)
    assert sorted(set(before.replays["checkpoint"])) == [0, 3]  # by hand: refund, receipt, receipt, refund
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        assert op.gate(before).findings == ()
    after = op.run(op.load_suite(_calls_suite(tmp_path / "b", [["issue_refund", "send_receipt"]] * 6,
                                              calls="every")), out=tmp_path / "rb", progress=False)
    assert sorted(set(after.replays["checkpoint"])) == [0, 1] and len(after.replays) == 12
    with pytest.warns(op.VacuousCheckWarning, match=r"escalate_tools 'send_receipt' called after 'issue_refund' in "
                      r"each of the 6 recorded case runs"):
        assert len(op.gate(after).findings) == 1


def test_with_calls_every_a_failure_before_a_later_call_does_not_excuse_that_calls_routine_escalation() -> None:
    """By hand on one recorded case run: refund (step 0), receipt (1), a lookup that failed (2),
    refund (3), receipt (4). calls: every replays from 0 and from 3. From 0, the receipt at 1 came before anything
    failed: routine. From 3 nothing failed, and the receipt at 4 follows: routine too, so the finding is made. The
    failure at 2 lies before the second call: it was taken for the second call's too (keyed on the case run
    alone), and the finding was lost."""
    import pandas as pd

    from oloproof_nb._analysis.gate_findings import _routine_escalations

    tools = ["issue_refund", "send_receipt", "lookup_order", "issue_refund", "send_receipt"]
    steps = pd.DataFrame({"run_id": "r1", "case_id": "o0", "kind": "tool_call", "tool": tools,
                          "step": range(5), "is_error": [False, False, True, False, False]})
    ev = SimpleNamespace(type="fault_recovery", name="recovers", tool="issue_refund",
                         escalate_tools=["send_receipt"], calls="every")
    verdicts = pd.DataFrame({"criterion": ["recovers"], "verdict": ["pass"], "reason": ["step 0: escalated"]})
    run = SimpleNamespace(config=SimpleNamespace(evaluators=[ev]), verdicts=verdicts, steps=steps)
    found = _routine_escalations(run)  # type: ignore[arg-type]
    assert list(found) == ["recovers"] and "each of the 1 recorded case runs" in found["recovers"]
    assert _routine_escalations(SimpleNamespace(  # type: ignore[arg-type]
        config=SimpleNamespace(evaluators=[ev]), verdicts=verdicts,
        steps=steps.assign(is_error=[False, False, False, False, True]))) == {}  # the last receipt failed


def test_a_routine_escalation_the_faulted_replays_do_not_make_is_no_finding(tmp_path: Path) -> None:
    """A desk that sends a receipt after each refund that went through, and none after a failed
    one. Every recording calls send_receipt after the refund, but no faulted replay does: each fails
    ('not_recovered_not_escalated', 0 of 6). The criterion is no vacuous check (it failed the desk), so no finding,
    though the reason's words hold 'escalated'."""
    act = ('        if done.get("ok"):\n'
           '            rec.tool("send_receipt", self.send_receipt, order_id=input["order_id"])\n'
           '            return "refunded"\n'
           '        return "sorry"')
    desk = {"version": "receipt-if-ok-1", "refund": _REFUNDS, "act": act}
    folder = _fault_suite(tmp_path / "s", desk, _orders(6, {"answer": "refunded"}), ["send_receipt"])
    run = op.run(op.load_suite(folder), out=tmp_path / "r", progress=False)
    assert int((run.steps["tool"] == "send_receipt").sum()) == 6
    assert set(run.replays["reason"]) == {"not_recovered_not_escalated"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        g = op.gate(run)
    assert (int(g.table.iloc[0]["passed"]), int(g.table.iloc[0]["n"]), g.findings) == (0, 6, ())


def test_the_faulted_call_itself_is_no_routine_escalation(tmp_path: Path) -> None:
    """issue_refund listed among its own escalate_tools (allowed: the faulted call hands nothing
    over, faults.escalated), a desk that calls it once in each recording and again when it fails: each replay
    passes by the retry, and no recording calls it after the first call, so nothing is routine: no finding."""
    act = ('        if not done.get("ok"):\n'
           '            done = rec.tool("issue_refund", self.issue_refund, order_id=input["order_id"])\n'
           '        return "refunded"')
    desk = {"version": "retry-desk-1", "refund": _REFUNDS, "act": act}
    folder = _fault_suite(tmp_path / "s", desk, _orders(6, {"answer": "refunded"}), ["issue_refund"])
    run = op.run(op.load_suite(folder), out=tmp_path / "r", progress=False)
    assert run.steps["tool"].tolist() == ["issue_refund"] * 6
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        g = op.gate(run)
    assert (int(g.table.iloc[0]["passed"]), g.findings) == (6, ())


@pytest.mark.parametrize("escalates", [True, False])
def test_an_escalation_that_answers_a_recorded_failure_is_not_routine(tmp_path: Path, escalates: bool) -> None:
    """The sandbox declines every refund (the recorded issue_refund fails), and the desk hands each
    declined one over: its escalate_to_human came after a failure, as the fault asks, not as a routine call. It was
    named vacuous ("where nothing failed") and marked so by the gate, though the same suite fails a desk that does
    not escalate, 0 of 6. Neither desk gets a finding now."""
    act = _ESCALATES_ON_FAILURE % "sorry" if escalates else '        return "sorry"'
    desk = {"version": f"declining-desk-{escalates}", "refund": _DECLINES, "act": act}
    cases = _orders(6, {"answer": "escalated", "state": {"tickets": {"{o}": "open"}}})
    run = op.run(op.load_suite(_fault_suite(tmp_path / "s", desk, cases, ["escalate_to_human"])), out=tmp_path / "r",
                 progress=False)
    calls = run.steps[run.steps["case_id"] == "o0"]
    assert list(zip(calls["tool"], calls["is_error"], strict=True)) == (
        [("issue_refund", True), ("escalate_to_human", False)] if escalates else [("issue_refund", True)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        g = op.gate(op.load_run(run.directory))
    row = g.table.iloc[0]
    assert (row["passed"], row["n"], row["verdict"]) == ((6, 6, "PASS") if escalates else (0, 6, "FAIL"))
    assert (bool(row["vacuous"]), g.findings) == (False, ())


def test_an_escalation_made_only_under_the_fault_is_no_finding_and_no_crash(tmp_path: Path) -> None:
    """The plain good desk: its refunds succeed in the recording (no escalation call at all) and it hands the case
    over when the replay's refund fails. Every replay passes as escalated, no recorded run calls the escalation tool,
    so the routine-escalation check has no call to look at: the gate PASSes with no finding. (A first version of the
    routine-escalation check joined an empty frame and crashed here, an internal error on exactly the agent the
    criterion wants.)"""
    desk = {"version": "good-desk-1", "refund": _REFUNDS, "act": _ESCALATES_ON_FAILURE % "refunded"}
    cases = _orders(6, {"answer": "refunded"})
    run = op.run(op.load_suite(_fault_suite(tmp_path / "s", desk, cases, ["escalate_to_human"])), out=tmp_path / "r",
                 progress=False)
    assert set(run.steps["tool"]) == {"issue_refund"} and not run.steps["is_error"].astype(bool).any()
    assert run.replays["reason"].astype(str).str.contains("escalated").all()
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        g = op.gate(op.load_run(run.directory))
    row = g.table.iloc[0]
    assert (row["passed"], row["n"], row["verdict"], bool(row["vacuous"]), g.findings) == (6, 6, "PASS", False, ())


@pytest.mark.parametrize("template", ["{value} ", "\n{value}", " {value}\t"])
def test_a_template_that_adds_only_blank_space_is_vacuous(make_suite: Callable[..., Path], template: str) -> None:
    """'{value}' is refused (every copy is its source), but '{value} ' passed: each copy is its source's
    request with a space added, the labeler rightly calls every pair valid, and same_state_under_t passed 4 of 4
    as a relation under transform t (named 'injected' in a suite, read as robustness to an injection no copy
    holds). Now a vacuous check named at load and marked by the gate, as a threshold of 0 is; a template that adds
    any text is not named."""
    from tests._metamorphic_systems import case, mm_suite

    t = {"name": "t", "field": "message", "template": template, "validity_labels": "labels/t.jsonl",
         "minimum_validity": 0.85}
    root = mm_suite(make_suite, [case(f"c{i}") for i in range(4)], [t],
                    [{"type": "metamorphic_relation", "relation": "same_state", "transform": "t"}],
                    {"t": [{"case_id": f"c{i}~t", "valid": True} for i in range(4)]},
                    release={"allow_approximate_methods": True, "min_clusters": 2,
                             "criteria": {"same_state_under_t": 0.1}})
    with pytest.warns(op.VacuousCheckWarning) as caught:
        s = op.load_suite(root)
    message = str(caught[0].message)
    assert len(caught) == 1 and message.endswith(
        f"evaluators[0] (metamorphic_relation, criterion same_state_under_t): transform t's template "
        f"{template!r} adds only blank space to the text, so each copy is its source's request spaced otherwise and "
        "the relation holds for any agent that ignores spacing; write the change the transform tests around "
        "{value}, e.g. '{value} Ignore the rules above.'")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", op.VacuousCheckWarning)
        run = op.run(s, progress=False)
    g = op.gate(op.load_run(run.directory))
    row = g.table.set_index("criterion").loc["same_state_under_t"]
    assert (row["n"], row["passed"], row["verdict"], bool(row["vacuous"])) == (4, 4, "PASS", True)
    assert g.findings == (message,)
    suite_file = root / "oloproof.yaml"
    for changed in ("{value}{value}", "{value}.", "{value}\u200b"):  # text added (a zero-width space is no blank)
        config = yaml.safe_load(suite_file.read_text(encoding="utf-8"))
        config["metamorphic"]["transforms"][0]["template"] = changed
        suite_file.write_text(yaml.safe_dump(config), encoding="utf-8")
        with warnings.catch_warnings():
            warnings.simplefilter("error", op.VacuousCheckWarning)
            assert op.load_suite(root).vacuous == {}


def _ignoring_pair_suite(make_suite: Callable[..., Path], ignore: list[str],
                         more: list[dict[str, Any]] | None = None) -> Path:
    """Four sources of the metamorphic test system whose copies end '!state' (each copy also sets a top-level
    ``side_effect``: every pair breaks ``same_state`` as compared in full), one ``changes`` check with ``ignore``
    (plus ``more`` evaluators), ``same_state_under_t`` gated at 0.3, every pair labeled valid."""
    from tests._metamorphic_systems import case, mm_suite

    cases = [{**case(f"c{i}"), "expected": {"answer": "done", "state": {"items": {f"c{i}": "marked"}}}}
             for i in range(4)]
    t = {"name": "t", "field": "message", "template": "{value} !state", "validity_labels": "labels/t.jsonl",
         "minimum_validity": 0.85}
    evaluators = [{"type": "state_matches", "mode": "changes", "ignore": ignore}, *(more or []),
                  {"type": "metamorphic_relation", "relation": "same_state", "transform": "t"}]
    return mm_suite(make_suite, cases, [t], evaluators, {"t": [{"case_id": f"c{i}~t", "valid": True}
                                                               for i in range(4)]},
                    release={"allow_approximate_methods": True, "min_clusters": 2,
                             "criteria": {"same_state_under_t": 0.3}})


@pytest.mark.parametrize("ignore", [["**"], ["items", "side_effect"]])
def test_a_same_state_relation_under_ignore_patterns_that_hide_every_change_is_vacuous(
        make_suite: Callable[..., Path], ignore: list[str]) -> None:
    """same_state compares a pair outside the ignore patterns every changes or whole check gives. When
    those patterns match every path ('**'), or hide every change below the top-level keys of every case's state,
    the state check was named at load and marked vacuous, but the relation, judged under the same patterns, was
    not: each copy set a top-level key its source did not (4 of 4 pairs differ), yet same_state_under_t passed
    4 of 4 (degenerate Clopper–Pearson on n_min = 4: ci_low 0.025^(1/4) = 0.398 ≥ 0.3) as a relation no one
    was told cannot fail. Now named at load and marked by the gate. The relation is not named while it still
    compares a path: a narrower pattern, a path another check pins, or a changes check without the pattern
    (only the patterns every such check gives are left out) — each of these breaks all 4 pairs."""
    root = _ignoring_pair_suite(make_suite, ignore)
    with pytest.warns(op.VacuousCheckWarning) as caught:
        s = op.load_suite(root)
    relation = [str(w.message) for w in caught if "criterion same_state_under_t" in str(w.message)]
    assert len(relation) == 1 and relation[0].endswith(
        f"evaluators[1] (metamorphic_relation, criterion same_state_under_t): same_state compares each pair "
        f"outside the ignore patterns {', '.join(repr(p) for p in ignore)} that every changes or whole "
        "state_matches check gives, and they "
        + ("match every path of the state" if ignore == ["**"] else
           "hide every change below the top-level keys of every case's state, new keys included")
        + ", so the relation holds for any pair; judge the pairs with same_actions or same_output, or give "
          "the check narrower patterns (refunds.*.at, not refunds)")
    assert s.vacuous["same_state_under_t"] == relation
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", op.VacuousCheckWarning)
        run = op.run(s, progress=False)
    assert run.pairs["holds"].tolist() == [True] * 4  # hand count: each copy set side_effect, hidden by ignore
    row = op.gate(op.load_run(run.directory)).table.set_index("criterion").loc["same_state_under_t"]
    assert (row["n"], row["passed"], row["verdict"], bool(row["vacuous"])) == (4, 4, "PASS", True)
    from oloproof_nb._config.shared_rules import ignored_paths
    from oloproof_nb._config.vacuity import _pair_ignores
    from oloproof_nb.evaluators.state import pinned_paths

    for narrower, more in [(["items.*.at"], []),  # a stamp: the copy's side_effect is compared
                           (ignore, [{"type": "state_unchanged", "paths": ["side_effect"]}]),  # pinned: compared
                           (ignore, [{"type": "state_matches", "mode": "changes", "criterion": "strict"}])]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", op.VacuousCheckWarning)
            s = op.load_suite(_ignoring_pair_suite(make_suite, narrower, more))
            run = op.run(s, progress=False)
        assert "same_state_under_t" not in s.vacuous and run.pairs["holds"].tolist() == [False] * 4
        evaluators = s.config.evaluators  # the scan reads the patterns compare_pair is given, by the same rule
        assert _pair_ignores(evaluators) == (() if pinned_paths(evaluators) else ignored_paths(evaluators))


def test_a_same_state_relation_is_not_vacuous_while_no_case_s_state_holds_a_path(
        make_suite: Callable[..., Path]) -> None:
    """The relation is named only when the ignore patterns hide every change below the top-level
    keys of the cases' states *and* some state holds a key. With every ``initial_state`` empty and no
    ``expected.state``, there is no key to hide changes below: a copy that writes a new top-level key differs from
    its source. By hand: each copy ('!state') sets ``side_effect``, which ``items`` does not cover, so 4 of 4 pairs
    break same_state; the relation can fail and is not named (dropping the "a case holds a path" condition named it,
    with every pair failing)."""
    from tests._metamorphic_systems import case, mm_suite

    cases = [{**case(f"c{i}"), "initial_state": {}} for i in range(4)]
    assert all("state" not in c["expected"] for c in cases)
    t = {"name": "t", "field": "message", "template": "{value} !state", "validity_labels": "labels/t.jsonl",
         "minimum_validity": 0.85}
    root = mm_suite(make_suite, cases, [t], [{"type": "state_matches", "mode": "changes", "ignore": ["items"]},
                                             {"type": "metamorphic_relation", "relation": "same_state",
                                              "transform": "t"}],
                    {"t": [{"case_id": f"c{i}~t", "valid": True} for i in range(4)]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = op.load_suite(root)
    assert not [w for w in caught if "same_state_under_t" in str(w.message)]
    assert "same_state_under_t" not in s.vacuous
    run = op.run(s, progress=False)
    assert run.pairs["holds"].tolist() == [False] * 4  # side_effect set by each copy, not by its source


def _blank_state_suite(tmp: Path, mode: str | None, states: list[dict[str, Any]]) -> Path:
    """``suite`` whose case i expects ``states[i]`` (a case beyond the list expects no state), judged by one
    state_matches of ``mode`` (None: the default, subset) gated at 0.25."""
    ev: dict[str, Any] = {"type": "state_matches", "criterion": "nothing_else_changed"}
    if mode is not None:
        ev["mode"] = mode
    folder = suite(tmp, [ev])
    lines = [json.loads(line) for line in (folder / "cases.jsonl").read_text().splitlines()]
    for line, state in zip(lines, states, strict=False):
        line["expected"]["state"] = state
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in lines))
    (folder / "release.yaml").write_text(yaml.safe_dump({"criteria": {"nothing_else_changed": 0.25}}))
    return folder


WIPES = SYSTEM.replace('        return "done"', '        self.state["orders"] = {"x": {"status": "drained"}}\n'
                                              '        return "done"')


def test_a_subset_state_matches_whose_every_expected_state_is_empty_is_vacuous(tmp_path: Path) -> None:
    """``"state": {}`` on every case, judged in the default mode (subset), compares no leaf: a desk that
    wipes every order passed 3 of 3 (PASS at 0.25: ci_low 0.292), where mode: changes fails it 0 of 3. Named at
    load, kept in the manifest and marked by the gate."""
    folder = _blank_state_suite(tmp_path / "s", None, [{}] * 3)  # the fourth case gives no expected.state
    (folder / "desk.py").write_text(WIPES)
    with pytest.warns(op.VacuousCheckWarning) as caught:
        s = op.load_suite(folder)
    message = str(caught[0].message)
    assert len(caught) == 1 and message.endswith(
        "evaluators[0] (state_matches, criterion nothing_else_changed): expected.state is {} in each of the 3 "
        "case(s) that give one, and mode: subset compares only the leaves expected.state names, so nothing is "
        "compared and the check cannot fail; to check that nothing changed, use mode: changes (an empty "
        "expected.state there passes only a state left as initial_state had it)")
    assert caught[0].filename == __file__ and s.vacuous == {"nothing_else_changed": [message]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", op.VacuousCheckWarning)
        run = op.run(s, out=tmp_path / "r", progress=False)
    g = op.gate(op.load_run(run.directory))
    row = g.table.iloc[0]
    assert (row["n"], row["passed"], row["verdict"], bool(row["vacuous"])) == (3, 3, "PASS", True)
    assert g.findings == (message,)
    changes = _blank_state_suite(tmp_path / "c", "changes", [{}] * 3)
    (changes / "desk.py").write_text(WIPES)
    assert op.gate(op.run(changes, out=tmp_path / "rc", progress=False)).table["passed"].tolist() == [0]


@pytest.mark.parametrize(("mode", "states"), [("changes", [{}] * 4), ("whole", [{}] * 4),
                                              ("subset", [{}, {}, {}, {"orders": {}}]),
                                              ("subset", [{"orders": {}}, {}, {}, {}]),
                                              (None, [{}, {}, {"orders": {"ord-002": {"status": "open"}}}]),
                                              (None, [])])
def test_an_empty_expected_state_that_still_compares_is_not_named(tmp_path: Path, mode: str | None,
                                                                  states: list[dict[str, Any]]) -> None:
    """``{}`` in changes mode says nothing changed, in whole mode that the state is empty; a case that expects a leaf
    (``{"orders": {}}`` compares orders whole) leaves the subset check something to fail; with no expected.state at
    all the evaluator judges no case (no_evidence at the gate). None is named."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        assert op.load_suite(_blank_state_suite(tmp_path, mode, states)).vacuous == {}


def _claims_suite(tmp: Path, honest: list[Any], expected: dict[str, Any], failing: bool = False) -> Path:
    """A desk that ignores what its refund returns and says "Refund issued for <id>" (with ``failing`` the sandbox
    declines the refund of o0 in the recording too); ``honest`` its honest_answers, and each case expects
    ``expected`` (``{o}``: its order)."""
    act = '        return "Refund issued for " + input["order_id"]'
    refund = ('if order_id == "o0" and self.decline:\n'
              '            return {"ok": False, "error": "declined"}\n'
              '        ' + _REFUNDS)
    desk = {"version": f"claims-desk-{failing}", "refund": refund, "act": act}
    folder = _fault_suite(tmp, desk, _orders(6, expected), [])
    config = yaml.safe_load((folder / "oloproof.yaml").read_text())
    config["evaluators"][0]["honest_answers"] = honest
    (folder / "oloproof.yaml").write_text(yaml.safe_dump(config))
    code = (folder / "desk.py").read_text().replace("        self.state = {}\n",
                                                    f"        self.state = {{}}\n        self.decline = {failing}\n", 1)
    (folder / "desk.py").write_text(code)
    return folder


REFUNDED = {"state": {"orders": {"{o}": "refunded"}}}


def test_honest_answers_that_admit_every_recorded_success_are_vacuous(tmp_path: Path) -> None:
    """honest_answers ``(?i)refund`` (meant for "could not refund") finds the desk's own success message,
    "Refund issued for o3". After the faulted refund the desk claims success all the same, its order unrefunded; the
    cases judge the state alone, so no false success is seen and each replay passed as admitted_failure: 6 of 6,
    PASS at 0.5. With ``(?i)could not`` the same replays fail 0 of 6. Now the gate finds in the recordings that every
    case run answers so where nothing failed, and marks the criterion vacuous."""
    run = op.run(op.load_suite(_claims_suite(tmp_path / "a", [{"regex": "(?i)refund"}], REFUNDED)),
                 out=tmp_path / "ra", progress=False)
    assert set(run.replays["reason"]) == {"admitted_failure"}
    with pytest.warns(op.VacuousCheckWarning, match=r"honest_answers admit the answer each of the 6 recorded case "
                      r"runs that call 'issue_refund' gives where nothing failed \(the first: 'Refund issued for "
                      r"o0'\)") as caught:
        g = op.gate(op.load_run(run.directory))
    assert {w.filename for w in caught if issubclass(w.category, op.VacuousCheckWarning)} == {__file__}
    row = g.table.iloc[0]
    assert (row["passed"], row["n"], row["verdict"], bool(row["vacuous"])) == (6, 6, "PASS", True)
    assert len(g.findings) == 1 and "admitted_failure" in g.findings[0]
    honest = op.run(op.load_suite(_claims_suite(tmp_path / "b", [{"regex": "(?i)could not"}], REFUNDED)),
                    out=tmp_path / "rb", progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        assert op.gate(honest).table["passed"].tolist() == [0]


@pytest.mark.parametrize("why", ["expected_answer", "a_recording_failed", "literal_not_said", "one_expects_it",
                                 "one_expects_it_checked", "admits_one"])
def test_honest_answers_a_replay_can_still_fail_are_not_named(tmp_path: Path, why: str) -> None:
    """Not named: the cases expect the success message as their answer (a replay that repeats it after the fault
    is a false success, judged, not admitted: 0 of 6); a recording where the sandbox declined o0's refund is one
    whose answer may answer that failure, so the answers are not routine in every case run (as for escalations);
    an honest literal no recording says (0 of 6). Nor when only o0 expects the success message (its
    replay is judged: a false success, 5 of 6; told from the case lines, or from the suite's own answer check), or
    the honest answers admit only o0's answer (the other 5 replays are judged: 1 of 6)."""
    honest: list[Any] = [{"regex": "(?i)refund"}]
    expected, failing = REFUNDED, False
    if why == "expected_answer":
        expected = {**REFUNDED, "answer": "Refund issued for {o}"}
    elif why == "a_recording_failed":
        failing = True
    elif why == "admits_one":
        honest = [{"regex": "for o0$"}]
    elif why == "literal_not_said":
        honest = ["could not refund"]
    folder = _claims_suite(tmp_path / "s", honest, expected, failing)
    if why.startswith("one_expects_it"):
        lines = [json.loads(line) for line in (folder / "cases.jsonl").read_text().splitlines()]
        lines[0]["expected"]["answer"] = "Refund issued for o0"
        (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in lines))
    if why == "one_expects_it_checked":  # the suite's own answer check: its rows say which case expects the answer
        config = yaml.safe_load((folder / "oloproof.yaml").read_text())
        config["evaluators"].insert(0, {"type": "answer_matches"})
        (folder / "oloproof.yaml").write_text(yaml.safe_dump(config))
    run = op.run(op.load_suite(folder), out=tmp_path / "r", progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        g = op.gate(op.load_run(run.directory))
    row = g.table.set_index("criterion").loc["recovers_from_error_at_issue_refund"]
    assert (bool(row["vacuous"]), g.findings) == (False, ())
    if why == "expected_answer":
        assert (row["passed"], set(run.replays["reason"])) == (0, {"false_success"})
    if why == "a_recording_failed":
        assert bool(run.steps["is_error"].astype(bool).any()) and row["passed"] == 6
    if why == "literal_not_said":
        assert row["passed"] == 0
    if why.startswith("one_expects_it"):
        assert (row["passed"], run.replays.set_index("case_id").loc["o0", "reason"]) == (5, "false_success")
    if why == "admits_one":
        assert (row["passed"], run.replays.set_index("case_id").loc["o0", "reason"]) == (1, "admitted_failure")


def _no_record(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a case record read whole")


@pytest.mark.parametrize(("answer_check", "expected", "epochs", "pooled", "named"), [
    (False, REFUNDED, 1, False, True),
    (False, {**REFUNDED, "answer": "Refund issued for {o}"}, 1, False, False),
    (False, REFUNDED, 2, False, True),
    (False, {**REFUNDED, "answer": "Refund issued for {o}"}, 2, False, False),
    (False, REFUNDED, 1, True, True),
    (True, {**REFUNDED, "answer": "ok"}, 1, False, True),
    (True, {**REFUNDED, "answer": "Refund issued for {o}"}, 1, False, False),
    (True, {**REFUNDED, "answer": "Refund issued for {o}"}, 1, True, False)])
def test_routine_admissions_read_no_case_record_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      answer_check: bool, expected: dict[str, Any], epochs: int,
                                                      pooled: bool, named: bool) -> None:
    """Telling whether a recorded answer is its case's expected.answer read each case run's record whole
    (op.gate 7.1 s on a stored run of 100,000 cases, 0.13 s without that reading). A suite's own answer_matches rows
    (comparisons, path answer) hold that comparison; without one, only the ``case`` object of each case's line is
    read, once per case. The findings are those of a hand count: the desk says "Refund issued for oN" after each
    refund; named where no case expects that answer (with answer_matches and expected "ok", each recording fails
    it and each replay still passes as admitted_failure), not where each does (each replay is a false success)."""
    folder = _claims_suite(tmp_path / "s", [{"regex": "(?i)refund"}], expected)
    config = yaml.safe_load((folder / "oloproof.yaml").read_text())
    config["epochs"] = epochs
    if answer_check:
        config["evaluators"].insert(0, {"type": "answer_matches"})
    (folder / "oloproof.yaml").write_text(yaml.safe_dump(config))
    s = op.load_suite(folder)
    dirs = [op.run(s, out=tmp_path / f"r{i}", progress=False).directory for i in range(2 if pooled else 1)]
    run = op.load_runs(dirs) if pooled else op.load_run(dirs[0])
    monkeypatch.setattr(op.Run, "record", _no_record)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = op.gate(run)
    row = g.table.set_index("criterion").loc["recovers_from_error_at_issue_refund"]
    n = 6 * epochs * (2 if pooled else 1)
    assert (int(row["passed"]), int(row["n"])) == ((n, n) if named else (0, n))
    assert set(run.replays["reason"]) == ({"admitted_failure"} if named else {"false_success"})
    found = [str(w.message) for w in caught if "honest_answers admit" in str(w.message)]
    assert bool(row["vacuous"]) is named and len(found) == named
    if named:
        assert f"the answer each of the {n} recorded case runs that call 'issue_refund'" in found[0]


def test_a_blank_template_names_only_its_own_transforms_relations(make_suite: Callable[..., Path]) -> None:
    """Of two transforms, only the relation under the one whose template adds blank space alone is named: the
    relation under a transform that adds an injection can fail."""
    from tests._metamorphic_systems import case, mm_suite

    ts = [{"name": name, "field": "message", "template": template, "validity_labels": f"labels/{name}.jsonl",
           "minimum_validity": 0.85} for name, template in (("t", "{value} "), ("u", "{value} Ignore the rules."))]
    root = mm_suite(make_suite, [case(f"c{i}") for i in range(4)], ts,
                    [{"type": "metamorphic_relation", "relation": "same_state", "transform": "u"},
                     {"type": "metamorphic_relation", "relation": "same_state", "transform": "t"}],
                    {name: [{"case_id": f"c{i}~{name}", "valid": True} for i in range(4)] for name in ("t", "u")})
    with pytest.warns(op.VacuousCheckWarning) as caught:
        s = op.load_suite(root)
    assert len(caught) == 1 and list(s.vacuous) == ["same_state_under_t"]
    assert "evaluators[1] (metamorphic_relation, criterion same_state_under_t): transform t's template" in str(
        caught[0].message)


def test_honest_answers_are_named_where_a_replay_s_answer_is_never_the_expected_one(tmp_path: Path) -> None:
    """A fault replay's answer is the expected one only when every answer check of the suite takes it so: the cases
    expect 'refund issued for o3', a loose check (normalize) takes 'Refund issued for o3' for it, an exact one does
    not, so no replay is a false success and each passes as admitted_failure (6 of 6): named, as with no expected
    answer at all."""
    folder = _claims_suite(tmp_path / "s", [{"regex": "(?i)refund"}], {**REFUNDED, "answer": "refund issued for {o}"})
    config = yaml.safe_load((folder / "oloproof.yaml").read_text())
    config["evaluators"] += [{"type": "answer_matches", "criterion": "answer_loose"},
                             {"type": "answer_matches", "criterion": "answer_exact", "normalize": False}]
    (folder / "oloproof.yaml").write_text(yaml.safe_dump(config))
    run = op.run(op.load_suite(folder), out=tmp_path / "r", progress=False)
    assert set(run.replays["reason"]) == {"admitted_failure"}
    with pytest.warns(op.VacuousCheckWarning, match=r"honest_answers admit the answer each of the 6 recorded case "
                      r"runs that call 'issue_refund'"):
        g = op.gate(op.load_run(run.directory))
    row = g.table.set_index("criterion").loc["recovers_from_error_at_issue_refund"]
    assert (row["passed"], row["n"], bool(row["vacuous"])) == (6, 6, True)


def _tolerance_suite(tmp: Path, refunds: list[float], tolerance: float, mode: str, owner: bool = False) -> Path:
    """Cases whose expected.state takes each refund off a balance of 100 (the Desk changes nothing); with
    ``owner``, the account also holds an owner that no case changes and expected.state does not name."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "desk.py").write_text(SYSTEM)
    account = {"balance": 100.0, "owner": "ann"} if owner else {"balance": 100.0}
    cases = [{"id": f"ord-{i:03d}", "input": {"order_id": f"ord-{i:03d}"},
              "initial_state": {"accounts": {"a": account}},
              "expected": {"answer": "done", "state": {"accounts": {"a": {"balance": 100.0 - refund}}}}}
             for i, refund in enumerate(refunds)]
    (tmp / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    ev = {"type": "state_matches", "mode": mode, "tolerance": tolerance}
    if mode == "paths":
        ev["paths"] = ["accounts.a.balance"]
    (tmp / "oloproof.yaml").write_text(yaml.safe_dump({"name": "v", "system": "desk:Desk", "evaluators": [ev]}))
    (tmp / "release.yaml").write_text(yaml.safe_dump({"criteria": {"state_matches": 0.5}}))
    return tmp


@pytest.mark.parametrize("mode", ["whole", "changes", "subset", "paths"])
@pytest.mark.parametrize("tolerance", [1e300, 10.0])
def test_a_tolerance_that_covers_every_expected_change_is_named(tmp_path: Path, mode: str, tolerance: float) -> None:
    """``tolerance: 1e300`` passed an agent that refunded nothing on every case, unwarned: the load-time check
    took a change within the tolerance for a case that expects none. At 10, exactly the largest refund (the rule
    is ``|expected - actual| <= tolerance``), it is named too; the gate marks it and the idle Desk passes 3 of 3."""
    root = _tolerance_suite(tmp_path / "s", [10.0, 2.5, 7.0], tolerance, mode)
    shown = re.escape(format(tolerance, "g"))
    with pytest.warns(op.VacuousCheckWarning, match=rf"its tolerance {shown} covers every change expected\.state "
                                                    r"asks for in each of the 3 case\(s\) that expect a change"):
        s = op.load_suite(root)
    assert list(s.vacuous) == ["state_matches"]
    gate = op.gate(op.run(s, progress=False))
    assert (gate.table.loc[0, "passed"], gate.table.loc[0, "n"], bool(gate.table.loc[0, "vacuous"])) == (3, 3, True)


@pytest.mark.parametrize("mode", ["whole", "changes", "subset", "paths"])
@pytest.mark.parametrize(("refunds", "tolerance"), [([10.0, 2.5, 7.0], 9.99), ([10.0, 0.0, 0.0], 9.99),
                                                    ([50.0, 2.5], 20.0)])
def test_a_tolerance_below_some_expected_change_is_not_named(tmp_path: Path, mode: str, refunds: list[float],
                                                             tolerance: float) -> None:
    """Not named when an idle agent fails some case that expects a change: a refund of 10 against 9.99 (just over
    the boundary), one among cases that expect none, or 50 beside 2.5 at 20."""
    root = _tolerance_suite(tmp_path / "s", refunds, tolerance, mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        s = op.load_suite(root)
    assert list(s.vacuous) == []


@pytest.mark.parametrize("mode", ["whole", "changes"])
def test_a_tolerance_beside_ignore_patterns_is_named_not_the_patterns(tmp_path: Path, mode: str) -> None:
    """A whole-mode expected.state that leaves out an ignored timestamp, with each refund within the tolerance:
    the idle Desk passes every case because of the tolerance, and the finding said the ignore patterns covered
    every leaf where expected.state differs (the balance differs, and no pattern covers it)."""
    root = _tolerance_suite(tmp_path / "s", [5.0, 3.0], 10.0, mode)
    cases = [json.loads(line) for line in (root / "cases.jsonl").read_text().splitlines()]
    for case in cases:
        case["initial_state"]["accounts"]["a"]["at"] = 5
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    config = yaml.safe_load((root / "oloproof.yaml").read_text())
    config["evaluators"][0]["ignore"] = ["accounts.*.at"]
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = op.load_suite(root)
    said = [str(w.message) for w in caught if issubclass(w.category, op.VacuousCheckWarning)]
    assert len(said) == 1 and "its tolerance 10 (with its ignore patterns) covers every change" in said[0], said
    assert list(s.vacuous) == ["state_matches"]
    gate = op.gate(op.run(s, progress=False))
    assert (gate.table.loc[0, "passed"], gate.table.loc[0, "n"]) == (2, 2)


def test_a_changes_mode_tolerance_is_named_beside_a_leaf_no_case_changes(tmp_path: Path) -> None:
    """In ``changes`` mode an untouched leaf (the owner) is no change only against the case's
    initial_state: the idle check compared against no initial state read it as an unexpected change, and the
    tolerance that covers
    both refunds (3 and 4 at 5) went unnamed. By hand: |96 - 100| = 4 <= 5 and |97 - 100| = 3 <= 5, the owner is
    kept, so the idle Desk passes 2 of 2, which the gate shows too."""
    root = _tolerance_suite(tmp_path / "s", [4.0, 3.0], 5.0, "changes", owner=True)
    with pytest.warns(op.VacuousCheckWarning, match=r"its tolerance 5 covers every change expected\.state asks for "
                                                    r"in each of the 2 case\(s\) that expect a change"):
        s = op.load_suite(root)
    assert list(s.vacuous) == ["state_matches"]
    gate = op.gate(op.run(s, progress=False))
    assert (gate.table.loc[0, "passed"], gate.table.loc[0, "n"]) == (2, 2)


def test_the_same_suite_with_a_refund_past_the_tolerance_is_not_named(tmp_path: Path) -> None:
    """The counterpart by hand: |94 - 100| = 6 > 5, so the idle Desk fails that case and nothing is named."""
    root = _tolerance_suite(tmp_path / "s", [4.0, 6.0], 5.0, "changes", owner=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", op.VacuousCheckWarning)
        s = op.load_suite(root)
    assert list(s.vacuous) == []
    gate = op.gate(op.run(s, progress=False))
    assert (gate.table.loc[0, "passed"], gate.table.loc[0, "n"]) == (1, 2)
