"""A run folder given to ``op.load_run`` that is a symbolic link to nothing (a run folder moved): it was "no such run
directory" of a link that is there; it now names the link and where it points (``files.dangling_link``)."""

from __future__ import annotations

from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.errors import RunDirError


def test_a_run_folder_that_is_a_dangling_link_names_the_link(tmp_path: Path) -> None:
    """It was "no such run directory" of a link that is there."""
    (tmp_path / "run").symlink_to("moved")
    with pytest.raises(RunDirError) as caught:
        op.load_run(tmp_path / "run")
    assert str(caught.value) == (f"{tmp_path / 'run'}: is a dangling symbolic link (it points to 'moved', which does "
                                 "not exist); point it at a run directory, or remove it")
