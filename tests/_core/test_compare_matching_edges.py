"""``state_matches``' comparison (``_core/compare.py``, ``values_equal``): each test kills a
mutant that survived the earlier tests, with verdicts and rows worked out by hand from README.md's rules."""

from __future__ import annotations

from oloproof_nb._core.compare import compare_changes, compare_state, compare_unchanged
from oloproof_nb._core.lists import ListMatch
from oloproof_nb._core.paths import ABSENT, values_equal

UNORDERED = ListMatch("unordered")


def test_an_expected_element_meets_the_first_of_two_equal_appended_elements() -> None:
    """Two equal payments appended, one expected: it meets the first equal element (index 0), so the second one
    (index 1) is the unexpected change. (Mutant: the first meeting took the last equal element, swapping the paths.)"""
    unexpected, rows = compare_changes({"t": []}, {"t": [{"v": "a"}]}, {"t": [{"v": "a"}, {"v": "a"}]},
                                       lists={"t": UNORDERED})
    assert unexpected == [("t.1.v", ABSENT, "a", False)]
    assert rows == [("t.0.v", "a", "a", True)]
    assert compare_state({"t": [{"v": "a"}]}, {"t": [{"v": "a"}, {"v": "a"}]}, lists={"t": UNORDERED}) == [
        ("t.0.v", "a", "a", True)]


def test_a_by_key_element_with_absent_false_is_no_removal() -> None:
    """Only ``{FIELD: value, "$absent": true}`` asks for a removal; with ``false`` it is an element the list must
    hold (with that field). The list holds none: the check fails at ``t.<id=1>``. (Mutant: any ``"$absent"`` key made
    it a removal, and the empty list passed.)"""
    element = {"id": 1, "$absent": False}
    rows = compare_state({"t": [element]}, {"t": []}, lists={"t": ListMatch("by_key", "id")})
    assert rows == [("t.<id=1>", element, ABSENT, False)]


def test_an_unordered_list_inside_a_by_key_element_asks_for_an_element_the_case_added() -> None:
    """Customer 1 had a payment of 5; the case expects a new one of 5. An agent that does nothing fails (the only
    equal payment was there before: ``<not added 0>``); one that pays passes. (Mutant: the element's initial value
    was not followed into it, so last month's payment satisfied this month's.)"""
    lists = {"c": ListMatch("by_key", "id"), "c.*.pay": UNORDERED}
    initial = {"c": [{"id": 1, "pay": [{"amt": 5}]}]}
    expected = {"c": [{"id": 1, "pay": [{"amt": 5}]}]}
    idle = compare_changes(initial, expected, {"c": [{"id": 1, "pay": [{"amt": 5}]}]}, lists=lists)
    assert idle == ([], [("c.0.id", 1, 1, True), ("c.0.pay.<not added 0>", {"amt": 5}, ABSENT, False)])
    paid = compare_changes(initial, expected, {"c": [{"id": 1, "pay": [{"amt": 5}, {"amt": 5}]}]}, lists=lists)
    assert paid == ([], [("c.0.id", 1, 1, True), ("c.0.pay.1.amt", 5, 5, True)])


def test_an_element_tried_and_not_matched_is_still_an_unexpected_change() -> None:
    """Payments of 10 and 25 appended, one of 25 expected (with the gold run's timestamp, ignored): the 25 meets
    index 1, and the 10 at index 0 is an unexpected change. (Mutant: trying the expected element against index 0
    marked ``pay.0.amt`` as compared, and the extra payment of 10 passed.)"""
    unexpected, rows = compare_changes(
        {"pay": []}, {"pay": [{"amt": 25, "at": "gold"}]}, {"pay": [{"amt": 10, "at": "t1"}, {"amt": 25, "at": "t2"}]},
        lists={"pay": UNORDERED}, ignore=["pay.*.at"])
    assert unexpected == [("pay.0.amt", ABSENT, 10, False)]
    assert rows == [("pay.1.amt", 25, 25, True)]


def test_whole_mode_applies_list_rules_and_ignore_inside_the_elements_of_an_ordered_list() -> None:
    """``m`` is ordered (the default); the list at ``m.0`` matches ``m.*``, unordered: ``[1, 2]`` and ``[2, 1]`` are
    one multiset. A timestamp under ``t.*.at`` is ignored inside an element of an ordered list. (Mutant: an ordered
    list's elements were compared whole, without the rules for what lies inside them.)"""
    rows = compare_state({"m": [[1, 2]]}, {"m": [[2, 1]]}, "whole", lists={"m.*": UNORDERED})
    assert rows == [("m.0.1", 1, 1, True), ("m.0.0", 2, 2, True)]
    assert compare_state({"t": [{"id": 1, "at": "x"}]}, {"t": [{"id": 1, "at": "y"}]}, "whole",
                         ignore=["t.*.at"]) == [("t.0.id", 1, 1, True)]
    assert compare_state({"t": [{"id": 1, "at": "x"}]}, {"t": [{"id": 2, "at": "y"}]}, "whole",
                         ignore=["t.*.at"]) == [("t.0.id", 1, 2, False)]


def test_state_unchanged_compares_exactly() -> None:
    """``state_unchanged`` has no tolerance: a balance moved by 1e-10 changed. (Mutant: a tolerance of 1e-9.)"""
    assert compare_unchanged({"bal": 100.0}, {"bal": 100.0000000001}, ["bal"]) == [
        ("bal", 100.0, 100.0000000001, False)]
    assert compare_unchanged({"bal": 100.0}, {"bal": 100}, ["bal"]) == [("bal", 100.0, 100, True)]


def test_a_tolerance_reaches_numbers_inside_nested_lists_and_dicts() -> None:
    """|1.0 - 1.05| = 0.05 <= 0.1 wherever the numbers sit; 0.2 apart they differ. (Mutant: a list's elements were
    compared without the tolerance.)"""
    assert values_equal({"a": [1.0]}, {"a": [1.05]}, tolerance=0.1)
    assert values_equal([[1.0]], [[1.05]], tolerance=0.1)
    assert not values_equal([[1.0]], [[1.2]], tolerance=0.1)
