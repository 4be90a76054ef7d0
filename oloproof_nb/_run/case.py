"""One case on one system instance: the sandbox routine, then every case- and system-scope evaluator.

Only what the user's code raised is the system's failure: an exception marked by
the timeout mechanism (:func:`~oloproof_nb._run.timeouts.system_traceback`), a
:class:`~oloproof_nb._run.sandbox.SystemContractError` (it returned something
that is not a trajectory or a state) or a timeout. Anything else raised here is
oloproof's own (a bug) or the user's Ctrl-C, and stops the run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .._core.canonical import iso, utc_now
from .._core.case import Case
from .._core.evaluator import CaseContext, Evaluation, Evaluator
from .._core.receipts import OutcomeContract
from .._core.records import ENDED, CaseRecord, EnvironmentState, TrajectoryDict
from .._core.trajectory import Trajectory
from .context import LiveCase, RunSettings, located_file
from .sandbox import SystemContractError, failure_reason, run_case
from .systems import note_abandoned
from .timeouts import CaseTimeout, abandoned_calls, system_traceback

__all__ = ["execute_case", "failed_case", "died_reason", "CaseOutcome"]


@dataclass
class CaseOutcome:
    """A finished case's record, and whether the system instance it ended on must be replaced (it raised or got
    stuck)."""

    record: CaseRecord
    needs_fresh_system: bool
    #: A call timed out: its helper thread still runs on the abandoned instance.
    abandoned_call: bool = False


def execute_case(case: Case, index: int, system: Any, settings: RunSettings,
                 renew: Callable[[], Any] | None = None) -> CaseOutcome:
    """Run one case on ``system`` and judge it with every case- and system-scope evaluator.

    The sandbox is reset to a deep copy of ``case.initial_state`` first (see
    ``_run/sandbox``). A system that raises — any exception, or ``SystemExit``,
    ``KeyboardInterrupt``, ``CancelledError`` from its own code — or returns
    something that is not a trajectory leaves status ``error`` (the full
    traceback kept in the record); one that exceeds the timeout leaves
    ``timeout``; either way every verdict is ``missing`` with the reason, and
    the caller continues on a fresh system instance, as it does after a case
    whose replay raised (what the raise left on the instance outlives a reset).

    ``renew`` builds a fresh instance (None: the run was given one instance): after a replay that raised, the
    case's next replay runs on one (:class:`~.context.LiveCase`), and so does the rest of the case. The caller
    keeps every instance it builds, releases those replaced once the case ends, and goes on with the last one.
    """
    settings.note_case(case.id, case.epoch, False)
    running = abandoned_calls()  # those still running from earlier cases: the ones this case leaves are the others
    on = [system]  # the instance the case's calls run on: the last one ``renew`` built

    def renewed() -> Any:
        assert renew is not None
        on[0] = renew()
        return on[0]

    try:
        return _execute_case(case, index, system, settings, running, None if renew is None else renewed)
    except BaseException:
        # the user's Ctrl-C while a call ran on the system (or oloproof's own error): that call goes on in the
        # background as a timed-out one does, so no run of this process may give the instance to a case while it
        # runs (a notebook's resume after Ctrl-C ran the interrupted case again beside it)
        note_abandoned(on[0], [thread for thread in abandoned_calls() if thread not in running])
        raise


def _execute_case(case: Case, index: int, system: Any, settings: RunSettings,
                  running: list[threading.Thread], renew: Callable[[], Any] | None) -> CaseOutcome:
    """:func:`execute_case` once the case is noted; ``running``: the abandoned calls still running before it."""
    started = utc_now()
    t0 = time.perf_counter()
    status, error, trace = "completed", None, None
    trajectory: Trajectory | None = None
    stored: TrajectoryDict | None = None
    env: EnvironmentState | None = None
    timed_out = False
    reset_file = None
    try:
        out = run_case(system, case, run_id=settings.run_id, system_version=settings.system_version,
                       timeout_s=settings.timeout_s, after_reset=_promised_file(case, system, settings))
        trajectory, stored, env, reset_file = out.trajectory, out.stored, out.env, out.after_reset
        status = trajectory.status
    except CaseTimeout as exc:
        status, error, timed_out = "timeout", failure_reason(exc), True
    except SystemContractError as exc:
        status, error = "error", failure_reason(exc)
    except BaseException as exc:
        trace = system_traceback(exc)
        if trace is None:  # not the system's: oloproof's own error, or the user's Ctrl-C
            raise
        status, error = "error", failure_reason(exc)
    duration = time.perf_counter() - t0
    live = LiveCase(settings, system, started, reset_file, renew=renew)
    ctx = CaseContext(case=case, status=status, trajectory=trajectory,
                      state=None if env is None else env["state"], failure=error, system=system, run=live)
    result, system_stuck, abandoned = _evaluate(ctx, settings.evaluators)
    record = _record(case, index, status, error, trace, started, duration, stored, env, result, settings.run_id)
    if abandoned or timed_out:  # no run of this process may give it to a case while those calls run
        note_abandoned(live.system, [thread for thread in abandoned_calls() if thread not in running])
    return CaseOutcome(record=record, needs_fresh_system=system_stuck or status in ENDED or live.replay_raised,
                       abandoned_call=abandoned or timed_out)


def _promised_file(case: Case, system: Any, settings: RunSettings) -> Callable[[], Any] | None:
    """What to note right after the sandbox's reset: the promised artifact's file, when the case has an
    outcome contract whose ``locator`` places it and the system does not observe its artifacts itself (an
    ``outcome_contract`` check then tells the file the reset left from one the case wrote)."""
    if case.outcome is None or not any(ev.type == "outcome_contract" for ev in settings.evaluators):
        return None
    contract = OutcomeContract.model_validate(case.outcome)
    if contract.locator is None or callable(getattr(system, "observe", None)):
        return None
    return lambda: located_file(contract, settings)


def failed_case(case: Case, index: int, status: str, error: str, settings: RunSettings, started: datetime,
                duration: float) -> CaseRecord:
    """The record of a case whose worker process had to be killed (``timeout``) or died (``error``).

    The same verdicts as a case whose system raised or timed out in-process:
    every evaluator judges a context with ``failure`` set and no live system.
    """
    ctx = CaseContext(case=case, status=status, trajectory=None, state=None, failure=error,
                      run=LiveCase(settings, None, started))
    result, _, _ = _evaluate(ctx, settings.evaluators)
    return _record(case, index, status, error, None, started, duration, None, None, result, settings.run_id)


def died_reason(process: str, how: str) -> str:
    """The reason of a case whose process ended while it ran: ``the worker process died while running the case
    (exit code 3)`` (``process``: which process; ``how``: :func:`~oloproof_nb._run.in_flight.how_it_ended`)."""
    return f"the {process} died while running the case ({how})"


def _record(case: Case, index: int, status: str, error: str | None, trace: str | None, started: datetime,
            duration: float, stored: TrajectoryDict | None, env: EnvironmentState | None,
            result: Evaluation, run_id: str) -> CaseRecord:
    record: CaseRecord = {
        "index": index,
        "case": case.to_record(),  # type: ignore[typeddict-item]
        "status": status,
        "error": error,
        "started_at": iso(started),
        "duration_s": duration,
        "trajectory": stored,
        "environment_state": env,
        "verdicts": result.verdicts,
        "comparisons": result.comparisons,
        "replays": result.replays,
        "receipts": result.receipts,
    }
    if trace is not None:
        record["traceback"] = trace
    record["run_id"] = run_id  # last: a reader takes a case object from the head of its line ("index", "case")
    return record


def _evaluate(ctx: CaseContext, evaluators: Sequence[Evaluator]) -> tuple[Evaluation, bool, bool]:
    """Every case- and system-scope evaluator on one case.

    Returns the evaluation, whether the system got stuck or raised (replace
    it), and whether a call timed out (its helper thread still runs). Only a
    timeout or an exception raised by the system's own code (marked by the
    timeout mechanism) makes a verdict ``missing``; anything else propagates.
    """
    result = Evaluation()
    system_stuck = abandoned = False
    # evaluators that observe the sandbox as the case left it run before any that replay (and so reset) it
    for ev in sorted(evaluators, key=lambda e: not type(e).observes_after_case):
        if ev.scope == "run":
            continue
        try:
            result.extend(ev.evaluate(ctx))
        except CaseTimeout as exc:
            if ev.scope != "system":
                raise
            result.extend(ev.interrupted(ctx, failure_reason(exc), timed_out=True))
            system_stuck = abandoned = True
            if isinstance(ctx.run, LiveCase):  # the call still runs on ctx.system: no later evaluator calls it
                ctx.run.abandon(exc)
        except BaseException as exc:
            if ev.scope != "system" or (system_traceback(exc) is None and not isinstance(exc, SystemContractError)):
                raise  # oloproof's own error (or the user's Ctrl-C) is never blamed on the system
            result.extend(ev.interrupted(ctx, f"system_raised: {failure_reason(exc)}", timed_out=False))
            system_stuck = True
    return result, system_stuck, abandoned
