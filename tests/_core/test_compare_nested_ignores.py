"""``changes`` mode aligns an ``unordered`` list's elements over what ``whole`` mode
compares. Each expected verdict is a hand judgement of the world (which leaves changed, and whether a pattern hides
them), with ``whole`` mode's verdict on the same state beside it where the two must agree. Lists inside elements,
patterns naming positions, and elements without the key field: edges the ignored-stamp tests leave open."""

from __future__ import annotations

from typing import Any

from oloproof_nb._core.compare import compare_changes, compare_state
from oloproof_nb._core.lists import ListMatch

UNORDERED = {"l": ListMatch("unordered")}


def _changes_pass(initial: Any, actual: Any, ignore: list[str], expected: Any = None) -> bool:
    unexpected, rows = compare_changes(initial, expected or {}, actual, lists=UNORDERED, ignore=ignore)
    return not unexpected and all(ok for *_, ok in rows)


def _whole_pass(initial: Any, actual: Any, ignore: list[str]) -> bool:
    return all(ok for *_, ok in compare_state(initial, actual, "whole", lists=UNORDERED, ignore=ignore))


def test_an_ignored_entry_appended_to_a_list_inside_an_element_is_no_change() -> None:
    # by hand: the only new leaf is l.1.log.1, which l.*.log.* hides; the elements merely came back in another order
    initial = {"l": [{"s": "x", "log": ["a"]}, {"s": "y", "log": []}]}
    actual = {"l": [{"s": "y", "log": []}, {"s": "x", "log": ["a", "b"]}]}
    assert _whole_pass(initial, actual, ["l.*.log.*"])
    assert _changes_pass(initial, actual, ["l.*.log.*"])
    # an emptied log, and a log filled from empty, are as little of a change
    assert _changes_pass(actual, initial, ["l.*.log.*"])
    assert _changes_pass({"l": [{"s": "x", "log": []}, "z"]}, {"l": ["z", {"s": "x", "log": ["b"]}]}, ["l.*.log.*"])


def test_a_list_inside_an_element_still_differs_by_the_positions_no_pattern_hides() -> None:
    initial = {"l": [{"s": "x", "log": ["a", "b"]}, {"s": "y", "log": []}]}
    # position 0 is compared: an entry in front moves "a" to an ignored position and a new text to a compared one
    assert not _changes_pass(initial, {"l": [{"s": "y", "log": []}, {"s": "x", "log": ["c", "a"]}]}, ["l.*.log.1"])
    assert not _whole_pass(initial, {"l": [{"s": "y", "log": []}, {"s": "x", "log": ["c", "a"]}]}, ["l.*.log.1"])


def test_an_ignored_stamp_present_on_one_side_only_is_no_change() -> None:
    # by hand: the only new leaf is l.1.at (a stamp the sandbox set on an element that had none), hidden by l.*.at
    initial = {"l": [{"s": "x"}, {"s": "y"}]}
    actual = {"l": [{"s": "y"}, {"s": "x", "at": 5}]}
    assert _whole_pass(initial, actual, ["l.*.at"])
    assert _changes_pass(initial, actual, ["l.*.at"])
    assert _changes_pass(actual, initial, ["l.*.at"])


def test_a_pattern_naming_a_position_hides_the_leaf_of_the_element_at_that_position() -> None:
    # by hand: l.1.at is the one leaf that changed, and the pattern names it; the element at 0 is untouched
    initial = {"l": [{"s": "y", "at": 1}, {"s": "x", "at": 1}]}
    assert _whole_pass(initial, {"l": [{"s": "y", "at": 1}, {"s": "x", "at": 2}]}, ["l.1.at"])
    assert _changes_pass(initial, {"l": [{"s": "y", "at": 1}, {"s": "x", "at": 2}]}, ["l.1.at"])
    # the same change at the position the pattern does not name is one
    assert not _changes_pass(initial, {"l": [{"s": "x", "at": 2}, {"s": "y", "at": 1}]}, ["l.1.at"])


def test_an_element_the_exact_pass_met_is_not_met_again() -> None:
    # by hand: one of the two equal x's is gone (an unexpected removal) and z was added, as expected
    initial = {"l": [{"s": "x", "at": 1}, {"s": "x", "at": 2}]}
    actual = {"l": [{"s": "x", "at": 1}, {"s": "z", "at": 5}]}
    unexpected, rows = compare_changes(initial, {"l": [{"s": "z"}]}, actual, lists=UNORDERED, ignore=["l.*.at"])
    assert [path for path, *_ in unexpected] == ["l.<unmatched 1>"]
    assert all(ok for *_, ok in rows)


def test_an_element_without_the_key_field_is_seen_at_its_own_position() -> None:
    # by hand: x stays at position 1, and only l.1.at (the pattern's) changed; w moved, equal
    by_id = {"l": ListMatch("by_key", "id")}
    initial = {"l": [{"id": 1}, {"s": "x", "at": 1}, {"s": "w"}]}
    actual = {"l": [{"s": "w"}, {"s": "x", "at": 2}, {"id": 1}]}
    assert all(ok for *_, ok in compare_state(initial, actual, "whole", lists=by_id, ignore=["l.1.at"]))
    assert compare_changes(initial, {}, actual, lists=by_id, ignore=["l.1.at"]) == ([], [])


def test_a_restamped_element_without_the_key_field_is_not_one_the_case_added() -> None:
    # by hand: the case was to add an x; it added nothing, and the sandbox restamped the x the list held
    by_id = {"l": ListMatch("by_key", "id")}
    initial = {"l": [{"id": 1}, {"s": "x", "at": 1}]}
    unexpected, rows = compare_changes(initial, {"l": [{"s": "x"}]}, {"l": [{"id": 1}, {"s": "x", "at": 2}]},
                                       lists=by_id, ignore=["l.*.at"])
    assert unexpected == []
    assert [(path, ok) for path, _, _, ok in rows] == [("l.<not added 0>", False)]
