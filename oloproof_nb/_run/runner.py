"""Every case of a suite on the user's sandboxes, written to a run directory as it goes.

:func:`run_suite` returns the run directory; the public ``op.run`` (the face)
loads it back as a Run. Progress is reported through a callback the face
chooses (a notebook widget, a terminal bar, nothing).

Cases are streamed from the case file to the workers (a bounded number in
flight), so memory does not grow with the suite. What stops a run: the user's
Ctrl-C (``KeyboardInterrupt``), a store write error
(:class:`~oloproof_nb.errors.StoreWriteError`), a system that cannot be built,
a call that timed out on the one instance a run was given (it cannot be
replaced), a batch an executor lost (each an
:class:`~oloproof_nb.errors.OloproofError`, one line), a journal something else
wrote into during the run (:class:`~oloproof_nb.errors.RunDirError`, once it
finishes), or a bug in oloproof (:class:`~oloproof_nb.errors.InternalError`,
its traceback saved in the run directory). Anything else the system does
inside a case only fails that case. An unfinished run is resumable (unless its
system records no code fingerprint, or its journal was changed).
"""

from __future__ import annotations

import functools
import numbers
import os
import queue
import traceback
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol, TypeVar

from .._config.files import home_shorthand
from .._config.imports import CODE_KEY
from .._config.release import check_reductions
from .._config.suite import RELEASE_FILE, Suite, changed_digests
from .._config.suite_config import MAX_EPOCHS, SUITE_FILE
from .._core.canonical import iso, utc_now
from .._core.case import Case
from .._core.records import CaseRecord, Manifest, StoredSuite
from .._version import __version__
from ..errors import InternalError, OloproofError, RunDirError, describe_exception, quote
from .bounded import bounded
from .case import died_reason, execute_case, failed_case
from .context import RunSettings
from .finish import how_to_finish
from .in_flight import read_in_flight, stop_signal
from .isolation import ProcessWorkers
from .locate import follows, latest_hint
from .observe import shared_files
from .remote import run_on_executor
from .replay_cache import REPLAY_CACHE_DIR, ReplayCache
from .sandbox import epoch_given
from .store import Fsync, InFlight, RunStore, new_run_id, read_cases, record_key, refuse_changed_journal
from .systems import (
    GIVE_FINGERPRINT,
    NO_FINGERPRINT,
    NO_SETTINGS_FINGERPRINT,
    Held,
    KnownCode,
    OtherSystem,
    ReplayPrints,
    as_factory,
    build,
    build_checked,
    identity_of,
    read_or_release,
    release,
    replay_fingerprint,
)

__all__ = ["run_suite", "as_factory", "Progress", "Isolation", "RecordSink", "with_epochs", "refuse_home_shorthand"]

#: ``progress(done, total)``: called once before the first case and after every finished case.
Progress = Callable[[int, int], None]
Isolation = Literal["thread", "process"]
#: ``finish(directory, fingerprint)``: what the messages of a stopped run say about finishing it.
Finish = Callable[[Path, str | None], str]
T = TypeVar("T")


class RecordSink(Protocol):
    """Sees every case record of a new run as it is appended (e.g. to build the run's columnar copy).

    ``start(directory)`` is called once the run directory exists; ``add(record, state_ref, initial_ref=...)``
    after each case record is appended, with the addresses in ``states.jsonl`` of its final state and of its
    ``initial_state`` (None: no such state). Records arrive in the order they finish (with ``workers`` > 1,
    not always case order).
    """

    def start(self, directory: Path) -> None: ...

    def add(self, record: CaseRecord, state_ref: str | None, initial_ref: str | None = None) -> None: ...


