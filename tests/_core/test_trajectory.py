"""The failed-step rule (``steps.is_error``): defined once, with a default that reads flags, not key presence."""

from __future__ import annotations

from typing import Any

import pytest

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
    with pytest.raises(ValueError):
        ToolErrorRule.model_validate({"error_key": ["x"]})
