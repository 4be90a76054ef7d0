"""The ``not_replayable`` reason of a fault row: it says "has no replay()" only of a system without one.

``FaultRecovery.evaluate`` finds a fault row not replayable in three ways: no system (a stored run judged again),
a system without ``replay()`` (the reason names its class and the fix), and a system with ``replay()`` but no live
run to replay in (a ``CaseContext`` built by hand, as an evaluator's own test does): telling that one its class
has no replay() would be false.
"""

from __future__ import annotations

from _fault_systems import Escalates, NotReplayable

from oloproof_nb._core.case import case_from_mapping
from oloproof_nb._core.evaluator import CaseContext
from oloproof_nb._core.trajectory import ToolCall, Trajectory
from oloproof_nb.evaluators import FaultRecovery
from oloproof_nb.evaluators.fault import NOT_REPLAYABLE

FIX = ("not_replayable: NotReplayable has no replay(); write it on op.RecordedAgent, each tool call through "
       "rec.tool(...) and each model call through rec.model(...) (README section 1), and a fault replay can replace "
       "a call's result")


def _reasons(system: object) -> list[str]:
    """The reasons of the fault rows of a recording that called ``issue_refund`` once (step 0), with no live run."""
    ev = FaultRecovery(type="fault_recovery", tool="issue_refund", fault="error")
    trajectory = Trajectory(steps=[ToolCall(tool="issue_refund", args={"order_id": "o1"}, result={"ok": True})],
                            answer="refunded")
    case = case_from_mapping({"id": "o1", "input": {"order_id": "o1"}})
    ctx = CaseContext(case=case, status="completed", trajectory=trajectory, state=None, system=system, run=None)
    rows = ev.evaluate(ctx).verdicts
    assert [r["verdict"] for r in rows] == ["missing"]
    return [r["reason"] for r in rows]


def test_a_system_with_replay_and_no_live_run_is_not_told_it_has_no_replay() -> None:
    assert callable(Escalates.replay)  # a RecordedAgent: it has one
    assert _reasons(Escalates()) == [NOT_REPLAYABLE]


def test_no_system_gets_the_bare_code_and_a_system_without_replay_the_fix() -> None:
    assert _reasons(None) == [NOT_REPLAYABLE]  # not "NoneType has no replay()"
    assert _reasons(NotReplayable()) == [FIX]
