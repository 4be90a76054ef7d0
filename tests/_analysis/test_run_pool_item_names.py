"""``op.load_runs`` of a set named an item that is no path by its place in the set sorted by path
(``load_runs: item 1: …``), an order the caller never saw; it names the item itself (a Run by its folder)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op

CASES = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}} for i in range(2)]


def test_an_item_of_a_set_that_is_no_path_is_named_by_itself(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    root = make_suite(CASES)
    first, second = (op.run(root, out=tmp_path / name, progress=False) for name in ("a", "z"))
    # sorted by path, the Run (its text "Run('…'") comes after ".../a": it was "item 1"
    with pytest.raises(op.OloproofError) as info:
        op.load_runs({str(first.directory), second})
    assert str(info.value) == (f"load_runs: the Run of {second.directory} in the set: a run directory must be a path "
                               "(str or pathlib.Path), got Run")
    with pytest.raises(op.OloproofError, match=r"^load_runs: 3 in the set: a run directory must be a path .*got int$"):
        op.load_runs(frozenset({str(first.directory), 3}))
    with pytest.raises(op.OloproofError, match=r"^load_runs: item 1: "):  # a list has an order: its index, as before
        op.load_runs([str(first.directory), second])
