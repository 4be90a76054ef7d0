"""The Run: a stored run's manifest and its tidy frames, read lazily (no display here; the face adds it).

Loading a run reads its ``manifest.json`` only, once the run has a fresh
columnar copy (``frames/*.parquet``, see ``_analysis/columnar.py``); without one
(a run that just finished, a partial run, a journal newer than the copy) the
copy is built from the JSONL journal first, chunk by chunk (``_analysis/run_copy.py``,
a mixin of the Run). Each frame is then read from its Parquet file on first access,
and the states of ``snapshots`` from the run's state store only when that frame is
read. Case records (for the case panel) are read one case at a time from the journal.

A Run reads every frame from the copy it was loaded with, and its case records
(``records``, ``record``, the case panel, the replay counts) from the lines of the
journal that copy was built from: a record appended since (the run resumed, or
still going) is not the Run's. When another process has since put a newer copy
in place (the run went on, or was resumed), or moved, deleted or replaced the
folder, reading a frame not read yet or a record raises
:class:`~oloproof_nb.errors.CopyChangedError` saying which (load the run again)
rather than mixing two moments of the run, or two runs.

Several runs pooled into one (``op.load_runs``): ``_analysis/run_pool.py``; how two
runs' checks differ: ``_analysis/run_checks.py``.
"""

from __future__ import annotations

import copy
import difflib
import numbers
import os
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar, overload

import pandas as pd

from .._config.files import file_above, folder_problem, home_shorthand, not_home
from .._config.labels import same_name
from .._config.release import ReleaseConfig
from .._config.suite import release_from_manifest
from .._config.suite_config import SuiteConfig, parse_suite_config
from .._core.labels import Label
from .._core.records import CaseRecord, Manifest, ReplayRecord
from .._run.locate import runs_hint
from .._run.states import StateReader
from .._run.store import MANIFEST, REPLAYS, read_manifest, refuse_changed_journal, refuse_dangling_run_dir
from ..errors import CopyChangedError, OloproofError, RunDirError, quote
from . import frames
from .columnar import journal_fingerprint, read_frame
from .columns import FRAMES
from .journal import Journal
from .run_copy import ColumnarCopy

__all__ = ["Run", "load_run", "as_run", "run_directory", "stored_pair_labels", "expected_case_runs",
           "case_run_unit"]

R = TypeVar("R", bound="Run")

#: pandas 3 copies a table only when one of its sharers writes to it, so a shallow copy is a copy of its own;
#: before, a shallow copy shares the values an in-place edit writes to, and the caller gets a deep copy.
_COPY_ON_WRITE = int(pd.__version__.split(".")[0]) >= 3

#: The most case ids :meth:`Run.record` searches for the one a missing id was likely meant to be.
_NEAR_IDS = 10_000


def _near_id(case_id: str, ids: list[str]) -> str:
    """The clause naming the id of ``ids`` that ``case_id``, which is none of them, was likely meant to be, or ``""``.

    A slip of the finger (``ord-21`` for ``ord-021``) names the nearest id (:mod:`difflib`). An id that reads as one
    of them (:func:`~oloproof_nb._config.labels.same_name`: ``"cafe\u0301"`` for ``"café"``, ``"ORD-021"``, a
    full-width or zero-width character) says so: quoted alike, ``no case 'café' …; did you mean 'café'?`` named the
    id the user had typed, and one in other case or width was named nothing. Over more ids than
    :data:`_NEAR_IDS` the search would take seconds (3.7 s over 100,000), and the line names none."""
    if len(ids) > _NEAR_IDS:
        return ""
    look = same_name(case_id)
    twin = next((cid for cid in ids if same_name(cid) == look), None)
    if twin is not None:
        return (f"; did you mean {twin!r}? It differs from it only in case, width, blank space, invisible characters "
                "or how an accent is encoded: copy the id as run.cases shows it")
    near = difflib.get_close_matches(case_id, ids, n=1, cutoff=0.6)
    return f"; did you mean {near[0]!r}?" if near else ""


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



