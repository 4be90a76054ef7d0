"""``judge_replay``'s ``recovery_unobserved``: the edges of the rule.

A report writer's fault replay whose delivery only an ``outcome_contract`` checks is ``missing``
(``recovery_unobserved``). These tests pin the edges the rule's own tests leave open, each by a hand count of the
replay rows (3 cases, 1 faulted replay each): a recovery a state check shows stays ``recovered``; a case that
promises no outcome in such a suite is judged by its answer as before; a replay that escalates after a failed write
passes even though its answer claims the delivery; and a row that is ``missing`` does not say ``recovered``
(``run.replays`` and the report's count), which the README's "is missing, not recovered" promises.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from _outcome_systems import report_writer

import oloproof_nb as op
from oloproof_nb._display.report import build_sections


def _run(root: Path, cases: list[dict[str, Any]]) -> op.Run:
    root.mkdir()
    (root / "writer.py").write_text(report_writer("writer-m54"), encoding="utf-8")
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    config = {"name": "m54", "system": "writer:Writer", "cases": "cases.jsonl",
              "evaluators": [{"type": "answer_matches"}, {"type": "state_matches"},
                             {"type": "fault_recovery", "tool": "write_report", "fault": "error",
                              "escalate_tools": ["escalate"]},
                             {"type": "outcome_contract"}]}
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return op.run(op.load_suite(root), out=root / "run", cache=False, progress=False)


def _case(n: int, *, outcome: bool = True, state: bool = False, **flags: bool) -> dict[str, Any]:
    case: dict[str, Any] = {"id": f"r{n}", "input": {"name": f"r{n}.csv", **flags}, "expected": {"answer": "done"}}
    if outcome:
        case["outcome"] = {"artifact_id": f"report-{n}", "locator": f"out/r{n}.csv"}
    if state:
        case["expected"]["state"] = {"files": {f"r{n}.csv": "total,3\n"}}
    return case


def _rows(run: op.Run) -> list[tuple[str, str, Any]]:
    replays = run.replays.sort_values("case_id")
    recovered = [None if pd.isna(v) else bool(v) for v in replays["recovered"]]
    return list(zip(replays["verdict"], replays["reason"].str.split(":").str[0], recovered, strict=True))


def test_a_recovery_a_state_check_shows_is_recovered_though_the_outcome_is_unobserved(tmp_path: Path) -> None:
    # by hand: the faulted write is replaced by the error, the retry writes r<n>.csv, the state check passes
    run = _run(tmp_path / "retries", [_case(n, state=True, retries=True) for n in range(3)])
    assert _rows(run) == [("pass", "recovered", True)] * 3


def test_a_case_that_promises_no_outcome_is_judged_by_its_answer_in_a_suite_with_an_outcome_check(
        tmp_path: Path) -> None:
    # r0 promises nothing: its answer is its whole outcome, as in a suite without an outcome check (the rule's 3rd row)
    run = _run(tmp_path / "mixed", [_case(0, outcome=False), _case(1), _case(2)])
    assert _rows(run) == [("pass", "recovered", True), ("missing", "recovery_unobserved", None),
                          ("missing", "recovery_unobserved", None)]


def test_an_escalation_whose_answer_also_claims_the_delivery_still_passes(tmp_path: Path) -> None:
    # the answer matches and the agent escalated: an escalation passes (the rule), by its escalation alone (the
    # delivery the answer claims is unobserved: "recovered and escalated" named a recovery nothing showed)
    run = _run(tmp_path / "both", [_case(n, escalates=True) for n in range(3)])
    assert _rows(run) == [("pass", "escalated", None)] * 3


def test_a_missing_recovery_is_not_counted_as_recovered(tmp_path: Path) -> None:
    run = _run(tmp_path / "claims", [_case(n) for n in range(3)])
    assert _rows(run) == [("missing", "recovery_unobserved", None)] * 3
    # the report's replay table counts them missing, and none recovered (it said 3 of each)
    [section] = [sec for sec in build_sections(run) if sec.key == "replays"]
    [table] = [raw for name, _, raw in section.tables if name == "replays"]
    assert table[["replays", "passed", "missing", "recovered"]].values.tolist() == [[3, 0, 3, 0]]
