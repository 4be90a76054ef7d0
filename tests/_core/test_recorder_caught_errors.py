"""The Recorder and replay code for raising tools and caught errors: what a raised call is, when a
replayed raise repeats its recording, and which of the recorder's own errors ``trajectory()`` raises again.

Expectations are written by hand from README section 1 and the docstrings (``raised_result``'s exact shape, "the
first of the recorder's own errors a call raised"), never read from the code under test."""

from __future__ import annotations

from typing import Any

import pytest

from oloproof_nb._core.faults import control_difference, fault_difference
from oloproof_nb._core.jsonsafe import NotJSONError
from oloproof_nb._core.recorder import Recorder, ReplayDiverged, raised_result
from oloproof_nb._core.trajectory import ToolCall, ToolErrorRule, Trajectory, is_raised_result, same_raise


class Refused(Exception):
    pass


class Receipt:
    """A service's own object: it has no JSON form."""


#: A rule that reads neither ``ok`` nor ``error``: only a real raise is an error under it.
SUCCESS_RULE = ToolErrorRule(ok_keys=["success"], error_keys=[])


@pytest.mark.parametrize("returned", [
    {"ok": 0, "error": "Refused: x", "raised": "Refused"},      # 0, not the JSON false
    {"ok": None, "error": "Refused: x", "raised": "Refused"},
    {"ok": False, "error": None, "raised": "Refused"},          # no text: raised_result always gives one
    {"ok": False, "error": ["Refused"], "raised": "Refused"},
    {"ok": False, "error": "Refused: x", "raised": True},       # no class name
    {"ok": False, "error": "Refused: x", "raised": None},
])
def test_a_returned_dict_that_is_not_exactly_a_raise_is_read_by_the_suites_rule(returned: dict[str, Any]) -> None:
    """``is_raised_result``: exactly ``{"ok": false, "error": TEXT, "raised": CLASS NAME}``. A tool's own dict of
    another shape is data the suite's rule reads (here: no ``success`` key, so no failure), not a raise."""
    assert not is_raised_result(returned)
    assert not SUCCESS_RULE.is_error(returned)
    assert not same_raise(returned, returned)
    real = raised_result(Refused("x"))
    assert real == {"ok": False, "error": "Refused: x", "raised": "Refused"} and SUCCESS_RULE.is_error(real)


def test_a_replay_in_which_another_tool_raises_the_same_class_differs() -> None:
    """Only the text of a raised call goes uncompared: a raise of the same class by another tool is another step."""
    recorded = Trajectory(steps=[ToolCall(tool="refund", args={"order_id": "W1"},
                                          result=raised_result(Refused("no")))], answer="sorry")
    other_tool = Trajectory(steps=[ToolCall(tool="cancel", args={"order_id": "W1"},
                                            result=raised_result(Refused("no")))], answer="sorry")
    assert control_difference(recorded, {}, other_tool, {}) is not None
    assert fault_difference(recorded, Trajectory(steps=[*other_tool.steps, ToolCall(tool="x")]), 1, None) == (
        "step 0 differs from the recording")


def test_the_first_of_two_caught_errors_is_the_one_trajectory_raises() -> None:
    rec = Recorder()
    for tool in ("pay", "ship"):
        try:
            rec.tool(tool, Receipt)
        except Exception:  # noqa: BLE001 - the careless agent under test
            pass
    with pytest.raises(NotJSONError, match="tool pay's result"):
        rec.trajectory("done")


def test_a_model_output_with_no_json_form_ends_the_case_even_when_the_agent_catches_the_error() -> None:
    rec = Recorder()
    try:
        rec.model("llm", lambda prompt: Receipt(), prompt="hi")
    except Exception:  # noqa: BLE001
        pass
    assert rec.steps == []
    with pytest.raises(NotJSONError, match="model call llm's output"):
        rec.trajectory("done")


def test_a_model_call_that_diverges_in_a_replay_fails_it_even_when_the_agent_catches_the_error() -> None:
    def act(rec: Recorder, prompts: list[str]) -> str:
        for prompt in prompts:
            try:
                rec.model("llm", lambda prompt: "hello", prompt=prompt)
                break
            except Exception:  # noqa: BLE001 - it retries whatever went wrong, the divergence included
                continue
        rec.tool("note", lambda: {"ok": True})
        return "done"

    rec = Recorder()
    recorded = rec.trajectory(act(rec, ["hi"]))
    again = Recorder.replaying(recorded, checkpoint=1, change=None)
    answer = act(again, ["bye", "hi"])  # first another prompt before the checkpoint: not the recorded call
    assert [s.model_dump() for s in again.steps] == [s.model_dump() for s in recorded.steps]  # the retry hid it
    with pytest.raises(ReplayDiverged, match=r"step 0: the replay called llm\(\{'prompt': 'bye'\}\)"):
        again.trajectory(answer)
