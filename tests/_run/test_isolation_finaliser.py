"""``isolation: process`` ends its workers so that the system's finaliser runs.

A desk over a working copy of its SQLite database keeps the copy in a temporary folder of its own and removes
it with the instance (``weakref.finalize``, README section 1a's SQL bullet). A thread run drops its instances at
the end, so the finaliser runs; a process run killed every worker at once, and each run left a worker's copy
(``work.db``, ``-wal``, ``-shm``) behind, outside the suite folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import oloproof_nb as op

DESK = '''
import os
import sqlite3
import shutil
import tempfile
import weakref

import oloproof_nb as op


def _close(db, folder):
    db.close()
    shutil.rmtree(folder, ignore_errors=True)


class CopyDesk(op.RecordedAgent):
    version = "copy-desk-1"

    def __init__(self):
        self.folder = tempfile.mkdtemp(dir=os.environ["U23_COPIES"])
        self.db = sqlite3.connect(os.path.join(self.folder, "work.db"), check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE notes (id TEXT PRIMARY KEY, text TEXT NOT NULL)")
        weakref.finalize(self, _close, self.db, self.folder)

    def reset(self, state):
        with self.db:
            self.db.execute("DELETE FROM notes")
            self.db.executemany("INSERT INTO notes VALUES (?, ?)", state.get("notes", {}).items())

    def snapshot(self):
        return {"notes": dict(self.db.execute("SELECT id, text FROM notes ORDER BY id"))}

    def write(self, note_id, text):
        with self.db:
            self.db.execute("INSERT INTO notes VALUES (?, ?)", (note_id, text))
        return {"ok": True}

    def act(self, input, rec):
        rec.tool("write", self.write, note_id=input["id"], text="hi")
        return "written"
'''


def _suite(root: Path) -> Path:
    root.mkdir()
    (root / "copy_desk.py").write_text(DESK, encoding="utf-8")
    (root / "oloproof.yaml").write_text(
        "name: copies\nsystem: copy_desk:CopyDesk\ncase_timeout_s: 30\n"
        "evaluators:\n  - {type: state_matches, mode: changes}\n", encoding="utf-8")
    lines = [{"id": f"n{i}", "input": {"id": f"n{i}"}, "initial_state": {"notes": {}},
              "expected": {"state": {"notes": {f"n{i}": "hi"}}}} for i in range(4)]
    (root / "cases.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return root


@pytest.mark.parametrize("workers", [1, 2])
def test_a_process_run_lets_each_worker_release_its_system(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           workers: int) -> None:
    copies = tmp_path / "copies"
    copies.mkdir()
    monkeypatch.setenv("U23_COPIES", str(copies))
    root = _suite(tmp_path / "suite")
    run = op.run(root, out=tmp_path / "run", progress=False, isolation="process", workers=workers)
    assert list(run.verdicts["verdict"]) == ["pass"] * 4  # the desk worked: each case wrote its note
    assert sorted(p.name for p in copies.iterdir()) == []  # before: one worker's copy left per run


def test_a_thread_run_releases_its_systems_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copies = tmp_path / "copies"
    copies.mkdir()
    monkeypatch.setenv("U23_COPIES", str(copies))
    run = op.run(_suite(tmp_path / "suite"), out=tmp_path / "run", progress=False, workers=2)
    assert list(run.verdicts["verdict"]) == ["pass"] * 4
    assert sorted(p.name for p in copies.iterdir()) == []


def test_a_resume_of_a_finished_process_run_lets_its_worker_release_its_system(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A resume of a run already finished builds the system in its first worker and runs nothing: that worker was
    killed (``stop``), so each such resume left its desk's working copy behind; it is told to drop it."""
    copies = tmp_path / "copies"
    copies.mkdir()
    monkeypatch.setenv("U23_COPIES", str(copies))
    root = _suite(tmp_path / "suite")
    op.run(root, out=tmp_path / "run", progress=False, isolation="process")
    run = op.run(root, out=tmp_path / "run", progress=False, isolation="process", resume=True)
    assert list(run.verdicts["verdict"]) == ["pass"] * 4  # the finished run, left as it was
    assert sorted(p.name for p in copies.iterdir()) == []  # before: the resume's worker's copy was left
