"""``_analysis/run_pool``: which runs pool and in what order, edges the other pooling tests leave unpinned.

Each expectation is counted by hand (cases × runs) or written out from the runs' own ids, never taken from the
pooled Run's output alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op

CASES = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}} for i in range(3)]
DONE = "def done(case, initial_state, final_state, trajectory):\n    return {}\n"


def test_runs_judging_other_criteria_are_not_pooled(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """A criterion added to the suite between two runs (the same cases, the first criterion's
    check unchanged) is refused by name, in both orders: the pooled rate of the new criterion would count the
    rows of one run only, as if they were all."""
    root = make_suite(CASES, evaluators=[{"type": "python", "check": "checks:done"}])
    (root / "checks.py").write_text(DONE + DONE.replace("done", "other"), encoding="utf-8")
    a = op.run(root, out=tmp_path / "a", progress=False)
    (root / "oloproof.yaml").write_text((root / "oloproof.yaml").read_text(encoding="utf-8").replace(
        "- type: python\n  check: checks:done\n",
        "- type: python\n  check: checks:done\n- type: python\n  check: checks:other\n"), encoding="utf-8")
    b = op.run(root, out=tmp_path / "b", progress=False)
    assert list(b.verdicts["criterion"].unique()) == ["done", "other"]  # the edit took
    for first, second, lists in ((a, b, "done / done, other"), (b, a, "done, other / done")):
        with pytest.raises(op.OloproofError, match=re.escape(f"runs {first.run_id} and {second.run_id} judge "
                                                             f"different criteria ({lists})")):
            op.load_runs([first.directory, second.directory])


def test_two_do_nothing_runs_pool_as_one_baseline(make_suite: Callable[..., Path]) -> None:
    """Only the do-nothing baseline *beside the agent* is refused; two runs of the baseline
    pool (3 cases × 2 runs = 6 rows by hand), as two runs of the agent do."""
    root = make_suite(CASES)
    first, second = op.baseline(root, progress=False).run, op.baseline(root, progress=False).run
    pooled = op.load_runs([first.directory, second.directory])
    assert [r.run_id for r in pooled.runs] == [first.run_id, second.run_id] and len(pooled.cases) == 6


def test_one_run_folder_given_as_a_path_is_told_to_use_load_run(tmp_path: Path) -> None:
    """A ``Path`` alone (not a list) is refused as a string alone is, with the call to use, never
    taken apart (a Path is no list) or told only that its type is wrong."""
    for alone in (tmp_path, str(tmp_path)):
        with pytest.raises(op.OloproofError, match=r"^load_runs takes a list of run directories; for one run use "
                                                   r"load_run$"):
            op.load_runs(alone)  # type: ignore[arg-type]


class _BackwardSet(frozenset):  # type: ignore[type-arg]
    """A set iterated from the last path to the first: the order a hash seed may give any set."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(sorted(super().__iter__(), key=str, reverse=True))


def test_a_set_of_run_folders_is_pooled_in_the_order_of_its_paths(make_suite: Callable[..., Path],
                                                                   tmp_path: Path) -> None:
    """A set has no order of its own: the pool took its iteration order, which follows the hash seed, so which run
    came first (its configuration and release are the pool's) changed from one process to the next. A set is sorted
    by path; a list keeps the order given."""
    root = make_suite(CASES)
    a, b = (op.run(root, out=tmp_path / name, progress=False) for name in ("a", "b"))
    assert [r.run_id for r in op.load_runs(_BackwardSet({a.directory, b.directory})).runs] == [a.run_id, b.run_id]
    assert [r.run_id for r in op.load_runs([b.directory, a.directory]).runs] == [b.run_id, a.run_id]
    # a str and a Path in one set (sorted without key=str, they could not be compared, and the set was
    # refused as "got frozenset", no list of run directories)
    assert [r.run_id for r in op.load_runs(_BackwardSet({str(a.directory), b.directory})).runs] == [a.run_id,
                                                                                                      b.run_id]
