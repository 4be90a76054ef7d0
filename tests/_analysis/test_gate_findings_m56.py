"""Mutation round M56 on the gate's vacuous-check findings (``_analysis/gate_findings.py``): each expected text
written out by hand."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import yaml

import oloproof_nb as op

SYSTEM = '''
from oloproof_nb import RecordedAgent

class Desk(RecordedAgent):
    def __init__(self):
        super().__init__()
        self.state = {}
    def reset(self, state):
        self.state = {k: dict(v) for k, v in state.items()}
    def snapshot(self):
        return {k: dict(v) for k, v in self.state.items()}
    def lookup(self, order_id):
        return {"ok": True}
    def act(self, input, rec):
        rec.tool("lookup", self.lookup, order_id=input["order_id"])
        return "done"
'''

#: A state_unchanged path no case's state holds (``load_suite`` names it vacuous: ord-99 is never there).
TYPO = {"type": "state_unchanged", "criterion": "other_order_untouched", "paths": ["orders.ord-99"]}
ZERO = ("criterion other_order_untouched: threshold 0 passes whatever the rows say (a lower bound is never below 0); "
        "to report it without gating, leave it out of release.yaml")


def _run(tmp: Path) -> op.Run:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "desk.py").write_text(SYSTEM)
    cases = [{"id": f"ord-{i:03d}", "input": {"order_id": f"ord-{i:03d}"}, "expected": {"answer": "done"},
              "initial_state": {"orders": {f"ord-{i:03d}": {"status": "open"}, "ord-999": {"status": "open"}}}}
             for i in range(4)]
    (tmp / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp / "oloproof.yaml").write_text(yaml.safe_dump({"name": "v", "system": "desk:Desk",
                                                       "evaluators": [{"type": "answer_matches"}, TYPO]}))
    (tmp / "release.yaml").write_text(yaml.safe_dump({"criteria": {"answer_matches": 0.1}}))
    with pytest.warns(op.VacuousCheckWarning):
        suite = op.load_suite(tmp)
    return op.run(suite, out=tmp / "runs" / "r", progress=False)


def test_findings_list_the_suites_own_before_the_gates_for_one_criterion(tmp_path: Path) -> None:
    """Mutation M56 #57 (the order of ``by_criterion`` swapped) survived every gate test: no test had a criterion
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
