"""The refusal of a stray ``"$absent"`` (``_core.compare.stray_absent``) at two edges.

Two edges: a state that really holds a key named ``"$absent"`` was refused though the check compares that key
and passes (a right suite refused); and ``{"$absent": true}`` alone as an element of an ``unordered`` or
``by_key`` list, an element no state holds, failed every case without a word (README: "in a list the check
matches ... unordered ... op.load_suite refuses it").
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _removal_suites import GONE, removal_suite, state_case

import oloproof_nb as op
from oloproof_nb._core.compare import compare_state, stray_absent
from oloproof_nb._core.lists import ListMatch
from oloproof_nb.errors import CaseFileError


@pytest.mark.parametrize("held", [5, False, "yes"])
def test_a_key_named_absent_the_state_holds_is_compared_and_the_suite_loads(tmp_path: Path, held: object) -> None:
    """``{"meta": {"$absent": 5, "v": 1}}`` held by initial_state and expected as it is: compare_state passes the
    idle desk (checked below on the rows), but load_suite refused the case ("beside other keys", "as 5")."""
    state = {"meta": {"$absent": held, "v": 1}, "log": [{"$absent": held}]}
    expected = {"meta": {"$absent": held, "v": 1}, "log": [{"$absent": held}]}
    assert all(ok for *_, ok in compare_state(expected, state, "subset"))
    folder = removal_suite(tmp_path / "s", [state_case(state, expected)],
                           "{type: state_matches, mode: changes}")
    run = op.run(op.load_suite(folder), out=tmp_path / "run", progress=False)
    assert run.verdicts.verdict.tolist() == ["pass"]


def test_a_key_named_absent_the_state_does_not_hold_there_is_still_refused(tmp_path: Path) -> None:
    """Held elsewhere is not held there: the object at ``other`` would be compared as a key no state holds."""
    case = state_case({"meta": {"$absent": 5}, "other": {"v": 1}}, {"other": {"v": 1, "$absent": 5}})
    with pytest.raises(CaseFileError, match=r'at other holds "\$absent" beside other keys \(v\)'):
        op.load_suite(removal_suite(tmp_path / "s", [case]))


@pytest.mark.parametrize(("rule", "fix"), [
    ("{cart: unordered}", r'\{"FIELD": VALUE, "\$absent": true\} in a list matched by_key '
                          r"\(`lists: \{cart: \{by_key: FIELD\}\}`\)"),
    ("{cart: {by_key: sku}}", r'\{"sku": VALUE, "\$absent": true\}$'),
])
def test_a_bare_marker_as_an_element_of_an_unordered_or_by_key_list_is_refused(tmp_path: Path, rule: str,
                                                                              fix: str) -> None:
    """``{"cart": [{"$absent": true}]}``: an element no state holds, so the case failed whatever the desk did (the
    rows say ``cart.<unmatched 0>`` or ``cart.<sku=(none)>``, expected ``{"$absent": true}``, found absent)."""
    lists = {"cart": ListMatch("unordered") if "unordered" in rule else ListMatch("by_key", "sku")}
    for left in ([], [{"sku": "A"}]):
        assert not all(ok for *_, ok in compare_state({"cart": [GONE]}, {"cart": left}, "subset", lists=lists))
    case = state_case({"cart": [{"sku": "A"}, {"sku": "B"}]}, {"cart": [GONE]})
    folder = removal_suite(tmp_path / "s", [case], f"{{type: state_matches, lists: {rule}}}")
    with pytest.raises(CaseFileError) as err:
        op.load_suite(folder)
    text = str(err.value)
    assert "line 1" in text and 'expected.state at cart.0 holds "$absent" alone in an element of a list' in text
    assert "fails whatever the agent does" in text and "\n" not in text
    assert re.search(fix, text), text


def test_a_bare_marker_in_an_ordered_list_says_the_position_is_empty_and_loads(tmp_path: Path) -> None:
    """In a list matched in order ``[{"$absent": true}]`` asks that the list hold no element 0: it is read so (an
    empty list passes, one element fails), and is not refused."""
    assert all(ok for *_, ok in compare_state({"cart": [GONE]}, {"cart": []}, "subset"))
    assert not all(ok for *_, ok in compare_state({"cart": [GONE]}, {"cart": [{"sku": "A"}]}, "subset"))
    assert stray_absent({"cart": [GONE]}) is None
    folder = removal_suite(tmp_path / "s", [state_case({"cart": [{"sku": "A"}]}, {"cart": [GONE]})])
    run = op.run(op.load_suite(folder), out=tmp_path / "run", progress=False)
    assert run.verdicts.verdict.tolist() == ["fail"]  # the idle desk left sku A at position 0
