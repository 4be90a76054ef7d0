"""An element pair whose comparison matched a list inside it is not compared again for its rows: the pair the
matching chose was compared again, and every pair inside it too, so each level of nested ``unordered`` lists
doubled the work (a tree of one-element lists 16 levels deep took 100 s to judge). The counts are of leaf
comparisons (``values_equal``), against a hand count of the leaves the expected state names."""

from __future__ import annotations

from typing import Any

import pytest

from oloproof_nb._core import compare
from oloproof_nb._core.lists import ListMatch

TREE = {"root": ListMatch("unordered"), "**.kids": ListMatch("unordered")}


def _tree(depth: int, **extra: Any) -> dict[str, Any]:
    """A node named ``n{depth}`` whose ``kids`` list holds the node one level down (none at depth 0)."""
    node: dict[str, Any] = {"name": f"n{depth}", **extra}
    if depth:
        node["kids"] = [_tree(depth - 1, **extra)]
    return node


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = compare.values_equal

    def counted(*args: Any) -> bool:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(compare, "values_equal", counted)
    return calls


def test_a_subset_of_a_deep_tree_is_compared_once_per_level(monkeypatch: pytest.MonkeyPatch) -> None:
    # expected names each node's name only; the state adds an id to each: every element of every kids list
    # meets its one partner through fits (their texts differ), 11 names in all, each compared once, and the
    # deepest node's once more (it holds no list, so its rows are found again, at the cost of one leaf): 12
    # (before: 4,094 comparisons, 2**12 - 2)
    calls = _counted(monkeypatch)
    rows = compare.compare_state({"root": [_tree(10)]}, {"root": [_tree(10, id=7)]}, lists=TREE)
    assert [row[0] for row in rows] == ["root.0.name"] + [f"root.0{'.kids.0' * n}.name" for n in range(1, 11)]
    assert all(ok for *_, ok in rows)
    assert len(calls) == 12


def test_a_deep_tree_in_whole_mode_is_compared_once_per_level(monkeypatch: pytest.MonkeyPatch) -> None:
    # an ignored stamp differs at every node, so no element meets its partner by text: 11 names compared once
    # each, the deepest node's twice, as above: 12
    calls = _counted(monkeypatch)
    rows = compare.compare_state({"root": [_tree(10, at=1)]}, {"root": [_tree(10, at=2)]}, "whole", lists=TREE,
                                 ignore=["**.at"])
    assert len(rows) == 11 and all(ok for *_, ok in rows)
    assert len(calls) == 12


def test_a_deep_tree_that_differs_at_its_deepest_node_fails_there() -> None:
    # the kept rows of a pair are those of a pair that fits: a node that differs is still reported, under the
    # path of the element it failed to meet
    actual = _tree(6, id=7)
    node = actual
    for _ in range(6):
        node = node["kids"][0]
    node["name"] = "other"
    rows = compare.compare_state({"root": [_tree(6)]}, {"root": [actual]}, lists=TREE)
    assert [(path, ok) for path, _, _, ok in rows] == [("root.<unmatched 0>", False)]


def test_changes_mode_counts_the_leaves_of_a_kept_pair_as_expected() -> None:
    # by hand: the case added a thread of two nodes, each with a stamp the pattern hides; expected.state names
    # every other leaf, so nothing changed that it does not name, and each named leaf holds
    actual = {"root": [_tree(1, id=7, at=2)]}
    expected = {"root": [_tree(1, id=7)]}
    unexpected, rows = compare.compare_changes({"root": []}, expected, actual, lists=TREE, ignore=["**.at"])
    assert unexpected == []
    assert [(path, ok) for path, _, _, ok in rows] == [
        ("root.0.name", True), ("root.0.id", True), ("root.0.kids.0.name", True), ("root.0.kids.0.id", True)]


def test_a_list_whose_elements_all_fit_each_other_keeps_the_rows_of_few_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    # 20 expected elements, each fitting each of the 20 actual ones (a subset of their fields, with a list inside
    # that meets its element through fits): 400 fitting pairs, of which the matching chooses 20; the rows of at
    # most 40 are held (before: all 400), and each chosen pair's rows are still the comparison's, 2 leaves each
    held: list[int] = []

    class Watched(compare._Fitted):
        def keep(self, i: int, j: int, rows: list[compare.Row], nested: bool,
                 scratch: compare._Rules | None = None) -> bool:
            ok = super().keep(i, j, rows, nested, scratch)
            held.append(len(self._kept))
            return ok

    monkeypatch.setattr(compare, "_Fitted", Watched)
    actual = {"items": [{"v": 1, "extra": k, "sub": [{"w": 1, "z": k}]} for k in range(20)]}
    expected = {"items": [{"v": 1, "sub": [{"w": 1}]} for _ in range(20)]}
    lists = {"items": ListMatch("unordered"), "items.*.sub": ListMatch("unordered")}
    rows = compare.compare_state(expected, actual, lists=lists)
    assert len(rows) == 40 and all(ok for *_, ok in rows)
    assert sorted({path.split(".")[1] for path, *_ in rows}, key=int) == [str(k) for k in range(20)]
    assert len(held) >= 400
    assert max(held) == 40
