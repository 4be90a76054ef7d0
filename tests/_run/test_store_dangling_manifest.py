"""A run folder whose ``manifest.json`` is a symbolic link to nothing (a copy that kept a link, a folder moved): it
was "not a run directory (no manifest.json)", which sent the user looking for a file that is there, as a link. It
now names the link and where it points, in the words every file read gives a dangling link
(``files.dangling_link``)."""

from __future__ import annotations

from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb._run.store import read_manifest
from oloproof_nb.errors import RunDirError


def test_a_manifest_that_is_a_dangling_link_names_the_link_and_where_it_points(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").symlink_to(tmp_path / "gone" / "manifest.json")
    expected = (f"{run / 'manifest.json'}: is a dangling symbolic link (it points to "
                f"'{tmp_path / 'gone' / 'manifest.json'}', which does not exist); point it at the file, or remove it")
    with pytest.raises(RunDirError) as caught:
        read_manifest(run)
    assert str(caught.value) == expected
    with pytest.raises(RunDirError) as caught:
        op.load_run(run)
    assert str(caught.value) == expected

