"""One replay as the run makes it (``_run/replays.make_replay``): when the cache is used, what a cached entry must
be to stand in for a live replay, and what each replay's line in ``replays.jsonl`` says.

The system here is a dict sandbox whose ``replay`` returns (or raises) what the test gives it, so every branch is
reached without a suite; the line appended is what ``replays.jsonl`` would hold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from oloproof_nb._core.case import case_from_mapping
from oloproof_nb._core.evaluator import Replay
from oloproof_nb._core.recorder import ReplayDiverged
from oloproof_nb._core.trajectory import Change, ToolCall, Trajectory
from oloproof_nb._run.replay_cache import ReplayCache
from oloproof_nb._run.replays import make_replay
from oloproof_nb._run.timeouts import CaseTimeout, SystemRaised

RECORDED = Trajectory(steps=[ToolCall(tool="look", result=1), ToolCall(tool="pay", args={"k": 1}, result={"ok": True})],
                      answer="paid")
STATE = {"paid": True}
FINGERPRINT = "f" * 64


class Scripted:
    """A dict sandbox whose ``replay`` gives back ``outcome`` (a trajectory) or raises it; it counts the calls."""

    version = "v1"

    def __init__(self, outcome: Trajectory | BaseException, state: dict[str, Any] | None = None) -> None:
        self.outcome, self.after = outcome, dict(STATE if state is None else state)
        self.state: dict[str, Any] = {}
        self.calls = 0

    def reset(self, state: dict[str, Any]) -> None:
        self.state = dict(state)

    def snapshot(self) -> dict[str, Any]:
        return dict(self.state)

    def replay(self, trajectory: Trajectory, *, checkpoint: int, change: Change | None) -> Trajectory:
        self.calls += 1
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        self.state = dict(self.after)
        return self.outcome


def _case(epoch: int = 1) -> Any:
    case = case_from_mapping({"id": "c0", "input": {"q": 1}, "initial_state": {"paid": False}})
    return case if epoch == 1 else case.model_copy(update={"epoch": epoch})


def _replay(system: Scripted, cache: ReplayCache | None, lines: list[dict[str, Any]], *, epoch: int = 1,
            change: Change | None = None, reproduce: bool = True, version: str | None = "v1",
            fingerprint: str | None = FINGERPRINT) -> Replay:
    return make_replay(system, _case(epoch), RECORDED, 1, change,
                       record={"criterion": "recovers", "tool": "pay", "fault": "error"},
                       reproduce=(RECORDED, STATE, (), (), {}) if reproduce else None, run_id="r1",
                       system_version=version,
                       code_fingerprint=fingerprint, timeout_s=None, cache=cache,
                       append=lines.append)  # type: ignore[arg-type]  # a record is a dict


def _entries(cache: ReplayCache) -> list[Path]:
    return sorted(cache.directory.glob("*.json")) if cache.directory.exists() else []


@pytest.mark.parametrize(("version", "fingerprint", "kept"), [("v1", FINGERPRINT, 1), ("v1", None, 0),
                                                              (None, FINGERPRINT, 0)])
def test_a_replay_is_cached_only_with_both_a_version_and_a_code_fingerprint(tmp_path: Path, version: str | None,
                                                                            fingerprint: str | None,
                                                                            kept: int) -> None:
    """Module docstring of the cache: a system without a ``version``, or whose code cannot be fingerprinted, is
    never cached (an edited system that kept its version would reuse its old replays)."""
    cache = ReplayCache(tmp_path / "replays")
    _replay(Scripted(RECORDED), cache, [], version=version, fingerprint=fingerprint)
    assert len(_entries(cache)) == kept


def test_a_cached_control_stands_in_for_a_live_one_with_the_time_it_was_captured(tmp_path: Path) -> None:
    cache, lines = ReplayCache(tmp_path / "replays"), list[dict[str, Any]]()
    first = Scripted(RECORDED)
    _replay(first, cache, lines)
    captured = lines[0]["environment_state"]["captured_at"]
    assert [entry.read_text(encoding="utf-8").count(captured) for entry in _entries(cache)] == [1]
    second = Scripted(RECORDED)
    replay = _replay(second, cache, lines)
    assert (second.calls, replay.cached, lines[1]["cached"]) == (0, True, True)
    assert lines[1]["environment_state"]["captured_at"] == captured  # when the state was taken, not read back
    assert lines[1]["trajectory"] == lines[0]["trajectory"]


def test_each_epoch_replays_on_its_own_and_its_line_says_which(tmp_path: Path) -> None:
    """A stochastic agent's recovery is sampled once per epoch: epoch 2 never reuses epoch 1's replay. Its line
    names the epoch right after the case id; epoch 1's line has none (as a case record)."""
    cache, lines = ReplayCache(tmp_path / "replays"), list[dict[str, Any]]()
    _replay(Scripted(RECORDED), cache, lines)
    system = Scripted(RECORDED)
    assert not _replay(system, cache, lines, epoch=2).cached and system.calls == 1
    assert len(_entries(cache)) == 2
    assert "epoch" not in lines[0] and list(lines[1])[:2] == ["case_id", "epoch"] and lines[1]["epoch"] == 2


