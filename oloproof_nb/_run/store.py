"""The run directory: an append-only JSONL store with a manifest, resumable after a crash.

::

    runs/<run_id>/
      manifest.json    suite name, run_id, system_version, started_at, finished_at (absent while running),
                       config digests, and what the frames and the gate need of the suite
      cases.jsonl      one record per finished case
      replays.jsonl    one record per replay

Records are appended and flushed one at a time (one ``write`` per line), so a
process killed at any moment leaves at most one torn last line, which loading
ignores and resuming truncates.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from .._core.canonical import iso, utc_now
from .._core.paths import ABSENT
from .._core.records import CaseRecord, Manifest, ReplayRecord
from ..errors import RunDirError, validation_problem

__all__ = ["RunStore", "read_jsonl", "read_manifest", "read_cases", "read_replays", "new_run_id", "dumps",
           "MANIFEST", "CASES", "REPLAYS"]

MANIFEST = "manifest.json"
CASES = "cases.jsonl"
REPLAYS = "replays.jsonl"


def new_run_id(now: datetime | None = None) -> str:
    """``YYYYmmddTHHMMSSZ-xxxxxx``: sortable by start time, unique by a random suffix."""
    now = now or utc_now()
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + os.urandom(3).hex()


def _default(obj: Any) -> Any:
    if isinstance(obj, datetime):
        return iso(obj)
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    if obj is ABSENT:
        return {"$absent": True}
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def dumps(record: Any) -> str:
    """One JSON line (NaN and infinities kept as Python's JSON extensions, so they round-trip)."""
    return json.dumps(record, ensure_ascii=False, default=_default, separators=(",", ":"))


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Records of a store file; a torn last line (no newline at the end) is ignored.

    The file is read as bytes, one line at a time, so a write cut anywhere (even
    inside a multi-byte UTF-8 character) is ignored like any other torn line.
    Lines are parsed :data:`_BATCH` at a time as one JSON array (faster, and
    keys repeated across records then share one string object); a batch that
    does not give exactly one object per line is parsed again line by line, so
    an error names its line.
    """
    if not path.exists():
        return
    with path.open("rb") as handle:
        batch: list[bytes] = []
        first = 1
        for raw in handle:
            if not raw.endswith(b"\n"):
                break  # the process died while writing this record
            batch.append(raw)
            if len(batch) == _BATCH:
                yield from _parse_batch(path, first, batch)
                first += len(batch)
                batch = []
        yield from _parse_batch(path, first, batch)


#: Lines of a store file parsed together.
_BATCH = 512


def _parse_batch(path: Path, first: int, batch: list[bytes]) -> Iterable[dict[str, Any]]:
    if not batch:
        return ()
    try:
        records = json.loads("[" + b",".join(batch).decode("utf-8") + "]")
    except (UnicodeDecodeError, ValueError, RecursionError):
        records = None
    if records is None or len(records) != len(batch) or not all(isinstance(r, dict) for r in records):
        return (_parse(path, lineno, raw) for lineno, raw in enumerate(batch, start=first))
    return records  # type: ignore[no-any-return]


def _parse(path: Path, lineno: int, raw: bytes) -> dict[str, Any]:
    try:
        record = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
        raise RunDirError(f"{path}: line {lineno}: a stored record is not valid JSON ({why}); "
                          "the run directory is damaged") from None
    if not isinstance(record, dict):
        raise RunDirError(f"{path}: line {lineno}: a stored record is not a JSON object; the run directory is damaged")
    return record


def read_manifest(directory: Path) -> Manifest:
    """The validated ``manifest.json`` of a run directory."""
    path = directory / MANIFEST
    if not path.is_file():
        raise RunDirError(f"{directory}: not a run directory (no {MANIFEST})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RunDirError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or "run_id" not in data:
        raise RunDirError(f"{path}: not a run manifest (no run_id)")
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        key, message, _ = validation_problem(exc)
        raise RunDirError(f"{path}: {key}: {message}") from None


def read_cases(directory: Path) -> Iterator[CaseRecord]:
    """The case records of ``cases.jsonl`` (a torn last line ignored)."""
    return read_jsonl(directory / CASES)  # type: ignore[return-value]


def read_replays(directory: Path) -> Iterator[ReplayRecord]:
    """The replay records of ``replays.jsonl`` (a torn last line ignored)."""
    return read_jsonl(directory / REPLAYS)  # type: ignore[return-value]


def _truncate_torn_tail(path: Path) -> None:
    """Cut a last line that has no newline (a write the process did not finish)."""
    if not path.exists():
        return
    with path.open("rb+") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        if size == 0:
            return
        pos = size
        step = 1 << 16
        while pos > 0:
            start = max(0, pos - step)
            handle.seek(start)
            chunk = handle.read(pos - start)
            nl = chunk.rfind(b"\n")
            if nl != -1:
                end = start + nl + 1
                if end != size:
                    handle.truncate(end)
                return
            pos = start
        handle.truncate(0)


def _drop_orphan_replays(directory: Path) -> None:
    """Remove replay records of cases that have no case record.

    A case's replays are appended while it runs, before its own record; a case
    a crash cut short runs again on resume and appends its replays again, so
    the earlier ones go (rewritten atomically: a temporary file, then a rename).
    """
    path = directory / REPLAYS
    if not path.exists():
        return
    recorded = {rec["case"]["id"] for rec in read_cases(directory)}
    tmp = directory / (REPLAYS + ".tmp")
    dropped = 0
    try:
        with path.open("rb") as source, tmp.open("wb") as target:
            for lineno, raw in enumerate(source, start=1):
                if _parse(path, lineno, raw).get("case_id") in recorded:
                    target.write(raw)
                else:
                    dropped += 1
    except RunDirError:
        tmp.unlink()
        raise
    if dropped:
        os.replace(tmp, path)
    else:
        tmp.unlink()


class RunStore:
    """Writer of one run directory (thread-safe appends)."""

    def __init__(self, directory: Path, manifest: Manifest) -> None:
        self.directory = directory
        self.manifest = manifest
        self._lock = threading.Lock()
        self._handles: dict[str, IO[str]] = {}

    @classmethod
    def create(cls, directory: Path, manifest: Manifest) -> RunStore:
        """Start a new run directory; an existing non-empty directory is an error, never overwritten."""
        if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
            raise RunDirError(f"{directory}: already exists and is not empty; choose another --out, "
                              "or pass --resume to finish that run")
        directory.mkdir(parents=True, exist_ok=True)
        store = cls(directory, manifest)
        store.write_manifest()
        return store

    @classmethod
    def resume(cls, directory: Path) -> RunStore:
        """Reopen an interrupted run directory for appending (torn last lines are cut first)."""
        manifest = read_manifest(directory)
        for name in (CASES, REPLAYS):
            _truncate_torn_tail(directory / name)
        _drop_orphan_replays(directory)
        return cls(directory, manifest)

    def write_manifest(self) -> None:
        """Write manifest.json atomically (temp file, then rename)."""
        tmp = self.directory / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(self.manifest.to_json(), indent=2, ensure_ascii=False) + "\n",
                       encoding="utf-8")
        os.replace(tmp, self.directory / MANIFEST)

    def _append(self, name: str, record: CaseRecord | ReplayRecord) -> None:
        line = dumps(record) + "\n"
        with self._lock:
            handle = self._handles.get(name)
            if handle is None:
                handle = (self.directory / name).open("a", encoding="utf-8")
                self._handles[name] = handle
            handle.write(line)
            handle.flush()

    def append_case(self, record: CaseRecord) -> None:
        self._append(CASES, record)

    def append_replay(self, record: ReplayRecord) -> None:
        self._append(REPLAYS, record)

    def finish(self, finished_at: datetime) -> None:
        """Record the end of the run in the manifest and close the files."""
        self.manifest = self.manifest.model_copy(update={"finished_at": iso(finished_at)})
        self.close()
        self.write_manifest()

    def close(self) -> None:
        with self._lock:
            for handle in self._handles.values():
                handle.close()
            self._handles.clear()
