"""``out=`` naming the suite's ``runs/`` or ``baselines/`` folder itself is refused (empty at the first
run, ``runs/`` became a run folder, so ``oloproof gate SUITE`` said "no run yet" and later runs nested in it)."""

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
@pytest.mark.parametrize("spelt", ["{root}/{name}", "{root}/{name}/", "{root}/./{name}", "{root}/sub/../{name}"])
def test_out_naming_a_folder_of_runs_is_refused(make_suite: Callable[..., Path], name: str, spelt: str) -> None:
    """Refused however the path is written, before anything is made: the folder stays empty."""
    root = make_suite(CASES)
    (root / name).mkdir()
    (root / "sub").mkdir()
    out = spelt.format(root=root, name=name)
    with pytest.raises(op.RunDirError, match=rf": is the suite's {name}/ folder, which holds one folder per run"):
        op.run(op.load_suite(root), out=out, progress=False)
    assert os.listdir(root / name) == []


def test_a_link_to_the_runs_folder_is_refused_too(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    root = make_suite(CASES)
    (root / "runs").mkdir()
    (tmp_path / "link").symlink_to(root / "runs")
    with pytest.raises(op.RunDirError, match="is the suite's runs/ folder"):
        op.run(op.load_suite(root), out=tmp_path / "link", progress=False)
    assert os.listdir(root / "runs") == []


def test_a_folder_inside_runs_or_beside_it_is_a_run(make_suite: Callable[..., Path]) -> None:
    """The boundary: ``runs/x`` (a folder of its own in runs/) and ``runs2`` (a sibling whose name starts the same)
    are run folders as before, and ``oloproof gate SUITE`` finds the one in runs/."""
    root = make_suite(CASES)
    inside = op.run(op.load_suite(root), out=root / "runs" / "x", progress=False)
    beside = op.run(op.load_suite(root), out=root / "runs2", progress=False)
    assert (inside.directory, beside.directory) == (root / "runs" / "x", root / "runs2")
    assert (root / "runs" / "x" / "manifest.json").is_file() and (root / "runs2" / "manifest.json").is_file()
    assert main(["gate", str(root)]) in (0, 1)  # a run was found and gated (no run: exit 2)


def test_the_command_names_its_flag_and_exits_2(make_suite: Callable[..., Path],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    root = make_suite(CASES)
    assert main(["run", str(root), "--out", str(root / "runs"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("oloproof: error: ")
    assert "give --out a folder of its own (runs/<name>, or another place)" in err[0]
    assert not (root / "runs").exists() or os.listdir(root / "runs") == []
