"""``file_above``: a link to a folder above the path is a folder (the path below it can be made or read through
it); only a file, or a link that leads to no folder, is named as in the way."""

from __future__ import annotations

from pathlib import Path

from oloproof_nb._config import files


def test_a_link_to_a_folder_above_is_a_folder(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "runs").symlink_to("real")
    assert files.file_above(tmp_path / "runs" / "r1") is None
    assert files.file_above(tmp_path / "runs" / "a" / "r1") is None

