"""``state_matches`` and ``state_unchanged`` (oloproof_nb/evaluators/state.py) and the rows of ``_core/compare.py``
they report: each test kills a mutant the other state tests let live, with verdicts and rows worked out by hand from
README.md's rules."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from oloproof_nb._core.compare import compare_changes, compare_state
from oloproof_nb._core.lists import ListMatch
from oloproof_nb._core.paths import ABSENT
from oloproof_nb.evaluators import StateMatches, StateUnchanged


@pytest.mark.parametrize("evaluator", [{"type": "state_matches", "mode": "paths"}, {"type": "state_unchanged"}])
def test_a_malformed_path_is_refused_naming_it(evaluator: dict[str, str]) -> None:
    """``a..b`` has an empty key: refused when the check is built, the message naming the path. (Mutant: the
    ``paths`` of ``state_matches`` were not parsed, and ``a..b`` looked for a key ``""``, absent in every case.)"""
    cls = StateMatches if evaluator["type"] == "state_matches" else StateUnchanged
    with pytest.raises(ValidationError, match=r"path 'a\.\.b' has an empty key"):
        cls(**evaluator, paths=["a..b"])


def test_paths_mode_reports_each_row_under_the_path_as_written() -> None:
    """``o["x"].s`` is the path ``o.x.s`` written with brackets; its row keeps the form the suite wrote, as
    ``compare_state``'s ``paths`` says. (Mutant: the row was written ``o.x.s``.)"""
    ev = StateMatches(type="state_matches", mode="paths", paths=['o["x"].s'])
    result = ev.judge({"o": {"x": {"s": 1}}}, {"o": {"x": {"s": 2}}}, "c1")
    assert [(r["path"], r["expected"], r["actual"], r["ok"]) for r in result.comparisons] == [('o["x"].s', 1, 2, False)]
    assert result.verdicts[0]["reason"] == '1 of 1 paths differ: o["x"].s'


def test_a_removal_still_held_twice_is_reported_at_the_first_holder() -> None:
    """Key 1 must be gone but two elements still hold it (positions 0 and 2): the check fails, its row at the first
    of them, as one reads the list. (Mutant: the last holder; docs are silent on duplicates, this pins the first.)"""
    state = {"t": [{"id": 1, "a": 1}, {"id": 2}, {"id": 1, "a": 2}]}
    rows = compare_state({"t": [{"id": 1, "$absent": True}]}, state, lists={"t": ListMatch("by_key", "id")})
    assert rows == [("t.0", ABSENT, {"id": 1, "a": 1}, False)]


def test_a_by_key_value_differing_in_letter_case_is_another_key() -> None:
    """``INV-7`` must be gone and the list holds ``inv-7`` only: a key that differs in letter case is another key
    (load_suite names such a removal as a look-alike, README), so the removal holds. (Mutant: keys were bucketed
    without letter case, and the check failed at ``t.0``.)"""
    lists = {"t": ListMatch("by_key", "ref")}
    assert compare_state({"t": [{"ref": "INV-7", "$absent": True}]}, {"t": [{"ref": "inv-7"}]}, lists=lists) == [
        ("t.<ref=INV-7>", ABSENT, ABSENT, True)]


def test_a_leaf_replaced_by_the_expected_subtree_under_a_key_that_starts_with_an_angle_bracket() -> None:
    """``changes`` mode: the note at ``a.<x>`` became the subtree ``{"y": 2}`` that ``expected.state`` names, as it
    does under a plain key ``x``: the case changed only what it was asked to (the bug: the key was taken for the
    label of an element that left a list, ``<id=7>``, and the replaced leaf ``a.<x>`` was an unexpected change)."""
    for key in ("x", "<x>"):
        state = {"a": {key: {"y": 2}}}
        assert compare_changes({"a": {key: 1}}, state, state) == ([], [(f"a.{key}.y", 2, 2, True)])
        verdict = StateMatches(type="state_matches", mode="changes").judge(state, state, initial={"a": {key: 1}})
        assert verdict.verdicts[0]["verdict"] == "pass"
    # an element that left a by_key list without being asked to stays an unexpected change
    lists = {"t": ListMatch("by_key", "id")}
    assert compare_changes({"t": [{"id": 7}]}, {}, {"t": []}, lists=lists) == ([("t.<id=7>", {"id": 7}, ABSENT, False)],
                                                                            [])
