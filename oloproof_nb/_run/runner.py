"""Every case of a suite on the user's sandboxes, written to a run directory as it goes.

:func:`run_suite` returns the run directory; the public ``op.run`` (the face)
loads it back as a Run. Progress is reported through a callback the face
chooses (a notebook widget, a terminal bar, nothing).
"""

from __future__ import annotations

import queue
import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from .._config.suite import RELEASE_FILE, SUITE_FILE, Suite, load_suite
from .._core.canonical import iso, utc_now
from .._core.case import Case
from .._core.records import CaseRecord, Manifest, ReplayRecord, StoredSuite
from .._version import __version__
from ..errors import OloproofError, RunDirError
from .case import execute_case
from .context import RunSettings
from .replay_cache import REPLAY_CACHE_DIR, ReplayCache
from .store import RunStore, new_run_id, read_cases, read_manifest

__all__ = ["run_suite", "as_factory", "Progress"]

#: ``progress(done, total)``: called once before the first case and after every finished case.
Progress = Callable[[int, int], None]


def as_factory(target: Any) -> tuple[Callable[[], Any], bool]:
    """``(factory, fresh)``: a class or factory builds fresh instances; an instance is shared (``fresh`` False)."""
    if isinstance(target, type) or (callable(target) and not hasattr(target, "run")):
        return target, True
    if not hasattr(target, "run"):
        raise OloproofError(f"system {target!r} has no run(input) method; give a system, a class or a factory")
    return (lambda: target), False


def _factory(suite: Suite, system: Any) -> tuple[Callable[[], Any], bool]:
    """A system factory and whether it builds fresh instances (False: one shared instance)."""
    return as_factory(suite.resolve_system() if system is None else system)


def _build(factory: Callable[[], Any]) -> Any:
    try:
        instance = factory()
    except Exception as exc:  # noqa: BLE001 - the user's constructor failed: say so in one line
        raise OloproofError(f"building the system raised {type(exc).__name__}: {exc}") from None
    if not hasattr(instance, "run"):
        raise OloproofError(f"the system factory returned {type(instance).__name__}, which has no run(input)")
    return instance


def _version(instance: Any) -> str | None:
    version = getattr(instance, "version", None)
    return None if version is None else str(version)


def run_suite(suite: Suite, system: Any = None, workers: int = 1, executor: Executor | None = None,
              out: str | Path | None = None, resume: bool = False, progress: Progress | None = None,
              chunk_size: int = 8) -> Path:
    """Run every case of ``suite`` into a run directory and return the directory.

    For each case the sandbox is reset to a deep copy of ``initial_state``,
    the system runs the input, and ``snapshot()`` is stored as an
    ``environment_state/v1`` record beside the trajectory. Records are
    appended to the run directory one at a time, so a crash loses nothing
    that finished. See ``op.run`` for the parameters.
    """
    if not isinstance(workers, int) or workers < 1:
        raise OloproofError(f"workers={workers!r}: must be an integer of at least 1")
    if chunk_size < 1:
        raise OloproofError(f"chunk_size={chunk_size!r}: must be at least 1")
    factory, fresh_instances = _factory(suite, system)
    if (workers > 1 or executor is not None) and not fresh_instances:
        raise OloproofError("workers > 1 and executor= need a system class or factory, not one instance")
    if executor is not None and system is not None:
        raise OloproofError("executor= builds systems from the suite's own 'system'; do not pass system=")
    try:
        first = _build(factory)
    except OloproofError as exc:  # name the file that named the system
        if system is not None:
            raise
        raise OloproofError(f"{suite.root / SUITE_FILE}: system: {exc}") from None
    version = _version(first)
    started = utc_now()
    if resume:
        if out is None:
            raise RunDirError("resume=True needs out= (the directory of the interrupted run)")
        directory = Path(out)
        _check_resumable(read_manifest(directory), suite, version, directory)  # before anything is touched
        store = RunStore.resume(directory)
        done = {rec["case"]["id"] for rec in read_cases(directory)}
    else:
        run_id = new_run_id(started)
        directory = Path(out) if out is not None else suite.root / "runs" / run_id
        manifest = Manifest(suite=suite.name, run_id=run_id, system_version=version, started_at=iso(started),
                            oloproof_nb=__version__, n_cases=len(suite.cases), digests=suite.digests,
                            suite_config=StoredSuite.model_validate(suite.manifest_config()))
        store = RunStore.create(directory, manifest)
        done = set()
    pending = [(i, case) for i, case in enumerate(suite.cases) if case.id not in done]
    total, finished = len(suite.cases), len(suite.cases) - len(pending)
    settings = RunSettings(run_id=store.manifest.run_id, system_version=version,
                           timeout_s=suite.config.case_timeout_s, suite_root=suite.root,
                           evaluators=list(suite.config.evaluators), validators=suite.resolve_validators(),
                           append_replay=store.append_replay, cache=ReplayCache(suite.root / REPLAY_CACHE_DIR))
    try:
        if progress is not None:
            progress(finished, total)
        if executor is not None:
            records = _run_on_executor(executor, suite, pending, settings, chunk_size, store)
        elif workers == 1:
            records = _run_serial(suite, pending, first, factory, fresh_instances, settings)
        else:
            records = _run_threaded(pending, first, factory, workers, settings)
        for record in records:
            store.append_case(record)
            finished += 1
            if progress is not None:
                progress(finished, total)
    finally:
        store.close()
    store.finish(finished_at=utc_now())
    return directory


