"""The one timeout mechanism marks what the user's code raised, so nothing else is ever blamed on the system."""

from __future__ import annotations

import threading

import pytest

from oloproof_nb._run.timeouts import SystemRaised, call_with_timeout, describe_exception, system_traceback


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
    assert system_traceback(err.value) is not None


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
