"""``_run/timeouts.py``: every oloproof frame is left out of a system's traceback, and a
wait the user interrupts abandons its helper."""

from __future__ import annotations

import functools
import queue
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from oloproof_nb._run.timeouts import call_with_timeout, system_traceback


def _relay_from_run_package() -> Callable[[Callable[[], Any]], Any]:
    """A function whose code says it is in ``oloproof_nb/_run/`` (as the sandbox's ``lambda: system.reset(s)``)."""
    space: dict[str, Any] = {}
    exec(compile("def relay(fn):\n    return fn()\n", "/site/oloproof_nb/_run/relay.py", "exec"), space)  # noqa: S102
    return space["relay"]  # type: ignore[no-any-return]


def _system_bug() -> None:
    raise ValueError("the system's own bug")


def test_every_oloproof_frame_before_the_systems_code_is_left_out_of_its_traceback() -> None:
    """Two oloproof frames (the helper's loop, then a relay in ``_run``) before the system's: both are left out, not
    only the first; the system's frame and message stay."""
    relay = _relay_from_run_package()
    with pytest.raises(ValueError) as err:
        call_with_timeout(functools.partial(relay, _system_bug), 10)
    trace = system_traceback(err.value)
    assert trace is not None and "in _system_bug" in trace and "ValueError: the system's own bug" in trace
    assert "relay" not in trace and "oloproof_nb/_run/" not in trace


def test_a_wait_interrupted_by_ctrl_c_leaves_its_helper_and_the_next_call_gets_a_new_one() -> None:
    """The module: a wait interrupted (Ctrl-C) gives an unmarked KeyboardInterrupt, and the helper still busy with
    the interrupted call is abandoned. Kept, the next call queued behind that call and timed out."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    release = threading.Event()

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        def hangs() -> None:
            signal.setitimer(signal.ITIMER_REAL, 0.1)  # armed once the call runs: the caller is waiting by then
            release.wait(30)

        with pytest.raises(KeyboardInterrupt) as err:
            call_with_timeout(hangs, None)
        assert system_traceback(err.value) is None  # the user's Ctrl-C, not the system's
        assert call_with_timeout(lambda: "answered", 5.0) == "answered"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        release.set()


_SIMPLE_QUEUE = queue.SimpleQueue


class _LateQueue:
    """A job queue whose first ``get`` times out just as a job arrives (the job is there when the helper looks)."""

    def __init__(self) -> None:
        self._inner: Any = _SIMPLE_QUEUE()
        self._first = True

    def put(self, item: Any) -> None:
        self._inner.put(item)

    def empty(self) -> bool:
        return bool(self._inner.empty())

    def get(self, timeout: float | None = None) -> Any:
        if self._first:
            self._first = False
            item = self._inner.get(timeout=30)  # wait for the job, then say the wait timed out, leaving it queued
            self._inner.put(item)
            raise queue.Empty
        return self._inner.get(timeout=timeout)


def test_a_call_submitted_as_the_idle_helper_times_out_is_still_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_Helper._loop``: "submit() puts under this lock: no call is lost between the check and the exit". A job
    queued as the helper's idle wait ran out is run, not dropped with the helper (its caller then waited forever)."""
    from oloproof_nb._run import timeouts

    monkeypatch.setattr(queue, "SimpleQueue", _LateQueue)  # the module the helper takes its queue from
    helper = timeouts._Helper()
    box: dict[str, Any] = {}
    done = threading.Lock()
    done.acquire()
    assert helper.submit(lambda: "ran", box, done) is True
    assert done.acquire(timeout=10) is True
    assert box == {"value": "ran"}
