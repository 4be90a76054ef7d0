"""``file_above``: a link to a folder above the path is a folder (the path below it can be made or read through
it); only a file, or a link that leads to no folder, is named as in the way."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._config import files


def test_a_link_to_a_folder_above_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "runs").symlink_to("real")
    assert files.file_above(tmp_path / "runs" / "r1") is None
    assert files.file_above(tmp_path / "runs" / "a" / "r1") is None



def test_a_folder_above_that_cannot_be_searched_says_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``locked/`` of mode 0 (no search permission for a user who is not root): looking at ``locked/runs`` raises
    PermissionError, which ``Path.exists`` let through before Python 3.12, so a load of ``locked/runs/r1`` ended in a
    traceback instead of the caller's own line. Nothing can be told then: None. A file above is still named."""
    locked = tmp_path / "locked"
    (locked / "runs").mkdir(parents=True)
    real_stat, real_lstat = os.stat, os.lstat

    def denied(real: Callable[..., os.stat_result]) -> Callable[..., os.stat_result]:
        def looked_at(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
            if str(path).startswith(str(locked) + os.sep):
                raise PermissionError(13, "Permission denied", str(path))
            return real(path, *args, **kwargs)
        return looked_at

    monkeypatch.setattr(os, "stat", denied(real_stat))
    monkeypatch.setattr(os, "lstat", denied(real_lstat))
    assert files.file_above(locked / "runs" / "r1") is None
    (tmp_path / "notes.txt").write_text("", encoding="utf-8")
    assert files.file_above(tmp_path / "notes.txt" / "r1") == f"{tmp_path / 'notes.txt'} is a file, not a folder"
    assert files.file_above(tmp_path / "notes.txt" / "a" / "r1") == f"{tmp_path / 'notes.txt'} is a file, not a folder"
