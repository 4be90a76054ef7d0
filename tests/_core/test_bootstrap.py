"""The cluster bootstrap (``_core/bootstrap.py``): cases the tests of ``test_stats.py`` did not pin.

Expected values are hand counts and statsmodels' Clopper–Pearson, not the code's own output.
"""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from oloproof_nb._core.bootstrap import bca_ratio, cluster_bootstrap_from_sums


def test_the_lower_bound_never_exceeds_the_estimate_whatever_the_resamples():
    """5 clusters passing 0, 2, 1, 0, 3 of 4, 4, 3, 3, 3 rows: p̂ = 6/17 (hand count). Two resamples at seed 3 put
    the BCa lower quantile at 0.50, above p̂, and the all-pass cap (α/2)^(1/n_min) = 0.025^(1/4.45) ≈ 0.47 is above
    p̂ too: only the cap at p̂ keeps the interval around its estimate."""
    k, m = np.array([0, 2, 1, 0, 3]), np.array([4, 4, 3, 3, 3])
    assert bca_ratio(k, m, 0.95, 2, 3)[0] > 6 / 17  # the premise: the raw BCa end lies above the estimate
    iv = cluster_bootstrap_from_sums(k, m, 0.95, 2, 3)
    assert iv.method == "cluster_bootstrap"
    assert iv.low == 6 / 17 <= iv.estimate < iv.high


def test_one_resample_at_the_estimate_falls_back_to_clopper_pearson():
    """10 single-row clusters, 5 passing; the one resample at seed 1 draws 5 passes again, so both BCa ends are
    0.5 = p̂: a zero-width interval, given as Clopper–Pearson on n_min = 10 with 5 successes (statsmodels)."""
    k, m = np.array([1] * 5 + [0] * 5), np.ones(10, dtype=np.int64)
    assert bca_ratio(k, m, 0.95, 1, 1) == (0.5, 0.5)  # the premise
    iv = cluster_bootstrap_from_sums(k, m, 0.95, 1, 1)
    assert iv.method == "clopper_pearson" and iv.reason.startswith("zero-width cluster_bootstrap with 1 resamples")
    assert (iv.low, iv.high) == pytest.approx(proportion_confint(5, 10, alpha=0.05, method="beta"), abs=1e-12)
