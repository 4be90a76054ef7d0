"""Reading the JSONL journal of a run directory without holding it whole: line indexes, chunks, one case.

The journal (``cases.jsonl``, ``replays.jsonl``, ``states.jsonl``; see ``_run/store.py``) is the record of
truth. The columnar copy is built from it in chunks (:meth:`Journal.chunks`), and the case panel reads
one case's record and replays (:meth:`Journal.record`, :meth:`Journal.replays_of`) through an index of
line offsets built on first use, so neither ever needs every record in memory.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .._core.canonical import parse_json
from .._core.records import CaseRecord, ReplayRecord
from .._run.lines import complete_end, complete_lines, open_journal
from .._run.states import StateReader, resolve_states, state_refs_of
from .._run.store import CASES, REPLAYS, parse_record, read_jsonl, replay_key_of
from ..errors import CopyChangedError, RunDirError

__all__ = ["Chunk", "Journal", "Line"]

# Lines written by ``store.dumps`` start with these keys (records are dicts built in this key order); a
# line that does not (another writer) is parsed whole instead.
_CASE_HEAD = re.compile(rb'\{"index":(-?\d{1,18}),"case":\{"id":("(?:[^"\\]|\\.)*")'
                        rb'(?:,"epoch":(\d{1,18})(?!\d))?(?!,"epoch")')  # longer numbers: parsed whole
_REPLAY_HEAD = re.compile(rb'\{"case_id":("(?:[^"\\]|\\.)*")(?:,"epoch":(\d{1,18})(?!\d))?(?!,"epoch")')

_DECODER = json.JSONDecoder()

#: What :meth:`Journal.chunks` yields: records, their final states' and their initial states' addresses.
Chunk = tuple[list[CaseRecord], list[str | None], list[str | None]]

#: What identifies a record of a run: ``(case id, epoch)``.
Key = tuple[str, int]


#: Where one record of a journal file is: ``(byte offset, length, line number)``. A plain tuple of ints, which
#: the garbage collector stops tracking (it never does for a class instance, a named tuple included): the
#: line index of a run of a million records is then nothing its full passes walk.
Line = tuple[int, int, int]


def _complete_lines(path: Path) -> Iterator[tuple[Line, bytes]]:
    """Every complete line of ``path`` with where it is (a torn last line is ignored)."""
    for lineno, offset, raw in complete_lines(path):
        yield (offset, len(raw), lineno), raw


def _read_lines(path: Path, lines: Sequence[Line]) -> list[bytes]:
    """The bytes of ``lines`` of ``path``; a run of lines that follow each other in the file is read at once."""
    raws: list[bytes] = []
    handle = open_journal(path)
    if handle is None:
        raise RunDirError(f"{path}: missing, though it held records a moment ago; load the run again")
    with handle:
        i = 0
        while i < len(lines):
            j = i + 1
            while j < len(lines) and lines[j][0] == lines[j - 1][0] + lines[j - 1][1]:  # offset == previous end
                j += 1
            start = lines[i][0]
            handle.seek(start)
            block = handle.read(lines[j - 1][0] + lines[j - 1][1] - start)
            raws += [block[offset - start : offset - start + length] for offset, length, _ in lines[i:j]]
            i = j
    return raws


def _parse(path: Path, line: Line, raw: bytes) -> dict[str, Any]:
    return parse_record(path, line[2], raw)


def _case_key(path: Path, line: Line, raw: bytes) -> tuple[int, Key]:
    """``(index, (case id, epoch))`` of a case line, read from its first bytes when it was written by the store."""
    m = _CASE_HEAD.match(raw)
    if m is not None:
        quoted = m.group(2)
        try:
            cid = quoted[1:-1].decode("utf-8") if b"\\" not in quoted else parse_json(quoted.decode("utf-8"))
            return int(m.group(1)), (cid, int(m.group(3) or 1))
        except (UnicodeDecodeError, ValueError):  # not UTF-8: the whole line is read below, and named as damage
            pass
    rec = _parse(path, line, raw)
    try:
        return int(rec["index"]), (str(rec["case"]["id"]), int(rec["case"].get("epoch", 1)))
    except (KeyError, TypeError, ValueError):
        raise RunDirError(f"{path}: line {line[2]}: a case record without index or case id; "
                          "the run directory is damaged") from None


def _stored_case(path: Path, line: Line, raw: bytes) -> dict[str, Any]:
    """The ``case`` object of a case line as stored (states by address), parsed alone when the line was written
    by the store (its trajectory, state and rows are never decoded); a line that is not is parsed whole."""
    m = _CASE_HEAD.match(raw)
    if m is not None:
        try:  # the head is ASCII: the byte offset of the case object is its character offset
            case, _ = _DECODER.raw_decode(raw.decode("utf-8"), m.start(2) - len(b'{"id":'))
        except (UnicodeDecodeError, ValueError, RecursionError):  # parsed whole below, and named as damage
            case = None
        if isinstance(case, dict):
            return case
    case = _parse(path, line, raw).get("case")
    return case if isinstance(case, dict) else {}


def _replay_case(path: Path, line: Line, raw: bytes) -> Key:
    m = _REPLAY_HEAD.match(raw)
    if m is not None:
        return parse_json(m.group(1).decode("utf-8", "surrogatepass")), int(m.group(2) or 1)
    return replay_key_of(_parse(path, line, raw))


class Journal:
    """The journal of one run directory, read lazily.

    Parameters
    ----------
    directory : Path
        The run directory.
    states : StateReader
        Where the records' states are read (shared with the frames, so each state is parsed once).
    guard : bound method, optional
        Called before and after each read; raises when the journal is no longer the one the reader pinned (see
        :attr:`end`). Held weakly: a Run whose journal held it strongly was a reference cycle, freed (with its
        frames) only by a full garbage collection.

    Attributes
    ----------
    end : int or None
        The byte of ``cases.jsonl`` where the records read end: the case records are those of the lines that end
        at or before it. Set when the cases are first indexed (to where the complete lines ended then), or by
        :meth:`pin` to where they ended in the journal the run's columnar copy was built from; a record appended
        later (the run resumed, or going on) is never read, so the records are of the moment the frames are
        (``Run`` pins both). A ``cases.jsonl`` whose lines no longer reach it (cut or rewritten since) is refused
        with :class:`~oloproof_nb.errors.CopyChangedError`.
    """

    def __init__(self, directory: Path, states: StateReader, guard: Callable[[], None] | None = None) -> None:
        self.directory = directory
        self.states = states
        self._guard: weakref.WeakMethod[Callable[[], None]] | None = None
        self.guard = guard
        self.end: int | None = None
        self._cases: dict[Key, tuple[int, Line]] | None = None
        self._replays: dict[Key, tuple[Line, ...]] | None = None

    @property
    def guard(self) -> Callable[[], None] | None:
        """What checks the journal is still the one pinned (None: nothing pinned)."""
        return self._guard() if self._guard is not None else None

    @guard.setter
    def guard(self, method: Callable[[], None] | None) -> None:
        self._guard = weakref.WeakMethod(method) if method is not None else None

    def __getstate__(self) -> dict[str, Any]:
        """What ``pickle`` and ``copy.deepcopy`` keep: the guard itself (a weak reference is neither pickled nor
        deep-copied: ``pickle.dumps(run)`` and ``copy.deepcopy(run)`` raised ``TypeError``), held weakly again by
        :meth:`__setstate__`."""
        state = self.__dict__.copy()
        state["_guard"] = self.guard
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        guard = state.pop("_guard")
        self.__dict__.update(state)
        self.guard = guard

    def pin(self, size: int) -> None:
        """Read the case records of the complete lines ``cases.jsonl`` had when it was ``size`` bytes long (a
        torn last line's bytes left out: a resume writes other records over them); cases indexed to another end
        are indexed again."""
        end = complete_end(self.directory / CASES, size)
        if self._cases is not None and end != self.end:
            self._forget()
        self.end = end

    def _check(self) -> None:
        guard = self.guard
        if guard is not None:
            guard()

    # -- cases --------------------------------------------------------------------------------
    def case_index(self) -> dict[Key, tuple[int, Line]]:
        """``(case id, epoch)`` -> ``(index, line)`` of its record, in case order (a record written twice keeps
        its first)."""
        self._check()
        if self._cases is None:
            path = self.directory / CASES
            first: dict[Key, tuple[int, Line]] = {}
            end = 0
            for line, raw in _complete_lines(path):
                if self.end is not None and line[0] + line[1] > self.end:
                    break  # appended after the moment pinned
                end = line[0] + line[1]
                index, cid = _case_key(path, line, raw)
                if cid not in first:
                    first[cid] = (index, line)
            self._check()  # the lines indexed are the pinned journal's
            if self.end is not None and end != self.end:  # its lines stop short of the end pinned: cut since
                raise CopyChangedError(f"{path}: its records end at byte {end}, not at byte {self.end} as when the "
                                       "run was loaded (the file was cut or rewritten since), so the run's records "
                                       f"cannot be read from it; load it again: op.load_run({str(self.directory)!r})")
            self.end = end
            self._cases = dict(sorted(first.items(), key=lambda item: item[1][0]))
        return self._cases

    def _read(self, name: str, lines: Sequence[Line]) -> list[dict[str, Any]]:
        """The records at ``lines`` of journal file ``name``, in that order (parsed as one JSON array)."""
        path = self.directory / name
        if not lines:
            return []
        raws = _read_lines(path, lines)
        self._check()
        try:
            records = parse_json((b"[" + b",".join(raws) + b"]").decode("utf-8"))  # strict: bytes pass surrogates
        except (UnicodeDecodeError, ValueError, RecursionError):
            records = None
        if records is None or len(records) != len(raws) or not all(isinstance(r, dict) for r in records):
            return [_parse(path, line, raw) for line, raw in zip(lines, raws, strict=True)]
        return records  # type: ignore[no-any-return]

    def chunks(self, size: int, keep_states: bool = True) -> Iterator[Chunk]:
        """Every case record, in case order, ``size`` at a time, with its states put back.

        Yields ``(records, refs, initial_refs)``: ``refs`` gives, per record, the address of its final state
        in the state store and ``initial_refs`` that of its ``initial_state`` (None: no state, or a state
        stored inline). ``keep_states=False``: the state reader lets go of a chunk's states before the next
        chunk is read, so a pass over a run whose cases all hold different states holds one chunk's states,
        not the run's (equal states of two chunks are then two objects).
        """
        lines = [line for _, line in self.case_index().values()]
        for start in range(0, len(lines), size):
            if not keep_states:
                self.states.release()
            stored = self._read_indexed(lines[start : start + size])
            self.states.many(r for rec in stored for r in state_refs_of(rec))  # the chunk's states in one pass
            refs = [(rec.get("environment_state") or {}).get("state_ref") for rec in stored]
            initial_refs = [(rec.get("case") or {}).get("initial_state_ref") for rec in stored]
            yield [resolve_states(rec, self.states) for rec in stored], refs, initial_refs  # type: ignore[misc]

    def _read_indexed(self, lines: Sequence[Line]) -> list[dict[str, Any]]:
        """The case records at ``lines`` of the index; a ``cases.jsonl`` cut below them since it was indexed is
        refused as :meth:`case_index` refuses it (it said a line the file no longer has was damaged)."""
        try:
            return self._read(CASES, lines)
        except RunDirError:
            self._forget()
            self.case_index()  # cut since: CopyChangedError, "load it again"
            raise

    def record(self, case_id: str, epoch: int = 1) -> CaseRecord | None:
        """The record of one case's epoch (states put back), or None when the run has no such record."""
        for attempt in range(2):
            entry = self.case_index().get((case_id, epoch))
            if entry is None:
                return None
            stored = self._read_checked(CASES, [entry[1]], attempt)
            case = (stored[0].get("case") or {}) if stored is not None else {}
            if stored is not None and case.get("id") == case_id and case.get("epoch", 1) == epoch:
                return resolve_states(stored[0], self.states)  # type: ignore[return-value]
            self._forget()  # the file changed under the index (a resume cut or rewrote it): index it again
        raise RunDirError(f"{self.directory / CASES}: the record of case {case_id!r} moved while it was read")

    def stored_cases(self, keys: Iterable[Key]) -> dict[Key, dict[str, Any]]:
        """The ``case`` object of the records of ``keys`` (``(case id, epoch)``; one the run lacks is left out), as
        stored: states by address, nothing else of the record decoded. One pass over their lines in file order:
        for a field of many cases (``expected``), where :meth:`record` would read and decode each whole."""
        path = self.directory / CASES
        for attempt in range(2):
            index = self.case_index()
            wanted = sorted(((key, index[key][1]) for key in dict.fromkeys(keys) if key in index),
                            key=lambda item: item[1][0])  # file order: lines that follow each other are read at once
            try:  # a line that moved may now start mid-record: not damage on a first attempt, as in _read_checked
                raws = _read_lines(path, [line for _, line in wanted])
                self._check()
                found = {key: _stored_case(path, line, raw) for (key, line), raw in zip(wanted, raws, strict=True)}
            except RunDirError:
                if attempt:
                    raise
                found = None
            if found is not None and all((c.get("id"), c.get("epoch", 1)) == key for key, c in found.items()):
                return found
            self._forget()  # the file changed under the index (a resume cut or rewrote it): index it again
        raise RunDirError(f"{path}: case records moved while they were read")

    def records(self) -> list[CaseRecord]:
        """Every case record in case order, states put back (the whole journal in memory: prefer frames)."""
        return [rec for chunk, _, _ in self.chunks(4096) for rec in chunk]

    # -- replays ------------------------------------------------------------------------------
    def _replay_index(self) -> dict[Key, tuple[Line, ...]]:
        if self._replays is None:
            path = self.directory / REPLAYS
            index: dict[Key, list[Line]] = {}
            for line, raw in _complete_lines(path):
                index.setdefault(_replay_case(path, line, raw), []).append(line)
            self._replays = {key: tuple(lines) for key, lines in index.items()}  # tuples: untracked, like Line
        return self._replays

    def replays_of(self, case_id: str, epoch: int = 1) -> list[ReplayRecord]:
        """The replay records (control and faulted) of one recorded case's epoch, states put back."""
        key = (case_id, epoch)
        for attempt in range(2):
            if key not in self.case_index():
                return []
            stored = self._read_checked(REPLAYS, self._replay_index().get(key, ()), attempt)
            if stored is not None and all(replay_key_of(rec) == key for rec in stored):
                return [resolve_states(rec, self.states) for rec in stored]  # type: ignore[misc]
            self._forget()
        raise RunDirError(f"{self.directory / REPLAYS}: the replays of case {case_id!r} moved while they were read")

    def _read_checked(self, name: str, lines: Sequence[Line], attempt: int) -> list[dict[str, Any]] | None:
        """:meth:`_read`; on a first attempt, None instead of an error (the lines may have moved)."""
        try:
            return self._read(name, lines)
        except RunDirError:
            if attempt:
                raise
            return None

    def _forget(self) -> None:
        """Drop the line indexes (built again on next use)."""
        self._cases = self._replays = None

    def _recorded_replays(self) -> Iterator[dict[str, Any]]:
        """The replay records of a recorded case as stored (states by address), in file order, one at a time."""
        recorded = self.case_index()
        yield from (rec for rec in read_jsonl(self.directory / REPLAYS) if replay_key_of(rec) in recorded)
        self._check()

    def replay_flags(self) -> list[tuple[str, bool]]:
        """The case id of each replay record of a recorded case and whether it came from the replay cache, in file
        order: each record is parsed and let go, no state is read (counting them kept every replay's trajectory
        and states)."""
        return [(replay_key_of(rec)[0], bool(rec.get("cached"))) for rec in self._recorded_replays()]

    def fault_replay_times(self) -> list[tuple[str, int, str, str, bool]]:
        """``(case id, epoch, criterion, captured_at, cached)`` of each faulted replay of a recorded case that left
        a state, in file order: when the replay was made, and whether it came from the replay cache. A cached
        replay keeps the time of the replay it copies (of the same case and epoch: the cache key holds both), so
        a cached record and another of its case, epoch, criterion and time are one try of the agent; two live
        records are two tries whatever their times (a clock that ticks every 15.6 ms gives a case's epochs one
        time). No state is read."""
        out = []
        for rec in self._recorded_replays():
            env = rec.get("environment_state")
            if rec.get("kind") == "fault" and isinstance(env, dict) and env.get("captured_at"):
                case_id, epoch = replay_key_of(rec)
                out.append((case_id, epoch, str(rec.get("criterion")), str(env["captured_at"]),
                            bool(rec.get("cached"))))
        return out

    def replay_records(self) -> list[ReplayRecord]:
        """Every replay record of a recorded case, in file order, states put back."""
        return [resolve_states(rec, self.states) for rec in self._recorded_replays()]  # type: ignore[misc]
