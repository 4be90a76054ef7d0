"""``replay()`` gets a copy of the recording: a system that consumes the steps it is given (pops them as it
replays) or edits a step leaves the run's recording whole, so the faulted replay after the control, and the
control's comparison with the recording, still read what was recorded."""

from __future__ import annotations

from typing import Any

from oloproof_nb._core.case import case_from_mapping
from oloproof_nb._core.trajectory import Change, ToolCall, Trajectory
from oloproof_nb._run.sandbox import replay_case

STEPS = [ToolCall(tool="look", args={"id": 1}, result={"n": 1}),
         ToolCall(tool="pay", args={"k": 1}, result={"ok": True})]


class Consumes:
    """Replays by popping the recorded steps off the trajectory it is given, marking each as replayed."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = {}

    def reset(self, state: dict[str, Any]) -> None:
        self.state = dict(state)

    def snapshot(self) -> dict[str, Any]:
        return dict(self.state)

    def replay(self, trajectory: Trajectory, *, checkpoint: int, change: Change | None) -> Trajectory:
        out = []
        while trajectory.steps:
            step = trajectory.steps.pop(0)
            assert isinstance(step, ToolCall)
            step.args["replayed"] = True
            out.append(step)
        return Trajectory(steps=out, answer=trajectory.answer)


def test_a_replay_that_consumes_its_recording_leaves_the_runs_recording_whole() -> None:
    recorded = Trajectory(steps=[s.model_copy(deep=True) for s in STEPS], answer="paid")
    case = case_from_mapping({"id": "c0", "input": {"q": 1}})
    system = Consumes()
    for _ in range(2):  # the control, then the faulted replay: each is given the whole recording
        out = replay_case(system, case, recorded, 1, None, run_id="r1", system_version=None, timeout_s=None)
        assert [(s.tool, s.args) for s in out.trajectory.steps] == [  # type: ignore[union-attr]
            ("look", {"id": 1, "replayed": True}), ("pay", {"k": 1, "replayed": True})]
    assert recorded.steps == STEPS
