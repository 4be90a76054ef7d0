"""A Run's columnar copy: opened, (re)built from the journal, and watched (a mixin of :class:`~.run.Run`).

Loading a run reads its ``manifest.json`` only, once the run has a fresh
columnar copy (``frames/*.parquet``, see ``_analysis/columnar.py``); without one
(a run that just finished, a partial run, a journal newer than the copy) the
copy is built from the JSONL journal first, chunk by chunk (:data:`CHUNK` cases
at a time), or the frames are kept in memory where the folder cannot be written
(:class:`ColumnarCopyWarning`). A case record that is not what oloproof_nb writes,
or that another run wrote, is refused naming its line or its run.

:class:`ColumnarCopy` holds the methods that open, build and watch the copy; the
state they work on is the :class:`~.run.Run`'s (declared here for the type
checker, set by ``Run.__init__``). A copy another process put in place since is
noticed (:meth:`ColumnarCopy._same_copy`) and reading from it refused.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa

from .._config.suite_config import SuiteConfig
from .._core.labels import Label, transform_pair_labels
from .._core.pairs import pack_view
from .._core.records import CaseRecord, Manifest, PairRow, RunVerdictRow, StoredSuite
from .._run.states import StateReader
from .._run.store import CASES, MANIFEST, read_manifest, refuse_changed_journal
from ..errors import OloproofError, RunDirError, describe_exception, quote_value, warn_at_caller
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
    same_copy,
    sweep_abandoned,
    to_arrow,
)
from .columns import FRAMES
from .journal import Chunk, Journal

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["ColumnarCopy", "ColumnarCopyWarning", "CHUNK"]

#: Case records converted to frames at a time when the columnar copy is built. Small, as in the live copy
#: (``live_copy.CHUNK``): records held across many allocations are promoted to the oldest generation, and
#: every 25% more of it costs a full pass of the garbage collector (``benchmarks/convert.py`` counts them;
#: ``benchmarks/README.md``, "Converting, second pass").
CHUNK = 256
#: Times :meth:`Run.load` looks for a whole columnar copy while other processes keep putting new ones in place.
_OPEN_ATTEMPTS = 5
#: What making a case record's frame rows raises when the record is not what oloproof_nb writes (a key
#: missing, a value of the wrong type). Arrow's conversion errors are among them (ValueError, TypeError, and
#: OverflowError for a whole number beyond an ``int64`` column's: a validator exit code of 2**70 edited in).
_SHAPE_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError)


class ColumnarCopyWarning(UserWarning):
    """The columnar copy of a run could not be written (a read-only folder): frames come from the journal."""


class ColumnarCopy:
    """The columnar copy of a :class:`~.run.Run`: opening it, (re)building it from the journal (or keeping the
    frames in memory where it cannot be written), and refusing reads once another copy is in place.

    A mixin: ``Run.__init__`` sets the attributes declared here.
    """

    _directory: Path  # Run.directory gives it (it cannot be set)
    _manifest: Manifest  # Run.manifest gives it, itself (see _take_manifest)
    _as_read: Manifest  # a copy of it as it was read, its labels left out (see _take_manifest)
    _config: SuiteConfig  # the run's (Run.config gives a copy each read)
    _labels: dict[str, list[dict[str, Any]]]
    _states: StateReader
    _journal: Journal
    _manifest_read: list[int] | None
    _in_memory: dict[str, pd.DataFrame] | None
    _members: list[Self] | None
    _held: bool
    _source: str | None
    _frames: dict[str, pd.DataFrame]
    _replaced: set[str]

    if TYPE_CHECKING:  # the Run's (the manifest it holds, the folder it was read from)
        @property
        def manifest(self) -> Manifest: ...

        @property
        def directory(self) -> Path: ...

    @cached_property
    def _pair_labels(self) -> dict[str, dict[str, Label]]:
        """Each transform's pair labels (:func:`~oloproof_nb._core.labels.transform_pair_labels` of :attr:`_labels`),
        worked out once: ``op.validity``, the copies the verdicts leave out and the gate's label check read them, and
        the gate worked them out four times (50,000 judgements of the 100,000-case benchmark)."""
        return transform_pair_labels(self._labels)

    def _take_manifest(self, manifest: Manifest) -> None:
        """Hold ``manifest`` as the run's (``run.manifest`` gives this very object: a copy each read would be 12 MB at
        100,000 cases), with what tells an edit in place of it (:meth:`_manifest_edits`): a copy of it as read, but
        for its validity labels, and the Run's own copy of those (:attr:`_labels`, what the Run judges by; each
        judgement copied, its ``case_id`` and ``valid``, all that decides a copy, are text and a bool)."""
        self._manifest = manifest
        stored = manifest.suite_config
        self._labels = {name: [dict(judgement) for judgement in judgements]
                        for name, judgements in stored.labels.items()}
        unlabeled = manifest.model_copy(update={"suite_config": stored.model_copy(update={"labels": {}})})
        self._as_read = unlabeled.model_copy(deep=True)  # the labels, the bulk of a large manifest, are not copied

    def _manifest_edits(self) -> list[str]:
        """The fields of the manifest this Run holds that differ from it as read (:meth:`_take_manifest`): edited in
        place in this session (``run.manifest.n_cases = …``), in the manifest's order, ``suite_config``'s as
        ``suite_config.vacuous``; empty for none. Each is compared by value (its labels, 50,000 at 100,000 cases,
        in a few milliseconds), so a value put back is no edit."""
        now, was = self._manifest, self._as_read
        edits: list[str] = []
        for name in Manifest.model_fields:
            if name != "suite_config":
                edits += [name] if getattr(now, name, None) != getattr(was, name) else []
            elif not isinstance(now.suite_config, StoredSuite):  # set to something else (pydantic does not check)
                edits.append(name)
            else:
                stored, kept = now.suite_config, was.suite_config
                edits += [f"{name}.{part}" for part in StoredSuite.model_fields
                          if getattr(stored, part, None) != (self._labels if part == "labels" else getattr(kept, part))]
        return edits

    def _open_copy(self) -> None:
        """Make sure the run has a columnar copy and remember which one: every frame is read from it."""
        for _ in range(_OPEN_ATTEMPTS):
            self._source = fresh_source(self.directory)
            if self._source is None:
                self._write_copy()  # None after it: another copy is being put in place right now
            else:  # its records: those of the journal the copy was built from
                sweep_abandoned(self.directory)
                self._journal.pin(copied_size(self._source, CASES))
                if not self._manifest_of_copy():  # the run went on since that copy: look again
                    self._source = None
            if self._in_memory is not None or self._source is not None:
                return
        raise RunDirError(f"{self.directory}: its columnar copy kept being replaced while it was opened; "
                          "is another process rewriting it in a loop?")

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
            for name, table in self._journal_tables(manifest):
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
        ``oloproof gate`` BLOCKed it ("the run did not finish") while its journal PASSes.
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
        self._take_manifest(manifest)
        self._manifest_read = None  # read by the caller from a file whose size and mtime it did not keep
        self._frames.clear()
        self._replaced.clear()
        for name in ("records", "replay_records", "_unscored_ids", "_repeated_replays", "_pair_labels"):
            self.__dict__.pop(name, None)

    def _keep_in_memory(self, exc: OSError, manifest: Manifest) -> None:
        warn_at_caller(f"{self.directory}: cannot write the columnar copy ({exc}); the frames are built from the "
                       "journal and kept in memory", ColumnarCopyWarning)
        built: dict[str, list[pa.Table]] = {name: [] for name in FRAMES}
        for name, table in self._journal_tables(manifest):
            built[name].append(table)
        self._in_memory = {name: from_arrow(FRAMES[name], pa.concat_tables(tables), self._states.many)
                           for name, tables in built.items()}
        self._forget(manifest)

    def _journal_tables(self, manifest: Manifest) -> Iterator[tuple[str, pa.Table]]:
        """Every frame's Arrow rows from the journal, chunk by chunk, judged by ``manifest`` (see
        :meth:`_journal_items`).

        A case record that is valid JSON but not what oloproof_nb writes (a key missing, a value of the wrong
        type: edited by hand, or written by another tool) is a :class:`RunDirError` naming its line.
        """
        done = [0]  # records of the chunks converted so far: a damaged record is at or after done[0]
        try:
            for name, items, refs in self._journal_items(manifest, done):
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
        record in case order (then before it: pairing fails after the last chunk, with every record converted);
        its line number and why; None when there is none. In a run judged across cases a record's pair view and
        the source it names are checked too. Only called once a conversion failed; it reads one record at a time."""
        journal, run_scope = self._journal, any(ev.scope == "run" for ev in self._config.evaluators)
        entries = list(journal.case_index().items())
        for (case_id, epoch), (_, line) in entries[start:] + entries[:start]:
            try:
                record = journal.record(case_id, epoch)
                if record is None:
                    continue
                for name, items, refs in frames.chunk_items([record], [None], self._config.tool_errors):
                    to_arrow(FRAMES[name], items, refs)
                if run_scope:
                    pack_view(record)
                    _paired_by(record["case"])
            except OloproofError:
                raise
            except _SHAPE_ERRORS as exc:
                why = f"no key {exc.args[0]!r}" if type(exc) is KeyError and exc.args else describe_exception(exc)
                return line[2], why
        return None

    def _journal_items(self, manifest: Manifest, done: list[int] | None = None,
                       ) -> Iterator[tuple[str, list[Any], list[str | None] | None]]:
        """Every frame's items from the journal, chunk by chunk (see :func:`frames.journal_items`); the
        state reader holds one chunk's states at a time. ``done[0]`` counts the records of the chunks whose
        items were all taken.

        The run's ``run_id``, ``epochs`` and ``n_cases`` (the copies left out, the pairs a transform is checked
        over) are those of ``manifest``, the one read with the journal, never :attr:`manifest`: an edit of it in place
        (``run.manifest.n_cases = 70``) went into the frames built next (``write_columnar``, or the frames kept in
        memory of a folder that cannot be written), then was forgotten with the manifest they were built beside,
        and the gate PASSed on the copies the edit left out, ``oloproof gate`` of the folder too."""
        n_cases = manifest.n_cases

        def judged(records: Sequence[CaseRecord]) -> tuple[list[RunVerdictRow], list[PairRow]]:
            return frames.run_scope_rows(self._config, self._labels, records, n_cases)

        run_scope = judged if any(ev.scope == "run" for ev in self._config.evaluators) else None
        chunks = _of_the_run(self._journal.chunks(CHUNK, keep_states=False), self.directory, manifest.run_id,
                             manifest.epochs)
        return frames.journal_items(chunks if done is None else _counted(chunks, done), self._config.tool_errors,
                                    run_scope, self._some_states,
                                    frames.unscored_cases(self._config, self._pair_labels, n_cases))

    def _run_scope(self, records: Sequence[CaseRecord]) -> tuple[list[RunVerdictRow], list[PairRow]]:
        """Verdicts judged across cases (metamorphic pairs), from every case record."""
        return frames.run_scope_rows(self._config, self._labels, records, self.manifest.n_cases)

    def _some_states(self, refs: list[str]) -> list[Any]:
        """The states stored at ``refs``, in one pass: the reader lets go of the states it read before, so
        judging the pairs of a run whose cases all hold different states never holds them all."""
        self._states.release()
        return self._states.many(refs)