def run_suite(suite: Suite, system: Any = None, workers: int = 1, executor: Executor | None = None,
              out: str | Path | None = None, resume: bool = False, progress: Progress | None = None,
              chunk_size: int = 8, cache: bool = True, isolation: Isolation | None = None,
              fsync: Fsync = "finish", run_id: str | None = None, epochs: int | None = None,
              sink: RecordSink | None = None, finish: Finish = how_to_finish) -> Path:
    """Run every case of ``suite`` into a run directory and return the directory.

    For each case the sandbox is reset to a deep copy of ``initial_state``,
    the system runs the input, and ``snapshot()`` is stored as an
    ``environment_state/v1`` record beside the trajectory. Records are
    appended to the run directory one at a time, so a crash loses nothing
    that finished. See ``op.run`` for the parameters; ``run_id`` names the run
    (default: a new one). ``epochs`` (default: the suite's ``epochs``) runs
    each case that many times, each from a fresh reset; records are
    identified by (case id, epoch), and an epoch keeps its case's cluster.
    ``sink`` sees every record appended (not used on ``resume``: it would miss
    the records already there). ``finish(directory, fingerprint)`` is what the messages of a stopped run say about
    finishing it (default :func:`~.finish.how_to_finish`: ``resume=True``).
    """
    epochs, workers, chunk_size, mode = _check_run_arguments(suite, workers, executor, out, resume, chunk_size,
                                                             isolation, fsync, epochs)
    suite = suite.with_user_code()  # the checks the run calls, and the digests of their code it records
    # no more system instances (or worker processes) than case runs: --workers 10000 on 48 cases builds 48
    workers = max(1, min(workers, suite.n_cases * (suite.config.epochs if epochs is None else epochs)))
    timeout_s = suite.config.case_timeout_s
    replay_cache = ReplayCache(suite.root / REPLAY_CACHE_DIR) if cache else None
    pool, systems, version, fingerprint, given, built_with, replay_print = _start_systems(suite, system, workers,
                                                                                         executor, mode, cache)
    try:
        store, done = _open_store(suite, out, resume, version, fingerprint, fsync, run_id, epochs, given, built_with)
    except BaseException as exc:  # a resume refused (a changed suite), say: the first worker built a system
        _end_workers(pool, exc)
        raise
    try:  # the lock is held from here: a Ctrl-C before the run's own try below must not keep it
        if pool is not None:
            pool.bind(store.manifest.run_id, store.append_replay, functools.partial(store.note_case, in_worker=True))
        if resume:
            sink = None
        if sink is not None:
            sink.start(store.directory)
        settings = RunSettings.of(suite.config, run_id=store.manifest.run_id, system_version=version,
                                  suite_root=suite.root, validators={} if pool is not None else suite.validators,
                                  checks={} if pool is not None else suite.checks,
                                  append_replay=store.append_replay, cache=replay_cache, code_fingerprint=replay_print,
                                  replay_prints=None if systems is None or executor is not None else systems.prints,
                                  note_case=store.note_case if pool is None and executor is None else _unnoted)
        # (a process-isolated run notes each case run as it sends it to a worker: ProcessWorkers.bind above)
        if done and any(ev.type == "outcome_contract" for ev in suite.config.evaluators):
            # the versions the recorded cases were shown: a resumed epoch is stale on the file of one run before
            shown = pool.shown if pool is not None else settings.shown
            for record in read_cases(store.directory):
                shown.note_receipts(record.get("receipts") or [])
        k = store.manifest.epochs  # a resumed run keeps the epochs it started with
        if resume:
            _settle_in_flight(store, suite, k, done)
        total, finished = suite.n_cases * k, len(done)
        # no more instances (or worker processes) than case runs left: a resume of 2 of 48 starts 2, not 48
        workers = max(1, min(workers, total - finished))
        if resume and store.manifest.finished_at is not None and finished == total:
            store.close()  # a finished run has nothing to resume: left as it was (not stamped finished again)
            if pool is not None:
                # its first worker built a system: dropped as at a run's end, so its finaliser runs (stopped, each
                # resume of a finished process-isolated run left a desk's working copy behind)
                pool.finish()
            _release_left(systems, timeout_s)
            return store.directory
    except BaseException as exc:
        store.close()
        _end_workers(pool, exc)
        raise
    pending = ((index, case) for index, case in enumerate(with_epochs(suite.iter_cases(copies=False), k))
               if (case.id, case.epoch) not in done)
    recorded = False  # every case run recorded: the workers are then told to stop after the run is stamped finished
    stopped_by: BaseException | None = None  # what stopped the run before then (ends the workers: _end_workers)
    try:
        if progress is not None:
            progress(finished, total)
        if pool is not None:
            records = pool.run(pending, workers)
        elif executor is not None:
            records = run_on_executor(executor, suite, pending, settings, chunk_size, store)
        else:
            assert systems is not None  # built above for every run that is not process-isolated
            if workers == 1 or systems.rebuild is None:
                records = _run_serial(pending, systems, settings)
            else:
                records = _run_threaded(pending, systems, workers, settings)
        for record in records:
            ref, initial_ref = store.append_case(record)
            if sink is not None:
                sink.add(record, ref, initial_ref=initial_ref)
            finished += 1
            if progress is not None:
                progress(finished, total)
        recorded = True
    except KeyboardInterrupt as exc:  # the user's Ctrl-C: stop, and say how to finish the run
        stopped_by = exc
        # a clean stop, unless oloproof run got no Ctrl-C (then it notes an end after it); its signal when it says
        store.close(stopped=True, signal_name=stop_signal(exc))
        _note_where(exc, store.directory, finish(store.directory, fingerprint))
        raise
    except OloproofError as exc:
        stopped_by = exc
        store.close()
        if str(store.directory) not in str(exc):
            # a system that could not be built for a worker, or rebuilt after a timeout, names no folder: say where
            # the stopped run (its manifest, the cases recorded) is, or it is found only by listing runs/
            _note_where(exc, store.directory, finish(store.directory, fingerprint))
        raise
    except Exception as exc:  # a bug in oloproof: stop with its traceback saved in the run folder
        stopped_by = exc
        path = store.save_internal_error(traceback.format_exc())
        store.close()
        raise InternalError(f"internal error: {describe_exception(exc)} (a bug in oloproof_nb, not in your system; "
                            f"the traceback is in {path}; {finish(store.directory, fingerprint)})") from exc
    except BaseException as exc:
        stopped_by = exc
        store.close()
        raise
    finally:
        if not recorded:
            _end_workers(pool, stopped_by)
    try:
        store.finish(finished_at=utc_now())
    except BaseException as exc:
        _end_workers(pool, exc)
        raise
    if pool is not None:
        # each worker drops its system, its finaliser runs, as at the end of a thread run: after the run is stamped
        # finished, as _release_left (a Ctrl-C while a finaliser ran left a run of every case unfinished)
        pool.finish()
    _release_left(systems, timeout_s)  # after the run is finished: a resume would find it blocking again
    refuse_changed_journal(store.directory, store.manifest)  # records not the run's: never gated
    return store.directory


