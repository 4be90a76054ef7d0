"""The lock of a run folder: one process at a time creates, runs or resumes a run (see :mod:`.store`).

An exclusive ``fcntl.flock`` on ``.lock``, released when its process ends (even killed); the file holds
who holds it, so a second process gets :class:`~oloproof_nb.errors.RunLockedError` naming the holder. A
process forked while the lock is held does not keep it. Windows has no ``flock``: a run folder is not locked
there.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import sys
import time
from pathlib import Path

from .._core.canonical import dump_json, iso, parse_json, utc_now
from ..errors import RunDirError, RunLockedError
from .disk import hard_links, link_refused, open_fd

if sys.platform != "win32":
    import fcntl

__all__ = ["LOCK", "RunLock", "process_alive"]

#: The run folder's lock file.
LOCK = ".lock"

#: The descriptors of the run locks this process holds: a process forked from it (a system's helper started with
#: ``multiprocessing``) closes its copies at once, or it would hold the lock (``flock`` belongs to the open file,
#: which the fork shares) after this process died, and the run could not be resumed while it lived.
_HELD_LOCKS: set[int] = set()
_FORK_HOOK: list[bool] = []


def _drop_inherited_locks() -> None:
    for fd in list(_HELD_LOCKS):
        try:
            os.close(fd)  # the child's copy only: the parent's descriptor keeps the lock
        except OSError:
            pass
    _HELD_LOCKS.clear()


class RunLock:
    """An exclusive OS lock on a run directory (``fcntl.flock`` on ``.lock``), released when its process ends.

    The lock file holds ``{"pid", "host", "since"}`` of the holder, so the
    process that is refused can say who holds the folder. A process forked while the lock is held does not
    keep it (see :data:`_HELD_LOCKS`).
    """

    def __init__(self, fd: int | None, path: Path) -> None:
        self._fd = fd
        self.path = path

    @classmethod
    def acquire(cls, directory: Path) -> RunLock:
        """Take the lock of ``directory`` or raise :class:`RunLockedError` naming the holder."""
        path = directory / LOCK
        if sys.platform == "win32":  # pragma: no cover - no flock: documented as unlocked there
            return cls(None, path)
        try:  # never through a link: the holder's note would replace the text of the file it points to
            fd = open_fd(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0))
        except OSError as exc:
            if path.is_symlink():
                raise RunDirError(link_refused(path)) from None
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):  # a read-only folder: the run writes in it
                raise RunDirError(f"{path}: cannot open the run's lock file ({exc.strerror}); this user may not write "
                                  "the run folder, which a run and its resume write into: choose another out= in a "
                                  "folder you can write, or make this one writable to resume its run") from None
            raise RunDirError(f"{path}: cannot open the run's lock file ({exc.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _describe_holder(fd)
            os.close(fd)
            raise RunLockedError(f"{directory}: in use by another oloproof process ({holder}); wait for it to "
                                 "finish, or stop it, before running or resuming this run") from None
        if not _FORK_HOOK and hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_drop_inherited_locks)  # once per process
            _FORK_HOOK.append(True)
        _HELD_LOCKS.add(fd)
        return cls(fd, path)

    @staticmethod
    def holder(directory: Path) -> str | None:
        """Who holds the lock of ``directory`` (``pid … on host …, since …``), or None when nobody does.

        Probes without creating or changing anything in the folder.
        """
        if sys.platform == "win32":  # pragma: no cover
            return None
        try:  # without blocking: a named pipe put there waits for a writer forever (gate and report hung)
            fd = os.open(directory / LOCK, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # not a lock oloproof made: nobody holds it
                return None
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return _describe_holder(fd)
        finally:
            os.close(fd)
        return None

    def note_holder(self) -> None:
        """Write who holds the lock into the lock file (after the folder was accepted: a refusal changes nothing).

        Not into a lock file another folder shares (:func:`~.disk.hard_links` above 1: a run folder copied with
        ``cp -al``): written in place, the note replaced that folder's too (a resume of a finished run's copy, which
        writes nothing else there). The lock holds without it, as when the note cannot be written."""
        if self._fd is None or hard_links(self._fd) > 1:
            return
        # not json.dumps: a system run earlier in this process may have replaced it (one returning bytes stopped the
        # next run of a notebook as it started, with an AttributeError)
        info = dump_json({"pid": os.getpid(), "host": socket.gethostname(), "since": iso(utc_now())}).encode("utf-8")
        try:  # written over the old note, then cut to length: a reader never sees an empty file in between
            os.pwrite(self._fd, info, 0)
            os.ftruncate(self._fd, len(info))
        except OSError:
            pass  # the lock holds without the note; a refused process then says "holder unknown"

    def release(self) -> None:
        if self._fd is not None:
            _HELD_LOCKS.discard(self._fd)
            try:
                os.close(self._fd)  # closing the descriptor releases the flock
            except OSError:  # closed under the run already (a system's os.closerange): the flock went with it
                pass
            self._fd = None


#: How long a refused process waits for the holder's note (written right after the holder accepted the folder).
HOLDER_NOTE_WAIT_S = 0.5


def _describe_holder(fd: int) -> str:
    """``pid … on host …, since …`` from the lock file; a note not written yet is waited for a moment."""
    deadline = time.monotonic() + HOLDER_NOTE_WAIT_S
    while True:
        try:
            data = parse_json(os.pread(fd, 4096, 0).decode("utf-8"))
            pid, host = int(data["pid"]), data["host"]
            if host != socket.gethostname() or process_alive(pid):  # a dead process's note: not written yet
                return f"pid {pid} on host {host}, since {data['since']}"
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            pass
        if time.monotonic() >= deadline:
            return "holder unknown"
        time.sleep(0.02)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this machine (one we may not signal exists too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: it exists, under another user
        return True
    return True
