"""One case on one system instance: the sandbox routine, then every case- and system-scope evaluator."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._core.canonical import iso, utc_now
from .._core.case import Case
from .._core.evaluator import CaseContext, Evaluation, Evaluator
from .._core.records import CaseRecord, EnvironmentState, TrajectoryDict
from .._core.trajectory import Trajectory
from .context import LiveCase, RunSettings
from .sandbox import failure_reason, run_case
from .timeouts import CaseTimeout

__all__ = ["execute_case", "CaseOutcome"]


@dataclass
class CaseOutcome:
    """A finished case's record, and whether the system instance must be replaced (it raised or got stuck)."""

    record: CaseRecord
    needs_fresh_system: bool


def execute_case(case: Case, index: int, system: Any, settings: RunSettings) -> CaseOutcome:
    """Run one case on ``system`` and judge it with every case- and system-scope evaluator.

    The sandbox is reset to a deep copy of ``case.initial_state`` first (see
    ``_run/sandbox``). A system that raises (or returns something that is not
    a trajectory) leaves status ``error``; one that exceeds the timeout leaves
    ``timeout``; either way every verdict is ``missing`` with the reason, and
    the caller continues on a fresh system instance.
    """
    started = utc_now()
    t0 = time.perf_counter()
    status, error = "completed", None
    trajectory: Trajectory | None = None
    stored: TrajectoryDict | None = None
    env: EnvironmentState | None = None
    try:
        out = run_case(system, case, run_id=settings.run_id, system_version=settings.system_version,
                       timeout_s=settings.timeout_s)
        trajectory, stored, env = out.trajectory, out.stored, out.env
        status = trajectory.status
    except CaseTimeout as exc:
        status, error = "timeout", failure_reason(exc)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a system's failure is data, not a crash of the run
        status, error = "error", failure_reason(exc)
    duration = time.perf_counter() - t0
    live = LiveCase(settings, system, started)
    ctx = CaseContext(case=case, status=status, trajectory=trajectory,
                      state=None if env is None else env["state"], failure=error, system=system, run=live)
    result, system_stuck = _evaluate(ctx, settings.evaluators)
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
    return CaseOutcome(record=record, needs_fresh_system=system_stuck or status in ("error", "timeout"))


def _evaluate(ctx: CaseContext, evaluators: Sequence[Evaluator]) -> tuple[Evaluation, bool]:
    """Every case- and system-scope evaluator on one case; True when the system got stuck or raised."""
    result = Evaluation()
    system_stuck = False
    # evaluators that observe the sandbox as the case left it run before any that replay (and so reset) it
    for ev in sorted(evaluators, key=lambda e: not type(e).observes_after_case):
        if ev.scope == "run":
            continue
        try:
            result.extend(ev.evaluate(ctx))
        except CaseTimeout as exc:
            result.extend(ev.missing(failure_reason(exc)))
            system_stuck = True
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - what the live system returned broke the check
            if ev.scope != "system":
                raise
            result.extend(ev.missing(f"system_raised: {failure_reason(exc)}"))
            system_stuck = True
    return result, system_stuck
