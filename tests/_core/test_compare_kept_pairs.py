"""The rows of an element pair kept from the matching are those of the pair the matching chose: an expected element
that fits more than one actual element gets the rows of its own partner, never those of another expected element
found fitting that partner (by hand, each expected leaf is reported once, at the index of the element it met)."""

from __future__ import annotations

from oloproof_nb._core import compare
from oloproof_nb._core.lists import ListMatch

LISTS = {"root": ListMatch("unordered"), "**.k": ListMatch("unordered")}


def test_each_expected_element_gets_the_rows_of_its_own_partner() -> None:
    # E0 = {k: [{n: a}]} fits only A1 (the one element with a k list); E1 = {n: a} fits A0 and A1. The matching
    # gives E0 A1 and E1 A0: E0's leaf at root.1.k.0.n, E1's at root.0.n, in the order of the expected list
    expected = {"root": [{"k": [{"n": "a"}]}, {"n": "a"}]}
    actual = {"root": [{"n": "a"}, {"n": "a", "k": [{"n": "a", "id": 2}]}]}
    rows = compare.compare_state(expected, actual, lists=LISTS)
    assert rows == [("root.1.k.0.n", "a", "a", True), ("root.0.n", "a", "a", True)]