def test_a_control_that_does_not_reproduce_the_recording_is_never_cached_nor_taken_from_the_cache(
        tmp_path: Path) -> None:
    """A control replay that answers otherwise than the recording shows the system is not deterministic on this
    path: it is not stored, and an entry stored for it (by a run whose recording it did reproduce) is not used
    for a recording it does not reproduce."""
    cache, lines = ReplayCache(tmp_path / "replays"), list[dict[str, Any]]()
    other = RECORDED.model_copy(update={"answer": "refused"})
    _replay(Scripted(other), cache, lines)
    assert _entries(cache) == [] and lines[0]["cached"] is False
    _replay(Scripted(RECORDED), cache, lines, reproduce=False)  # stored: nothing to reproduce
    assert len(_entries(cache)) == 1
    system = Scripted(RECORDED, state={"paid": "twice"})
    replay = _replay(system, cache, lines)  # the stored state {"paid": True} is the recording's: reproduces
    assert (replay.cached, system.calls) == (True, 0)
    cache_state = {"paid": "twice"}
    _replay(Scripted(RECORDED, state=cache_state), ReplayCache(tmp_path / "other"), lines, reproduce=False)
    system = Scripted(RECORDED)
    replay = _replay(system, ReplayCache(tmp_path / "other"), lines)  # its stored state is not the recording's
    assert (replay.cached, system.calls) == (False, 1)


def test_a_faulted_replay_line_says_fault_and_a_control_line_control(tmp_path: Path) -> None:
    lines: list[dict[str, Any]] = []
    _replay(Scripted(RECORDED), None, lines)
    _replay(Scripted(RECORDED), None, lines, change=Change(result={"ok": False}), reproduce=False)
    assert [(line["kind"], line["change"]) for line in lines] == [("control", None),
                                                                  ("fault", lines[1]["change"])]
    assert lines[1]["change"]["result"] == {"ok": False}


