"""A fault replay whose delivery only an outcome contract checks is ``missing``, not ``recovered`` by its answer.

A report writer calls ``write_report`` and says ``done`` whatever the tool returned. Each case expects ``done`` and
promises the report through an ``outcome`` contract (no ``expected.state``). A replay observes no outcome, so the
faulted replay, which wrote no report, matched the expected answer and was ``recovered``: 40 of 40 and ``gate: PASS``
(exit 0) for an agent that claims a report it never wrote. Now such a row is ``missing`` (``recovery_unobserved``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from _outcome_systems import report_writer

import oloproof_nb as op

DIGEST = hashlib.sha256(b"total,3\n").hexdigest()


def _run(root: Path, *, escalates: bool = False, state: bool = False, outcome_check: bool = True,
         claims: bool = False) -> op.Run:
    root.mkdir()
    (root / "writer.py").write_text(report_writer("writer-r53"), encoding="utf-8")
    cases = []
    for n in range(3):
        case: dict[str, Any] = {"id": f"r{n}", "input": {"name": f"r{n}.csv", "escalates": escalates, "claims": claims},
                                "expected": {"answer": "done"},
                                "outcome": {"artifact_id": f"report-{n}", "locator": f"out/r{n}.csv",
                                            "expected_sha256": DIGEST}}
        if state:
            case["expected"]["state"] = {"files": {f"r{n}.csv": "total,3\n"}}
        cases.append(case)
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    evaluators: list[dict[str, Any]] = [{"type": "answer_matches"},
                                        {"type": "fault_recovery", "tool": "write_report", "fault": "error",
                                         "escalate_tools": ["escalate"]}]
    if outcome_check:
        evaluators.append({"type": "outcome_contract"})
    config = {"name": "r53", "system": "writer:Writer", "cases": "cases.jsonl", "evaluators": evaluators}
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    if outcome_check:
        suite = op.load_suite(root)
    else:  # the outcomes are left unjudged on purpose here
        with pytest.warns(UserWarning, match="has no outcome_contract evaluator"):
            suite = op.load_suite(root)
    return op.run(suite, out=root / "run", cache=False, progress=False)


def _rows(run: op.Run) -> list[tuple[str, str]]:
    replays = run.replays
    return list(zip(replays["verdict"], replays["reason"].str.split(":").str[0], strict=True))


def test_a_recovery_only_the_answer_shows_is_missing_where_an_outcome_contract_checks_the_delivery(
        tmp_path: Path) -> None:
    run = _run(tmp_path / "claims")
    assert (run.receipts["status"] == "verified").all()  # the case runs themselves wrote their reports
    # by hand: each faulted replay skipped write_report and answered "done" with no report written: 0 shown
    assert _rows(run) == [("missing", "recovery_unobserved")] * 3
    verdicts = run.verdicts[run.verdicts["criterion"] == "recovers_from_error_at_write_report"]
    assert verdicts["verdict"].tolist() == ["missing"] * 3


@pytest.mark.parametrize(("how", "want"), [
    ({"escalates": True}, [("pass", "escalated")] * 3),  # an escalation claims no delivery: it still passes
    ({"state": True}, [("fail", "false_success")] * 3),  # a state the write shows in judges the replay, as before
    ({"outcome_check": False}, [("pass", "recovered")] * 3),  # no outcome check: the answer is the case's outcome
])
def test_escalations_state_checks_and_suites_without_an_outcome_check_are_judged_as_before(
        tmp_path: Path, how: dict[str, bool], want: list[tuple[str, str]]) -> None:
    assert _rows(_run(tmp_path / "suite", **how)) == want


def test_a_replay_that_escalates_and_claims_the_delivery_passes_by_its_escalation_alone(tmp_path: Path) -> None:
    """Before, a replay that called ``escalate`` and still answered ``done`` passed as ``recovered and escalated``:
    right to pass (it escalated), but the recovery it names is the delivery nothing observed. Now ``escalated``,
    ``recovered`` empty; without an outcome check its answer is the outcome, and it stays ``recovered and
    escalated``."""
    run = _run(tmp_path / "claims", escalates=True, claims=True)
    assert _rows(run) == [("pass", "escalated")] * 3
    assert run.replays["recovered"].isna().all() and run.replays["escalated"].all()
    plain = _run(tmp_path / "plain", escalates=True, claims=True, outcome_check=False)
    assert _rows(plain) == [("pass", "recovered and escalated")] * 3
    assert plain.replays["recovered"].tolist() == [True] * 3


def test_a_suite_that_gained_an_outcome_check_judges_its_fault_criterion_otherwise(tmp_path: Path) -> None:
    """The same agent and cases, the candidate's suite with an ``outcome_contract`` check: its
    replays are ``missing`` where the base run's were ``recovered`` (3 flips by hand), a rule change, not the agent's.
    compare and pooling read the fault criterion as judged by the same checks; now it is ``check_changed``."""
    from oloproof_nb._analysis.run_checks import changed_checks

    base, candidate = _run(tmp_path / "base", outcome_check=False), _run(tmp_path / "cand")
    assert _rows(base) == [("pass", "recovered")] * 3 and _rows(candidate) == [("missing", "recovery_unobserved")] * 3
    assert changed_checks(base, candidate)["recovers_from_error_at_write_report"] == (
        "the answer, state and outcome checks its replays are judged with differ")
    assert "recovers_from_error_at_write_report" not in changed_checks(candidate, _run(tmp_path / "again"))
    table = op.compare(base, candidate).table.set_index("criterion")
    assert table.loc["recovers_from_error_at_write_report", "verdict"] != "REGRESSION"
