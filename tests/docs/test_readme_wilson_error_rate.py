"""The README's figures on how often the ``wilson`` lower bound lies above the true rate (section 6, the method
table), counted exactly from binomial sums with scipy's Wilson interval (``binomtest(...).proportion_ci``, not the
code), and the gate's own ``wilson`` bound checked equal to it.

For n independent cases and lower bounds L_0 ≤ L_1 ≤ … ≤ L_n, the bound is above a rate p exactly when the number
of passes X has L_X > p. As p rises to L_k, that event is X ≥ k, so the highest such probability over all p is
the largest P(X ≥ k | p = L_k) over k (a supremum, approached from below). Clopper–Pearson's L_k solves
P(X ≥ k | p = L_k) = 2.5%; Wilson's does not.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy import stats

from oloproof_nb._core.stats import rate_interval_from_sums

README = Path(__file__).resolve().parents[2] / "README.md"


def _wilson_low(k: int, n: int) -> float:
    return float(stats.binomtest(k, n).proportion_ci(0.95, method="wilson").low)


def _worst_miss(n: int, floor: float = 0.0) -> tuple[float, float]:
    """The highest probability, over true rates above ``floor``, that the 95% Wilson lower bound of n cases is above
    the rate, and the rate where it is reached."""
    return max((float(stats.binom.sf(k - 1, n, low)), low)
               for k in range(1, n + 1) if (low := _wilson_low(k, n)) > floor)


def test_the_wilson_misses_the_readme_gives_are_exact_binomial_sums() -> None:
    text = " ".join(README.read_text(encoding="utf-8").split())
    high20, rate20 = _worst_miss(20, 0.5)
    high100, _ = _worst_miss(100, 0.5)
    low20, near20 = _worst_miss(20)
    assert (f"up to {high20:.2%} of the time over 20 cases (at a rate of {rate20:.3f}) and {high100:.2%} over 100 "
            f"where the rate is 0.5 or more, and up to {low20:.1%} at rates near 1/n ({near20:.4f} over 20 cases, "
            "cleared by one pass)") in text
    assert high20 > 0.025 and high100 > 0.025  # above the nominal 2.5% a side, where gates set thresholds


@pytest.mark.parametrize("n", [20, 100])
def test_clopper_pearson_misses_at_most_the_nominal_rate_and_the_gates_wilson_is_scipys(n: int) -> None:
    for k in range(1, n + 1):
        low = float(stats.beta.ppf(0.025, k, n - k + 1))  # Clopper–Pearson's lower bound, by scipy
        assert stats.binom.sf(k - 1, n, low) == pytest.approx(0.025, abs=1e-9)
        gate_low = rate_interval_from_sums([k], [n], method="wilson").low
        assert gate_low == pytest.approx(_wilson_low(k, n), abs=1e-12)
