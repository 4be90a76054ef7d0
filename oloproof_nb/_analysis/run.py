"""The Run: a stored run's manifest and its tidy frames, read lazily (no display here; the face adds it).

Loading a run reads its ``manifest.json`` only, once the run has a fresh
columnar copy (``frames/*.parquet``, see ``_analysis/columnar.py``); without one
(a run that just finished, a partial run, a journal newer than the copy) the
copy is built from the JSONL journal first, chunk by chunk. Each frame is then
read from its Parquet file on first access, and the states of ``snapshots``
from the run's state store only when that frame is read. Case records (for the
case panel) are read one case at a time from the journal.

A Run reads every frame from the copy it was loaded with, and its case records
(``records``, ``record``, the case panel, the replay counts) from the lines of the
journal that copy was built from: a record appended since (the run resumed, or
still going) is not the Run's. When another process has since put a newer copy
in place (the run went on, or was resumed), or moved, deleted or replaced the
folder, reading a frame not read yet or a record raises
:class:`~oloproof_nb.errors.CopyChangedError` saying which (load the run again)
rather than mixing two moments of the run, or two runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar, overload

import pandas as pd
import pyarrow as pa

from .._config.files import folder_problem, yaml_number
from .._config.imports import CODE_KEY
from .._config.release import ReleaseConfig
from .._config.shared_rules import ignored_paths, shared_list_rules
from .._config.suite import release_from_manifest
from .._config.suite_config import SuiteConfig, parse_suite_config
from .._core.evaluator import Evaluator
from .._core.labels import pair_labels
from .._core.pairs import pack_view
from .._core.records import CaseRecord, Manifest, PairRow, ReplayRecord, RunVerdictRow
from .._run.baseline import NOOP_VERSION
from .._run.locate import runs_hint
from .._run.states import StateReader
from .._run.store import CASES, MANIFEST, read_manifest, refuse_changed_journal
from ..errors import CopyChangedError, OloproofError, RunDirError, describe_exception, warn_at_caller
from ..evaluators.fault import replay_judges
from ..evaluators.metamorphic import MetamorphicRelation
from ..evaluators.state import pinned_paths
from . import frames
from .columnar import (
    CopyWriter,
    copied_size,
    copied_stat,
    copied_unchanged,
    copy_changed,
    copy_source,
    fresh_source,
    from_arrow,
    journal_fingerprint,
    read_frame,
    same_copy,
    to_arrow,
)
from .columns import FRAMES
from .journal import Chunk, Journal

__all__ = ["Run", "load_run", "load_runs", "directory_list", "as_run", "run_directory", "changed_checks",
           "label_difference", "unscored_difference", "validity_check_difference", "ColumnarCopyWarning"]

R = TypeVar("R", bound="Run")

#: Case records converted to frames at a time when the columnar copy is built. Small, as in the live copy
#: (``live_copy.CHUNK``): records held across many allocations are promoted to the oldest generation, and
#: every 25% more of it costs a full pass of the garbage collector (``benchmarks/convert.py`` counts them;
#: ``benchmarks/README.md``, "Converting, second pass").
CHUNK = 256
#: Times :meth:`Run.load` looks for a whole columnar copy while other processes keep putting new ones in place.
_OPEN_ATTEMPTS = 5
#: What making a case record's frame rows raises when the record is not what oloproof_nb writes (a key
#: missing, a value of the wrong type). Arrow's conversion errors are among them (ValueError, TypeError).
_SHAPE_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError)
#: pandas 3 copies a table only when one of its sharers writes to it, so a shallow copy is a copy of its own;
#: before, a shallow copy shares the values an in-place edit writes to, and the caller gets a deep copy.
_COPY_ON_WRITE = int(pd.__version__.split(".")[0]) >= 3


class ColumnarCopyWarning(UserWarning):
    """The columnar copy of a run could not be written (a read-only folder): frames come from the journal."""


class _FrameAttribute:
    """A frame of a :class:`Run` as an attribute (its docstring is the frame's): read on first access and kept,
    each reader gets its own copy (:meth:`Run._shared`); assigning a frame replaces it (:meth:`Run._replace`)."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, run: None, owner: type) -> _FrameAttribute: ...
    @overload
    def __get__(self, run: Run, owner: type) -> pd.DataFrame: ...
    def __get__(self, run: Run | None, owner: type) -> pd.DataFrame | _FrameAttribute:
        return self if run is None else run._shared(self.name)

    def __set__(self, run: Run, frame: pd.DataFrame) -> None:
        run._replace(self.name, frame)


class Run:
    """A finished (or interrupted) run, read from its directory.

    A Run from ``op.run`` and one from ``op.load_run`` are the same: both read
    the run directory. Frames are read on first access from the run's
    columnar copy (``frames/*.parquet``), which :meth:`load` builds from the
    journal when it is missing or older than the journal.

    Attributes
    ----------
    directory : Path
        The run directory (a pooled run: its first run's).
    manifest : Manifest
        Its ``manifest.json`` (a pooled run: its first run's).
    config : SuiteConfig
        The suite configuration the run used.
    release : ReleaseConfig or None
        The suite's release.yaml, if it had one.
    runs : list of Run
        The runs pooled into this one (see :func:`load_runs`); ``[self]`` for one run.
    run_id, suite_name : str
        The run's id (a pooled run: its runs' ids joined with ``+``) and its suite's name.
    system_version : str or None
        The system's version (a pooled run of several versions: them all, comma-separated).
    finished : bool
        Whether the run completed (pooled: every run).
    criteria : list of str
        The suite's criteria, one per evaluator.
    n_cases : int
        Cases recorded (rows of ``cases``).
    epochs : int
        How many times each case ran (pooled: the sum of its runs' epochs).
    replaced : tuple of str
        The frames set on this Run in the session (``run.verdicts = frame``): computed on, but never a release
        decision (the gate's reason is ``edited_frames``).
    cases, steps, snapshots, changes, verdicts, comparisons, replays, pairs, receipts : pandas.DataFrame
        The run's frames, one row per case, step, recorded state, changed leaf, case × criterion, compared
        path, fault replay, metamorphic pair and outcome receipt; each attribute's docstring lists its
        columns (shared/DESIGN.md pins them). Each read gives a copy of its own.
    """

    def __init__(self, directory: Path, manifest: Manifest, config: SuiteConfig | None = None,
                 journal: Journal | None = None) -> None:
        directory = Path(directory).absolute()  # read lazily: a notebook's os.chdir must not change the run read
        self.directory = directory
        self.manifest = manifest
        stored = manifest.suite_config
        self.config: SuiteConfig = config if config is not None else parse_suite_config(stored.config,
                                                                                         directory / MANIFEST)
        self._release: ReleaseConfig | None = release_from_manifest(stored.release)  # read-only: see release
        self.labels: dict[str, list[dict[str, Any]]] = stored.labels
        self.suite_root = Path(stored.root) if stored.root else None
        self._states = StateReader(directory)
        self._journal = journal if journal is not None else Journal(directory, self._states, self._same_copy)
        #: ``[size, mtime_ns]`` of the manifest.json :attr:`manifest` was read from, when known (None: not known):
        #: a copy built from that very file gives it again without reading it twice (12 MB at 100,000 cases)
        self._manifest_read: list[int] | None = None
        self._in_memory: dict[str, pd.DataFrame] | None = None  # frames when the copy cannot be written
        self._members: list[Run] | None = None  # set on a pooled run
        self._pooled_from: list[tuple[str | None, int | None]] | None = None  # the members' copies pooled
        self._held = False  # a Run held in memory (see held()): nothing is ever written for it
        self._source: str | None = None  # the columnar copy this Run reads (see copy_source), once opened
        self._frames: dict[str, pd.DataFrame] = {}  # each frame read once; users get copies (see _shared)
        self._replaced: set[str] = set()  # frames set by the user (``run.verdicts = frame``): see :attr:`replaced`

    @classmethod
    def load(cls: type[R], directory: str | Path, within: str = "runs") -> R:
        """Open a run directory: its manifest now, each frame on first access.

        The columnar copy is (re)built first when it is missing or does not
        match the journal. A torn last line (the process died mid-write) is
        ignored; a case recorded twice (never written by oloproof) keeps its
        first record. ``within``: as for :meth:`unopened`.
        """
        run = cls.unopened(directory, within)
        run._open_copy()
        return run

    @classmethod
    def unopened(cls: type[R], directory: str | Path, within: str = "runs") -> R:
        """The run in ``directory`` with its manifest read and nothing else: no columnar copy is opened or built
        (that writes ``frames/``), so no frame can be read from it. For what needs the configuration alone,
        such as checking a release.yaml against the run before the run is opened. A suite folder given instead
        is refused naming its latest run in ``within`` (``baselines`` where a do-nothing baseline is wanted)."""
        directory = Path(directory)
        problem = folder_problem(directory)
        if problem is not None:
            raise RunDirError(f"{directory}: {problem}; give a run directory you can read")
        if not directory.is_dir():
            what = "not a directory" if directory.exists() else "no such run directory"
            raise RunDirError(f"{directory}: {what} (a run directory holds manifest.json and cases.jsonl)")
        read = journal_fingerprint(directory)[MANIFEST]  # the file read next, when it is still so after
        try:
            manifest = read_manifest(directory)
        except RunDirError as exc:  # a suite folder or its runs/ (op.load_run("demo")): name what to give instead
            hint = "" if (directory / MANIFEST).exists() else runs_hint(directory, within)
            if not hint:
                raise
            raise RunDirError(f"{exc}{hint}") from None
        refuse_changed_journal(directory, manifest)
        run = cls(directory, manifest)
        if journal_fingerprint(directory)[MANIFEST] == read:
            run._manifest_read = read
        return run

    def _open_copy(self) -> None:
        """Make sure the run has a columnar copy and remember which one: every frame is read from it."""
        for _ in range(_OPEN_ATTEMPTS):
            self._source = fresh_source(self.directory)
            if self._source is None:
                self._write_copy()  # None after it: another copy is being put in place right now
            else:  # its records: those of the journal the copy was built from
                self._journal.pin(copied_size(self._source, CASES))
                if not self._manifest_of_copy():  # the run went on since that copy: look again
                    self._source = None
            if self._in_memory is not None or self._source is not None:
                return
        raise RunDirError(f"{self.directory}: its columnar copy kept being replaced while it was opened; "
                          "is another process rewriting it in a loop?")

    @classmethod
    def pool(cls: type[R], runs: Sequence[Run]) -> R:
        """One Run of several (see :func:`load_runs`)."""
        if not runs:
            raise OloproofError("load_runs needs at least one run directory")
        first = runs[0]
        ids = [r.run_id for r in runs]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            where = [Path(r.directory) for r in runs if r.run_id == twice[0]]
            # resolved, as the CLI tells compare's two runs apart: a link to the folder is that folder, not a copy
            copy = where[0].resolve() != where[1].resolve()
            same = f"{where[1]} is a copy of {where[0]}" if copy else "the same folder"
            raise OloproofError(f"run {twice[0]} is given twice ({same}); pool each run once")
        for other in runs[1:]:
            if other.suite_name != first.suite_name:
                raise OloproofError(f"runs {first.run_id} and {other.run_id} are of different suites "
                                    f"({first.suite_name!r}, {other.suite_name!r}); pool runs of one suite")
            if _criteria(other) != _criteria(first):
                raise OloproofError(f"runs {first.run_id} and {other.run_id} judge different criteria "
                                    f"({', '.join(first.criteria)} / {', '.join(other.criteria)}); "
                                    "pool runs of the same suite configuration")
            idle = [r.run_id for r in (first, other) if r.manifest.system_version == NOOP_VERSION]
            if len(idle) == 1:  # the no-op's passes would raise the agent's rate (INSUFFICIENT_EVIDENCE became PASS)
                raise OloproofError(f"run {idle[0]} is the do-nothing baseline (system {NOOP_VERSION}), not the agent: "
                                    "pool runs of the agent, and give the baseline as baseline= to op.gate")
            if other.release != first.release:  # the pooled run is gated by one: which, was the order's choice
                raise OloproofError(f"runs {first.run_id} and {other.run_id} were made with different release.yaml "
                                    "files (the same runs gated BLOCK in one order and PASS in the other); pool runs "
                                    "of one release.yaml, or gate the pooled runs with op.gate(run, release=...) "
                                    "after pooling runs made with the same one")
            relabeled = label_difference(first.labels, other.labels)
            if relabeled:  # each run judged its pairs, and left out its invalid copies, by the labels it started with
                raise OloproofError(f"runs {first.run_id} and {other.run_id} were made with different validity labels "
                                    f"({relabeled}); pool runs made with the same label files, or run the suite "
                                    "again with the labels as they are now")
            moved = unscored_difference(first, other)
            if moved:  # the same labels checked otherwise: each run's verdicts leave out other copies
                raise OloproofError(f"runs {first.run_id} and {other.run_id} leave out other copies labeled invalid "
                                    f"({validity_check_difference(first, other)}: {moved}); pool runs of the same "
                                    "suite configuration")
            differ = changed_checks(first, other)
            if differ:  # one criterion, two measurements: the pooled rate would mix them (and compare sees one)
                name, how = next(iter(differ.items()))
                raise OloproofError(f"runs {first.run_id} and {other.run_id} judge {name} with different checks "
                                    f"({how}); pool runs of the same suite configuration and code")
        _check_one_code(runs)
        _check_clusters(runs)  # reads each run's cases (the gate of the pooled run reads them anyway)
        pooled = cls(first.directory, first.manifest)
        pooled._members = list(runs)
        pooled.labels = first.labels  # the same in every run
        return pooled

    @classmethod
    def held(cls: type[R], directory: Path, manifest: Manifest, config: SuiteConfig, journal: Journal,
             built: dict[str, pd.DataFrame]) -> R:
        """A Run held in memory, not read from a run directory: its frames ``built`` (one per name of
        :data:`~.columns.FRAMES`) and its case records from ``journal``. Nothing is written anywhere
        (``directory`` is where its source lies, e.g. an Inspect AI log's folder)."""
        run = cls(directory, manifest, config=config, journal=journal)
        run._in_memory = {name: built[name] for name in FRAMES}
        run._held = True
        return run

    def write_columnar(self) -> None:
        """(Re)build the columnar copy (``frames/*.parquet``) from the journal.

        The journal is read in chunks of :data:`CHUNK` cases, so a run of any
        size is converted without holding every record; metamorphic pairs are
        judged at the end, across chunks. When the folder cannot be written
        (read-only), the frames are kept in memory instead, with a
        :class:`ColumnarCopyWarning`.
        """
        if self._held:
            return
        if self._members is not None:
            for member in self._members:
                member.write_columnar()
            self._forget(self._members[0].manifest)  # the pooled frames read before were pooled from the old copies
            return
        self._write_copy()
        if self._in_memory is None and self._source is None:  # another process is putting its copy in place now
            self._open_copy()  # never a Run that reads whatever files are in place, unchecked

    def _write_copy(self) -> None:
        """:meth:`write_columnar` of one run: :attr:`_source` is None after it when another process was putting a
        copy in place at the moment this one was put there (or dropped)."""
        fingerprint = journal_fingerprint(self.directory)  # before reading: a journal growing meanwhile is newer
        # the manifest before the journal is read: a run it calls finished has all its records in what is read next
        # (the runner stamps it after the last one). Read after the copy, a run that finished meanwhile was called
        # finished with the records of a moment before, and its gate blamed a truncated copy of the folder
        manifest = read_manifest(self.directory)
        refuse_changed_journal(self.directory, manifest)
        # the journal read afresh (an index read before is older than it), checked against the copy only once the
        # copy is in place (the copy it replaces would refuse every read); a failure keeps the frames' records
        previous, self._journal = self._journal, Journal(self.directory, self._states)
        try:
            self._convert(fingerprint, manifest)
        except BaseException:
            self._journal = previous
            raise
        self._journal.guard = self._same_copy

    def _convert(self, fingerprint: dict[str, list[int] | None], manifest: Manifest) -> None:
        """Build the columnar copy from :attr:`_journal` (its ``fingerprint`` taken and ``manifest`` read before),
        or the frames in memory where it cannot be written, and read every frame from it from now on."""
        try:
            writer = CopyWriter(self.directory, fingerprint)
        except OSError as exc:
            self._keep_in_memory(exc, manifest)
            return
        try:
            for name, table in self._journal_tables():
                writer.write(name, table)
            writer.commit()
        except OSError as exc:
            writer.abort()
            self._keep_in_memory(exc, manifest)
        except BaseException:
            writer.abort()
            raise
        else:
            self._in_memory = None
            self._source = copy_source(self.directory)  # this copy, or the fresh one a faster process put there
            self._forget(manifest)
            if self._source is not None and self._source != writer.written:  # the faster one's: its records
                self._journal.pin(copied_size(self._source, CASES))
                self._manifest_of_copy()  # and its manifest, when still there

    def _manifest_of_copy(self) -> bool:
        """Take the manifest the copy this Run reads (:attr:`_source`) was built from, when ``manifest.json`` is
        still that file (its size and mtime as the copy records them); whether it is.

        A copy another process put in place may be of a later moment than the manifest this Run read before it:
        a run that finished between the two had 48 of 48 cases beside a manifest calling it unfinished, and
        ``oloproof gate`` BLOCKed it ("the run did not finish") while its journal PASSes (review R48).
        """
        if self._source is None or not copied_unchanged(self.directory, self._source, MANIFEST):
            return False
        built_from = copied_stat(self._source, MANIFEST)
        if self._manifest_read is not None and self._manifest_read == built_from:
            return True  # the manifest this Run holds was read from that very file
        manifest = read_manifest(self.directory)
        if not copied_unchanged(self.directory, self._source, MANIFEST):  # rewritten while it was read
            return False
        refuse_changed_journal(self.directory, manifest)
        if manifest != self.manifest:
            self._forget(manifest)
        self._manifest_read = built_from
        return True

    def _same_copy(self) -> None:
        """Raise :class:`~oloproof_nb.errors.CopyChangedError` when the run folder no longer holds the columnar copy
        this Run reads (the run went on, or the folder was moved or replaced): a record read now from the journal
        could be of another moment, or another run, than the frames. Called by the journal around each read."""
        if self._in_memory is None and self._source is not None and not same_copy(self.directory, self._source):
            raise copy_changed(self.directory, self.manifest.run_id)

    def _forget(self, manifest: Manifest) -> None:
        """Take ``manifest`` (read before the journal the frames come from) and drop the frames and records read
        before: each is read again, from the copy just written (a resumed run's manifest now says it finished; its
        cases and verdicts are newer)."""
        self.manifest = manifest
        self._manifest_read = None  # read by the caller from a file whose size and mtime it did not keep
        self._frames.clear()
        self._replaced.clear()
        for name in ("records", "replay_records", "unscored_ids", "_repeated_replays"):
            self.__dict__.pop(name, None)

    def _keep_in_memory(self, exc: OSError, manifest: Manifest) -> None:
        warn_at_caller(f"{self.directory}: cannot write the columnar copy ({exc}); the frames are built from the "
                       "journal and kept in memory", ColumnarCopyWarning)
        built: dict[str, list[pa.Table]] = {name: [] for name in FRAMES}
        for name, table in self._journal_tables():
            built[name].append(table)
        self._in_memory = {name: from_arrow(FRAMES[name], pa.concat_tables(tables), self._states.many)
                           for name, tables in built.items()}
        self._forget(manifest)

    def _journal_tables(self) -> Iterator[tuple[str, pa.Table]]:
        """Every frame's Arrow rows from the journal, chunk by chunk.

        A case record that is valid JSON but not what oloproof_nb writes (a key missing, a value of the wrong
        type: edited by hand, or written by another tool) is a :class:`RunDirError` naming its line.
        """
        done = [0]  # records of the chunks converted so far: a damaged record is at or after done[0]
        try:
            for name, items, refs in self._journal_items(done):
                yield name, to_arrow(FRAMES[name], items, refs)
        except OloproofError:
            raise
        except _SHAPE_ERRORS as exc:
            found = self._damaged_record(done[0])
            if found is None:  # every record makes its rows alone: not the journal's fault
                raise
            lineno, why = found
            raise RunDirError(f"{self.directory / CASES}: line {lineno}: not a case record as oloproof_nb writes "
                              f"it ({why}); the run directory is damaged") from exc

    def _damaged_record(self, start: int = 0) -> tuple[int, str] | None:
        """The first case record whose frame rows cannot be made on their own, looked for from the ``start``-th
        record in case order (then before it): its line number and why; None when there is none. Only called
        once a conversion failed; it reads one record at a time."""
        journal, run_scope = self._journal, any(ev.scope == "run" for ev in self.config.evaluators)
        entries = list(journal.case_index().items())
        for (case_id, epoch), (_, line) in entries[start:] + entries[:start]:
            try:
                record = journal.record(case_id, epoch)
                if record is None:
                    continue
                for name, items, refs in frames.chunk_items([record], [None], self.config.tool_errors):
                    to_arrow(FRAMES[name], items, refs)
                if run_scope:
                    pack_view(record)
            except OloproofError:
                raise
            except _SHAPE_ERRORS as exc:
                why = f"no key {exc.args[0]!r}" if type(exc) is KeyError and exc.args else describe_exception(exc)
                return line[2], why
        return None

    def _journal_items(self, done: list[int] | None = None) -> Iterator[tuple[str, list[Any], list[str | None] | None]]:
        """Every frame's items from the journal, chunk by chunk (see :func:`frames.journal_items`); the
        state reader holds one chunk's states at a time. ``done[0]`` counts the records of the chunks whose
        items were all taken."""
        run_scope = self._run_scope if any(ev.scope == "run" for ev in self.config.evaluators) else None
        chunks = _of_the_run(self._journal.chunks(CHUNK, keep_states=False), self.directory, self.manifest.run_id,
                             self.manifest.epochs)
        return frames.journal_items(chunks if done is None else _counted(chunks, done), self.config.tool_errors,
                                    run_scope, self._some_states,
                                    self.unscored_ids)

    def _run_scope(self, records: Sequence[CaseRecord]) -> tuple[list[RunVerdictRow], list[PairRow]]:
        """Verdicts judged across cases (metamorphic pairs), from every case record."""
        return frames.run_scope_rows(self.config, self.labels, records, self.manifest.n_cases)

    def _some_states(self, refs: list[str]) -> list[Any]:
        """The states stored at ``refs``, in one pass: the reader lets go of the states it read before, so
        judging the pairs of a run whose cases all hold different states never holds them all."""
        self._states.release()
        return self._states.many(refs)

    def _replace(self, name: str, frame: Any) -> None:
        """``run.<name> = frame``: the run computes from (a copy of) ``frame`` from now on; it must be a DataFrame
        holding the frame's columns (a filtered or edited copy of the run's own)."""
        if not isinstance(frame, pd.DataFrame):
            raise OloproofError(f"run.{name} = …: must be a pandas DataFrame (a filtered or edited copy of "
                                f"run.{name}), got {type(frame).__name__}")
        lacking = [c for c in FRAMES[name].names if c not in frame.columns]
        if lacking:
            raise OloproofError(f"run.{name} = …: the frame lacks the column(s) {', '.join(lacking)} of run.{name}")
        self._frames[name] = frame.copy(deep=not _COPY_ON_WRITE)
        self._replaced.add(name)

    @property
    def replaced(self) -> tuple[str, ...]:
        """The frames set on this Run (``run.verdicts = frame``), in :data:`~.columns.FRAMES` order: what is computed
        on the run reads them, and its gate is no release decision (:func:`~.gate.no_decision`)."""
        return tuple(name for name in FRAMES if name in self._replaced)

    def _shared(self, name: str) -> pd.DataFrame:
        """Frame ``name``, read on first access and kept; the caller gets its own copy of the table (O(1) with
        pandas' copy-on-write), so a notebook's scratch edit (``run.verdicts.drop(..., inplace=True)``, a
        column overwritten) never reaches the gate, slices or comparisons computed on the run afterwards."""
        frame = self._frames.get(name)
        if frame is None:
            frame = self._frames[name] = self._frame(name)
        return frame.copy(deep=not _COPY_ON_WRITE)

    def _frame(self, name: str) -> pd.DataFrame:
        if self._members is not None:
            self._same_members()
            return frames.concat(FRAMES[name], [_with_run_id(m._frame(name), m.run_id) for m in self._members],
                                 run_id=True)
        if self._in_memory is not None:
            return self._in_memory[name]
        return read_frame(self.directory, name, self._states.many, source=self._source, run_id=self.manifest.run_id)

    def _same_members(self) -> None:
        """Refuse to pool a frame from members that moved to another copy after this pooled Run read its
        frames (``write_columnar`` called on a member itself): the frames would be of two moments."""
        now = [(m._source, id(m._in_memory) if m._in_memory is not None else None) for m in self.runs]
        if self._pooled_from is None or not self._frames:
            self._pooled_from = now
        elif now != self._pooled_from:
            moved = next(m for m, was, is_ in zip(self.runs, self._pooled_from, now, strict=True) if was != is_)
            raise CopyChangedError(f"{moved.directory}: this run of the pooled run moved to a newer columnar copy "
                                   "after the pooled frames were read; pool the runs again (op.load_runs), or "
                                   "refresh the pooled run itself (write_columnar)")

    # -- identity ---------------------------------------------------------------------------
    @property
    def release(self) -> ReleaseConfig | None:
        """The suite's release.yaml as the run stored it when it started (None: it had none)."""
        return self._release

    @release.setter
    def release(self, value: ReleaseConfig | None) -> None:
        # the gate compares the settings it is given with these, the run's own: set here, a threshold lowered in a
        # notebook was the run's own, and the gate PASSed warning that the run had been made with it (review R56)
        raise OloproofError("run.release is the release settings the run was made with, as its manifest stores "
                            "them; gate with others by giving them: op.gate(run, release=...) or op.gate(run, "
                            "criteria={...})")

    @property
    def runs(self) -> list[Run]:
        return list(self._members) if self._members is not None else [self]

    @property
    def run_id(self) -> str:
        """The run's id (a pooled run: its runs' ids joined with ``+``)."""
        return "+".join(r.manifest.run_id for r in self.runs)

    @property
    def suite_name(self) -> str:
        return self.manifest.suite

    @property
    def system_version(self) -> str | None:
        """The system's version (a pooled run of several versions: them all, comma-separated)."""
        versions = list(dict.fromkeys(r.manifest.system_version for r in self.runs))
        if len(versions) == 1:
            return versions[0]
        return ", ".join(str(v) for v in versions)

    @property
    def finished(self) -> bool:
        """True when the run completed (``finished_at`` is in the manifest; pooled: every run)."""
        return all(r.manifest.finished_at is not None for r in self.runs)

    @property
    def criteria(self) -> list[str]:
        return self.config.criteria

    @property
    def n_cases(self) -> int:
        """Cases recorded (rows of ``cases``)."""
        return len(self.cases)

    # -- records (read from the journal, one case at a time) --------------------------------
    def _member_of(self, case_id: str, epoch: int = 1) -> Run:
        if self._members is None:
            return self
        holding = [m for m in self._members if (case_id, epoch) in m._journal.case_index()]
        if len(holding) != 1:
            where = ", ".join(m.run_id for m in holding) or "none of the pooled runs"
            raise OloproofError(f"case {case_id!r} is in {where}; pick one run: run.panel({case_id!r}, run_id=...) "
                                f"or run.runs[i].record({case_id!r})")
        return holding[0]

    def record(self, case_id: str, epoch: int = 1) -> CaseRecord:
        """The stored record of one case (its states put back), read from the journal.

        ``epoch``: which repetition, 1..k, of a run with ``epochs`` (see :attr:`epochs`).
        """
        if not isinstance(case_id, str):  # an Inspect AI sample numbered 3 is case "3": "no case 3" read as absent
            raise OloproofError(f"case id {case_id!r} is not text ({type(case_id).__name__}): case ids are text "
                                f"(an Inspect AI sample numbered 3 is case '3'); give {str(case_id)!r}")
        member = self._member_of(case_id, epoch)
        rec = member._journal.record(case_id, epoch)
        if rec is None:
            if epoch != 1 and member._journal.record(case_id) is not None:
                raise OloproofError(f"case {case_id!r} has no epoch {epoch} in run {member.run_id} "
                                    f"(epochs: {member.epochs})")
            raise OloproofError(f"no case {case_id!r} in run {member.run_id}")
        return rec

    def case_replay_records(self, case_id: str, epoch: int = 1) -> list[ReplayRecord]:
        """The records of ``replays.jsonl`` (control and faulted replays) of one case's epoch."""
        return self._member_of(case_id, epoch)._journal.replays_of(case_id, epoch)

    @property
    def epochs(self) -> int:
        """How many times each case ran (``epochs``).

        A pooled run (:func:`load_runs`): the sum of its runs' epochs, since :func:`reduce_epochs` counts a
        case's rows in every pooled run as its epochs (rows are told apart by ``run_id`` and ``epoch``).
        """
        return sum(r.manifest.epochs for r in self.runs)

    @cached_property
    def records(self) -> list[CaseRecord]:
        """Every case record of ``cases.jsonl``, in case order, states put back.

        Reads the whole journal into memory: the frames and :meth:`record` are the cheap ways in.
        """
        return [rec for r in self.runs for rec in r._journal.records()]

    @cached_property
    def unscored_ids(self) -> frozenset[str]:
        """The copies this run's verdicts leave out: labeled invalid by a transform whose labels are checked
        (:func:`~.frames.unscored_cases` of its configuration, its labels and its cases an epoch, from the
        manifest: no frame is read). Worked out once (50,000 labels take about 50 ms), and again after the
        manifest is read again."""
        return frames.unscored_cases(self.config, self.labels, self.manifest.n_cases)

    def replay_tally(self) -> tuple[int, int, int]:
        """``(live, cached, unscored)``: the replay runs (control and faulted, the records of
        :attr:`replay_records`) made live and taken from the replay cache, and, of all of them, those of a copy
        no criterion scores (labeled invalid by a checked transform, :func:`~.frames.unscored_cases`: its
        verdict rows, replays' included, are left out of :attr:`verdicts`). Neither the records' states are
        read nor the records kept (those already read are counted as they are)."""
        live = cached = unscored = 0
        for run in self.runs:  # a pooled run's runs each leave out the copies their own labels hold invalid
            left_out = run.unscored_ids
            flags = ([(str(rec.get("case_id")), bool(rec.get("cached"))) for rec in run.replay_records]
                     if "replay_records" in run.__dict__ else run._journal.replay_flags())
            for case_id, from_cache in flags:
                cached += from_cache
                live += not from_cache
                unscored += case_id in left_out
        return live, cached, unscored

    def repeated_replays(self) -> set[tuple[str, str, int, str]]:
        """``(run_id, case_id, epoch, criterion)`` of each fault replay of a pooled run that repeats a replay another
        run of the pool holds: the replay cache gave a later run the very replay an earlier one made (the cache
        key leaves the run out: a case's epoch e replays the same way in every run of an unchanged system), so
        the two verdict rows are one try of the agent, not two. Empty for a run that is not pooled (its epochs
        replay on their own) or took no replay from the cache. Told apart by the case, epoch and criterion and
        when the replay was made (:meth:`~.journal.Journal.fault_replay_times`); only a replay taken from the
        cache repeats another: a live one is a try of its own even where a clock that ticks every 15.6 ms (or
        two runs made at once) gave it another's time. Of cached copies whose original no run of the pool holds
        (the cache was filled by a run outside it), the first in the pool's order is kept. A row of a criterion
        with ``calls: every`` repeats another only when each of its calls' replays does. Worked out once (the
        replay records are read: ``python benchmarks/pooled.py`` times the first gate of two pooled 50,000-case
        runs that needs it at 3.9–4.3 s, 0.66–0.68 s after), and again after the manifest is read again."""
        return set(self._repeated_replays)

    @cached_property
    def _repeated_replays(self) -> frozenset[tuple[str, str, int, str]]:
        """:meth:`repeated_replays`, worked out once."""
        if len(self.runs) < 2 or not bool(self.replays["cached"].fillna(False).any()):
            return frozenset()
        live: set[tuple[str, int, str, str]] = set()
        copies: list[tuple[tuple[str, int, str, str], tuple[str, str, int, str]]] = []
        own: set[tuple[str, str, int, str]] = set()  # rows with a try of their own among their fault replays
        for run in self.runs:
            for case_id, epoch, criterion, made, cached in run._journal.fault_replay_times():
                row = (run.run_id, case_id, epoch, criterion)
                if cached:
                    copies.append(((case_id, epoch, criterion, made), row))
                else:
                    live.add((case_id, epoch, criterion, made))
                    own.add(row)
        repeated: set[tuple[str, str, int, str]] = set()
        for replay, row in copies:
            if replay in live:
                repeated.add(row)
            else:
                live.add(replay)  # the first copy of a replay made outside the pool counts; later ones repeat it
                own.add(row)
        # a row of calls: every is one verdict over each call's replay: a repeat only when every one of them is
        # (its first call's replay from the cache, its second call's its own: a try of the agent, kept)
        return frozenset(repeated - own)

    @cached_property
    def replay_records(self) -> list[ReplayRecord]:
        """Every record of ``replays.jsonl`` (control and faulted replays) of a recorded case."""
        return [rec for r in self.runs for rec in r._journal.replay_records()]

    # -- frames -----------------------------------------------------------------------------
    cases = _FrameAttribute("""One row per case.

    Columns: ``case_id, source_id, transform, cluster, digest, status, answer,
    n_tool_calls, trajectory_length, duration_s, error, has_state, epoch, started_at,
    metadata`` (see ``oloproof_nb._analysis.columns.CASES`` for each one's
    dtype and meaning). ``status`` is the trajectory's own (``completed``,
    ``failed``, ``waiting``) or the harness's (``error``, ``timeout``).
    A pooled run's frames start with ``run_id`` (``snapshots`` keeps its own, last). Every frame carries
    ``epoch``: the repetition (1..k) of a run with ``epochs: k`` (1 otherwise); ``case_id`` stays the case's, so
    (``case_id``, ``epoch``) identifies one run of a case, and its rows in every frame.
    """)
    steps = _FrameAttribute("""One row per trajectory step.

    Columns: ``case_id, step, kind, tool, args, result, is_error, epoch, role, content``;
    ``kind`` is ``tool_call`` or ``message``, tool fields are empty on message rows.
    """)
    snapshots = _FrameAttribute("""One row per recorded state (``environment_state/v1``).

    Columns: ``case_id, schema, captured_at, state_digest, state, epoch, case_digest,
    system_version, run_id``. The states are read from the run's state store
    (each distinct state once) when this frame is first read; rows with the
    same state share one object, and so do :meth:`record` and the case panel:
    treat a state as read-only (``copy.deepcopy`` it before a what-if edit).
    """)
    changes = _FrameAttribute("""One row per leaf of a recorded state that differs from ``initial_state``.

    Columns: ``case_id, path, before, after, epoch`` (ABSENT on the side where the leaf does not exist).
    """)
    verdicts = _FrameAttribute("""One row per case × criterion.

    Columns: ``case_id, cluster, criterion, evaluator, verdict, reason, epoch``; ``verdict``
    is ``pass``, ``fail`` or ``missing`` (a missing case never passes). Every epoch of a case
    is in the case's cluster.
    """)
    comparisons = _FrameAttribute("""One row per compared path.

    Columns: ``case_id, criterion, path, expected, actual, ok, epoch``.
    """)
    replays = _FrameAttribute("""One row per fault replay of a case.

    Columns: ``case_id, criterion, tool, fault, checkpoint, control_reproduced,
    recovered, escalated, constraint_broken, verdict, reason, cached, epoch`` (each epoch
    is replayed on its own).
    """)
    pairs = _FrameAttribute("""One row per metamorphic pair and relation.

    Columns: ``source_id, derived_id, transform, relation, criterion, holds, label, cluster, epoch``
    (a derived case's epoch is paired with its source's same epoch).
    """)
    receipts = _FrameAttribute("""One row per outcome receipt.

    Columns: ``case_id, artifact_id, run_started_at, observed_at, modified_at,
    expected_sha256, observed_digest, digest_kind, validator, validator_exit_code,
    evidence_source, status, reason, epoch``.
    """)

    def summary(self) -> pd.DataFrame:
        """Per criterion: rows and pass / fail / missing counts (raw counts, unrounded)."""
        v = self.verdicts
        if v.empty:
            return pd.DataFrame(columns=["criterion", "evaluator", "n", "passed", "failed", "missing"])
        counts = pd.crosstab([v["criterion"], v["evaluator"]], v["verdict"])
        for col in ("pass", "fail", "missing"):
            if col not in counts.columns:
                counts[col] = 0
        out = counts.reset_index().rename(columns={"pass": "passed", "fail": "failed"})
        out.columns.name = None  # not the crosstab's "verdict" label
        out["n"] = out["passed"] + out["failed"] + out["missing"]
        order = {name: i for i, name in enumerate(self.criteria)}
        out = out.sort_values("criterion", key=lambda s: s.map(order).fillna(len(order)))
        return out[["criterion", "evaluator", "n", "passed", "failed", "missing"]].reset_index(drop=True)


def _criteria(run: Run) -> list[tuple[str, str]]:
    return [(ev.name, ev.type) for ev in run.config.evaluators]


def unscored_difference(a: Run, b: Run) -> str:
    """The copies one run's verdicts leave out and the other's score (:attr:`Run.unscored_ids`), in words
    (``1 scored in one of the two only, first 'ord-018~injected'``), or "" when both leave out the same."""
    moved = sorted(a.unscored_ids ^ b.unscored_ids)
    return f"{len(moved)} scored in one of the two only, first {moved[0]!r}" if moved else ""


def validity_check_difference(a: Run, b: Run) -> str:
    """How ``b``'s suite checks the validity labels otherwise than ``a``'s, for runs whose labels are the same but
    whose verdicts leave out other copies (:attr:`Run.unscored_ids`): the first transform both declare whose
    ``minimum_validity`` differs (``transform injected: minimum_validity 0.99, not 0.85``), else ``other
    transforms or another case file``. ``op.load_runs`` refuses to pool such runs, and a baseline made so is refused."""
    mine = {t.name: t.minimum_validity for t in a.config.metamorphic.transforms}
    for t in b.config.metamorphic.transforms:
        if t.name in mine and t.minimum_validity != mine[t.name]:
            return (f"transform {t.name}: minimum_validity {yaml_number(t.minimum_validity)}, not "
                    f"{yaml_number(mine[t.name])}")  # every digit: 0.8500001 and 0.85 read "0.85, not 0.85"
    return "other transforms or another case file"


def label_difference(a: Mapping[str, Sequence[Mapping[str, Any]]], b: Mapping[str, Sequence[Mapping[str, Any]]],
                     ) -> str:
    """How two runs' validity labels differ (``transform injected: ord-024~injected is labeled otherwise``), or
    empty when every pair has the same label (the majority of its judgements) in both: a reworded note, or one
    more judgement that changes no majority, is no difference. ``op.load_runs`` refuses to pool such runs,
    ``op.compare`` notes them, and a baseline whose labels leave out other copies than the run's is refused."""
    for transform in sorted(set(a) | set(b)):
        left, right = pair_labels(a.get(transform, [])), pair_labels(b.get(transform, []))
        if left != right:
            case_id = min(c for c in set(left) | set(right) if left.get(c) != right.get(c))
            return f"transform {transform}: {case_id} is labeled otherwise"
    return ""


def _of_the_run(chunks: Iterator[Chunk], directory: Path, run_id: str, epochs: int = 1) -> Iterator[Chunk]:
    """``chunks`` as they are, refusing a case record whose state another run wrote (its ``environment_state``
    names that run): a folder holding one run's manifest and another's journal (two runs' files merged into one
    folder) was gated on the other run's records under the manifest's name, system and settings (review R16: a
    regressed run's folder holding an earlier run's journal gated PASS). A record names its run itself (``run_id``)
    since this version, so a record without a state (a system without ``snapshot()``, a case that raised) is
    checked too; one written before names no run unless its state does.

    A record of an epoch the run does not have (not 1..``epochs``, the manifest's) is refused too: the completeness
    check counts records, so a journal whose failing epoch-2 record was replaced by a passing one marked epoch 4
    held 90 records for a run of 30 cases × 3 epochs and gated PASS on pass^3 (review R22)."""
    for chunk in chunks:
        for rec in chunk[0]:
            epoch = (rec.get("case") or {}).get("epoch", 1)
            if type(epoch) is not int or not 1 <= epoch <= epochs:  # bool is no epoch
                raise RunDirError(f"{directory / CASES}: the record of case {(rec.get('case') or {}).get('id')!r} is "
                                  f"of epoch {epoch!r}, but run {run_id} has epochs 1 to {epochs} (manifest.json); "
                                  "the run directory is damaged")
            env = rec.get("environment_state")
            writer = rec.get("run_id", run_id)
            if writer == run_id and isinstance(env, dict):
                writer = env.get("run_id")
            if writer != run_id:
                case = rec.get("case") or {}
                raise RunDirError(f"{directory / CASES}: the record of case {case.get('id')!r} was written by run "
                                  f"{writer}, not run {run_id} that manifest.json names (files of two runs in one "
                                  "folder?); the run directory is damaged")
        yield chunk


def _counted(chunks: Iterator[Chunk], done: list[int]) -> Iterator[Chunk]:
    """``chunks`` as they are, ``done[0]`` raised by a chunk's records once the next chunk is asked for."""
    for chunk in chunks:
        yield chunk
        done[0] += len(chunk[0])


def _check_clusters(runs: Sequence[Run]) -> None:
    """Raise unless every case is in the same cluster in each of ``runs`` that recorded it.

    A case whose ``cluster`` changed between two runs (the case file regrouped, the ids and digests the same)
    would be in two clusters of the pooled run, its rows counted as independent evidence.
    """
    seen = pd.concat([r.cases[["case_id", "cluster"]].assign(run=r.run_id) for r in runs], ignore_index=True)
    seen = seen.drop_duplicates(["case_id", "cluster"])
    split = seen[seen["case_id"].duplicated(keep=False)]
    if len(split):
        first = split[split["case_id"] == split["case_id"].iloc[0]]
        cid, (a, b), (ca, cb) = first["case_id"].iloc[0], first["run"].iloc[:2], first["cluster"].iloc[:2]
        raise OloproofError(f"runs {a} and {b} put case {cid!r} in different clusters ({ca!r}, {cb!r}), so its "
                            "rows would count as independent evidence; pool runs whose cases keep their clusters")


def _with_run_id(frame: pd.DataFrame, run_id: str) -> pd.DataFrame:
    if "run_id" in frame.columns:
        return frame
    out = frame.copy(deep=False)
    out.insert(0, "run_id", pd.Series([run_id] * len(frame), dtype=frames.TEXT))
    return out


def load_run(directory: str | Path) -> Run:
    """Open a run directory as a :class:`Run` (see :meth:`Run.load`)."""
    return Run.load(run_directory(directory, "load_run"))


def run_directory(value: Any, who: str) -> str | Path:
    """``value`` when it is a path (a ``str`` or an ``os.PathLike``); else a one-line error naming ``who``."""
    if isinstance(value, (str, os.PathLike)):
        return Path(value)
    raise OloproofError(f"{who}: a run directory must be a path (str or pathlib.Path), got {type(value).__name__}")


def as_run(value: Any, who: str) -> Run:
    """``value`` as a Run: a Run, or the directory of a stored run (opened); else a one-line error naming the
    argument, ``who`` (``"gate: run"``, ``"compare: base"``): a frame of a run, ``run.verdicts``, given where the
    run is wanted raised AttributeError from pandas."""
    if isinstance(value, Run):
        return value
    if isinstance(value, (str, os.PathLike)):
        return Run.load(Path(value))
    hint = "; give the Run itself, not one of its frames" if isinstance(value, pd.DataFrame) else ""
    raise OloproofError(f"{who} must be a Run (op.run, op.load_run) or a run directory, got "
                        f"{type(value).__name__}{hint}")


def directory_list(directories: Sequence[str | Path]) -> list[str | Path]:
    """``directories`` (any iterable) as a list, refusing one path given alone (a string is a sequence too) and an
    item that is no path."""
    if isinstance(directories, (str, bytes, os.PathLike)):
        raise OloproofError("load_runs takes a list of run directories; for one run use load_run")
    try:
        items = list(directories)  # a list, a generator (Path.glob), a pandas Series, a set …
    except TypeError:
        raise OloproofError(f"load_runs takes a list of run directories, got {type(directories).__name__}") from None
    return [run_directory(d, f"load_runs: item {i}") for i, d in enumerate(items)]


def load_runs(directories: Sequence[str | Path]) -> Run:
    """Open several run directories of one suite as one :class:`Run` (see ``op.load_runs``)."""
    return Run.pool([Run.load(d) for d in directory_list(directories)])


def _code_of(run: Run, ev: Evaluator) -> dict[str, tuple[str, str | None]]:
    """What of the suite's own code ``ev`` calls in ``run``: ``{option or "validators.<name>": (module:function,
    digest)}`` (its python check, each validator it may run, by the name a case's contract gives); the digest is
    None when the run did not record it (written before runs did)."""
    registered = run.config.validators
    calls = [(option, spec) for option, spec in ev.user_code()]
    calls += [(f"validators.{name}", registered[name]) for name in ev.validators_run(list(registered))]
    return {what: (spec, run.manifest.digests.get(CODE_KEY + spec)) for what, spec in calls}


def _check_one_code(runs: Sequence[Run]) -> None:
    """Every run that recorded the code of a check the first run's criteria call recorded the same: a run that
    recorded none (written before runs did) passes the comparison with the first run, so the code of the others
    is compared among them too (one pass over the runs, whatever their number)."""
    first = runs[0]
    criterion_of: dict[str, str] = {}
    for ev in first.config.evaluators:
        for spec, _ in _code_of(first, ev).values():
            criterion_of.setdefault(spec, ev.name)
    seen: dict[str, tuple[str, str]] = {}  # spec -> (digest, run id) of the first run that recorded it
    for run in runs:
        for spec, criterion in criterion_of.items():
            digest = run.manifest.digests.get(CODE_KEY + spec)
            if digest is None:
                continue
            earlier = seen.setdefault(spec, (digest, run.run_id))
            if earlier[0] != digest:
                raise OloproofError(f"runs {earlier[1]} and {run.run_id} judge {criterion} with different checks "
                                    f"(the code of {spec} differs); pool runs of the same suite configuration "
                                    "and code")


def _rule_of(run: Run) -> tuple[list[str], ...]:
    """The suite's tool_errors rule as what it decides: each list a set, status values without case."""
    rule = run.config.tool_errors
    return (sorted(set(rule.ok_keys)), sorted(set(rule.error_keys)), sorted(set(rule.status_keys)),
            sorted({v.casefold() for v in rule.status_values}))


def _replay_checks(run: Run) -> tuple[Any, ...]:
    """What a fault replay is judged with (``evaluators/fault.py`` ``judge_replay``), as it uses it: the
    ``normalize`` flags of the answer checks, the settings of the state checks (the defaults when the suite
    declares none) and the paths every ``state_unchanged`` check keeps, each a set; and whether an
    ``outcome_contract`` check judges the cases (a recovery only the answer shows is then ``missing``: a suite that
    gained one compared its fault criterion as unchanged, reviews M54, F52)."""
    answers, states, unchanged = replay_judges(run.config.evaluators)
    kept = {path for ev in unchanged for path in ev.paths}
    outcomes = any(ev.type == "outcome_contract" for ev in run.config.evaluators)
    return (sorted({ev.normalize for ev in answers}),
            sorted({json.dumps(ev.settings(), sort_keys=True, default=str) for ev in states}), sorted(kept), outcomes)


def _pair_paths(run: Run) -> tuple[list[str], list[str], list[tuple[str, str, str | None]]]:
    """What a ``same_state`` pair is compared outside and inside of (``_core/pairs.py`` ``compare_pair``), each a
    set: the ``ignore:`` patterns every ``changes`` or ``whole`` ``state_matches`` check gives, and the paths a
    ``state_unchanged`` or ``paths``-mode check keeps; and the list rules every ``state_matches`` check gives, by
    which its lists are aligned, in order (the first match wins)."""
    evaluators = run.config.evaluators
    lists: list[tuple[str, str, str | None]] = [(pattern, rule.how, rule.key)
                                                for pattern, rule in shared_list_rules(evaluators).items()]
    return sorted(set(ignored_paths(evaluators))), sorted(set(pinned_paths(evaluators))), lists


def changed_checks(a: Run, b: Run) -> dict[str, str]:
    """The criteria both runs judge whose checks differ, each with how (in ``a``'s order of criteria).

    A check differs when its evaluator's settings do (:meth:`~oloproof_nb._core.evaluator.Evaluator.settings`),
    when the rest of the suite does for an evaluator judged with it (``fault_recovery``: the ``tool_errors`` rule,
    compared as what it decides, and the answer and state checks its replays are judged with; a ``same_state``
    relation: the ``ignore:`` patterns its pairs are compared outside and the paths kept under them, see
    :func:`~oloproof_nb._config.shared_rules.ignored_paths`),
    or when the suite's own code it calls does: a ``python`` check's function, the registered validators an
    ``outcome_contract`` may run (another set of names, another ``module:function`` under a name, or another
    digest of its code, which each run records in its manifest: any edit of the function's module file counts).
    A digest only one run recorded (the other was written before runs recorded code) cannot tell, and does not
    count. ``op.compare`` calls such a criterion ``check_changed``; ``op.load_runs`` refuses to pool its runs, and
    a baseline judged by other checks is refused.
    """
    theirs = {ev.name: ev for ev in b.config.evaluators}
    out = {}
    for ev in a.config.evaluators:
        other = theirs.get(ev.name)
        if other is None:
            continue
        if ev.settings() != other.settings():
            out[ev.name] = "configured differently"
            continue
        if ev.judged_with_the_suite and _rule_of(a) != _rule_of(b):
            out[ev.name] = "the suite's tool_errors rule differs"
            continue
        if ev.judged_with_the_suite and _replay_checks(a) != _replay_checks(b):
            out[ev.name] = "the answer, state and outcome checks its replays are judged with differ"
            continue
        if isinstance(ev, MetamorphicRelation) and ev.relation == "same_state" and _pair_paths(a) != _pair_paths(b):
            # a pair is compared outside the state checks' ignore patterns: a candidate's suite that ignored what
            # its injected copies changed held every pair, NO_REGRESSION (review F41)
            out[ev.name] = ("the state checks' ignore patterns or kept paths (or list rules) its pairs are compared "
                            "by differ")
            continue
        mine, yours = _code_of(a, ev), _code_of(b, other)
        if mine.keys() != yours.keys():
            out[ev.name] = "it may run other validators"
            continue
        for what, (spec, digest) in mine.items():
            their_spec, their_digest = yours[what]
            if spec != their_spec:
                out[ev.name] = f"{what} is {their_spec}, not {spec}"
            elif digest is not None and their_digest is not None and digest != their_digest:
                out[ev.name] = f"the code of {spec} differs"
            else:
                continue
            break
    return out