def _end_workers(pool: ProcessWorkers | None, stopped_by: BaseException | None) -> None:
    """End the worker processes of a run that stopped before every case run was recorded.

    On an error (an ``Exception``: a system that cannot be rebuilt, a store write error, a resume refused, a bug
    in oloproof) the run ends them as at a run's end (:meth:`~.isolation.ProcessWorkers.finish`): each idle worker
    drops its system, so its finaliser runs (a SQL desk's working copy is removed), within ``case_timeout_s`` + 1 s,
    then it is killed; a busy worker is killed at once, its case run cut short (not recorded: a resume runs it
    again), as waiting for it could take ``case_timeout_s``, for a record the stopped run cannot keep; so is a
    worker still building its system (rebuilding it after a failed case, say), whose build could take as long. On the
    user's Ctrl-C (or any other ``BaseException``) every worker is killed at once
    (:meth:`~.isolation.ProcessWorkers.stop`): the user asked to stop now.
    """
    if pool is None:
        return
    if isinstance(stopped_by, Exception):
        pool.finish(stopped=True)
    else:
        pool.stop()


def _check_run_arguments(suite: Suite, workers: int, executor: Executor | None, out: str | Path | None,
                         resume: bool, chunk_size: int, isolation: Isolation | None, fsync: Fsync,
                         epochs: int | None) -> tuple[int | None, int, int, Isolation]:
    """Refuse (:class:`OloproofError`, one line) the arguments of :func:`run_suite` a run cannot go with, before
    anything is built or written; ``(epochs, workers, chunk_size, isolation)`` as Python values."""
    # a NumPy integer (len(cases) // 4 of an array) counts as the integer it is, for all three
    if epochs is not None and not (_whole(epochs) and 1 <= epochs <= MAX_EPOCHS):
        raise OloproofError(f"epochs={quote(epochs)}: must be an integer from 1 to {MAX_EPOCHS:,} "
                            "(as in oloproof.yaml)")
    if not (_whole(workers) and workers >= 1):
        raise OloproofError(f"workers={quote(workers)}: must be an integer of at least 1")
    if not (_whole(chunk_size) and chunk_size >= 1):
        # before the run folder is made: 2.5 or "8" would otherwise stop a run already begun (as an internal error)
        raise OloproofError(f"chunk_size={quote(chunk_size)}: must be an integer of at least 1")
    epochs, workers, chunk_size = (None if epochs is None else int(epochs)), int(workers), int(chunk_size)
    if executor is not None and not isinstance(executor, Executor):
        # before the run folder is made: a Dask Client given itself (its futures are not concurrent.futures ones)
        # would stop a run already begun with an "internal error … a bug in oloproof_nb"
        hint = "; for Dask, give client.get_executor()" if callable(getattr(executor, "get_executor", None)) else ""
        raise OloproofError(f"executor={quote(executor)}: must be a concurrent.futures.Executor "
                            f"(a ProcessPoolExecutor, say){hint}")
    if executor is not None and workers != 1:
        # the executor decides how many batches run at once: workers=8 beside it would be dropped without a word
        raise OloproofError(f"workers={workers} and executor= together: the executor sets how many cases run at "
                            "once (its own max_workers, or the cluster's); give one of the two")
    if fsync not in ("finish", "record"):
        raise OloproofError(f"fsync={quote(fsync)}: must be 'finish' or 'record'")
    mode = suite.config.isolation if isolation is None else isolation
    if mode not in ("thread", "process"):
        raise OloproofError(f"isolation={quote(isolation)}: must be 'thread' or 'process'")
    if resume and out is None:
        raise RunDirError(f"resume=True needs out= (the directory of the interrupted run){latest_hint(suite.root)}")
    refuse_home_shorthand(out)
    if not resume:  # a resumed run keeps the labels its manifest stores
        suite.refuse_edited_labels()
    if suite.release is not None and not resume:  # a reduction the run's epochs cannot give: say so before running
        check_reductions(suite.release, suite.config.epochs if epochs is None else epochs, suite.root / RELEASE_FILE)
    return epochs, workers, chunk_size, mode


