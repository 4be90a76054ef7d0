"""Only a call on the system instance is an abandoned call the case notes on its instance
(``timeouts.abandoned_calls``, noted by ``case.execute_case`` through ``systems.note_abandoned``). A suite's check
(called on copies of the case, the states and the trajectory), a validator (on a file) and an artifact's read run on
no instance: noted, a check that timed out and never ended kept a module-level instance from every later run of the
process (``BUSY_INSTANCE``) once its case was interrupted (Ctrl-C) or a fault replay of it timed out."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from oloproof_nb._run.context import LiveCase, RunSettings
from oloproof_nb._run.observe import _run_callable
from oloproof_nb._run.timeouts import CaseTimeout, abandoned_calls, call_with_timeout


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """An event the hanging calls wait for: set at the end, so their helper threads end with the test."""
    event = threading.Event()
    yield event
    event.set()
    for thread in threading.enumerate():
        if thread.name == "oloproof-call" and thread is not threading.current_thread():
            thread.join(5)


def test_a_call_off_the_system_that_times_out_is_no_abandoned_call(gate: threading.Event) -> None:
    before = abandoned_calls()
    with pytest.raises(CaseTimeout):
        call_with_timeout(gate.wait, 0.05, on_system=False)
    assert abandoned_calls() == before
    with pytest.raises(CaseTimeout):  # the reference: the same call on the system is one
        call_with_timeout(gate.wait, 0.05)
    assert len(abandoned_calls()) == len(before) + 1


def test_a_suite_check_that_times_out_is_no_call_on_the_instance(gate: threading.Event) -> None:
    settings = RunSettings(run_id="r", system_version=None, timeout_s=0.05, suite_root=None, evaluators=[],
                           checks={"checks:hangs": lambda *args: gate.wait()})
    before = abandoned_calls()
    call = LiveCase(settings, object(), datetime.now(timezone.utc)).call_check("checks:hangs", 1, 2, 3, 4)
    assert call.error is not None and "case_timeout_s=0.05" in call.error
    assert abandoned_calls() == before


def test_a_validator_that_times_out_is_no_call_on_the_instance(gate: threading.Event, tmp_path: Path) -> None:
    before = abandoned_calls()
    code, why = _run_callable(lambda path: gate.wait(), tmp_path / "report.csv", "slow", 0.05)
    assert (code, why) == (None, "validator slow timed out after 0.05s")
    assert abandoned_calls() == before
