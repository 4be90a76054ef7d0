"""``del run.manifest.finished_at`` of an unfinished run (its value None) is refused at once.

Before, the ``del`` went through, was no edit (the value read None before and after), and every later read of the
field raised AttributeError: ``run.finished``, ``repr(run)``, ``op.gate(run)``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op

CASES = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(3)]


def test_deleting_finished_at_of_an_unfinished_run_is_refused_and_the_run_reads_as_before(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    root = make_suite(CASES, evaluators=[{"type": "answer_matches"}])
    directory = op.run(op.load_suite(root), out=tmp_path / "run", progress=False).directory
    stored = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    stored.pop("finished_at")  # as a run killed before it wrote that it finished leaves it
    (directory / "manifest.json").write_text(json.dumps(stored), encoding="utf-8")
    run = op.load_run(directory)
    with pytest.raises(AttributeError, match="^finished_at: a field of manifest.json cannot be deleted"):
        del run.manifest.finished_at
    assert run.finished is False and run.manifest_edits == ()
    assert op.gate(run).reason.startswith("unfinished: the run did not finish (3 of 3 cases recorded)")
