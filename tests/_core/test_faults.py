"""The fault verdict with honest answers, what counts as an escalation, and what a faulted replay must be."""

from __future__ import annotations

import re

import pytest

from oloproof_nb._core.faults import admits_failure, control_difference, escalated, fault_difference, fault_verdict
from oloproof_nb._core.trajectory import Message, ToolCall, Trajectory

HONEST = [re.compile(r"(?i)could not complete")]


@pytest.mark.parametrize(("answer_ok", "states", "broken", "escalated", "admitted", "verdict", "reason"), [
    (False, ["fail"], [], False, False, "fail", "not_recovered_not_escalated"),
    (False, ["fail"], [], False, True, "pass", "admitted_failure"),  # the honest ending
    (False, ["pass"], [], False, True, "pass", "admitted_failure"),  # it went through after all, and said so
    (False, ["fail"], ["accounts.attacker"], False, True, "fail", "constraint_broken: accounts.attacker"),
    (True, ["fail"], [], False, True, "fail", "false_success"),  # the expected answer is never an admission
    (True, ["pass"], [], False, True, "pass", "recovered"),
    (None, [], [], True, True, "pass", "escalated and admitted_failure"),
    # a case that expects neither answer nor state: nothing to recover by, so it passes only by escalating or
    # admitting (kept strict: not `missing`, which would let an agent that never recovers go unscored)
    (None, [], [], False, False, "fail", "not_recovered_not_escalated"),
    # one of two state checks fails: still a false success (with any→all it needed every check to fail)
    (True, ["pass", "fail"], [], True, False, "fail", "false_success"),
])
def test_fault_verdict_with_admitted(answer_ok: bool | None, states: list[str], broken: list[str], escalated: bool,
                                     admitted: bool, verdict: str, reason: str) -> None:
    out = fault_verdict(answer_ok, states, broken, escalated, admitted)
    assert (out["verdict"], out["reason"]) == (verdict, reason)
    assert out["constraint_broken"] is (verdict == "fail" and reason != "not_recovered_not_escalated")


def test_admits_failure() -> None:
    assert admits_failure("I could NOT complete the payment.", [], HONEST)
    assert admits_failure("  Payment failed ", ["payment failed"], [])
    assert not admits_failure("paid", ["payment failed"], HONEST)
    assert not admits_failure({"msg": "could not complete"}, [], HONEST)  # patterns read text answers only
    assert admits_failure({"ok": False}, [{"ok": False}], [])


def test_the_faulted_call_itself_is_no_escalation() -> None:
    steps = [ToolCall(tool="get_order"), ToolCall(tool="escalate_to_human"), Message(role="assistant", content="x")]
    assert not escalated(Trajectory(steps=steps), 1, ["escalate_to_human"])  # the faulted escalation
    assert escalated(Trajectory(steps=[*steps, ToolCall(tool="escalate_to_human")]), 1, ["escalate_to_human"])
    assert not escalated(Trajectory(steps=steps), 2, ["escalate_to_human"])  # one before the checkpoint neither


FAULT = {"ok": False, "error": "error", "message": "pay failed"}
RECORDED = Trajectory(steps=[ToolCall(tool="look", args={"id": 1}, result={"n": 1}),
                             ToolCall(tool="pay", args={"amount": 5}, result={"ok": True})], answer="paid")


@pytest.mark.parametrize(("steps", "difference"), [
    ([RECORDED.steps[0], ToolCall(tool="pay", args={"amount": 5}, result=FAULT), ToolCall(tool="pay")], None),
    (RECORDED.steps, "step 1 returned {'ok': True}, not the fault result"),  # the change was ignored
    ([ToolCall(tool="look", args={"id": 2}, result={"n": 1}), ToolCall(tool="pay", args={"amount": 5}, result=FAULT)],
     "step 0 differs from the recording"),
    ([RECORDED.steps[0], ToolCall(tool="pay", args={"amount": 6}, result=FAULT)], "step 1 is not the recorded call"),
    ([RECORDED.steps[0], ToolCall(tool="refund", args={"amount": 5}, result=FAULT)], "step 1 is not the recorded call"),
    ([RECORDED.steps[0]], "the replay ended after 1 steps, before the checkpoint (step 1)"),
])
def test_fault_difference(steps: list[ToolCall], difference: str | None) -> None:
    assert fault_difference(RECORDED, Trajectory(steps=steps, answer="x"), 1, FAULT) == difference


