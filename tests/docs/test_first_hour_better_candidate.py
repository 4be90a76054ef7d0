"""An analyst's first hour (two versions of the example desk, compared): the README's figures for a
candidate that is better, section 6a's *Is the candidate better?*.

The candidate is the example's desk with its defect 2 fixed, as a user edits it: it checks the result of
``issue_refund`` and escalates when it failed. Every figure is checked against a hand count or a formula computed
here from the frames (scipy-free: the Clopper–Pearson bound of an all-pass rate on n_min is (α/2)^(1/n_min)).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.examples import init_example

README = Path(__file__).resolve().parent.parent.parent / "README.md"

UNCHECKED = '''        rec.tool("issue_refund", self.sandbox.issue_refund, order_id=order_id)
        # defect 2: the refund's result is never checked
'''
CHECKED = '''        result = rec.tool("issue_refund", self.sandbox.issue_refund, order_id=order_id)
        if not result.get("ok"):
            rec.tool("escalate_to_human", self.sandbox.escalate_to_human, order_id=order_id,
                     reason="the refund did not go through")
            rec.say("The refund did not go through; a colleague will look at it.")
            return "escalated"
'''


def _floor3(x: float) -> float:
    return math.floor(x * 1000) / 1000


def _ceil3(x: float) -> float:
    return math.ceil(x * 1000) / 1000


def _signed(x: float) -> str:
    return f"{x:+.3f}".replace("-", "−")


@pytest.fixture(scope="module")
def comparison(tmp_path_factory: pytest.TempPathFactory) -> op.Comparison:
    root = tmp_path_factory.mktemp("u27")
    suite = init_example("stateful-agent", root / "demo")
    op.run(op.load_suite(suite), out=root / "v1", progress=False)
    desk = suite / "refund_desk.py"
    code = desk.read_text(encoding="utf-8")
    assert code.count(UNCHECKED) == 1 and code.count('version = "refund-desk-1.0"') == 1
    desk.write_text(code.replace(UNCHECKED, CHECKED).replace('"refund-desk-1.0"', '"refund-desk-2.0"'),
                    encoding="utf-8")
    op.run(op.load_suite(suite), out=root / "v2", progress=False)
    return op.compare(root / "v1", root / "v2")


def test_the_candidate_that_checks_the_refund_is_better_where_readme_says(comparison: op.Comparison) -> None:
    table = comparison.table.set_index("criterion")
    text = " ".join(README.read_text(encoding="utf-8").split())
    section = text[text.index("**Is the candidate better?**"):text.index("### 6b.")]
    assert comparison.verdict == "INSUFFICIENT_EVIDENCE"  # no IMPROVEMENT verdict: the margin rules out no drop

    recovers = table.loc["recovers_from_error_at_issue_refund"]
    assert (recovers["pass_to_fail"], recovers["fail_to_pass"], recovers["n"]) == (0, 37, 37)
    # every row gained: ci_low = 1 − √2·u, u = 1 − 0.025^(1/n_min) the bound of 0 rows changed the other way and
    # of the gain's shortfall, n_min = (Σm)²/Σm² over the 23 source clusters (14 of two rows, 9 of one)
    rows = comparison.verdicts
    sizes = rows[rows["criterion"] == "recovers_from_error_at_issue_refund"].groupby("cluster").size()
    assert sorted(sizes.value_counts().items()) == [(1, 9), (2, 14)]
    n_min = sizes.sum() ** 2 / (sizes**2).sum()
    assert recovers["ci_low"] == pytest.approx(1 - math.sqrt(2) * (1 - 0.025 ** (1 / n_min)), abs=1e-9)
    assert recovers["ci_low"] > 0 and recovers["ci_high"] == 1
    assert (f"`recovers_from_error_at_issue_refund` {_signed(recovers['difference'])} "
            f"[{_signed(_floor3(recovers['ci_low']))}, {_signed(_ceil3(recovers['ci_high']))}] (37 fail→pass)"
            in section)

    answers = table.loc["answer_matches"]
    assert (answers["pass_to_fail"], answers["fail_to_pass"], answers["n"]) == (0, 4, 47)
    assert answers["difference"] == pytest.approx(4 / 47)
    gained = comparison.flips[comparison.flips["criterion"] == "answer_matches"]
    assert set(gained["case_id"]) == {f"ord-02{i}{copy}" for i in (1, 2) for copy in ("", "~injected")}
    assert answers["ci_low"] < 0  # a gain of 4 rows in 2 clusters is inside the ±0.144 floor
    assert (f"`answer_matches` {_signed(answers['difference'])} [{_signed(_floor3(answers['ci_low']))}, "
            f"{_signed(_ceil3(answers['ci_high']))}] (4 fail→pass" in section)
    assert re.search(r"a pool of runs by `op\.load_runs` that holds a case twice is refused", section)
