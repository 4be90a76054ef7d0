"""The replay cache: one JSON file per replay, keyed by everything that decides what the replay does.

::

    <suite folder>/.oloproof/replays/<key>.json

A cached replay holds what the replay produced (its trajectory and the state it
left), so a second run of an unchanged suite and system makes no new replays.
The key (:func:`replay_key`) covers the system's ``version`` **and the
fingerprint of its code** (and of the settings the instance that made it was built with), the case, the checkpoint,
the change, **the recorded steps up to the checkpoint**, the run's ``case_timeout_s`` and **oloproof_nb's own
version** — so neither an edited system that kept
its ``version``, nor a recording that took another path before the checkpoint
(an LLM answered differently), nor another release of oloproof_nb (which may inject faults, reset or snapshot
otherwise) can reuse another replay. A system without a
``version``, or whose code cannot be fingerprinted, is never cached.

Every entry carries the SHA-256 of its own content and is used only when that
digest verifies: a corrupt, partial or edited file is a miss (recomputed and
rewritten), never trusted. The digest is a checksum, not a signature: it
catches corruption and edits that leave it stale, not an edit that writes the
SHA-256 of the new content too — the cache is as trustworthy as whoever can
write to the suite folder (who can edit the system's code as well). Only a regular file is read, without ever blocking:
a named pipe, a device or a directory put in the folder is a miss too (the
write that follows replaces a pipe or a device with the entry). Writes are atomic (a temporary file in the same
folder, then ``os.replace``); a failed write is ignored (the cache is optional).
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

from .. import _version
from .._config.files import UnreadableFile, read_regular
from .._core.canonical import digest, parse_json
from .disk import make_folders, open_fd

__all__ = ["ReplayCache", "replay_key", "recording_digest", "REPLAY_CACHE_DIR", "CACHE_SCHEMA"]

#: Where the cache lives, relative to the suite folder.
REPLAY_CACHE_DIR = Path(".oloproof") / "replays"
CACHE_SCHEMA = "oloproof_replay_cache/v2"
#: The largest entry read back (a bigger file is a miss): a replay's trajectory and final state.
_ENTRY_MAX_BYTES = 1 << 30

#: The encoder of an entry's text, made when this module is imported: a system run on a thread of the run's process
#: that replaced ``json.dumps`` (one returning bytes, as ``orjson.dumps`` does) stopped the run with an internal error
#: as its next replay was stored, or had its replacement's text stored as the entry (:func:`~.store.dumps`).
_ENTRY_TEXT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def recording_digest(steps: list[dict[str, Any]], checkpoint: int) -> str:
    """SHA-256 of the recorded steps before ``checkpoint`` and of the call at it (without its result).

    Parameters
    ----------
    steps : list of dict
        The recorded trajectory's steps, as JSON (``Step.model_dump(mode="json")``).
    checkpoint : int
        Index of the call whose result a replay replaces.

    Returns
    -------
    str
        64 hex characters.

    Notes
    -----
    digest = sha256(canonical_json({"before": steps[:checkpoint], "call": steps[checkpoint] without "result"})).
    What happens after the checkpoint is the replay's to produce; what happened
    before it (and which call is replaced, with which arguments) decides it.

    Examples
    --------
    >>> a = [{"tool": "look", "args": {}, "result": 1}, {"tool": "pay", "args": {"k": 1}, "result": {"ok": True}}]
    >>> b = [{"tool": "look", "args": {}, "result": 2}, {"tool": "pay", "args": {"k": 1}, "result": {"ok": True}}]
    >>> recording_digest(a, 1) == recording_digest(b, 1)
    False
    >>> c = [a[0], {"tool": "pay", "args": {"k": 1}, "result": {"ok": False}}]
    >>> recording_digest(a, 1) == recording_digest(c, 1)
    True
    """
    call = {k: v for k, v in steps[checkpoint].items() if k != "result"} if checkpoint < len(steps) else None
    return digest({"before": steps[:checkpoint], "call": call})


def replay_key(system_version: str, code_fingerprint: str, case_digest: str, checkpoint: int,
               change: dict[str, Any] | None, recording: str, *, timeout_s: float | None = None) -> str:
    """The cache key of one replay: SHA-256 of the canonical JSON of its six parts, the run's ``case_timeout_s``,
    oloproof_nb's version and :data:`CACHE_SCHEMA`.

    Parameters
    ----------
    system_version : str
        The system's ``version``.
    code_fingerprint : str
        The fingerprint of the system's code (``Manifest.code_fingerprint``) and of the settings it was built
        with (``_run.systems.replay_fingerprint``).
    case_digest : str
        The case's digest (it covers the input, ``initial_state`` and ``expected``).
    checkpoint : int
        Index in the recorded steps of the call whose result is replaced.
    change : dict or None
        ``{"result": ...}`` of the :class:`~oloproof_nb.Change`, or None for the control replay.
    recording : str
        :func:`recording_digest` of the recorded steps up to the checkpoint.
    timeout_s : float or None
        The run's ``case_timeout_s`` (None: no limit): a replay that took 3 s under a limit of 60 s, served to a
        run whose limit is 1 s, passed where it runs out of time live.

    Returns
    -------
    str
        64 hex characters.

    Notes
    -----
    key = sha256(canonical_json({"schema", "oloproof_nb", "system_version", "code_fingerprint", "case_digest",
    "checkpoint", "change", "recording", "case_timeout_s"})), where ``oloproof_nb`` is the package's
    ``__version__`` at the call: a new release never reuses the replays an older one made (it may make them
    otherwise), with no :data:`CACHE_SCHEMA` bump to remember.

    Examples
    --------
    >>> a = replay_key("v1", "f" * 64, "d" * 64, 2, None, "r" * 64)
    >>> a == replay_key("v1", "f" * 64, "d" * 64, 2, None, "r" * 64)
    True
    >>> a == replay_key("v1", "e" * 64, "d" * 64, 2, None, "r" * 64)   # the code changed
    False
    >>> a == replay_key("v1", "f" * 64, "d" * 64, 2, None, "s" * 64)   # another recording
    False
    """
    return digest({"schema": CACHE_SCHEMA, "oloproof_nb": _version.__version__,
                   "system_version": system_version, "code_fingerprint": code_fingerprint,
                   "case_digest": case_digest, "checkpoint": checkpoint, "change": change, "recording": recording,
                   "case_timeout_s": timeout_s})


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
    >>> key = replay_key("v1", "f" * 64, "d" * 64, 0, None, "r" * 64)
    >>> cache.get(key) is None
    True
    >>> cache.put(key, {"trajectory": {"steps": []}, "state": {}})
    >>> cache.get(key)["state"]
    {}
    >>> text = cache.path(key).read_text().replace('"state":{}', '"state":{"edited":1}')
    >>> _ = cache.path(key).write_text(text)
    >>> cache.get(key) is None   # its digest no longer verifies: never trusted
    True
    """

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or None when there is none, it is no regular file, it cannot be parsed, or its
        digest does not verify."""
        try:
            data = parse_json(read_regular(self.path(key), _ENTRY_MAX_BYTES).decode("utf-8"))
        except (UnreadableFile, OSError, ValueError, RecursionError):  # absent, no file, unreadable, partial, not JSON
            return None
        if not isinstance(data, dict) or data.get("schema") != CACHE_SCHEMA or data.get("key") != key:
            return None
        entry = data.get("entry")
        if not isinstance(entry, dict) or not isinstance(entry.get("trajectory"), dict):
            return None
        # An edited entry (a NaN written in included) parses, then fails the digest. Parsed JSON always encodes; the
        # except is a guard, so that an entry the encoder cannot take is a miss too, never trusted.
        try:
            verified = digest(entry) == data.get("digest")
        except (TypeError, ValueError, RecursionError):
            return None
        return entry if verified else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store ``entry`` (JSON-ready) under ``key`` with its digest, atomically; a failed write is ignored."""
        text = _ENTRY_TEXT.encode({"schema": CACHE_SCHEMA, "key": key, "digest": digest(entry), "entry": entry})
        tmp: str | None = None
        try:
            make_folders(self.directory)  # under umask 777 no folder of mode 0 is left in the suite
            name = str(self.directory / f".{key[:16]}-{uuid.uuid4().hex[:12]}.tmp")
            # 0o666 less the umask, as any file the user makes (mkstemp's 0o600 hid the cache from a teammate)
            fd = open_fd(Path(name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # never descriptor 1 or 2
            tmp = name  # ours from here: removed if the write fails
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
