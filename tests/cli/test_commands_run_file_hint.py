"""``oloproof run`` given a file of a suite (its oloproof.yaml) names the folder to give instead as a command that
runs as printed: quoted when it holds a space, written ``./-x`` when it starts with '-'."""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof_nb.cli import main


@pytest.mark.parametrize(("folder", "shown"), [("my suite", "'my suite'"), ("-suite", "./-suite")])
def test_the_folder_named_for_a_suite_file_runs_as_printed(folder: str, shown: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / folder).mkdir()
    (tmp_path / folder / "oloproof.yaml").write_text("name: s\n", encoding="utf-8")
    assert main(["run", "--", f"{folder}/oloproof.yaml"]) == 2
    err = capsys.readouterr().err
    assert f"the folder holding oloproof.yaml (e.g. oloproof run {shown})" in err