def test_a_replay_past_the_timeout_is_recorded_and_then_stops_the_instance(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The line is appended (the replay is missing, with its reason) before the timeout goes on to the caller,
    which replaces the stuck instance."""
    from oloproof_nb._run import replays

    def stuck(*args: object, **kwargs: object) -> None:
        raise CaseTimeout(5)

    monkeypatch.setattr(replays, "replay_case", stuck)
    lines: list[dict[str, Any]] = []
    with pytest.raises(CaseTimeout):
        _replay(Scripted(RECORDED), ReplayCache(tmp_path / "replays"), lines)
    assert [(line["error"], line["trajectory"]) for line in lines] == [("timeout: exceeded case_timeout_s=5", None)]


def test_an_error_of_oloproof_while_replaying_stops_the_run_and_is_no_replay_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only what the system's own code raised is the replay's error (with its traceback); a bug of oloproof's
    (nothing marks it as the system's) is not recorded as if the system had failed."""
    from oloproof_nb._run import replays

    def bug(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in oloproof")

    lines: list[dict[str, Any]] = []
    raised = _replay(Scripted(ValueError("the system's own")), None, lines)
    assert raised.error == "ValueError: the system's own" and "ValueError" in lines[0]["traceback"]
    monkeypatch.setattr(replays, "replay_case", bug)
    with pytest.raises(RuntimeError, match="a bug in oloproof"):
        _replay(Scripted(RECORDED), None, lines)
    assert len(lines) == 1  # nothing appended for the bug


def test_a_divergence_the_system_raised_is_marked_diverged_even_when_carried(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception class that refuses attributes comes wrapped in ``SystemRaised``: the divergence it carries
    still marks the replay ``diverged`` (a replay that left the recorded path, not a crash)."""
    from oloproof_nb._run import replays

    def carried(*args: object, **kwargs: object) -> None:
        raise SystemRaised(ReplayDiverged("step 1: called pay, recorded look"), "Traceback: ...")

    monkeypatch.setattr(replays, "replay_case", carried)
    replay = _replay(Scripted(RECORDED), None, [])
    assert replay.diverged is True and replay.error is not None and "step 1" in replay.error
    direct = _replay(Scripted(ReplayDiverged("step 0: called pay, recorded look")), None, [])
    assert direct.diverged is True


def test_a_control_that_differs_at_a_kept_path_under_an_ignore_pattern_is_never_cached_nor_taken_from_the_cache(
        tmp_path: Path) -> None:
    """``at.*`` is ignored but ``at.old`` is judged by another check (``evaluators.state.pinned_paths``): a control
    whose state differs there does not reproduce the recording, so it is not stored, and a stored entry with that
    state is not used; one that differs only at ``at.new`` reproduces and is stored (by hand)."""
    recorded = {"paid": True, "at": {"old": 1, "new": 1}}
    reproduce = (RECORDED, recorded, ("at.*",), ("at.old",), {})

    def replay(system: Scripted, cache: ReplayCache, check: bool = True) -> Replay:
        return make_replay(system, _case(), RECORDED, 1, None,
                           record={"criterion": "recovers", "tool": "pay", "fault": "error"},
                           reproduce=reproduce if check else None, run_id="r1", system_version="v1",
                           code_fingerprint=FINGERPRINT, timeout_s=None, cache=cache,
                           append=[].append)  # type: ignore[arg-type]  # a record is a dict

    old_moved = {"paid": True, "at": {"old": 2, "new": 1}}
    cache = ReplayCache(tmp_path / "moved")
    replay(Scripted(RECORDED, state=old_moved), cache)
    assert _entries(cache) == []
    replay(Scripted(RECORDED, state={"paid": True, "at": {"old": 1, "new": 2}}), ReplayCache(tmp_path / "new"))
    assert len(_entries(ReplayCache(tmp_path / "new"))) == 1
    replay(Scripted(RECORDED, state=old_moved), cache, check=False)  # stored: nothing to reproduce
    assert len(_entries(cache)) == 1
    system = Scripted(RECORDED, state=recorded)
    assert (replay(system, cache).cached, system.calls) == (False, 1)


def test_a_replay_run_live_on_a_renewed_instance_is_stored_under_that_instances_own_key(tmp_path: Path) -> None:
    """After a replay of the case raised, the next runs on a fresh instance (``live_on``): its entry is keyed by
    what ``fingerprint_of`` gives for that instance (it was stored under the key of the instance that raised)."""
    cache, lines = ReplayCache(tmp_path / "replays"), cast(list[dict[str, Any]], [])
    fresh = Scripted(RECORDED)
    make_replay(Scripted(RuntimeError("never called")), _case(), RECORDED, 1, None,
                record={"criterion": "recovers", "tool": "pay", "fault": "error"},
                reproduce=(RECORDED, STATE, (), (), {}), run_id="r1", system_version="v1",
                code_fingerprint="a" * 64, timeout_s=None, cache=cache,
                append=lines.append,  # type: ignore[arg-type]  # a record is a dict
                live_on=lambda: fresh, fingerprint_of=lambda instance: "b" * 64 if instance is fresh else "a" * 64)
    assert fresh.calls == 1
    assert _replay(Scripted(RECORDED), cache, lines, fingerprint="b" * 64).cached  # the fresh instance's key
    assert not _replay(Scripted(RECORDED), cache, lines, fingerprint="a" * 64).cached


def test_a_replay_run_live_on_a_renewed_instance_with_no_key_of_its_own_is_not_stored(tmp_path: Path) -> None:
    """``fingerprint_of`` giving no key for the fresh instance: its replay is stored under no key (not under an
    empty fingerprint, nor the key of the instance that raised)."""
    cache, lines = ReplayCache(tmp_path / "replays"), cast(list[dict[str, Any]], [])
    fresh = Scripted(RECORDED)
    make_replay(Scripted(RuntimeError("never called")), _case(), RECORDED, 1, None,
                record={"criterion": "recovers", "tool": "pay", "fault": "error"},
                reproduce=(RECORDED, STATE, (), (), {}), run_id="r1", system_version="v1",
                code_fingerprint="a" * 64, timeout_s=None, cache=cache,
                append=lines.append,  # type: ignore[arg-type]  # a record is a dict
                live_on=lambda: fresh, fingerprint_of=lambda instance: None)
    assert fresh.calls == 1
    assert not [path for path in (tmp_path / "replays").rglob("*") if path.is_file()]
