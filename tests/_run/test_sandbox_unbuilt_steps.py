"""A step made with ``model_construct`` holds what it was given, checked by nothing: a :class:`ToolCall` without its
``tool``, or with ``args`` that are no object.

Stored, the step without ``tool`` raised ``AttributeError`` (the case's error read ``AttributeError: 'ToolCall'
object has no attribute 'tool'``, oloproof's own slip given as the agent's), and ``args=[1, 2]`` or ``args=None``
was stored as it was, where a trajectory given as a dict with the same step is refused. A step of a subclass with
fields of its own was stored without them alone, and refused for them beside a dict step. Each is now read as
pydantic reads the dict (:func:`to_trajectory`, the reference the expected words are taken from).
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ConfigDict

import oloproof_nb as op
from oloproof_nb._core.trajectory import Message, ToolCall, Trajectory
from oloproof_nb._run.sandbox import SystemContractError, stored_trajectory, to_trajectory

SYSTEM = '''
from oloproof_nb import ToolCall, Trajectory


class Desk:
    def run(self, input):
        return Trajectory.model_construct(steps=[ToolCall.model_construct(args={"id": 1})], answer="done")
'''


class _Logged(ToolCall):
    """A framework's tool call: a field of its own, and extra ones allowed."""

    model_config = ConfigDict(extra="allow")

    latency_ms: int = 0


def _unvalidated(steps: list[Any]) -> Trajectory:
    return Trajectory.model_construct(steps=steps, answer=None, status="completed", input=None)


@pytest.mark.parametrize(("step", "as_dict"), [
    (ToolCall.model_construct(args={"id": 1}), {"kind": "tool_call", "args": {"id": 1}}),
    (ToolCall.model_construct(tool="t", args=[1, 2]), {"tool": "t", "args": [1, 2]}),
    (ToolCall.model_construct(tool="t", args=None), {"tool": "t", "args": None}),
    (Message.model_construct(role="user", args=[1]), {"role": "user", "args": [1]}),
    # its class says what it is, not a kind model_construct took unchecked
    (ToolCall.model_construct(args={"id": 1}, kind="message"), {"kind": "tool_call", "args": {"id": 1}}),
])
def test_an_unbuilt_step_gets_the_words_a_dict_gets(step: Any, as_dict: dict[str, Any]) -> None:
    with pytest.raises(SystemContractError) as from_dict:
        to_trajectory({"steps": [as_dict]}, "run()")
    with pytest.raises(SystemContractError) as from_model:
        stored_trajectory(_unvalidated([step]), "run()")
    assert str(from_model.value) == str(from_dict.value)


def test_a_subclass_step_is_stored_alike_alone_and_beside_a_dict_step() -> None:
    step = _Logged(tool="lookup", args={"id": 1}, latency_ms=12, trace="abc")
    stored = {"kind": "tool_call", "tool": "lookup", "args": {"id": 1}, "result": None}
    assert stored_trajectory(_unvalidated([step]), "run()")["steps"] == [stored]
    beside = stored_trajectory(_unvalidated([step, {"tool": "lookup", "args": {"id": 1}}]), "run()")
    assert beside["steps"] == [stored, stored]


def test_a_step_without_its_tool_is_the_systems_error_not_an_attribute_error(make_suite: Any) -> None:
    cases = [{"id": "c1", "input": {}, "expected": {"answer": "done"}}]
    folder = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Desk", system_code=SYSTEM)
    run = op.run(op.load_suite(folder), progress=False)
    assert run.cases["error"].tolist() == ["run() returned an invalid trajectory: steps[0].tool: is required"]
