"""A run's ``out`` (``--out``) that is a dangling symbolic link, or lies below one, said only
``cannot create the run directory (File exists)`` of a path where nothing exists; the line now names the link and
says it is a dangling link, and nothing is made where it points."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.cli import main
from oloproof_nb.errors import RunDirError


@pytest.mark.parametrize("below", ["", "runs/v1"])
def test_a_dangling_link_at_out_is_named(example_suite: Path, tmp_path: Path, below: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    link, target = tmp_path / "link", tmp_path / "gone" / "runs"
    os.symlink(target, link)
    out = link / below if below else link
    expected = (f"{link}: is a dangling symbolic link (it points to '{target}', which does not exist), not a folder; "
                "remove the link or create what it points to, or choose another")
    with pytest.raises(RunDirError) as err:
        op.run(example_suite, out=out, progress=False)
    assert str(err.value) == expected + " out="
    assert main(["run", str(example_suite), "--out", str(out)]) == 2
    message = capsys.readouterr().err
    assert f"oloproof: error: {expected} --out" in message and "File exists" not in message
    assert link.is_symlink() and not (tmp_path / "gone").exists()  # nothing made through the link


def test_a_link_to_a_folder_is_followed(example_suite: Path, tmp_path: Path) -> None:
    (tmp_path / "there").mkdir()
    os.symlink(tmp_path / "there", tmp_path / "link")
    run = op.run(example_suite, out=tmp_path / "link" / "run", progress=False)
    assert (tmp_path / "there" / "run" / "manifest.json").is_file() and run.n_cases == 48
