"""A ``"$absent"`` key that no check reads as a removal is refused at load, naming the fix.

A new user's ticket desk wrote a closed ticket's removal as ``{"tid": "t-01", "$absent": true}`` in a list the
``state_matches`` check matched in order (no ``lists:`` rule): the check compared a key named ``"$absent"``, which
no state holds, so all 72 rows failed for a desk that closed every ticket, and the reasons said only
``tickets.0.$absent``. Before, ``load_suite`` accepted it without a word.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _reliability_systems import main_in_process
from _removal_suites import GONE, removal_suite, state_case

import oloproof_nb as op
from oloproof_nb._core.compare import stray_absent
from oloproof_nb._core.lists import ListMatch
from oloproof_nb.errors import CaseFileError

INITIAL = {"tickets": [{"tid": "t-0"}, {"tid": "t-1"}], "archive": {}}


def test_a_by_key_removal_in_a_list_matched_in_order_is_refused_with_the_rule_to_add(tmp_path: Path) -> None:
    """The bug: accepted, and every case failed on ``tickets.1.$absent``."""
    folder = removal_suite(tmp_path / "s", [state_case(INITIAL, {"tickets": [{"tid": "t-1", **GONE}]})],
                           "{type: state_matches, mode: changes}")
    with pytest.raises(CaseFileError) as err:
        op.load_suite(folder)
    text = str(err.value)
    assert "line 1" in text and "tickets.0" in text and "matches ordered" in text
    assert "`lists: {tickets: {by_key: tid}}`" in text


def test_the_same_removal_under_a_by_key_rule_loads_and_an_idle_desk_fails_it(tmp_path: Path) -> None:
    folder = removal_suite(tmp_path / "s", [state_case(INITIAL, {"tickets": [{"tid": "t-1", **GONE}]})],
                           "{type: state_matches, mode: changes, lists: {tickets: {by_key: tid}}}")
    run = op.run(op.load_suite(folder), out=tmp_path / "run", progress=False)
    assert run.verdicts.verdict.tolist() == ["fail"]  # t-1 is still there: the removal is asked


def test_absent_beside_other_keys_of_an_object_is_refused(tmp_path: Path) -> None:
    folder = removal_suite(tmp_path / "s", [state_case({"o": {"k": {"s": 1}}}, {"o": {"k": {"s": 1, **GONE}}})])
    with pytest.raises(CaseFileError, match=r'at o\.k holds "\$absent" beside other keys \(s\).*alone as its value'):
        op.load_suite(folder)


def test_a_by_key_removal_with_a_third_key_is_refused_naming_it(tmp_path: Path) -> None:
    case = state_case(INITIAL, {"tickets": [{"tid": "t-1", "owner": "ana", **GONE}]})
    folder = removal_suite(tmp_path / "s", [case], "{type: state_matches, lists: {tickets: {by_key: tid}}}")
    with pytest.raises(CaseFileError, match=r'matched by_key tid: .*this one holds tid, owner'):
        op.load_suite(folder)


def test_the_command_says_it_in_one_line_exit_2_and_leaves_the_case_file(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    folder = removal_suite(tmp_path / "s", [state_case(INITIAL, {"tickets": [{"tid": "t-1", **GONE}]})],
                           "{type: state_matches, mode: changes}")
    before = (folder / "cases.jsonl").read_bytes()
    done = main_in_process(capsys, "run", str(folder), "--quiet")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "by_key: tid" in done.stderr
    assert (folder / "cases.jsonl").read_bytes() == before and not (folder / "runs").exists()


def test_stray_absent_finds_only_what_no_rule_reads_as_a_removal() -> None:
    by_tid = {"tickets": ListMatch("by_key", "tid")}
    assert stray_absent({"o": {"k": GONE}, "p": {"q": {"r": GONE}}}) is None
    assert stray_absent({"tickets": [{"tid": "t", **GONE}]}, lists=by_tid) is None
    assert stray_absent({"tickets": [{"tid": "t", **GONE}]}, lists={"tickets": ListMatch("unordered")}) == (
        ("tickets", "0"), ListMatch("unordered"))
    assert stray_absent({"tickets": [{"id": "t", **GONE}]}, lists=by_tid) == (("tickets", "0"), by_tid["tickets"])
    assert stray_absent({"o": {"k": {"$absent": False}}}) == (("o", "k"), None)
    assert stray_absent({"a": [{"x": 1}, {"b": [{"tid": "t", **GONE}]}]}, lists={"a.*.b": by_tid["tickets"]}) is None
