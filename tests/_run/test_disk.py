"""Files and folders oloproof writes (``_run/disk.py``): descriptors above the standard three, folders their owner
can use."""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from _hostile_files import O_BINARY, open_as_on_windows

from oloproof_nb._run import disk as disk_module


def test_open_fd_never_hands_out_a_standard_descriptor(tmp_path: Path) -> None:
    saved = os.dup(0)
    os.close(0)  # standard input closed, as `oloproof run SUITE <&-` starts
    try:
        fd = disk_module.open_fd(tmp_path / "journal", os.O_WRONLY | os.O_CREAT)
    finally:
        os.dup2(saved, 0)
        os.close(saved)
    try:
        assert fd > 2
        assert not os.get_inheritable(fd)
        assert os.fstat(fd).st_ino == (tmp_path / "journal").stat().st_ino
    finally:
        os.close(fd)


def test_open_fd_creates_a_file_with_the_mode_asked_and_0o644_by_default(tmp_path: Path) -> None:
    """The mode reaches ``os.open`` (the umask applies): under umask 002, the default 0o644 stays
    0o644 and the 0o666 a temporary file asks for is 0o664 (by hand: 0o666 & ~0o002)."""
    old = os.umask(0o002)
    try:
        plain = disk_module.open_fd(tmp_path / "plain", os.O_WRONLY | os.O_CREAT)
        shared = disk_module.open_fd(tmp_path / "shared", os.O_WRONLY | os.O_CREAT, 0o666)
    finally:
        os.umask(old)
    for fd in (plain, shared):
        os.close(fd)
    assert [stat.S_IMODE((tmp_path / name).stat().st_mode) for name in ("plain", "shared")] == [0o644, 0o664]


