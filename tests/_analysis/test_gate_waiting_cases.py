"""The gate of a run whose system answers ``waiting`` on the cases it cannot do: only an outcome receipt makes a
waiting case neither a failure nor a success; every other criterion judges the world it left, so those cases count
as rows that did not pass. Expected numbers from scipy (Clopper–Pearson via ``scipy.stats.beta``) and a hand count."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scipy import stats

import oloproof_nb as op

#: Refunds the order and answers "refunded" when ``good``; otherwise declares a wait, does nothing and answers nothing.
SYSTEM = '''
class Desk:
    version = "desk-1"

    def reset(self, state):
        self.state = {key: dict(value) for key, value in state.items()}

    def snapshot(self):
        return {key: dict(value) for key, value in self.state.items()}

    def run(self, input):
        if not input["good"]:
            return {"steps": [], "answer": None, "status": "waiting"}
        self.state["orders"][input["order"]] = "refunded"
        steps = [{"kind": "tool_call", "tool": "refund", "args": {"order": input["order"]}, "result": {"ok": True}}]
        return {"steps": steps, "answer": "refunded", "status": "completed"}
'''


def _case(i: int, good: bool) -> dict[str, Any]:
    order = f"o{i:02d}"
    return {"id": f"c{i:02d}", "input": {"order": order, "good": good},
            "initial_state": {"orders": {order: "delivered"}},
            "expected": {"answer": "refunded", "state": {"orders": {order: "refunded"}}}}


def test_cases_answered_waiting_fail_the_state_and_answer_criteria(make_suite: Any, tmp_path: Path) -> None:
    """30 cases, 25 done and 5 answered ``waiting`` with nothing done. By hand: 30 rows per criterion, 25 passed,
    rate 25/30, Clopper–Pearson (0.653, 0.944) at 95%: the interval includes 0.8, so no PASS. Left out as a waiting
    receipt is, the five would leave 25 of 25 (lower bound 0.025^(1/25) = 0.863 ≥ 0.8) and the gate said PASS for
    an agent that gave up on a sixth of its cases."""
    cases = [_case(i, good=i >= 5) for i in range(30)]
    criteria = {"answer_matches": 0.8, "state_matches": 0.8}
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}, {"type": "state_matches", "mode": "subset"}],
                      system="sysmod:Desk", system_code=SYSTEM, release={"criteria": criteria})
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    assert (run.cases["status"] == "waiting").sum() == 5
    g = op.gate(run)
    low = stats.beta.ppf(0.025, 25, 30 - 25 + 1)
    high = stats.beta.ppf(0.975, 25 + 1, 30 - 25)
    assert (low, high) == pytest.approx((0.6528, 0.9436), abs=5e-4)
    assert 0.025 ** (1 / 25) > 0.8  # what dropping the five would have given
    table = g.table.set_index("criterion")
    for criterion in criteria:
        row = table.loc[criterion]
        assert (row["n"], row["passed"], row["missing"]) == (30, 25, 0)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=1e-12)
        assert row["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert g.verdict == "BLOCK"
    waiting = run.verdicts[run.verdicts["case_id"].isin([f"c{i:02d}" for i in range(5)])]
    assert sorted(waiting["verdict"]) == ["fail"] * 10
