"""``out=`` naming the suite's ``runs/`` folder is refused also when ``runs/`` is itself a symbolic link
(to a larger disk, say). Before, ``resolve()`` of the ``out=`` path gave the link's target, which was compared with
the unresolved ``<suite>/runs``: the run was written into the folder of runs, and ``oloproof gate SUITE`` then said
"no run yet"."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.cli import main

CASES = [{"id": "w00", "input": {"answer": "done", "writes": []}, "initial_state": {"acct": {"a": 0}},
          "expected": {"answer": "done"}}]


@pytest.mark.parametrize("name", ["runs", "baselines"])
@pytest.mark.parametrize("via", ["the link", "its target"])
def test_a_folder_of_runs_that_is_a_link_is_refused(make_suite: Callable[..., Path], tmp_path: Path, name: str,
                                                   via: str) -> None:
    root = make_suite(CASES)
    target = tmp_path / "big-disk" / name
    target.mkdir(parents=True)
    (root / name).symlink_to(target, target_is_directory=True)
    out = root / name if via == "the link" else target
    with pytest.raises(op.RunDirError, match=rf": is the suite's {name}/ folder, which holds one folder per run"):
        op.run(op.load_suite(root), out=out, progress=False)
    assert os.listdir(target) == []  # nothing made there


def test_a_run_in_a_linked_runs_folder_is_still_a_run(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The boundary: ``runs/x`` through the link is a run folder, and ``oloproof gate SUITE`` finds it."""
    root = make_suite(CASES)
    target = tmp_path / "big-disk" / "runs"
    target.mkdir(parents=True)
    (root / "runs").symlink_to(target, target_is_directory=True)
    op.run(op.load_suite(root), out=root / "runs" / "x", progress=False)
    assert (target / "x" / "manifest.json").is_file()
    assert main(["gate", str(root)]) in (0, 1)  # a run was found and gated (no run: exit 2)
