"""A read that ends before the size the file had when it was opened is of no version of it. A file cut and put
back within one tick of the coarse clock its times come from keeps its size, modification time and status change
time, so the version check alone passed a read that met the cut: the digest of its first part, which for a report
with something appended to it was the expected report's ("sha256 matches", ``verified``)."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._config.files import open_regular
from oloproof_nb._core.receipts import OutcomeContract
from oloproof_nb._run import observe
from oloproof_nb._run.observe import UnobservableArtifact, observe_file

REPORT = b'{"total": 4711}\n'


class _CutShort:
    """A handle whose reads end after ``keep`` bytes, as a read of a file cut meanwhile does (its descriptor, and so
    its version as fstat gives it, the file's own: a stand-in for a cut and a put-back within one clock tick)."""

    def __init__(self, handle: Any, keep: int) -> None:
        self._handle, self._left = handle, keep

    def read(self, size: int = -1) -> bytes:
        chunk = self._handle.read(min(size, self._left) if size >= 0 else self._left)
        self._left -= len(chunk)
        return chunk

    def fileno(self) -> int:
        return int(self._handle.fileno())

    def __enter__(self) -> _CutShort:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()


def test_a_read_that_ends_before_the_files_size_is_unobservable(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "report.json"
    path.write_bytes(REPORT + b'{"appended": "by the agent"}\n')

    def cut_while_read(where: Any) -> tuple[Any, Any]:
        handle, info = open_regular(where)
        return _CutShort(handle, len(REPORT)), info

    monkeypatch.setattr(observe, "open_regular", cut_while_read)
    contract = OutcomeContract(artifact_id="report", expected_sha256=hashlib.sha256(REPORT).hexdigest())
    with pytest.raises(UnobservableArtifact, match="changed while it was read"):
        observe_file(contract, path, now=lambda: datetime.now(timezone.utc))


def test_a_file_that_reports_no_size_is_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel file (``/proc``) reports size 0 and holds bytes: read whole, as before."""
    proc = Path("/proc/self/status")
    if not proc.is_file() or proc.stat().st_size != 0:
        pytest.skip("no /proc file of size 0 here")
    ev = observe_file(OutcomeContract(artifact_id="status", require_fresh=False), proc)
    assert ev is not None and ev.sha256 is not None and ev.sha256 != hashlib.sha256(b"").hexdigest()


class _ReadLonger(_CutShort):
    """A handle whose read goes on past the size the file had when opened: bytes appended while it was read, and cut
    away again within the same clock tick (its version, as fstat gives it, unchanged)."""

    def __init__(self, handle: Any, extra: bytes) -> None:
        super().__init__(handle, 1 << 20)
        self._extra = extra

    def read(self, size: int = -1) -> bytes:
        chunk = super().read(size)
        if not chunk:
            chunk, self._extra = self._extra, b""
        return chunk


def test_a_read_that_goes_past_the_files_size_is_unobservable(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # the digest of REPORT + the extra line is of no version the file held (it held REPORT)
    path = tmp_path / "report.json"
    path.write_bytes(REPORT)
    extra = b'{"appended": "and cut again"}\n'

    def grown_while_read(where: Any) -> tuple[Any, Any]:
        handle, info = open_regular(where)
        return _ReadLonger(handle, extra), info

    monkeypatch.setattr(observe, "open_regular", grown_while_read)
    contract = OutcomeContract(artifact_id="report", expected_sha256=hashlib.sha256(REPORT + extra).hexdigest())
    with pytest.raises(UnobservableArtifact, match="changed while it was read"):
        observe_file(contract, path, now=lambda: datetime.now(timezone.utc))
