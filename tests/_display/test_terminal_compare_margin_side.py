"""``oloproof compare``'s terminal table shows each interval end on the side of −margin its computed end is on."""

from __future__ import annotations

import pandas as pd

from oloproof_nb._display.terminal import compare_table_text


def _row(ci_low: float, margin: float) -> pd.DataFrame:
    return pd.DataFrame([{"criterion": "refund_ok", "base_rate": 0.9, "candidate_rate": 0.88, "difference": -0.02,
                          "ci_low": ci_low, "ci_high": 0.01, "n": 50, "pass_to_fail": 2, "fail_to_pass": 1,
                          "missing": 0, "verdict": "NO_REGRESSION", "margin": margin}])


def test_a_low_end_just_above_minus_margin_is_not_shown_below_it() -> None:
    """ci_low −0.04985 ≥ −0.0499 (the side NO_REGRESSION is read from); to three decimals, rounded down, it is
    −0.050, below −0.0499: the table shows −0.0499 (a hand rounding down at four decimals)."""
    text = compare_table_text(_row(-0.04985, 0.0499))
    cells = text.splitlines()[2].split()
    low = cells[cells.index("-0.020") + 1]  # diff, then ci_low
    assert low == "-0.0499"
    assert float(low) >= -0.0499


def test_a_low_end_far_from_minus_margin_keeps_three_decimals() -> None:
    cells = compare_table_text(_row(-0.04985, 0.2)).splitlines()[2].split()
    assert cells[cells.index("-0.020") + 1] == format(-0.050, ".3f")
