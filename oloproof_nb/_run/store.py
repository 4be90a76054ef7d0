"""The run directory: an append-only JSONL store with a manifest, resumable after a crash.

::

    runs/<run_id>/
      manifest.json    suite name, run_id, system_version, code_fingerprint, started_at, finished_at (absent
                       while running), config digests, and what the frames and the gate need of the suite;
                       ``follows`` when the clock read an earlier time than a run of the folder before it
      cases.jsonl      one record per finished case
      replays.jsonl    one record per replay
      .lock            who holds the folder (pid, host, since): an OS lock, released when that process ends
      internal-error.txt   only after a bug in oloproof stopped the run: its traceback
      states.jsonl     each distinct state once (initial and final states of cases and replays), by address
      started.jsonl    only while a run is unfinished: each case run's (case id, epoch) as it starts on a system in
                       this process (with isolation: process, as it is sent to a worker), and how the process ended when
                       ``oloproof run`` saw it end (:func:`~.in_flight.note_end`) or that a Ctrl-C stopped it; a
                       resume settles it (see below) and removes it

Records are appended one ``write`` per line to a file opened for appending, so
a process killed at any moment leaves at most one torn last line, which
loading ignores and resuming truncates. A write that fails (disk full, I/O
error) stops the run with :class:`~oloproof_nb.errors.StoreWriteError` naming
the file; nothing is blamed on the system, and ``--resume`` finishes the run
once the problem is fixed.

Durability: every record is in the operating system's hands as soon as it is
written (it survives the process being killed). ``fsync="finish"`` (default)
forces the journals and the manifest to the disk when the run finishes (and the
manifest when it is created); ``fsync="record"`` forces every record as it is
written (it survives a power loss at any moment, at the cost of one disk flush
per record).

States are stored by content (``_run/states.py``): a record keeps the address
of each of its states (``case.initial_state_ref``, ``environment_state.state_ref``)
and ``states.jsonl`` holds each distinct state (and each large subtree) once,
written before the first record that refers to it, so a crash never leaves a
record whose state is lost. Readers (``states.resolve_states`` with a
``states.StateReader``) put the states back; records written before states were
stored by address, with their states inline, read the same.

A case run in flight when the run's process ended abruptly: ``started.jsonl``
names it (one unbuffered ``write`` per case run, so it survives ``os._exit`` and a
kill). When ``oloproof run`` saw the system end the process (an exit, a fatal
signal: :func:`~.in_flight.ended_by_system`), a resume records each such case run ``error``
with all its verdicts ``missing``, as ``isolation: process`` does; otherwise (a
kill from outside, a notebook's ``op.run``, any end of a process whose case runs were
in ``isolation: process`` workers) it runs them again and the manifest
keeps the end (``abrupt_ends``), which the gate's command prints under its table.

Never through another name: a journal that has other names (hard links: a run folder copied with ``cp -al``, or by
a backup tool that hard-links, shares its files with the original) is never appended to or cut in place, which would
change the other folder's run too: the resume of an unfinished run refuses it up front, and an append or a cut
refuses it as it opens the file (:func:`~.disk.open_in_place`). What is replaced (``manifest.json``, a rewrite of
``replays.jsonl``) takes a new file under this folder's name, which the other folder does not share.

One process at a time: creating, running and resuming a run hold an exclusive
``fcntl.flock`` on ``.lock`` (:class:`~.lock.RunLock`); a second process gets
:class:`~oloproof_nb.errors.RunLockedError` naming the holder.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from .._config.files import UnreadableFile, dangling_link, file_above, read_regular
from .._core.canonical import iso, parse_json, utc_now
from .._core.paths import ABSENT
from .._core.records import AbruptEnd, CaseRecord, Manifest, ReplayRecord
from ..errors import (
    RunDirError,
    RunLockedError,
    StoreWriteError,
    parse_problem,
    storable,
    validation_problem,
)
from .disk import hard_links, link_refused, make_folders, open_fd, open_in_place, refuse_shared
from .lines import UNREADABLE_HINT, complete_end, complete_lines, journal_sha256, open_journal
from .lock import LOCK, RunLock
from .states import STATES, read_state_refs, split_case_states, split_replay_states, state_refs_of

__all__ = ["RunStore", "read_jsonl", "read_manifest", "read_cases", "new_run_id", "record_key", "replay_key_of",
           "parse_record", "dumps", "Fsync", "MANIFEST", "CASES", "REPLAYS", "STATES", "INTERNAL_ERROR", "DIGESTED",
           "refuse_changed_journal", "refuse_dangling_run_dir", "STARTED", "InFlight", "truncate_torn_tail",
           "stop_note"]

MANIFEST = "manifest.json"
CASES = "cases.jsonl"
REPLAYS = "replays.jsonl"
INTERNAL_ERROR = "internal-error.txt"
#: The case runs started by the run's process, and how it ended (see the module's docstring).
STARTED = "started.jsonl"
_MANIFEST_TMP = MANIFEST + ".tmp"
#: Entries a folder may hold and still be taken for a new run: a lock, or a creation killed before its rename.
_LEFT_BY_A_KILLED_CREATION = frozenset({LOCK, _MANIFEST_TMP})

#: The journals whose bytes a run keeps a SHA-256 of as it writes them, compared with the files when it finishes
#: (``manifest.json``'s ``journal_changed``): those the frames and the gate are built from. ``states.jsonl`` is
#: not one: each state is checked against its address when it is read. One that is a symbolic link when the run
#: finishes counts as changed too, whatever it holds (see :meth:`RunStore.finish`).
DIGESTED = (CASES, REPLAYS)

#: When the journals are forced to the disk: when the run finishes, or after every record.
Fsync = Literal["finish", "record"]


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
    return _RECORD.encode(record)


#: The encoders of the run's files, made when this module is imported: a system run on a thread of the run's process
#: that replaced ``json.dumps`` (a library's shim) had each later record written by its replacement (``cases.jsonl``
#: and ``manifest.json`` held its text, and the run could neither be read nor resumed).
_RECORD = json.JSONEncoder(ensure_ascii=False, default=_default, separators=(",", ":"))
_MANIFEST_TEXT = json.JSONEncoder(indent=2, ensure_ascii=False)
_MANIFEST_ASCII = json.JSONEncoder(indent=2)


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Records of a store file; a torn last line (no newline at the end) is ignored.

    The file is read as bytes, one line at a time, so a write cut anywhere (even
    inside a multi-byte UTF-8 character) is ignored like any other torn line.
    Lines are parsed :data:`_BATCH` at a time as one JSON array (faster, and
    keys repeated across records then share one string object); a batch that
    does not give exactly one object per line is parsed again line by line, so
    an error names its line.
    """
    handle = open_journal(path)
    if handle is None:
        return
    with handle:
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
        records = parse_json("[" + b",".join(batch).decode("utf-8") + "]")
    except (UnicodeDecodeError, ValueError, RecursionError):
        records = None
    if records is None or len(records) != len(batch) or not all(isinstance(r, dict) for r in records):
        return (parse_record(path, lineno, raw) for lineno, raw in enumerate(batch, start=first))
    return records  # type: ignore[no-any-return]


