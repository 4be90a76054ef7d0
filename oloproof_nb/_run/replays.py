"""Fault replays as the run makes them: through the sandbox routine, under the timeout, cached, recorded.

The evaluator (``evaluators/fault``) asks for a control or a faulted replay;
this module takes it from the replay cache when a valid entry exists, or runs
it with :func:`~oloproof_nb._run.sandbox.replay_case`, stores a reproducing
replay in the cache, and appends the replay's record to ``replays.jsonl``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._core.case import Case
from .._core.evaluator import Replay
from .._core.faults import control_difference
from .._core.recorder import ReplayDiverged
from .._core.records import EnvironmentState, ReplayRecord
from .._core.trajectory import Change, Trajectory
from .replay_cache import ReplayCache, replay_key
from .sandbox import environment_state, failure_reason, replay_case, stored_trajectory
from .timeouts import CaseTimeout

__all__ = ["make_replay"]


def _from_cache(cache: ReplayCache, key: str, case: Case, run_id: str, version: str | None,
                reproduce: tuple[Trajectory, dict[str, Any] | None] | None) -> tuple[Replay, EnvironmentState | None]:
    """A cached replay, or an empty :class:`Replay` when there is no usable entry."""
    entry = cache.get(key)
    if entry is None:
        return Replay(), None
    try:
        trajectory = Trajectory.model_validate(entry["trajectory"])
        state = entry.get("state")
        if reproduce is not None and control_difference(reproduce[0], reproduce[1], trajectory, state):
            return Replay(), None  # the cached control does not reproduce this run's recording
        env = None
        if state is not None:
            env = environment_state(state, run_id=run_id, case=case, system_version=version)
            env["captured_at"] = entry.get("captured_at") or env["captured_at"]
    except Exception:  # noqa: BLE001 - an unusable entry is a miss
        return Replay(), None
    return Replay(trajectory=trajectory, state=state, cached=True), env


def make_replay(system: Any, case: Case, recorded: Trajectory, checkpoint: int, change: Change | None, *,
                record: Mapping[str, Any], reproduce: tuple[Trajectory, dict[str, Any] | None] | None,
                run_id: str, system_version: str | None, timeout_s: float | None, cache: ReplayCache | None,
                append: Callable[[ReplayRecord], None]) -> Replay:
    """One replay (cached or live), appended to ``replays.jsonl`` through ``append``.

    A live replay that exceeds the timeout is recorded and re-raised
    (:class:`~oloproof_nb._run.timeouts.CaseTimeout`): the system instance is
    stuck and the caller replaces it. A replay that raises is a
    :class:`Replay` with ``error`` set (``diverged`` for ``ReplayDiverged``).
    """
    change_json = None if change is None else change.model_dump(mode="json")
    key = replay_key(system_version or "", case.digest, checkpoint, change_json)
    result, env = (Replay(), None) if cache is None else _from_cache(cache, key, case, run_id, system_version,
                                                                       reproduce)

    def write(replay: Replay, env: EnvironmentState | None) -> None:
        append({"case_id": case.id, "criterion": record["criterion"],
                "kind": "control" if change_json is None else "fault", "tool": record["tool"],
                "fault": record["fault"], "checkpoint": checkpoint, "change": change_json,
                "trajectory": None if replay.trajectory is None else stored_trajectory(replay.trajectory, "replay()"),
                "environment_state": env, "cached": replay.cached, "error": replay.error})

    if not result.cached:
        try:
            out = replay_case(system, case, recorded, checkpoint, change, run_id=run_id,
                              system_version=system_version, timeout_s=timeout_s)
            result, env = Replay(trajectory=out.trajectory, state=out.state), out.env
        except CaseTimeout as exc:
            write(Replay(error=failure_reason(exc)), None)
            raise
        except ReplayDiverged as exc:
            result = Replay(error=failure_reason(exc), diverged=True)
        except Exception as exc:  # noqa: BLE001 - a replay that raises is data: the verdict is missing
            result = Replay(error=failure_reason(exc))
        reproduced = result.trajectory is not None and (
            reproduce is None or control_difference(reproduce[0], reproduce[1], result.trajectory,
                                                    result.state) is None)
        if cache is not None and reproduced and result.trajectory is not None:
            cache.put(key, {"trajectory": result.trajectory.model_dump(mode="json"), "state": result.state,
                            "captured_at": None if env is None else env["captured_at"],
                            "case_id": case.id, "checkpoint": checkpoint, "change": change_json,
                            "system_version": system_version})
    write(result, env)
    return result
