"""Files and folders oloproof writes, made safely.

:func:`open_fd` opens a file on a descriptor above standard input, output and error (a system that closed
its standard output never prints into a journal), :func:`make_folders` never leaves a folder its owner cannot
use, and :func:`link_refused` is the error for a file that is a symbolic link where oloproof writes in place.
The run folder (:mod:`.store`, :mod:`.lock`, :mod:`.in_flight`), the suite's replay cache, the columnar copy
of a run and exported tables use them. Reading the user's files safely is :mod:`oloproof_nb._config.files`.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path

from ..errors import RunDirError

__all__ = ["open_fd", "above_standard", "open_in_place", "hard_links", "refuse_shared", "make_folders",
           "link_refused", "owner_reads_and_writes"]

#: The descriptors of standard input, output and error: never one of a run folder's files (see :func:`open_fd`).
_STANDARD_FDS = 3


def open_fd(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open(path, flags, mode)``, as a descriptor above standard input, output and error.

    A system that closes its standard output or error (``os.close(1)``, a library that detaches from the
    terminal) frees that number, and ``os.open`` hands out the lowest free one: the journal opened next then
    *was* standard output, and every line the system printed (a debugging ``print``, a C library writing to
    descriptor 2) was appended to ``states.jsonl`` between its records, so the run never loaded again. The
    file is opened as asked, then duplicated until the copy lands above 2 (``os.dup`` takes the lowest free
    number, so at most three times; each copy is not inherited by programs started with ``exec``, as any
    descriptor Python opens), and the standard numbers it took are closed again: a print to them fails, as it
    did before we opened. ``os.dup`` is the same on every platform (Windows hands out the lowest free number
    too; ``fcntl``'s ``F_DUPFD`` is POSIX only, and on Windows the file had stayed on the freed number).

    With ``os.O_CREAT`` a file made (found empty) is one its owner can read and write
    (:func:`owner_reads_and_writes`), whatever the umask is when it is made. On Windows the file is opened with
    ``os.O_BINARY``: its C runtime opens a descriptor in text mode otherwise, and each ``"\\n"`` written became
    ``"\\r\\n"`` on the disk (other bytes than the ones counted and hashed as they were written).
    """
    fd = above_standard(os.open(path, flags | getattr(os, "O_BINARY", 0), mode))
    if flags & os.O_CREAT:
        try:
            if os.fstat(fd).st_size == 0:  # made now (or empty): a file that holds something keeps its mode
                owner_reads_and_writes(fd)
        except OSError:  # the file as the umask made it, as before
            pass
    return fd


def above_standard(fd: int) -> int:
    """``fd`` itself when it is above 2, else a copy of it above 2 (``fd`` closed): see :func:`open_fd`. The pipe
    to an ``isolation: process`` worker is moved so too (:mod:`.isolation`). Raises :class:`OSError` when no
    descriptor is left (``fd`` is closed then too)."""
    taken: list[int] = []
    try:
        while fd < _STANDARD_FDS:
            taken.append(fd)
            fd = os.dup(fd)
    finally:
        for number in taken:
            os.close(number)
    return fd


def owner_reads_and_writes(file: int | Path) -> None:
    """Give the owner of a regular file oloproof made (a descriptor, or a path) back the read and write permission
    the umask took, leaving its other permissions as the umask made them.

    The umask is the process's, and the system under test runs in the run's process (``isolation: thread``): one
    that sets ``os.umask(0o777)`` in ``run()`` made every file the run created after it mode 0 (``cases.jsonl``,
    ``manifest.json``, the frame files), which their owner could not read back. The run then called its own
    ``cases.jsonl`` written into by something else (``journal_changed``: never loaded again), and ``oloproof gate``
    could not read ``manifest.json`` (the CLI refuses such a umask up front, but not one set by the system later).
    A file of another owner, and Windows (whose modes hold no read permission), are left as they are.
    """
    if sys.platform == "win32":  # pragma: no cover - no owner's read bit to give back
        return
    st = os.stat(file)
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISREG(st.st_mode) and mode & 0o600 != 0o600 and st.st_uid == os.geteuid():
        os.chmod(file, mode | 0o600)


