"""``_analysis/gate_findings.py``: the finding "no case called tool …" is a ``fault_recovery`` criterion's alone."""

from __future__ import annotations

from pathlib import Path

from _vacuous_desk import suite

import oloproof_nb as op
from oloproof_nb._analysis.gate_findings import late_findings


def test_a_criterion_with_no_rows_that_is_no_fault_check_gets_no_fault_finding(tmp_path: Path) -> None:
    """The desk's cases give no expected.state, so ``state_matches`` judges none of them (no rows), and the suite
    has no ``fault_recovery`` check: by hand, nothing the gate finds late. Mutant: ``ev.type == "fault_recovery"
    or rows == 0`` told of every criterion without rows that "no case called tool ''", so no fault was replayed."""
    run = op.run(op.load_suite(suite(tmp_path / "s", [{"type": "answer_matches"},
                                                      {"type": "state_matches", "mode": "subset"}])),
                 out=tmp_path / "runs" / "r", progress=False)
    assert late_findings(run, {"answer_matches": 4, "state_matches": 0}) == {}
    assert op.gate(run).findings == ()
