"""``_run/replays.make_replay``: what the replay cache key must hold so a stale replay misses.

Each test pins a part of the key the nearest tests would let go unseen; expectations are counted by
hand (how many times the system's ``replay`` ran, whether the line says ``cached``, how many entry files are on the
disk), never read from the code.
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


class Counting:
    """A dict sandbox whose ``replay`` returns the recording with the change's result at the checkpoint."""

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


def _faulted(system: Counting, cache: ReplayCache, lines: list[dict[str, Any]], case: dict[str, Any]) -> Any:
    return make_replay(system, case_from_mapping(case), RECORDED, 1, FAULT,
                       record={"criterion": "recovers", "tool": "pay", "fault": "error"}, reproduce=None,
                       run_id="r1", system_version="v1", code_fingerprint="f" * 64, timeout_s=None, cache=cache,
                       append=lines.append)  # type: ignore[arg-type]  # a record is a dict


def test_an_edited_case_with_the_same_id_replays_live_again(tmp_path: Path) -> None:
    """The key holds the case's digest, not its id (``case.id`` alone would not tell): a case whose
    ``initial_state`` was edited since (the balance is now too low, so the agent should act otherwise) and whose
    recording is the same up to the checkpoint must not get the replay made on the old world."""
    cache, lines = ReplayCache(tmp_path / "replays"), list[dict[str, Any]]()
    before = {"id": "c0", "input": {"q": 1}, "initial_state": {"balance": 100}}
    edited = {**before, "initial_state": {"balance": 0}}
    system = Counting()
    _faulted(system, cache, lines, before)
    again = _faulted(system, cache, lines, before)  # the unchanged case: taken from the cache
    assert (system.calls, again.cached) == (1, True)
    replay = _faulted(system, cache, lines, edited)
    assert (system.calls, replay.cached, lines[-1]["cached"]) == (2, False, False)
    assert lines[-1]["environment_state"]["state"] == {"balance": 0}  # reset to the edited world
    assert len(list(cache.directory.glob("*.json"))) == 2


def test_a_recording_that_saw_another_result_before_the_checkpoint_replays_live_again(tmp_path: Path) -> None:
    """The key holds the recorded steps before the checkpoint and the call at it (a recording digest
    taken at step 0 holds only the first call without its result, and would miss this): an agent whose lookup
    returned 2 instead of 1 before the faulted payment took another path, and its replay is made again."""
    cache, lines = ReplayCache(tmp_path / "replays"), list[dict[str, Any]]()
    case = {"id": "c0", "input": {"q": 1}, "initial_state": {"balance": 100}}
    other = Trajectory(steps=[ToolCall(tool="look", result=2), RECORDED.steps[1]], answer="paid")
    system = Counting()
    for recorded in (RECORDED, other, RECORDED):
        make_replay(system, case_from_mapping(case), recorded, 1, FAULT,
                    record={"criterion": "recovers", "tool": "pay", "fault": "error"}, reproduce=None, run_id="r1",
                    system_version="v1", code_fingerprint="f" * 64, timeout_s=None, cache=cache,
                    append=lines.append)  # type: ignore[arg-type]  # a record is a dict
    # live, live (another recording), cached (the first recording again)
    assert [line["cached"] for line in lines] == [False, False, True] and system.calls == 2
    assert lines[1]["trajectory"]["steps"][0]["result"] == 2  # the replay of the other recording, not the first's


# -- make_replay and the replay cache: edges the tests above leave open ----------------------------------------

CASE = {"id": "c0", "input": {"q": 1}, "initial_state": {"balance": 100}}


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
    """Epochs 2 and 3 are two samples of a stochastic agent's recovery (with the epoch folded into the
    recording as a constant, every epoch past the first would share one replay): three epochs make three live
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
    """The key holds the call at the checkpoint, its arguments included (a recording digest taken
    of the steps before the checkpoint only would miss it): a payment of k=2 where the cached replay paid k=1 is
    another replay, made live; the first recording again is taken from the cache."""
    cache, lines = ReplayCache(tmp_path / "replays"), list[dict[str, Any]]()
    other = Trajectory(steps=[RECORDED.steps[0], ToolCall(tool="pay", args={"k": 2}, result={"ok": True})],
                       answer="paid")
    system = Counting()
    for recorded in (RECORDED, other, RECORDED):
        _replay(system, cache, lines, recorded=recorded)
    assert [line["cached"] for line in lines] == [False, False, True] and system.calls == 2
    assert lines[1]["trajectory"]["steps"][1]["args"] == {"k": 2}  # the replay of the other call, not the first's
