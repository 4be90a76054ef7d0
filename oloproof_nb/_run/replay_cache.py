"""The replay cache: one JSON file per (system version, case digest, checkpoint, change).

::

    <suite folder>/.oloproof/replays/<key>.json

A cached replay holds what the replay produced (its trajectory and the state it
left), so a second run of an unchanged suite and system makes no new replays.
A system without a ``version`` is never cached: nothing would tell a stale
entry from a fresh one. Writes are atomic (a temporary file in the same folder,
then ``os.replace``); a corrupt or partial file reads as a miss.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .._core.canonical import digest

__all__ = ["ReplayCache", "replay_key", "REPLAY_CACHE_DIR", "CACHE_SCHEMA"]

#: Where the cache lives, relative to the suite folder.
REPLAY_CACHE_DIR = Path(".oloproof") / "replays"
CACHE_SCHEMA = "oloproof_replay_cache/v1"


def replay_key(system_version: str, case_digest: str, checkpoint: int, change: dict[str, Any] | None) -> str:
    """The cache key of one replay: SHA-256 of the canonical JSON of its four parts.

    Parameters
    ----------
    system_version : str
        The system's ``version``.
    case_digest : str
        The case's digest (it covers the input, ``initial_state`` and ``expected``).
    checkpoint : int
        Index in the recorded steps of the call whose result is replaced.
    change : dict or None
        ``{"result": ...}`` of the :class:`~oloproof_nb.Change`, or None for the control replay.

    Returns
    -------
    str
        64 hex characters.

    Notes
    -----
    key = sha256(canonical_json({"schema", "system_version", "case_digest", "checkpoint", "change"})).

    Examples
    --------
    >>> a = replay_key("v1", "d" * 64, 2, None)
    >>> a == replay_key("v1", "d" * 64, 2, None), a == replay_key("v2", "d" * 64, 2, None)
    (True, False)
    """
    return digest({"schema": CACHE_SCHEMA, "system_version": system_version, "case_digest": case_digest,
                   "checkpoint": checkpoint, "change": change})


class ReplayCache:
    """Replays stored as JSON files under one folder (created on the first write).

    Parameters
    ----------
    directory : Path
        Usually ``<suite folder>/.oloproof/replays``.

    Examples
    --------
    >>> import tempfile
    >>> cache = ReplayCache(Path(tempfile.mkdtemp()) / "replays")
    >>> key = replay_key("v1", "d" * 64, 0, None)
    >>> cache.get(key) is None
    True
    >>> cache.put(key, {"trajectory": {"steps": []}, "state": {}})
    >>> cache.get(key)["state"]
    {}
    """

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or None when there is none or it cannot be read (a partial or corrupt file)."""
        try:
            data = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("schema") != CACHE_SCHEMA or data.get("key") != key:
            return None
        entry = data.get("entry")
        if not isinstance(entry, dict) or not isinstance(entry.get("trajectory"), dict):
            return None
        return entry

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store ``entry`` (JSON-ready) under ``key`` atomically; a failed write is ignored (the cache is optional)."""
        text = json.dumps({"schema": CACHE_SCHEMA, "key": key, "entry": entry}, ensure_ascii=False,
                          separators=(",", ":"))
        tmp: str | None = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}-", suffix=".tmp", dir=self.directory)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, self.path(key))
            tmp = None
        except OSError:
            pass
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