def refuse_home_shorthand(out: str | Path | None) -> None:
    """Refuse (:class:`RunDirError`, one line) an ``out=`` whose first part is a ``~`` (:func:`~.._config.files.
    home_shorthand`), before anything is written: Python expands no ``~``, so ``op.run(suite, out="~/runs/r1")`` made
    a folder named ``~`` in the current folder and wrote the run there, as ``--out=~/runs/r1`` did before the command
    line refused it."""
    problem = None if out is None else home_shorthand(str(out))
    if problem is not None:
        raise RunDirError(f"out={problem}")


class _Started(NamedTuple):
    """The systems of a run as :func:`_start_systems` built them, and what identifies them."""

    #: The worker processes of a process-isolated run (None: a thread run).
    pool: ProcessWorkers | None
    #: The instances of a thread run, its executor's included (None: a process-isolated run).
    systems: _Systems | None
    version: str | None
    fingerprint: str | None
    #: The methods of the system given the case's epoch (:func:`~.sandbox.epoch_given`), as the manifest records them.
    epoch_given: list[str] | None
    #: The replay fingerprint when it is not the code fingerprint: its settings beside its code (None: it has none).
    built_with: str | None
    #: What keys the replays of the run's process (an executor's workers key theirs themselves).
    replay_print: str | None


def _start_systems(suite: Suite, system: Any, workers: int, executor: Executor | None, mode: Isolation,
                   cache: bool) -> _Started:
    """Build the run's first system (in a worker process with ``mode`` ``process``), and read what identifies it."""
    pool: ProcessWorkers | None = None
    systems: _Systems | None = None
    if mode == "process":
        if system is not None or executor is not None:
            raise OloproofError("isolation='process' builds systems from the suite's own 'system' in worker "
                                "processes; do not pass system= or executor=")
        pool = ProcessWorkers(suite, workers, cache=cache)
        version, fingerprint = pool.start()
        replay_print, given, keyed = fingerprint, pool.epoch_given, pool.replay_fingerprint
    else:
        systems = _thread_systems(suite, system, workers, executor)
        version, fingerprint, given = systems.version, systems.fingerprint, systems.epoch_given
        keyed = systems.replay_fingerprint
        # an executor's workers check the run's code fingerprint against their own, and key their replays themselves
        replay_print = fingerprint if executor is not None else systems.replay_fingerprint
    built_with = keyed if keyed != fingerprint else None  # its settings beside its code (None: it has none)
    return _Started(pool, systems, version, fingerprint, given, built_with, replay_print)


def _whole(value: object) -> bool:
    """Whether ``value`` is an integer (a Python or NumPy one), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _unnoted(case_id: str, epoch: int, finished: bool) -> None:
    """No note of a case run's start: its system runs in another process (a worker's, an executor's)."""


def _settle_in_flight(store: RunStore, suite: Suite, epochs: int, done: set[tuple[str, int]]) -> None:
    """Before a resume runs anything: the case runs in flight when the run's process ended (``started.jsonl``).

    When ``oloproof run`` saw the system end the process (an exit, a fatal signal), each is recorded ``error``,
    all its verdicts ``missing``, as ``isolation: process`` records a case whose worker died (run again, a system
    that crashed on its hard cases would get tries until it passed). Otherwise (a kill from
    outside, a kernel killed, ``op.run``'s own run) they run again, and the manifest keeps the end
    (``abrupt_ends``), which ``oloproof gate`` prints under its table; after a Ctrl-C the process saw (a stop
    with no end noted after it) they run again too, and the end is kept as :data:`STOPPED`: a system that sends
    SIGINT to its own process group stops the run as the user's Ctrl-C does, and unnoted, each resume would give
    the case run in flight a fresh try that nothing shows. ``done`` gains the keys recorded.
    """
    in_flight = read_in_flight(store.directory)
    reruns: list[InFlight] = []
    if in_flight is not None and in_flight.by_system:
        settings = RunSettings(run_id=store.manifest.run_id, system_version=None, timeout_s=suite.config.case_timeout_s,
                               suite_root=None, evaluators=list(suite.config.evaluators))
        ended_at = in_flight.ended_at or 0.0
        n = len(in_flight.started)  # workers > 1: which of them ended it is not known
        reason = died_reason("process running the system",
                             str(in_flight.how) + (f"; {n} case runs were in flight in it" if n > 1 else ""))
        cases = with_epochs(suite.iter_cases(copies=False), epochs) if in_flight.started else ()
        for index, case in enumerate(cases):
            key = (case.id, case.epoch)
            if key in in_flight.started and key not in done:
                at = in_flight.started[key]
                record = failed_case(case, index, "error", reason, settings, datetime.fromtimestamp(at, timezone.utc),
                                     max(0.0, ended_at - at))
                store.append_case(record)
                done.add(key)
                if done.issuperset(in_flight.started):
                    break
        # finished on another worker, their records lost with the process: they run again
        if in_flight.lost:
            reruns.append(InFlight(dict.fromkeys(in_flight.lost, 0.0), in_flight.how))
    elif in_flight is not None:  # a stop the process saw is noted too: the system may have sent it
        how = stopped_how(in_flight.stop_signal) if in_flight.stopped and in_flight.how is None else in_flight.how
        reruns.append(InFlight({**in_flight.started, **dict.fromkeys(in_flight.lost, 0.0)}, how))
    if in_flight is not None and in_flight.earlier:
        # left in flight by an earlier process whose end nothing saw: they run again, under that end (the one noted
        # is another process's, which never ran them), kept before it
        reruns.insert(0, InFlight(dict.fromkeys(in_flight.earlier, 0.0)))
    store.settle_in_flight(*reruns)


