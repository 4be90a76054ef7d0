"""A run's cases as batches of tasks on an executor the user gives (other processes or machines).

:func:`run_on_executor` sends batches of cases to a ``concurrent.futures.Executor`` (a process pool, Dask's
``client.get_executor()``); each runs :func:`_remote_batch` in a worker, which loads the suite from its folder
once per process and keeps the system instances it built for the next batch. Those kept in the run's own process
(a ``ThreadPoolExecutor``'s) are released when the run is over (:func:`_release_here`). A batch the executor lost
stops the run in one line (:func:`_executor_failed`). A task is sent by its function's path in this module: a
worker process imports the module to run it.
"""

from __future__ import annotations

import contextlib
import queue
import socket
import sys
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import BrokenExecutor, CancelledError, Executor, Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._config.suite import RELEASE_FILE, KeptImportError, Suite, changed_digests, load_suite
from .._core.case import Case
from .._core.records import CaseRecord, ReplayRecord
from ..errors import ConfigError, OloproofError, describe_exception, quote
from .bounded import bounded
from .case import execute_case
from .context import RunSettings, ShownArtifacts
from .finish import how_to_finish
from .observe import OBSERVES, UNOBSERVED, promised_artifacts, shared_files
from .replay_cache import REPLAY_CACHE_DIR, ReplayCache
from .store import RunStore
from .systems import Held, KnownCode, OtherSystem, ReplayPrints, as_factory, build_checked, release

__all__ = ["run_on_executor"]


_REMOTE_LOCK = threading.Lock()


@dataclass(frozen=True)
class _WorkerSuite:
    """One version of a suite's files as a worker process holds it (:func:`_remote_suite`)."""

    suite: Suite
    #: the system instances its batches built, kept for the next batch (:func:`_remote_batch`)
    pool: queue.Queue[Any] = field(default_factory=queue.Queue)
    #: the file digests this process took of the system's code, by its classes (:data:`~.systems.KnownCode`): a
    #: replacement of the classes its instances are runs the code they were taken of
    known: KnownCode = field(default_factory=dict)
    #: the ``(version, code fingerprint)`` of each run an instance of its system was checked against and gave: that
    #: run's later batches take its system as it is, whatever its files say since (:func:`_remote_suite`)
    checked: set[tuple[str | None, str | None]] = field(default_factory=set)
    #: the instances its batches hold (running or pooled): a factory that gives one again is refused (a
    #: module-level instance ran the concurrent batches of a ThreadPoolExecutor on one sandbox)
    instances: Held = field(default_factory=Held)
    #: what keys the replays of each instance its batches built, read as it was built, by the ``(version, code
    #: fingerprint)`` of the run it was checked against: a pooled instance runs a later batch's cases keyed as built
    #: (read again there, its key was what the case before left in an attribute named as a constructor's parameter)
    prints: dict[tuple[str | None, str | None], ReplayPrints] = field(default_factory=dict)


#: The suites this worker process loaded, by folder and the digests of its files (one entry per folder: an earlier
#: version of the files is dropped when another is loaded).
_REMOTE_SUITES: dict[tuple[str, tuple[tuple[str, str], ...]], _WorkerSuite] = {}
#: The artifact versions shown to the cases this worker process ran, per suite (every batch of a run shares it:
#: an earlier epoch's artifact is stale in the next batch too).
_REMOTE_SHOWN: dict[str, ShownArtifacts] = {}
#: Batches in flight on an executor whose size is unknown (a Dask cluster).
_REMOTE_IN_FLIGHT = 64


