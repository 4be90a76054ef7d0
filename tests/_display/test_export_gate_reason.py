"""A Gate with a reason exported carries the gate's verdict and reason on every row.

A gate of a run whose frame was set in the session is ``edited_frames`` (BLOCK, no release decision), while its
table's rows keep what the rows give (here PASS: 3 of 3 pass, exact lower bound 0.025^(1/3) = 0.292 by hand, at
least 0.25). ``op.export_table(gate, …)`` wrote those rows' PASS alone; now ``gate_verdict`` and ``gate_reason`` on
every row. A decided gate, and ``gate.table`` given itself, are written as before (no extra column).

A Comparison with a reason likewise: a candidate run of 20 of the base run's 21 cases is ``INSUFFICIENT_EVIDENCE``
(``cases_not_in_both_runs``) while its one row, 20 paired rows that all pass on both sides, is ``NO_REGRESSION`` at a
margin of 0.2 (the bound of 0 discordant rows in 20 is 1 − 0.025^(1/20) = 0.168 by hand, inside the margin). Its
export wrote that row's ``NO_REGRESSION`` alone; now ``comparison_verdict`` and ``comparison_reason`` on every row.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import oloproof_nb as op

CASES = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(3)]


def test_an_export_of_a_gate_with_a_reason_carries_it_on_every_row(make_suite: Callable[..., Path],
                                                                   tmp_path: Path) -> None:
    root = make_suite(CASES, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.25}})
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    decided = op.gate(run)
    assert (decided.verdict, decided.reason) == ("PASS", "")
    plain = json.loads(op.export_table(decided, tmp_path / "decided.json").read_text(encoding="utf-8"))
    assert "gate_reason" not in plain[0]
    run.verdicts = run.verdicts  # a frame set in the session: no release decision
    edited = op.gate(run)
    assert edited.verdict == "BLOCK" and edited.reason.startswith("edited_frames: run.verdicts set")
    rows = json.loads(op.export_table(edited, tmp_path / "edited.json").read_text(encoding="utf-8"))
    assert [(r["verdict"], r["gate_verdict"], r["gate_reason"]) for r in rows] == [("PASS", "BLOCK", edited.reason)]
    table_only = json.loads(op.export_table(edited.table, tmp_path / "table.json").read_text(encoding="utf-8"))
    assert list(table_only[0]) == list(edited.table.columns)


def test_an_export_of_a_comparison_with_a_reason_carries_it_on_every_row(make_suite: Callable[..., Path],
                                                                         tmp_path: Path) -> None:
    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(21)]
    release = {"criteria": {"answer_matches": 0.5}, "regression": {"margin": 0.2}}
    base_root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release=release)
    candidate_root = make_suite(cases[:20], evaluators=[{"type": "answer_matches"}], release=release)
    base = op.run(op.load_suite(base_root), out=tmp_path / "base", progress=False)
    candidate = op.run(op.load_suite(candidate_root), out=tmp_path / "candidate", progress=False)
    cmp = op.compare(base, candidate)
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE" and cmp.reason.startswith("cases_not_in_both_runs: 1 case run")
    assert list(cmp.table["verdict"]) == ["NO_REGRESSION"]
    rows = json.loads(op.export_table(cmp, tmp_path / "cmp.json").read_text(encoding="utf-8"))
    assert [(r["verdict"], r["comparison_verdict"], r["comparison_reason"]) for r in rows] == [
        ("NO_REGRESSION", "INSUFFICIENT_EVIDENCE", cmp.reason)]
    header = op.export_table(cmp, tmp_path / "cmp.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.endswith(",comparison_verdict,comparison_reason")
    decided = op.compare(base, op.run(op.load_suite(base_root), out=tmp_path / "again", progress=False))
    assert (decided.verdict, decided.reason) == ("NO_REGRESSION", "")
    plain = json.loads(op.export_table(decided, tmp_path / "decided.json").read_text(encoding="utf-8"))
    assert list(plain[0]) == list(decided.table.columns)
