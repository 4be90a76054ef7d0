"""Mutation round M38 on the gate's verdict rule: each test kills a mutant of ``_analysis/gate.py`` that the other
tests let live, and checks its numbers against a hand count or SciPy, never the gate's own output."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from scipy import stats

import oloproof_nb as op

SYSTEM = '''
class Desk:
    """Answers what the input says (a test decides each verdict)."""
    def __init__(self):
        self.state = {}
    def reset(self, state):
        self.state = dict(state)
    def snapshot(self):
        return dict(self.state)
    def run(self, input):
        return {"steps": [], "answer": input["say"], "status": "completed"}
'''


def cases_of(outcomes: list[bool], clusters: list[str]) -> list[dict]:
    return [{"id": f"c{i:03d}", "cluster": cl, "input": {"say": "yes" if ok else "no", "case": i},
             "expected": {"answer": "yes"}, "initial_state": {}}
            for i, (ok, cl) in enumerate(zip(outcomes, clusters, strict=True))]


def run_of(tmp: Path, cases: list[dict], **kwargs: object) -> op.Run:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "desk.py").write_text(SYSTEM)
    (tmp / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp / "oloproof.yaml").write_text(yaml.safe_dump({"name": "m38", "system": "desk:Desk",
                                                       "evaluators": [{"type": "answer_matches"}]}))
    return op.run(op.load_suite(tmp), out=tmp / "runs" / "r", progress=False, **kwargs)


def row(g: op.Gate, criterion: str = "answer_matches") -> pd.Series:
    return g.table.set_index("criterion").loc[criterion]


def test_a_threshold_of_one_is_gated_and_fails_on_one_failure(tmp_path: Path) -> None:
    """``threshold: 1.0`` (every case must pass) is a gated criterion like any other: 9 of 10 unclustered cases pass,
    so ci_high is the Clopper–Pearson upper end Beta⁻¹(0.975; 10, 1) = 0.975^(1/10) = 0.99747 < 1 (SciPy): FAIL and
    BLOCK. With all 10 passing, ci_high is 1 and ci_low 0.025^(1/10) < 1: INSUFFICIENT_EVIDENCE, never PASS. Kills
    a mutant that took a threshold of 1 for "not gated" (``REPORT_ONLY``)."""
    run = run_of(tmp_path / "a", cases_of([True] * 9 + [False], [f"k{i}" for i in range(10)]))
    g = op.gate(run, release={"criteria": {"answer_matches": 1.0}})
    r = row(g)
    assert r["ci_high"] == pytest.approx(stats.beta.ppf(0.975, 10, 1), abs=1e-12)
    assert r["ci_high"] == pytest.approx(0.975 ** 0.1, abs=1e-12) and r["ci_high"] < 1.0
    assert (r["threshold"], r["verdict"], r["reason"], g.verdict) == (1.0, "FAIL", "ci_high_below_threshold", "BLOCK")
    perfect = row(op.gate(run_of(tmp_path / "b", cases_of([True] * 10, [f"k{i}" for i in range(10)])),
                          release={"criteria": {"answer_matches": 1.0}}))
    assert perfect["ci_low"] == pytest.approx(0.025 ** 0.1, abs=1e-12) and perfect["ci_high"] == 1.0
    assert (perfect["verdict"], perfect["reason"]) == ("INSUFFICIENT_EVIDENCE", "interval_includes_threshold")


def test_a_pass_k_criterion_of_one_case_gets_its_interval(tmp_path: Path) -> None:
    """One case passing both of its 2 epochs, reduced with pass^2: one value of 1 in its own cluster, so
    Clopper–Pearson of 1 in 1, [(α/2)^(1/1), 1] = [0.025, 1] by hand: a PASS at 0.02, as the mean row of one case
    gets (``test_a_criterion_of_one_row_gets_its_interval``). Kills a mutant that gave a criterion of one reduced
    case no interval."""
    run = run_of(tmp_path, cases_of([True], ["k0"]), epochs=2)
    r = row(op.gate(run, release={"criteria": {"answer_matches": {"threshold": 0.02, "reduce": "pass^2"}}}))
    assert (r["n"], r["passed"], r["method"]) == (1, 1, "clopper_pearson")
    assert (r["ci_low"], r["ci_high"]) == (pytest.approx(0.025, abs=1e-15), 1.0)
    assert r["verdict"] == "PASS"
