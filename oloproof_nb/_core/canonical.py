"""Canonical JSON, SHA-256 digests and the one timestamp format (pure; no files)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

__all__ = ["canonical_json", "digest", "utc_now", "iso", "parse_json", "dump_json"]


def canonical_json(obj: Any) -> str:
    """Serialise ``obj`` the one canonical way used for every digest.

    ``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``: key
    order and whitespace never change the text, so they never change a digest.

    Examples
    --------
    >>> canonical_json({"b": 1, "a": [1, "é"]})
    '{"a":[1,"é"],"b":1}'
    """
    return _ENCODER.encode(obj)


#: The encoder of :func:`canonical_json`, made once (``json.dumps`` with these options builds one per call).
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)

#: The decoder of :func:`parse_json`, made when this package is imported.
_DECODE: Callable[[str], Any] = json.JSONDecoder().decode

#: ``json.dumps(value)`` (its default options), as the module was when this package was imported: the run's own
#: files are written by it, whatever a system run on a thread of the run's process put in ``json.dumps`` (see
#: :func:`parse_json`).
dump_json: Callable[[Any], str] = json.JSONEncoder().encode


def parse_json(text: str) -> Any:
    """``json.loads(text)``, as the module was when this package was imported.

    A system run on a thread of the run's process shares its ``json`` module: one that replaced ``json.loads`` (a
    library's shim) had each state the run stored read back as what its replacement returned, and the run folder's
    files read wrong. Its own reads are its own. A text that starts with a byte-order mark is refused in
    ``json.loads``'s words (the decoder alone says ``Expecting value``, which hid an editor's mark).

    Examples
    --------
    >>> parse_json('{"a": [1, NaN]}')
    {'a': [1, nan]}
    >>> parse_json('\\ufeff{}')
    Traceback (most recent call last):
    json.decoder.JSONDecodeError: Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)
    """
    if text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _DECODE(text)


def digest(obj: Any) -> str:
    """SHA-256 hex digest of the UTF-8 bytes of :func:`canonical_json` of ``obj``.

    Examples
    --------
    >>> digest({"a": 1}) == digest({"a": 1})
    True
    >>> len(digest({}))
    64
    """
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()


def utc_now() -> datetime:
    """The current time, timezone-aware, in UTC."""
    return datetime.now(timezone.utc)


def iso(ts: datetime) -> str:
    """The one timestamp format of every record and receipt: ISO-8601 in UTC, microseconds, trailing ``Z``.

    Parameters
    ----------
    ts : datetime
        Timezone-aware (a naive datetime is taken as local time by ``astimezone``).

    Examples
    --------
    >>> iso(datetime(2026, 7, 25, 14, tzinfo=timezone.utc))
    '2026-07-25T14:00:00.000000Z'
    """
    t = ts if ts.tzinfo is timezone.utc else ts.astimezone(timezone.utc)
    # what strftime("%Y-%m-%dT%H:%M:%S.%fZ") writes, without its per-call locale work (a call per record)
    return (f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}."
            f"{t.microsecond:06d}Z")
