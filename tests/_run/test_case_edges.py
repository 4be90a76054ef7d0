"""One case on one system instance (``_run/case.py``): what is the system's failure, what is oloproof's, and
what the outcome tells the caller (replace the instance, a call still running), checked one rule at a time."""

from __future__ import annotations

import threading
import time
from typing import Any, ClassVar, Literal

import pytest

import oloproof_nb.evaluators  # noqa: F401 - registers the evaluator types
from oloproof_nb._core.canonical import utc_now
from oloproof_nb._core.case import Case, case_from_mapping
from oloproof_nb._core.evaluator import EVALUATORS, CaseContext, Evaluation, Evaluator
from oloproof_nb._run import case as case_module
from oloproof_nb._run.case import _evaluate, execute_case, failed_case
from oloproof_nb._run.context import RunSettings
from oloproof_nb._run.sandbox import SystemContractError
from oloproof_nb._run.timeouts import CaseTimeout, call_with_timeout


def _case(n: int = 0) -> Case:
    return case_from_mapping({"id": f"c{n}", "input": {"n": n}})


def _settings(evaluators: list[Evaluator] | None = None, timeout_s: float | None = None) -> RunSettings:
    return RunSettings(run_id="r", system_version=None, timeout_s=timeout_s, suite_root=None,
                       evaluators=evaluators or [])


def _ctx() -> CaseContext:
    return CaseContext(case=_case(), status="completed", trajectory=None, state=None)


class _Says(Evaluator):
    """Gives one ``pass`` verdict named after its criterion."""

    type: Literal["says"] = "says"
    scope: ClassVar[Any] = "case"

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        return Evaluation(verdicts=[self.verdict("pass")])


class _Observer(_Says):
    """Observes the sandbox as the case left it: must run before any evaluator that replays (resets) it."""

    scope: ClassVar[Any] = "system"
    observes_after_case: ClassVar[bool] = True


class _RunScope(Evaluator):
    """Judges across cases only: it has no per-case ``evaluate`` (the base raises NotImplementedError)."""

    type: Literal["across"] = "across"
    scope: ClassVar[Any] = "run"


class _Raises(Evaluator):
    """A ``system``-scope evaluator that raises ``make()``."""

    type: Literal["raises"] = "raises"
    scope: ClassVar[Any] = "system"
    make: Any = None

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        raise self.make()


class _CaseScopeRaises(_Raises):
    scope: ClassVar[Any] = "case"


def _system_raised() -> BaseException:
    """A ZeroDivisionError raised inside the system's code, marked as the system's by the timeout mechanism."""
    try:
        call_with_timeout(lambda: 1 / 0, 5.0)
    except ZeroDivisionError as exc:
        return exc
    raise AssertionError("1 / 0 did not raise")


def test_an_evaluator_that_observes_the_sandbox_runs_before_those_listed_ahead_of_it() -> None:
    # the Evaluator docstring: "Observe the sandbox before any evaluator that replays (and so resets) it"
    result, _, _ = _evaluate(_ctx(), [_Says(criterion="replayer"), _Observer(criterion="observer")])
    assert [v["criterion"] for v in result.verdicts] == ["observer", "replayer"]


def test_a_run_scope_evaluator_is_not_asked_about_one_case() -> None:
    result, stuck, abandoned = _evaluate(_ctx(), [_RunScope(), _Says(criterion="a")])
    assert [v["criterion"] for v in result.verdicts] == ["a"]
    assert (stuck, abandoned) == (False, False)


def test_a_timeout_inside_a_case_scope_evaluator_is_not_blamed_on_the_system() -> None:
    # only a system-scope evaluator calls into the system; a CaseTimeout elsewhere is oloproof's own: it propagates
    with pytest.raises(CaseTimeout):
        _evaluate(_ctx(), [_CaseScopeRaises(make=lambda: CaseTimeout(1.0))])


def test_a_system_scope_evaluator_whose_system_raised_leaves_missing_and_a_fresh_instance() -> None:
    error = _system_raised()
    result, stuck, abandoned = _evaluate(_ctx(), [_Raises(criterion="replay", make=lambda: error)])
    assert [(v["criterion"], v["verdict"]) for v in result.verdicts] == [("replay", "missing")]
    assert result.verdicts[0]["reason"].startswith("system_raised: ZeroDivisionError")
    assert (stuck, abandoned) == (True, False)


