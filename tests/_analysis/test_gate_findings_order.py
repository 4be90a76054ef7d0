"""The gate's vacuous-check findings (``_analysis/gate_findings.py``): each expected text
written out by hand."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from _vacuous_desk import TYPO, suite

import oloproof_nb as op

ZERO = ("criterion other_order_untouched: threshold 0 passes whatever the rows say (a lower bound is never below 0); "
        "to report it without gating, leave it out of release.yaml")


def _run(tmp: Path) -> op.Run:
    with pytest.warns(op.VacuousCheckWarning):
        loaded = op.load_suite(suite(tmp, [{"type": "answer_matches"}, TYPO]))
    return op.run(loaded, out=tmp / "runs" / "r", progress=False)


def test_findings_list_the_suites_own_before_the_gates_for_one_criterion(tmp_path: Path) -> None:
    """A mutant (the order of ``by_criterion`` swapped) passed every other gate test: no test had a criterion
    with both a finding ``load_suite`` made (kept in the manifest) and one the gate makes (a threshold of 0).
    :attr:`Gate.findings` lists them in the run's order, the manifest's first (as ``by_criterion`` says)."""
    run = _run(tmp_path / "s")
    stored = list(run.manifest.suite_config.vacuous["other_order_untouched"])
    assert len(stored) == 1 and "'orders.ord-99'" in stored[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = op.gate(run, release={"criteria": {"answer_matches": 0.1, "other_order_untouched": 0}})
    assert [str(w.message) for w in caught if issubclass(w.category, op.VacuousCheckWarning)] == [ZERO]
    assert g.findings == (stored[0], ZERO)
    row = g.table.set_index("criterion").loc["other_order_untouched"]
    assert (row["verdict"], bool(row["vacuous"])) == ("PASS", True)
    assert row["reason"] == f"ci_low_at_or_above_threshold; {ZERO}"  # the gate's own finding, after its code
