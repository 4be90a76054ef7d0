"""``_run/isolation.py``: the parent's bookkeeping of a worker, by hand counts on a pool whose processes are
stood in for (no process is started here)."""

from __future__ import annotations

import multiprocessing
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from oloproof_nb._run import isolation
from oloproof_nb._run.context import ShownArtifacts
from oloproof_nb._run.isolation import GRACE_S, ProcessWorkers, _Worker
from oloproof_nb.errors import OloproofError


class _Alive:
    """A stand-in for the worker's process: still running."""

    def poll(self) -> None:
        return None


def _pool(timeout_s: float = 10.0) -> tuple[ProcessWorkers, list[int]]:
    """A pool of one worker whose spawns are noted (the failed starts in a row each was given), not started."""
    pool = ProcessWorkers.__new__(ProcessWorkers)
    spawned: list[int] = []

    def spawn(failures: int = 0) -> _Worker:
        spawned.append(failures)
        return _Worker(proc=_Alive(), conn=None, start_failures=failures)  # type: ignore[arg-type]

    pool._spawn = spawn  # type: ignore[method-assign]
    pool._retire = lambda worker: None  # type: ignore[method-assign]
    pool._suite_file = Path("suite") / "oloproof.yaml"
    pool._timeout_s = timeout_s
    pool._workers = [_Worker(proc=_Alive(), conn=None)]  # type: ignore[arg-type]
    return pool, spawned


def test_a_worker_replaced_after_its_case_leaves_its_successor_two_failed_starts() -> None:
    """The module: "a system that cannot be built twice in a row in a fresh worker stops the run". A worker that
    died during a case (no failed start) is replaced with a count of 0; its successor failing to start once is
    replaced again (count 1); a second failure in a row stops the run. Counted from 1 after the case, the first
    failed start stopped the run."""
    pool, spawned = _pool()
    pool._replace(pool._workers[0])  # died during its case: not a failed start
    assert spawned == [0]
    pool._replace(pool._workers[0], failed_start="ImportError: no module named bank")
    assert spawned == [0, 1]
    with pytest.raises(OloproofError, match="could not build the system 2 times in a row"):
        pool._replace(pool._workers[0], failed_start="ImportError: no module named bank")
    assert spawned == [0, 1]


def test_a_call_overran_only_past_the_timeout_and_the_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """``case_timeout_s`` 10 s + ``GRACE_S`` 1 s: a call 10.5 s old has not overran, 11.5 s old has; a worker with
    no call running (``call_started`` 0) never has, however long its case."""
    assert GRACE_S == 1.0
    now = [1000.0]
    monkeypatch.setattr(isolation, "time", SimpleNamespace(monotonic=lambda: now[0]))
    pool, _ = _pool(timeout_s=10.0)
    worker = pool._workers[0]
    worker.call_started = 1000.0 - 10.5
    assert pool._overran(worker) is False
    worker.call_started = 1000.0 - 11.5
    assert pool._overran(worker) is True
    worker.call_started = 0.0
    assert pool._overran(worker) is False


def test_a_call_that_ended_is_no_longer_timed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker says ("call", True) then ("call", False): no call runs any more (``call_started`` 0), so the
    oloproof work of the case after it (its checks) is not killed as an overrun 11 s later."""
    now = [500.0]
    monkeypatch.setattr(isolation, "time", SimpleNamespace(monotonic=lambda: now[0]))
    parent, child = multiprocessing.Pipe()
    try:
        pool, _ = _pool(timeout_s=10.0)
        worker = _Worker(proc=_Alive(), conn=parent)  # type: ignore[arg-type]
        child.send(("call", True))
        assert pool._recv(worker) is None
        assert worker.call_started == 500.0
        child.send(("call", False))
        assert pool._recv(worker) is None
        assert worker.call_started == 0.0
        now[0] += 11.5
        assert pool._overran(worker) is False
        message: Any = ("done", {"case_id": "c1"}, [], False, False)
        child.send(message)
        assert pool._recv(worker) == message
    finally:
        parent.close()
        child.close()


def _busy(pool: ProcessWorkers, parent: Any) -> _Worker:
    """The pool's one worker, busy with case ``c1`` and talking over ``parent``."""
    worker = _Worker(proc=_Alive(), conn=parent, state="busy", item=(0, object()), call_started=0.0)  # type: ignore[arg-type]
    pool._workers = [worker]
    pool.shown = ShownArtifacts()
    pool._append_replay = lambda record: None
    return worker


def test_a_worker_whose_call_timed_out_in_process_is_replaced_once_its_case_is_recorded() -> None:
    """The module: "a worker whose call timed out in-process (its helper thread abandoned) is replaced after the
    case". Its "done" message says so (``retire``): the record is yielded, then one fresh worker takes its place."""
    parent, child = multiprocessing.Pipe()
    try:
        pool, spawned = _pool()
        worker = _busy(pool, parent)
        child.send(("done", {"case_id": "c1", "status": "timeout"}, [], True, False))
        records: list[Any] = list(pool._poll_busy(worker))
        assert records == [{"case_id": "c1", "status": "timeout"}]
        assert spawned == [0] and worker not in pool._workers and len(pool._workers) == 1
    finally:
        parent.close()
        child.close()


def test_the_versions_a_workers_case_was_shown_are_noted_for_the_next_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """A case's receipt on one worker (``report`` modified 13:00:00Z, digest ab…) is noted by the run's process at
    its time now (14:00), so the worker that runs the next case of ``report`` is handed that version (the module's
    ``shown``: an epoch that wrote nothing on another worker is stale too)."""
    now = datetime(2026, 7, 25, 14, tzinfo=timezone.utc)
    monkeypatch.setattr("oloproof_nb._run.context.utc_now", lambda: now)
    parent, child = multiprocessing.Pipe()
    try:
        pool, _ = _pool()
        worker = _busy(pool, parent)
        receipt = {"artifact_id": "report", "modified_at": "2026-07-25T13:00:00Z", "observed_digest": "ab" * 32,
                   "digest_kind": "sha256"}
        child.send(("done", {"case_id": "c1", "receipts": [receipt]}, [], False, False))
        assert len(list(pool._poll_busy(worker))) == 1
        version = ("report", datetime(2026, 7, 25, 13, tzinfo=timezone.utc), "ab" * 32, "sha256")
        assert pool.shown.entries(["report"]) == [(version, now)]
        assert worker.state == "idle"
    finally:
        parent.close()
        child.close()
