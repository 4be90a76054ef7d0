"""The run context of a case (``_run/context.py``): which artifact versions earlier cases were shown, and which file
the sandbox's reset left (the edges no other test pins)."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._core.case import case_from_mapping
from oloproof_nb._core.receipts import Evidence, OutcomeContract
from oloproof_nb._core.trajectory import Trajectory
from oloproof_nb._run.context import LiveCase, RunSettings, ShownArtifacts, located_file
from oloproof_nb._run.timeouts import CaseTimeout
from oloproof_nb.errors import OloproofError

NOW = datetime.now(timezone.utc)


def _evidence(modified_at: datetime | None, sha: str = "ab" * 32) -> Evidence:
    return Evidence(artifact_id="report", observed_at=NOW, modified_at=modified_at, sha256=sha, digest_kind="sha256",
                    evidence_source="system_observe")


def test_a_version_without_a_modification_time_is_never_shown_before() -> None:
    """No time to tell two versions apart: however often it is observed, it is no earlier case's artifact."""
    shown = ShownArtifacts()
    later = NOW + timedelta(hours=1)
    assert shown.shown_before(_evidence(None), later) is False
    assert shown.shown_before(_evidence(None), later) is False
    assert shown.entries(["report"]) == []  # and nothing was noted


def test_the_earliest_time_a_version_was_observed_is_kept() -> None:
    """Noted at 12:00:30 by this process, then seeded from another worker that saw it at 12:00:10: a case that
    started at 12:00:20 was shown it after an earlier case had been (the earlier time wins, whatever the order)."""
    # the test's own clock, not the module's: entries older than ShownArtifacts.KEEP are dropped, and NOW, taken
    # when the file was collected, was that old minutes into a whole run of the suite
    base = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(seconds=30)
    modified = base - timedelta(seconds=5)
    key = ("report", modified, "ab" * 32, "sha256")
    shown = ShownArtifacts()
    shown.seed([(key, base + timedelta(seconds=30))])
    shown.seed([(key, base + timedelta(seconds=10))])
    assert shown.entries(["report"]) == [(key, base + timedelta(seconds=10))]
    assert shown.shown_before(_evidence(modified), base + timedelta(seconds=20)) is True
    assert shown.shown_before(_evidence(modified), base + timedelta(seconds=5)) is False


def test_located_file_is_the_files_mtime_size_and_inode(tmp_path: Path) -> None:
    """The reference: ``os.stat`` of the locator under the suite folder; no file, or no locator: None."""
    settings = RunSettings(run_id="r", system_version=None, timeout_s=None, suite_root=tmp_path, evaluators=[])
    contract = OutcomeContract(artifact_id="report", locator="out/report.txt")
    assert located_file(contract, settings) is None
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.txt").write_text("v1\n", encoding="utf-8")
    st = os.stat(tmp_path / "out" / "report.txt")
    assert located_file(contract, settings) == (st.st_mtime_ns, st.st_size, st.st_ino)
    assert located_file(OutcomeContract(artifact_id="report"), settings) is None


def test_a_file_replaced_with_the_same_size_and_time_is_not_the_one_the_reset_left(tmp_path: Path) -> None:
    """The case wrote a new file (same size, its time set back to the old one, as a copy that keeps times does):
    another inode, so not ``untouched`` (it was judged stale as the reset's file)."""
    settings = RunSettings(run_id="r", system_version=None, timeout_s=None, suite_root=tmp_path, evaluators=[])
    contract = OutcomeContract(artifact_id="report", locator="report.txt")
    path = tmp_path / "report.txt"
    path.write_text("v1\n", encoding="utf-8")
    live = LiveCase(settings, system=None, case_started_at=NOW, reset_file=located_file(contract, settings))
    assert live.untouched_since_reset(contract) is True
    before = os.stat(path)
    new = tmp_path / "new.txt"
    new.write_text("v2\n", encoding="utf-8")
    os.utime(new, ns=(before.st_atime_ns, before.st_mtime_ns))
    keep = tmp_path / "keep.txt"
    os.link(path, keep)  # hold the old inode, so the new file cannot reuse its number
    os.replace(new, path)
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns) and after.st_ino != before.st_ino
    assert live.untouched_since_reset(contract) is False


