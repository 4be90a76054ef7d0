"""A stop that names its signal (a SIGTERM or SIGHUP the command's handlers turn into a stop) is kept
with its name, and the resume's ``abrupt_ends`` says ``stopped by signal SIGTERM`` rather than "a Ctrl-C or a
signal".

``started.jsonl`` (the run folder's own note of the case runs in flight, not a file of shared/DESIGN.md) gains an
optional ``signal`` on its stop line; a line without it (a Ctrl-C, whose ``KeyboardInterrupt`` does not say which
signal raised it, or a folder of an earlier version) reads as before, and ``abrupt_ends[].how`` stays free text, so
no manifest.json changes shape.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from _reliability_systems import EVALUATORS, standard_cases, write_suite

import oloproof_nb as op
from oloproof_nb._run.in_flight import read_in_flight, stop_signal
from oloproof_nb._run.runner import STOPPED
from oloproof_nb.cli.process import Stopped


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _stop_at(n: int, stop: KeyboardInterrupt):  # noqa: ANN202 - a progress callback that stops the run
    def progress(done: int, total: int) -> None:
        if done >= n:
            raise stop
    return progress


@pytest.mark.parametrize(("stop", "named"), [(Stopped("SIGTERM"), "SIGTERM"), (Stopped("SIGHUP"), "SIGHUP"),
                                             (KeyboardInterrupt(), None)])
def test_the_stop_line_names_the_signal_the_stop_named(tmp_path: Path, stop: KeyboardInterrupt,
                                                       named: str | None) -> None:
    assert stop_signal(stop) == named
    root = write_suite(tmp_path / "suite", standard_cases(4), evaluators=EVALUATORS)
    with pytest.raises(KeyboardInterrupt):
        op.run(root, out=tmp_path / "run", progress=_stop_at(2, stop))
    last = _lines(tmp_path / "run" / "started.jsonl")[-1]
    assert last["stopped"] is True and last.get("signal") == named
    assert ("signal" in last) == (named is not None)  # a Ctrl-C's stop line has no signal key (no null)


def test_stop_signal_names_only_a_signal() -> None:
    assert stop_signal(KeyboardInterrupt("not a signal")) is None
    assert stop_signal(KeyboardInterrupt(15)) is None


@pytest.mark.parametrize(("signal_note", "read", "how"), [
    ({"signal": "SIGTERM"}, "SIGTERM", "stopped by signal SIGTERM"), ({}, None, STOPPED),
    ({"signal": "rm -rf"}, None, STOPPED)])
def test_a_resume_keeps_the_stops_signal_in_abrupt_ends(tmp_path: Path, signal_note: dict, read: str | None,
                                                        how: str) -> None:
    """A stop with case c2 in flight: read back with its signal (one that is no signal's name is not shown), and the
    resume that runs c2 again keeps the stop as ``how``."""
    root = write_suite(tmp_path / "suite", standard_cases(4), evaluators=EVALUATORS)
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        op.run(root, out=out, progress=_stop_at(2, KeyboardInterrupt()))
    with (out / "started.jsonl").open("a", encoding="utf-8") as handle:  # as a process stopped mid-case leaves it
        stop = {"stopped": True, **signal_note, "at": time.time()}
        for note in ({"case": "c2", "epoch": 1, "at": time.time()}, stop):
            handle.write(json.dumps(note) + "\n")
    in_flight = read_in_flight(out)
    assert in_flight is not None and in_flight.stopped and in_flight.stop_signal == read
    op.run(root, out=out, resume=True, progress=False)
    ends = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["abrupt_ends"]
    assert ends == [{"how": how, "rerun": [["c2", 1]]}]


@pytest.mark.parametrize(("notes", "read"), [
    # the process that ran c2 was stopped by a Ctrl-C: the SIGTERM of the process before is not its stop's
    ([{"stopped": True, "signal": "SIGTERM"}, {"case": "c2", "epoch": 1}, {"stopped": True}], None),
    # a resume stopped by a Ctrl-C before it started a case: the SIGTERM that cut c2 short is kept
    ([{"case": "c2", "epoch": 1}, {"stopped": True, "signal": "SIGTERM"}, {"stopped": True}], "SIGTERM"),
    # c2 cut short by a Ctrl-C, then a resume stopped by a SIGTERM before it started a case: the stop
    # that cut c2 short is the first after it (read_in_flight's rule for an end), not the resume's SIGTERM
    ([{"case": "c2", "epoch": 1}, {"stopped": True}, {"stopped": True, "signal": "SIGTERM"}], None),
])
def test_the_stop_signal_read_is_that_of_the_stop_after_the_last_case_started(tmp_path: Path, notes: list,
                                                                                  read: str | None) -> None:
    """A case run's start forgets the signal of an earlier stop, and a stop that names no
    signal leaves the one named before it; the stop read is the first after the last case started."""
    root = write_suite(tmp_path / "suite", standard_cases(4), evaluators=EVALUATORS)
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        op.run(root, out=out, progress=_stop_at(2, KeyboardInterrupt()))
    with (out / "started.jsonl").open("a", encoding="utf-8") as handle:
        for note in notes:
            handle.write(json.dumps({**note, "at": time.time()}) + "\n")
    in_flight = read_in_flight(out)
    assert in_flight is not None and in_flight.stopped and in_flight.stop_signal == read
