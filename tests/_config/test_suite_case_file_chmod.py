"""A case file whose status change time alone moved (a ``chmod`` to the same mode, as a backup or sync
tool does) is the file loaded while its bytes are; the refusal of a file rewritten in place stays."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _shared import times_put_back

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
    now = times_put_back(path, loaded)
    assert (now.st_size, now.st_mtime_ns, now.st_ino) == (loaded.st_size, loaded.st_mtime_ns, loaded.st_ino)
    with pytest.raises(CaseFileError, match="changed since the suite was loaded"):
        list(suite.iter_cases())


# -- edges: the device is one of the fields that must be the loaded ones, bytes that cannot be read are
# not the loaded ones, the end of a streamed file is a read, and a kept file is never read again while its cases are
# given out.


def test_a_file_on_another_device_with_the_loaded_bytes_is_refused(make_suite, monkeypatch) -> None:
    """Size, modification time and inode as loaded, the bytes too, but another device (the same inode number on
    another file system): not the file loaded."""
    root = make_suite(_cases(2))
    suite = op.load_suite(root)
    stat_of = suite_module._stat_of

    def elsewhere(path: Path) -> tuple[int, int, int, int, int]:
        size, mtime, inode, device, ctime = stat_of(path)
        return size, mtime, inode, device + 1, ctime + 1

    monkeypatch.setattr(suite_module, "_stat_of", elsewhere)
    with pytest.raises(CaseFileError, match="changed since the suite was loaded"):
        suite.cases  # noqa: B018


def test_bytes_that_cannot_be_read_are_not_the_loaded_ones(make_suite, monkeypatch) -> None:
    root = make_suite(_cases(2))
    suite = op.load_suite(root)
    _touch_status(root / "cases.jsonl")

    def unreadable(path: Path) -> str:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(suite_module, "file_digest", unreadable)
    with pytest.raises(CaseFileError, match="changed since the suite was loaded"):
        suite.cases  # noqa: B018


def test_a_kept_case_file_chmodded_while_its_cases_are_given_out_still_gives_them_all(make_suite) -> None:
    """Kept cases are not read from the file while they are given out: a ``chmod`` meanwhile changes nothing."""
    root = make_suite(_cases(3))
    suite = op.load_suite(root)
    assert suite.kept_cases is not None
    cases = suite.iter_cases()
    assert next(cases).id == "c0"
    _touch_status(root / "cases.jsonl")
    assert [c.id for c in cases] == ["c1", "c2"]


def test_a_streamed_file_cut_short_and_put_back_while_its_end_is_read_is_refused(make_suite, monkeypatch) -> None:
    """The reader found the end after c0 because the file was cut there in that moment, then written back as it was
    (modification time put back): c1 was never given out. The last check, after the end was read, must refuse
    the file (its status change time moved while it was read), not take it for the file loaded."""
    monkeypatch.setattr(suite_module, "KEEP_CASES_BYTES", 0)  # streamed
    root = make_suite(_cases(2))
    suite = op.load_suite(root)
    assert suite.kept_cases is None
    path = root / "cases.jsonl"
    loaded, data = os.stat(path), path.read_bytes()
    reading = suite_module.iter_cases

    def cut_while_read(file: Path) -> Iterator[tuple[int, Any]]:
        for n, item in enumerate(reading(file)):
            if n == 1:  # the end came early: the file was cut after c0 and is now back as it was
                for _ in range(1000):
                    with open(path, "r+b") as handle:
                        handle.write(data)
                    os.utime(path, ns=(loaded.st_atime_ns, loaded.st_mtime_ns))
                    if os.stat(path).st_ctime_ns != loaded.st_ctime_ns:
                        break
                    time.sleep(0.005)
                return
            yield item

    monkeypatch.setattr(suite_module, "iter_cases", cut_while_read)
    cases = suite.iter_cases()
    assert next(cases).id == "c0"
    with pytest.raises(CaseFileError, match="status change time moved while cases were read from it"):
        next(cases)
