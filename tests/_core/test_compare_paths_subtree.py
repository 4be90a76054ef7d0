"""``paths`` mode compares the value at each path whole: a subtree holds only when every leaf of it does."""

from __future__ import annotations

from oloproof_nb._core import compare
from oloproof_nb._core.lists import ListMatch


def test_a_subtree_with_one_leaf_of_two_differing_fails() -> None:
    # by hand: o.a is equal, o.b is 2 against 3: the path o does not hold; o.a alone does
    expected = {"o": {"a": 1, "b": 2}}
    actual = {"o": {"a": 1, "b": 3}}
    rows = compare.compare_state(expected, actual, "paths", paths=["o", "o.a"])
    assert [(path, ok) for path, _, _, ok in rows] == [("o", False), ("o.a", True)]


def test_an_unordered_list_at_a_path_with_one_element_differing_fails() -> None:
    # by hand: {x: 1} meets its equal, {x: 2} has none ({x: 3} is left): the list at t does not hold
    lists = {"t": ListMatch("unordered")}
    rows = compare.compare_state({"t": [{"x": 1}, {"x": 2}]}, {"t": [{"x": 3}, {"x": 1}]}, "paths", paths=["t"],
                                 lists=lists)
    assert [(path, ok) for path, _, _, ok in rows] == [("t", False)]
