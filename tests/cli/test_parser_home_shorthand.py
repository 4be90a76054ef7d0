"""A path argument whose first part is a ``~`` the shell did not expand (``--out=~/runs/r1``: bash expands no ``~``
after ``--out=``; ``"~/suite"`` quoted) is refused naming the path in full: ``run . --out=~/runs/r1`` made a folder
named ``~`` in the current folder and wrote the run there."""

from __future__ import annotations

import json
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


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_contract_path_left_unexpanded_says_so(json_flag: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof receipt`` reads its contract argument itself (a hook reading --json gets a contract error, exit 2):
    a ``~/…`` contract no shell expanded (quoted in a hook's command, or run without a shell) was "file not found"
    alone, of the file the user sees in the home folder."""
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "home"
    (home / "contracts").mkdir(parents=True)
    (home / "contracts" / "c.json").write_text("{}", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    assert main(["receipt", "~/contracts/c.json", *json_flag]) == 2
    out, err = capsys.readouterr()
    said = ("~/contracts/c.json: cannot read contract file: file not found; '~/contracts/c.json' starts with '~', "
            "which only a shell expands to the home folder (here it names a folder '~'); write the path in full: "
            f"{str(home / 'contracts' / 'c.json')!r}")
    assert err == f"oloproof: error: contract error: {said}\n"
    assert out == (json.dumps({"error": "contract error", "message": said}) + "\n" if json_flag else "")
    assert os.listdir(tmp_path) == ["home"]


def test_a_contract_in_a_folder_named_tilde_is_read_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["receipt", "./~/c.json"]) == 2  # nothing there
    err = capsys.readouterr().err
    assert err == "oloproof: error: contract error: ~/c.json: cannot read contract file: file not found\n"


def test_a_run_into_a_folder_named_tilde_is_made_as_written(make_suite: Callable[..., Path], tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``--out ./~/runs/r1`` reaches the run as given: the library refuses an ``out=`` starting with ``~`` as well,
    and the path, read as a Path on the way, lost its ``./``."""
    root = make_suite([{"id": "w00", "input": {"answer": "done", "writes": []}, "initial_state": {"acct": {"a": 0}},
                        "expected": {"answer": "done"}}])
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert main(["run", str(root), "--out", "./~/runs/r1", "--quiet"]) in (0, 1)  # run and gated (an error: 2)
    assert (work / "~" / "runs" / "r1" / "manifest.json").is_file()
