"""The one timeout mechanism: calls into the user's system run on a reusable helper thread, waited for at most N s.

Every call into the user's code (constructor, ``reset``, ``run``, ``replay``,
``snapshot``, ``observe``, ``fingerprint``, validators) goes through
:func:`call_with_timeout`. That makes two things true:

- **what the system raised is marked as the system's.** Whatever the call
  raises — any ``Exception``, and ``SystemExit``, ``KeyboardInterrupt``,
  ``asyncio.CancelledError`` or another ``BaseException`` raised by the
  system's own code — is re-raised in the caller marked with the traceback it
  had in the helper thread (:func:`system_traceback`). The run treats a marked
  exception as a failure of the case; an unmarked one is oloproof's own (a bug:
  the run stops) or the user's Ctrl-C (the main thread is interrupted while it
  waits: the run stops and can be resumed);
- **a call cannot block the run for longer than the timeout** unless it holds
  the GIL (a pathological regular expression, a C extension that never
  releases it): then only process isolation helps (``isolation: process``).

In a worker process of ``isolation: process``, :func:`set_call_watch` tells the
parent when a call starts and ends, so the parent can kill a worker whose call
overran. Only the outermost call is told of (:func:`watched`): a call made from
inside one (a suite's check that calls ``op.observe_file``, a system whose ``run``
does) is part of it, and its end never stops the clock of the call it is in.
"""

from __future__ import annotations

import queue
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from ..errors import describe_exception, storable

__all__ = ["CaseTimeout", "SystemRaised", "call_with_timeout", "system_traceback", "set_call_watch", "watched",
           "HELPER_IDLE_S", "TRACEBACK_LIMIT", "abandoned_calls"]

T = TypeVar("T")


class CaseTimeout(Exception):
    """A call into the system took longer than ``case_timeout_s`` (``message``: another reason, in its words)."""

    def __init__(self, seconds: float, message: str | None = None) -> None:
        super().__init__(message or f"timeout: exceeded case_timeout_s={seconds:g}")
        self.seconds = seconds


class SystemRaised(Exception):
    """Carries an exception of the system's that could not be marked in place (its class refuses attributes)."""

    def __init__(self, error: BaseException, traceback_text: str) -> None:
        super().__init__(describe_exception(error))
        self.error = error
        setattr(self, _MARK, traceback_text)


#: Seconds an idle helper thread waits for its next call before it exits.
HELPER_IDLE_S = 5.0
#: Characters of a system's traceback kept (the last ones: where it raised).
TRACEBACK_LIMIT = 20_000
_MARK = "__oloproof_system_traceback__"
_PACKAGE_RUN = "oloproof_nb/_run/"


