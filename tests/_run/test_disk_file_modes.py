"""``_run/disk``: edges of file modes and parent folders that ``tests/_run/test_disk.py`` leaves open.

Each expectation is read from outside the code under test: a mode by ``os.stat``, the bytes of a file read back
through another descriptor, a hand count of the mode bits.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from oloproof_nb._run import disk as disk_module

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="no owner's read bit on Windows")


def test_open_fd_keeps_a_file_whose_mode_cannot_be_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a file system that refuses ``chmod`` (a vfat or SMB mount: EPERM), a file made under
    a umask that takes the owner's read is still opened and written as the umask made it; the refusal is never the
    caller's error (a run on such a mount wrote its journal before the umask was watched, and still does)."""

    def refused(*args: object, **kwargs: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "chmod", refused)
    old = os.umask(0o400)
    try:
        fd = disk_module.open_fd(tmp_path / "journal", os.O_WRONLY | os.O_CREAT, 0o666)
    finally:
        os.umask(old)
    try:
        assert os.write(fd, b"line\n") == 5
    finally:
        os.close(fd)
    assert stat.S_IMODE((tmp_path / "journal").stat().st_mode) == 0o266  # by hand: 0o666 & ~0o400, left as made
    monkeypatch.undo()
    os.chmod(tmp_path / "journal", 0o600)
    assert (tmp_path / "journal").read_bytes() == b"line\n"


@posix_only
def test_owner_reads_and_writes_leaves_what_is_no_regular_file_alone(tmp_path: Path) -> None:
    """Only a regular file gets its owner's read and write back; a named pipe (or a folder)
    where a file goes keeps the mode it has (0o200 and 0o300 by ``os.stat``)."""
    os.mkfifo(tmp_path / "pipe")
    os.chmod(tmp_path / "pipe", 0o200)
    (tmp_path / "folder").mkdir()
    os.chmod(tmp_path / "folder", 0o300)
    try:
        disk_module.owner_reads_and_writes(tmp_path / "pipe")
        disk_module.owner_reads_and_writes(tmp_path / "folder")
        assert [stat.S_IMODE((tmp_path / name).stat().st_mode) for name in ("pipe", "folder")] == [0o200, 0o300]
    finally:
        os.chmod(tmp_path / "folder", 0o700)


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() != 0, reason="only root can give a file another owner")
def test_owner_reads_and_writes_leaves_a_file_of_another_owner_alone(tmp_path: Path) -> None:
    """Run as root (a container), a file of another owner keeps its mode (0o200 by ``os.stat``):
    oloproof gives back only the permission the umask took from a file it made."""
    other = tmp_path / "theirs"
    other.write_text("x")
    os.chown(other, 4242, 4242)
    os.chmod(other, 0o200)
    disk_module.owner_reads_and_writes(other)
    assert stat.S_IMODE(other.stat().st_mode) == 0o200


def test_a_file_in_the_way_of_a_parent_is_the_error_pathlib_gives(tmp_path: Path) -> None:
    """A file where a parent goes is the error ``Path.mkdir(parents=True, exist_ok=True)``
    raises for the same path (its errno and file name, read from pathlib on a twin of the folder), never a bare
    FileExistsError naming the file in the way as if it were the folder asked for."""
    for name in ("ours", "pathlib"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "file").write_text("x")
    with pytest.raises(OSError) as expected:
        (tmp_path / "pathlib" / "file" / "a").mkdir(parents=True, exist_ok=True)
    with pytest.raises(OSError) as caught:
        disk_module.make_folders(tmp_path / "ours" / "file" / "a")
    assert type(caught.value) is type(expected.value) and caught.value.errno == expected.value.errno
    assert caught.value.filename == str(tmp_path / "ours" / "file" / "a")
    assert (tmp_path / "ours" / "file").read_text() == "x"
