"""A run folder, or a suite folder, given to the notebook API as ``~/…`` that is not there says why: Python expands
no ``~``, and ``op.load_run("~/runs/r1")`` said only "no such run directory" of a folder that is there (the command
line refuses such an argument by name)."""

from __future__ import annotations

from pathlib import Path

import pytest

import oloproof_nb as op


def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / "runs" / "r1").mkdir(parents=True)  # what the user meant is there
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    return home


@pytest.mark.parametrize("load", [op.load_run, op.gate, lambda path: op.load_runs([path])])
def test_a_run_folder_written_from_home_says_so(load: object, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    home = _home(tmp_path, monkeypatch)
    with pytest.raises(op.RunDirError) as refused:
        load("~/runs/r1")  # type: ignore[operator]
    assert str(refused.value) == ("~/runs/r1: no such run directory (a run directory holds manifest.json and "
                                  "cases.jsonl): '~/runs/r1' starts with '~', which only a shell expands to the home "
                                  f"folder (here it names a folder '~'); write the path in full: "
                                  f"{str(home / 'runs' / 'r1')!r}")


def test_a_suite_folder_written_from_home_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = _home(tmp_path, monkeypatch)
    for given in ("~/suite", Path("~/suite")):
        with pytest.raises(op.ConfigError) as refused:
            op.load_suite(given)
        assert str(refused.value) == ("~/suite: is not a suite folder (no such directory): '~/suite' starts with '~', "
                                      "which only a shell expands to the home folder (here it names a folder '~'); "
                                      f"write the path in full: {str(home / 'suite')!r}")


def test_a_tilde_elsewhere_adds_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a first part that is ``~`` itself: ``./~/…`` names a folder called ``~``, read as written."""
    _home(tmp_path, monkeypatch)
    for given in ("./~/runs/r1", "runs/~", "~alice/r1"):
        with pytest.raises(op.RunDirError) as refused:
            op.load_run(given)
        assert "starts with '~'" not in str(refused.value)
    with pytest.raises(op.ConfigError) as not_there:
        op.load_suite("./~/suite")
    assert str(not_there.value) == "~/suite: is not a suite folder (no such directory)"


@pytest.mark.parametrize("given", ["./~/runs/r1", "./~/notes.txt"])
def test_a_folder_named_tilde_is_named_as_given(given: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``./~/runs/r1`` names a folder ``~`` of the current folder: printed ``~/runs/r1`` (as a Path prints it), the
    refusal named the home folder's ``runs/r1``."""
    _home(tmp_path, monkeypatch)
    (tmp_path / "~").mkdir()
    (tmp_path / "~" / "notes.txt").write_text("not a run\n", encoding="utf-8")
    with pytest.raises(op.RunDirError) as refused:
        op.load_run(given)
    assert str(refused.value).startswith(f"{given}: ")
