"""``_core/binomial.py``: the binomial intervals at a confidence near 1, against statsmodels and SciPy's
upper-tail quantiles (``beta.isf``, ``norm.isf``), never the module's own output."""

from __future__ import annotations

import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from oloproof_nb._core import binomial

GRID = [(k, n) for n in (2, 19, 100, 1000) for k in sorted({1, n // 3, n // 2, n - 2}) if 0 < k < n]


@pytest.mark.parametrize("confidence", [0.99999, 0.999999, 0.9999999])
@pytest.mark.parametrize(("k", "n"), GRID)
def test_the_upper_ends_hold_to_1e12_near_confidence_1(k: int, n: int, confidence: float) -> None:
    """The upper end from 1 − α/2 (rounded within 1e-16 of 1) was 2.5e-12 from statsmodels at 1 of 19, confidence
    0.999999 (Clopper–Pearson) and 6.9e-12 at 50 of 100, 0.9999999 (Wilson): the README's "to 1e-12" did not hold."""
    alpha = 1 - confidence
    assert binomial.clopper_pearson(k, n, confidence) == pytest.approx(
        proportion_confint(k, n, alpha=alpha, method="beta"), abs=1e-12, rel=0)
    assert binomial.clopper_pearson(k, n, confidence)[1] == pytest.approx(
        stats.beta.isf(alpha / 2, k + 1, n - k), abs=1e-12, rel=0)
    assert binomial.wilson(k, n, confidence) == pytest.approx(
        proportion_confint(k, n, alpha=alpha, method="wilson"), abs=1e-12, rel=0)
