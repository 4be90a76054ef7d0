"""The lock of a run folder (``_run/lock.py``): who holds it, a note that comes late or never, a holder killed or
forked, a lock file that is a named pipe."""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from oloproof_nb._run.lock import RunLock
from oloproof_nb.errors import RunLockedError


def test_the_lock_dies_with_its_process(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    code = ("import os, signal, sys\nfrom pathlib import Path\nfrom oloproof_nb._run.lock import RunLock\n"
            "RunLock.acquire(Path(sys.argv[1])).note_holder()\nos.kill(os.getpid(), signal.SIGKILL)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(folder)], timeout=60, check=False)
    assert proc.returncode == -9
    assert '"pid"' in (folder / ".lock").read_text(encoding="utf-8")  # the note stays; the lock does not
    RunLock.acquire(folder).release()


def test_a_refused_process_waits_for_the_holders_note(tmp_path: Path) -> None:
    """The holder writes its note right after it accepted the folder: a process refused meanwhile names it."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / ".lock").write_text(json.dumps({"pid": 2**22 + 12345, "host": socket.gethostname(),
                                              "since": "2026-01-01T00:00:00.000000Z"}), encoding="utf-8")
    held = RunLock.acquire(folder)  # the lock is taken; the note still names a process that is gone
    writer = threading.Timer(0.15, held.note_holder)
    writer.start()
    try:
        with pytest.raises(RunLockedError, match=rf"in use by another oloproof process \(pid {os.getpid()} on host"):
            RunLock.acquire(folder)  # the note written 0.15 s after it was refused, inside HOLDER_NOTE_WAIT_S
    finally:
        writer.join()
        held.release()


def test_a_note_that_never_comes_says_holder_unknown(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / ".lock").write_text(json.dumps({"pid": 2**22 + 12345, "host": socket.gethostname(),
                                              "since": "2026-01-01T00:00:00.000000Z"}), encoding="utf-8")
    held = RunLock.acquire(folder)
    try:
        with pytest.raises(RunLockedError, match=r"\(holder unknown\)"):  # never the dead process's pid
            RunLock.acquire(folder)
    finally:
        held.release()


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="fork (POSIX)")
def test_a_process_forked_while_the_lock_is_held_does_not_keep_it(tmp_path: Path) -> None:
    """A system that starts a helper with multiprocessing (fork) handed it the lock's open file: after the run
    process was killed, ``--resume`` was refused as "in use by another oloproof process (holder unknown)" for
    as long as the helper lived. The forked process now closes its copy: the lock goes with its holder."""
    folder = tmp_path / "run"
    folder.mkdir()
    lock = RunLock.acquire(folder)
    helper = multiprocessing.get_context("fork").Process(target=time.sleep, args=(30,), daemon=True)
    helper.start()
    try:
        with pytest.raises(RunLockedError):  # still held by this process
            RunLock.acquire(folder)
        lock.release()  # as when the holder dies
        RunLock.acquire(folder).release()  # free, though the forked helper still runs
        assert helper.is_alive()
    finally:
        helper.kill()
        helper.join()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes (POSIX)")
def test_asking_who_holds_a_lock_that_is_a_named_pipe_does_not_wait(tmp_path: Path) -> None:
    """A named pipe at ``.lock`` of an unfinished run made ``oloproof gate``, ``report`` and
    ``compare`` wait forever for a writer (the holder probe opened it blocking). Nobody holds such a lock."""
    os.mkfifo(tmp_path / ".lock")
    probe = ("from pathlib import Path; from oloproof_nb._run.lock import RunLock; "
             f"print(RunLock.holder(Path({str(tmp_path)!r})))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "None\n"), done.stderr
    assert stat.S_ISFIFO(os.stat(tmp_path / ".lock").st_mode)  # left as it was
