"""Input checks and edge cases of oloproof_nb._core.epochs the other tests did not pin (found by mutation testing).

Each expected value is a hand count or a textbook quantity, not the code's own output.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import oloproof_nb as op
from oloproof_nb._core.epochs import fractional_interval, parse_reduce, value_denominator


@pytest.mark.parametrize("estimator", [op.pass_hat_k, op.pass_at_k])
def test_negative_passes_are_refused(estimator) -> None:
    # c = -1 is no count of passes; pass@1 of it would be 1 - 6/5 = -0.2, a rate below 0
    with pytest.raises(ValueError, match="0 ≤ c ≤ n"):
        estimator([5], [-1], 1)


@pytest.mark.parametrize("estimator", [op.pass_hat_k, op.pass_at_k])
def test_more_passes_than_epochs_are_refused(estimator) -> None:
    # c = 6 of n = 5 is no count of passes: pass^1 of it would be 6/5 = 1.2, a rate above 1 (mutation round 15, E06)
    with pytest.raises(ValueError, match="0 ≤ c ≤ n"):
        estimator([5], [6], 1)


@pytest.mark.parametrize("estimator", [op.pass_hat_k, op.pass_at_k])
def test_k_zero_is_refused(estimator) -> None:
    # pass^0 is no reduction: the empty product would read as a certain pass (1.0) whatever the passes
    with pytest.raises(ValueError, match="k=0"):
        estimator([5], [0], 0)


def test_n_and_c_of_different_lengths_are_refused() -> None:
    # one n per case and one c per case: [5, 5] against [3] would broadcast c to both cases
    with pytest.raises(ValueError, match="same shape"):
        op.pass_hat_k([5, 5], [3], 2)


@pytest.mark.parametrize("text", ["pass^0", "pass@0", "pass^01"])
def test_parse_reduce_refuses_k_zero_and_leading_zeros(text: str) -> None:
    with pytest.raises(ValueError, match="not a reduction"):
        parse_reduce(text)


def test_parse_reduce_ignores_surrounding_blanks() -> None:
    assert parse_reduce("  pass^2 ").text == "pass^2"
    assert parse_reduce("mean\n").text == "mean"


def test_value_denominator_refuses_fewer_epochs_than_k() -> None:
    # C(2, 3) = 0: no denominator exists for a case of 2 epochs reduced with pass^3
    with pytest.raises(ValueError, match="needs n ≥ k"):
        value_denominator([2, 5], "pass^3")


def test_fractional_interval_refuses_a_sum_above_its_size() -> None:
    # a cluster of 1 case cannot sum to 2 (values are in [0, 1])
    with pytest.raises(ValueError, match="0 ≤ sums ≤ sizes"):
        fractional_interval([2.0, 0.5], [1, 1])


def test_fractional_interval_refuses_a_zero_denominator() -> None:
    with pytest.raises(ValueError, match="denominator=0"):
        fractional_interval([0.5, 1.0, 0.0], [1, 1, 1], denominator=0)


def test_one_cluster_is_clopper_pearson_not_cluster_t() -> None:
    # G = 1: no cluster-robust variance; the documented fallback is Clopper-Pearson on n_min
    iv = fractional_interval([0.5], [2])
    assert iv.method == "clopper_pearson"
    assert "G=1" in iv.reason
    assert iv.estimate == pytest.approx(0.25)  # 0.5 / 2 by hand


def test_zero_width_cluster_t_falls_back_to_clopper_pearson_by_hand() -> None:
    # 20 clusters each at 0.5: SE = 0 and the all-pass cap (0.025^(1/20) = 0.83) is above p̂, so the raw bound has
    # zero width; the fallback is Clopper-Pearson of 10 successes in n_min = 20 (beta quantiles, by hand)
    iv = fractional_interval([0.5] * 20, [1] * 20)
    assert iv.method == "clopper_pearson" and "zero-width" in iv.reason
    assert iv.low == pytest.approx(stats.beta.ppf(0.025, 10, 11))
    assert iv.high == pytest.approx(stats.beta.ppf(0.975, 11, 10))
    assert iv.low < 0.5 < iv.high


def test_sums_a_hair_above_their_sizes_read_as_every_value_one() -> None:
    # float sums of per-case values may exceed m by rounding (within the 1e-12 the check allows): p̂ is 1
    iv = fractional_interval(np.array([1 + 1e-13, 1 + 1e-13]), [1, 1])
    assert iv.estimate == 1.0
    assert iv.method == "clopper_pearson" and iv.high == 1.0


@pytest.mark.parametrize("estimator", [op.pass_hat_k, op.pass_at_k])
def test_a_case_of_no_epochs_is_refused_at_k_one(estimator) -> None:
    # n = 0 runs of a case give no value at any k, k = 1 included: c/n would be 0/0 (mutation round 12, E05)
    with pytest.raises(ValueError, match="case 0 has n=0"):
        estimator([0, 3], [0, 1], 1)


def test_two_clusters_are_enough_for_cluster_t() -> None:
    # G = 2 is the fewest clusters the CR2 variance takes (the documented fallback is for G < 2 only); p̂ = 1.5/2
    iv = fractional_interval([0.5, 1.0], [1, 1])
    assert (iv.method, iv.n_clusters, iv.estimate) == ("cluster_t", 2, 0.75)



@pytest.mark.parametrize(("values", "end"), [([1.0] * 19 + [0.9], "low"), ([0.0] * 19 + [0.1], "high")])
def test_raw_bounds_are_capped_at_the_all_pass_bound(values: list[float], end: str) -> None:
    """19 cases at 1 and one at 0.9, no denominator (the raw CR2 logit-t): its lower end (0.96) lies above the
    all-pass bound of n_min = 20 independent cases, (α/2)^(1/20) = 0.025^0.05 = 0.8316 by hand, and is capped
    there, as the docstring says; the mirror image caps the upper end at 1 − 0.8316 (mutation round 12, E20/E21)."""
    iv = fractional_interval(values, [1] * 20)
    top = 0.025 ** (1 / 20)
    assert iv.method == "cluster_t"
    if end == "low":
        assert iv.low == pytest.approx(top, abs=1e-12)
    else:
        assert iv.high == pytest.approx(1 - top, abs=1e-12)


def test_below_confidence_075_the_interval_holds_clopper_pearson_on_n_min() -> None:
    """Confidence 0.5, values 0.4 and 0.6 alternating over 20 singleton clusters: the CR2 interval alone is
    narrow (0.484, 0.516); the documented floor widens it to hold Clopper–Pearson of 10 successes in n_min = 20,
    beta quantiles computed here (mutation round 12, E23)."""
    iv = fractional_interval([0.4, 0.6] * 10, [1] * 20, confidence=0.5)
    assert iv.low <= stats.beta.ppf(0.25, 10, 11) + 1e-12
    assert iv.high >= stats.beta.ppf(0.75, 11, 10) - 1e-12
