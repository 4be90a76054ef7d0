"""List matching (``_core/lists.py``) on its own; most of its tests go through the comparison that reads it
(``test_compare.py``, ``test_compare_anchors.py``, ``test_compare_matching_edges.py``)."""

from __future__ import annotations

from oloproof_nb._core.lists import _Anchors


def test_an_anchor_is_the_text_leaf_with_the_fewest_candidates() -> None:
    """``k`` = "a" holds at indexes 0 and 1, ``v`` = "y" at 1 only: the candidates are [1]. (Mutant: the first text
    leaf was used, giving [0, 1], a ``fits`` call more per element.)"""
    act = [{"k": "a", "v": "x"}, {"k": "a", "v": "y"}, {"k": "b", "v": "x"}, {"k": "b", "v": "z"}]
    assert _Anchors(act, None).candidates({"k": "a", "v": "y"}) == [1]
    assert _Anchors(act, None).candidates({"k": "b"}) == [2, 3]
