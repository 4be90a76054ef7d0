"""``repr(run)`` of a run that did not finish says so before its numbers, as its HTML does.

A run with no ``finished_at`` (still running, stopped, or killed: here killed after 2 of its 4 cases were recorded)
showed a text repr like a finished run's; its HTML said "not finished" and its gate ``unfinished``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import oloproof_nb as op

CASES = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(4)]


def _killed(directory: Path, keep: int) -> None:
    """The run folder as a process killed after ``keep`` records leaves it: no ``finished_at``."""
    journal = directory / "cases.jsonl"
    journal.write_text("".join(journal.read_text(encoding="utf-8").splitlines(keepends=True)[:keep]),
                       encoding="utf-8")
    stored = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    stored.pop("finished_at")
    (directory / "manifest.json").write_text(json.dumps(stored), encoding="utf-8")


def test_the_repr_of_an_unfinished_run_says_so_on_its_second_line_and_a_finished_ones_does_not(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    root = make_suite(CASES, evaluators=[{"type": "answer_matches"}])
    finished = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    assert "not finished" not in repr(finished) and len(repr(finished).splitlines()) == 1
    _killed(finished.directory, keep=2)
    lines = repr(op.load_run(finished.directory)).splitlines()
    assert lines[0].startswith("Run(") and "cases=2" in lines[0]
    assert lines[1] == ("  not finished: the run did not finish (2 of 4 cases recorded): its frames hold those "
                        "alone; resume it")
