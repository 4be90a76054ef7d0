"""``op.run``: every case of a suite on the user's sandboxes, written to a run directory as it goes."""

from __future__ import annotations

import queue
import socket
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ._version import __version__
from .cases import Case
from .errors import OloproofError, RunDirError
from .execute import execute_case
from .replay_cache import REPLAY_CACHE_DIR
from .results import Run, load_run
from .services import Services
from .store import CASES, RunStore, iso, new_run_id, read_jsonl, read_manifest, utc_now
from .suite import RELEASE_FILE, SUITE_FILE, Suite, as_factory, load_suite

__all__ = ["run"]

RUN_SCHEMA = "oloproof_run/v1"


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


def _stderr_is_tty() -> bool:
    """True when stderr is a terminal (False when there is no stderr at all, as under pythonw)."""
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty()) if callable(isatty) else False


def _version(instance: Any) -> str | None:
    version = getattr(instance, "version", None)
    return None if version is None else str(version)


def run(suite: Suite | str | Path, system: Any = None, workers: int = 1, executor: Executor | None = None,
        out: str | Path | None = None, resume: bool = False, progress: bool | None = None,
        chunk_size: int = 8) -> Run:
    """Run every case of ``suite`` and return the :class:`~oloproof_nb.results.Run`.

    For each case the sandbox is reset to a deep copy of ``initial_state``,
    the system runs the input, and ``snapshot()`` is stored as an
    ``environment_state/v1`` record beside the trajectory. Records are
    appended to the run directory one at a time, so a crash loses nothing
    that finished.

    Parameters
    ----------
    suite : Suite or path
        A loaded suite, or its folder.
    system : object, class or callable, optional
        Use this system (an instance, or a factory of instances) instead of the suite's ``system``.
    workers : int
        Number of system instances run concurrently (threads). Cases sharing an
        instance never overlap; the frames equal a serial run's.
    executor : concurrent.futures.Executor, optional
        Run cases on this executor instead (e.g. ``dask.distributed.Client.get_executor()``):
        each worker imports the suite from its folder and builds its own systems.
    out : path, optional
        The run directory (default ``runs/<run_id>/`` in the suite folder). It must
        not exist or be empty, unless ``resume``.
    resume : bool
        Finish the interrupted run in ``out``: recorded cases are not run again.
    progress : bool, optional
        Show a progress bar (default: when stderr is a terminal).
    chunk_size : int
        Cases per task sent to ``executor``.

    Returns
    -------
    Run
        Rebuilt from the run directory, exactly as :func:`load_run` would.
    """
    if not isinstance(suite, Suite):
        suite = load_suite(suite)
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
        done = {rec["case"]["id"] for rec in read_jsonl(directory / CASES)}
    else:
        run_id = new_run_id(started)
        directory = Path(out) if out is not None else suite.root / "runs" / run_id
        manifest = {
            "schema": RUN_SCHEMA,
            "suite": suite.name,
            "run_id": run_id,
            "system_version": version,
            "started_at": iso(started),
            "oloproof_nb": __version__,
            "n_cases": len(suite.cases),
            "digests": suite.digests,
            "suite_config": suite.manifest_config(),
        }
        store = RunStore.create(directory, manifest)
        done = set()
    pending = [(i, case) for i, case in enumerate(suite.cases) if case.id not in done]
    bar = tqdm(total=len(suite.cases), initial=len(suite.cases) - len(pending), unit="case",
               desc=suite.name, disable=(not _stderr_is_tty()) if progress is None else not progress,
               leave=False)
    run_id = store.manifest["run_id"]
    try:
        if executor is not None:
            records = _run_on_executor(executor, suite, pending, run_id, version, chunk_size, store)
        elif workers == 1:
            records = _run_serial(suite, pending, first, factory, fresh_instances, run_id, version, store)
        else:
            records = _run_threaded(suite, pending, first, factory, workers, run_id, version, store)
        for record in records:
            store.append_case(record)
            bar.update(1)
    finally:
        bar.close()
        store.close()
    store.finish(finished_at=iso(utc_now()))
    return load_run(directory)


