"""``_core/recorder.py``: copies and kinds of replayed model calls, the default speaker."""

from __future__ import annotations

from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._core.recorder import ReplayDiverged


def _plan_and_act(rec: op.Recorder) -> list[str]:
    """An agent that edits the plan its model returned (appends a step of its own) before acting."""
    plan: list[str] = rec.model("planner", lambda: ["look"])
    plan.append("answer")
    rec.tool("look", lambda: 1)
    return plan


def test_a_replayed_model_output_the_agent_edits_leaves_the_recording_as_it_was() -> None:
    """Two replays of one recorded trajectory (two checkpoints of one case): each gets the plan ["look"] as it was
    recorded. Handed the recorded list itself, the first replay's append made the second one see
    ["look", "answer"], and the recording read ["look", "answer"] too."""
    rec = op.Recorder()
    _plan_and_act(rec)
    traj = rec.trajectory("done")
    assert traj.steps[0].content == ["look"]  # type: ignore[union-attr]
    seen: list[Any] = []
    for _ in range(2):
        again = op.Recorder.replaying(traj, checkpoint=1, change=op.Change(result=0))
        plan: list[str] = again.model("planner", lambda: pytest.fail("a model before the checkpoint is not called"))
        seen.append(list(plan))
        plan.append("answer")
        again.tool("look", lambda: 1)
    assert seen == [["look"], ["look"]]
    assert traj.steps[0].content == ["look"]  # type: ignore[union-attr]


def test_a_model_call_where_the_recording_has_a_tool_of_that_name_diverges() -> None:
    """The recording has tool ``flake`` at step 0; a replay that makes a model call ``flake`` there is not the
    recorded call (another kind), whatever the name and arguments."""
    rec = op.Recorder()
    rec.tool("flake", lambda: 0.1)
    rec.tool("look", lambda: 1)
    traj = rec.trajectory("done")
    again = op.Recorder.replaying(traj, checkpoint=1, change=op.Change(result=0))
    with pytest.raises(ReplayDiverged, match="step 0"):
        again.model("flake", lambda: 0.1)


def test_say_records_an_assistant_message_unless_told_the_role() -> None:
    """``say(content, role="assistant")``: the signature's default, and the role given (README: role="user")."""
    rec = op.Recorder()
    rec.say("On it.")
    rec.say("Refund order 1", role="user")
    steps = rec.trajectory().steps
    assert [(s.role, s.content) for s in steps] == [("assistant", "On it."), ("user", "Refund order 1")]  # type: ignore[union-attr]