def test_a_system_that_broke_its_contract_inside_an_evaluator_leaves_missing_not_a_stopped_run() -> None:
    # a replay that returned something that is no trajectory: the system's failure (SystemContractError), not ours
    bad = SystemContractError("replay() returned list; expected a trajectory")
    result, stuck, _ = _evaluate(_ctx(), [_Raises(criterion="replay", make=lambda: bad)])
    assert [v["verdict"] for v in result.verdicts] == ["missing"]
    assert "replay() returned list" in result.verdicts[0]["reason"]
    assert stuck is True


def test_an_error_of_oloproofs_own_in_the_sandbox_routine_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # not raised by the system's code (no mark): never recorded as the case's error
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in oloproof")

    monkeypatch.setattr(case_module, "run_case", broken)
    with pytest.raises(RuntimeError, match="a bug in oloproof"):
        execute_case(_case(), 0, object(), _settings())


class _Sleeps:
    """A system whose ``run`` takes ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.release = threading.Event()

    def run(self, input: dict[str, Any]) -> dict[str, Any]:
        self.release.wait(self.seconds)
        return {"answer": input["n"], "steps": []}


def test_a_case_records_how_long_it_ran() -> None:
    started = time.perf_counter()
    outcome = execute_case(_case(), 0, _Sleeps(0.2), _settings())
    elapsed = time.perf_counter() - started
    assert outcome.record["status"] == "completed"
    assert 0.2 <= outcome.record["duration_s"] <= elapsed


def test_a_run_call_that_timed_out_is_reported_as_still_running() -> None:
    # CaseOutcome.abandoned_call: "A call timed out: its helper thread still runs on the abandoned instance"
    # (a process worker must then be replaced, not reused)
    system = _Sleeps(30.0)
    try:
        outcome = execute_case(_case(), 0, system, _settings(timeout_s=0.2))
    finally:
        system.release.set()
    assert outcome.record["status"] == "timeout"
    assert outcome.needs_fresh_system is True
    assert outcome.abandoned_call is True


def test_a_case_whose_worker_process_was_killed_has_every_verdict_missing_with_the_reason() -> None:
    # failed_case: "every evaluator judges a context with failure set and no live system"
    answer = EVALUATORS["answer_matches"].model_validate({"type": "answer_matches"})
    case = case_from_mapping({"id": "c1", "input": {"n": 1}, "expected": {"answer": 1}})
    record = failed_case(case, 3, "timeout", "timeout: the worker process was killed after 5 s",
                         _settings([answer]), utc_now(), 5.2)
    assert (record["index"], record["status"], record["error"]) == (
        3, "timeout", "timeout: the worker process was killed after 5 s")
    assert [(v["criterion"], v["verdict"], v["reason"]) for v in record["verdicts"]] == [
        ("answer_matches", "missing", "timeout: the worker process was killed after 5 s")]


class _Waits:
    """A system whose run declares a wait (an approval it asked for)."""

    def run(self, input: dict[str, Any]) -> dict[str, Any]:
        return {"answer": None, "steps": [], "status": "waiting"}


def test_the_record_keeps_the_status_the_trajectory_declared() -> None:
    outcome = execute_case(_case(), 0, _Waits(), _settings())
    assert outcome.record["status"] == "waiting" and outcome.record["trajectory"]["status"] == "waiting"
    assert outcome.needs_fresh_system is False  # a wait is no failure of the instance


class _ReplayHangsOnError:
    """A stateful, replayable system whose replay blocks when its ``refund`` call is faulted with ``error`` (an
    agent backing off before it retries), until ``release`` is set; it counts the replays it was asked for."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.world: dict[str, Any] = {}
        self.replays: list[str] = []

    def reset(self, state: dict[str, Any]) -> None:
        self.world = dict(state)

    def snapshot(self) -> dict[str, Any]:
        return dict(self.world)

    def run(self, input: dict[str, Any]) -> dict[str, Any]:
        self.world["refunded"] = True
        return {"steps": [{"kind": "tool_call", "tool": "refund", "args": {}, "result": {"ok": True}}],
                "answer": "refunded"}

    def replay(self, trajectory: Any, *, checkpoint: int, change: Any) -> Any:
        self.replays.append("control" if change is None else change.result["error"])
        if change is not None and change.result["error"] == "error":
            self.release.wait(30)  # still running, on this instance, after the case has gone on
        self.world["refunded"] = True
        return trajectory if change is None else trajectory.model_copy(
            update={"steps": [trajectory.steps[0].model_copy(update={"result": change.result})]})