def _worker_digests(digests: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The digests a worker's copy of the suite must match (release.yaml only matters to the gate)."""
    return tuple(sorted((name, value) for name, value in digests.items() if name != RELEASE_FILE))


def _remote_suite(suite_root: str, digests: dict[str, str], wanted: tuple[str | None, str | None]) -> _WorkerSuite:
    """The suite as this worker process sees it (loaded once per version of its files and of its system's code),
    with its system pool and the file digests taken of its system's code; ``wanted``: the run's ``(version, code
    fingerprint)``.

    A suite held since an earlier run whose system's file changed since (the files :func:`_worker_digests` keys it
    by do not hold the system) is loaded again, as the run's process loaded it: before, the run that followed an
    edit of the system was refused on the worker with "load the suite again", which the user had done.
    One whose system gave ``wanted`` (:attr:`_WorkerSuite.checked`) is kept: the run's code is what it holds, and a
    file saved during the run (an editor adding a comment) stopped its next batch (a thread run's too). The
    instances it builds are still checked against the run's identity (:func:`_remote_batch`). A file of the system's
    code that Python keeps as imported (a helper module, a package) changed since the worker imported it stops the
    run naming the worker and saying to restart the workers, whether the suite is held or loaded anew
    because its case file or the system's own module changed with it (before, it said to restart "the process
    (in a notebook: the kernel)", as the user's own process says, naming no worker)."""
    key = (suite_root, _worker_digests(digests))
    stale_pools: list[queue.Queue[Any]] = []
    with _REMOTE_LOCK:
        held = _REMOTE_SUITES.get(key)
        edited = held.suite.system_edited() if held is not None and wanted not in held.checked else None
        if edited is not None and edited[1]:  # a module Python keeps: loading again here cannot take it
            raise OloproofError(_restart_workers(suite_root, edited[0]))
        if edited is not None:
            held = None
        if held is None:
            try:
                suite = load_suite(suite_root)
            except KeptImportError as exc:  # loaded anew (its case file or the desk's module edited with a helper)
                raise OloproofError(_restart_workers(suite_root, exc.stale)) from None  # says to restart the workers
            except ConfigError as exc:  # the run's process loaded it: what differs is this worker (a package missing)
                raise ConfigError(exc.file, exc.key, f"on worker {socket.gethostname()}, {exc.message}") from None
            if _worker_digests(suite.digests) != key[1]:
                changed = changed_digests(dict(key[1]), dict(_worker_digests(suite.digests)))
                raise OloproofError(f"{suite_root}: on worker {socket.gethostname()}, {', '.join(changed)} "
                                    "differ from the run's; every worker needs the suite's files as the run "
                                    "loaded them (the same folder at the same path: a shared filesystem or a "
                                    "copy shipped there; files edited since the suite was loaded: load it again)")
            for stale in [k for k in _REMOTE_SUITES if k[0] == suite_root]:  # an earlier version of the files
                stale_pools.append(_REMOTE_SUITES.pop(stale).pool)
            held = _REMOTE_SUITES[key] = _WorkerSuite(suite)
    # its instances released as at a run's end (they were dropped here, under the lock and outside any timeout)
    _release_pools(stale_pools, held.suite.config.case_timeout_s)
    return held


def _restart_workers(suite_root: str, stale: Path | None) -> str:
    """Why this worker cannot run the suite at ``suite_root``: the file ``stale`` of its system's code changed since
    the worker imported it, and Python keeps that import (only a new worker process loads it)."""
    return (f"{suite_root}: on worker {socket.gethostname()}, {stale} changed since the worker imported the system's "
            "code from it, and Python keeps that import; restart the workers after changing the system's code "
            "(client.restart())")


def _shown_on_this_worker(suite_root: str) -> ShownArtifacts:
    """The artifact versions the cases of this suite were shown in this worker process (every batch shares them)."""
    with _REMOTE_LOCK:
        return _REMOTE_SHOWN.setdefault(suite_root, ShownArtifacts())


class _BatchStopped(OloproofError):
    """A batch stopped before its next case: no system instance could be built for it, or a case raised ``error``,
    an error of the user's (:class:`OloproofError`) that stops the run (:func:`_remote_batch`); ``records`` and
    ``replays`` are those of the cases it ran before (recorded, as a serial run records them before its rebuild
    fails or the error stops it: lost with the batch, a resume ran them again)."""

    def __init__(self, message: str, records: list[CaseRecord] | None = None,
                 replays: list[ReplayRecord] | None = None, error: OloproofError | None = None) -> None:
        super().__init__(message)  # sent back from a worker process by pickle: the rest goes with its __dict__
        self.records = records or []
        self.replays = replays or []
        self.error = error


def _remote_batch(suite_root: str, digests: dict[str, str], batch: list[tuple[int, Case]], run_id: str,
                  version: str | None, fingerprint: str | None, cache: bool = True,
                  seen: list[Any] | None = None, call: str = "") -> tuple[list[CaseRecord], list[ReplayRecord]]:
    """Executed on a worker: load the suite from its folder once per process, run a batch of cases.

    Systems are built on the worker from the suite's own ``system`` and kept in a per-process pool, so concurrent
    batches in one process never share an instance; each is pooled with the version and code fingerprint it was
    checked against, and one checked against another run's (the same suite's files, the system's code or version
    since changed) is released and replaced, and one whose batch escaped (the worker's Ctrl-C, oloproof's own
    error) is released, never pooled. Replays are returned with the records (the caller appends them).
    ``seen``: the artifact versions other workers' cases were shown (:meth:`ShownArtifacts.entries`), noted here
    first. ``call``: unused here; it tells one ``op.run`` call's tasks from another's (:func:`run_on_executor`).
    """
    wanted = (version, fingerprint)
    held = _remote_suite(suite_root, digests, wanted)
    suite, pool, known = held.suite, held.pool, held.known
    # a system that gave this run's identity here is the run's code, its files saved since or not (as on threads)
    target = suite.system_target if wanted in held.checked else suite.resolve_system()
    factory = as_factory(target)[0]
    timeout_s = suite.config.case_timeout_s
    prints = held.prints.setdefault(wanted, ReplayPrints(target, fingerprint))  # each instance's by its own settings

    def checked() -> Any:  # every instance a batch runs on: the run's version and code fingerprint
        try:
            built = prints.note(build_checked(factory, target, wanted, root=suite.root, spec=suite.config.system,
                                              timeout_s=timeout_s, known=known))
        except OtherSystem as exc:
            raise OloproofError(f"{suite_root}: the system on worker {socket.gethostname()} {exc}; restart the "
                                "workers after changing the system's code") from None
        held.checked.add(wanted)
        try:
            return held.instances.add(built)
        except OloproofError as exc:
            raise OloproofError(f"{suite_root}: on worker {socket.gethostname()}, {exc}") from None

    try:
        system, theirs = pool.get_nowait()
    except queue.Empty:
        system, theirs = None, None
    if theirs != wanted:
        # an instance pooled by an earlier run was checked against that run's system, not this one's: a worker
        # still holding the system as it was (its code imported before an edit, a version read when it was built)
        # would run every batch on it while the run records the new version. Released, and one built and checked.
        if system is not None:
            held.instances.drop(system)
            old, system = [system], None
            release(old, timeout_s)
        system = checked()
    replays: list[ReplayRecord] = []
    records: list[CaseRecord] = []
    replaced: list[Any] = []  # those a replay of a case raised on, replaced during it (released after the case)

    def renew() -> Any:  # a replay raised on system: the case's later replays run on a fresh instance
        nonlocal system
        fresh = checked()
        replaced.append(system)
        system = fresh
        return fresh

    try:
        settings = RunSettings.of(suite.config, run_id=run_id, system_version=version, suite_root=suite.root,
                                  validators=suite.validators, checks=suite.checks, append_replay=replays.append,
                                  cache=ReplayCache(suite.root / REPLAY_CACHE_DIR) if cache else None,
                                  code_fingerprint=prints.of(system), replay_prints=prints,
                                  shown=_shown_on_this_worker(suite_root))
        settings.shown.seed(seen or [])  # the versions other workers' cases of these artifacts were shown
        for index, case in batch:
            if system is None:
                # built when a case needs it, as a serial run does: built at once after a batch's last case failed,
                # a replacement that could not be built (a factory failing, a deployment that moved on: refused)
                # lost the batch's records and stopped a run whose every case had run
                try:
                    system = checked()
                except OloproofError as exc:  # the cases that ran are recorded before the run stops, as serially
                    raise _BatchStopped(str(exc), records, replays) from None
            outcome = execute_case(case, index, system, settings, renew=renew)
            if replaced:
                held.instances.drop(*replaced)
                release(replaced, timeout_s)
            if outcome.needs_fresh_system:
                # dropped even when a call abandoned on it may still run: that is refused while it runs (its case
                # noted it, systems.note_abandoned), and this worker's later runs may take it back once it ended
                # (kept here, a module-level instance was refused in every later run until the workers restarted)
                held.instances.drop(system)
                old, system = [system], None
                release(old, timeout_s)
            records.append(outcome.record)
    except BaseException as exc:
        # the batch escaped (the worker's Ctrl-C, a SystemExit raised in it, oloproof's own error): its instance is
        # left mid-case, and a call interrupted on it may still run (execute_case noted it, systems.note_abandoned).
        # Released as a stale one is, never pooled: pooled, the worker's next batch took it unchecked and ran its
        # case beside that call. The escape is what the batch reports, not a release that failed.
        if system is not None:
            held.instances.drop(system)
            old, system = [system], None
            with contextlib.suppress(OloproofError):
                release(old, timeout_s)
        if isinstance(exc, OloproofError) and not isinstance(exc, _BatchStopped) and records:
            # the user's error stops the run, as serially once the records of the cases before it are kept: raised
            # alone, the batch's records were lost with it and a resume ran those cases again
            raise _BatchStopped(str(exc), records, replays, exc) from None
        raise
    if system is not None:  # None: released after the batch's last case, none built to replace it
        pool.put((system, wanted))  # checked against the run's identity, a replacement too
    return records, replays


def run_on_executor(executor: Executor, suite: Suite, pending: Iterable[tuple[int, Case]], settings: RunSettings,
                    chunk_size: int, store: RunStore) -> Iterator[CaseRecord]:
    """Batches of ``chunk_size`` cases as tasks of ``executor`` (:func:`_remote_batch`; a batch never holds both a
    case that observes an artifact and one that promises none, :func:`_batched`), a bounded number in flight
    (:func:`~.bounded.bounded`); yields each batch's records once its replays are appended. A batch the executor lost or
    refused stops the run (:func:`_executor_failed`); one that could build no instance for its next case, or whose
    case raised the user's error (:class:`_BatchStopped`), stops it once the records of the cases it ran are
    yielded."""
    root = str(suite.root)
    # Dask keys a task by its arguments: the same batch sent by a resume had the key of the batch the stopped call
    # lost, and while anything held that call's futures (a notebook holds the last error) the scheduler gave the
    # resume its KilledWorker back without running a case
    call = uuid.uuid4().hex

    shown = settings.shown  # noted from every batch's receipts, handed to the batch with the next case of each artifact

    def submit(batch: list[tuple[int, Case]]) -> Future[tuple[list[CaseRecord], list[ReplayRecord]]]:
        seen = shown.entries(promised_artifacts(case for _, case in batch))
        try:
            return executor.submit(_remote_batch, root, dict(suite.digests), batch, settings.run_id,
                                   settings.system_version, settings.code_fingerprint, settings.cache is not None,
                                   seen, call)
        except BrokenExecutor as exc:  # a worker of a process pool died since the last batch was sent
            raise _executor_failed(batch, exc, store, settings) from exc
        except RuntimeError as exc:  # shut down before the run was done with it
            raise _executor_failed(batch, exc, store, settings, refused=True) from exc

    def lost(batch: list[tuple[int, Case]], exc: Exception) -> Exception | None:
        return _executor_failed(batch, exc, store, settings) if _lost_by_executor(exc) else None

    known = getattr(executor, "_max_workers", None)  # ProcessPoolExecutor / ThreadPoolExecutor; else a cluster
    limit = 2 * known if isinstance(known, int) and known > 0 else _REMOTE_IN_FLIGHT

    def keys(batch: list[tuple[int, Case]]) -> frozenset[str]:
        return frozenset().union(*(shared_files(case, settings.evaluators, settings.suite_root) for _, case in batch))

    def kind(item: tuple[int, Case]) -> frozenset[str]:  # whether it observes an artifact, promises none, or neither
        return shared_files(item[1], settings.evaluators, settings.suite_root) & {OBSERVES, UNOBSERVED}

    def kept(records: list[CaseRecord], replays: list[ReplayRecord]) -> list[CaseRecord]:
        for replay in replays:
            store.append_replay(replay)
        for record in records:
            shown.note_receipts(record.get("receipts") or [])
        return records

    try:
        try:
            for records, replays in bounded(submit, _batched(pending, chunk_size, kind), limit, keys, lost):
                yield from kept(records, replays)
        except _BatchStopped as stopped:  # the cases its batch ran are recorded, then the run stops
            yield from kept(stopped.records, stopped.replays)
            raise (OloproofError(str(stopped)) if stopped.error is None else stopped.error) from None
    finally:
        _release_here(root, suite.config.case_timeout_s)


def _release_here(suite_root: str, timeout_s: float | None) -> None:
    """Release the instances this process pooled for ``suite_root``'s batches, once its run is over.

    An executor's worker keeps the instances it built for the next batch (:func:`_remote_batch`); a worker that
    is this process (a ``ThreadPoolExecutor``) kept them after ``op.run`` returned, with whatever they hold open
    (a database file, a connection), until the suite's files changed or the process ended. Workers in other
    processes keep theirs for the next run, each checked against its system before use.
    """
    with _REMOTE_LOCK:
        pools = [_REMOTE_SUITES.pop(key).pool for key in [k for k in _REMOTE_SUITES if k[0] == suite_root]]
    _release_pools(pools, timeout_s)


def _release_pools(pools: list[queue.Queue[Any]], timeout_s: float | None) -> None:
    """Release the instances ``pools`` hold (:func:`~.systems.release`: on the helper thread, under the timeout)."""
    instances = []
    for pool in pools:
        with contextlib.suppress(queue.Empty):  # a batch of another run of the suite may take one meanwhile
            while True:
                instances.append(pool.get_nowait()[0])
    if instances:
        release(instances, timeout_s)


def _lost_by_executor(exc: Exception) -> bool:
    """Whether a batch failed because the executor lost it, not by anything it ran: a worker process that died
    (a broken process pool, Dask's ``KilledWorker``) or a task cancelled (the executor shut down, its client
    closed). Anything else a batch raises is oloproof's own error, or the user's (an ``OloproofError``)."""
    scheduler = sys.modules.get("distributed.scheduler")  # imported by then if the executor is Dask's
    killed = getattr(scheduler, "KilledWorker", None)
    kinds: tuple[type[BaseException], ...] = (BrokenExecutor, CancelledError)
    return isinstance(exc, kinds + ((killed,) if isinstance(killed, type) else ()))


def _executor_failed(batch: list[tuple[int, Case]], exc: Exception, store: RunStore, settings: RunSettings,
                     refused: bool = False) -> OloproofError:
    """The one line that stops a run whose executor lost a batch or refused one (neither is a bug in oloproof
    nor a verdict on the system: the batch's cases are not recorded, and a resume runs them)."""
    first, last = batch[0][1], batch[-1][1]

    def named(case: Case) -> str:  # a run of epochs: the case's epoch too (a batch was "cases 'c2' to 'c2'")
        return quote(case.id) + (f" (epoch {case.epoch})" if store.manifest.epochs > 1 else "")

    cases = (f"case {named(first)}" if len(batch) == 1
             else f"cases {named(first)} to {named(last)} ({len(batch)} case runs)")
    why = ("the executor was shut down (or its client closed) before the run was done with it" if refused else
           "a worker process of the executor died (the system ended its process or crashed, a kill from outside, "
           "a memory limit), or the executor was shut down or its client closed")
    return OloproofError(
        f"executor=: the task running {cases} {'was refused' if refused else 'failed'} "
        f"({describe_exception(exc, 200)}): {why}; the cases recorded are kept, "
        f"{how_to_finish(store.directory, settings.code_fingerprint)} on a running executor "
        "(isolation='process' records a case whose process died as 'error' and goes on)")


def _batched(items: Iterable[tuple[int, Case]], size: int,
             kind: Callable[[tuple[int, Case]], object] = lambda item: None) -> Iterator[list[tuple[int, Case]]]:
    """``items`` in order, in lists of at most ``size``, each of items of one ``kind``: a list ends early where the
    kind changes (:func:`run_on_executor`: a batch of a case that observes an artifact and one that promises none
    holds :data:`~.observe.OBSERVES` and :data:`~.observe.UNOBSERVED`, and ran beside no other batch of the run:
    with the default ``chunk_size`` a suite of both went serial on any executor)."""
    batch: list[tuple[int, Case]] = []
    batch_kind: object = None
    for item in items:
        this = kind(item)
        if batch and this != batch_kind:
            yield batch
            batch = []
        batch_kind = this
        batch.append(item)
        if len(batch) == size:  # sent at once, as before: not held until the next item is read
            yield batch
            batch = []
    if batch:
        yield batch
