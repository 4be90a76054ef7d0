"""The lock file of a run folder another folder shares (``cp -al``): its holder's note is not written into it.

:meth:`~oloproof_nb._run.lock.RunLock.note_holder` writes ``{"pid", "host", "since"}`` over the lock file's text, in
place. Through a ``.lock`` another folder shares, a resume of the copy of a finished run (let through: it has nothing
to do, and writes nothing else into the shared files) rewrote the original folder's ``.lock``, and the original's
``.lock`` named the copy's process. The lock itself still holds (``flock`` on the one file: the two folders then
exclude one another, which is safe); only the note is left out, as when it cannot be written.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._run.lock import LOCK, RunLock

pytestmark = pytest.mark.skipif(not hasattr(os, "link") or os.name != "posix", reason="hard links and flock")


def _files(folder: Path) -> dict[str, tuple[bytes, int]]:
    """``{relative path: (bytes, mtime_ns)}`` of every file below ``folder``."""
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_finished_run_resumed_through_a_shared_lock_leaves_the_other_folder_as_it_was(
        make_suite: Any, tmp_path: Path) -> None:
    root = make_suite([{"id": f"c{i}", "input": {"answer": i}, "expected": {"answer": i}} for i in range(2)])
    original = tmp_path / "runs" / "A"
    op.run(root, out=original, progress=False)
    (original / LOCK).write_text('{"pid": 1, "host": "h", "since": "then"}', encoding="utf-8")
    copy = tmp_path / "runs" / "B"
    shutil.copytree(original, copy, copy_function=os.link)  # cp -al
    before = _files(original)
    run = op.run(root, out=copy, resume=True, progress=False)
    assert run.finished and list(run.cases["case_id"]) == ["c0", "c1"]
    assert _files(original) == before  # its .lock too


def test_the_note_is_written_into_a_lock_of_its_own(tmp_path: Path) -> None:
    lock = RunLock.acquire(tmp_path)
    try:
        lock.note_holder()
        assert json.loads((tmp_path / LOCK).read_text(encoding="utf-8"))["pid"] == os.getpid()
    finally:
        lock.release()


def test_the_note_is_not_written_into_a_shared_lock_and_the_lock_still_holds(tmp_path: Path) -> None:
    (tmp_path / "A").mkdir()
    (tmp_path / "A" / LOCK).write_text("theirs", encoding="utf-8")
    (tmp_path / "B").mkdir()
    os.link(tmp_path / "A" / LOCK, tmp_path / "B" / LOCK)
    lock = RunLock.acquire(tmp_path / "B")
    try:
        lock.note_holder()
        assert (tmp_path / "A" / LOCK).read_text(encoding="utf-8") == "theirs"
        with pytest.raises(op.OloproofError, match="in use by another oloproof process"):
            RunLock.acquire(tmp_path / "A").release()
    finally:
        lock.release()