# -- gaps found by mutation testing --------------------------------------------------------------------------


ONE_MORE = Trajectory(steps=[*RECORDED.steps, ToolCall(tool="pay", args={"amount": 5}, result={"ok": True})],
                      answer="paid")


@pytest.mark.parametrize(("recorded_state", "replayed", "replayed_state", "difference"), [
    ({"n": 1}, RECORDED, {"n": 1}, None),
    # the control made one call more (a second payment), one fewer: each side of the step is named
    ({"n": 1}, ONE_MORE, {"n": 1},
     "step 2 differs: recorded no step; replayed tool pay({'amount': 5}) -> {'ok': True}"),
    ({"n": 1}, Trajectory(steps=RECORDED.steps[:1], answer="paid"), {"n": 1},
     "step 1 differs: recorded tool pay({'amount': 5}) -> {'ok': True}; replayed no step"),
    ({"n": 1}, RECORDED.model_copy(update={"status": "waiting"}), {"n": 1}, "status differs"),
    (None, RECORDED, {"n": 1}, "state differs (recorded on one side only)"),
    ({"n": 1}, RECORDED, None, "state differs (recorded on one side only)"),
])
def test_control_difference_compares_every_step_the_status_and_the_state(
        recorded_state: dict[str, int] | None, replayed: Trajectory, replayed_state: dict[str, int] | None,
        difference: str | None) -> None:
    assert control_difference(RECORDED, recorded_state, replayed, replayed_state) == difference


def test_control_difference_leaves_out_the_state_leaves_the_suite_ignores() -> None:
    """A timestamp the sandbox stamps with its own clock (SQLite's DEFAULT now) differs on every replay: under an
    ``ignore`` pattern it is not a divergence, a leaf beside it still is, and so is a row gone whole. Before, the
    control compared the whole state, and every fault replay of such a sandbox was control_replay_diverged."""
    rec = {"refunds": {"21": {"amount": 5.0, "at": "10:00:00.001"}}, "log": {"1": {"at": "10:00:00.001"}}}
    later = {"refunds": {"21": {"amount": 5.0, "at": "10:00:00.734"}}, "log": {"1": {"at": "10:00:00.735"}}}
    ignore = ["refunds.*.at", "log.*.at"]
    assert control_difference(RECORDED, rec, RECORDED, later) == "state differs at refunds.21.at"
    assert control_difference(RECORDED, rec, RECORDED, later, ignore) is None
    assert control_difference(RECORDED, rec, RECORDED, later, ["**.at"]) is None
    assert control_difference(RECORDED, rec, RECORDED, later, ["refunds"]) == "state differs at log.1.at"
    more = {**later, "refunds": {"21": {"amount": 6.0, "at": "10:00:00.734"}}}
    assert control_difference(RECORDED, rec, RECORDED, more, ignore) == "state differs at refunds.21.amount"
    gone = {**later, "refunds": {}}
    assert control_difference(RECORDED, rec, RECORDED, gone, ignore) == "state differs at refunds.21.amount"


def test_control_difference_says_what_a_diverging_model_call_gave() -> None:
    # a flaky service's random draw, made live after the checkpoint of a control replay: before, the reason
    # was "step 2 differs", which sent the user looking for the difference in the run's frames
    recorded = Trajectory(steps=[*RECORDED.steps, Message(name="flake", args={}, content=0.1)], answer="paid")
    replayed = Trajectory(steps=[*RECORDED.steps, Message(name="flake", args={}, content=0.9)], answer="paid")
    assert control_difference(recorded, {"n": 1}, replayed, {"n": 1}) == (
        "step 2 differs: recorded model call flake -> 0.1; replayed model call flake -> 0.9")


