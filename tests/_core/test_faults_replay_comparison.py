"""``_core/faults``: what a control replay must reproduce and what a faulted replay must
return, for mutants the nearest tests let through; expectations by hand."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from oloproof_nb._core.faults import control_difference, fault_difference
from oloproof_nb._core.trajectory import ToolCall, Trajectory

RECORDED = Trajectory(steps=[ToolCall(tool="look", result=1), ToolCall(tool="pay", args={"k": 1}, result={"ok": True})],
                      answer="Paid")


def test_a_control_that_answers_in_other_case_does_not_reproduce_the_recording() -> None:
    """Mutant (the control's answer compared like ``answer_matches``, without case and surrounding space):
    ``control_difference`` compares the answer exactly (its docstring: values_equal after JSON normalisation), so
    ``"paid "`` is not a reproduction of ``"Paid"`` — a system that is not deterministic on this path."""
    replayed = RECORDED.model_copy(update={"answer": "paid "})
    assert control_difference(RECORDED, {"n": 1}, replayed, {"n": 1}) == "answer differs"
    assert control_difference(RECORDED, {"n": 1}, RECORDED.model_copy(), {"n": 1}) is None


def test_a_fault_result_is_compared_as_the_json_the_replay_stored() -> None:
    """Mutant (the change's result compared as the Python value, not its JSON form): a fault result holding a
    Decimal and a datetime comes back in the replay as the JSON of those values (``"1.50"`` and the ISO text), and
    that is the fault result, not a replay that ignored the change."""
    at = dt.datetime(2026, 7, 25, 12, 0, tzinfo=dt.timezone.utc)
    fault = {"ok": False, "fee": Decimal("1.50"), "at": at}
    faulted = Trajectory(steps=[RECORDED.steps[0], ToolCall(tool="pay", args={"k": 1}, result=fault)])
    assert fault_difference(RECORDED, faulted, 1, fault) is None
    other = Trajectory(steps=[RECORDED.steps[0],
                              ToolCall(tool="pay", args={"k": 1}, result={**fault, "fee": Decimal("1.51")})])
    assert fault_difference(RECORDED, other, 1, fault) is not None
