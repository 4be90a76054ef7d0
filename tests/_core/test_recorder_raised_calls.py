"""The Recorder's record of a tool that raises (README section 1): a raised call is a failed step under
any ``tool_errors`` rule, a replay compares a raised call by its class alone (not its text) everywhere, and an
error of the recorder's own that an agent catches still ends the case."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from oloproof_nb._core.faults import control_difference, escalated, fault_difference
from oloproof_nb._core.jsonsafe import NotJSONError
from oloproof_nb._core.recorder import Recorder, ReplayDiverged, raised_result
from oloproof_nb._core.trajectory import Change, ToolCall, ToolErrorRule, Trajectory, fault_result


class Refused(Exception):
    pass


#: A rule for a shop whose tools answer {"success": false} on a failure: it reads neither ``ok`` nor ``error``.
SUCCESS_RULE = ToolErrorRule(ok_keys=["success"], error_keys=[])


def test_a_raised_call_is_a_failed_step_whatever_the_rule_reads() -> None:
    raised = raised_result(Refused("no human agent is available"))
    assert not SUCCESS_RULE.is_error({"ok": False, "error": "x"})  # the rule reads neither key: data, not a failure
    assert SUCCESS_RULE.is_error(raised) and ToolErrorRule(ok_keys=[], error_keys=[], status_keys=[]).is_error(raised)
    assert SUCCESS_RULE.is_error({"success": False}) and not SUCCESS_RULE.is_error({"success": True})
    # a dict a tool returned that only looks like one (another key beside them) is read by the rule as before
    assert not SUCCESS_RULE.is_error({**raised, "order": "W1"})


def test_an_escalation_that_raised_handed_nothing_over_under_a_rule_of_the_suites_own() -> None:
    """Before, a hand-over tool that raised (no human available) counted as an escalation under such a rule."""
    steps = [ToolCall(tool="refund", result=fault_result("error", "refund")),
             ToolCall(tool="transfer_to_human", args={"reason": "refund failed"},
                      result=raised_result(Refused("no human agent is available")))]
    assert not escalated(Trajectory(steps=steps), 0, ["transfer_to_human"], SUCCESS_RULE)
    handed = [steps[0], ToolCall(tool="transfer_to_human", args={}, result={"success": True})]
    assert escalated(Trajectory(steps=handed), 0, ["transfer_to_human"], SUCCESS_RULE)


def _stamped_refusal() -> Any:
    """A tool that refuses with a message holding a stamp that differs each call (a clock, an address)."""
    counter = itertools.count()

    def refund(order_id: str) -> None:
        raise Refused(f"[{next(counter)}] {order_id} is not delivered")
    return refund


def _act(rec: Recorder, refund: Any) -> str:
    try:
        rec.tool("refund", refund, order_id="W1")
    except Refused:
        pass
    rec.tool("note", lambda text: {"ok": True}, text="told the customer")
    return "sorry"


def test_a_control_replay_whose_raised_text_differs_reproduces_the_recording() -> None:
    """README section 1: the text of a raised call is not compared. The recorder kept to that, but the control's
    comparison with the recording did compare it: every fault replay was ``missing`` (control_replay_diverged)."""
    refund = _stamped_refusal()
    rec = Recorder()
    recorded = rec.trajectory(_act(rec, refund))
    for checkpoint in (0, 1):
        again = Recorder.replaying(recorded, checkpoint=checkpoint, change=None)
        replayed = again.trajectory(_act(again, refund))
        assert replayed.steps[0].result["error"] != recorded.steps[0].result["error"]  # the stamps differ
        assert control_difference(recorded, {}, replayed, {}) is None
        change = Change(result=fault_result("error", "note"))
        faulted = Recorder.replaying(recorded, checkpoint=1, change=change)
        assert fault_difference(recorded, faulted.trajectory(_act(faulted, refund)), 1, change.result) is None


def test_a_raised_call_of_another_class_still_differs() -> None:
    step = {"tool": "refund", "args": {"order_id": "W1"}}
    recorded = Trajectory(steps=[ToolCall(**step, result=raised_result(Refused("no")))], answer="sorry")
    other = Trajectory(steps=[ToolCall(**step, result=raised_result(KeyError("W1")))], answer="sorry")
    returned = Trajectory(steps=[ToolCall(**step, result={"ok": True})], answer="sorry")
    other_args = Trajectory(steps=[ToolCall(tool="refund", args={"order_id": "W2"},
                                            result=raised_result(Refused("no")))], answer="sorry")
    for replayed in (other, returned, other_args):
        assert control_difference(recorded, {}, replayed, {}) is not None
        assert fault_difference(recorded, Trajectory(steps=[*replayed.steps, ToolCall(tool="x")]), 1, None) == (
            "step 0 differs from the recording")


class Receipt:
    """A service's own receipt object: it has no JSON form."""


def _catching_agent(rec: Recorder) -> str:
    """An agent that catches whatever a tool call raises, the recorder's own errors included."""
    try:
        rec.tool("pay", lambda order_id: Receipt(), order_id="W1")
    except Exception:  # noqa: BLE001 - the agent under test is careless on purpose
        pass
    return "paid"


def test_a_value_with_no_json_form_ends_the_case_even_when_the_agent_catches_the_error() -> None:
    """README section 1: such a value makes the case ``error``. An agent that caught the NotJSONError ended the case
    ``completed`` with the call (which ran) missing from its steps: no step, no count, no fault replay."""
    rec = Recorder()
    answer = _catching_agent(rec)
    assert rec.steps == []
    with pytest.raises(NotJSONError, match="tool pay's result is a Receipt value"):
        rec.trajectory(answer)


def test_a_divergence_the_agent_catches_still_fails_the_replay() -> None:
    seen = iter([{"balance": 5}, {"balance": 6}, {"balance": 5}])  # the second call gives another result

    def act(rec: Recorder) -> str:
        for _ in range(2):
            try:
                rec.tool("balance", lambda: next(seen))
                break
            except Exception:  # noqa: BLE001 - it retries whatever went wrong, the divergence included
                continue
        rec.tool("pay", lambda: {"ok": True})
        return "paid"

    rec = Recorder()
    recorded = rec.trajectory(act(rec))
    again = Recorder.replaying(recorded, checkpoint=1, change=None)
    answer = act(again)  # the retry got the recorded balance: the steps look like the recording's
    assert [s.result for s in again.steps] == [s.result for s in recorded.steps]
    with pytest.raises(ReplayDiverged, match="step 0: balance returned"):
        again.trajectory(answer)
