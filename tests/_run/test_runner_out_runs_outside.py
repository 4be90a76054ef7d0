"""The refusal of ``out=`` naming the suite's ``runs/`` or ``baselines/``: a folder named so outside the suite."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import oloproof_nb as op

CASES = [{"id": "w00", "input": {"answer": "done", "writes": []}, "initial_state": {"acct": {"a": 0}},
          "expected": {"answer": "done"}}]


def test_a_folder_named_runs_outside_the_suite_is_a_run_folder(make_suite: Callable[..., Path],
                                                                tmp_path: Path) -> None:
    """Only the suite's own ``runs/`` and ``baselines/`` hold one folder per run: ``elsewhere/runs`` and
    ``elsewhere/baselines`` are ordinary places for a run (a refusal by the name alone refused them)."""
    root = make_suite(CASES)
    for name in ("runs", "baselines"):
        out = tmp_path / "elsewhere" / name
        run = op.run(op.load_suite(root), out=out, progress=False)
        assert run.directory == out and (out / "manifest.json").is_file()
        assert list(run.verdicts["verdict"]) == ["pass"] * len(run.verdicts)