def _settings_with(check: object, root: Path | None = None) -> RunSettings:
    return RunSettings(run_id="r", system_version=None, timeout_s=5.0, suite_root=root, evaluators=[],
                       checks={"checks:done": check})  # type: ignore[dict-item]


def test_a_check_imported_when_the_suite_loaded_is_the_one_called(tmp_path: Path) -> None:
    """``RunSettings.checks`` holds the function the suite loaded: it is called, not whatever the folder's
    ``checks.py`` holds by now (here one that would fail)."""
    (tmp_path / "checks.py").write_text("def done(*args):\n    return False\n", encoding="utf-8")
    live = LiveCase(_settings_with(lambda *args: (True, f"{len(args)} arguments"), tmp_path), None, NOW)
    call = live.call_check("checks:done", "case", {}, {}, "trajectory")
    assert (call.value, call.error) == ((True, "4 arguments"), None)


def test_a_check_that_calls_sys_exit_is_that_cases_error_not_the_runs_exit() -> None:
    """``sys.exit(3)`` inside a check would end the run's process: it is the case's error, with the traceback."""
    def leaves() -> None:
        raise SystemExit(3)

    call = LiveCase(_settings_with(lambda *args: leaves()), None, NOW).call_check("checks:done", 1, 2, 3, 4)
    assert call.value is None and call.error is not None and "SystemExit" in call.error
    assert call.traceback is not None and "raise SystemExit(3)" in call.traceback


def test_an_instance_whose_call_was_abandoned_is_not_called_again_in_that_case() -> None:
    """After a call of the case timed out (its call still running on the instance), an observe() asked of the
    same instance (a second outcome_contract check) is refused with the reason, never run beside it."""
    live = LiveCase(RunSettings(run_id="r", system_version=None, timeout_s=5.0, suite_root=None, evaluators=[]),
                    object(), datetime.now(timezone.utc))
    asked: list[str] = []
    assert live.call(lambda: asked.append("before")) is None
    live.abandon(CaseTimeout(0.5))
    live.abandon(CaseTimeout(9.0))  # the first timeout is the one named
    for _ in range(2):
        with pytest.raises(CaseTimeout, match=r"^timeout: not run: an earlier call of this case exceeded "
                                              r"case_timeout_s=0\.5 and may still be running on this system instance$"):
            live.call(lambda: asked.append("after"))
    assert asked == ["before"]


def test_the_abandoned_calls_timeout_is_written_as_the_timeout_itself_is() -> None:
    """The "not run" reason gives the limit as the timeout's own message does (``case_timeout_s=2``, not
    ``2.0``): one spelling of the setting in a case's verdicts."""
    live = LiveCase(RunSettings(run_id="r", system_version=None, timeout_s=2.0, suite_root=None, evaluators=[]),
                    object(), datetime.now(timezone.utc))
    assert str(CaseTimeout(2.0)) == "timeout: exceeded case_timeout_s=2"
    live.abandon(CaseTimeout(2.0))
    with pytest.raises(CaseTimeout, match=r"^timeout: not run: an earlier call of this case exceeded "
                                          r"case_timeout_s=2 and may"):
        live.call(lambda: None)