def parse_record(path: Path, lineno: int, raw: bytes) -> dict[str, Any]:
    """One stored JSONL line as a record; a line that is not a JSON object is a damaged run directory."""
    try:
        record = parse_json(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        why = f"not UTF-8: {exc.reason}" if isinstance(exc, UnicodeDecodeError) else parse_problem(exc)
        raise RunDirError(f"{path}: line {lineno}: a stored record is not valid JSON ({why}); "
                          "the run directory is damaged") from None
    if not isinstance(record, dict):
        raise RunDirError(f"{path}: line {lineno}: a stored record is not a JSON object; the run directory is damaged")
    return record


#: The largest ``manifest.json`` read (it holds the suite's configuration and its validity labels).
_MANIFEST_MAX_BYTES = 1 << 30


def read_manifest(directory: Path) -> Manifest:
    """The validated ``manifest.json`` of a run directory, read strictly (:class:`Manifest`): a value of another
    type is a :class:`RunDirError` naming the file and the key."""
    path = directory / MANIFEST
    try:
        data = parse_json(read_regular(path, _MANIFEST_MAX_BYTES).decode("utf-8"))
    except UnreadableFile as exc:
        if exc.missing:
            raise RunDirError(f"{directory}: not a run directory (no {MANIFEST})") from None
        raise RunDirError(f"{path}: {exc}; {UNREADABLE_HINT}" if exc.denied else f"{path}: {exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RunDirError(f"{path}: not valid JSON ({exc})") from None
    except RecursionError:
        raise RunDirError(f"{path}: not valid JSON (nested too deeply)") from None
    except ValueError as exc:  # a number of more than 4,300 digits
        raise RunDirError(f"{path}: not valid JSON ({str(exc).split(';')[0]})") from None
    if not isinstance(data, dict) or "run_id" not in data:
        raise RunDirError(f"{path}: not a run manifest (no run_id)")
    try:  # strict: a "5" for n_cases, a 2.0 for epochs or a true for a count is damage, not a value
        return Manifest.model_validate(data, strict=True)
    except ValidationError as exc:
        key, message, _ = validation_problem(exc)
        raise RunDirError(f"{path}: {key}: {message}") from None


def record_key(record: CaseRecord) -> tuple[str, int]:
    """What identifies a case record in a run: ``(case id, epoch)`` (epoch 1 when the record has none)."""
    case = record["case"]
    return case["id"], int(case.get("epoch", 1))


def replay_key_of(record: ReplayRecord | dict[str, Any]) -> tuple[str, int]:
    """The ``(case id, epoch)`` of the case a replay record belongs to (epoch 1 when it has none)."""
    return str(record.get("case_id")), int(record.get("epoch", 1) or 1)


def read_cases(directory: Path) -> Iterator[CaseRecord]:
    """The case records of ``cases.jsonl`` (a torn last line ignored)."""
    return read_jsonl(directory / CASES)  # type: ignore[return-value]


def truncate_torn_tail(path: Path) -> None:
    """Cut a last line that has no newline (a write the process did not finish); :func:`complete_end` finds it.

    The cut is made in place: a file with other names (a folder copied with ``cp -al``) is refused with
    :class:`~oloproof_nb.errors.RunDirError` (:func:`~.disk.refuse_shared`) before it is cut.
    """
    if not path.exists():
        return
    size = path.stat().st_size
    end = complete_end(path, size)
    if end != size:
        refuse_shared(path)
        os.truncate(path, end)


def _drop_orphan_replays(directory: Path, durable: bool = False, stored: set[str] | None = None) -> None:
    """Remove replay records of cases that have no case record.

    A case's replays are appended while it runs, before its own record; a case
    a crash cut short runs again on resume and appends its replays again, so
    the earlier ones go (rewritten atomically: a temporary file, then a rename).
    ``durable`` (``fsync="record"``): the new file and the rename are forced to the disk, as every append is.
    A failed rewrite (a full disk, Ctrl-C) leaves the journal as it was and no temporary file.

    ``stored`` (the addresses in ``states.jsonl``): first remove the case records that name a state it does not
    hold, or whose replays do, so those cases run again too. A record's states are appended before it, so a
    kill never leaves one; but the journals are three files, and with ``fsync="finish"`` a power loss during
    the run may keep more of ``cases.jsonl`` than of ``states.jsonl`` (the operating system writes files back
    in no set order). Taken as done, such a record would leave the resume nothing to run, and the run, stamped
    finished, would never load.
    """
    if stored is None and not (directory / REPLAYS).exists():
        return
    recorded: set[tuple[str, int]] = set()
    if stored is None:
        recorded.update(record_key(rec) for rec in read_cases(directory))
    else:
        lost = {replay_key_of(rec) for rec in read_jsonl(directory / REPLAYS)
                if not stored.issuperset(state_refs_of(rec))}

        def state_lost(rec: Any) -> bool:
            key = record_key(rec)
            if key in lost or not stored.issuperset(state_refs_of(rec)):
                return True
            recorded.add(key)
            return False

        _drop_lines(directory, CASES, state_lost, durable)
    _drop_lines(directory, REPLAYS, lambda rec: replay_key_of(rec) not in recorded, durable)


def _drop_lines(directory: Path, name: str, drop: Callable[[Any], bool], durable: bool) -> None:
    """Rewrite journal ``name`` without the records ``drop`` picks (read once; copied only when one is dropped)."""
    path = directory / name
    if not path.exists():
        return
    dropped = {lineno for lineno, _, raw in complete_lines(path) if drop(parse_record(path, lineno, raw))}
    if not dropped:
        return
    tmp = directory / (name + ".tmp")
    try:
        tmp.unlink(missing_ok=True)  # a link left there is replaced, never written through
        fd = open_fd(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with path.open("rb") as source, os.fdopen(fd, "wb") as target:
            for lineno, raw in enumerate(source, start=1):
                if lineno not in dropped:
                    target.write(raw)
            if durable:
                target.flush()
                os.fsync(target.fileno())
        os.replace(tmp, path)
        if durable:
            _fsync_dir(directory)
    except BaseException:  # a damaged line (RunDirError), ENOSPC, Ctrl-C: the journal as it was, no temporary file
        tmp.unlink(missing_ok=True)
        raise


def _fsync_dir(directory: Path) -> None:
    """Force a directory entry (a created or renamed file) to the disk, where the platform allows it."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems cannot sync a directory
    finally:
        os.close(fd)


def _write_error(path: Path, exc: OSError, started: bool = True) -> StoreWriteError:
    """The error of a write the run folder refused; ``started`` False: while the run was being created (then
    there is nothing to resume: the run is started again)."""
    why = exc.strerror or type(exc).__name__
    then = "resume the run" if started else "run again (the run had not started; the folder is reused)"
    if exc.errno == errno.EBADF:  # no disk refuses a write so: a descriptor of the run's was closed under it
        return StoreWriteError(f"{path}: cannot write ({why}); the run stopped: something in this process closed a "
                               "descriptor the run holds on its folder's files (a system that closes descriptors it "
                               "did not open: os.closerange, a library detaching from the terminal). Give such a "
                               "system isolation: process (a worker's descriptors are its own), then resume the run")
    if exc.errno in (errno.ENOENT, errno.ESTALE):  # no space to free: the folder went away under the run
        # a folder moved whole still holds the run: a resume of it where it is now finishes it (start it again
        # said only what a deleted one needs)
        moved = ("if it was moved, resume the run where it is now (resume=True, or --resume, with the new path as "
                 "out); if it was deleted, " if started else "")
        return StoreWriteError(f"{path}: cannot write ({why}); the run stopped and nothing was blamed on the system. "
                               "The run folder, or a folder on its path, was deleted or moved while the run went on "
                               f"(by the system itself?): {moved}start the run again, into a folder nothing else "
                               "removes")
    fix = _LIMITS.get(exc.errno or 0, "Free space (or fix the disk)")
    return StoreWriteError(f"{path}: cannot write ({why}); the run stopped and nothing was blamed on the system. "
                           f"{fix}, then {then}")


#: What to do when a write failed on a limit of the process rather than the disk: free space would not help.
_LIMITS = {errno.EFBIG: "Raise the limit on file size (ulimit -f)",
           errno.EMFILE: "Raise the limit on open files (ulimit -n)",
           errno.ENFILE: "Close files other programs hold open (the system's table of open files is full)"}


class RunStore:
    """Writer of one run directory (thread-safe appends), holding the directory's lock until :meth:`close`."""

    def __init__(self, directory: Path, manifest: Manifest, lock: RunLock | None = None,
                 fsync: Fsync = "finish") -> None:
        self.directory = directory
        self.manifest = manifest
        self.fsync = fsync
        self._lock = threading.Lock()
        self._run_lock = lock
        self._fds: dict[str, int] = {}
        self._failed = False
        #: Closed (:meth:`close`, :meth:`finish`): nothing more is written, not even by a case still running on a
        #: worker thread of a run that stopped (see :meth:`_write`)
        self._closed = False
        self._state_refs: set[str] = set()  # addresses already in states.jsonl
        #: SHA-256 of what this run wrote to each journal of DIGESTED (seeded with what a resumed run holds)
        self._written = {name: hashlib.sha256() for name in DIGESTED}
        #: ``started.jsonl``, once this process started a case run (None before)
        self._started_fd: int | None = None
        #: A write found a descriptor of the run's closed under it (EBADF): the case runs in flight stay noted
        self._closed_under = False

    @classmethod
    def create(cls, directory: Path, manifest: Manifest, fsync: Fsync = "finish") -> RunStore:
        """Start a new run directory; an existing non-empty directory is an error, never overwritten.

        A folder left by a creation killed before its manifest was renamed into
        place (it holds only ``.lock`` and ``manifest.json.tmp``) counts as empty.
        """
        if directory.exists() and not directory.is_dir():  # --resume could not help: it is no run directory
            raise RunDirError(f"{directory}: is a file, not a folder; choose another out= (the run directory to "
                              "create)")
        if directory.exists() and not _reusable(directory):
            holder = RunLock.holder(directory)
            if holder is not None:
                raise RunLockedError(f"{directory}: in use by another oloproof process ({holder}); choose another "
                                     "out=")
            raise RunDirError(f"{directory}: already exists and is not empty; choose another out=, "
                              "or pass resume=True to finish that run")
        dangling = _dangling_link(directory)
        if dangling is not None:  # mkdir said "File exists" of a path where nothing exists
            link, why = dangling
            raise RunDirError(f"{link}: {why}, not a folder; remove the link or create what it points to, or choose "
                              "another out=")
        try:
            make_folders(directory)
        except OSError as exc:
            blocker = file_above(directory) if exc.errno == errno.ENOTDIR else None
            if blocker is not None:  # --out notes.txt/r1: say which part is a file (or a link that leads to none)
                raise RunDirError(f"{directory}: cannot create the run directory: {blocker}; choose another out="
                                  ) from None
            # the OS's own "Permission denied" (a read-only checkout); a umask's refusal already says what to set
            denied = exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) and exc.strerror == os.strerror(exc.errno)
            hint = "; choose another out= in a folder you can write (outside a read-only checkout)" if denied else ""
            raise RunDirError(f"{directory}: cannot create the run directory ({exc.strerror}){hint}") from None
        lock = RunLock.acquire(directory)
        try:
            if not _reusable(directory):  # another process created a run here before we got the lock
                raise RunDirError(f"{directory}: already exists and is not empty; choose another out=, "
                                  "or pass resume=True to finish that run")
            lock.note_holder()
            store = cls(directory, manifest, lock, fsync)
            store.write_manifest(durable=True, creating=True)
        except BaseException:
            lock.release()
            raise
        return store

    @classmethod
    def resume(cls, directory: Path, check: Callable[[Manifest], None] | None = None,
               fsync: Fsync = "finish") -> RunStore:
        """Reopen an interrupted run directory for appending (torn last lines are cut first).

        The lock is taken first; ``check(manifest)`` may refuse the run before
        anything in the folder is touched. A manifest left as ``manifest.json.tmp``
        by a kill before its rename is promoted when it is complete.
        """
        if not directory.exists() and not directory.is_symlink():  # a CI job retried on a fresh workspace
            above = file_above(directory)  # no folder can be there: starting it without resume fails too
            if above is not None:
                raise RunDirError(f"{directory}: no run to resume: {above}; choose another out=")
            raise RunDirError(f"{directory}: no run to resume (no such folder); start the run without resume=True")
        refuse_dangling_run_dir(directory)  # it said "not a run directory (no manifest.json)", where a load names it
        # lexists: a manifest.json that is a dangling link is named by read_manifest (it was "no manifest.json")
        if not directory.is_dir() or not (os.path.lexists(directory / MANIFEST)
                                          or (directory / _MANIFEST_TMP).is_file()):
            if directory.is_dir() and _reusable(directory):  # empty, or left by a kill before its manifest
                raise RunDirError(f"{directory}: no run to resume (the folder holds no {MANIFEST}: no run started "
                                  "there, or it was stopped before its manifest was written); start the run "
                                  "without resume=True, which reuses this folder")
            if directory.exists() and not directory.is_dir():  # "no manifest.json" sent the user looking in a file
                # (or a named pipe, a device) for a file; a new run at one says "is a file, not a folder" too
                raise RunDirError(f"{directory}: is a file, not a run directory; choose another out= (the run "
                                  "directory to resume)")
            raise RunDirError(f"{directory}: not a run directory (no {MANIFEST})")  # refused before it is touched
        lock = RunLock.acquire(directory)
        try:
            manifest = _read_or_recover_manifest(directory)
            refuse_changed_journal(directory, manifest)
            if check is not None:
                check(manifest)
            for name in (CASES, REPLAYS, STATES):  # a pipe or a device there is never opened (it would block)
                # a link first, dangling too: appended to, cut or replaced, never through a link (a dangling one,
                # opened first, was told "point it at the file", which this refused next)
                if (directory / name).is_symlink():
                    raise RunDirError(link_refused(directory / name))
                handle = open_journal(directory / name)
                if handle is not None:
                    handle.close()
                # nor one another folder shares (cp -al): appended to, it changes that run too. A finished run is
                # resumed to find nothing to do, and writes nothing; an append or a cut it would make is refused
                # then (open_in_place, truncate_torn_tail)
                if manifest.finished_at is None:
                    refuse_shared(directory / name)
            lock.note_holder()  # after the refusals: the lock file may be shared too, and a refusal changes nothing
            try:
                for name in (CASES, REPLAYS, STATES):
                    truncate_torn_tail(directory / name)
                stored = read_state_refs(directory)
                # a finished run forced its journals to the disk before it was stamped: a state lost is damage
                _drop_orphan_replays(directory, durable=fsync == "record",
                                     stored=stored if manifest.finished_at is None else None)
            except OSError as exc:
                raise _write_error(Path(exc.filename or directory), exc) from None
            store = cls(directory, manifest, lock, fsync)
            store._state_refs = stored
            for name in DIGESTED:  # what the run wrote before: as it is now (torn lines cut, orphans dropped)
                journal_sha256(directory / name, store._written[name])
            return store
        except BaseException:
            lock.release()
            raise

    def write_manifest(self, durable: bool = False, creating: bool = False) -> None:
        """Write manifest.json atomically (temp file, then rename); ``durable``: fsync the file and the folder;
        ``creating``: the run's first manifest (an error then says to run again, not to resume)."""
        tmp = self.directory / _MANIFEST_TMP
        data = self.manifest.to_json()
        text = _MANIFEST_TEXT.encode(data) + "\n"
        if storable(text) != text:  # a path of bytes that are not UTF-8 (the suite folder's): kept by its escape
            text = _MANIFEST_ASCII.encode(data) + "\n"
        try:
            tmp.unlink(missing_ok=True)  # a link left there is replaced, never written through
            fd = open_fd(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as to any new file
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                if durable:
                    os.fsync(handle.fileno())
            os.replace(tmp, self.directory / MANIFEST)
        except OSError as exc:
            self._failed = True
            try:  # a full disk cut it short: no half manifest is left beside the run (one stayed in runs/ for good)
                tmp.unlink(missing_ok=True)
            except OSError:
                pass
            raise _write_error(self.directory / MANIFEST, exc, started=not creating) from None
        if durable:
            _fsync_dir(self.directory)

    def _append(self, name: str, record: CaseRecord | ReplayRecord) -> None:
        with self._lock:
            self._write(name, (dumps(record) + "\n").encode("utf-8"))

    def _write(self, name: str, data: bytes) -> None:
        """Append ``data`` to ``name`` (the caller holds the lock): one write, fsynced per record when asked."""
        if self._failed:
            raise StoreWriteError(f"{self.directory}: an earlier write failed; the run stopped")
        if self._closed:  # a case a stopped run left running on a worker thread: its replays go nowhere
            # (appended, they would land in the run resumed meanwhile, whose digests never saw them: the honest
            # run would be refused as written into by something else)
            raise RunDirError(f"{self.directory}: the run stopped; a case still running then records nothing "
                              "(a resume runs it again)")
        try:
            fd = self._fds.get(name)
            if fd is None:  # never a file another folder shares (see resume)
                fd = open_in_place(self.directory / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
                self._fds[name] = fd
                if self.fsync == "record":
                    _fsync_dir(self.directory)  # the new file's entry survives a power loss too
            view = memoryview(data)
            while view:  # a short write (e.g. the disk filled up) continues, or fails with OSError
                written = os.write(fd, view)
                view = view[written:]
            if name in self._written:
                self._written[name].update(data)
            if self.fsync == "record":
                os.fsync(fd)
        except OSError as exc:
            self._failed = True  # nothing more is appended after a torn line; resume cuts it
            self._closed_under = exc.errno == errno.EBADF
            raise _write_error(self.directory / name, exc) from None

    def append_case(self, record: CaseRecord) -> tuple[str | None, str | None]:
        """Append a case record; its states go to ``states.jsonl`` first (each distinct state once).

        Returns the addresses in ``states.jsonl`` of its final state and of its case's ``initial_state``
        (None: the case recorded no such state).
        """
        stored, states = split_case_states(record)
        self._append_states(states)
        self._append(CASES, stored)
        env = stored.get("environment_state")
        return (None if env is None else env.get("state_ref"), (stored.get("case") or {}).get("initial_state_ref"))

    def append_replay(self, record: ReplayRecord) -> None:
        """Append a replay record; its state goes to ``states.jsonl`` first (each distinct state once)."""
        stored, states = split_replay_states(record)
        self._append_states(states)
        self._append(REPLAYS, stored)

    def _append_states(self, nodes: dict[str, str]) -> None:
        """Append the state nodes (``ref -> line``) not yet stored, written before the record that refers to them."""
        with self._lock:
            new = {ref: line for ref, line in nodes.items() if ref not in self._state_refs}
            if new:
                self._write(STATES, "".join(new.values()).encode("utf-8"))
                self._state_refs.update(new)

    def note_case(self, case_id: str, epoch: int, finished: bool = False, *, in_worker: bool = False) -> None:
        """Append ``(case_id, epoch)`` to ``started.jsonl`` as the case run starts on a system in this process
        (``finished``: as it finished, its record not yet appended; ``in_worker``: as it is sent to a worker of
        ``isolation: process``, whose system cannot end this process): one unbuffered ``write`` (no ``fsync``),
        which a process ended by ``os._exit``, a signal or a kill keeps. The note names this process (``pid``): the end
        ``oloproof run`` sees of a later process is never taken for the end of these case runs
        (:func:`~.in_flight.note_end`)."""
        note = {"case": case_id, "epoch": epoch, "at": time.time(), "pid": os.getpid(),
                **({"finished": True} if finished else {}), **({"worker": True} if in_worker else {})}
        line = (dumps(note) + "\n").encode("utf-8")
        with self._lock:
            if self._closed or self._failed:  # a case still running on a worker thread of a stopped run
                return
            try:
                if self._started_fd is None:
                    self._started_fd = open_fd(self.directory / STARTED, os.O_WRONLY | os.O_APPEND | os.O_CREAT
                                               | getattr(os, "O_NOFOLLOW", 0))
                os.write(self._started_fd, line)
            except OSError as exc:
                self._failed = True
                self._closed_under = exc.errno == errno.EBADF
                raise _write_error(self.directory / STARTED, exc) from None

    def settle_in_flight(self, *reruns: InFlight | None) -> None:
        """Forget ``started.jsonl`` once a resume has recorded its case runs ``error`` or is to run them again;
        ``reruns``: the ends whose case runs run again, in their order, kept in the manifest's ``abrupt_ends`` first
        (a kill in between counts them twice, never not at all)."""
        ends = [AbruptEnd(how=rerun.how, rerun=list(rerun.started)) for rerun in reruns
                if rerun is not None and rerun.started]
        if ends:
            self.manifest = self.manifest.model_copy(update={"abrupt_ends": [*(self.manifest.abrupt_ends or []),
                                                                             *ends]})
            self.write_manifest(durable=self.fsync == "record")
        self._forget_started()

    def _forget_started(self) -> None:
        """Close and remove ``started.jsonl``: the run stopped cleanly or finished, so nothing is in flight."""
        self._close_started()
        try:
            (self.directory / STARTED).unlink(missing_ok=True)
        except OSError:
            pass

    def _close_started(self) -> None:
        """Close this process's handle of ``started.jsonl``, if it has one."""
        if self._started_fd is not None:
            try:
                os.close(self._started_fd)
            except OSError:
                pass
            self._started_fd = None

    def save_internal_error(self, text: str) -> Path:
        """Append a traceback of oloproof's own to ``internal-error.txt``; the path, even when it cannot be written."""
        path = self.directory / INTERNAL_ERROR
        try:
            if path.is_symlink():  # a folder copied with its links: replaced, never written through
                path.unlink()
            elif hard_links(path) > 1:  # shared with a folder copied with cp -al: this folder's own copy from here
                tmp = path.with_name(INTERNAL_ERROR + ".tmp")
                try:
                    tmp.unlink(missing_ok=True)
                    shutil.copyfile(path, tmp)
                    os.replace(tmp, path)
                finally:  # a full disk: no temporary file left beside the run
                    tmp.unlink(missing_ok=True)
            fd = open_fd(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "a", encoding="utf-8") as handle:
                handle.write(f"--- {iso(utc_now())}\n{storable(text)}\n")  # a name that is not UTF-8 too
        except OSError:
            pass
        return path

    def finish(self, finished_at: datetime) -> list[Path]:
        """Force the journals to the disk, record the end of the run in the manifest, release the folder.

        Returns the journals of :data:`DIGESTED` whose bytes are not those the run wrote (something else wrote
        into the run folder during the run: a system that found it), or that are a symbolic link: the run never
        makes one, and one put there (before the first record, or after renaming the journal out of the folder)
        holds the bytes the run wrote, but in a file outside the folder that whoever put it there can rewrite
        once the run is done, and that a copy of the folder (``cp -r``) still points to. The run is stamped
        finished all the same, with their names in the manifest's ``journal_changed``, so it is never loaded
        (:func:`refuse_changed_journal`), nor resumed.
        """
        try:
            with self._lock:
                try:
                    for name, fd in self._fds.items():
                        try:
                            os.fsync(fd)
                        except OSError as exc:
                            self._failed = True
                            raise _write_error(self.directory / name, exc) from None
                finally:
                    self._close_files()
                    self._forget_started()
            ours = {name: digest.hexdigest() for name, digest in self._written.items()}
            changed = []
            for name in DIGESTED:
                path = self.directory / name
                try:
                    if path.is_symlink() or journal_sha256(path).hexdigest() != ours[name]:
                        changed.append(path)
                except (OSError, RunDirError):  # a pipe or a folder put in its place
                    changed.append(path)
            self.manifest = self.manifest.model_copy(update={"finished_at": iso(finished_at),
                                                             "journal_changed": [p.name for p in changed] or None})
            self.write_manifest(durable=True)
        finally:
            self.release()
        return changed

    def _close_files(self) -> None:
        self._closed = True
        for fd in self._fds.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds.clear()

    def close(self, stopped: bool = False, signal_name: str | None = None) -> None:
        """Close the journals and release the folder (an unfinished run stays resumable). A stop this process
        saw after an error is no abrupt end: the case runs it started and did not record run again on a resume with
        no note (``started.jsonl`` is kept only when this process started none: a resume stopped before it settled
        an earlier end), or when a write found a descriptor of the run's closed under it (EBADF: the system closed
        it, so its case run in flight is no clean stop's). ``stopped``: a Ctrl-C (``KeyboardInterrupt``);
        ``started.jsonl`` is kept with a stop after the case runs in flight, which a resume keeps in ``abrupt_ends``
        as a stop (``runner.STOPPED``), or as the end ``oloproof run`` notes after it (:func:`~.in_flight.note_end`:
        the signal reached this process alone, not the command). ``signal_name``: the signal the stop came by when
        it is known (``SIGTERM``, ``SIGHUP``: the ``KeyboardInterrupt`` names it, :func:`~.in_flight.stop_signal`),
        kept in the stop's line so that the resume's ``abrupt_ends`` names it."""
        with self._lock:
            self._close_files()
            if self._started_fd is not None:
                if stopped:
                    self._note_stop(signal_name)
                elif self._closed_under:  # the system's doing, not a clean stop: its case run stays in flight
                    self._close_started()
                else:
                    self._forget_started()
        self.release()

    def _note_stop(self, signal_name: str | None = None) -> None:
        """Append a stop to ``started.jsonl`` (with ``signal_name`` when known) and close it (as
        :meth:`_forget_started` when it cannot be written)."""
        assert self._started_fd is not None
        try:
            os.write(self._started_fd, (dumps(stop_note(signal_name)) + "\n").encode("utf-8"))
        except OSError:
            self._forget_started()
            return
        self._close_started()

    def release(self) -> None:
        if self._run_lock is not None:
            self._run_lock.release()
            self._run_lock = None


def refuse_changed_journal(directory: Path, manifest: Manifest) -> None:
    """Raise :class:`~oloproof_nb.errors.RunDirError` for a run whose journal changed while it ran (``journal_changed``
    in its manifest, set by :meth:`RunStore.finish`): its records are not those the run wrote, so it is never
    loaded, gated or resumed."""
    if manifest.journal_changed:
        raise RunDirError(
            f"{directory / manifest.journal_changed[0]}: changed while run {manifest.run_id} was running by something "
            "other than oloproof (it no longer holds the records the run wrote, or is a symbolic link to another "
            "file): something wrote into the run folder, such as the system under test; its verdicts are not used; "
            "run the suite again where the system cannot write the run folder")


def stop_note(signal_name: str | None = None) -> dict[str, Any]:
    """The line ``started.jsonl`` gets for a stop, ``{"stopped": true, "signal": "SIGTERM", "at": …}`` (``signal``
    when the stop is known to have come by one: :func:`~.in_flight.stop_signal`): as the run's process notes its
    stop (:meth:`RunStore.close`), and as ``oloproof run`` notes the stop of a run's process it killed
    (:func:`~.in_flight.note_stop`)."""
    return {"stopped": True, **({"signal": signal_name} if signal_name else {}), "at": time.time()}


@dataclass(frozen=True)
class InFlight:
    """What ``started.jsonl`` says of the process that ran the run last (:func:`~.in_flight.read_in_flight`)."""

    #: ``(case id, epoch)`` of each case run it started and did not finish (nor record), in the order they
    #: started, with when it started (seconds since the epoch).
    started: dict[tuple[str, int], float] = field(default_factory=dict)
    #: How the process ended as ``oloproof run`` saw it (:func:`~.in_flight.how_it_ended`); None when nothing saw it
    #: end.
    how: str | None = None
    #: ``oloproof run`` saw the system end it (:func:`~.in_flight.ended_by_system`).
    by_system: bool = False
    #: When it was seen to end (seconds since the epoch); None when nothing saw it end.
    ended_at: float | None = None
    #: Case runs that finished on a worker thread but whose records were not appended yet (``workers`` > 1).
    lost: list[tuple[str, int]] = field(default_factory=list)
    #: The process stopped on a Ctrl-C (``RunStore.close``); a clean stop when no end is noted after it.
    stopped: bool = False
    #: The signal that stop came by, when the process knew it (``SIGTERM``, ``SIGHUP``); None for a Ctrl-C's
    #: ``KeyboardInterrupt``, which does not say, and in folders written before this version.
    stop_signal: str | None = None
    #: The process that started the last of them (its ``pid``); None when its note names none (written before notes
    #: named their process).
    pid: int | None = None
    #: The process that noted each of :attr:`started` last, where its note names one.
    noted_by: dict[tuple[str, int], int] = field(default_factory=dict)
    #: Case runs in flight that another process than the one whose end is noted left so (a run killed where nothing
    #: saw it, then a resume that ended before it ran them again): that end is not theirs, so they run again (the
    #: system's exit in a serial resume made a case the killed run of ``workers=2`` left in flight an ``error``).
    earlier: list[tuple[str, int]] = field(default_factory=list)


def _reusable(directory: Path) -> bool:
    """True when ``directory`` holds nothing but what a killed creation leaves (:data:`_LEFT_BY_A_KILLED_CREATION`):
    a new run may be created there, taking the lock again and writing its manifest over the temporary one."""
    try:
        names = {entry.name for entry in directory.iterdir()}
    except OSError as exc:
        raise RunDirError(f"{directory}: cannot list the run directory ({exc.strerror})") from None
    return names <= _LEFT_BY_A_KILLED_CREATION


def refuse_dangling_run_dir(directory: Path) -> None:
    """Raise :class:`~oloproof_nb.errors.RunDirError` naming ``directory`` and where it points when it is a symbolic
    link to nothing (:func:`~oloproof_nb._config.files.dangling_link`): a run folder moved, given to a load or a
    resume, where "no such run directory" or "no manifest.json" sent the user looking for a folder that is there,
    as a link."""
    link = dangling_link(directory)
    if link is not None:
        raise RunDirError(f"{directory}: {link}; point it at a run directory, or remove it")


def _dangling_link(directory: Path) -> tuple[Path, str] | None:
    """The first of ``directory`` and its parents that is a symbolic link to nothing (a dangling link), with
    :func:`~oloproof_nb._config.files.dangling_link`'s words for it, or None: a run folder cannot be made there,
    and mkdir's error says only ``File exists``. A loop of links is not one: mkdir's own error names it (``Too many
    levels of symbolic links``)."""
    for path in (directory, *directory.parents):
        why = dangling_link(path)
        if why is not None:
            return path, why
    return None


def _read_or_recover_manifest(directory: Path) -> Manifest:
    """The manifest; a complete ``manifest.json.tmp`` left by a kill before its rename is renamed into place."""
    tmp = directory / _MANIFEST_TMP
    if not os.path.lexists(directory / MANIFEST) and tmp.is_file():  # a dangling link there is named, not replaced
        try:
            Manifest.model_validate(parse_json(tmp.read_text(encoding="utf-8")), strict=True)
        except (OSError, ValueError, ValidationError, RecursionError):
            raise RunDirError(f"{directory}: the run was stopped while it was being created, before any case ran; "
                              "run again without resume=True to reuse this folder") from None
        os.replace(tmp, directory / MANIFEST)
    return read_manifest(directory)
