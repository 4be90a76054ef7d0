"""Review F43: a case file whose status change time alone moved (a ``chmod`` to the same mode, as a backup or sync
tool does) is the file loaded while its bytes are; R49's refusal of a file rewritten in place stays."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb._config import suite as suite_module
from oloproof_nb.errors import CaseFileError


def _touch_status(path: Path) -> None:
    """``chmod`` ``path`` to the mode it has (bytes, size, modification time and inode stay) until its status change
    time moved (a coarse clock can give the same tick)."""
    before = os.stat(path)
    for _ in range(1000):
        os.chmod(path, before.st_mode)
        if os.stat(path).st_ctime_ns != before.st_ctime_ns:
            return
        time.sleep(0.005)
    raise AssertionError("the status change time never moved")


def _cases(n: int) -> list[dict[str, object]]:
    return [{"id": f"c{i}", "input": {"q": i}, "initial_state": {}} for i in range(n)]


def test_a_kept_case_file_chmodded_after_loading_still_runs(make_suite) -> None:
    """Before, ``suite.cases`` of a suite whose case file was ``chmod``ed to its own mode raised 'changed since the
    suite was loaded' (its cases were kept in memory, and its bytes were the loaded ones)."""
    root = make_suite(_cases(3))
    suite = op.load_suite(root)
    assert suite.kept_cases is not None
    _touch_status(root / "cases.jsonl")
    assert [c.id for c in suite.cases] == ["c0", "c1", "c2"]
    assert [c.id for c in suite.cases] == ["c0", "c1", "c2"]  # the new stat is remembered: checked again, fine


def test_a_streamed_case_file_chmodded_before_the_run_still_runs(make_suite, monkeypatch) -> None:
    monkeypatch.setattr(suite_module, "KEEP_CASES_BYTES", 0)  # streamed, as a file over 4 MiB is
    root = make_suite(_cases(3))
    suite = op.load_suite(root)
    assert suite.kept_cases is None
    _touch_status(root / "cases.jsonl")
    assert [c.id for c in suite.cases] == ["c0", "c1", "c2"]


def test_a_streamed_case_file_chmodded_while_read_is_refused_and_said_so(make_suite, monkeypatch) -> None:
    """Cases read since the last check may come from a write undone since: refused, but not as 'changed'."""
    monkeypatch.setattr(suite_module, "KEEP_CASES_BYTES", 0)
    root = make_suite(_cases(3))
    suite = op.load_suite(root)
    cases = suite.iter_cases()
    assert next(cases).id == "c0"
    _touch_status(root / "cases.jsonl")
    with pytest.raises(CaseFileError, match="status change time moved while cases were read from it"):
        next(cases)


def test_a_kept_case_file_rewritten_with_its_time_put_back_is_still_refused(make_suite) -> None:
    root = make_suite(_cases(3))
    suite = op.load_suite(root)
    path = root / "cases.jsonl"
    loaded = os.stat(path)
    data = path.read_bytes()
    with open(path, "r+b") as handle:
        handle.write(data.replace(b'"q": 1', b'"q": 7'))
    for _ in range(1000):  # until the status change time moves off the load's (a coarse clock's tick)
        os.utime(path, ns=(loaded.st_atime_ns, loaded.st_mtime_ns))
        now = os.stat(path)
        if now.st_ctime_ns != loaded.st_ctime_ns:
            break
        time.sleep(0.005)
    assert (now.st_size, now.st_mtime_ns, now.st_ino) == (loaded.st_size, loaded.st_mtime_ns, loaded.st_ino)
    with pytest.raises(CaseFileError, match="changed since the suite was loaded"):
        list(suite.iter_cases())
