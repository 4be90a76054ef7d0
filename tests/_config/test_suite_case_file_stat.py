"""What tells a loaded case file from another version of it: the stat fields compared, and when a streamed case
is checked."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._config import suite as suite_module
from oloproof_nb._config.suite import _stat_of
from oloproof_nb.errors import CaseFileError


def test_the_stat_holds_size_mtime_inode_device_and_ctime(tmp_path: Path) -> None:
    """Each field the docstring names, read from ``os.stat`` (the reference), in its order: a field left out is
    a rewrite that field alone would show, taken for the loaded file (the device: the same inode number on another
    file system; the status change time: a rewrite with its modification time put back)."""
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"id": "c0"}\n')
    st = os.stat(path)
    assert _stat_of(path) == (13, st.st_mtime_ns, st.st_ino, st.st_dev, st.st_ctime_ns)
    assert st.st_dev != 0 and st.st_ctime_ns != 0 and st.st_mtime_ns != 0


def test_a_streamed_case_is_checked_after_it_was_read_before_it_is_given_out(make_suite, monkeypatch) -> None:
    """The file changes while the next case is read (a writer running beside the run): that case is not given out.
    A check before the read (only after the last case came back) would have handed it on."""
    monkeypatch.setattr(suite_module, "KEEP_CASES_BYTES", 0)  # streamed
    root = make_suite([{"id": "c0", "input": {"n": 0}}, {"id": "c1", "input": {"n": 1}}],
                      evaluators=[{"type": "answer_matches"}])
    suite = op.load_suite(root)
    assert suite.kept_cases is None
    path = root / "cases.jsonl"
    reading = suite_module.iter_cases

    def written_while_read(file: Path) -> Iterator[tuple[int, Any]]:
        for n, (line, case) in enumerate(reading(file)):
            if n == 1:  # c1 read; the file rewritten in that moment (a new modification time, as any write gives)
                st = os.stat(path)
                os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
            yield line, case

    monkeypatch.setattr(suite_module, "iter_cases", written_while_read)
    cases = suite.iter_cases()
    assert next(cases).id == "c0"
    with pytest.raises(CaseFileError, match="changed since the suite was loaded"):
        next(cases)
