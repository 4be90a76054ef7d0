"""``out=`` whose first part is a ``~`` is refused by ``op.run`` and ``op.baseline`` as the command line refuses
``--out=~/runs/r1``: Python expands no ``~``, so the run was written into a folder named ``~`` of the current
folder, without a word."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op

CASES = [{"id": "w00", "input": {"answer": "done", "writes": []}, "initial_state": {"acct": {"a": 0}},
          "expected": {"answer": "done"}}]


@pytest.mark.parametrize("given", ["~/runs/r1", "~", Path("~/runs/r1")])
@pytest.mark.parametrize("resume", [False, True])
def test_run_refuses_an_out_starting_with_a_tilde(make_suite: Callable[..., Path], given: str | Path, resume: bool,
                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = op.load_suite(make_suite(CASES))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    full = os.path.join(tmp_path / "home", str(given)[2:]) if str(given) != "~" else str(tmp_path / "home")
    with pytest.raises(op.RunDirError) as refused:
        op.run(suite, out=given, resume=resume, progress=False)
    assert str(refused.value) == (f"out={str(given)!r} starts with '~', which only a shell expands to the home folder "
                                  f"(here it names a folder '~'); write the path in full: {full!r}")
    assert os.listdir(work) == []  # no folder named '~' was made


def test_baseline_refuses_it_too(make_suite: Callable[..., Path], tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    suite = op.load_suite(make_suite(CASES))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    with pytest.raises(op.RunDirError, match=r"^out='~/baselines/b1' starts with '~', which only a shell expands"):
        op.baseline(suite, out="~/baselines/b1", progress=False)
    assert os.listdir(work) == []


def test_a_folder_named_tilde_is_given_as_dot_slash(make_suite: Callable[..., Path], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The way to name a folder ``~`` on purpose, as on the command line: ``./~/…`` is read as written."""
    suite = op.load_suite(make_suite(CASES))
    monkeypatch.chdir(tmp_path)
    run = op.run(suite, out="./~/runs/r1", progress=False)
    assert run.directory == tmp_path / "~" / "runs" / "r1"
    assert (tmp_path / "~" / "runs" / "r1" / "manifest.json").is_file()
