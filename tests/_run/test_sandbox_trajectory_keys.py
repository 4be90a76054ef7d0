"""A trajectory returned as a dict with a key it does not take: the error names the key and lists the allowed ones.

A desk relaying an HTTP service's steps (``{"type": "tool_call", ...}``, another framework's spelling)
got ``run() returned an invalid trajectory: steps[0].tool_call.type: unknown key`` on every case: ``tool_call`` is
pydantic's name of the step's branch, a key nobody wrote, and nothing said which keys a step takes.
"""

from __future__ import annotations

from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._run.sandbox import SystemContractError, to_trajectory

RELAYED = """
class Relay:
    def run(self, input):
        steps = [{"type": "tool_call", "tool": "get_ticket", "args": {"ticket_id": "t1"}, "result": {"ok": True}}]
        return {"steps": steps, "answer": "closed", "status": "completed"}
"""


@pytest.mark.parametrize(("value", "message"), [
    ({"steps": [{"type": "tool_call", "tool": "get", "args": {}, "result": 1}]},
     "steps[0].type: unknown key; a tool call step allows: kind, tool, args, result"),
    ({"steps": [{"type": "function", "name": "get", "arguments": {}}]},  # no 'tool' key: read as a message
     "steps[0].type: unknown key; a message step (one without a 'tool' key) allows: kind, role, content, name, args"),
    ({"answr": "closed"}, "answr: unknown key; allowed: steps, answer, status"),
    ({"steps": [{"kind": "tool", "tool": "get"}]},
     "steps[0].kind: 'tool' is not a step kind; allowed: tool_call, message"),
    ({"steps": [{"tool": "get", "args": [1]}]}, "steps[0].args: Input should be a valid dictionary"),
    ({"steps": [{"kind": "tool_call"}]}, "steps[0].tool: is required"),
])
def test_an_invalid_trajectory_dict_names_the_key_as_written_and_what_is_allowed(value: dict[str, Any],
                                                                                 message: str) -> None:
    with pytest.raises(SystemContractError) as info:
        to_trajectory(value, "run()")
    assert str(info.value) == f"run() returned an invalid trajectory: {message}"


def test_the_case_error_of_a_relayed_step_lists_the_keys_a_step_takes(make_suite: Any) -> None:
    cases = [{"id": "t1", "input": {"ticket_id": "t1"}, "expected": {"answer": "closed"}}]
    folder = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Relay", system_code=RELAYED)
    run = op.run(op.load_suite(folder), progress=False)
    assert list(run.cases["status"]) == ["error"]
    assert list(run.cases["error"]) == ["run() returned an invalid trajectory: steps[0].type: unknown key; a tool "
                                        "call step allows: kind, tool, args, result"]
