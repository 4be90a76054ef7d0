"""A trajectory made with ``model_construct`` holds what it was given, unconverted: a step given as a dict (as
``Trajectory(steps=[{...}])`` takes it) stays a dict, and a status given as a ``str`` enum or subclass stays one.

Stored, the dict step was read as a message (``step.role``): the case's error read ``AttributeError: 'dict' object
has no attribute 'role'``, oloproof's own slip given as the agent's, where ``Trajectory(steps=[{...}])`` is judged;
the status was refused, where a trajectory returned as a dict with the same status is accepted (pydantic reads a
``str`` enum member or subclass as its text). Now each is read as pydantic reads the dict: the step converted (or
the case's error in pydantic's words), the status its plain text.
"""

from __future__ import annotations

import enum
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._core.trajectory import Message, ToolCall, Trajectory
from oloproof_nb._run.sandbox import SystemContractError, stored_trajectory, to_trajectory

SYSTEM = '''
from oloproof_nb import Trajectory


class Desk:
    def run(self, input):
        if input["mode"] == "dict_step":
            return Trajectory.model_construct(steps=[{"tool": "lookup", "args": {"id": 1}, "result": 2}],
                                              answer="done", status="completed", input=None)
        return Trajectory.model_construct(steps=[{"tool": 7}], answer="done", status="completed", input=None)
'''


class _Status(str, enum.Enum):
    DONE = "completed"


class _Text(str):
    pass


def _unvalidated(**fields: Any) -> Trajectory:
    return Trajectory.model_construct(**{"steps": [], "answer": None, "status": "completed", "input": None, **fields})


def test_a_dict_step_of_an_unvalidated_trajectory_is_judged_as_in_a_validated_one(make_suite: Any) -> None:
    cases = [{"id": mode, "input": {"mode": mode}, "expected": {"answer": "done"}} for mode in ("dict_step", "bad")]
    folder = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Desk", system_code=SYSTEM)
    run = op.run(op.load_suite(folder), progress=False)
    statuses = run.cases.set_index("case_id")["status"].to_dict()
    assert statuses == {"dict_step": "completed", "bad": "error"}
    assert run.steps["tool"].tolist() == ["lookup"]
    error = run.cases.set_index("case_id").loc["bad", "error"]
    assert error == "run() returned an invalid trajectory: steps[0].tool: Input should be a valid string (got 7)"


@pytest.mark.parametrize("step", [{"tool": 7}, 5, {"role": "user", "content": "x", "extra": 1}])
def test_a_step_that_is_no_step_gets_the_words_a_dict_gets(step: Any) -> None:
    with pytest.raises(SystemContractError) as from_dict:
        to_trajectory({"steps": [{"tool": "fine"}, step]}, "run()")
    with pytest.raises(SystemContractError) as from_model:
        stored_trajectory(_unvalidated(steps=[ToolCall(tool="fine"), step]), "run()")
    assert str(from_model.value) == str(from_dict.value)


def test_dict_steps_are_stored_as_their_steps() -> None:
    stored = stored_trajectory(_unvalidated(steps=[{"tool": "t", "args": {"a": 1}},
                                                   Message(role="user", content="hi"),
                                                   {"role": "assistant", "content": "ok"}]), "run()")
    assert stored["steps"] == [{"kind": "tool_call", "tool": "t", "args": {"a": 1}, "result": None},
                               {"kind": "message", "role": "user", "content": "hi", "name": None, "args": None},
                               {"kind": "message", "role": "assistant", "content": "ok", "name": None, "args": None}]


@pytest.mark.parametrize("status", [_Status.DONE, _Text("completed")])
def test_a_text_status_is_stored_as_its_plain_text_as_a_dict_is_read(status: Any) -> None:
    # pydantic 2.14 reads such a status in a dict as "completed"; 2.7 (the oldest allowed) refuses it there
    stored = stored_trajectory(_unvalidated(status=status), "run()")
    assert stored["status"] == "completed"
    assert type(stored["status"]) is str
