"""A Gate with a reason exported carries the gate's verdict and reason on every row.

A gate of a run whose frame was set in the session is ``edited_frames`` (BLOCK, no release decision), while its
table's rows keep what the rows give (here PASS: 3 of 3 pass, exact lower bound 0.025^(1/3) = 0.292 by hand, at
least 0.25). ``op.export_table(gate, …)`` wrote those rows' PASS alone; now ``gate_verdict`` and ``gate_reason`` on
every row. A decided gate, and ``gate.table`` given itself, are written as before (no extra column).
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
