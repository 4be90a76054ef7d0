"""A path argument whose first part is a ``~`` the shell did not expand (``--out=~/runs/r1``: bash expands no ``~``
after ``--out=``; ``"~/suite"`` quoted) is refused naming the path in full: ``run . --out=~/runs/r1`` made a folder
named ``~`` in the current folder and wrote the run there."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from oloproof_nb.cli import main


@pytest.mark.parametrize(("argv", "argument", "given"), [
    (["run", ".", "--out=~/runs/r1"], "--out", "~/runs/r1"),
    (["run", "~/suite"], "suite", "~/suite"),
    (["gate", "~", "--json"], "run_dir", "~"),
    (["gate", "runs/r1", "--release=~/release.yaml"], "--release", "~/release.yaml"),
    (["report", "runs/r1", "--out=~/report.html"], "--out", "~/report.html"),
    (["compare", "runs/r1", "~/runs/r2"], "candidate_run", "~/runs/r2"),
    (["init", "--example", "stateful-agent", "~/suite"], "dest", "~/suite"),
])
def test_a_home_shorthand_left_unexpanded_is_refused(argv: list[str], argument: str, given: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    full = str(tmp_path / "home" / given[2:]) if given != "~" else str(tmp_path / "home")
    assert err == (f"oloproof: error: argument {argument}: {given!r} starts with '~', which only a shell expands to "
                   f"the home folder (here it names a folder '~'); write the path in full: {full!r} (see `oloproof "
                   f"{argv[0]} --help`)\n")
    assert os.listdir(tmp_path) == []  # no folder named '~' was made


def test_a_tilde_elsewhere_in_a_path_is_a_name_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """``~alice/…`` and ``backup~`` are read as written: only a first part that is ``~`` itself is refused. So is
    ``./~/runs``, the way to name a folder called ``~`` in the current folder (no shell expands it), and it is named
    as given: said ``~/runs``, it read as the home folder's."""
    monkeypatch.chdir(tmp_path)
    for name in ("~alice/runs", "runs~", "~runs", "./~/runs", "./~"):
        assert main(["gate", name]) == 2  # nothing there
        assert capsys.readouterr().err.startswith(f"oloproof: error: {name}: no such file or folder")


def test_a_folder_named_tilde_is_named_as_given_in_the_latest_run_and_in_what_to_give(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof gate ./~/suite`` said it gated ``~/suite/runs/r2``, and its folder of runs given for a run named the
    latest ``'~/suite/runs/r2'``: the home folder's, to whoever reads or copies it."""
    import oloproof_nb as op

    monkeypatch.chdir(tmp_path)
    root = make_suite([{"id": "c1", "input": {"answer": "ok"}, "expected": {"answer": "ok"}}],
                      evaluators=[{"type": "answer_matches"}], folder="~/suite")
    for name in ("r1", "r2"):
        op.run(root, out=root / "runs" / name, progress=False)
    assert main(["gate", "./~/suite"]) in (0, 1)
    assert capsys.readouterr().err.startswith("oloproof: gating the latest run of the suite: ./~/suite/runs/r2\n")
    assert main(["gate", "./~/suite/runs"]) == 2
    assert capsys.readouterr().err.endswith("give one of them, the latest is './~/suite/runs/r2'\n")
