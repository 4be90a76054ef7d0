"""compare_rows: the regression rule at its boundaries, and a pass^1 row over unequal paired epochs (moved from
test_compare.py with the code they test)."""

from __future__ import annotations

import math

import pandas as pd

from oloproof_nb._analysis.compare_rows import reduced_row, regression_verdict
from oloproof_nb._config.release import ReleaseConfig
from oloproof_nb._core.epochs import parse_reduce


def test_regression_rule_boundaries() -> None:
    assert regression_verdict(-0.02, 0.1, 0.02)[0] == "NO_REGRESSION"  # ci_low == −margin: no regression
    assert regression_verdict(math.nextafter(-0.02, -1), 0.1, 0.02)[0] == "INSUFFICIENT_EVIDENCE"
    assert regression_verdict(-0.3, -0.02, 0.02)[0] == "INSUFFICIENT_EVIDENCE"  # ci_high == −margin: not below
    assert regression_verdict(-0.3, math.nextafter(-0.02, -1), 0.02)[0] == "REGRESSION"
    assert regression_verdict(0.0, 0.0, 0.0)[0] == "NO_REGRESSION"


def test_pass_1_over_unequal_paired_epochs_is_not_the_mean() -> None:
    """With 2 paired epochs in case a and 1 in case b (an epoch lost with a stopped run), the mean over case runs
    weighs a twice: pass^1 over cases is (1/2 + 1)/2 = 0.75 for the candidate, the mean over runs 2/3. Not the mean,
    and fractional: ``reduce_not_paired`` (compared as the mean whenever k is 1)."""
    rows = pd.DataFrame({"criterion": "answer_matches", "case_id": ["a", "a", "b"], "cluster": ["a", "a", "b"],
                         "base": ["pass", "pass", "pass"],
                         "candidate": ["pass", "fail", "pass"]})
    notes: list[str] = []
    assert reduced_row({}, rows, parse_reduce("pass^1"), ReleaseConfig(), notes) == "reduce_not_paired"
    assert reduced_row({}, rows[rows["case_id"] == "a"], parse_reduce("pass^1"), ReleaseConfig(), []) == ""