#: How ``abrupt_ends`` names a stop the run's process saw (a ``KeyboardInterrupt``) with case runs in flight: the
#: user's Ctrl-C, or the same signal from elsewhere (a system's ``os.killpg(os.getpgrp(), signal.SIGINT)``).
STOPPED = "stopped by a Ctrl-C or a signal to the run's process group"


def stopped_how(signal_name: str | None) -> str:
    """How ``abrupt_ends`` names a stop the run's process saw: :data:`STOPPED`, or ``stopped by signal SIGTERM`` when
    the stop said which signal it came by (:func:`~.in_flight.stop_signal`; before, a SIGTERM and a Ctrl-C read
    alike)."""
    return f"stopped by signal {signal_name}" if signal_name else STOPPED


def _note_where(exc: BaseException, directory: Path, finish: str) -> None:
    """Note on ``exc`` the folder of the run it stopped and how to finish it (``finish``; Python 3.11+'s
    ``add_note``; oloproof run says where in its own words)."""
    add_note = getattr(exc, "add_note", None)
    if callable(add_note):
        add_note(f"the run is in {directory}; {finish}")


@dataclass
class _Systems:
    """The first system instance of a thread run, how to build another, and what identifies the system."""

    first: Any
    #: Builds a fresh instance (a failed one is replaced); None when the run shares one instance it was given.
    rebuild: Callable[[], Any] | None
    version: str | None
    fingerprint: str | None
    #: What keys the replay cache: the fingerprint and the settings the system was built with (None: not cached).
    replay_fingerprint: str | None
    #: The methods of the system given the case's epoch (:func:`~.sandbox.epoch_given`), as the manifest records them.
    epoch_given: list[str] | None = None
    #: Instances a finished thread run leaves: released (:func:`_release_left`) once the run is finished.
    left: list[Any] = field(default_factory=list)
    #: The instances the run holds: one the factory gives again is refused (a module-level instance).
    held: Held = field(default_factory=Held)
    #: What keys each instance's replays, read as it was built (None: :attr:`replay_fingerprint` keys them all).
    prints: ReplayPrints | None = None


def _release_left(systems: _Systems | None, timeout_s: float | None) -> None:
    """Release the instances a run left, and the first one when no thread run took it (an executor's run)
    (:func:`~oloproof_nb._run.systems.release`)."""
    if systems is not None:
        held = systems.left + ([] if systems.first is None else [systems.first]) + systems.held.take_kept()
        systems.left, systems.first = [], None
        release(held, timeout_s)


def _thread_systems(suite: Suite, system: Any, workers: int, executor: Executor | None) -> _Systems:
    """Build the first instance under the timeout; its ``version`` and the code fingerprint (errors name the file)."""
    target = suite.resolve_system() if system is None else system
    factory, fresh = as_factory(target)
    if (workers > 1 or executor is not None) and not fresh:
        raise OloproofError("workers > 1 and executor= need a system class or factory, not one instance")
    if executor is not None and system is not None:
        raise OloproofError("executor= builds systems from the suite's own 'system'; do not pass system=")
    timeout_s = suite.config.case_timeout_s

    def named(fn: Callable[[], T]) -> T:
        try:
            return fn()
        except OtherSystem as exc:  # said as a worker process's is (isolation.ProcessWorkers)
            why = (f"an instance built during the run {exc}: every instance must give the run's (one whose version or "
                   "fingerprint() differs per instance is refused too); do not change the system's version or code "
                   "during a run")
            if system is not None:
                raise OloproofError(why) from None
            raise OloproofError(f"{suite.root / SUITE_FILE}: system: {why}") from None
        except OloproofError as exc:  # name the file that named the system
            if system is not None:
                raise
            raise OloproofError(f"{suite.root / SUITE_FILE}: system: {exc}") from None

    spec = suite.config.system if system is None else None
    held = [named(lambda: build(factory, timeout_s))]  # the only reference: released here when it cannot be read
    known: KnownCode = {}  # an instance of the first one's classes runs its code: a file saved since is not it

    def read(instance: Any) -> tuple[str | None, str | None, str | None]:
        version, fingerprint = named(lambda: identity_of(instance, target, root=suite.root, spec=spec,
                                                         timeout_s=timeout_s, known=known))
        return version, fingerprint, named(lambda: replay_fingerprint(instance, target, fingerprint))

    # an instance given to the run is the caller's: theirs to drop
    version, fingerprint, replay = read(held[0]) if system is not None and not fresh else \
        read_or_release(held, timeout_s, read)
    first = held.pop()
    prints = ReplayPrints(target, fingerprint)  # each instance's replays keyed by its own settings, as built
    named(lambda: prints.note(first))

    holding = Held()  # a factory that gives an instance the run holds (a module-level one) is refused
    named(lambda: holding.add(first))  # and one a call abandoned in an earlier run of this process still runs on

    def rebuild() -> Any:  # a worker's instance, or one replacing an instance a case left stale: checked
        return named(lambda: holding.add(prints.note(build_checked(factory, target, (version, fingerprint),
                                                                   root=suite.root, spec=spec, timeout_s=timeout_s,
                                                                   known=known))))

    return _Systems(first, rebuild if fresh else None, version, fingerprint, replay, epoch_given(first), held=holding,
                    prints=prints)


