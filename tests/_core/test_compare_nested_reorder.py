"""``changes`` mode, a control replay and a ``same_state`` pair align an
``unordered`` list's elements by their text, then by a view of it; an element whose own ``unordered`` (or
``by_key``) list came back in another order had neither, and was reported as an element removed and one added.
Each expected verdict is a hand judgement of the world, with ``whole`` mode's verdict on the same state beside it
where the two must agree."""

from __future__ import annotations

from typing import Any

import pytest

from oloproof_nb._core.compare import compare_changes, compare_state, list_diff
from oloproof_nb._core.lists import ListMatch

NESTED = {"orders": ListMatch("unordered"), "orders.*.tags": ListMatch("unordered")}
KEYED = {"orders": ListMatch("unordered"), "orders.*.lines": ListMatch("by_key", "sku")}


def _changes_pass(initial: Any, actual: Any, lists: Any, ignore: list[str]) -> bool:
    unexpected, rows = compare_changes(initial, {}, actual, lists=lists, ignore=ignore)
    return not unexpected and all(ok for *_, ok in rows)


def _whole_pass(initial: Any, actual: Any, lists: Any, ignore: list[str]) -> bool:
    return all(ok for *_, ok in compare_state(initial, actual, "whole", lists=lists, ignore=ignore))


@pytest.mark.parametrize("ignore", [[], ["orders.*.at"]])
def test_an_element_whose_unordered_list_came_back_reordered_is_the_element_kept(ignore: list[str]) -> None:
    # by hand: no leaf changed but the order of a list whose rule says order means nothing (and, with the
    # pattern, nothing else at all): the same world
    initial = {"orders": [{"id": 1, "tags": ["a", "b"], "at": 1}, {"id": 2, "tags": [], "at": 1}]}
    actual = {"orders": [{"id": 2, "tags": [], "at": 1}, {"id": 1, "tags": ["b", "a"], "at": 1}]}
    assert _whole_pass(initial, actual, NESTED, ignore)
    assert _changes_pass(initial, actual, NESTED, ignore)
    assert list_diff(initial, actual, NESTED, ignore) == []  # a control replay's and a pair's reading
    # the sandbox restamped the order too: the one row is the stamp, which the pattern hides
    restamped = {"orders": [{"id": 2, "tags": [], "at": 1}, {"id": 1, "tags": ["b", "a"], "at": 2}]}
    assert _changes_pass(initial, restamped, NESTED, ["orders.*.at"])
    assert list_diff(initial, restamped, NESTED, ["orders.*.at"]) == [("orders.1.at", 1, 2)]


@pytest.mark.parametrize("tags", [["a", "c"], ["a", "a", "b"], ["a"], ["b", "a", "b"]])
def test_an_element_whose_unordered_list_holds_other_elements_is_still_a_change(tags: list[str]) -> None:
    # by hand: a tag replaced, doubled, lost or added is a changed world, in every mode
    initial = {"orders": [{"id": 1, "tags": ["a", "b"]}]}
    actual = {"orders": [{"id": 1, "tags": tags}]}
    assert not _whole_pass(initial, actual, NESTED, [])
    assert not _changes_pass(initial, actual, NESTED, [])
    assert list_diff(initial, actual, NESTED) != []


def test_a_by_key_list_inside_an_element_is_read_by_its_keys() -> None:
    initial = {"orders": [{"id": 1, "lines": [{"sku": "x", "n": 1}, {"sku": "y", "n": 2}]}, {"id": 2, "lines": []}]}
    # by hand: the lines came back in another order, each with its own n: the same world
    moved = {"orders": [{"id": 2, "lines": []}, {"id": 1, "lines": [{"sku": "y", "n": 2}, {"sku": "x", "n": 1}]}]}
    assert _whole_pass(initial, moved, KEYED, [])
    assert _changes_pass(initial, moved, KEYED, [])
    # the two lines swapped their n: x went from 1 to 2 and y from 2 to 1
    swapped = {"orders": [{"id": 2, "lines": []}, {"id": 1, "lines": [{"sku": "y", "n": 1}, {"sku": "x", "n": 2}]}]}
    assert not _whole_pass(initial, swapped, KEYED, [])
    assert not _changes_pass(initial, swapped, KEYED, [])