def _check_resumable(manifest: dict[str, Any], suite: Suite, version: str | None, directory: Path) -> None:
    if manifest.get("suite") != suite.name:
        raise RunDirError(f"{directory}: holds a run of suite {manifest.get('suite')!r}, not {suite.name!r}")
    stored = manifest.get("digests", {})
    for name, value in suite.digests.items():
        if stored.get(name) != value:
            raise RunDirError(f"{directory}: {name} changed since this run started; start a new run instead")
    if manifest.get("system_version") != version:
        raise RunDirError(f"{directory}: the system version changed ({manifest.get('system_version')!r} → "
                          f"{version!r}); start a new run instead")


def _services(suite: Suite, run_id: str, version: str | None, store: RunStore | None,
              sink: list[dict[str, Any]] | None = None) -> Services:
    append = store.append_replay if store is not None else (sink.append if sink is not None else None)
    return Services(run_id=run_id, system_version=version, timeout_s=suite.config.case_timeout_s,
                    suite_root=suite.root, evaluators=list(suite.config.evaluators), case_started_at=utc_now(),
                    append_replay=append or (lambda record: None),
                    replay_cache_dir=suite.root / REPLAY_CACHE_DIR,
                    validators=suite.resolve_validators())


def _run_serial(suite: Suite, pending: list[tuple[int, Case]], first: Any, factory: Callable[[], Any],
                fresh: bool, run_id: str, version: str | None, store: RunStore) -> Iterator[dict[str, Any]]:
    system = first
    services = _services(suite, run_id, version, store)
    for index, case in pending:
        outcome = execute_case(case, index, system, suite.config.evaluators, services)
        if outcome.needs_fresh_system and fresh:
            system = _build(factory)
        yield outcome.record


def _run_threaded(suite: Suite, pending: list[tuple[int, Case]], first: Any, factory: Callable[[], Any],
                  workers: int, run_id: str, version: str | None, store: RunStore) -> Iterator[dict[str, Any]]:
    instances: queue.Queue[Any] = queue.Queue()
    instances.put(first)
    for _ in range(workers - 1):
        instances.put(_build(factory))

    def task(index: int, case: Case) -> dict[str, Any]:
        system = instances.get()
        try:
            outcome = execute_case(case, index, system, suite.config.evaluators,
                                   _services(suite, run_id, version, store))
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
                  version: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Executed on a worker: load the suite from its folder once per process, run a batch of cases.

    Systems are built on the worker from the suite's own ``system`` and kept
    in a per-process pool, so concurrent batches in one process never share
    an instance. Replays are returned with the records (the caller appends them).
    """
    suite, pool = _remote_suite(suite_root, digests)
    factory = suite.system_factory()
    try:
        system = pool.get_nowait()
    except queue.Empty:
        system = _build(factory)
        if _version(system) != version:
            raise OloproofError(f"{suite_root}: the system on worker {socket.gethostname()} has version "
                                f"{_version(system)!r}, the run's has {version!r}; restart the workers after "
                                "changing the system's code") from None
    replays: list[dict[str, Any]] = []
    records = []
    try:
        for index in case_indices:
            services = _services(suite, run_id, version, None, sink=replays)
            outcome = execute_case(suite.cases[index], index, system, suite.config.evaluators, services)
            if outcome.needs_fresh_system:
                system = _build(factory)
            records.append(outcome.record)
    finally:
        pool.put(system)
    return records, replays


def _chunks(items: list[int], size: int) -> Iterable[list[int]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _run_on_executor(executor: Executor, suite: Suite, pending: list[tuple[int, Case]], run_id: str,
                     version: str | None, chunk_size: int, store: RunStore) -> Iterator[dict[str, Any]]:
    root = str(suite.root)
    futures: list[Future[Any]] = [
        executor.submit(_remote_batch, root, dict(suite.digests), batch, run_id, version)
        for batch in _chunks([index for index, _ in pending], chunk_size)
    ]
    for future in as_completed(futures):
        records, replays = future.result()
        for replay in replays:
            store.append_replay(replay)
        yield from records
