"""Fault replays as the run makes them: through the sandbox routine, under the timeout, cached, recorded.

The evaluator (``evaluators/fault``) asks for a control or a faulted replay;
this module takes it from the replay cache when a verified entry exists, or
runs it with :func:`~oloproof_nb._run.sandbox.replay_case`, stores a
reproducing replay in the cache, and appends the replay's record to
``replays.jsonl``.

A cache entry is a miss when it cannot be parsed, its digest does not verify,
or (for a control) it does not reproduce this run's recording; any other error
while checking an entry is oloproof's own and stops the run. Only what the
system's ``replay`` raised (or returned that is not a trajectory) makes a
replay's error; anything else propagates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from .._core.canonical import digest
from .._core.case import Case
from .._core.evaluator import Replay, Reproduce
from .._core.faults import control_difference
from .._core.recorder import ReplayDiverged
from .._core.records import EnvironmentState, ReplayRecord
from .._core.trajectory import Change, Trajectory
from .replay_cache import ReplayCache, recording_digest, replay_key
from .sandbox import SystemContractError, environment_state, failure_reason, replay_case, stored_trajectory
from .timeouts import CaseTimeout, SystemRaised, system_traceback

__all__ = ["make_replay"]


def _differs(reproduce: Reproduce, trajectory: Trajectory, state: dict[str, Any] | None) -> bool:
    """Whether a control replay (its ``trajectory`` and ``state``) fails to reproduce the recording
    (:func:`~oloproof_nb._core.faults.control_difference`)."""
    recorded, recorded_state, ignore, keep, lists = reproduce
    return control_difference(recorded, recorded_state, trajectory, state, ignore, keep, lists) is not None


def _from_cache(cache: ReplayCache, key: str, case: Case, run_id: str, version: str | None,
                reproduce: Reproduce | None) -> tuple[Replay, EnvironmentState | None]:
    """A cached replay, or an empty :class:`Replay` when there is no usable entry."""
    entry = cache.get(key)  # None: absent, unparsable, or its digest does not verify
    if entry is None:
        return Replay(), None
    try:
        trajectory = Trajectory.model_validate(entry["trajectory"])
    except ValidationError:  # a verified entry that does not parse as a trajectory: a miss, rewritten
        return Replay(), None
    state = entry.get("state")
    if reproduce is not None and _differs(reproduce, trajectory, state):
        return Replay(), None  # the cached control does not reproduce this run's recording
    env = None
    if state is not None:
        env = environment_state(state, run_id=run_id, case=case, system_version=version)
        env["captured_at"] = entry.get("captured_at") or env["captured_at"]
    return Replay(trajectory=trajectory, state=state, cached=True), env


def make_replay(system: Any, case: Case, recorded: Trajectory, checkpoint: int, change: Change | None, *,
                record: Mapping[str, Any], reproduce: Reproduce | None,
                run_id: str, system_version: str | None, code_fingerprint: str | None, timeout_s: float | None,
                cache: ReplayCache | None, append: Callable[[ReplayRecord], None], from_cache: bool = True,
                live_on: Callable[[], Any] | None = None,
                fingerprint_of: Callable[[Any], str | None] | None = None) -> Replay:
    """One replay (cached or live), appended to ``replays.jsonl`` through ``append``.

    A live replay that exceeds the timeout is recorded and re-raised
    (:class:`~oloproof_nb._run.timeouts.CaseTimeout`): the system instance is
    stuck and the caller replaces it. A replay that raises is a
    :class:`Replay` with ``error`` set (``diverged`` for ``ReplayDiverged``).
    The cache is used only with both a ``system_version`` and a ``code_fingerprint``. ``from_cache`` False: the
    replay runs live whatever the cache holds, and is stored (a faulted replay after a control that did not come
    from the cache: :class:`~oloproof_nb._run.context.LiveCase`). ``live_on``: builds the instance a live replay
    runs on in place of ``system``, called only when the cache gives none (what it raises propagates);
    ``fingerprint_of`` then gives what keys the replay stored from it (that instance's own settings, not
    ``system``'s: ``code_fingerprint`` keys the look-up alone).
    """
    change_json = None if change is None else change.model_dump(mode="json")
    usable = cache if (cache is not None and system_version and code_fingerprint) else None
    key = ""
    if usable is not None:
        steps = [step.model_dump(mode="json") for step in recorded.steps]
        recording = recording_digest(steps, checkpoint)
        if case.epoch != 1:  # each epoch replays on its own: a stochastic agent's recovery is sampled k times
            recording = digest({"recording": recording, "epoch": case.epoch})

        def key_of(fingerprint: str) -> str:
            return replay_key(system_version or "", fingerprint, case.digest, checkpoint, change_json, recording,
                              timeout_s=timeout_s)

        key = key_of(code_fingerprint or "")
    result, env = (Replay(), None) if usable is None or not from_cache else _from_cache(usable, key, case, run_id,
                                                                                          system_version, reproduce)
    trace: str | None = None

    def write(replay: Replay, env: EnvironmentState | None) -> None:
        line: ReplayRecord = {"case_id": case.id}  # type: ignore[typeddict-item]
        if case.epoch != 1:  # right after the case id: the journal's index reads both from a line's first bytes
            line["epoch"] = case.epoch
        line.update({
            "criterion": record["criterion"], "kind": "control" if change_json is None else "fault",
            "tool": record["tool"], "fault": record["fault"], "checkpoint": checkpoint, "change": change_json,
            "trajectory": None if replay.trajectory is None else stored_trajectory(replay.trajectory, "replay()"),
            "environment_state": env, "cached": replay.cached, "error": replay.error})
        if trace is not None:
            line["traceback"] = trace
        append(line)

    if not result.cached:
        if live_on is not None:
            system = live_on()
            if fingerprint_of is not None and usable is not None:  # stored under the fresh instance's own key
                code_fingerprint = fingerprint_of(system)
                usable, key = (usable, key_of(code_fingerprint)) if code_fingerprint else (None, "")
        try:
            out = replay_case(system, case, recorded, checkpoint, change, run_id=run_id,
                              system_version=system_version, timeout_s=timeout_s)
            result, env = Replay(trajectory=out.trajectory, state=out.state), out.env
        except CaseTimeout as exc:
            write(Replay(error=failure_reason(exc)), None)
            raise
        except SystemContractError as exc:  # replay() returned something that is not a trajectory or state
            result = Replay(error=failure_reason(exc))
        except BaseException as exc:
            trace = system_traceback(exc)
            if trace is None:  # not the system's: oloproof's own error, or the user's Ctrl-C
                raise
            original = exc.error if isinstance(exc, SystemRaised) else exc
            result = Replay(error=failure_reason(exc), diverged=isinstance(original, ReplayDiverged))
        reproduced = result.trajectory is not None and (
            reproduce is None or not _differs(reproduce, result.trajectory, result.state))
        if usable is not None and reproduced and result.trajectory is not None:
            usable.put(key, {"trajectory": result.trajectory.model_dump(mode="json"), "state": result.state,
                             "captured_at": None if env is None else env["captured_at"],
                             "case_id": case.id, "checkpoint": checkpoint, "change": change_json,
                             "system_version": system_version, "code_fingerprint": code_fingerprint})
    write(result, env)
    return result