def _of_the_run(chunks: Iterator[Chunk], directory: Path, run_id: str, epochs: int = 1) -> Iterator[Chunk]:
    """``chunks`` as they are, refusing a case record whose state another run wrote (its ``environment_state``
    names that run): a folder holding one run's manifest and another's journal (two runs' files merged into one
    folder) was gated on the other run's records under the manifest's name, system and settings (a
    regressed run's folder holding an earlier run's journal gated PASS). A record names its run itself (``run_id``)
    since this version, so a record without a state (a system without ``snapshot()``, a case that raised) is
    checked too; one written before names no run unless its state does.

    A record of an epoch the run does not have (not 1..``epochs``, the manifest's) is refused too: the completeness
    check counts records, so a journal whose failing epoch-2 record was replaced by a passing one marked epoch 4
    held 90 records for a run of 30 cases × 3 epochs and gated PASS on pass^3."""
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


def _paired_by(case: Mapping[str, Any]) -> None:
    """Raise :class:`TypeError` when a case's ``source_id`` is neither text nor null: pairing looks a derived case's
    source up by it after the last chunk, where a list there stopped the conversion with "unhashable type", an
    internal error, where any other damage names the record's line."""
    source_id = case.get("source_id")
    if source_id is not None and type(source_id) is not str:
        raise TypeError(f"source_id {quote_value(source_id)} is not text")


def _counted(chunks: Iterator[Chunk], done: list[int]) -> Iterator[Chunk]:
    """``chunks`` as they are, ``done[0]`` raised by a chunk's records once the next chunk is asked for."""
    for chunk in chunks:
        yield chunk
        done[0] += len(chunk[0])