def with_epochs(cases: Iterable[Case], epochs: int) -> Iterator[Case]:
    """Each case ``epochs`` times in a row (epoch 1, 2, …, k), each a copy carrying its epoch."""
    for case in cases:
        yield case
        for epoch in range(2, epochs + 1):
            yield case.model_copy(update={"epoch": epoch})


def _open_store(suite: Suite, out: str | Path | None, resume: bool, version: str | None, fingerprint: str | None,
                fsync: Fsync, run_id: str | None, epochs: int | None,
                given: list[str] | None = None, settings: str | None = None,
                ) -> tuple[RunStore, set[tuple[str, int]]]:
    """Create (or lock and reopen) the run directory; the (case id, epoch) of the records it already holds."""
    # absolute: the journal's files are opened again by this path on every write, and a system may chdir
    if resume:
        directory = Path(str(out)).absolute()
        store = RunStore.resume(directory,
                                lambda m: _check_resumable(m, suite, version, fingerprint, directory, epochs, settings),
                                fsync=fsync)
        try:
            done = {record_key(rec) for rec in read_cases(directory)}
        except BaseException:
            store.close()
            raise
        return store, done
    started = utc_now()
    run_id = run_id or new_run_id(started)
    directory = Path(out).absolute() if out is not None else suite.root / "runs" / run_id
    _refuse_a_folder_of_runs(directory, suite.root)
    # a folder of the suite's runs (runs/, baselines/), whose latest run `oloproof gate SUITE` picks by start time
    after = follows(directory.parent, started) if _of_the_suite(directory, suite.root) else None
    manifest = Manifest(suite=suite.name, run_id=run_id, system_version=version, started_at=iso(started), follows=after,
                        oloproof_nb=__version__, n_cases=suite.n_cases,
                        epochs=suite.config.epochs if epochs is None else epochs, digests=suite.digests,
                        code_fingerprint=fingerprint, suite_config=StoredSuite.model_validate(suite.manifest_config()),
                        epoch_given=given, settings_fingerprint=settings)
    return RunStore.create(directory, manifest, fsync=fsync), set()


#: The suite folder's folders that hold one folder per run (``oloproof gate SUITE`` picks the latest in ``runs/``).
_RUN_FOLDERS = ("runs", "baselines")


def _refuse_a_folder_of_runs(directory: Path, root: Path) -> None:
    """Refuse ``out=`` naming the suite's ``runs/`` or ``baselines/`` itself: empty at the first run, it would become
    a run folder, so ``oloproof gate SUITE`` would say "no run yet" and later runs would be made inside it. Both
    sides are compared resolved: ``runs/`` may itself be a link to a larger disk (``--out SUITE/runs`` is refused
    then too)."""
    try:
        resolved = directory.resolve()
    except (OSError, RuntimeError):  # a loop of links: creating the folder says so
        return
    for name in _RUN_FOLDERS:
        try:
            folder = (root / name).resolve()
        except (OSError, RuntimeError):  # a loop of links there: no folder of runs
            continue
        if resolved == folder or _same_folder(resolved, folder):
            raise RunDirError(f"{directory}: is the suite's {name}/ folder, which holds one folder per run; give "
                              f"out= a folder of its own ({name}/<name>, or another place); without it a run is "
                              f"written to runs/<run_id>")