class Run(ColumnarCopy):
    """A finished (or interrupted) run, read from its directory.

    A Run from ``op.run`` and one from ``op.load_run`` are the same: both read
    the run directory. Frames are read on first access from the run's
    columnar copy (``frames/*.parquet``), which :meth:`load` builds from the
    journal when it is missing or older than the journal.

    Attributes
    ----------
    directory : Path
        The run directory (a pooled run: its first run's); it cannot be set, as :attr:`suite_root`.
    suite_root : Path or None
        The suite folder the run was made from, as its manifest names it (None: no suite folder, an Inspect AI log).
    manifest : Manifest
        Its ``manifest.json`` (a pooled run: its first run's), the Run's own object: an edit of it in place makes its
        gate no release decision (``edited_frames``, as :attr:`replaced`), and it cannot be set.
    config : SuiteConfig
        The suite configuration the run used (a copy each read, as ``release`` and ``labels``: none can be set).
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
        The frames set on this Run in the session (``run.verdicts = frame``; pooled: on it or on one of its runs):
        computed on, but never a release decision (the gate's reason is ``edited_frames``).
    manifest_edits : tuple of str
        The fields of ``manifest`` edited in place in this session (pooled: of its runs' too): no release decision
        either (``edited_frames``).
    cases, steps, snapshots, changes, verdicts, comparisons, replays, pairs, receipts : pandas.DataFrame
        The run's frames, one row per case, step, recorded state, changed leaf, case × criterion, compared
        path, fault replay, metamorphic pair and outcome receipt; each attribute's docstring lists its
        columns (shared/DESIGN.md pins them). Each read gives a copy of its own.
    """

    def __init__(self, directory: Path, manifest: Manifest, config: SuiteConfig | None = None,
                 journal: Journal | None = None) -> None:
        directory = Path(directory).absolute()  # read lazily: a notebook's os.chdir must not change the run read
        self._directory = directory
        # the labels the Run judges by are not the manifest's own lists (relabeled there in place, the gate judged
        # the relation on those labels and PASSed), and the manifest, given itself, is watched for an
        # edit in place (see manifest_edits)
        self._take_manifest(manifest)
        stored = manifest.suite_config
        # read-only, as the run stored them (see release): the gate reads its evidence from them
        self._config: SuiteConfig = config if config is not None else parse_suite_config(stored.config,
                                                                                          directory / MANIFEST)
        self._release: ReleaseConfig | None = release_from_manifest(stored.release)
        self._suite_root = Path(stored.root) if stored.root else None
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
        given, directory = os.fspath(directory), Path(directory)  # as written: a Path drops the "./" of "./~/r1"
        # named as given: "./~/r1" printed "~/r1", the home folder's r1 (one given as "~/r1" is told so below)
        shown = given if isinstance(given, str) and home_shorthand(given) else not_home(directory)
        problem = folder_problem(directory)
        if problem is not None:
            raise RunDirError(f"{shown}: {problem}; give a run directory you can read")
        if not directory.is_dir():
            refuse_dangling_run_dir(directory)  # "no such run directory" of a link that is there
            above = file_above(directory)  # notes.txt/r1: the user sees notes.txt there
            if above is not None:
                raise RunDirError(f"{shown}: no run directory can be there: {above}; give a run directory (it "
                                  "holds manifest.json and cases.jsonl)")
            what = "not a directory" if directory.exists() else "no such run directory"
            home = None if directory.exists() or not isinstance(given, str) else home_shorthand(given)
            raise RunDirError(f"{shown}: {what} (a run directory holds manifest.json and cases.jsonl)"
                              + (f": {home}" if home else ""))
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
        on the run reads them, and its gate is no release decision (:func:`~.gate.no_decision`).

        A pooled run's include those set on its runs (``pooled.runs[3].cases = frame``): the gate of the pool reads
        each run's frames for its checks (``mixed_cases`` compares their ``cases``), and a pool of runs of two case
        files PASSed once the new cases were dropped from the last run's frame."""
        held = self._replaced.union(*(member._replaced for member in self._members or ()))
        return tuple(name for name in FRAMES if name in held)

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
    def manifest(self) -> Manifest:
        """The run's ``manifest.json`` as read (a pooled run: its first run's): the Run's own object, not a copy (it is
        12 MB at 100,000 cases). An edit of it in place (``run.manifest.finished_at = …``, ``.n_cases``, ``.epochs``,
        ``.system_version``, ``.suite_config.vacuous``, …) is what the gate, :func:`~.compare.compare` and a baseline
        read, so it makes the run no release decision (:attr:`manifest_edits`, the gate's ``edited_frames``), as a
        frame set in the session does; it cannot be set."""
        return self._manifest

    @manifest.setter
    def manifest(self, value: Manifest) -> None:
        raise OloproofError("run.manifest is the manifest.json the run was made with, as read; load the run again "
                            "(op.load_run) for the folder's own")

    @property
    def directory(self) -> Path:
        """The run directory the Run reads (a pooled run: its first run's), as an absolute path; it cannot be set:
        the frames are read from it, and set to another run's folder, the gate's next read was refused as "the folder
        was replaced"."""
        return self._directory

    @directory.setter
    def directory(self, value: Path) -> None:
        raise OloproofError("run.directory is the run directory the run was read from; load another run with "
                            "op.load_run(DIR)")

    @property
    def suite_root(self) -> Path | None:
        """The suite folder the run was made from, as its manifest names it (None: no suite folder, an Inspect AI
        log). It cannot be set, as :attr:`directory`: the gate compares the suite's files there with what the run
        recorded (a release.yaml changed since the run), and set to another folder, it compared that one's."""
        return self._suite_root

    @suite_root.setter
    def suite_root(self, value: Path | None) -> None:
        raise OloproofError("run.suite_root is the suite folder the run was made from, as its manifest stores it; "
                            "run the suite in another folder with op.run(op.load_suite(FOLDER))")

    @property
    def manifest_edits(self) -> tuple[str, ...]:
        """The fields of :attr:`manifest` edited in place in this session, each as the attribute edited:
        ``run.manifest.n_cases = 40`` gives ``("manifest.n_cases",)``, one of ``suite_config``
        ``"manifest.suite_config.vacuous"``; in the manifest's order, empty for none. A pooled run's are its runs'
        (its own manifest is its first run's), ``"runs[1].manifest.system_version"``. Like :attr:`replaced`, they
        make its gate no release decision (``edited_frames``, :func:`~.gate.no_decision`): an unfinished run given
        a ``finished_at``, or a run that lost records a smaller ``n_cases``, PASSed in a notebook where
        ``oloproof gate`` of the folder BLOCKs."""
        if self._members is None:
            return tuple(f"manifest.{name}" for name in self._manifest_edits())
        return tuple(f"runs[{i}].manifest.{name}" for i, member in enumerate(self._members)
                     for name in member._manifest_edits())

    @property
    def release(self) -> ReleaseConfig | None:
        """The suite's release.yaml as the run stored it when it started (None: it had none): a copy of it each
        read, as :attr:`labels` (its ``criteria`` and ``reductions`` are dicts: a threshold lowered in place,
        ``run.release.criteria["x"] = 0.5``, was the run's own, and the gate PASSed on it)."""
        return None if self._release is None else self._release.model_copy(deep=True)

    @release.setter
    def release(self, value: ReleaseConfig | None) -> None:
        # the gate compares the settings it is given with these, the run's own: set here, a threshold lowered in a
        # notebook was the run's own, and the gate PASSed warning that the run had been made with it
        raise OloproofError("run.release is the release settings the run was made with, as its manifest stores "
                            "them; gate with others by giving them: op.gate(run, release=...) or op.gate(run, "
                            "criteria={...})")

    @property
    def config(self) -> SuiteConfig:
        """The suite's oloproof.yaml as the run stored it when it started: a copy of it each read, as :attr:`labels`
        (its lists take an edit in place: a transform's ``minimum_validity`` lowered there,
        ``run.config.metamorphic.transforms[0] = t.model_copy(...)``, checked a transform the run had not, and its
        relation PASSed where the run BLOCKs)."""
        return self._config.model_copy(deep=True)

    @config.setter
    def config(self, value: SuiteConfig) -> None:
        # its epochs, transforms and minimum_validity decide fewer_epochs, the copies scored and whether a relation
        # is judged: set in a notebook, they were the run's own
        raise OloproofError("run.config is the suite configuration the run was made with, as its manifest stores "
                            "it; run the suite again with another configuration (op.run), or gate with other release "
                            "settings: op.gate(run, release=...)")

    @property
    def labels(self) -> dict[str, list[dict[str, Any]]]:
        """The validity labels the run was made with, by transform: a copy of them each read (an edit of it, a
        pair relabeled valid in a notebook, never reaches the gate; relabel the file and run the suite again)."""
        return copy.deepcopy(self._labels)

    @labels.setter
    def labels(self, value: dict[str, list[dict[str, Any]]]) -> None:
        # they decide which copies are scored and whether a transform is checked: set in a notebook, a relation
        # whose pairs were never labeled was judged, and could PASS, on labels the run was not made with
        raise OloproofError("run.labels are the validity labels the run was made with, as its manifest stores them; "
                            "relabel the files under labels/ and run the suite again (op.run)")

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
        return self._config.criteria  # a list of its own (not a copy of the whole configuration)

    @property
    def n_cases(self) -> int:
        """Cases recorded (rows of ``cases``)."""
        return len(self.cases)

    # -- records (read from the journal, one case at a time) --------------------------------
    def _member_of(self, case_id: str, epoch: int = 1) -> Run:
        if not isinstance(epoch, numbers.Integral) or isinstance(epoch, bool):  # "1" read "no epoch 1 (its epochs: 1)"
            raise OloproofError(f"epoch={quote(epoch)}: must be an integer (1 for the first epoch)")
        if self._members is None:
            return self
        holding = [m for m in self._members if (case_id, epoch) in m._journal.case_index()]
        if not holding:  # in no run: "pick one run" sent the user to run_id= for an id none holds (a slip, an epoch)
            runs = ", ".join(m.run_id for m in self._members)
            keys = [key for m in self._members for key in m._journal.case_index()]
            epochs = sorted({e for cid, e in keys if cid == case_id})
            if epochs:
                raise OloproofError(f"case {case_id!r} has no epoch {epoch} in the pooled runs {runs} (its epochs: "
                                    f"{', '.join(map(str, epochs))})")
            raise OloproofError(f"no case {case_id!r} in the pooled runs {runs}"
                                f"{_near_id(case_id, sorted({cid for cid, _ in keys}))}")
        if len(holding) != 1:
            where = ", ".join(m.run_id for m in holding)
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
            ids = sorted({cid for cid, _ in member._journal.case_index()})
            raise OloproofError(f"no case {case_id!r} in run {member.run_id}{_near_id(case_id, ids)}")
        return rec

    def case_replay_records(self, case_id: str, epoch: int = 1) -> list[ReplayRecord]:
        """The records of ``replays.jsonl`` (control and faulted replays) of one case's epoch.

        Raises :class:`~oloproof_nb.errors.RunDirError` when ``replays.jsonl`` is gone though ``cases.jsonl``
        records fault replays (:meth:`_missing_replay_records`): the case's were silently none."""
        member = self._member_of(case_id, epoch)
        member._refuse_missing_replays()
        return member._journal.replays_of(case_id, epoch)

    def _missing_replay_records(self) -> str:
        """``…/replays.jsonl: missing, though cases.jsonl records 38 fault replays`` for each of this run's runs
        (``; ``-joined) whose ``replays.jsonl`` is gone though its ``cases.jsonl`` records replays that were made
        (a row of :attr:`replays` whose control replay ran, live or from the cache: each wrote its records there);
        empty when none is. A run with no fault replay never makes the file, so its absence alone says nothing."""
        return "; ".join(note for note in (run._missing_replays_note() for run in self.runs) if note)

    def _missing_replays_note(self) -> str:
        """:meth:`_missing_replay_records` of one run (not pooled)."""
        path = self.directory / REPLAYS
        if os.path.lexists(path):  # one that is no file is refused when it is read
            return ""
        rows = self.replays
        made = int(rows["control_reproduced"].notna().sum()) if "control_reproduced" in rows else 0
        if not made:
            return ""
        return f"{path}: missing, though cases.jsonl records {made} fault replay{'s' if made != 1 else ''}"

    def _refuse_missing_replays(self) -> None:
        """Raise :class:`~oloproof_nb.errors.RunDirError` when :meth:`_missing_replay_records` has a note."""
        note = self._missing_replay_records()
        if note:
            raise RunDirError(f"{note}; its replay records (trajectories, states, tracebacks) are lost: put the file "
                              "back from a copy of the run folder, or run the suite again")

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

    @property
    def unscored_ids(self) -> frozenset[str]:
        """The copies this run's verdicts leave out: labeled invalid by a transform whose labels are checked
        (:func:`~.frames.unscored_cases` of its configuration, its labels and its cases an epoch, from the
        manifest: no frame is read). Worked out once (50,000 labels take about 50 ms), and again after the
        manifest is read again. Its ``n_cases`` as read, as the verdicts' (:meth:`_journal_items`): worked out while
        ``run.manifest.n_cases`` was edited in place, then put back, the gate said 8 copies were scored by no
        criterion beside a table scoring all 80 rows. It cannot be set, as :attr:`labels`."""
        return self._unscored_ids

    @unscored_ids.setter
    def unscored_ids(self, value: frozenset[str]) -> None:
        # the verdicts were built from the labels, not from this: set in a notebook (once a cached property), the
        # gate's line named copies left out that its table scored, or none beside a table without them
        raise OloproofError("run.unscored_ids are the copies the run's validity labels leave out of its verdicts, "
                            "worked out from them; relabel the files under labels/ and run the suite again (op.run)")

    @cached_property
    def _unscored_ids(self) -> frozenset[str]:
        """:attr:`unscored_ids`, worked out once."""
        return frames.unscored_cases(self._config, self._pair_labels, self._as_read.n_cases)

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
        """Every record of ``replays.jsonl`` (control and faulted replays) of a recorded case (a
        :class:`~oloproof_nb.errors.RunDirError` when the file is gone though ``cases.jsonl`` records fault
        replays, as :meth:`case_replay_records`)."""
        self._refuse_missing_replays()
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
        if v.empty:  # the columns' dtypes of a summary with rows (every one object before)
            return pd.DataFrame({"criterion": pd.Series([], dtype=frames.TEXT),
                                 "evaluator": pd.Series([], dtype=frames.TEXT),
                                 **{c: pd.Series([], dtype="int64") for c in ("n", "passed", "failed", "missing")}})
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


