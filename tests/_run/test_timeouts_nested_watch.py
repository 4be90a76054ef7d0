"""The call watch of a process worker hears of the outermost call only (``timeouts.set_call_watch``).

A call into the user's code may itself make a timed call: a suite's python check or a system's ``run`` that calls
``op.observe_file`` or ``op.verify_contract_file`` (through ``call_with_timeout``, on the outer call's helper
thread), or a system's module that calls one as a worker imports it (inside ``watched``, on the worker's own
thread). The inner call's end told the watch ``False`` while the outer call still ran: the run's process stopped
timing it, so a check that then held the GIL hung a process-isolated run for as long as it ran
(``test_isolation_nested_timeout.py`` runs it end to end).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator

import pytest

from oloproof_nb._run.timeouts import CaseTimeout, call_with_timeout, set_call_watch, watched


@pytest.fixture
def heard() -> Iterator[list[bool]]:
    """What the watch, set by this thread, hears (unset at the end)."""
    told: list[bool] = []
    set_call_watch(told.append)
    yield told
    set_call_watch(None)


def test_a_timed_call_made_inside_a_call_is_part_of_it(heard: list[bool]) -> None:
    # a check that calls op.observe_file: the inner call runs on the outer call's helper thread
    inner: list[bool] = []

    def check() -> int:
        value = call_with_timeout(lambda: 7, 5.0, on_system=False)
        inner.append(list(heard) == [True])  # the outer call is still timed once the inner one has ended
        return value

    assert call_with_timeout(check, 5.0) == 7
    assert inner == [True] and heard == [True, False]


def test_a_timed_call_inside_user_code_the_watched_thread_runs_itself_is_part_of_it(heard: list[bool]) -> None:
    # a system's module that calls op.observe_file when a worker imports it (the worker's own thread)
    with watched():
        assert call_with_timeout(lambda: 7, 5.0) == 7
        assert heard == [True]
        with watched():
            assert heard == [True]
        assert heard == [True]
    assert heard == [True, False]


@pytest.mark.parametrize("inner", ["raises", "times out"])
def test_an_inner_call_that_fails_leaves_the_outer_one_timed_and_the_count_at_zero(heard: list[bool],
                                                                                   inner: str) -> None:
    release = threading.Event()

    def failing() -> None:
        if inner == "raises":
            raise ValueError("the check's own bug")
        release.wait(10)

    try:
        with watched():
            with pytest.raises(ValueError if inner == "raises" else CaseTimeout):
                call_with_timeout(failing, 0.05)
            assert heard == [True]
    finally:
        release.set()
    assert heard == [True, False]
    call_with_timeout(lambda: None, 5.0)  # counted down: the next call is outermost again
    assert heard == [True, False, True, False]


def test_an_outer_call_that_raises_after_an_inner_one_is_told_ended(heard: list[bool]) -> None:
    def check() -> None:
        call_with_timeout(lambda: None, 5.0)
        raise ValueError("the check's own bug")

    with pytest.raises(ValueError):
        call_with_timeout(check, 5.0)
    with pytest.raises(ValueError), watched():
        raise ValueError("the module's own bug")
    assert heard == [True, False, True, False]


def test_a_call_from_another_thread_is_never_told(heard: list[bool]) -> None:
    # a thread of the system's, or a timed-out check abandoned on its helper thread that goes on calling
    # op.observe_file while the worker runs its next case: told, its calls started and stopped that case's clock
    done: list[int] = []
    thread = threading.Thread(target=lambda: done.append(call_with_timeout(lambda: 7, 5.0)))
    thread.start()
    thread.join(10)
    assert done == [7] and heard == []


def test_a_watch_that_fails_to_hear_a_start_leaves_no_call_counted(heard: list[bool]) -> None:
    broken = [True]

    def watch(on: bool) -> None:
        if broken.pop() if broken else False:
            raise BrokenPipeError("the run's process is gone")
        heard.append(on)

    set_call_watch(watch)
    with pytest.raises(BrokenPipeError):
        call_with_timeout(lambda: None, 5.0)
    call_with_timeout(lambda: None, 5.0)
    assert heard == [True, False]


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="signals a thread")
def test_a_call_whose_wait_is_interrupted_is_told_ended(heard: list[bool]) -> None:
    # the user's Ctrl-C while the worker waits (a worker ignores SIGINT; a SIGINT handler of the system's may not)
    release = threading.Event()
    waiting = threading.get_ident()

    def interrupting() -> None:
        release.wait(0.2)  # the caller waits by then (a signal that came before its wait began is seen after it)
        signal.pthread_kill(waiting, signal.SIGINT)  # a real signal: it wakes the wait
        release.wait(10)

    try:
        with pytest.raises(KeyboardInterrupt):
            call_with_timeout(interrupting, 5.0)
    finally:
        release.set()
    call_with_timeout(lambda: None, 5.0)
    assert heard == [True, False, True, False]


def test_a_watch_set_anew_counts_no_call_of_the_one_before(heard: list[bool]) -> None:
    # a call of the earlier watch that never ended (its worker state replaced mid-call): the new watch is told of
    # the next call, which is outermost for it
    earlier = watched()
    earlier.__enter__()
    try:
        assert heard == [True]
        told: list[bool] = []
        set_call_watch(told.append)
        call_with_timeout(lambda: None, 5.0)
        assert told == [True, False]
    finally:
        earlier.__exit__(None, None, None)  # closed here, not by the garbage collector in a later test


def test_a_call_of_an_earlier_watch_that_ends_leaves_the_count_of_the_new_one_as_it_is(heard: list[bool]) -> None:
    # counted down under the new watch, its end took that count below 0: no later call was told of, each untimed
    earlier = watched()
    earlier.__enter__()
    told: list[bool] = []
    set_call_watch(told.append)
    earlier.__exit__(None, None, None)
    call_with_timeout(lambda: None, 5.0)
    with watched():
        call_with_timeout(lambda: None, 5.0)
    assert told == [True, False, True, False] and heard == [True]
