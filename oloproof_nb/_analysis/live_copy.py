"""The columnar copy of a new run, built from its records as the runner appends them.

``op.run`` hands a :class:`LiveCopy` to the runner: every case record is
turned into frame rows as it arrives (in case order; the rows keep cells, JSON
values as their text, never the record), and the rows of :data:`CHUNK` cases at
a time into Arrow tables streamed into the Parquet files of a temporary folder,
and :meth:`LiveCopy.commit` finishes the copy once the run directory is final,
so the journal just written is not read back. The rows are those of
:func:`~oloproof_nb._analysis.frames.journal_items` over the same records; the
copy records the journal fingerprint taken at commit, exactly like a copy built
from the journal (``Run.load`` then finds it fresh).

Whenever the copy cannot be trusted to equal the journal's — a record missing
or seen twice, a write error, a run stopped early, a record it cannot read — the
copy is dropped and ``Run.load`` builds it from the journal as for any run. A
record it cannot read never stops the run: what it raised is raised by
:meth:`LiveCopy.commit`, once the run is final.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from .._core.pairs import Packed, PairViews, Shared, pack_view
from .._core.records import CaseRecord
from .._run.store import read_manifest
from . import frames
from .columnar import CopyWriter, journal_fingerprint, to_arrow
from .columns import FRAMES
from .run import Run

#: Cases whose rows are turned into Arrow tables at a time. Small, so the process does not hold a run's rows:
#: a chunk's tables are Arrow buffers, which the garbage collector never walks. The writer gathers the chunks
#: into row groups.
CHUNK = 256

__all__ = ["LiveCopy"]


class LiveCopy:
    """Builds a run's columnar copy from the case records the runner appends (a ``RecordSink``).

    Records may arrive out of case order (``workers`` > 1): each is held until
    the records before it have arrived, then rows are made in case order.
    """

    def __init__(self) -> None:
        self._run: Run | None = None
        self._writer: CopyWriter | None = None
        self._waiting: dict[int, tuple[CaseRecord, str | None, str | None]] = {}
        self._next = 0
        self._chunk: frames.ChunkItems | None = None  # the items of the records taken since the last chunk
        self._kept: list[Packed] = []  # each record's pair view, packed (run-scope evaluators)
        self._share = Shared()  # one object for the equal texts of the packed views
        self._run_scope = False
        self._unscored: frozenset[str] = frozenset()
        self._broken = False
        self._unreadable: Exception | None = None  # what a record the copy could not read raised (commit raises it)

    @property
    def usable(self) -> bool:
        """Whether the copy is still being built (False once something made it untrustworthy)."""
        return not self._broken and self._writer is not None

    def start(self, directory: Path) -> None:
        """Open the copy of the run in ``directory`` (its manifest says how its frames are made)."""
        try:
            self._run = Run(directory, read_manifest(directory))
            self._writer = CopyWriter(directory, {})
        except (OSError, ValueError):
            self._broken = True
            return
        config = self._run.config
        self._run_scope = any(ev.scope == "run" for ev in config.evaluators)
        self._unscored = self._run.unscored_ids  # as the journal's frames: no verdicts of the copies labeled invalid
        self._tool_errors = config.tool_errors
        self._chunk = frames.ChunkItems(self._tool_errors, unscored=self._unscored)

    def add(self, record: CaseRecord, state_ref: str | None, initial_ref: str | None = None) -> None:
        """Take one appended case record and the addresses of its final and initial states (None: not in
        the state store; an initial state without an address is kept as it is for the run's pairs)."""
        if not self.usable:
            return
        index = record["index"]
        if index == self._next and not self._waiting:  # the next record, none waiting (one worker): taken at once
            self._take((record, state_ref, initial_ref))
            return
        if index < self._next or index in self._waiting:  # seen twice: the journal keeps the first, do not guess
            self._drop()
            return
        self._waiting[index] = (record, state_ref, initial_ref)
        while self._next in self._waiting:
            self._take(self._waiting.pop(self._next))

    def _take(self, item: tuple[CaseRecord, str | None, str | None]) -> None:
        """Turn the next record in case order into rows at once (it is not held: its rows keep only cells, and
        their JSON cells as text); a full chunk's rows become Arrow tables. A record whose rows cannot be made
        drops the copy (the run goes on; :meth:`commit` raises what it raised)."""
        assert self._chunk is not None  # usable
        record, ref, initial = item
        try:
            self._chunk.add(record, ref)
            if self._run_scope:
                self._kept.append(pack_view(record, initial, ref, self._share))
            self._next += 1
            if self._chunk.records == CHUNK:
                self._flush()
        except Exception as exc:  # raised by commit, once the run is final
            # a record the copy cannot read: the copy is dropped and the run goes on (raised here, it stopped the
            # run as an internal error at that case, its journal unfinished)
            self._drop()
            self._unreadable = exc

    def _flush(self) -> None:
        if self._chunk is None or not self._chunk.records or not self.usable:
            return
        chunk, self._chunk = self._chunk, frames.ChunkItems(self._tool_errors, unscored=self._unscored)
        self._write(chunk.parts())

    def _write(self, parts: Any) -> None:
        assert self._writer is not None
        try:
            for name, items, state_refs in parts:
                self._writer.write(name, to_arrow(FRAMES[name], items, state_refs))
        except (OSError, pa.ArrowException):
            self._drop()

    def commit(self) -> bool:
        """Finish the copy of a finished run; whether it was written.

        Call it after the run directory is final (the runner returned): the copy records the journal
        as it is then.
        """
        if self._unreadable is not None:  # dropped during the run: raised now, as a record of the last chunk is
            unreadable, self._unreadable = self._unreadable, None
            raise unreadable
        manifest = self._run.manifest if self._run is not None else None
        if manifest is not None and self.usable and (self._waiting or self._next != manifest.n_cases * manifest.epochs):
            self._drop()  # a record the journal holds was not seen (or the other way round)
        try:
            self._flush()
            if not self.usable:
                return False
            assert self._run is not None and self._writer is not None
            run_scope = self._run._run_scope if self._run_scope else None
            self._write(frames.run_scope_items(run_scope, PairViews(self._kept, self._run._some_states)))
            if not self.usable:
                return False
            self._writer.fingerprint = journal_fingerprint(self._run.directory)
            try:
                self._writer.commit()
            except (OSError, pa.ArrowException):
                self._drop()
                return False
        except BaseException:  # a record the copy cannot read, Ctrl-C: raised as before, its temporary folder removed
            self._drop()
            raise
        self._writer = None
        return True

    def abort(self) -> None:
        """Drop the copy (the run stopped early): nothing is left in the run directory."""
        self._drop()

    def _drop(self) -> None:
        self._broken = True
        self._chunk, self._kept, self._waiting = None, [], {}
        if self._writer is not None:
            self._writer.abort()
            self._writer = None
