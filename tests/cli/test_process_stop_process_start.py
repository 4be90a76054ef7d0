"""A stop that reaches ``oloproof run``'s run process as it starts is handled as a stop.

The command passes a SIGTERM on to the run's process as the SIGTERM it was, and the run's process handles it as
a Ctrl-C (``StopOnSignals`` in ``_child_run``). A stop that came in the run process's first moments (a SIGTERM or
Ctrl-C to the process group as the run started; here the stop the command passes on, at once) came before
``_child_run`` handled it: a Python traceback on stderr (``Process oloproof-run: Traceback … Stopped: SIGTERM``),
or an ``Exception ignored in: … Random.seed`` from the fork's own hooks, the stop lost and the run finished with its
gate's exit code (1, where the SIGTERM asks for 2): 4 of 6 tries. The stops are held back until each process
handles them (8 of 8 clean).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from _reliability_systems import make_case, write_suite

from oloproof_nb.cli import main

PASSABLE = {"confidence": 0.95, "criteria": {"answer_matches": 0.3}}


def test_a_stop_as_the_run_s_process_starts_is_a_stop_never_a_traceback(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         capfd: pytest.CaptureFixture[str]) -> None:
    import multiprocessing.connection

    from oloproof_nb.cli import process
    from oloproof_nb.cli.process import Stopped

    root = write_suite(tmp_path / "suite", [make_case("c0")], release=PASSABLE)
    monkeypatch.setattr(process, "_PASS_ON_S", 0.0)  # passed on at once: the run's process is just starting
    real, command = multiprocessing.connection.wait, os.getpid()
    left: list[BaseException] = []

    def wait(*args: object, **kwargs: object) -> object:
        if left and os.getpid() == command:  # the command's first wait: a SIGTERM it got (not in the child)
            raise left.pop(0)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(multiprocessing.connection, "wait", wait)
    for attempt in range(3):  # the moment the stop lands varies: before, 4 of 6 tries went wrong
        left.append(Stopped("SIGTERM"))
        code = main(["run", str(root), "--out", str(tmp_path / f"run{attempt}"), "--quiet"])
        out, err = capfd.readouterr()  # the run's process writes to the descriptors
        assert code == 2, (code, out, err)  # stopped: never the gate's 0 or 1
        assert "Traceback" not in err and "Exception ignored" not in err, err
        assert err.startswith("oloproof: interrupted by SIGTERM"), err


# The signals held back are given back, each once, and only those this command held.


def _blocked() -> set[int]:
    return {int(sig) for sig in signal.pthread_sigmask(signal.SIG_BLOCK, [])}


def _stops() -> set[int]:
    return {int(signal.SIGINT), int(signal.SIGTERM), int(signal.SIGHUP)}


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no signal masks here")
def test_hold_stops_holds_the_three_stops_and_gives_back_only_those_it_held() -> None:
    from oloproof_nb.cli.process import _hold_stops, _release_stops

    assert not _blocked() & _stops()
    held = _hold_stops()
    try:
        assert set(held) == _stops() and _blocked() >= _stops()
    finally:
        _release_stops(held)
    assert not _blocked() & _stops()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP})  # held by the caller before: not ours to release
    try:
        held = _hold_stops()
        try:
            assert set(held) == _stops() - {int(signal.SIGHUP)}
        finally:
            _release_stops(held)
        assert _blocked() & _stops() == {int(signal.SIGHUP)}
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGHUP})


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="no signal masks here")
def test_the_stops_are_released_after_a_run_and_when_its_process_cannot_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    """A command that ran (``main`` called in a notebook or a service) leaves its caller's signal mask as it found it;
    so does one whose run process could not be started (the system's process limit)."""
    import argparse
    import multiprocessing

    from oloproof_nb.cli import process

    assert not _blocked() & _stops()
    root = write_suite(tmp_path / "suite", [make_case("c0")], release=PASSABLE)
    assert main(["run", str(root), "--out", str(tmp_path / "run"), "--quiet"]) in (0, 1)
    capfd.readouterr()
    assert not _blocked() & _stops()

    real = multiprocessing.get_context("spawn")

    class NoProcess:
        def __init__(self, **kwargs: object) -> None:
            pass

        def start(self) -> None:
            raise BlockingIOError(11, "Resource temporarily unavailable")

    class Context:
        Process = NoProcess

        def Pipe(self, duplex: bool) -> object:  # noqa: N802 - as multiprocessing names it
            return real.Pipe(duplex=duplex)

    monkeypatch.setattr(process.multiprocessing, "get_context", lambda method: Context())
    with pytest.raises(BlockingIOError):
        process.run_in_child(argparse.Namespace(), {}, None)
    assert not _blocked() & _stops()