def _with_run_id(frame: pd.DataFrame, run_id: str) -> pd.DataFrame:
    if "run_id" in frame.columns:
        return frame
    out = frame.copy(deep=False)
    out.insert(0, "run_id", pd.Series([run_id] * len(frame), dtype=frames.TEXT))
    return out


def expected_case_runs(run: Run) -> int:
    """The case runs ``run`` was started for, as its manifest says (``n_cases × epochs``; pooled: summed over its
    runs), against which ``run.n_cases`` tells an unfinished or truncated run."""
    return sum(r.manifest.n_cases * r.manifest.epochs for r in run.runs)


def case_run_unit(run: Run) -> str:
    """How a count of ``run``'s case runs is named: ``case runs`` when any of its runs tried a case more than once
    (epochs), else ``cases``."""
    return "case runs" if any(r.manifest.epochs > 1 for r in run.runs) else "cases"


def stored_pair_labels(run: Run) -> Mapping[str, Mapping[str, Label]]:
    """Each transform's pair labels (:func:`~oloproof_nb._core.labels.pair_labels`) of the validity labels ``run``
    judges by, for reading inside the package: the Run's own, not a copy, worked out once a Run.

    :attr:`Run.labels` gives a deep copy each read (an edit of it must never reach the gate): at 50,000 judgements
    each copy took 0.15 s. ``op.validity``, the copies the verdicts leave out (:attr:`Run.unscored_ids`) and the
    gate's label-drift check read the labels' majorities, and each once worked them out again on its own
    (four times a gate). What reads them here never edits them.
    """
    return run._pair_labels


