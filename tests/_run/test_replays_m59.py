"""Mutation round M59 on ``_run/replays.make_replay`` and ``_run/replay_cache``: what keeps a stale replay out.

Each test kills a mutant that survived the nearest tests (see the M59 review). The expectations are counted by hand
(how many times the system's ``replay`` ran, whether a line says ``cached``, how many entry files are on the disk),
never read from the code under test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oloproof_nb._core.case import case_from_mapping
from oloproof_nb._core.trajectory import Change, ToolCall, Trajectory
from oloproof_nb._run.replay_cache import ReplayCache
from oloproof_nb._run.replays import make_replay

RECORDED = Trajectory(steps=[ToolCall(tool="look", result=1), ToolCall(tool="pay", args={"k": 1}, result={"ok": True})],
                      answer="paid")
FAULT = Change(result={"ok": False, "error": "declined"})
CASE = {"id": "c0", "input": {"q": 1}, "initial_state": {"balance": 100}}


class Counting:
    """A dict sandbox whose ``replay`` returns the recording with the change's result at the checkpoint; it counts
    the calls."""

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
        steps = list(trajectory.steps[:checkpoint])
        call = trajectory.steps[checkpoint]
        assert isinstance(call, ToolCall)
        steps.append(call.model_copy(update={"result": call.result if change is None else change.result}))
        return Trajectory(steps=steps, answer="could not pay")


def _replay(system: Counting, cache: ReplayCache, lines: list[dict[str, Any]], *, recorded: Trajectory = RECORDED,
            epoch: int = 1, change: Change | None = FAULT) -> Any:
    case = case_from_mapping(CASE)
    if epoch != 1:
        case = case.model_copy(update={"epoch": epoch})
    return make_replay(system, case, recorded, 1, change,
                       record={"criterion": "recovers", "tool": "pay", "fault": "error"}, reproduce=None,
                       run_id="r1", system_version="v1", code_fingerprint="f" * 64, timeout_s=None, cache=cache,
                       append=lines.append)  # type: ignore[arg-type]  # a record is a dict


def test_every_epoch_replays_on_its_own_not_only_the_second(tmp_path: Path) -> None:
    """Epochs 2 and 3 are two samples of a stochastic agent's recovery (mutant P10: the epoch folded into the
    recording as a constant, so every epoch past the first shares one replay): three epochs make three live
    replays and three entries, and a second pass over them takes all three from the cache."""
    cache, lines = ReplayCache(tmp_path / "replays"), list[dict[str, Any]]()
    system = Counting()
    for epoch in (1, 2, 3):
        _replay(system, cache, lines, epoch=epoch)
    assert system.calls == 3 and len(list(cache.directory.glob("*.json"))) == 3
    for epoch in (1, 2, 3):
        _replay(system, cache, lines, epoch=epoch)
    assert system.calls == 3 and [line["cached"] for line in lines] == [False] * 3 + [True] * 3


def test_a_recording_whose_faulted_call_had_other_arguments_replays_live_again(tmp_path: Path) -> None:
    """The key holds the call at the checkpoint, its arguments included (mutant P11: the recording digest taken
    of the steps before the checkpoint only): a payment of k=2 where the cached replay paid k=1 is another
    replay, made live; the first recording again is taken from the cache."""
    cache, lines = ReplayCache(tmp_path / "replays"), list[dict[str, Any]]()
    other = Trajectory(steps=[RECORDED.steps[0], ToolCall(tool="pay", args={"k": 2}, result={"ok": True})],
                       answer="paid")
    system = Counting()
    for recorded in (RECORDED, other, RECORDED):
        _replay(system, cache, lines, recorded=recorded)
    assert [line["cached"] for line in lines] == [False, False, True] and system.calls == 2
    assert lines[1]["trajectory"]["steps"][1]["args"] == {"k": 2}  # the replay of the other call, not the first's
