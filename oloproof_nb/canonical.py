"""Canonical JSON and SHA-256 digests (pure; no files)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["canonical_json", "digest"]


def canonical_json(obj: Any) -> str:
    """Serialise ``obj`` the one canonical way used for every digest.

    ``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``: key
    order and whitespace never change the text, so they never change a digest.

    Examples
    --------
    >>> canonical_json({"b": 1, "a": [1, "é"]})
    '{"a":[1,"é"],"b":1}'
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


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
