"""The one timeout mechanism: calls into the user's system run on a reusable helper thread, waited for at most N s."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["CaseTimeout", "call_with_timeout", "HELPER_IDLE_S"]

T = TypeVar("T")


class CaseTimeout(Exception):
    """A call into the system took longer than ``case_timeout_s``."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"timeout: exceeded case_timeout_s={seconds:g}")
        self.seconds = seconds


#: Seconds an idle helper thread waits for its next call before it exits.
HELPER_IDLE_S = 5.0


class _Helper:
    """A daemon thread that runs the calls of one calling thread, one at a time.

    Starting a thread per call costs about 100 µs; handing a call to a waiting
    thread costs about 20 µs. A helper whose call timed out is *abandoned*: it
    finishes that call in the background (never keeping the process alive, its
    result dropped) and exits; the caller's next call gets a new helper. An idle
    helper exits after :data:`HELPER_IDLE_S` seconds.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], dict[str, Any], threading.Lock]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._retired = False
        self.abandoned = False
        self._thread = threading.Thread(target=self._loop, name="oloproof-call", daemon=True)
        self._thread.start()

    def submit(self, fn: Callable[[], Any], box: dict[str, Any], done: threading.Lock) -> bool:
        """Queue a call; False when this helper no longer takes calls (retired, abandoned, or lost in a fork)."""
        if not self._thread.is_alive():  # e.g. in a process forked from the one that started it: never lock
            return False
        with self._lock:
            if self._retired or self.abandoned:
                return False
            self._jobs.put((fn, box, done))
            return True

    def _loop(self) -> None:
        while True:
            try:
                fn, box, done = self._jobs.get(timeout=HELPER_IDLE_S)
            except queue.Empty:
                with self._lock:  # submit() puts under this lock: no call is lost between the check and the exit
                    if self._jobs.empty():
                        self._retired = True
                        return
                continue
            try:
                box["value"] = fn()
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                box["error"] = exc
            done.release()
            del fn, box, done  # drop references to the result before waiting for the next call
            if self.abandoned:
                return


_LOCAL = threading.local()


def call_with_timeout(fn: Callable[[], T], timeout_s: float | None) -> T:
    """Run ``fn()`` in a daemon helper thread and wait at most ``timeout_s`` seconds.

    Each calling thread reuses one helper thread for its calls. An abandoned
    call keeps running in its daemon thread but never keeps the process
    alive, and its result is dropped; the next call runs on a new helper.
    Exceptions propagate.
    """
    if timeout_s is None or timeout_s >= threading.TIMEOUT_MAX:  # e.g. case_timeout_s: .inf — no limit
        return fn()
    box: dict[str, Any] = {}
    done = threading.Lock()
    done.acquire()
    helper: _Helper | None = getattr(_LOCAL, "helper", None)
    if helper is None or not helper.submit(fn, box, done):
        helper = _LOCAL.helper = _Helper()
        helper.submit(fn, box, done)
    try:
        finished = done.acquire(timeout=timeout_s)
    except BaseException:  # interrupted while waiting: this helper may still be busy
        helper.abandoned, _LOCAL.helper = True, None
        raise
    if not finished:
        helper.abandoned, _LOCAL.helper = True, None
        raise CaseTimeout(timeout_s)
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]
