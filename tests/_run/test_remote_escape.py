"""A batch of an executor's worker whose case escaped (the worker's Ctrl-C, oloproof's own error, a
``BaseException`` raised in the worker): its system instance is released, never pooled for the worker's next batch.

A worker process keeps its pool for the next batch and the next run (:func:`~oloproof_nb._run.remote._remote_batch`).
Its ``finally`` pooled the batch's instance whenever it had one, an escaped one too: after a Ctrl-C in a worker
process, the call it interrupted still running on the instance, the worker's next batch took it from the pool
unchecked and ran its case beside that call (the side-channel log showed ``c1`` run on the instance ``c0``'s call
still ran on); after oloproof's own error, the instance left mid-case was kept. Here two batches of a worker
process are called in this one, as the worker calls them.
"""

from __future__ import annotations

import gc
import signal
import threading
import weakref
from pathlib import Path
from typing import Any

import pytest
from _reliability_systems import interrupt_once_running, make_case, read_log, runs_of, write_suite

import oloproof_nb as op
from oloproof_nb._run import case as case_module
from oloproof_nb._run.remote import _release_here, _remote_batch
from oloproof_nb._run.systems import BUSY_INSTANCE, identity_of
from oloproof_nb._run.timeouts import abandoned_calls
from oloproof_nb.errors import OloproofError

#: A factory that gives the module's one instance.
SINGLETON = '''
from relsys import VersionedDesk

DESK = VersionedDesk()


def make():
    return DESK
'''


def _batch_args(root: Path) -> tuple[op.Suite, tuple[Any, ...], list[Any]]:
    """The suite, what every batch of one run is sent with after its cases, and its cases by index."""
    suite = op.load_suite(root)
    version, fingerprint = identity_of(suite.resolve_system()(), suite.system_target, root=suite.root,
                                       spec=suite.config.system, timeout_s=None)
    return suite, ("run-1", version, fingerprint, False), list(enumerate(suite.iter_cases()))


def _interrupted_then_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, system: str,
                           next_batch: Any) -> list[list[Any]]:
    """Batch ``[c0]`` interrupted (Ctrl-C) while c0's call hangs, then ``next_batch(run_batch, cases)`` while that
    call still runs; the side-channel log."""
    release, log = tmp_path / "release", tmp_path / "log"
    monkeypatch.setenv("RELSYS_RELEASE", str(release))
    monkeypatch.setenv("RELSYS_LOG", str(log))
    root = write_suite(tmp_path / "suite", [make_case("c0", op="hang"), make_case("c1")], system=system,
                       case_timeout_s=30)
    if system.startswith("single:"):
        (root / "single.py").write_text(SINGLETON, encoding="utf-8")
    suite, rest, cases = _batch_args(root)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own, whatever a runner set
    try:
        watcher = interrupt_once_running(log, 0.2)
        with pytest.raises(KeyboardInterrupt):
            _remote_batch(str(root), dict(suite.digests), cases[:1], *rest)
        watcher.join(10)
        signal.signal(signal.SIGINT, before)
        assert abandoned_calls(), "c0's interrupted call runs on"
        next_batch(lambda batch: _remote_batch(str(root), dict(suite.digests), batch, *rest), cases)
    finally:
        signal.signal(signal.SIGINT, before)
        release.touch()  # the interrupted call ends
        for thread in abandoned_calls():
            thread.join(10)
        _release_here(str(root), None)
    return read_log(log)


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="a signal is the main thread's")
def test_the_next_batch_after_a_ctrl_c_in_a_worker_runs_on_a_fresh_instance(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def next_batch(run_batch: Any, cases: list[Any]) -> None:
        records, _ = run_batch(cases[1:])
        assert [(r["case"]["id"], r["status"]) for r in records] == [("c1", "completed")]

    events = _interrupted_then_next(tmp_path, monkeypatch, "relsys:VersionedDesk", next_batch)
    ran_on = {cid: instance for event, cid, instance, _ in events if event == "run"}
    # before: c1 ran on c0's instance, beside c0's call (it was pooled; the next batch took it unchecked)
    assert ran_on["c0"] != ran_on["c1"]
    # c0's and c1's: the instance built to read the run's identity is not this module's (imported by the suite)
    assert [instance for event, _, instance, _ in events if event == "init"][-2:] == [ran_on["c0"], ran_on["c1"]]


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="a signal is the main thread's")
def test_after_a_ctrl_c_in_a_worker_its_one_instance_is_refused_while_the_call_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A factory that gives one instance: the next batch is refused in one line (the factory's instance is busy),
    where it ran c1 beside c0's interrupted call."""
    def next_batch(run_batch: Any, cases: list[Any]) -> None:
        with pytest.raises(OloproofError) as caught:
            run_batch(cases[1:])
        assert str(caught.value).endswith(f", {BUSY_INSTANCE}")

    events = _interrupted_then_next(tmp_path, monkeypatch, "single:make", next_batch)
    assert runs_of(events) == ["c0"]


@pytest.mark.parametrize("escape", [RuntimeError("a bug in oloproof"), SystemExit(3)])
def test_an_instance_whose_batch_escaped_is_released_not_pooled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                escape: BaseException) -> None:
    """oloproof's own error, or a ``SystemExit`` raised in the worker (not by the system: unmarked), stops the
    batch mid-case: its instance is released at once, and the worker's next batch builds another."""
    log = tmp_path / "log"
    monkeypatch.setenv("RELSYS_LOG", str(log))
    root = write_suite(tmp_path / "suite", [make_case("c0"), make_case("c1")], system="relsys:VersionedDesk")
    suite, rest, cases = _batch_args(root)
    real, seen = case_module.run_case, []

    def broken(system: Any, case: Any, **kwargs: Any) -> Any:
        seen.append(weakref.ref(system))
        raise escape

    try:
        monkeypatch.setattr(case_module, "run_case", broken)
        try:
            _remote_batch(str(root), dict(suite.digests), cases[:1], *rest)
        except type(escape) as exc:  # its traceback holds the instance (the frames' arguments): not kept here
            assert exc is escape
        else:
            pytest.fail("the batch did not stop")
        escape.__traceback__ = None
        gc.collect()
        assert seen[0]() is None  # released: before, pooled for the next batch
        monkeypatch.setattr(case_module, "run_case", real)
        records, _ = _remote_batch(str(root), dict(suite.digests), cases[1:], *rest)
        assert [(r["case"]["id"], r["status"]) for r in records] == [("c1", "completed")]
    finally:
        _release_here(str(root), None)
    assert runs_of(read_log(log)) == ["c1"]