def test_control_difference_says_what_a_diverging_message_said() -> None:
    # a message that is no model call (a hand-written replay()'s Message, no name) is named by
    # its role and content; a tool call that returned nothing, by null (JSON's word)
    recorded = Trajectory(steps=[*RECORDED.steps, Message(role="assistant", content="Paid.")], answer="paid")
    replayed = Trajectory(steps=[*RECORDED.steps, Message(role="user", content=None)], answer="paid")
    assert control_difference(recorded, {"n": 1}, replayed, {"n": 1}) == (
        "step 2 differs: recorded assistant message 'Paid.'; replayed user message null")
    flagged = Trajectory(steps=[RECORDED.steps[0], ToolCall(tool="pay", args={"amount": 5, "urgent": True},
                                                            result=None)], answer="paid")
    assert control_difference(RECORDED, {"n": 1}, flagged, {"n": 1}) == (
        "step 1 differs: recorded tool pay({'amount': 5}) -> {'ok': True}; "
        "replayed tool pay({'amount': 5, 'urgent': True}) -> null")


@pytest.mark.parametrize(("answer_ok", "states", "escalated", "verdict", "reason"), [
    # the faulted replay recorded no state: its state check is missing, which is neither a pass nor a fail
    (True, ["missing"], False, "fail", "not_recovered_not_escalated"),  # not recovered: no state shows it
    (True, ["missing"], True, "pass", "escalated"),  # nor a false success: no state check failed
    (True, ["pass", "missing"], False, "fail", "not_recovered_not_escalated"),
])
def test_a_missing_state_verdict_is_neither_a_recovery_nor_a_false_success(
        answer_ok: bool, states: list[str], escalated: bool, verdict: str, reason: str) -> None:
    out = fault_verdict(answer_ok, states, [], escalated)
    assert (out["verdict"], out["reason"], out["recovered"]) == (verdict, reason, False)


def test_a_case_that_expects_no_answer_recovers_on_its_state_checks_alone() -> None:
    # Notes of fault_verdict: recovered = every *applicable* check passes; answer_ok None is no check, so one
    # passing state check is a recovery (reading None as a failed answer made every such case not recovered)
    out = fault_verdict(None, ["pass"], [], False)
    assert (out["recovered"], out["verdict"], out["reason"]) == (True, "pass", "recovered")
    assert fault_verdict(None, ["pass", "fail"], [], False)["verdict"] == "fail"


def test_a_kept_path_must_reproduce_though_the_lists_align() -> None:
    """A ``keep`` path (one a ``state_unchanged`` check judges) must reproduce whatever ``ignore`` says, also when
    the lists aligned by the ``lists`` rules hold the same elements (a mutant: the aligned comparison
    dropped ``keep``, and a replay whose kept stamp differed reproduced)."""
    from oloproof_nb._core.lists import ListMatch

    t = Trajectory(steps=[], answer="ok")
    recorded = {"tags": ["a", "b"], "meta": {"at": 1}}
    rules = {"tags": ListMatch("unordered")}
    same_stamp = {"tags": ["b", "a"], "meta": {"at": 1}}
    assert control_difference(t, recorded, t, same_stamp, ["**.at"], ["meta.at"], rules) is None
    other_stamp = {"tags": ["b", "a"], "meta": {"at": 2}}
    assert control_difference(t, recorded, t, other_stamp, ["**.at"], (), rules) is None  # not kept: ignored
    said = control_difference(t, recorded, t, other_stamp, ["**.at"], ["meta.at"], rules)
    assert said is not None and said.startswith("state differs at ")