def test_a_replay_that_timed_out_leaves_later_replays_of_the_case_missing_not_run_beside_it() -> None:
    """Two fault_recovery checks: the first one's faulted replay timed out, and its call went on running on the
    instance. The second check then reset that same instance and replayed on it, beside the abandoned call:
    in one reproduction the abandoned retry's refund landed in the second control replay's ledger and the case read
    ``control_replay_diverged: state differs at ledger.1.amount``, blamed on the agent. Its replays are not run
    now, and its verdict says why."""
    checks = [EVALUATORS["fault_recovery"].model_validate({"type": "fault_recovery", "tool": "refund", "fault": f})
              for f in ("error", "timeout")]
    case = case_from_mapping({"id": "c0", "input": {"n": 0}, "initial_state": {"refunded": False},
                              "expected": {"answer": "refunded"}})
    system = _ReplayHangsOnError()
    try:
        outcome = execute_case(case, 0, system, _settings(checks, timeout_s=0.2))
        asked = list(system.replays)
    finally:
        system.release.set()
    assert asked == ["control", "error"]  # nothing asked of the instance after its call was abandoned
    assert [(v["criterion"], v["verdict"], v["reason"]) for v in outcome.record["verdicts"]] == [
        ("recovers_from_error_at_refund", "missing", "timeout: exceeded case_timeout_s=0.2"),
        ("recovers_from_timeout_at_refund", "missing", "timeout: not run: an earlier call of this case exceeded "
                                                       "case_timeout_s=0.2 and may still be running on this system "
                                                       "instance")]
    assert [row["criterion"] for row in outcome.record["replays"]] == [c.name for c in checks]  # a row each
    assert outcome.needs_fresh_system and outcome.abandoned_call


class _RefundsTwiceHangsOnError(_ReplayHangsOnError):
    """:class:`_ReplayHangsOnError` whose agent calls ``refund`` twice (two orders), so ``calls: every`` replays each
    call; the replay that faults the second call with ``error`` blocks."""

    def run(self, input: dict[str, Any]) -> dict[str, Any]:
        self.world["refunded"] = True
        return {"steps": [{"kind": "tool_call", "tool": "refund", "args": {"order": order}, "result": {"ok": True}}
                          for order in ("o1", "o2")], "answer": "refunded"}

    def replay(self, trajectory: Any, *, checkpoint: int, change: Any) -> Any:
        self.replays.append("control" if change is None else f"{change.result['error']} at {checkpoint}")
        if change is not None and change.result["error"] == "error" and checkpoint == 1:
            self.release.wait(30)
        self.world["refunded"] = True
        if change is None:
            return trajectory
        steps = list(trajectory.steps)
        steps[checkpoint] = steps[checkpoint].model_copy(update={"result": change.result})
        return trajectory.model_copy(update={"steps": steps})


def test_calls_not_run_after_another_checks_timeout_say_why_not_that_their_own_replay_timed_out() -> None:
    """calls: every, two faults: the error fault's replay of the second refund timed out. The timeout fault's replays
    were never run on the stuck instance: each of its rows says so, none that a replay of its own exceeded
    case_timeout_s (its later calls said ``the replay at step 0 exceeded case_timeout_s``, a replay never run)."""
    checks = [EVALUATORS["fault_recovery"].model_validate({"type": "fault_recovery", "tool": "refund", "fault": f,
                                                           "calls": "every"}) for f in ("error", "timeout")]
    case = case_from_mapping({"id": "c0", "input": {"n": 0}, "initial_state": {"refunded": False},
                              "expected": {"answer": "refunded"}})
    system = _RefundsTwiceHangsOnError()
    try:
        outcome = execute_case(case, 0, system, _settings(checks, timeout_s=0.2))
        asked = list(system.replays)
    finally:
        system.release.set()
    assert asked == ["control", "error at 0", "control", "error at 1"]  # nothing of the timeout fault was run
    refused = ("timeout: not run: an earlier call of this case exceeded case_timeout_s=0.2 and may still be running "
               "on this system instance")
    rows = [(r["criterion"], r["checkpoint"], r["verdict"], r["reason"]) for r in outcome.record["replays"]]
    assert rows[:2] == [("recovers_from_error_at_refund", 0, "pass", "recovered"),
                        ("recovers_from_error_at_refund", 1, "missing", "timeout: exceeded case_timeout_s=0.2")]
    assert rows[2:] == [("recovers_from_timeout_at_refund", 0, "missing", refused),
                        ("recovers_from_timeout_at_refund", 1, "missing", refused)]