def _check_resumable(manifest: Manifest, suite: Suite, version: str | None, directory: Path) -> None:
    if manifest.suite != suite.name:
        raise RunDirError(f"{directory}: holds a run of suite {manifest.suite!r}, not {suite.name!r}")
    for name, value in suite.digests.items():
        if manifest.digests.get(name) != value:
            raise RunDirError(f"{directory}: {name} changed since this run started; start a new run instead")
    if manifest.system_version != version:
        raise RunDirError(f"{directory}: the system version changed ({manifest.system_version!r} → "
                          f"{version!r}); start a new run instead")


def _run_serial(suite: Suite, pending: list[tuple[int, Case]], first: Any, factory: Callable[[], Any],
                fresh: bool, settings: RunSettings) -> Iterator[CaseRecord]:
    system = first
    for index, case in pending:
        outcome = execute_case(case, index, system, settings)
        if outcome.needs_fresh_system and fresh:
            system = _build(factory)
        yield outcome.record


def _run_threaded(pending: list[tuple[int, Case]], first: Any, factory: Callable[[], Any],
                  workers: int, settings: RunSettings) -> Iterator[CaseRecord]:
    instances: queue.Queue[Any] = queue.Queue()
    instances.put(first)
    for _ in range(workers - 1):
        instances.put(_build(factory))

    def task(index: int, case: Case) -> CaseRecord:
        system = instances.get()
        try:
            outcome = execute_case(case, index, system, settings)
            if outcome.needs_fresh_system:
                system = _build(factory)
            return outcome.record
        finally:
            instances.put(system)

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="oloproof-worker") as pool:
        futures = [pool.submit(task, index, case) for index, case in pending]
        for future in as_completed(futures):
            yield future.result()


# -- executors (other processes or machines) ---------------------------------------------------

_REMOTE_LOCK = threading.Lock()
_REMOTE_SUITES: dict[tuple[str, tuple[tuple[str, str], ...]], Suite] = {}
_REMOTE_POOLS: dict[tuple[str, tuple[tuple[str, str], ...]], queue.Queue[Any]] = {}


def _worker_digests(digests: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The digests a worker's copy of the suite must match (release.yaml only matters to the gate)."""
    return tuple(sorted((name, value) for name, value in digests.items() if name != RELEASE_FILE))


def _remote_suite(suite_root: str, digests: dict[str, str]) -> tuple[Suite, queue.Queue[Any]]:
    """The suite as this worker process sees it (loaded once per version of its files), and its system pool."""
    key = (suite_root, _worker_digests(digests))
    with _REMOTE_LOCK:
        suite = _REMOTE_SUITES.get(key)
        if suite is None:
            suite = load_suite(suite_root)
            if _worker_digests(suite.digests) != key[1]:
                changed = sorted({name for name, _ in set(key[1]) ^ set(_worker_digests(suite.digests))})
                raise OloproofError(f"{suite_root}: {', '.join(changed)} on worker {socket.gethostname()} differ "
                                    "from the run's; every worker needs the same suite folder at the same path "
                                    "(a shared filesystem, or a copy shipped there)")
            for stale in [k for k in _REMOTE_SUITES if k[0] == suite_root]:  # an earlier version of the files
                del _REMOTE_SUITES[stale], _REMOTE_POOLS[stale]
            _REMOTE_SUITES[key] = suite
            _REMOTE_POOLS[key] = queue.Queue()
        return suite, _REMOTE_POOLS[key]


def _remote_batch(suite_root: str, digests: dict[str, str], case_indices: list[int], run_id: str,
                  version: str | None) -> tuple[list[CaseRecord], list[ReplayRecord]]:
    """Executed on a worker: load the suite from its folder once per process, run a batch of cases.

    Systems are built on the worker from the suite's own ``system`` and kept
    in a per-process pool, so concurrent batches in one process never share
    an instance. Replays are returned with the records (the caller appends them).
    """
    suite, pool = _remote_suite(suite_root, digests)
    factory = as_factory(suite.resolve_system())[0]
    try:
        system = pool.get_nowait()
    except queue.Empty:
        system = _build(factory)
        if _version(system) != version:
            raise OloproofError(f"{suite_root}: the system on worker {socket.gethostname()} has version "
                                f"{_version(system)!r}, the run's has {version!r}; restart the workers after "
                                "changing the system's code") from None
    replays: list[ReplayRecord] = []
    records = []
    settings = RunSettings(run_id=run_id, system_version=version, timeout_s=suite.config.case_timeout_s,
                           suite_root=suite.root, evaluators=list(suite.config.evaluators),
                           validators=suite.resolve_validators(), append_replay=replays.append,
                           cache=ReplayCache(suite.root / REPLAY_CACHE_DIR))
    try:
        for index in case_indices:
            outcome = execute_case(suite.cases[index], index, system, settings)
            if outcome.needs_fresh_system:
                system = _build(factory)
            records.append(outcome.record)
    finally:
        pool.put(system)
    return records, replays


def _chunks(items: list[int], size: int) -> Iterable[list[int]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _run_on_executor(executor: Executor, suite: Suite, pending: list[tuple[int, Case]], settings: RunSettings,
                     chunk_size: int, store: RunStore) -> Iterator[CaseRecord]:
    root = str(suite.root)
    futures: list[Future[Any]] = [
        executor.submit(_remote_batch, root, dict(suite.digests), batch, settings.run_id, settings.system_version)
        for batch in _chunks([index for index, _ in pending], chunk_size)
    ]
    for future in as_completed(futures):
        records, replays = future.result()
        for replay in replays:
            store.append_replay(replay)
        yield from records
