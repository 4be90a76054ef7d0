"""A trajectory pydantic never validated is checked when it is stored: tool names, roles and names are text, the
status one of three.

A :class:`~oloproof_nb.Recorder` makes its steps with ``model_construct`` (no validation), and a system may build
or change a trajectory the same way. ``rec.tool(7, fn)`` stored a tool named ``7`` (the journal's number; its
columnar copy's text ``"7"`` on pandas 2), and ``Trajectory.model_construct(status="bogus")`` a case whose status is
``bogus`` in ``run.cases``, judged as if it had completed. Now each is the case's error, in the words a trajectory
returned as a dict gets from pydantic.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _frame_checks import NAMES, journal_frames

import oloproof_nb as op
from oloproof_nb._analysis import columnar
from oloproof_nb._core.trajectory import ToolCall, Trajectory
from oloproof_nb._run.sandbox import SystemContractError, stored_trajectory, to_trajectory

SYSTEM = '''
import enum

from oloproof_nb import Recorder, Trajectory
from oloproof_nb._core.trajectory import Message, ToolCall


class Tool(str, enum.Enum):
    REFUND = "issue_refund"


class Named(str):
    pass


class Odd:
    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        mode, rec = input["mode"], Recorder()
        if mode == "tool_int":
            rec.tool(7, lambda: {"ok": True})
        elif mode == "model_int":
            rec.model(8, lambda: "text")
        elif mode == "role_int":
            return Trajectory.model_construct(steps=[Message.model_construct(kind="message", role=5, content="x",
                                                                             name=None, args=None)],
                                              answer="done", status="completed", input=None)
        elif mode == "status":
            return Trajectory.model_construct(steps=[], answer="done", status="bogus", input=None)
        elif mode == "changed":  # validated when made, changed after
            made = Trajectory(steps=[{"tool": "lookup", "args": {}, "result": 1}], answer="done")
            made.steps[0].tool = ["lookup"]
            return made
        elif mode == "enum":
            rec.tool(Tool.REFUND, lambda: {"ok": True})
            rec.tool(Named("lookup"), lambda: 1)
        else:
            rec.tool("lookup", lambda: 1)
        return rec.trajectory("done")
'''

CASES = {
    "tool_int": "steps[0].tool: Input should be a valid string (got 7)",
    "model_int": "steps[0].name: Input should be a valid string (got 8)",
    "role_int": "steps[0].role: Input should be a valid string (got 5)",
    "status": "status: Input should be 'completed', 'failed' or 'waiting' (got 'bogus')",
    "changed": "steps[0].tool: Input should be a valid string (got ['lookup'])",
}


@pytest.fixture
def run(make_suite: Any) -> op.Run:
    cases = [{"id": mode, "input": {"mode": mode}, "expected": {"answer": "done"}}
             for mode in [*CASES, "enum", "plain"]]
    folder = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Odd", system_code=SYSTEM)
    return op.run(op.load_suite(folder), progress=False)


def test_each_field_pydantic_did_not_check_is_the_case_error_named_as_for_a_dict(run: op.Run) -> None:
    cases = run.cases.set_index("case_id")
    for mode, message in CASES.items():
        assert cases.loc[mode, "status"] == "error", mode
        assert cases.loc[mode, "error"] == f"run() returned an invalid trajectory: {message}", mode
    assert list(cases.loc[["enum", "plain"], "status"]) == ["completed", "completed"]
    # nothing of the refused trajectories is stored: the journal's steps are those of the two good cases
    records = [json.loads(line) for line in (run.directory / "cases.jsonl").read_text(encoding="utf-8").splitlines()]
    tools = [(r["case"]["id"], s.get("tool")) for r in records if r.get("trajectory") for s in r["trajectory"]["steps"]]
    assert tools == [("enum", "issue_refund"), ("enum", "lookup"), ("plain", "lookup")]


def test_a_text_enum_or_str_subclass_is_stored_as_its_plain_text_in_the_journal_and_the_copy(run: op.Run) -> None:
    loaded = op.load_run(run.directory)
    assert columnar.is_fresh(run.directory)
    expected = journal_frames(loaded)
    for name in NAMES:
        pd.testing.assert_frame_equal(getattr(loaded, name), expected[name], obj=f"run.{name}")
    tools = loaded.steps[loaded.steps["case_id"] == "enum"]["tool"].tolist()
    assert tools == ["issue_refund", "lookup"]
    assert [type(t) for t in tools] == [str, str]


def test_the_same_words_whether_the_trajectory_came_as_a_dict_or_unvalidated() -> None:
    """The one wording: pydantic's own message for the dict, and the stored-trajectory check for the same field."""
    for field, value, trajectory in [
        ("tool", 7, Trajectory.model_construct(steps=[ToolCall.model_construct(kind="tool_call", tool=7, args={},
                                                                               result=None)],
                                               answer=None, status="completed", input=None)),
        ("status", "bogus", Trajectory.model_construct(steps=[], answer=None, status="bogus", input=None)),
    ]:
        data = {"steps": [{"tool": value}]} if field == "tool" else {"status": value}
        with pytest.raises(SystemContractError) as from_dict:
            to_trajectory(data, "run()")
        with pytest.raises(SystemContractError) as from_model:
            stored_trajectory(trajectory, "run()")
        assert str(from_model.value) == str(from_dict.value)


class _Kind(enum.Enum):
    NUMBER = 3


def test_an_enum_whose_value_is_not_text_is_refused_by_its_value() -> None:
    trajectory = Trajectory(steps=[{"tool": "lookup"}])
    trajectory.steps[0].tool = _Kind.NUMBER  # type: ignore[assignment]
    with pytest.raises(SystemContractError, match=r"steps\[0\]\.tool: Input should be a valid string \(got "):
        stored_trajectory(trajectory, "run()")


def test_a_valid_trajectory_is_stored_unchanged(tmp_path: Path) -> None:
    trajectory = Trajectory(steps=[{"tool": "lookup", "args": {"id": 1}, "result": {"ok": True}},
                                   {"role": "user", "content": "hi", "name": "m", "args": {}}],
                            answer="done", status="waiting")
    assert stored_trajectory(trajectory, "run()") == {
        "steps": [{"kind": "tool_call", "tool": "lookup", "args": {"id": 1}, "result": {"ok": True}},
                  {"kind": "message", "role": "user", "content": "hi", "name": "m", "args": {}}],
        "answer": "done", "status": "waiting", "input": None}
