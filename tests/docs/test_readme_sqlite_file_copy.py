"""README section 1a, *A connection holds more than its tables' rows*: a fresh copy of a SQLite file goes at a path
of its own.

SQLite reads a ``-wal`` file it finds beside a database as that database's own writes. A reset that copied the
template over the working file and opened it before closing the connection it replaces (the order the example desk
keeps for its ``:memory:`` databases), or over a working file beside the WAL a killed worker left, started the next
case with the rows the last one wrote: a case whose agent did nothing found its refund made.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest


def _template(folder: Path) -> Path:
    template = folder / "template.db"
    db = sqlite3.connect(template)
    db.execute("CREATE TABLE refunds (order_id TEXT PRIMARY KEY, amount REAL)")
    db.commit()
    db.close()
    return template


def _open(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=wal")
    return db


def _rows(db: sqlite3.Connection) -> list[tuple[str, float]]:
    return db.execute("SELECT order_id, amount FROM refunds").fetchall()


def test_a_copy_over_the_file_opened_before_the_old_connection_closes_keeps_its_rows(tmp_path: Path) -> None:
    template = _template(tmp_path)
    work = tmp_path / "work.db"
    shutil.copy(template, work)
    old = _open(work)
    old.execute("INSERT INTO refunds VALUES ('ord-001', 40.0)")  # the last case's write, in work.db-wal

    shutil.copy(template, work)  # the next reset: a fresh copy over the same file ...
    fresh = _open(work)
    old.close()  # ... and then the connection it replaces closed
    try:
        assert _rows(fresh) == [("ord-001", 40.0)]
    finally:
        fresh.close()


def test_a_copy_beside_the_wal_a_killed_worker_left_keeps_its_rows(tmp_path: Path) -> None:
    template = _template(tmp_path)
    work = tmp_path / "work.db"
    shutil.copy(template, work)
    writer = ("import os, sqlite3, sys\n"
              "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
              "db.execute('PRAGMA journal_mode=wal')\n"
              "db.execute(\"INSERT INTO refunds VALUES ('ord-001', 40.0)\")\n"
              "os._exit(9)\n")  # killed in mid-case: no connection closed, no finaliser run
    assert subprocess.run([sys.executable, "-c", writer, str(work)], check=False).returncode == 9
    assert (tmp_path / "work.db-wal").is_file()

    shutil.copy(template, work)
    fresh = _open(work)
    try:
        assert _rows(fresh) == [("ord-001", 40.0)]
    finally:
        fresh.close()


@pytest.mark.parametrize("close_first", [False, True])
def test_a_copy_at_a_path_of_its_own_starts_from_the_template(tmp_path: Path, close_first: bool) -> None:
    template = _template(tmp_path)
    first = tmp_path / "case-1" / "work.db"
    first.parent.mkdir()
    shutil.copy(template, first)
    old = _open(first)
    old.execute("INSERT INTO refunds VALUES ('ord-001', 40.0)")
    if close_first:
        old.close()

    second = tmp_path / "case-2" / "work.db"  # a new folder for the next reset
    second.parent.mkdir()
    shutil.copy(template, second)
    fresh = _open(second)
    if not close_first:
        old.close()
    try:
        assert _rows(fresh) == []
    finally:
        fresh.close()
