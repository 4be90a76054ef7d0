"""The gate: edges the other tests do not pin, each expected number from scipy or a hand
count."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scipy import stats

import oloproof_nb as op

#: Answers "ok" when ``good``, "bad" otherwise; raises (the case ends in ``error``) on ``boom``.
SYSTEM = '''
class Answers:
    version = "answers-1"

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        if input["boom"]:
            raise RuntimeError("boom")
        steps = [{"kind": "message", "role": "assistant", "content": "done"}]
        return {"steps": steps, "answer": "ok" if input["good"] else "bad", "status": "completed"}
'''


def _case(i: int, good: bool, boom: bool = False) -> dict[str, Any]:
    return {"id": f"c{i:02d}", "input": {"i": i, "good": good, "boom": boom}, "initial_state": {},
            "expected": {"answer": "ok"}}


def test_missing_rows_count_once_in_an_unclustered_interval(make_suite: Any, tmp_path: Path) -> None:
    """12 cases, each its own cluster: 8 answer right, 2 wrong, 2 raise (their rows ``missing``). By hand n = 12
    rows, 8 passed, 2 missing, so the rate is 8/12 and the interval is Clopper–Pearson of 8 of 12 (scipy); a
    missing row is one row that did not pass, not a row counted twice (8 of 14 would read 0.571)."""
    cases = [_case(i, good=i < 8) for i in range(10)] + [_case(i, good=True, boom=True) for i in (10, 11)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Answers", system_code=SYSTEM,
                      release={"criteria": {"answer_matches": 0.3}})
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    g = op.gate(run)
    row = g.table.set_index("criterion").loc["answer_matches"]
    assert not g.clustered
    assert (row["n"], row["passed"], row["missing"], row["method"]) == (12, 8, 2, "clopper_pearson")
    assert row["rate"] == 8 / 12
    exact = stats.binomtest(8, 12).proportion_ci(confidence_level=0.95, method="exact")
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((exact.low, exact.high), abs=1e-12)
    assert row["verdict"] == "PASS"  # 0.349 ≥ 0.3
    # the slice table takes the same interval on the same rows: the 10 completed cases have 0 tool calls (bin <1),
    # the 2 that raised recorded no trajectory (bin n/a)
    table = op.slice_table(run, "tool_calls:1").set_index("bin")
    done = stats.binomtest(8, 10).proportion_ci(confidence_level=0.95, method="exact")
    assert (table.loc["<1", "support"], table.loc["<1", "passed"]) == (10, 8)
    assert (table.loc["<1", "ci_low"], table.loc["<1", "ci_high"]) == pytest.approx((done.low, done.high), abs=1e-12)
    na = stats.binomtest(0, 2).proportion_ci(confidence_level=0.95, method="exact")
    assert (table.loc["n/a", "support"], table.loc["n/a", "passed"]) == (2, 0)
    assert (table.loc["n/a", "ci_low"], table.loc["n/a", "ci_high"]) == pytest.approx((na.low, na.high), abs=1e-12)