def make_folders(folder: Path, parents: bool = True) -> None:
    """``folder.mkdir(parents=True, exist_ok=True)`` (``parents`` False: ``folder.mkdir()``), never leaving a folder
    its owner cannot use.

    Under a umask that takes the owner's read, write or search permission (``os.umask(0o777)`` in a notebook;
    the CLI refuses one up front) a folder is made mode 0 (or lacking that permission): nothing could be written
    into it, and it stayed behind, one per call, a folder no one could remove without ``chmod``. Each folder is
    made in turn and checked; one its owner cannot read, write and search raises :class:`PermissionError`
    naming the umask, and the folders this call made are removed again (deepest first).
    """
    missing = [folder]
    if parents:
        missing = []
        for path in (folder, *folder.parents):
            if path.is_dir():
                break
            missing.append(path)
    made: list[Path] = []
    try:
        for path in reversed(missing):
            try:
                path.mkdir()
            except FileExistsError:  # made meanwhile by another process: its folder, kept
                if not parents or not path.is_dir():
                    if parents:  # something else in the way (a file, a loop of links): pathlib's own error for it
                        folder.mkdir(parents=True, exist_ok=True)
                    raise
                continue
            made.append(path)
            mode = stat.S_IMODE(path.lstat().st_mode)
            if mode & 0o700 != 0o700:  # made 0o777 less the umask: the umask is what the mode lacks
                raise PermissionError(errno.EACCES, f"umask {0o777 & ~mode:04o}: the folders made here are mode "
                                      f"{mode:04o}, which their owner cannot read, write and search; set a umask that "
                                      "leaves the owner all three (umask 022, or 077 to keep them private)",
                                      str(path))
    except OSError:
        for path in reversed(made):
            try:
                path.rmdir()
            except OSError:
                break
        raise


def link_refused(path: Path) -> str:
    """The error for a run folder's file that is a symbolic link (a folder copied or unpacked with its links)."""
    return (f"{path}: is a symbolic link; a run folder's files are written in place, never through a link (it "
            "would change the file it points to): remove the link, or copy the folder with its files (cp -rL) and "
            "use the copy")


def hard_links(file: int | Path) -> int:
    """How many names regular file ``file`` (a path, not followed when it is a symbolic link, or a descriptor) has
    (``st_nlink``); 0 when there is none, it is no regular file, or it cannot be stat'ed."""
    try:
        st = os.fstat(file) if isinstance(file, int) else os.lstat(file)
    except (OSError, ValueError):
        return 0
    return st.st_nlink if stat.S_ISREG(st.st_mode) else 0


def refuse_shared(path: Path, fd: int | None = None) -> None:
    """Raise :class:`~oloproof_nb.errors.RunDirError` when run folder file ``path`` (or its open descriptor ``fd``)
    has other names (:func:`hard_links` above 1: a folder copied with ``cp -al``, or by a backup tool that
    hard-links): appended to or cut in place, it would change the other folder's file too, which is the same file."""
    links = hard_links(path if fd is None else fd)
    if links > 1:
        raise RunDirError(f"{path}: has {links} hard links, so another folder shares it (a run folder copied with "
                          "cp -al, or by a backup tool that hard-links); written here in place, it would change that "
                          "folder's run too: make an independent copy of the run folder with cp -r (without -l) and "
                          "resume that copy")


def open_in_place(path: Path, flags: int) -> int:
    """:func:`open_fd` of a run folder's file oloproof appends to (or cuts) in place; one that has other names is
    closed again and refused (:func:`refuse_shared`): written through one name, the change shows through every
    other. A file replaced (``os.replace``) is never written in place: a new file takes the name, and the other
    names keep the old one."""
    fd = open_fd(path, flags)
    try:
        refuse_shared(path, fd)
    except RunDirError:
        os.close(fd)
        raise
    return fd
