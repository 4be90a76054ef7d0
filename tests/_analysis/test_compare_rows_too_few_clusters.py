"""Compare's ``too_few_clusters`` reason: its numbers and the below-margin
clause, at the boundary the regression rule draws (``REGRESSION`` only when ci_high < −margin, strictly)."""

from __future__ import annotations

import pytest

from oloproof_nb._analysis.compare_rows import decide, regression_verdict
from oloproof_nb._config.release import parse_release

CFG = parse_release({"allow_approximate_methods": True, "min_clusters": 20, "regression": {"margin": 0.25}})
FIRST = "too_few_clusters: its rows fall in 6 clusters, min_clusters is 20"


def _row(ci_low: float, ci_high: float, n_clusters: int = 6) -> dict[str, float]:
    return {"n": 30, "missing": 0, "n_clusters": n_clusters, "ci_low": ci_low, "ci_high": ci_high}


@pytest.mark.parametrize(("ci_low", "ci_high", "below"), [
    (-0.9, -0.5, True),       # all of it below −0.25
    (-0.9, -0.25, False),     # reaches −margin itself: the rule reads it as including −margin, not below
    (-0.9, -0.125, False),    # below 0, above −margin: no loss beyond the margin to speak of
    (-0.1, 0.1, False),
])
def test_the_clause_is_said_exactly_when_the_rule_would_say_regression(ci_low: float, ci_high: float,
                                                                       below: bool) -> None:
    verdict, why = decide(_row(ci_low, ci_high), CFG, clustered=True)
    assert verdict == "INSUFFICIENT_EVIDENCE"
    assert why.split(";")[0] == FIRST
    assert ("its interval lies below −margin" in why) is below
    assert (regression_verdict(ci_low, ci_high, 0.25)[0] == "REGRESSION") is below  # the rule it speaks for


def test_min_clusters_clusters_are_enough() -> None:
    """20 clusters of min_clusters 20: decided by the rule (−0.9 to −0.5 below −0.25: REGRESSION)."""
    assert decide(_row(-0.9, -0.5, n_clusters=20), CFG, clustered=True) == ("REGRESSION", "ci_high_below_minus_margin")
    assert decide(_row(-0.9, -0.5, n_clusters=19), CFG, clustered=True)[1].startswith(
        "too_few_clusters: its rows fall in 19 clusters, min_clusters is 20; its interval lies below −margin")
