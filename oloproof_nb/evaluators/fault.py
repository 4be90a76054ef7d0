"""``fault_recovery``: repeat a case with one tool call failing, and judge what the agent did next.

For a case whose trajectory called ``tool``, the first such call is the
**checkpoint**. The sandbox is reset to the case's ``initial_state`` and the
recording is replayed with no change (the **control**), which must reproduce
the recorded steps, answer and state. Then the sandbox is reset again and the
recording is replayed with the call at the checkpoint returning the fixed fault
result (:func:`~oloproof_nb.system.fault_result`) instead of running.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import Field

from ..paths import leaf_diff, values_equal
from ..replay_cache import ReplayCache, replay_key
from ..services import CaseTimeout
from ..system import Change, ReplayDiverged, ToolCall, Trajectory, fault_result
from .answer import AnswerMatches, answers_equal
from .base import CaseContext, Evaluation, Evaluator, register
from .state import StateMatches, StateUnchanged, compare_unchanged

__all__ = ["FaultRecovery", "judge_fault_replay", "control_difference"]

#: Reasons of a ``missing`` fault verdict.
NOT_REPLAYABLE = "not_replayable"
CONTROL_DIVERGED = "control_replay_diverged"
REPLAY_RAISED = "replay_raised"


def _json(trajectory: Trajectory) -> dict[str, Any]:
    return trajectory.model_dump(mode="json", exclude={"input"})


def control_difference(recorded: Trajectory, recorded_state: dict[str, Any] | None, replayed: Trajectory,
                       replayed_state: dict[str, Any] | None) -> str | None:
    """How a control replay differs from the recording, or None when it reproduces it.

    Steps (tool, arguments, results; model calls and their outputs), the final
    answer, the status and the recorded state are compared after JSON
    normalisation, with :func:`~oloproof_nb.paths.values_equal`.

    Returns
    -------
    str or None
        e.g. ``"step 3 differs"``, ``"answer differs"``, ``"state differs at orders.ord-001.status"``.

    Examples
    --------
    >>> a = Trajectory(steps=[ToolCall(tool="t", result=1)], answer="ok")
    >>> control_difference(a, {"x": 1}, a, {"x": 1}) is None
    True
    >>> control_difference(a, {"x": 1}, a, {"x": 2})
    'state differs at x'
    """
    rec, rep = _json(recorded), _json(replayed)
    for i in range(max(len(rec["steps"]), len(rep["steps"]))):
        if i >= len(rec["steps"]) or i >= len(rep["steps"]) or not values_equal(rec["steps"][i], rep["steps"][i]):
            return f"step {i} differs"
    for key in ("answer", "status"):
        if not values_equal(rec[key], rep[key]):
            return f"{key} differs"
    if (recorded_state is None) != (replayed_state is None):
        return "state differs (recorded on one side only)"
    if recorded_state is not None and not values_equal(recorded_state, replayed_state):
        diff = leaf_diff(recorded_state, replayed_state)
        return f"state differs at {diff[0][0]}" if diff else "state differs"
    return None


def judge_fault_replay(case: Any, trajectory: Trajectory, state: dict[str, Any] | None, checkpoint: int,
                       evaluators: list[Evaluator], escalate_tools: list[str]) -> dict[str, Any]:
    """Judge a faulted replay with the suite's own outcome and constraint checks.

    Parameters
    ----------
    case : Case
        The case replayed.
    trajectory, state
        The faulted replay's trajectory and the state it left (None: no state recorded).
    checkpoint : int
        Index of the faulted call.
    evaluators : list of Evaluator
        The suite's evaluators: its ``answer_matches``, ``state_matches`` and
        ``state_unchanged`` checks are applied to the replay (when the suite
        declares no ``answer_matches`` / ``state_matches``, their defaults are).
    escalate_tools : list of str
        Tools that count as escalating.

    Returns
    -------
    dict
        ``recovered, escalated, constraint_broken, verdict, reason``.

    Notes
    -----
    recovered = every applicable outcome check passes (``answer_matches`` when
    the case expects an answer, ``state_matches`` when it expects a state; no
    applicable check: not recovered). escalated = a call of an escalation tool
    at or after the checkpoint. constraint_broken = a ``state_unchanged`` path
    changed, or a false success (the answer equals ``expected.answer`` while a
    state check fails). verdict = pass iff (recovered or escalated) and not
    constraint_broken.
    """
    answers = [ev for ev in evaluators if isinstance(ev, AnswerMatches)] or [AnswerMatches(type="answer_matches")]
    states = [ev for ev in evaluators if isinstance(ev, StateMatches)] or [StateMatches(type="state_matches")]
    checks: list[bool] = []
    answer_ok: bool | None = None
    if case.expected.has_answer:
        answer_ok = all(answers_equal(case.expected.answer, trajectory.answer, ev.normalize) for ev in answers)
        checks.append(answer_ok)
    state_failed = False
    if case.expected.state is not None:
        verdicts = [ev.judge(case.expected.state, state).verdicts[0]["verdict"] for ev in states]
        checks.append(all(v == "pass" for v in verdicts))
        state_failed = any(v == "fail" for v in verdicts)
    recovered = bool(checks) and all(checks)
    escalated = any(isinstance(step, ToolCall) and step.tool in escalate_tools
                    for step in trajectory.steps[checkpoint:])
    broken: list[str] = []
    if state is not None:
        for ev in evaluators:
            if isinstance(ev, StateUnchanged):
                broken += [p for p, _, _, ok in compare_unchanged(case.initial_state, state, ev.paths)
                           if not ok and p not in broken]
    false_success = bool(answer_ok) and state_failed
    reasons = (["false_success"] if false_success else []) + (
        [f"constraint_broken: {', '.join(broken)}"] if broken else [])
    if reasons:
        verdict, reason = "fail", "; ".join(reasons)
    elif recovered or escalated:
        verdict, reason = "pass", " and ".join(w for w, ok in (("recovered", recovered), ("escalated", escalated))
                                               if ok)
    else:
        verdict, reason = "fail", "not_recovered_not_escalated"
    return {"recovered": recovered, "escalated": escalated, "constraint_broken": bool(reasons),
            "verdict": verdict, "reason": reason}


@dataclass
class _Replay:
    """One replay's outcome (from the system or the cache)."""

    trajectory: Trajectory | None = None
    state: dict[str, Any] | None = None
    env: dict[str, Any] | None = None
    cached: bool = False
    error: str | None = None
    diverged: bool = False  # the system raised ReplayDiverged