def load_run(directory: str | Path) -> Run:
    """Open a run directory as a :class:`Run` (see :meth:`Run.load`)."""
    return Run.load(run_directory(directory, "load_run"))


def run_directory(value: Any, who: str) -> str | Path:
    """``value`` when it is a path (a ``str`` or an ``os.PathLike``); else a one-line error naming ``who``."""
    if isinstance(value, (str, os.PathLike)):
        return value if isinstance(value, str) else Path(value)  # text as written (:meth:`Run.unopened`)
    raise OloproofError(f"{who}: a run directory must be a path (str or pathlib.Path), got {type(value).__name__}")


def as_run(value: Any, who: str) -> Run:
    """``value`` as a Run: a Run, or the directory of a stored run (opened); else a one-line error naming the
    argument, ``who`` (``"gate: run"``, ``"compare: base"``): a frame of a run, ``run.verdicts``, given where the
    run is wanted raised AttributeError from pandas."""
    if isinstance(value, Run):
        return value
    if isinstance(value, (str, os.PathLike)):
        return Run.load(value if isinstance(value, str) else Path(value))  # text as written (:meth:`Run.unopened`)
    hint = "; give the Run itself, not one of its frames" if isinstance(value, pd.DataFrame) else ""
    raise OloproofError(f"{who} must be a Run (op.run, op.load_run) or a run directory, got "
                        f"{type(value).__name__}{hint}")

