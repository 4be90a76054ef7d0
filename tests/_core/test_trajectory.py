"""The failed-step rule (``steps.is_error``): defined once, with a default that reads flags, not key presence."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oloproof_nb as op
from oloproof_nb._core.trajectory import MALFORMED_RESULT, ToolErrorRule, result_is_error, step_is_error


@pytest.mark.parametrize(("result", "is_error"), [
    ({"ok": True, "error": None}, False),  # the case: an API that always carries an error field
    ({"ok": True}, False),
    ({"error": None}, False),
    ({"error": ""}, False),
    ({"error": False}, False),
    ({"error": {}}, False),
    ({"isError": False, "content": []}, False),  # MCP's flag, false
    ({"status": "ok"}, False),
    ({"status": "failed"}, False),  # data (a payment's status), not the call's outcome, by default
    ({"status": 404}, False),
    ("error", False),  # a string result is data
    ([{"ok": False}], False),
    ({"ok": False}, True),
    ({"ok": False, "error": None}, True),
    ({"error": "not_found"}, True),
    ({"error": {"code": 7}}, True),
    ({"error": 0.5}, True),
    ({"isError": True, "content": []}, True),
    ({"status": "error"}, True),
    ({"status": " ERROR"}, False),  # compared without case, not without spaces
    ({"status": "Error"}, True),
    (MALFORMED_RESULT, True),
])
def test_the_default_rule(result: Any, is_error: bool) -> None:
    assert result_is_error(result) is is_error
    assert step_is_error(op.ToolCall(tool="t", result=result)) is is_error
    assert not step_is_error(op.Message(content=result))  # messages are never failed steps


def test_a_suite_rule_overrides_each_signal() -> None:
    rule = ToolErrorRule(ok_keys=["success"], error_keys=[], status_keys=["state"], status_values=["failed"])
    assert rule.is_error({"success": False}) and not rule.is_error({"ok": False})
    assert not rule.is_error({"error": "x"})  # error_keys: [] turns that signal off
    assert rule.is_error({"state": "FAILED"}) and not rule.is_error({"status": "error"})
    assert rule.is_error(MALFORMED_RESULT)  # a malformed fault is always a failed step
    assert step_is_error(op.ToolCall(tool="t", result={"state": "failed"}), rule)


def test_the_rule_is_strict() -> None:
    with pytest.raises(ValueError, match=r"(?s)error_key.*Extra inputs are not permitted"):
        ToolErrorRule.model_validate({"error_key": ["x"]})


def _is_error_as_first_written(rule: ToolErrorRule, result: Any) -> bool:
    """The rule as first written (generator expressions, the status set built per call): the oracle."""
    if isinstance(result, dict):
        if any(result.get(k, True) is False for k in rule.ok_keys):
            return True
        if any(result.get(k) not in (None, False, "", [], {}) for k in rule.error_keys):
            return True
        wanted = {v.casefold() for v in rule.status_values}
        return any(isinstance(result.get(k), str) and result[k].casefold() in wanted for k in rule.status_keys)
    return bool(result == MALFORMED_RESULT)


_KEYS = st.sampled_from(["ok", "error", "isError", "status", "state", "success", "other"])
_VALUES = st.sampled_from([None, False, True, 0, 1, 0.0, "", "error", "Error", "ERROR ", "failed", "FAILED",
                           "ok", [], {}, [0], {"code": 7}, MALFORMED_RESULT])
_RULES = st.builds(ToolErrorRule, ok_keys=st.lists(_KEYS, max_size=2), error_keys=st.lists(_KEYS, max_size=2),
                   status_keys=st.lists(_KEYS, max_size=2),
                   status_values=st.lists(st.sampled_from(["error", "Failed", "ERROR", "ok"]), max_size=2))


@settings(max_examples=400, deadline=None)
@given(rule=_RULES | st.just(ToolErrorRule()),
       result=st.dictionaries(_KEYS, _VALUES, max_size=4) | _VALUES)
def test_is_error_is_the_rule_as_first_written(rule: ToolErrorRule, result: Any) -> None:
    assert rule.is_error(result) is _is_error_as_first_written(rule, result)


def test_a_step_without_a_kind_is_a_tool_call_when_it_names_a_tool() -> None:
    traj = op.Trajectory.model_validate({"steps": [{"tool": "get", "result": {"ok": True}},
                                                   {"content": "done"}]})
    assert [type(s).__name__ for s in traj.steps] == ["ToolCall", "Message"]
    assert traj.steps[0].tool == "get"  # type: ignore[union-attr]


def test_a_trajectory_is_completed_unless_it_says_otherwise() -> None:
    assert op.Trajectory().status == "completed"
    assert op.Trajectory.model_validate({"answer": 1}).status == "completed"


def test_first_call_is_the_index_of_the_first_of_several_calls() -> None:
    traj = op.Trajectory.model_validate({"steps": [{"content": "plan"}, {"tool": "pay"}, {"tool": "get"},
                                                   {"tool": "pay"}]})
    assert (traj.first_call("pay"), traj.first_call("get"), traj.first_call("refund")) == (1, 2, None)


def test_the_fault_results_are_the_documented_ones() -> None:
    # the table in fault_result's docstring
    assert op.fault_result("error", "pay") == {"ok": False, "error": "error", "message": "pay failed"}
    assert op.fault_result("timeout", "pay") == {"ok": False, "error": "timeout", "message": "pay timed out"}
    assert op.fault_result("malformed", "pay") == "<<malformed>>"


def test_a_skipped_change_serialises_without_its_effect_and_an_applied_one_with_it() -> None:
    # replay-cache keys of changes written before `effect` existed stay the same (Change's serializer)
    assert op.Change(result={"ok": False}).model_dump() == {"result": {"ok": False}}
    assert op.Change(result=1, effect="applied").model_dump() == {"result": 1, "effect": "applied"}