def _replay_live(system: Any, recorded: Trajectory, initial_state: dict[str, Any], checkpoint: int,
                 change: Change | None) -> tuple[Any, Any, bool]:
    stateful = hasattr(system, "reset") and hasattr(system, "snapshot")
    if stateful:
        system.reset(copy.deepcopy(initial_state))
    out = system.replay(recorded.model_copy(deep=True), checkpoint=checkpoint, change=change)
    return out, (system.snapshot() if stateful else None), stateful


@register
class FaultRecovery(Evaluator):
    """Passes when, after ``tool`` fails with ``fault``, the agent recovers or escalates and breaks nothing.

    Applies to every case (source or derived) whose trajectory called ``tool``;
    a case that never called it has no row. A system without ``replay`` is
    ``missing`` (``not_replayable``); a control replay that does not reproduce
    the recording is ``missing`` (``control_replay_diverged``); a replay that
    raises is ``missing`` (``replay_raised: …``), and one that exceeds
    ``case_timeout_s`` is ``missing`` (``timeout: …``) and the system instance is
    replaced.

    Replays are cached by (system version, case digest, checkpoint, change)
    under ``.oloproof/replays/`` in the suite folder. On a hit neither replay
    runs again: the cached control was compared with the recording when it was
    stored, and is compared again with this run's recording (a mismatch is a
    miss). A system without ``version`` is never cached.

    Parameters
    ----------
    tool : str
        The tool whose first call is faulted.
    fault : {"error", "timeout", "malformed"}
        Which fixed result replaces the call (see :func:`~oloproof_nb.system.fault_result`).
    escalate_tools : list of str
        Calls that hand the case over (to a human, a queue): calling one at or
        after the checkpoint counts as handling the fault.
    criterion : str, optional
        Default ``recovers_from_{fault}_at_{tool}``.

    Notes
    -----
    Each case adds one row to ``run.replays`` (``case_id, criterion, tool,
    fault, checkpoint, control_reproduced, recovered, escalated,
    constraint_broken, verdict, reason, cached``) and two records to the run's
    ``replays.jsonl`` (``kind`` ``control`` and ``fault``, each with its
    trajectory and ``environment_state/v1``). The verdict rule is
    :func:`judge_fault_replay`.

    Examples
    --------
    >>> ev = FaultRecovery(type="fault_recovery", tool="issue_refund", fault="error",
    ...                    escalate_tools=["escalate_to_human"])
    >>> ev.name
    'recovers_from_error_at_issue_refund'
    >>> ev.change().result
    {'ok': False, 'error': 'error', 'message': 'issue_refund failed'}
    """

    type: Literal["fault_recovery"]
    tool: str = Field(min_length=1)
    fault: Literal["error", "timeout", "malformed"]
    escalate_tools: list[str] = Field(default_factory=list)

    scope: ClassVar[Literal["case", "system", "run"]] = "system"

    def default_criterion(self) -> str:
        return f"recovers_from_{self.fault}_at_{self.tool}"

    def change(self) -> Change:
        """The change applied at the checkpoint: the fixed result of ``fault`` for ``tool``."""
        return Change(result=fault_result(self.fault, self.tool))

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        if ctx.failure is not None or ctx.trajectory is None:
            return Evaluation()
        checkpoint = ctx.trajectory.first_call(self.tool)
        if checkpoint is None:
            return Evaluation()
        row: dict[str, Any] = {"case_id": ctx.case.id, "criterion": self.name, "tool": self.tool,
                               "fault": self.fault, "checkpoint": checkpoint, "control_reproduced": None,
                               "recovered": None, "escalated": None, "constraint_broken": None,
                               "verdict": "missing", "reason": "", "cached": False}
        if not callable(getattr(ctx.system, "replay", None)):
            return self._done(row, "missing", NOT_REPLAYABLE)
        recorded = ctx.trajectory
        if recorded.input is None:
            recorded = recorded.model_copy(update={"input": copy.deepcopy(ctx.case.input)})
        cache = self._cache(ctx)

        control = self._replay(ctx, recorded, checkpoint, None, cache, recorded)
        row["cached"] = control.cached
        if control.error is not None:
            row["control_reproduced"] = False
            reason = f"{CONTROL_DIVERGED}: {control.error}" if control.diverged else f"{REPLAY_RAISED}: {control.error}"
            return self._done(row, "missing", reason)
        assert control.trajectory is not None
        difference = control_difference(recorded, ctx.state, control.trajectory, control.state)
        row["control_reproduced"] = difference is None
        if difference is not None:
            return self._done(row, "missing", f"{CONTROL_DIVERGED}: {difference}")

        faulted = self._replay(ctx, recorded, checkpoint, self.change(), cache, None)
        row["cached"] = control.cached and faulted.cached
        if faulted.error is not None:
            return self._done(row, "missing", f"{REPLAY_RAISED}: {faulted.error}")
        assert faulted.trajectory is not None
        services = ctx.services
        evaluators = list(services.evaluators) if services is not None else []
        judged = judge_fault_replay(ctx.case, faulted.trajectory, faulted.state, checkpoint, evaluators,
                                    self.escalate_tools)
        row.update(judged)
        return self._done(row, judged["verdict"], judged["reason"])

    # -- helpers ---------------------------------------------------------------------------
    def _done(self, row: dict[str, Any], verdict: str, reason: str) -> Evaluation:
        row.update(verdict=verdict, reason=reason)
        return Evaluation(verdicts=[self.verdict(verdict, reason)], replays=[row])

    @staticmethod
    def _cache(ctx: CaseContext) -> ReplayCache | None:
        services = ctx.services
        directory = getattr(services, "replay_cache_dir", None)
        if services is None or directory is None or not services.system_version:
            return None
        return ReplayCache(directory)

    def _replay(self, ctx: CaseContext, recorded: Trajectory, checkpoint: int, change: Change | None,
                cache: ReplayCache | None, must_reproduce: Trajectory | None) -> _Replay:
        """Replay once (or take it from the cache), and append its record to replays.jsonl."""
        from ..execute import (  # execute imports evaluators
            environment_state,
            failure_reason,
            stored_trajectory,
            to_trajectory,
        )

        services = ctx.services
        version = None if services is None else services.system_version
        run_id = "" if services is None else services.run_id
        change_json = None if change is None else change.model_dump(mode="json")
        key = replay_key(version or "", ctx.case.digest, checkpoint, change_json)
        result = _Replay()
        entry = cache.get(key) if cache is not None else None
        if entry is not None:
            try:
                traj = Trajectory.model_validate(entry["trajectory"])
                state = entry.get("state")
                if must_reproduce is not None and control_difference(must_reproduce, ctx.state, traj, state):
                    raise ValueError("the cached control does not reproduce this run's recording")
                result = _Replay(trajectory=traj, state=state, cached=True)
                if state is not None:
                    result.env = environment_state(state, run_id=run_id, case=ctx.case, system_version=version)
                    result.env["captured_at"] = entry.get("captured_at", result.env["captured_at"])
            except Exception:  # noqa: BLE001 - an unusable entry is a miss
                result = _Replay()
        if not result.cached:
            call = (lambda fn: fn()) if services is None else services.call
            try:
                out, state, stateful = call(lambda: _replay_live(ctx.system, recorded, ctx.case.initial_state,
                                                                 checkpoint, change))
                traj = to_trajectory(out).model_copy(update={"input": copy.deepcopy(ctx.case.input)})
                stored_trajectory(traj)  # a replay that cannot be stored is a replay that raised
                env = None
                if stateful:
                    env = environment_state(state, run_id=run_id, case=ctx.case, system_version=version)
                result = _Replay(trajectory=traj, state=None if env is None else env["state"], env=env)
            except CaseTimeout as exc:
                self._append(ctx, checkpoint, change_json, _Replay(error=failure_reason(exc)))
                raise
            except ReplayDiverged as exc:
                result = _Replay(error=failure_reason(exc), diverged=True)
            except Exception as exc:  # noqa: BLE001 - a replay that raises is data: the verdict is missing
                result = _Replay(error=failure_reason(exc))
            reproduced = result.error is None and (
                must_reproduce is None
                or control_difference(must_reproduce, ctx.state, result.trajectory, result.state) is None)  # type: ignore[arg-type]
            if cache is not None and reproduced and result.trajectory is not None:
                cache.put(key, {"trajectory": result.trajectory.model_dump(mode="json"), "state": result.state,
                                "captured_at": None if result.env is None else result.env["captured_at"],
                                "case_id": ctx.case.id, "checkpoint": checkpoint, "change": change_json,
                                "system_version": version})
        self._append(ctx, checkpoint, change_json, result)
        return result

    def _append(self, ctx: CaseContext, checkpoint: int, change_json: dict[str, Any] | None,
                result: _Replay) -> None:
        if ctx.services is None:
            return
        ctx.services.append_replay({
            "case_id": ctx.case.id, "criterion": self.name, "kind": "control" if change_json is None else "fault",
            "tool": self.tool, "fault": self.fault, "checkpoint": checkpoint, "change": change_json,
            "trajectory": None if result.trajectory is None else result.trajectory.model_dump(mode="json"),
            "environment_state": result.env, "cached": result.cached, "error": result.error,
        })