def _same_folder(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are one existing folder (its device and inode): ``runs`` and ``Runs`` on a file system
    that ignores letter case, as macOS's does, where the names differ resolved."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): no folder to share
        return False


def _of_the_suite(directory: Path, root: Path) -> bool:
    """Whether the run folder ``directory`` is in a folder of the suite at ``root`` (``runs/<run_id>``), compared
    resolved as the root is (``out=`` may reach the suite through a link). A loop of links on the way is no folder
    of the suite: creating the run folder says so (resolving raised RuntimeError before Python 3.13)."""
    try:
        return directory.parent.parent.resolve() == root
    except (OSError, RuntimeError):
        return False


def _check_resumable(manifest: Manifest, suite: Suite, version: str | None, fingerprint: str | None,
                     directory: Path, epochs: int | None, settings: str | None = None) -> None:
    """Refuse (:class:`RunDirError`, one line saying why) to resume a run whose suite, epochs, oloproof_nb release,
    suite files, system version, code fingerprint or settings fingerprint are not those the run started with, or that
    has no code fingerprint to compare (``settings``: the system's replay fingerprint when it differs from its
    code's)."""
    if manifest.suite != suite.name:
        raise RunDirError(f"{directory}: holds a run of suite {quote(manifest.suite)}, not {quote(suite.name)}")
    if epochs is not None and manifest.epochs != epochs:
        raise RunDirError(f"{directory}: this run has epochs={manifest.epochs}, not {epochs}; resume it with "
                          f"epochs={manifest.epochs} (--epochs {manifest.epochs})")
    if manifest.oloproof_nb != __version__:  # another release may judge, reset or replay otherwise
        raise RunDirError(f"{directory}: this run was started by oloproof_nb {manifest.oloproof_nb}, not by this "
                          f"{__version__} (its verdicts would mix two releases' rules); finish it with oloproof_nb "
                          f"{manifest.oloproof_nb}, or start a new run")
    changed = {name: value for name, value in suite.digests.items() if manifest.digests.get(name) != value}
    what = changed_digests({name: manifest.digests.get(name, "") for name in changed}, changed)
    if changed and all(n.startswith(CODE_KEY) for n in changed) and \
            not any(key.startswith(CODE_KEY) for key in manifest.digests):  # written before runs recorded code
        raise RunDirError(f"{directory}: this run was started before runs recorded their checks' code, so a "
                          f"resume cannot tell whether {what[0]} changed; start a new run instead")
    if changed:
        raise RunDirError(f"{directory}: {', '.join(what)} changed since this run started (its verdicts would mix "
                          "two versions); start a new run instead")
    # a file the run started with and the suite no longer has (a release.yaml deleted since): resumed, the run would
    # be gated by the copy its manifest keeps, a release the suite no longer has. A check's code no
    # longer named comes with an oloproof.yaml changed, said above as that
    removed = changed_digests({name: manifest.digests[name] for name in manifest.digests
                               if name not in suite.digests}, {})
    if removed:
        gated = "the run would be gated by the copy it started with, which the suite no longer has"
        judged = "the run's first cases were judged by a suite it no longer is"
        others = [name for name in removed if name != "release.yaml"]
        if len(others) == len(removed):
            why = judged
        elif not others:
            why = gated
        else:  # each its own reason: release.yaml's alone left a labels file unexplained
            why = f"release.yaml: {gated}; {', '.join(others)}: {judged}"
        raise RunDirError(f"{directory}: {', '.join(removed)} {'was' if len(removed) == 1 else 'were'} removed since "
                          f"this run started ({why}); put {'it' if len(removed) == 1 else 'them'} back as "
                          f"{'it was' if len(removed) == 1 else 'they were'}, or start a new run instead")
    if manifest.system_version != version:
        raise RunDirError(f"{directory}: the system version changed ({quote(manifest.system_version)} → "
                          f"{quote(version)}); start a new run instead")
    if manifest.code_fingerprint != fingerprint:
        raise RunDirError(f"{directory}: the system's code changed since this run started (its code fingerprint "
                          "differs; the version alone did not say so); start a new run instead")
    if manifest.settings_fingerprint is None and settings is not None:  # the run is older than the field
        raise RunDirError(f"{directory}: this run {NO_SETTINGS_FINGERPRINT}, so a resume cannot tell whether the "
                          "system is built as it was (its verdicts could mix two systems); start a new run instead")
    if manifest.settings_fingerprint != settings:  # Desk(careful=False) resuming a run of Desk(careful=True)
        raise RunDirError(f"{directory}: the system was built with other settings than this run's (its constructor's "
                          "parameters or a partial's arguments differ; the code did not change), so its verdicts "
                          "would mix two systems; resume with the system built as before, or start a new run")
    if manifest.code_fingerprint is None:  # and fingerprint is None: a class in no file, whose edits nothing shows
        raise RunDirError(f"{directory}: {NO_FINGERPRINT}, so a resume cannot tell whether its code changed since "
                          "this run started (its verdicts would mix two versions); start a new run instead, or "
                          f"{GIVE_FINGERPRINT}")


def _run_serial(pending: Iterable[tuple[int, Case]], systems: _Systems, settings: RunSettings,
                ) -> Iterator[CaseRecord]:
    """One instance at a time; ``systems.rebuild`` makes a fresh one after a failed case (None: one shared
    instance). The instances are taken from ``systems`` and released under the timeout (:func:`release`)."""
    rebuild = systems.rebuild
    held, systems.first = [systems.first], None  # the only reference: released on the helper thread
    stale = abandoned = False
    stuck: OloproofError | None = None

    def renew() -> Any:  # a replay raised on held[-1]: the case's later replays run on a fresh instance
        assert rebuild is not None
        held.append(rebuild())
        return held[-1]

    for index, case in pending:
        if stuck is not None:  # after the timed-out case was recorded: none runs beside its call
            raise stuck
        if len(held) > 1:  # those a replay of the case before raised on, replaced during it
            replaced, held[:-1] = held[:-1], []
            systems.held.drop(*replaced)
            release(replaced, settings.timeout_s)
        if stale and rebuild is not None:  # built only when a case needs it, after the failed case was recorded
            if not abandoned:  # a call abandoned on it may still run: the factory must not give it back
                systems.held.drop(held[0])
            release(held, settings.timeout_s)
            held.append(rebuild())
            stale = False
        outcome = execute_case(case, index, held[0], settings, renew=None if rebuild is None else renew)
        stale, abandoned = outcome.needs_fresh_system and rebuild is not None, outcome.abandoned_call
        if outcome.abandoned_call and rebuild is None:
            stuck = OloproofError(
                f"case {case.id!r}: a call exceeded case_timeout_s={settings.timeout_s:g} and may still be running "
                "on the one system instance given to the run, which cannot be replaced, so no later case runs "
                "beside it (its writes would land in their states); give the class or a factory (system=MyDesk, "
                "or a function that returns a new instance), then resume the run")
        yield outcome.record
    systems.left.extend(held)  # released by the run once it is finished


class _Unbuildable:
    """Stands in a worker slot for a system instance that could not be built."""

    def __init__(self, error: OloproofError) -> None:
        self.error = error


def _run_threaded(pending: Iterable[tuple[int, Case]], systems: _Systems, workers: int, settings: RunSettings,
                  ) -> Iterator[CaseRecord]:
    """``workers`` threads, each case on an instance taken from a shared queue (``workers`` instances, the first
    taken from ``systems``); an instance a case left stale is released and rebuilt before it goes back. Yields the
    records as they finish; the instances left go to ``systems.left`` once every case ran."""
    rebuild = systems.rebuild
    assert rebuild is not None  # a run shares one instance it was given only serially
    instances: queue.Queue[Any] = queue.Queue()
    instances.put(systems.first)
    systems.first = None  # the queue holds the only references: released on the helper thread
    for _ in range(workers - 1):
        instances.put(rebuild())  # a factory giving every worker one instance is refused (Held)

    def task(index: int, case: Case) -> CaseRecord:
        system = instances.get()
        replaced: list[Any] = []  # those a replay of the case raised on, replaced during it

        def renew() -> Any:  # a replay raised on system: the case's later replays run on a fresh instance
            nonlocal system
            fresh = rebuild()
            replaced.append(system)
            system = fresh
            return fresh

        try:
            if isinstance(system, _Unbuildable):
                raise system.error  # an earlier replacement could not be built: the run stops here
            outcome = execute_case(case, index, system, settings, renew=renew)
            try:
                if replaced:
                    systems.held.drop(*replaced)
                    release(replaced, settings.timeout_s)
                if outcome.needs_fresh_system:
                    old, system = [system], None
                    if not outcome.abandoned_call:  # a call abandoned on it may still run: never given back
                        systems.held.drop(old[0])
                    release(old, settings.timeout_s)
                    system = rebuild()
            except OloproofError as exc:  # this case's record is kept; the next task on this slot stops the run
                system = _Unbuildable(exc)
            # its record is appended by the thread that runs the loop: a crash on another worker before then does
            # not make this case run error (it finished; a resume runs it again). Noted only once its slot holds a
            # system again: an end of the process while the instance it left is released or replaced is this case
            # run's, as in a serial run, which records the case first (noted earlier, a timed-out case whose
            # replacement ended the process would lose its record and run again)
            settings.note_case(case.id, case.epoch, True)
            return outcome.record
        finally:
            instances.put(system)

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="oloproof-worker")
    clean = False
    try:
        yield from bounded(lambda item: pool.submit(task, *item), pending, 2 * workers,
                           keys=lambda item: shared_files(item[1], settings.evaluators, settings.suite_root))
        clean = True
    finally:  # on an error or Ctrl-C, do not wait for cases still running: the run stops now
        pool.shutdown(wait=clean, cancel_futures=True)
    while not instances.empty():  # released by the run once it is finished
        systems.left.append(instances.get_nowait())