def _format_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` as the system's code raised it (oloproof's own calling frames left out)."""
    try:
        tb = exc.__traceback__
        while tb is not None and _PACKAGE_RUN in tb.tb_frame.f_code.co_filename.replace("\\", "/"):
            tb = tb.tb_next  # the helper thread and the sandbox routine: not the system's
        text = "".join(traceback.format_exception(type(exc), exc, tb))
    except BaseException:  # noqa: BLE001 - a traceback that cannot be formatted still leaves the reason
        text = describe_exception(exc) + "\n"
    text = storable(text)  # a message quoting a file name that is not UTF-8
    return text if len(text) <= TRACEBACK_LIMIT else "…" + text[-(TRACEBACK_LIMIT - 1):]


def _mark(exc: BaseException, text: str) -> BaseException:
    """``exc`` marked as the system's (or a :class:`SystemRaised` carrying it when it refuses the mark)."""
    try:
        setattr(exc, _MARK, text)
        if getattr(exc, _MARK, None) is text:
            return exc
    except BaseException:  # noqa: BLE001 - a class that refuses attributes is wrapped instead
        pass
    return SystemRaised(exc, text)


def system_traceback(exc: BaseException) -> str | None:
    """The traceback of an exception the system's code raised inside :func:`call_with_timeout`, else None.

    None means the exception did not come out of the user's code: oloproof's own
    error, or the user's Ctrl-C.
    """
    try:
        value = vars(exc).get(_MARK)
    except BaseException:  # noqa: BLE001 - an object without a readable __dict__ was never marked
        return None
    return value if isinstance(value, str) else None


_WATCH: Callable[[bool], None] | None = None
#: The thread that set the watch (a worker process's main thread, which makes every call of its cases): a call
#: from another thread is made inside one of them (on its helper thread) or belongs to no case (a thread of the
#: system's, an abandoned check's) and is never told.
_WATCH_THREAD: int | None = None
#: The watched thread's calls running, one inside another (a module that calls a timed routine as it is imported).
_WATCH_DEPTH = 0
#: How many times the watch was set: a call counted under an earlier watch is not counted down under a later one.
_WATCH_SET = 0


def set_call_watch(watch: Callable[[bool], None] | None) -> None:
    """Call ``watch(True)`` when a call into the user's code starts and ``watch(False)`` when it ends (process
    workers), for the outermost calls of the thread that calls this.

    A call made while one runs — on its helper thread (a suite's check that calls ``op.observe_file`` or
    ``op.verify_contract_file``, a system's ``run`` that does), by another thread, or inside one :func:`watched`
    wraps — is part of the call it is in: its end said ``watch(False)`` while that call still ran, which left a
    call holding the GIL after it untimed (a process-isolated run hung for as long as it ran).
    """
    global _WATCH, _WATCH_THREAD, _WATCH_DEPTH, _WATCH_SET
    _WATCH, _WATCH_THREAD, _WATCH_DEPTH = watch, (None if watch is None else threading.get_ident()), 0
    _WATCH_SET += 1


def _watch_start() -> tuple[Callable[[bool], None], int] | None:
    """Count a call of the watched thread starting, telling the watch when it is the outermost: the watch to tell
    its end and the setting it was counted under (:func:`_watch_end`), None when the call is not the watched
    thread's."""
    global _WATCH_DEPTH
    watch = _WATCH
    if watch is None or threading.get_ident() != _WATCH_THREAD:
        return None
    _WATCH_DEPTH += 1
    if _WATCH_DEPTH == 1:
        try:
            watch(True)
        except BaseException:  # not told: its end is not either
            _WATCH_DEPTH -= 1
            raise
    return watch, _WATCH_SET


def _watch_end(started: tuple[Callable[[bool], None], int]) -> None:
    """Count a call :func:`_watch_start` counted ending, telling its watch when it was the outermost. A call counted
    under an earlier watch (set anew while it ran, its count started again at 0) is not counted down: it took the
    new count below 0, and no later call was told of (each one untimed)."""
    global _WATCH_DEPTH
    watch, setting = started
    if setting != _WATCH_SET:
        return
    _WATCH_DEPTH -= 1
    if _WATCH_DEPTH == 0:
        watch(False)


@contextmanager
def watched() -> Iterator[None]:
    """Tell the watch (:func:`set_call_watch`) of user code this thread runs itself (a worker imports the system's
    module: it may hang too), as of a call; a timed call inside it is part of it, however it ends."""
    started = _watch_start()
    try:
        yield
    finally:
        if started is not None:
            _watch_end(started)


class _Helper:
    """A daemon thread that runs the calls of one calling thread, one at a time.

    Starting a thread per call costs about 100 µs; handing a call to a waiting
    thread costs about 20 µs back to back and 57–79 µs with the caller's own work
    between calls on a quiet machine, several times that under load (``python
    benchmarks/handoff.py``; benchmarks/README.md section 1).
    A helper whose call timed out is *abandoned*: it finishes that call in the
    background (never keeping the process alive, its result dropped) and exits;
    the caller's next call gets a new helper. An idle helper exits after
    :data:`HELPER_IDLE_S` seconds.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], dict[str, Any], threading.Lock]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._retired = False
        self.abandoned = False
        self._thread = threading.Thread(target=self._loop, name="oloproof-call", daemon=True)
        self._thread.start()

    @property
    def thread(self) -> threading.Thread:
        """The thread that runs this helper's calls."""
        return self._thread

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
            except BaseException as exc:  # noqa: BLE001 - re-raised, marked as the system's, in the caller's thread
                box["error"] = _mark(exc, _format_traceback(exc))
            done.release()
            del fn, box, done  # drop references to the result before waiting for the next call
            if self.abandoned:
                return


_LOCAL = threading.local()


def _abandon(helper: _Helper, on_system: bool) -> None:
    """Abandon ``helper``, whose call is still running: the calling thread's next call gets a new one, and its
    thread is noted (:func:`abandoned_calls`) when the call runs on the system instance (``on_system``)."""
    helper.abandoned, _LOCAL.helper = True, None
    if on_system:
        _LOCAL.abandoned = [*abandoned_calls(), helper.thread]


def abandoned_calls() -> list[threading.Thread]:
    """The helper threads the calling thread abandoned whose call on the system is still running (a timed-out call
    goes on in the background: an instance it runs on must not be given to a case meanwhile, by a resume either).
    A call made with ``on_system=False`` (a suite's check, a validator, an artifact's read) is not one of them."""
    running = [thread for thread in getattr(_LOCAL, "abandoned", ()) if thread.is_alive()]
    _LOCAL.abandoned = running
    return running


def call_with_timeout(fn: Callable[[], T], timeout_s: float | None, *, on_system: bool = True) -> T:
    """Run ``fn()`` in a daemon helper thread and wait at most ``timeout_s`` seconds (None: no limit).

    Each calling thread reuses one helper thread for its calls. An abandoned
    call keeps running in its daemon thread but never keeps the process
    alive, and its result is dropped; the next call runs on a new helper.
    Whatever ``fn`` raises propagates marked as the system's (see
    :func:`system_traceback`); :class:`CaseTimeout` when the time is up. The
    wait itself can be interrupted (Ctrl-C): that ``KeyboardInterrupt`` is
    not marked. ``on_system=False``: ``fn`` does not run on a system instance (a suite's check on copies, a
    validator on a file), so an abandoned call of it is not one of :func:`abandoned_calls` (noted on the case's
    instance, a check that never ends kept a module-level instance from every later run of the process).
    """
    limit = None if timeout_s is None or timeout_s >= threading.TIMEOUT_MAX else timeout_s
    box: dict[str, Any] = {}
    done = threading.Lock()
    done.acquire()
    helper: _Helper | None = getattr(_LOCAL, "helper", None)
    with watched():
        if helper is None or not helper.submit(fn, box, done):
            helper = _LOCAL.helper = _Helper()
            helper.submit(fn, box, done)
        try:
            finished = done.acquire() if limit is None else done.acquire(timeout=limit)
        except BaseException:  # interrupted while waiting: this helper may still be busy
            _abandon(helper, on_system)
            raise
    if not finished:
        _abandon(helper, on_system)
        raise CaseTimeout(limit if limit is not None else 0.0)
    if "error" in box:
        error: BaseException = box.pop("error")
        try:
            raise error
        finally:  # else this frame (in the error's traceback) keeps the error, and through it the system
            del error  # instance its frames hold, alive until a garbage collection on whichever thread
    return box["value"]  # type: ignore[no-any-return]
