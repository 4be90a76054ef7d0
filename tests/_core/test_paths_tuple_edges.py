"""The path functions read a tuple as the list a stored state holds; these pin two readers the tuple-as-list tests
leave open."""

from __future__ import annotations

from oloproof_nb._core.paths import find_paths, leaf_diff


def test_a_tuple_that_became_a_dict_keyed_by_index_is_a_changed_container() -> None:
    # as [1] against {"0": 1}: different values, one row holding both (not "nothing differs" at t.0)
    assert leaf_diff({"t": (1,)}, {"t": {"0": 1}}) == [("t", (1,), {"0": 1})]
    assert leaf_diff({"t": {"0": 1}}, {"t": (1,)}) == [("t", {"0": 1}, (1,))]


def test_a_pattern_reaches_into_a_tuple() -> None:
    assert find_paths({"t": ({"s": "a"}, {"s": "b"})}, ("t", "*", "s")) == [("t", "0", "s"), ("t", "1", "s")]
