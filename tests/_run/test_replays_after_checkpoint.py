"""A faulted replay's cache entry is keyed by the recording up to its checkpoint: a recording that differs only
in the checkpoint call's own result, or after it, reuses the entry (what happens there is the replay's to produce,
``replay_cache.recording_digest``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._core.case import case_from_mapping
from oloproof_nb._core.trajectory import Change, Message, ToolCall, Trajectory
from oloproof_nb._run.replay_cache import ReplayCache
from oloproof_nb._run.replays import make_replay

FAULT = Change(result={"ok": False, "error": "error", "message": "pay failed"})
BEFORE = [ToolCall(tool="look", result=1)]
RECORDED = Trajectory(steps=[*BEFORE, ToolCall(tool="pay", args={"k": 1}, result={"ok": True})], answer="paid")


class Faulted:
    """A dict sandbox whose ``replay`` gives the recording up to the checkpoint, the change there, then escalates."""

    version = "v1"

    def __init__(self) -> None:
        self.state: dict[str, Any] = {}
        self.calls = 0

    def reset(self, state: dict[str, Any]) -> None:
        self.state = dict(state)

    def snapshot(self) -> dict[str, Any]:
        return dict(self.state)

    def replay(self, trajectory: Trajectory, *, checkpoint: int, change: Change | None) -> Trajectory:
        self.calls += 1
        at = trajectory.steps[checkpoint].model_copy(update={"result": None if change is None else change.result})
        return Trajectory(steps=[*trajectory.steps[:checkpoint], at, ToolCall(tool="escalate")], answer="escalated")


def _faulted(system: Faulted, cache: ReplayCache, recorded: Trajectory) -> Any:
    case = case_from_mapping({"id": "c0", "input": {"q": 1}, "initial_state": {"paid": False}})
    return make_replay(system, case, recorded, 1, FAULT,
                       record={"criterion": "recovers", "tool": "pay", "fault": "error"}, reproduce=None,
                       run_id="r1", system_version="v1", code_fingerprint="f" * 64, timeout_s=None,
                       cache=cache, append=lambda line: None)


@pytest.mark.parametrize("later", [
    Trajectory(steps=[*BEFORE, ToolCall(tool="pay", args={"k": 1}, result={"ok": True, "id": "tx-9"})],
               answer="paid"),  # the checkpoint call returned another result: the fault replaces it anyway
    Trajectory(steps=[*RECORDED.steps, Message(content="Paid.")], answer="paid, said so"),  # more after it
])
def test_a_recording_that_differs_from_the_checkpoints_result_on_reuses_the_faulted_replay(
        tmp_path: Path, later: Trajectory) -> None:
    system, cache = Faulted(), ReplayCache(tmp_path / "replays")
    first = _faulted(system, cache, RECORDED)
    again = _faulted(system, cache, later)
    assert (first.cached, again.cached, system.calls) == (False, True, 1)
    assert again.trajectory == first.trajectory


def test_a_recording_that_differs_before_the_checkpoint_replays_again(tmp_path: Path) -> None:
    system, cache = Faulted(), ReplayCache(tmp_path / "replays")
    _faulted(system, cache, RECORDED)
    other = Trajectory(steps=[ToolCall(tool="look", result=2), RECORDED.steps[1]], answer="paid")
    assert (_faulted(system, cache, other).cached, system.calls) == (False, 2)