def test_open_fd_makes_a_file_its_owner_can_read_and_write_under_any_umask(tmp_path: Path) -> None:
    """A system that set ``os.umask(0o777)`` mid-run made the run's journals and manifest mode 0 (0o666
    less 0o777), which their owner could not read back. The owner's read and write come back; the rest stays as
    the umask made it (0o200 taken: 0o466 | 0o600 = 0o666; 0o777 taken: 0o600); a file there before keeps its mode
    when opened without ``O_CREAT``, and one that holds something (a journal resumed) with it."""
    for name, text in (("empty", b""), ("journal", b'{"a":1}\n')):
        (tmp_path / name).write_bytes(text)
        os.chmod(tmp_path / name, 0o200)
    old = os.umask(0o777)
    try:
        blind = disk_module.open_fd(tmp_path / "blind", os.O_WRONLY | os.O_CREAT, 0o666)
        os.umask(0o200)
        readonly = disk_module.open_fd(tmp_path / "readonly", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        empty = disk_module.open_fd(tmp_path / "empty", os.O_WRONLY | os.O_APPEND)
        journal = disk_module.open_fd(tmp_path / "journal", os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    finally:
        os.umask(old)
    for fd in (blind, readonly, empty, journal):
        os.close(fd)
    modes = [stat.S_IMODE((tmp_path / name).stat().st_mode) for name in ("blind", "readonly", "empty", "journal")]
    assert modes == [0o600, 0o666, 0o200, 0o200]


def test_open_fd_keeps_run_files_off_the_standard_descriptors_on_windows_too(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """On ``sys.platform == "win32"`` open_fd returned the descriptor ``os.open`` gave, a freed 0,
    1 or 2 included (Windows hands out the lowest free number too), so a system that closed its standard output
    still printed into the journal there. Both freed numbers below the file's are skipped, and fcntl (POSIX only)
    is never touched."""

    class NoFcntl:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"fcntl.{name} used on Windows")

    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(disk_module, "fcntl", NoFcntl(), raising=False)
    saved = os.dup(0), os.dup(2)
    os.close(0)
    os.close(2)  # standard input and error closed: the two lowest free numbers
    try:
        fd = disk_module.open_fd(tmp_path / "journal", os.O_WRONLY | os.O_CREAT)
        standard_free = [number for number in (0, 2) if not _is_open(number)]
    finally:
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 2)
        for number in saved:
            os.close(number)
    try:
        assert fd > 2 and standard_free == [0, 2]  # the numbers it took on the way are free again
        assert not os.get_inheritable(fd)
        assert os.fstat(fd).st_ino == (tmp_path / "journal").stat().st_ino
    finally:
        os.close(fd)


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def test_make_folders_removes_what_it_made_when_the_umask_takes_an_owners_permission(tmp_path: Path) -> None:
    """Each umask that takes one of the owner's permissions (0o100, 0o200, 0o400) is refused by the mode of
    the folder made (0o777 less the umask, by hand: 0o677, 0o577, 0o377), whoever runs it; 0o077 (private) is not.
    An existing folder is kept (as ``mkdir(parents=True, exist_ok=True)``), and with ``parents`` False a missing
    parent or an existing folder is an error (as ``mkdir()``)."""
    (tmp_path / "kept").mkdir()
    old = os.umask(0o022)
    try:
        for mask, mode in [(0o100, 0o677), (0o200, 0o577), (0o400, 0o377), (0o777, 0)]:
            os.umask(mask)
            with pytest.raises(PermissionError, match=rf"^\[Errno 13\] umask {mask:04o}: the folders made here are "
                                                      rf"mode {mode:04o}, which"):
                disk_module.make_folders(tmp_path / "kept" / "a" / "b")
            assert list((tmp_path / "kept").iterdir()) == []
        os.umask(0o077)
        disk_module.make_folders(tmp_path / "kept" / "a" / "b")
        disk_module.make_folders(tmp_path / "kept" / "a" / "b")  # there: kept
        assert stat.S_IMODE((tmp_path / "kept" / "a" / "b").stat().st_mode) == 0o700
        with pytest.raises(FileNotFoundError):
            disk_module.make_folders(tmp_path / "none" / "c", parents=False)
        with pytest.raises(FileExistsError):
            disk_module.make_folders(tmp_path / "kept" / "a", parents=False)
    finally:
        os.umask(old)


def test_make_folders_refuses_a_file_where_the_folder_goes_and_cleans_up_after_any_error(tmp_path: Path) -> None:
    """A file where the folder (or one of its parents) goes is an error, as for
    ``mkdir(parents=True, exist_ok=True)``, never a folder taken as made; an error other than the umask's (a name
    too long for the file system, made after its parents) removes the parents this call made; the umask's error
    names the first folder made that its owner cannot use."""
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileExistsError):
        disk_module.make_folders(tmp_path / "file")
    with pytest.raises(OSError):
        disk_module.make_folders(tmp_path / "file" / "a")
    assert (tmp_path / "file").read_text() == "x"
    with pytest.raises(OSError) as caught:
        disk_module.make_folders(tmp_path / "a" / "b" / ("x" * 300))  # NAME_MAX is 255 on Linux and macOS
    assert caught.value.errno == errno.ENAMETOOLONG
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
    old = os.umask(0o022)
    try:
        (tmp_path / "kept").mkdir()
        os.umask(0o200)
        with pytest.raises(PermissionError) as denied:
            disk_module.make_folders(tmp_path / "kept" / "a" / "b")
        assert denied.value.filename == str(tmp_path / "kept" / "a")
    finally:
        os.umask(old)


def test_a_folder_another_process_makes_meanwhile_is_used_and_never_removed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``make_folders`` finds ``a`` missing, and another process makes it before this call does
    (``mkdir`` raises FileExistsError): it is used as it is; and when this call then fails (a umask that takes
    the owner's write permission), it removes the folder it made (``b``), never ``a``, which is not its own."""
    real = Path.mkdir

    def another_process_first(self: Path, *args: Any, **kwargs: Any) -> None:
        if self.name == "a" and not self.exists():
            old = os.umask(0o022)
            try:
                real(self)
            finally:
                os.umask(old)
        real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", another_process_first)
    disk_module.make_folders(tmp_path / "one" / "a" / "b")
    assert (tmp_path / "one" / "a" / "b").is_dir()
    (tmp_path / "two").mkdir()
    old = os.umask(0o200)
    try:
        with pytest.raises(PermissionError, match="umask 0200"):
            disk_module.make_folders(tmp_path / "two" / "a" / "b")
    finally:
        os.umask(old)
    assert [p.name for p in (tmp_path / "two").iterdir()] == ["a"] and list((tmp_path / "two" / "a").iterdir()) == []


def test_open_fd_opens_in_binary_mode_where_the_platform_has_one(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows' C runtime opens a descriptor in text mode unless given ``O_BINARY`` (each "\\n" written lands as
    "\\r\\n"): a run's files are opened through ``open_fd``, with the flag where it exists."""
    flags_given = open_as_on_windows(monkeypatch)
    fd = disk_module.open_fd(tmp_path / "journal", os.O_WRONLY | os.O_CREAT)
    os.close(fd)
    assert len(flags_given) == 1 and flags_given[0] & O_BINARY
