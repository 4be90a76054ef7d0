"""The one timeout mechanism marks what the user's code raised, so nothing else is ever blamed on the system."""

from __future__ import annotations

import threading

import pytest

from oloproof_nb._run.timeouts import (
    HELPER_IDLE_S,
    TRACEBACK_LIMIT,
    CaseTimeout,
    SystemRaised,
    call_with_timeout,
    describe_exception,
    set_call_watch,
    system_traceback,
)


def user_code() -> None:
    raise ValueError("the system's own bug")


def test_what_the_call_raised_is_marked_with_the_system_frames_only() -> None:
    with pytest.raises(ValueError) as err:
        call_with_timeout(user_code, 10)
    trace = system_traceback(err.value)
    assert trace is not None and "in user_code" in trace and "ValueError: the system's own bug" in trace
    assert "oloproof_nb/_run" not in trace


def test_an_exception_raised_outside_a_call_is_not_marked() -> None:
    try:
        user_code()
    except ValueError as exc:
        assert system_traceback(exc) is None


@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit, GeneratorExit])
def test_base_exceptions_from_the_call_come_back_marked(exc_type: type[BaseException]) -> None:
    def raise_it() -> None:
        raise exc_type("from the system")

    with pytest.raises(exc_type) as err:
        call_with_timeout(raise_it, None)  # no limit: still on the helper thread, still marked
    trace = system_traceback(err.value)
    assert trace is not None and "in raise_it" in trace and f"{exc_type.__name__}: from the system" in trace
    assert "oloproof_nb/_run" not in trace  # the system's frames only, as for an Exception


def test_an_exception_that_refuses_the_mark_is_carried() -> None:
    class Stubborn(Exception):
        def __setattr__(self, name: str, value: object) -> None:
            raise AttributeError("no attributes, thank you")

    def raise_it() -> None:
        raise Stubborn("x")

    with pytest.raises(SystemRaised) as err:
        call_with_timeout(raise_it, 10)
    assert isinstance(err.value.error, Stubborn) and system_traceback(err.value) is not None
    assert str(err.value) == "Stubborn: x"


def test_calls_without_a_limit_also_run_on_the_helper_thread() -> None:
    assert call_with_timeout(threading.get_ident, None) != threading.get_ident()


def test_describe_exception_is_one_bounded_line_whatever_str_does() -> None:
    class Loud(Exception):
        def __str__(self) -> str:
            return "x" * 10_000 + "\nsecond"

    class Broken(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    text = describe_exception(Loud())
    assert text.startswith("Loud: xxx") and len(text) == len("Loud: ") + 500 and "\n" not in text
    assert describe_exception(Broken()) == "Broken: <str() of the exception raised>"
    assert describe_exception(KeyboardInterrupt()) == "KeyboardInterrupt"


def test_an_error_the_call_raised_leaves_no_cycle_holding_what_its_frames_held() -> None:
    """The error's traceback must not keep the waiting frame, which held the error: that cycle kept the system
    instance of every raising case alive until a garbage collection, whose ``__del__`` then ran on whichever
    thread collected (the run's main thread, outside any timeout)."""
    import gc
    import weakref

    class Instance:
        def run(self) -> None:
            raise RuntimeError("boom")

    instance = Instance()
    alive = weakref.ref(instance)
    call = instance.run
    del instance
    enabled = gc.isenabled()
    gc.disable()  # only reference counting: what a cycle holds stays alive
    try:
        try:
            call_with_timeout(call, 10)
        except RuntimeError:
            pass
        del call
        assert alive() is None
    finally:
        if enabled:
            gc.enable()


def _kept_traceback(message: str) -> str:
    """The traceback the record keeps of a ValueError(message) the system raised."""
    def fail() -> None:
        raise ValueError(message)

    with pytest.raises(ValueError) as info:
        call_with_timeout(fail, 5.0)
    kept = system_traceback(info.value)
    assert kept is not None
    return kept


def test_a_long_traceback_keeps_its_end_where_the_system_raised() -> None:
    # TRACEBACK_LIMIT: "Characters of a system's traceback kept (the last ones: where it raised)"
    kept = _kept_traceback("x" * (2 * TRACEBACK_LIMIT) + " the end")
    assert len(kept) == TRACEBACK_LIMIT
    assert kept.startswith("…") and kept.endswith("xx the end\n")


def test_a_traceback_of_exactly_the_limit_is_kept_whole() -> None:
    one = _kept_traceback("y")  # the same traceback with a one-character message
    kept = _kept_traceback("y" * (TRACEBACK_LIMIT - len(one) + 1))
    assert len(kept) == TRACEBACK_LIMIT
    assert kept.startswith("Traceback (most recent call last):") and not kept.startswith("…")


def test_an_exception_that_drops_the_mark_without_a_word_is_carried_too() -> None:
    # its __setattr__ neither stores nor refuses: a mark that did not stick would leave it unmarked, and so
    # taken for oloproof's own error (the run would stop instead of failing the case)
    class Silent(Exception):
        def __setattr__(self, name: str, value: object) -> None:
            pass

    def raise_it() -> None:
        raise Silent("quiet")

    with pytest.raises(SystemRaised) as err:
        call_with_timeout(raise_it, 10)
    assert isinstance(err.value.error, Silent) and system_traceback(err.value) is not None


def test_the_call_watch_hears_of_the_start_and_the_end_of_every_call() -> None:
    # set_call_watch: "Call watch(True) before and watch(False) after every call into the system" (a process
    # worker's parent kills a worker whose call it still believes running past the timeout)
    heard: list[bool] = []
    set_call_watch(heard.append)
    try:
        assert call_with_timeout(lambda: 7, 5.0) == 7
        with pytest.raises(ValueError):
            call_with_timeout(user_code, 5.0)
    finally:
        set_call_watch(None)
    assert heard == [True, False, True, False]


def test_a_helper_whose_call_timed_out_exits_once_that_call_ends() -> None:
    # _Helper: "A helper whose call timed out is abandoned: it finishes that call in the background ... and
    # exits" (not after waiting HELPER_IDLE_S for a next call that can never come)
    release = threading.Event()
    helpers: list[threading.Thread] = []

    def slow() -> None:
        helpers.append(threading.current_thread())
        release.wait(10)

    with pytest.raises(CaseTimeout):
        call_with_timeout(slow, 0.05)
    release.set()
    helpers[0].join(HELPER_IDLE_S / 2)
    assert not helpers[0].is_alive()
