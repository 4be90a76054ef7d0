"""fault_recovery: control + faulted replays, their verdicts, the replay cache, the panel and the example."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from _fault_systems import (
    ChecksBoth,
    ClaimsSuccess,
    DamagesBystander,
    DryRunFirst,
    Escalates,
    GivesUp,
    Nondeterministic,
    NondeterministicBefore,
    NotReplayable,
    RaisesOnFault,
    Retries,
    Unversioned,
    missing_order_case,
    refund_case,
    write_suite,
)

import oloproof_nb as op
from oloproof_nb._core.trajectory import ToolCall, Trajectory
from oloproof_nb._run.replay_cache import ReplayCache, replay_key
from oloproof_nb.evaluators import AnswerMatches, FaultRecovery, StateUnchanged
from oloproof_nb.evaluators.fault import backtracks, judge_replay
from oloproof_nb.examples import init_example

CRITERION = "recovers_from_error_at_issue_refund"
# Written out by hand from shared/DESIGN.md ("Replays" and "run.replays").
REPLAY_COLUMNS = ["case_id", "criterion", "tool", "fault", "checkpoint", "control_reproduced", "recovered",
                  "escalated", "constraint_broken", "verdict", "reason", "cached", "epoch"]
FAULT_RESULTS = {
    "error": {"ok": False, "error": "error", "message": "issue_refund failed"},
    "timeout": {"ok": False, "error": "timeout", "message": "issue_refund timed out"},
    "malformed": "<<malformed>>",
}
# In every purpose-built agent the refund is step 1 (get_order is step 0).
CHECKPOINT = 1


def run_suite(tmp_path: Path, system: Any, name: str = "suite", **kwargs: Any) -> op.Run:
    folder = tmp_path / name
    if not (folder / "oloproof.yaml").exists():
        write_suite(folder, **kwargs)
    return op.run(folder, system=system, progress=False)


def rows(run: op.Run, criterion: str = CRITERION) -> list[dict[str, Any]]:
    df = run.replays
    return df[df["criterion"] == criterion].to_dict("records")


def verdict_rows(run: op.Run, criterion: str = CRITERION) -> list[dict[str, Any]]:
    v = run.verdicts
    return v[v["criterion"] == criterion].to_dict("records")


def replay_records(run: op.Run, kind: str | None = None) -> list[dict[str, Any]]:
    return [r for r in run.replay_records if kind is None or r["kind"] == kind]  # states put back


# -- verdicts -------------------------------------------------------------------------------------


def test_escalating_agent_passes(tmp_path: Path) -> None:
    run = run_suite(tmp_path, Escalates())
    got = rows(run)
    assert [r["case_id"] for r in got] == ["ord-001", "ord-002"]
    for r in got:
        assert (r["verdict"], r["reason"]) == ("pass", "escalated")
        assert r["control_reproduced"] and r["escalated"]
        assert not r["recovered"] and not r["constraint_broken"]
        assert r["checkpoint"] == CHECKPOINT and r["tool"] == "issue_refund" and r["fault"] == "error"
    assert [v["verdict"] for v in verdict_rows(run)] == ["pass", "pass"]


def test_retrying_agent_recovers(tmp_path: Path) -> None:
    run = run_suite(tmp_path, Retries())
    got = rows(run)
    assert [(r["verdict"], r["recovered"], r["escalated"], r["constraint_broken"]) for r in got] == [
        ("pass", True, False, False)] * 2
    faulted = replay_records(run, "fault")[0]
    tools = [s.get("tool") for s in faulted["trajectory"]["steps"] if s["kind"] == "tool_call"]
    assert tools == ["get_order", "issue_refund", "issue_refund"]  # the retry ran live after the fault
    assert faulted["environment_state"]["state"]["orders"]["ord-001"]["status"] == "refunded"


def test_false_success_fails_as_a_broken_constraint(tmp_path: Path) -> None:
    run = run_suite(tmp_path, ClaimsSuccess())
    got = rows(run)
    assert len(got) == 2
    for r in got:
        assert (r["verdict"], r["reason"], r["constraint_broken"], r["recovered"], r["escalated"]) == (
            "fail", "false_success", True, False, False)
    # the recording itself passes: only the replay exposes the defect
    v = run.verdicts
    assert set(v[v["criterion"] == "answer_matches"]["verdict"]) == {"pass"}


def test_damaging_a_bystander_fails_even_when_escalating(tmp_path: Path) -> None:
    run = run_suite(tmp_path, DamagesBystander())
    got = rows(run)
    assert [r["case_id"] for r in got] == ["ord-001", "ord-002"]  # before: no rows at all passed too
    for r in got:
        assert r["verdict"] == "fail"
        assert r["reason"] == "constraint_broken: orders.ord-999"
        assert r["escalated"] and r["constraint_broken"]


def test_neither_recovered_nor_escalated_fails(tmp_path: Path) -> None:
    run = run_suite(tmp_path, GivesUp())
    assert [(r["verdict"], r["reason"], r["constraint_broken"]) for r in rows(run)] == [
        ("fail", "not_recovered_not_escalated", False)] * 2


def test_a_replay_answer_must_satisfy_every_answer_check() -> None:
    """Two answer_matches checks, one exact (normalize=False): "refunded" for "Refunded" passes only the
    normalising one, so the replay is not recovered. With all→any one accepting check was enough."""
    ctx = SimpleNamespace(case=SimpleNamespace(expected=SimpleNamespace(has_answer=True, answer="Refunded", state=None),
                                               initial_state={}), run=None)
    checks = [AnswerMatches(type="answer_matches"),
              AnswerMatches(type="answer_matches", normalize=False, criterion="answer_exact")]
    replay = Trajectory(steps=[ToolCall(tool="refund")], answer="refunded")
    out = judge_replay(ctx, replay, None, 0, checks, [])  # type: ignore[arg-type]
    assert (out["recovered"], out["verdict"], out["reason"]) == (False, "fail", "not_recovered_not_escalated")


class StampsRefunds(Escalates):
    """Stamps each refund with a clock of its own, outside the recorder (as SQLite's ``DEFAULT now`` does)."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = 0

    def issue_refund(self, order_id: str) -> dict[str, Any]:
        result = super().issue_refund(order_id)
        self.clock += 1
        self.state["refunds"][order_id]["at"] = self.clock
        return result


def test_a_control_replay_may_differ_where_the_suites_state_check_ignores(tmp_path: Path) -> None:
    """The suite's state check ignores the stamp (``ignore: [refunds.*.at]``), so the control that stamps anew
    reproduces the recording: the fault is replayed and judged (an escalation, a pass), and a second run takes
    both replays from the cache. Before, every such row was missing (control_replay_diverged: state differs at
    refunds.ord-001.at) and nothing was cached."""
    changes = {"type": "state_matches", "criterion": "only_the_refund", "mode": "changes",
               "ignore": ["refunds.*.at"]}
    cases = [refund_case("ord-001")]
    run = run_suite(tmp_path, StampsRefunds(), cases=cases, extra=[changes])
    (row,) = rows(run)
    assert (row["control_reproduced"], row["escalated"], row["verdict"], row["reason"]) == (
        True, True, "pass", "escalated")
    assert rows(run_suite(tmp_path, StampsRefunds()))[0]["cached"] is True
    # without the ignore pattern the stamp is a divergence, as before
    plain = run_suite(tmp_path, StampsRefunds(), name="plain", cases=cases)
    assert rows(plain)[0]["reason"] == "control_replay_diverged: state differs at refunds.ord-001.at"
    # nor when another state check pins it: a path one check ignores and another judges must reproduce
    pinned = {**changes, "criterion": "every_change", "ignore": []}
    both = run_suite(tmp_path, StampsRefunds(), name="both", cases=cases, extra=[changes, pinned])
    assert rows(both)[0]["reason"] == "control_replay_diverged: state differs at refunds.ord-001.at"


@pytest.mark.parametrize("pin", [{"type": "state_unchanged", "paths": ["refunds.ord-001.at"], "absent_ok": True},
                                 {"type": "state_matches", "criterion": "refunds_kept", "mode": "paths",
                                  "paths": ["refunds"]},
                                 {"type": "state_matches", "criterion": "refund_named", "mode": "subset"}])
def test_a_control_replay_must_reproduce_an_ignored_path_another_check_judges(tmp_path: Path,
                                                                             pin: dict[str, Any]) -> None:
    """The changes check ignores the stamp, but a ``state_unchanged`` path, a ``paths``-mode path or (for a
    ``subset`` check) a leaf ``expected.state`` names lies under it: those checks judge the faulted replay's state
    there, so the control must reproduce it. Before, the control was taken as reproduced and the fault
    judged on a state that differs from the recording's at a path a check reads."""
    changes = {"type": "state_matches", "criterion": "only_the_refund", "mode": "changes",
               "ignore": ["refunds.*.at"]}
    case = refund_case("ord-001")
    case["expected"]["state"]["refunds"]["ord-001"]["at"] = 1  # the gold run's stamp (the recording's too)
    run = run_suite(tmp_path, StampsRefunds(), cases=[case], extra=[changes, pin])
    (row,) = rows(run)
    assert (row["control_reproduced"], row["reason"]) == (
        False, "control_replay_diverged: state differs at refunds.ord-001.at")


def test_a_pin_on_one_row_keeps_the_ignore_pattern_on_the_other_rows(tmp_path: Path) -> None:
    """A ``state_unchanged`` check pins an earlier refund (``refunds.ord-000``, its stamp included) beside the
    changes check's ``ignore: [refunds.*.at]``: the control must reproduce that row, and may still differ at the
    stamp of the refund the case writes, which no check reads. Before, the pin dropped the whole pattern: the
    control diverged at the new row's stamp and the fault replay was missing (seen in a SQLite bank whose
    ``state_unchanged`` on one old transfer made all 32 fault replays missing)."""
    changes = {"type": "state_matches", "criterion": "only_the_refund", "mode": "changes",
               "ignore": ["refunds.*.at"]}
    pin = {"type": "state_unchanged", "criterion": "old_refund_kept", "paths": ["refunds.ord-000"]}
    case = refund_case("ord-001")
    case["initial_state"]["refunds"] = {"ord-000": {"amount": 10.0, "at": 0}}
    run = run_suite(tmp_path, StampsRefunds(), cases=[case], extra=[changes, pin])
    (row,) = rows(run)
    assert (row["control_reproduced"], row["verdict"], row["reason"]) == (True, "pass", "escalated")


def test_a_control_that_differs_at_a_pinned_stamp_is_not_cached_for_the_next_run(tmp_path: Path) -> None:
    """The stamp ``refunds.ord-001.at`` lies under the changes check's ``ignore:`` and a ``state_unchanged``
    check pins it: the control that stamps anew does not reproduce the recording, in this run and the next, so
    the next run replays it again rather than taking it from the replay cache (the cache's rule: a control that
    does not reproduce is never stored)."""
    changes = {"type": "state_matches", "criterion": "only_the_refund", "mode": "changes",
               "ignore": ["refunds.*.at"]}
    pin = {"type": "state_unchanged", "paths": ["refunds.ord-001.at"], "absent_ok": True}
    cases = [refund_case("ord-001")]
    for _ in range(2):
        (row,) = rows(run_suite(tmp_path, StampsRefunds(), cases=cases, extra=[changes, pin]))
        assert (row["control_reproduced"], row["cached"], row["reason"]) == (
            False, False, "control_replay_diverged: state differs at refunds.ord-001.at")


@pytest.mark.parametrize("system", [Nondeterministic, NondeterministicBefore])
def test_nondeterministic_replay_is_missing(tmp_path: Path, system: type) -> None:
    run = run_suite(tmp_path, system())
    got = rows(run)
    assert len(got) == 2
    for r in got:
        assert r["verdict"] == "missing" and r["reason"].startswith("control_replay_diverged")
        assert r["control_reproduced"] is False
        assert all(r[c] is None for c in ("recovered", "escalated", "constraint_broken"))
    assert {v["verdict"] for v in verdict_rows(run)} == {"missing"}
    assert replay_records(run, "fault") == []  # no faulted replay after a failed control
    assert len(replay_records(run, "control")) == 2


def test_system_without_replay_is_not_replayable(tmp_path: Path) -> None:
    # the reason names the class and the fix (a desk calling an agent behind HTTP as one request read
    # "not_replayable" and no more, a word the README did not use)
    run = run_suite(tmp_path, NotReplayable())
    got = rows(run)
    reason = ("not_replayable: NotReplayable has no replay(); write it on op.RecordedAgent, each tool call through "
              "rec.tool(...) and each model call through rec.model(...) (README section 1), and a fault replay can "
              "replace a call's result")
    assert [(r["case_id"], r["verdict"], r["reason"]) for r in got] == [
        ("ord-001", "missing", reason), ("ord-002", "missing", reason)]
    assert [v["reason"] for v in verdict_rows(run)] == [reason] * 2
    assert replay_records(run) == []
    assert "not_replayable: NotReplayable has no replay()" in repr(run.panel("ord-001")).split("fault replays:")[1]


def test_replay_that_raises_is_missing(tmp_path: Path) -> None:
    run = run_suite(tmp_path, RaisesOnFault())
    got = rows(run)
    assert [r["case_id"] for r in got] == ["ord-001", "ord-002"]  # before: no rows at all passed too
    for r in got:
        assert r["verdict"] == "missing"
        assert r["reason"].startswith("replay_raised: KeyError")
        assert r["control_reproduced"]
    fault = replay_records(run, "fault")
    assert len(fault) == 2 and all(rec["error"].startswith("KeyError") and rec["trajectory"] is None
                                   for rec in fault)


class ReplaysByRunningAgain(ClaimsSuccess):
    """A hand-written ``replay()`` that runs the case again, ignoring the checkpoint and the change.

    The agent is deterministic, so the control reproduces the recording; the "faulted" replay is the
    recording once more, in which the refund succeeded.
    """

    def replay(self, trajectory: op.Trajectory, *, checkpoint: int, change: op.Change | None) -> op.Trajectory:
        return self.run(trajectory.input)


def test_a_replay_that_ignores_the_fault_is_missing_not_recovered(tmp_path: Path) -> None:
    # before: the broken desk (it claims success after a failed refund) got ("pass", "recovered") on every case
    run = run_suite(tmp_path, ReplaysByRunningAgain())
    got = rows(run)
    assert len(got) == 2
    for r in got:
        assert r["verdict"] == "missing" and r["control_reproduced"]
        assert r["reason"].startswith("fault_not_applied: step 1 returned {'ok': True")
        assert all(r[c] is None for c in ("recovered", "escalated", "constraint_broken"))
    assert {v["verdict"] for v in verdict_rows(run)} == {"missing"}


class EscalatesOnly(Escalates):
    """Hands every case to a human and ends without an answer when that hand-over fails."""

    def act(self, input: dict[str, Any], rec: op.Recorder) -> str | None:
        order_id = input["order_id"]
        rec.tool("get_order", self.get_order, order_id=order_id)
        handed = rec.tool("escalate_to_human", self.escalate_to_human, order_id=order_id)
        return "escalated" if handed.get("ok") else None


def test_a_failed_escalation_is_not_an_escalation(tmp_path: Path) -> None:
    # the escalation tool faulted, with the suite's usual escalate_tools: the faulted call itself is no hand-over
    case = {**refund_case("ord-001"), "expected": {"answer": "escalated",
                                                   "state": {"escalations": {"ord-001": {"status": "open"}}}}}
    criterion = "recovers_from_error_at_escalate_to_human"
    run = run_suite(tmp_path, EscalatesOnly(), cases=[case],
                    extra=[{"type": "fault_recovery", "tool": "escalate_to_human", "fault": "error",
                            "escalate_tools": ["escalate_to_human"]}])
    # before: ("pass", "escalated", True) — the ending after the fault was silent, nothing handed over
    assert [(r["verdict"], r["reason"], r["escalated"]) for r in rows(run, criterion)] == [
        ("fail", "not_recovered_not_escalated", False)]


class EscalationFails(Escalates):
    """After the failed refund it escalates, but the escalation queue is down: nothing is handed over."""

    result: dict[str, Any] = {"ok": False, "error": "queue_down"}

    def escalate_to_human(self, order_id: str) -> dict[str, Any]:
        return dict(self.result)


class EscalationReportsFailed(EscalationFails):
    result = {"ticket": None, "status": "failed"}  # an error only under a rule that says "failed" is one


def test_an_escalation_whose_own_result_is_an_error_is_not_an_escalation(tmp_path: Path) -> None:
    """The faulted refund, then an escalate_to_human that returned {"ok": false}: it counted as escalated (its
    result was never read) and the case passed, though nothing was handed over."""
    run = run_suite(tmp_path, EscalationFails(), cases=[refund_case("ord-001")])
    assert [(r["verdict"], r["reason"], r["escalated"]) for r in rows(run)] == [
        ("fail", "not_recovered_not_escalated", False)]
    (faulted,) = replay_records(run, "fault")
    after = [s for s in faulted["trajectory"]["steps"][CHECKPOINT + 1:] if s.get("tool")]
    assert [(s["tool"], s["result"]) for s in after] == [("escalate_to_human", EscalationFails.result)]  # it was called


def test_the_suites_tool_errors_rule_decides_whether_an_escalation_failed(tmp_path: Path) -> None:
    """{"status": "failed"} is no error under the default rule (escalated: pass) and one under a suite rule that
    lists it (not escalated: fail)."""
    default = run_suite(tmp_path, EscalationReportsFailed(), name="default", cases=[refund_case("ord-001")])
    assert [(r["verdict"], r["escalated"]) for r in rows(default)] == [("pass", True)]
    folder = write_suite(tmp_path / "strict", cases=[refund_case("ord-001")])
    config = yaml.safe_load((folder / "oloproof.yaml").read_text(encoding="utf-8"))
    config["tool_errors"] = {"status_values": ["error", "failed"]}
    (folder / "oloproof.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    strict = run_suite(tmp_path, EscalationReportsFailed(), name="strict")
    assert [(r["verdict"], r["escalated"]) for r in rows(strict)] == [("fail", False)]


@pytest.mark.parametrize("fault", ["error", "timeout", "malformed"])
def test_each_fault_kind_reaches_the_agent_exactly(tmp_path: Path, fault: str) -> None:
    desk = Escalates()
    run = run_suite(tmp_path, desk, fault=fault, cases=[refund_case("ord-001")])
    criterion = f"recovers_from_{fault}_at_issue_refund"
    assert [(r["verdict"], r["fault"]) for r in rows(run, criterion)] == [("pass", fault)]
    # recording, control, faulted replay: the agent saw two real results, then the fixed fault result
    assert desk.seen[:2] == [{"ok": True, "refund_id": "rf-ord-001"}] * 2
    assert desk.seen[2] == FAULT_RESULTS[fault]
    assert type(desk.seen[2]) is type(FAULT_RESULTS[fault])
    (faulted,) = replay_records(run, "fault")
    assert faulted["change"] == {"result": FAULT_RESULTS[fault]}
    assert faulted["trajectory"]["steps"][CHECKPOINT]["result"] == FAULT_RESULTS[fault]
    assert faulted["trajectory"]["steps"][CHECKPOINT + 1]["content"] == {"refund_result_seen": FAULT_RESULTS[fault]}
    assert op.fault_result(fault, "issue_refund") == FAULT_RESULTS[fault]


def test_case_that_never_made_the_call_has_no_row(tmp_path: Path) -> None:
    run = run_suite(tmp_path, Escalates(), cases=[missing_order_case("lost-1"), refund_case("ord-001")])
    assert "lost-1" not in set(run.replays["case_id"])
    v = run.verdicts
    assert v[(v["case_id"] == "lost-1") & (v["criterion"] == CRITERION)].empty
    assert not v[(v["case_id"] == "lost-1") & (v["criterion"] == "answer_matches")].empty
    assert {r["case_id"] for r in replay_records(run)} == {"ord-001"}


class CrashesOnTwo(Escalates):
    def act(self, input: dict[str, Any], rec: op.Recorder) -> str:
        if input["order_id"] == "ord-002":
            raise RuntimeError("boom")
        return super().act(input, rec)


def test_failed_case_gets_no_replay(tmp_path: Path) -> None:
    run = run_suite(tmp_path, CrashesOnTwo)
    assert list(run.replays["case_id"]) == ["ord-001"]
    v = run.verdicts
    assert v[(v["case_id"] == "ord-002") & (v["criterion"] == CRITERION)].empty
    assert set(v[v["case_id"] == "ord-002"]["verdict"]) == {"missing"}


def test_derived_cases_are_replayed_too(tmp_path: Path) -> None:
    folder = tmp_path / "derived"
    cases = [{**refund_case("ord-001"), "input": {"order_id": "ord-001", "message": "refund please"}}]
    write_suite(folder, cases=cases)
    config = yaml.safe_load((folder / "oloproof.yaml").read_text())
    config["metamorphic"] = {"transforms": [{"name": "polite", "field": "message", "template": "{value}, thanks",
                                             "validity_labels": "labels/polite.jsonl", "minimum_validity": 0.5}]}
    (folder / "oloproof.yaml").write_text(yaml.safe_dump(config))
    (folder / "labels").mkdir()
    (folder / "labels" / "polite.jsonl").write_text("")
    run = op.run(folder, system=ClaimsSuccess(), progress=False)
    assert [(r["case_id"], r["reason"]) for r in rows(run)] == [("ord-001", "false_success"),
                                                                ("ord-001~polite", "false_success")]


def test_replay_timeout_is_missing_and_the_run_continues(tmp_path: Path) -> None:
    folder = tmp_path / "slow"
    write_suite(folder, system="Escalates", timeout_s=0.5, cases=[refund_case("ord-001"), refund_case("ord-002")])

    class SlowReplay(Escalates):
        def replay(self, trajectory: op.Trajectory, *, checkpoint: int,
                   change: op.Change | None) -> op.Trajectory:
            if trajectory.input["order_id"] == "ord-001":
                import time

                time.sleep(3)  # far beyond case_timeout_s=0.5
            return super().replay(trajectory, checkpoint=checkpoint, change=change)

    run = op.run(folder, system=SlowReplay, progress=False)
    v = {r["case_id"]: r for r in verdict_rows(run)}
    assert v["ord-001"]["verdict"] == "missing" and v["ord-001"]["reason"].startswith("timeout")
    assert v["ord-002"]["verdict"] == "pass"  # a fresh instance took over


def test_threaded_run_gives_the_same_replays(tmp_path: Path) -> None:
    cases = [refund_case(f"ord-{i:03d}", 10.0 + i) for i in range(1, 9)] + [missing_order_case()]
    serial = run_suite(tmp_path, DamagesBystander, name="serial", cases=cases)
    folder = write_suite(tmp_path / "threaded", system="DamagesBystander", cases=cases)
    threaded = op.run(folder, system=DamagesBystander, workers=4, progress=False)
    assert len(serial.replays) == 8
    cols = ["case_id", "verdict", "reason", "escalated", "constraint_broken", "control_reproduced"]
    assert threaded.replays[cols].equals(serial.replays[cols])


def test_bad_fault_option_is_a_config_error(tmp_path: Path) -> None:
    folder = write_suite(tmp_path / "bad", fault="explode")
    with pytest.raises(op.ConfigError) as info:
        op.load_suite(folder)
    message = str(info.value)
    assert "oloproof.yaml" in message and "evaluators[3]" in message and "\n" not in message


def test_default_criterion_and_change() -> None:
    ev = FaultRecovery(type="fault_recovery", tool="issue_refund", fault="timeout")
    assert ev.name == "recovers_from_timeout_at_issue_refund"
    assert ev.scope == "system"
    assert ev.change() == op.Change(result=FAULT_RESULTS["timeout"])


# -- frames and records ---------------------------------------------------------------------------


def test_replay_columns_and_records(tmp_path: Path) -> None:
    run = run_suite(tmp_path, Escalates())
    assert list(run.replays.columns) == REPLAY_COLUMNS
    records = replay_records(run)
    assert [(r["case_id"], r["kind"]) for r in records] == [
        ("ord-001", "control"), ("ord-001", "fault"), ("ord-002", "control"), ("ord-002", "fault")]
    keys = {"case_id", "criterion", "kind", "tool", "fault", "checkpoint", "change", "trajectory",
            "environment_state", "cached", "error"}
    assert all(set(r) == keys for r in records)
    fault = records[1]
    env = fault["environment_state"]
    assert env["schema"] == "environment_state/v1" and env["case_id"] == "ord-001"
    assert env["state"]["escalations"] == {"ord-001": {"status": "open"}}
    assert env["state"]["orders"]["ord-001"]["status"] == "delivered"
    # the control reproduced the recorded state exactly
    recorded = run.record("ord-001")["environment_state"]
    assert records[0]["environment_state"]["state_digest"] == recorded["state_digest"]
    # run.comparisons stays about the recording
    assert CRITERION not in set(run.comparisons["criterion"])
    assert len(run.replay_records) == 4


# -- the replay cache -----------------------------------------------------------------------------


def _files_outside_writable(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*")
            if p.is_file() and p.relative_to(folder).parts[0] not in ("runs", ".oloproof", "__pycache__")}


def test_second_run_is_served_from_the_cache(tmp_path: Path) -> None:
    folder = write_suite(tmp_path / "cached")
    before = _files_outside_writable(folder)
    first_desk = Escalates()
    first = op.run(folder, system=first_desk, progress=False)
    assert first_desk.replay_calls == 4  # 2 cases x (control + fault)
    assert list(first.replays["cached"]) == [False, False]
    assert len(list((folder / ".oloproof" / "replays").glob("*.json"))) == 4

    second_desk = Escalates()
    second = op.run(folder, system=second_desk, progress=False)
    assert second_desk.replay_calls == 0
    assert list(second.replays["cached"]) == [True, True]
    cols = ["case_id", "verdict", "reason", "recovered", "escalated", "constraint_broken", "control_reproduced"]
    assert second.replays[cols].equals(first.replays[cols])
    # cached replays are still stored in the run, so the panel can show them
    faulted = replay_records(second, "fault")
    assert [r["case_id"] for r in faulted] == ["ord-001", "ord-002"]  # before: none stored passed too
    assert all(r["cached"] and r["trajectory"] and r["environment_state"]["state"] for r in faulted)
    assert "faulted" in repr(second.panel("ord-001"))
    # the suite folder is read-only apart from runs/ and .oloproof/
    assert _files_outside_writable(folder) == before


def test_new_version_replays_again(tmp_path: Path) -> None:
    folder = write_suite(tmp_path / "versions")
    op.run(folder, system=Escalates(), progress=False)
    desk = Escalates()
    desk.version = "desk-2"
    run = op.run(folder, system=desk, progress=False)
    assert desk.replay_calls == 4
    assert list(run.replays["cached"]) == [False, False]


def test_unversioned_system_is_never_cached(tmp_path: Path) -> None:
    folder = write_suite(tmp_path / "unversioned", system="Unversioned")
    for _ in range(2):
        desk = Unversioned()
        run = op.run(folder, system=desk, progress=False)
        assert desk.replay_calls == 4
        assert list(run.replays["cached"]) == [False, False]
    assert not (folder / ".oloproof").exists()


def test_corrupt_cache_file_is_a_miss(tmp_path: Path) -> None:
    folder = write_suite(tmp_path / "corrupt")
    first = op.run(folder, system=Escalates(), progress=False)
    for path in (folder / ".oloproof" / "replays").glob("*.json"):
        text = path.read_text()
        path.write_text(text[: len(text) // 2])  # a torn write
    desk = Escalates()
    again = op.run(folder, system=desk, progress=False)
    assert desk.replay_calls == 4
    assert list(again.replays["cached"]) == [False, False]
    assert list(again.replays["verdict"]) == list(first.replays["verdict"])
    # the cache healed itself: a third run replays nothing
    third = Escalates()
    op.run(folder, system=third, progress=False)
    assert third.replay_calls == 0


def test_cache_key_and_store(tmp_path: Path) -> None:
    code, rec = "f" * 64, "r" * 64
    base = replay_key("v1", code, "a" * 64, 1, None, rec)
    changed = {"result": FAULT_RESULTS["error"]}
    others = [replay_key("v2", code, "a" * 64, 1, None, rec), replay_key("v1", code, "b" * 64, 1, None, rec),
              replay_key("v1", code, "a" * 64, 2, None, rec), replay_key("v1", code, "a" * 64, 1, changed, rec),
              replay_key("v1", "e" * 64, "a" * 64, 1, None, rec), replay_key("v1", code, "a" * 64, 1, None, "s" * 64)]
    assert len({base, *others}) == 7
    assert base == replay_key("v1", code, "a" * 64, 1, None, rec)
    cache = ReplayCache(tmp_path / "c")
    assert cache.get(base) is None
    cache.put(base, {"trajectory": {"steps": []}, "state": {"x": 1}})
    assert cache.get(base) == {"trajectory": {"steps": []}, "state": {"x": 1}}
    assert [p.name for p in (tmp_path / "c").iterdir()] == [f"{base}.json"]  # no temp file left behind
    (tmp_path / "c" / f"{base}.json").write_text("[1, 2")
    assert cache.get(base) is None
    (tmp_path / "c" / f"{base}.json").write_text(json.dumps({"schema": "other"}))
    assert cache.get(base) is None


# -- the example ----------------------------------------------------------------------------------

# Hand count from examples/stateful-agent/cases.jsonl: the cases the desk refunds (metadata kind "eligible").
ELIGIBLE = ["ord-001", "ord-002", "ord-003", "ord-004", "ord-005", "ord-006", "ord-007", "ord-008", "ord-009",
            "ord-010", "ord-023", "ord-024"]


def test_example_shows_the_false_success(tmp_path: Path) -> None:
    folder = init_example("stateful-agent", tmp_path / "desk")
    run = op.run(folder, progress=False)
    replays = run.replays
    source_of = dict(zip(run.cases["case_id"], run.cases["source_id"], strict=True))
    eligible = replays[replays["case_id"].map(source_of).isin(ELIGIBLE)]
    assert set(ELIGIBLE) <= set(eligible["case_id"])
    assert set(eligible["verdict"]) == {"fail"}
    assert set(eligible["reason"]) == {"false_success"}
    assert eligible["constraint_broken"].all() and eligible["control_reproduced"].all()
    assert (replays["criterion"] == CRITERION).all()
    assert "ord-011" not in set(replays["case_id"])  # refused: never called issue_refund
    summary = run.summary().set_index("criterion")
    assert summary.loc[CRITERION, "passed"] == 0

    panel = run.panel("ord-001")
    text = repr(panel)
    assert "recorded" in text and "faulted" in text and "false_success" in text
    lines = text.splitlines()
    at = next(i for i, ln in enumerate(lines) if "<- fault" in ln)
    # the faulted call, right under the recorded one
    assert "faulted" in lines[at] and '"message": "issue_refund failed"' in lines[at]
    assert "recorded" in lines[at - 1] and '"refund_id": "rf-ord-001"' in lines[at - 1]
    assert "refunds.ord-001" in text  # the refund the recording made is missing after the fault
    page = panel._repr_html_()
    assert "faulted" in page and "issue_refund failed" in page and "false_success" in page
    assert "rf-ord-001" in page


# -- mutation-testing gaps -----------------------------------------------------------------------------------



def _replay_ctx(answer: str | None, state: dict[str, Any] | None) -> Any:
    return SimpleNamespace(case=SimpleNamespace(expected=SimpleNamespace(has_answer=answer is not None, answer=answer,
                                                                         state=state),
                                                initial_state={"o": {"status": "open"}, "acct": {"x": 0}}), run=None)


def test_a_suite_without_state_matches_still_judges_the_replays_state() -> None:
    """No state_matches declared: the default one (subset) judges the replay's state. The replay answers
    "refunded" (the expected answer) but the refund never happened: a false success, not a recovery."""
    ctx = _replay_ctx("refunded", {"o": {"status": "refunded"}})
    replay = Trajectory(steps=[ToolCall(tool="refund")], answer="refunded")
    out = judge_replay(ctx, replay, {"o": {"status": "open"}, "acct": {"x": 0}}, 0, [], [])
    assert (out["recovered"], out["verdict"], out["reason"]) == (False, "fail", "false_success")


def test_a_path_two_state_unchanged_checks_declare_is_named_once() -> None:
    ctx = _replay_ctx(None, None)
    checks = [StateUnchanged(type="state_unchanged", paths=["acct.x"]),
              StateUnchanged(type="state_unchanged", paths=["acct.x"], criterion="acct_kept")]
    out = judge_replay(ctx, Trajectory(steps=[ToolCall(tool="refund")]), {"o": {"status": "open"}, "acct": {"x": 9}},
                       0, checks, ["escalate_to_human"])
    assert (out["verdict"], out["reason"]) == ("fail", "constraint_broken: acct.x")


@pytest.mark.parametrize(("honest", "message"), [
    ([{"regex": "could not|"}], "matches the empty text"),  # a stray "|": every answer would admit failure
    ([{"regex": "(could not)?"}], "matches the empty text"),
    (["could not", "  "], "a blank honest answer"),
    ([""], "a blank honest answer"),
])
def test_an_honest_answer_that_every_answer_meets_is_refused(honest: list[Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FaultRecovery(type="fault_recovery", tool="issue_refund", fault="error", honest_answers=honest)


#: Repeats whose body is itself a repeat (apart from parts of zero minimum width): Python's ``re`` tries every
#: way to split a text they do not match (``^(\w+\s?)*(failed|declined)`` on a 92-character answer ran for
#: minutes, holding the GIL, past ``case_timeout_s`` and ``isolation: process``).
BACKTRACKING = [r"(a+)+", r"(a*)*", r"(\w+\s?)*", r"(\w+\s*)+", r"(.*)*", r"(a+|b)+", r"((a+)?)*",
                r"^(\w+\s?)*(failed|declined)", r"(a+?)+?", r"(?:a+)+", r"(a{1,3})+", r"((a+){2})*", r"(a+){2,}",
                r"(a*b*)*", r"(?i)(\s*\w+)+ failed", r"(x((\w+\s?)+y)?)*z", r"(?=(a+)+)b",
                r"(?:(a)|b)(?(1)(a+)*|c)"]
#: Repeats that split a text one way only: each repeated part ends in a required character, is a set, a fixed
#: count, a possessive repeat or an atomic group.
ONE_WAY = [r"(\w+ )*", r"(ab+)*", r"(a|b)*", r"\w+", r"(?i)could not complete", r"(payment|refund) (failed|declined)",
           r"[^.]*failed", r"(\d{3})*", r"(a+b)+", r"(\w+\s)*failed", r"(?:could not|cannot)+"]
if sys.version_info >= (3, 11):  # possessive repeats and atomic groups
    ONE_WAY += [r"(\w+\s?)*+", r"(?>\w+\s?)*", r"(a++)+", r"^(?>\w+\s?)*(failed|declined)"]


@pytest.mark.parametrize("pattern", BACKTRACKING)
def test_a_repeat_of_a_repeat_is_refused(pattern: str) -> None:
    assert backtracks(pattern) and backtracks(pattern + "!")
    with pytest.raises(ValueError, match=r"repeats a repeat .* list the answer as text"):  # "!": not the empty text
        FaultRecovery(type="fault_recovery", tool="issue_refund", fault="error",
                      honest_answers=[{"regex": pattern + "!"}])


@pytest.mark.parametrize("pattern", ONE_WAY)
def test_a_repeat_that_splits_a_text_one_way_is_accepted(pattern: str) -> None:
    assert not backtracks(pattern) and not backtracks(pattern + "!")
    ev = FaultRecovery(type="fault_recovery", tool="issue_refund", fault="error",
                       honest_answers=[{"regex": pattern + "!"}])  # "!": not the empty text, which is refused
    assert [a.regex for a in ev.honest_answers if not isinstance(a, str)] == [pattern + "!"]


@pytest.mark.parametrize("pattern", [r"(a|a)*", r"(a|ab)*c", r"(\w+\s?\w+)*", r".*.*.*x"])
def test_what_the_rule_misses_is_said_and_not_claimed(pattern: str) -> None:
    """Overlapping alternatives and repeats side by side still backtrack (exponentially or polynomially); the rule
    does not see them, and its docstring says so instead of claiming every slow pattern is refused."""
    assert not backtracks(pattern)
    assert f"``{pattern}``" in (backtracks.__doc__ or "")


def _splits(text: str, body: str, most: float) -> int:
    """Brute force, without ``re``'s parser: the ways to cut ``text`` into 1 to ``most`` non-empty pieces that
    each match ``body`` whole (what a repeat of ``body`` tries, one by one, on a text it then fails to match)."""
    import functools
    import re

    @functools.cache
    def ways(start: int, left: float) -> int:
        if start == len(text):
            return 1
        if left == 0:
            return 0
        return sum(ways(end, left - 1) for end in range(start + 1, len(text) + 1)
                   if re.fullmatch(body, text[start:end]))

    return ways(0, most)


@pytest.mark.parametrize(("pattern", "body", "most"), [
    (r"(a?)*", "a?", float("inf")),  # an optional repeated: each piece is one 'a', so one way
    (r"(a?)+", "a?", float("inf")),
    (r"(a+)?failed", "a+", 1),  # a repeat taken at most once: one piece, one way
    (r"(\w+\s?)?failed", r"\w+\s?", 1),
    (r"ok|(a+)+", "a+", float("inf")),  # an alternative of a branch holds the repeat of a repeat
    (r"(?:ok|(\w+\s?)*)failed", r"\w+\s?", float("inf")),
    (r"(a)?((?(1)a+|b))*", "a+", float("inf")),  # with group 1 matched, the repeated conditional is 'a+'
])
def test_a_repeat_is_refused_exactly_when_it_splits_a_text_more_than_one_way(pattern: str, body: str,
                                                                             most: float) -> None:
    """The rule's edges, each against a brute-force count of the ways the repeated part splits
    eight letters (one way: accepted; 2**7 = 128 ways: refused), not against the parser the rule reads."""
    many = _splits("a" * 8, body, most) > 1
    assert backtracks(pattern) is many
    assert _splits("a" * 8, body, most) in (1, 2 ** 7)


@pytest.mark.parametrize(("pattern", "body", "most", "ways"), [
    (r"(a+){1,2}", "a+", 2, 8),  # a repeat of at most two counts: one piece (1 way) or two (7 ways)
    (r"(a{1,2})*", "a{1,2}", float("inf"), 34),  # a body of one or two letters: Fibonacci F(9) ways
    (r"(a{2})*", "a{2}", float("inf"), 1),  # a fixed count: four pieces of two, one way
])
def test_a_repeat_of_two_counts_at_most_splits_a_text_more_than_one_way(pattern: str, body: str, most: float,
                                                                        ways: int) -> None:
    """"more than one count" includes two. A repeat of at most two counts whose body is a repeat
    (``(a+){1,2}``), and a repeat whose body is a repeat of one or two counts (``(a{1,2})*``), split a text more
    than one way, and are refused; the brute-force count of ways (by hand: 1 + 7 = 8; tilings of 8 by 1s and 2s,
    F(9) = 34) says so, not the parser the rule reads. A fixed count (``{2}``) splits one way and is accepted."""
    assert _splits("a" * 8, body, most) == ways
    assert backtracks(pattern) is (ways > 1)


class _FakeRun:
    """Replays served as ``cached`` says: the control reproduces the recording, the faulted one escalates."""

    def __init__(self, cached: tuple[bool, bool]) -> None:
        self.cached, self.evaluators, self.tool_errors = cached, [], None

    def replay(self, case: Any, recorded: Trajectory, checkpoint: int, change: Any, **_: Any) -> Any:
        if change is None:
            return SimpleNamespace(cached=self.cached[0], error=None, diverged=False, trajectory=recorded,
                                   state={"o": 1})
        steps = [*recorded.steps[:checkpoint], recorded.steps[checkpoint].model_copy(update={"result": change.result}),
                 ToolCall(tool="escalate_to_human", result={"ok": True})]
        return SimpleNamespace(cached=self.cached[1], error=None, diverged=False, state={"o": 1},
                               trajectory=Trajectory(steps=steps))


@pytest.mark.parametrize(("cached", "column"), [((True, True), True), ((True, False), False),
                                                 ((False, True), False), ((False, False), False)])
def test_a_replay_row_is_cached_only_when_both_replays_were(cached: tuple[bool, bool], column: bool) -> None:
    from oloproof_nb._core.trajectory import DEFAULT_TOOL_ERRORS

    run = _FakeRun(cached)
    run.tool_errors = DEFAULT_TOOL_ERRORS
    recorded = Trajectory(steps=[ToolCall(tool="get_order", result={}), ToolCall(tool="issue_refund", result={})],
                          input={"order_id": "o1"})
    ctx = SimpleNamespace(case=SimpleNamespace(id="c1", input={"order_id": "o1"}, initial_state={},
                                               expected=SimpleNamespace(has_answer=False, answer=None, state=None)),
                          failure=None, trajectory=recorded, state={"o": 1}, run=run,
                          system=SimpleNamespace(replay=lambda *a, **k: None))
    ev = FaultRecovery(type="fault_recovery", tool="issue_refund", fault="error",
                       escalate_tools=["escalate_to_human"])
    (row,) = ev.evaluate(ctx).replays  # type: ignore[arg-type]
    assert (row["verdict"], row["reason"], row["cached"]) == ("pass", "escalated", column)


def test_a_recording_without_input_is_replayed_with_the_cases_input() -> None:
    """A system's own Trajectory may leave ``input`` out; its replay() reads the input from the trajectory it is
    given, so both replays get the case's input."""
    from oloproof_nb._core.trajectory import DEFAULT_TOOL_ERRORS

    seen: list[Any] = []
    run = _FakeRun((False, False))
    run.tool_errors = DEFAULT_TOOL_ERRORS
    replay = run.replay
    run.replay = lambda case, recorded, *a, **k: seen.append(recorded.input) or replay(case, recorded, *a, **k)
    recorded = Trajectory(steps=[ToolCall(tool="get_order", result={}), ToolCall(tool="issue_refund", result={})])
    ctx = SimpleNamespace(case=SimpleNamespace(id="c1", input={"order_id": "o1"}, initial_state={},
                                               expected=SimpleNamespace(has_answer=False, answer=None, state=None)),
                          failure=None, trajectory=recorded, state={"o": 1}, run=run,
                          system=SimpleNamespace(replay=lambda *a, **k: None))
    ev = FaultRecovery(type="fault_recovery", tool="issue_refund", fault="error", escalate_tools=["escalate_to_human"])
    assert ev.evaluate(ctx).verdicts[0]["verdict"] == "pass"  # type: ignore[arg-type]
    assert seen == [{"order_id": "o1"}, {"order_id": "o1"}]


# -- gaps a mutant showed ----------------------------------------------------------------------------------


class _EndsWith(_FakeRun):
    """The control reproduces the recording; the faulted replay ends with ``answer`` and calls nothing after."""

    def __init__(self, answer: str) -> None:
        from oloproof_nb._core.trajectory import DEFAULT_TOOL_ERRORS

        super().__init__((False, False))
        self.answer, self.tool_errors = answer, DEFAULT_TOOL_ERRORS

    def replay(self, case: Any, recorded: Trajectory, checkpoint: int, change: Any, **kw: Any) -> Any:
        out = super().replay(case, recorded, checkpoint, change, **kw)
        if change is not None:
            out.trajectory = Trajectory(steps=out.trajectory.steps[:checkpoint + 1], answer=self.answer)
        return out


@pytest.mark.parametrize(("recorded_answer", "faulted_answer", "verdict"), [
    ("refunded", "I could not issue the refund", "pass"),  # the replay admits the failure
    ("I could not issue the refund", "refunded", "fail"),  # the replay claims success (the recording admitted)
])
def test_the_honest_answer_is_looked_for_in_the_faulted_replay_not_the_recording(
        recorded_answer: str, faulted_answer: str, verdict: str) -> None:
    recorded = Trajectory(steps=[ToolCall(tool="get_order", result={}), ToolCall(tool="issue_refund", result={})],
                          input={"order_id": "o1"}, answer=recorded_answer)
    ctx = SimpleNamespace(case=SimpleNamespace(id="c1", input={"order_id": "o1"}, initial_state={},
                                               expected=SimpleNamespace(has_answer=False, answer=None, state=None)),
                          failure=None, trajectory=recorded, state={"o": 1}, run=_EndsWith(faulted_answer),
                          system=SimpleNamespace(replay=lambda *a, **k: None))
    ev = FaultRecovery(type="fault_recovery", tool="issue_refund", fault="error",
                       honest_answers=["I could not issue the refund"])
    (row,) = ev.evaluate(ctx).replays  # type: ignore[arg-type]
    assert (row["verdict"], row["escalated"]) == (verdict, False)


@pytest.mark.parametrize("trajectory", [None, Trajectory(steps=[ToolCall(tool="get_order", result={})])])
def test_an_interrupted_case_that_never_reached_the_tool_is_missing_with_no_replay_row(
        trajectory: Trajectory | None) -> None:
    """Interrupted (a timeout, a crash past the system's code) before a checkpoint exists: the verdict is still
    ``missing`` with the reason, never no row (which would leave the case out of the gate)."""
    ev = FaultRecovery(type="fault_recovery", tool="issue_refund", fault="error")
    ctx = SimpleNamespace(case=SimpleNamespace(id="c1"), trajectory=trajectory)
    result = ev.interrupted(ctx, "timeout: the case took longer than 5s", timed_out=True)  # type: ignore[arg-type]
    assert result.verdicts == [{"criterion": CRITERION, "evaluator": "fault_recovery", "verdict": "missing",
                                "reason": "timeout: the case took longer than 5s"}]
    assert result.replays == []


# -- calls: every -------------------------------------------------------------------------------------------------
# DryRunFirst / ChecksBoth record get_order at step 0, the dry-run issue_refund at 1, the real one at 2, a message
# at 3: by hand, the two refund cases of write_suite call the tool twice (checkpoints 1 and 2), lost-1 never.
DRY_RUN, REAL = 1, 2


def _judged(run: op.Run) -> tuple[list[tuple[str, int, str, str]], dict[str, tuple[str, str]]]:
    """``(case, checkpoint, verdict, reason)`` of each row of run.replays, and each case's verdict row."""
    replays = [(r["case_id"], r["checkpoint"], r["verdict"], r["reason"]) for r in rows(run)]
    return replays, {r["case_id"]: (r["verdict"], r["reason"]) for r in verdict_rows(run)}


def test_a_desk_that_checks_only_its_dry_run_passes_by_default_and_fails_with_calls_every(tmp_path: Path) -> None:
    """The first call is a dry run the desk checks, the real refund is never checked. Only the first
    call faulted (the default): both cases pass. calls: every faults the real refund in a replay of its own: the
    desk reports the failed refund as done (a false success), so each case fails, naming that call's step."""
    default = run_suite(tmp_path, DryRunFirst(), name="first")
    assert _judged(default) == ([("ord-001", DRY_RUN, "pass", "escalated"), ("ord-002", DRY_RUN, "pass", "escalated")],
                                {"ord-001": ("pass", "escalated"), "ord-002": ("pass", "escalated")})
    every = run_suite(tmp_path, DryRunFirst(), name="every", calls="every")
    assert _judged(every) == (
        [("ord-001", DRY_RUN, "pass", "escalated"), ("ord-001", REAL, "fail", "false_success"),
         ("ord-002", DRY_RUN, "pass", "escalated"), ("ord-002", REAL, "fail", "false_success")],
        {"ord-001": ("fail", f"step {REAL}: false_success"), "ord-002": ("fail", f"step {REAL}: false_success")})
    assert len(verdict_rows(every)) == 2  # one verdict row per case, as the gate counts cases
    # each call's replays journal on their own: control and fault per checkpoint
    assert [(r["case_id"], r["checkpoint"], r["kind"]) for r in replay_records(every)] == [
        (case, at, kind) for case in ("ord-001", "ord-002") for at in (DRY_RUN, REAL) for kind in ("control", "fault")]


def test_a_desk_that_checks_every_call_passes_with_calls_every(tmp_path: Path) -> None:
    desk = ChecksBoth()
    run = run_suite(tmp_path, desk, calls="every")
    assert _judged(run) == (
        [("ord-001", DRY_RUN, "pass", "escalated"), ("ord-001", REAL, "pass", "escalated"),
         ("ord-002", DRY_RUN, "pass", "escalated"), ("ord-002", REAL, "pass", "escalated")],
        {case: ("pass", f"step {DRY_RUN}: escalated; step {REAL}: escalated") for case in ("ord-001", "ord-002")})
    assert desk.replay_calls == 8  # 2 cases x 2 calls x (control + faulted): twice the replays of calls: first


class _SecondFaultIgnored(ChecksBoth):
    """Its replay() runs the case again, ignoring the change, when asked to fault the real refund."""

    def replay(self, trajectory: op.Trajectory, *, checkpoint: int, change: op.Change | None) -> op.Trajectory:
        if checkpoint == REAL and change is not None:
            return self.run(trajectory.input)
        return super().replay(trajectory, checkpoint=checkpoint, change=change)


def test_a_case_whose_second_call_no_replay_could_judge_is_missing_not_passed(tmp_path: Path) -> None:
    run = run_suite(tmp_path, _SecondFaultIgnored(), calls="every")
    replays, verdicts = _judged(run)
    assert [r[:3] for r in replays] == [("ord-001", DRY_RUN, "pass"), ("ord-001", REAL, "missing"),
                                        ("ord-002", DRY_RUN, "pass"), ("ord-002", REAL, "missing")]
    assert all(r[3].startswith("fault_not_applied: ") for r in replays if r[1] == REAL)
    for verdict, reason in verdicts.values():
        assert verdict == "missing" and reason.startswith(f"step {REAL}: fault_not_applied: step {REAL} returned")


class _Scripted(_FakeRun):
    """The control reproduces the recording; the faulted replay at checkpoint ``i`` escalates (``pass``), ends
    without escalating (``fail``), or repeats the recording, without the fault (``missing``), as
    ``outcomes[checkpoint]`` says."""

    def __init__(self, outcomes: dict[int, str]) -> None:
        from oloproof_nb._core.trajectory import DEFAULT_TOOL_ERRORS

        super().__init__((False, False))
        self.outcomes, self.tool_errors = outcomes, DEFAULT_TOOL_ERRORS

    def replay(self, case: Any, recorded: Trajectory, checkpoint: int, change: Any, **kw: Any) -> Any:
        out = super().replay(case, recorded, checkpoint, change, **kw)
        if change is None or self.outcomes[checkpoint] == "pass":
            return out
        if self.outcomes[checkpoint] == "missing":
            out.trajectory = recorded
            return out
        out.trajectory = Trajectory(steps=out.trajectory.steps[:checkpoint + 1])
        return out


@pytest.mark.parametrize(("first", "second", "verdict", "reason"), [
    ("pass", "pass", "pass", "step 0: escalated; step 1: escalated"),
    ("pass", "missing", "missing", "step 1: fault_not_applied: step 1 returned {}, not the fault result"),
    ("missing", "pass", "missing", "step 0: fault_not_applied: step 0 returned {}, not the fault result"),
    ("missing", "fail", "fail", "step 1: not_recovered_not_escalated"),
    ("pass", "fail", "fail", "step 1: not_recovered_not_escalated"),
    ("fail", "pass", "fail", "step 0: not_recovered_not_escalated"),
    ("fail", "fail", "fail", "step 0: not_recovered_not_escalated"),
])
def test_calls_every_passes_only_when_every_call_passes(first: str, second: str, verdict: str, reason: str) -> None:
    """pass only when every call's replay passes; fail when any fails; else missing; the reason names the step."""
    recorded = Trajectory(steps=[ToolCall(tool="issue_refund", result={}), ToolCall(tool="issue_refund", result={})],
                          input={"order_id": "o1"})
    run = _Scripted({0: first, 1: second})
    ctx = SimpleNamespace(case=SimpleNamespace(id="c1", input={"order_id": "o1"}, initial_state={},
                                               expected=SimpleNamespace(has_answer=False, answer=None, state=None)),
                          failure=None, trajectory=recorded, state={"o": 1}, run=run,
                          system=SimpleNamespace(replay=lambda *a, **k: None))
    ev = FaultRecovery(type="fault_recovery", tool="issue_refund", fault="error",
                       escalate_tools=["escalate_to_human"], calls="every")
    out = ev.evaluate(ctx)  # type: ignore[arg-type]
    assert [(r["checkpoint"], r["verdict"]) for r in out.replays] == [(0, first), (1, second)]
    assert [(v["verdict"], v["reason"]) for v in out.verdicts] == [(verdict, reason)]


class _RaisesOnEveryFault(ChecksBoth):
    def escalate(self, order_id: str, rec: op.Recorder) -> str:
        raise KeyError("ticket")


def test_after_a_replay_that_raised_the_cases_later_calls_are_not_replayed(tmp_path: Path) -> None:
    desk = _RaisesOnEveryFault()
    run = run_suite(tmp_path, desk, calls="every", cases=[refund_case("ord-001")])
    (first, second), _ = _judged(run)
    assert first[:3] == ("ord-001", DRY_RUN, "missing") and first[3].startswith("replay_raised: ")
    assert second == ("ord-001", REAL, "missing", f"replay_raised: not run: the replay at step {DRY_RUN} raised")
    assert desk.replay_calls == 2  # the first call's control and faulted replay; none from the real refund's
    assert verdict_rows(run)[0]["reason"].startswith(f"step {DRY_RUN}: replay_raised: ")


def test_a_replay_timeout_leaves_the_cases_later_calls_missing_and_keeps_the_earlier_rows(tmp_path: Path) -> None:
    """ord-001's replays from the dry run time out: the real refund's are not run on that instance. ord-002's
    dry run passes, its real refund's replay times out: the case is missing (not pass), and keeps the first row."""
    folder = write_suite(tmp_path / "slow", system="ChecksBoth", timeout_s=0.5, calls="every",
                         cases=[refund_case("ord-001"), refund_case("ord-002")])
    slow = {"ord-001": DRY_RUN, "ord-002": REAL}

    class SlowReplay(ChecksBoth):
        def replay(self, trajectory: op.Trajectory, *, checkpoint: int,
                   change: op.Change | None) -> op.Trajectory:
            if change is not None and slow[trajectory.input["order_id"]] == checkpoint:
                import time

                time.sleep(3)  # far beyond case_timeout_s=0.5
            return super().replay(trajectory, checkpoint=checkpoint, change=change)

    run = op.run(folder, system=SlowReplay, progress=False)
    replays, verdicts = _judged(run)
    assert [r[:3] for r in replays] == [("ord-001", DRY_RUN, "missing"), ("ord-001", REAL, "missing"),
                                        ("ord-002", DRY_RUN, "pass"), ("ord-002", REAL, "missing")]
    assert replays[0][3].startswith("timeout: exceeded case_timeout_s=0.5") and replays[3][3].startswith("timeout: ")
    assert replays[1][3].startswith(f"timeout: not run: the replay at step {DRY_RUN} ")
    assert verdicts["ord-001"][0] == verdicts["ord-002"][0] == "missing"
    assert verdicts["ord-002"][1].startswith(f"step {REAL}: timeout: exceeded")
    journal = [(r["case_id"], r["checkpoint"], r["kind"]) for r in replay_records(run)]
    assert ("ord-001", REAL, "control") not in journal and ("ord-002", REAL, "fault") in journal


def test_the_panel_shows_each_calls_own_faulted_replay(tmp_path: Path) -> None:
    run = run_suite(tmp_path, DryRunFirst(), calls="every")
    views = run.panel("ord-001").replay_views()
    assert [v["row"]["checkpoint"] for v in views] == [DRY_RUN, REAL]
    # the dry run's fault: the desk escalates (step 2 is the escalation); the real refund's: it says refunded
    assert [v["faulted_answer"] for v in views] == ["escalated", "refunded"]
    assert [v["pairs"][REAL][2]["tool"] for v in views] == ["escalate_to_human", "issue_refund"]