def test_a_case_longer_than_keep_still_finds_the_version_the_case_before_it_left(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Epoch 1 of a case writes its row (``clock_slack_s: 1``, as README §5 suggests for SQLite
    stamps) and is observed; epoch 2 starts 0.6 s after that write, writes nothing and is observed 130 s later,
    while a case of another artifact was observed in between (another worker). Entries were dropped when older
    than ``KEEP`` at any note, so epoch 2 found nothing and was ``verified`` on epoch 1's row."""
    t0 = datetime(2026, 7, 25, 14, tzinfo=timezone.utc)
    clock = [t0]
    monkeypatch.setattr("oloproof_nb._run.context.utc_now", lambda: clock[0])
    shown = ShownArtifacts()
    row = t0 - timedelta(seconds=0.5)
    assert shown.shown_before(_evidence(row), t0 - timedelta(seconds=10)) is False  # epoch 1: its own row
    epoch_2_started = t0 + timedelta(seconds=0.1)
    clock[0] = t0 + timedelta(seconds=125)
    other = Evidence(artifact_id="other", observed_at=clock[0], modified_at=clock[0], sha256="cd" * 32,
                     evidence_source="system_observe")
    assert shown.shown_before(other, clock[0] - timedelta(seconds=5)) is False
    clock[0] = t0 + timedelta(seconds=130)
    assert shown.shown_before(_evidence(row), epoch_2_started) is True


def _version(artifact_id: str) -> tuple[str, datetime, str, str]:
    return (artifact_id, datetime(2026, 7, 25, 13, tzinfo=timezone.utc), "ab" * 32, "sha256")


def test_only_versions_beyond_the_limit_and_noted_more_than_keep_ago_are_dropped_oldest_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """By hand counts over a small LIMIT: a young version is never dropped, however many are
    held; once more than LIMIT are held, the oldest of those noted more than KEEP ago go until LIMIT are left; one
    noted exactly KEEP ago is not more than KEEP ago; and a version noted again at an earlier time is dropped by
    that time, not by the later note's."""
    t0 = datetime(2026, 7, 25, 14, tzinfo=timezone.utc)
    clock = [t0]
    monkeypatch.setattr("oloproof_nb._run.context.utc_now", lambda: clock[0])
    keep, tick = ShownArtifacts.KEEP, timedelta(seconds=1)
    ids = [f"a{i}" for i in range(1, 6)]

    def held(shown: ShownArtifacts) -> dict[str, datetime]:
        return {key[0]: at for key, at in shown.entries(ids)}

    shown = ShownArtifacts()
    shown.LIMIT = 3
    shown.seed([(_version(a), t0) for a in ids[:3]])
    clock[0] = t0 + tick
    shown.seed([(_version("a4"), t0 + tick)])
    assert sorted(held(shown)) == ["a1", "a2", "a3", "a4"]  # 4 > LIMIT, but none is older than KEEP
    clock[0] = t0 + keep + tick  # a1, a2, a3 are now more than KEEP old; a4 exactly KEEP
    shown.seed([(_version("a5"), clock[0])])
    assert sorted(held(shown)) == ["a3", "a4", "a5"]  # 5 held: a1 and a2 go, and LIMIT = 3 are left

    edge = ShownArtifacts()
    edge.LIMIT = 1
    edge.seed([(_version("a1"), t0)])
    clock[0] = t0 + keep
    edge.seed([(_version("a2"), clock[0])])
    assert sorted(held(edge)) == ["a1", "a2"]  # a1 noted exactly KEEP ago: kept
    clock[0] = t0 + keep + timedelta(microseconds=1)
    edge.seed([(_version("a3"), clock[0])])
    assert sorted(held(edge)) == ["a2", "a3"]

    again = ShownArtifacts()
    again.LIMIT = 2
    clock[0] = t0
    again.seed([(_version("a1"), t0 + 10 * tick), (_version("a1"), t0)])  # the earliest time is kept
    clock[0] = t0 + 200 * tick
    again.seed([(_version("a2"), clock[0])])
    assert held(again) == {"a1": t0, "a2": clock[0]}  # the note at t0 + 10 s went; a1's note at t0 is its own


def test_a_replay_after_one_that_raised_is_not_run_when_no_fresh_instance_can_be_built() -> None:
    """The case's later replays would run on the instance the raise left: this one is ``missing`` saying why, and
    the case still asks for a fresh instance (the runner's own rebuild then stops the run, the case recorded)."""
    def unbuildable() -> Any:
        raise OloproofError("building the system raised RuntimeError: no licence left")

    settings = RunSettings(run_id="r", system_version=None, timeout_s=5, suite_root=None, evaluators=[])
    live = LiveCase(settings, object(), NOW, replay_raised=True, renew=unbuildable)
    replay = live.replay(case_from_mapping({"id": "c1", "input": {}}), Trajectory(steps=[]), 0, None,
                         record={"criterion": "c", "tool": "lookup", "fault": "error"}, reproduce=None)

    assert replay.error == ("not run: a replay of this case raised and no fresh system instance could be built for "
                            "the next: building the system raised RuntimeError: no licence left")
    assert replay.trajectory is None and live.replay_raised


def test_no_fresh_instance_is_built_again_for_the_later_replays_of_the_case() -> None:
    """A constructor that hangs cost every later replay of the case its ``case_timeout_s`` (four fault criteria after
    the one that raised: four builds, each a call left running); the first failure is the reason of them all."""
    builds: list[int] = []

    def unbuildable() -> Any:
        builds.append(1)
        raise OloproofError("building the system took longer than case_timeout_s=5")

    settings = RunSettings(run_id="r", system_version=None, timeout_s=5, suite_root=None, evaluators=[])
    live = LiveCase(settings, object(), NOW, replay_raised=True, renew=unbuildable)
    errors = [live.replay(case_from_mapping({"id": "c1", "input": {}}), Trajectory(steps=[]), 0, None,
                          record={"criterion": criterion, "tool": "lookup", "fault": "error"}, reproduce=None).error
              for criterion in ("a", "b", "c")]

    assert len(builds) == 1
    assert errors == ["not run: a replay of this case raised and no fresh system instance could be built for the "
                      "next: building the system took longer than case_timeout_s=5"] * 3
    assert live.replay_raised
def test_a_replay_that_raised_on_the_fresh_instance_is_its_own_raise() -> None:
    """After a replay that raised, the next runs on a fresh instance: if it raises there too, its reason is its
    own, never "after an earlier replay of this case raised on the one system instance given" (that instance is
    gone), and the replay after it gets a fresh instance again."""
    class Broken:  # every replay on it raises
        def replay(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("agent crashed")

    built: list[Broken] = []

    def renew() -> Broken:
        built.append(Broken())
        return built[-1]

    settings = RunSettings(run_id="r", system_version=None, timeout_s=5, suite_root=None, evaluators=[])
    live = LiveCase(settings, Broken(), NOW, replay_raised=True, renew=renew)
    case = case_from_mapping({"id": "c1", "input": {}})
    replay = live.replay(case, Trajectory(steps=[]), 0, None, record={"criterion": "c", "tool": "lookup",
                                                                      "fault": "error"}, reproduce=None)

    assert len(built) == 1 and live.system is built[0]
    assert replay.error == "RuntimeError: agent crashed" and live.replay_raised
    live.replay(case, Trajectory(steps=[]), 0, None, record={"criterion": "c", "tool": "lookup", "fault": "error"},
                reproduce=None)
    assert len(built) == 2


FAULTED_DESK = '''
import oloproof_nb as op


class Desk(op.RecordedAgent):
    version = "d1"

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def lookup(self, key):
        return {"ok": True, "key": key}

    def act(self, input, rec):
        rec.tool("lookup", self.lookup, key=input["cid"])
        self.state["done"] = input["cid"]
        return "ok"
'''


def test_a_fault_replayed_live_leaves_the_next_faults_of_its_checkpoint_to_the_cache(
        make_suite: Any, tmp_path: Path) -> None:
    """A fault added to the suite is replayed live at a checkpoint whose control the cache gave: the faults after it
    there are still taken from the cache (only a control that ran live makes them run live too)."""
    cases = [{"id": "c0", "input": {"cid": "c0"}, "initial_state": {}, "expected": {"answer": "ok"}}]
    faults = {name: {"type": "fault_recovery", "tool": "lookup", "fault": name} for name in ("error", "timeout",
                                                                                             "malformed")}
    first = make_suite(cases, system="sysmod:Desk", system_code=FAULTED_DESK, folder="suite",
                       evaluators=[faults["error"], faults["malformed"]])
    op.run(op.load_suite(first), out=tmp_path / "first", progress=False)
    (first / "oloproof.yaml").write_text((first / "oloproof.yaml").read_text(encoding="utf-8").replace(
        "- type: fault_recovery\n  tool: lookup\n  fault: malformed\n",
        "- type: fault_recovery\n  tool: lookup\n  fault: timeout\n"
        "- type: fault_recovery\n  tool: lookup\n  fault: malformed\n"), encoding="utf-8")
    again = op.run(op.load_suite(first), out=tmp_path / "again", progress=False)
    replays = again.replays
    assert replays[["fault", "cached"]].values.tolist() == [["error", True], ["timeout", False], ["malformed", True]]
