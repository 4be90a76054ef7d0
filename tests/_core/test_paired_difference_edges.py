"""The paired difference: tests that kill the mutants the existing tests let live.

Each test names the mutant it kills; the expected numbers are hand counts or scipy/statsmodels, never the code's
own output.
"""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from oloproof_nb._core.bootstrap import bca_ratio
from oloproof_nb._core.paired import mcnemar_exact, paired_difference_from_sums


def test_a_cluster_of_no_rows_is_refused() -> None:
    """Mutant ``(m < 1)`` → ``(m < 0)``: a cluster of 0 rows (0 passes in both runs) is no cluster a run gives;
    it would count as a cluster (G = 2 instead of 1) and change the interval's method."""
    with pytest.raises(ValueError, match="rows ≥ 1"):
        paired_difference_from_sums([0, 1], [0, 0], [0, 2])


def test_a_bootstrap_interval_always_holds_the_estimate() -> None:
    """Mutant dropping ``low, high = min(low, est), max(high, est)``: at a low confidence the BCa bounds of
    these clusters both lie above the estimate, so ``low ≤ estimate ≤ high`` (the documented invariant of
    :class:`Difference`) needs the clamp."""
    b, k, m = [0, 2, 2, 2, 1, 1, 0, 0, 3], [1, 0, 2, 2, 0, 1, 3, 0, 1], [3, 2, 2, 3, 1, 2, 3, 1, 3]
    estimate = (sum(k) - sum(b)) / sum(m)  # hand count: (10 − 11)/20
    assert estimate == pytest.approx(-0.05)
    e, rows = np.array(k) - np.array(b), np.array(m)
    raw_low, _ = bca_ratio(e, rows, 0.02, 10_000, 0)
    assert raw_low > estimate  # the raw BCa interval leaves the estimate out
    d = paired_difference_from_sums(b, k, m, method="cluster_bootstrap", confidence=0.02)
    assert d.method == "cluster_bootstrap"
    assert d.low <= d.estimate <= d.high and d.low < d.high
    assert d.estimate == pytest.approx(estimate)


def test_one_cluster_is_the_estimate_plus_minus_the_clopper_pearson_bound_of_statsmodels() -> None:
    """G = 1 has no Bell–McCaffrey ν: d̂ ± u₀ with u₀ the upper Clopper–Pearson bound of 0 in n_min rows; one
    cluster of 4 rows has n_min = (Σm)²/Σm² = 16/16 = 1."""
    d = paired_difference_from_sums([3], [1], [4])
    u0 = proportion_confint(0, 1, alpha=0.05, method="beta")[1]
    assert d.method == "clopper_pearson" and d.n_clusters == 1
    assert (d.low, d.high) == pytest.approx((max(-1.0, -0.5 - u0), -0.5 + u0), abs=1e-12)


@pytest.mark.parametrize(("b", "c"), [(2, -1), (-1, 2), (0, -3)])
def test_mcnemar_refuses_a_negative_count_on_either_side(b: int, c: int) -> None:
    """Mutant dropping ``c < 0``: a negative second count gave P[X ≤ −1] = 0, a p-value of 0, not an error."""
    with pytest.raises(ValueError, match="whole numbers ≥ 0"):
        mcnemar_exact(b, c)


@pytest.mark.parametrize(("b", "k", "m"), [
    ([1000, 1000], [0, 0], [1000, 1000]),  # every row lost, in two clusters
    ([0] * 5, [3] * 5, [3] * 5),  # every row gained
    ([2, 4, 6], [1, 2, 3], [2, 4, 6]),  # half of every cluster's rows lost
])
def test_clusters_that_all_changed_at_one_rate_give_the_bootstrap_the_cluster_t_interval(
        b: list[int], k: list[int], m: list[int]) -> None:
    """Every resample of clusters that changed at one rate gives d̂: a BCa interval of zero width, which the
    ``method`` parameter replaces by the ``cluster_t`` interval, not by d̂ ± the Clopper–Pearson bound of no change
    (that is what no change gets: for 2 clusters of 1,000 rows that lost every row it gave [−1, −0.158], narrower
    than cluster_t's upper end +0.191)."""
    boot = paired_difference_from_sums(b, k, m, method="cluster_bootstrap", resamples=200)
    assert boot == paired_difference_from_sums(b, k, m, method="cluster_t")
    assert boot.method == "cluster_t" and boot.low < boot.high
