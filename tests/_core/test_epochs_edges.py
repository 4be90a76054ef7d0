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
    # c = 6 of n = 5 is no count of passes: pass^1 of it would be 6/5 = 1.2, a rate above 1
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
    # n = 0 runs of a case give no value at any k, k = 1 included: c/n would be 0/0
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
    there, as the docstring says; the mirror image caps the upper end at 1 − 0.8316."""
    iv = fractional_interval(values, [1] * 20)
    top = 0.025 ** (1 / 20)
    assert iv.method == "cluster_t"
    if end == "low":
        assert iv.low == pytest.approx(top, abs=1e-12)
    else:
        assert iv.high == pytest.approx(1 - top, abs=1e-12)


def test_a_fractional_bound_is_capped_at_what_its_cases_can_vouch_for() -> None:
    """pass^3 of 6 epochs on 20 cases (the cap at what the cases can vouch for): 18 cases pass all 6 (value 1) and
    2 pass 5 (C(5,3)/C(6,3) = 10/20 = 0.5), p̂ = 0.95. 20 cases cannot rule out a share 1 − (α/2)^(1/20) of cases
    never drawn that never pass, so ci_low is at most (α/2)^(1/20)·0.95 = 0.7900 (scipy's beta.ppf(0.025, 20, 1),
    the Clopper–Pearson bound of 20 in 20, times p̂); the monotone CR2 logit-t bound alone gave 0.807."""
    values = op.pass_hat_k([6] * 20, [6] * 18 + [5] * 2, 3)
    assert values.tolist() == [1.0] * 18 + [0.5] * 2
    iv = fractional_interval(values, [1] * 20, 0.95, denominator=value_denominator([6] * 20, "pass^3"))
    assert iv.method == "cluster_t" and iv.estimate == pytest.approx(0.95)
    assert iv.low == pytest.approx(stats.beta.ppf(0.025, 20, 1) * 0.95, abs=1e-12)


def test_below_confidence_075_the_interval_holds_clopper_pearson_on_n_min() -> None:
    """Confidence 0.5, values 0.4 and 0.6 alternating over 20 singleton clusters: the CR2 interval alone is
    narrow (0.484, 0.516); the documented floor widens it to hold Clopper–Pearson of 10 successes in n_min = 20,
    beta quantiles computed here."""
    iv = fractional_interval([0.4, 0.6] * 10, [1] * 20, confidence=0.5)
    assert iv.low <= stats.beta.ppf(0.25, 10, 11) + 1e-12
    assert iv.high >= stats.beta.ppf(0.75, 11, 10) - 1e-12


# ---------------------------------------------------------------- stated properties, against outside references
# (each docstring property below had no test before; the references are scipy, math.comb, fractions and the
# matrix definitions of tests/_cr2_reference.py, never the package's own output)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("p", [0.0, 0.17, 0.5, 0.93, 1.0])
def test_pass_hat_k_and_pass_at_k_are_unbiased_under_independent_epochs(n: int, p: float) -> None:
    """The docstrings' "unbiased for p^k" and "for 1 − (1 − p)^k": the exact expectation over the binomial number
    of passes c ~ Binomial(n, p) (scipy's pmf) of each estimator, for every k ≤ n."""
    c = np.arange(n + 1)
    weights = stats.binom.pmf(c, n, p)
    for k in range(1, n + 1):
        assert weights @ op.pass_hat_k(np.full(n + 1, n), c, k) == pytest.approx(p**k, abs=1e-12)
        assert weights @ op.pass_at_k(np.full(n + 1, n), c, k) == pytest.approx(1 - (1 - p) ** k, abs=1e-12)


def test_pass_at_k_equals_the_product_chen_et_al_compute() -> None:
    """Chen et al. (2021) compute pass@k as 1 − Π_{i=n−c+1}^{n} (1 − k/i) (their numerically stable numpy
    estimator, 1 when n − c < k), and define it as 1 − C(n − c, k)/C(n, k): both agree with ``pass_at_k``."""
    import math

    def chen(n: int, c: int, k: int) -> float:
        if n - c < k:
            return 1.0
        return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))

    for n in range(1, 11):
        for k in range(1, n + 1):
            got = op.pass_at_k(np.full(n + 1, n), np.arange(n + 1), k)
            for c in range(n + 1):
                assert got[c] == pytest.approx(chen(n, c, k), abs=1e-12)
                assert got[c] == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k), abs=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "pass^1", "pass^2", "pass^3", "pass@2", "pass@3"])
def test_value_denominator_makes_every_possible_value_a_whole_number(reduction: str) -> None:
    """The docstring: every value times D is a whole number, whatever the passes (exact fractions of math.comb)."""
    import math
    from fractions import Fraction

    r = parse_reduce(reduction)
    for epochs in ([3, 3], [3, 4, 5], [4, 6], [7], [5, 5, 9]):
        d = value_denominator(epochs, reduction)
        for n in epochs:
            for c in range(n + 1):
                if r.kind == "mean":
                    value = Fraction(c, n)
                elif r.kind == "pass^":
                    value = Fraction(math.comb(c, r.k), math.comb(n, r.k))
                else:
                    value = 1 - Fraction(math.comb(n - c, r.k), math.comb(n, r.k))
                assert (value * d).denominator == 1, (reduction, epochs, n, c, d)


def _cr2_reference():  # the matrix definitions, written without the package (tests/_cr2_reference.py)
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1]))
    import _cr2_reference

    return _cr2_reference


@pytest.mark.parametrize(("values", "clusters"), [
    ([0.5, 0.1, 1.0, 0.7, 0.3, 0.9, 0.2, 1.0], [0, 0, 1, 2, 2, 2, 3, 4]),  # unequal sizes 2, 1, 3, 1, 1
    ([1.0, 0.6, 0.0, 0.8, 0.9, 1.0, 0.4, 0.7, 1.0, 0.3], [0, 1, 1, 2, 2, 3, 3, 3, 3, 4]),
])
def test_raw_fractional_interval_is_the_matrix_cr2_logit_t_with_clusters_of_several_cases(
        values: list[float], clusters: list[int]) -> None:
    """No ``denominator``: the docstring's expit(logit p̂ ± t_ν·SE/(p̂(1 − p̂))) with the CR2 SE and Bell–McCaffrey
    ν of the regression of the case values on a constant, from the hat matrix (tests/_cr2_reference.py) and
    scipy's t quantile, where neither cap binds. The other tests check it with one case a cluster only."""
    from scipy import special

    ref = _cr2_reference()
    y, cl = np.asarray(values), np.asarray(clusters)
    p, se, df = ref.cr2_matrix(y, cl)
    half = stats.t.ppf(0.975, df) * se / (p * (1 - p))
    low, high = special.expit(special.logit(p) - half), special.expit(special.logit(p) + half)
    sizes = np.bincount(cl)
    top = 0.025 ** (1 / (sizes.sum() ** 2 / (sizes**2).sum()))
    assert low < min(top, p) and high > max(1 - top, p)  # the caps do not bind: the formula alone decides
    iv = fractional_interval(np.bincount(cl, weights=y), sizes)
    assert iv.method == "cluster_t"
    assert (iv.low, iv.high) == pytest.approx((low, high), abs=1e-12)


@pytest.mark.parametrize(("passes", "epochs", "clusters"), [
    ([1, 2, 0, 2], [2, 2, 2, 2], [0, 0, 1, 2]),  # mean of 2 epochs, D = 2: rows 4, 2, 2 per cluster
    ([1, 1, 2, 0, 2], [2, 2, 2, 2, 2], [0, 1, 1, 2, 3]),
    ([2, 1, 3], [3, 3, 3], [0, 1, 1]),  # mean of 3 epochs, D = 3: rows 3, 6
])
def test_fractional_bounds_with_a_denominator_are_the_brute_force_minimum_over_the_scaled_rows(
        passes: list[int], epochs: list[int], clusters: list[int]) -> None:
    """With ``denominator`` D the docstring says the bounds are the gate's monotone ``cluster_t`` bounds of the data
    set where each case is D rows, v·D of them passing: the smallest CR2 logit-t bound (or Clopper–Pearson on n_min
    where every cluster has one rate) over every data set with more passing rows, capped at the all-pass bound
    and p̂. Here that minimum is found by brute force from the matrix definitions (tests/_cr2_reference.py), on
    clusters of several cases."""
    ref = _cr2_reference()
    n, c, cl = np.asarray(epochs), np.asarray(passes), np.asarray(clusters)
    d = value_denominator(n, "mean")
    values = c / n
    sums, sizes = np.bincount(cl, weights=values), np.bincount(cl)
    rows = (sizes * d).tolist()
    hits = np.rint(sums * d).astype(int).tolist()
    iv = fractional_interval(sums, sizes, denominator=d)
    assert iv.method == "cluster_t"
    assert iv.low == pytest.approx(ref.brute_force_low(hits, rows), abs=1e-12)
    assert iv.high == pytest.approx(1 - ref.brute_force_low([r - h for r, h in zip(rows, hits, strict=True)], rows),
                                    abs=1e-12)

def test_parse_reduce_takes_k_up_to_the_largest_number_of_epochs() -> None:
    """A suite may run up to MAX_EPOCHS = 10,000 epochs (five digits), so pass^10000 and pass@10000 are reductions."""
    from oloproof_nb._config.suite_config import MAX_EPOCHS

    assert MAX_EPOCHS == 10_000
    assert parse_reduce("pass^10000") == parse_reduce(" pass^10000 ")
    assert (parse_reduce("pass^10000").k, parse_reduce("pass@10000").text) == (10_000, "pass@10000")


@pytest.mark.parametrize("estimator", [op.pass_hat_k, op.pass_at_k])
def test_k_true_is_refused_not_read_as_one(estimator) -> None:
    """bool is an int in Python; k=True is a slip, not pass^1 (the docstring: k a whole number ≥ 1)."""
    with pytest.raises(ValueError, match=r"k=True must be a whole number ≥ 1"):
        estimator([3], [2], True)


def test_values_are_scaled_exactly_up_to_2_000_000_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """README §6: "Above 2,000,000 scaled rows D is made smaller and the values rounded down" — at 2,000,000 the
    rows are the values' own (Σm·D), above it D becomes ⌊2,000,000/Σm⌋ (hand counts), and at least 1 when Σm
    alone exceeds 2,000,000 (0 would leave no row). The bound's solver is replaced by a recorder: the rows it is
    given are the point here, and 3,000,000 rows would take it seconds."""
    from oloproof_nb._core import epochs

    given: list[tuple[list[int], list[int]]] = []

    def record(k: np.ndarray, m: np.ndarray, confidence: float, df: float | None = None) -> float:
        given.append((k.tolist(), m.tolist()))
        return 0.0

    monkeypatch.setattr(epochs, "monotone_low", record)
    fractional_interval([0.5, 0.25], [1, 1], 0.95, denominator=1_000_000)  # 2 · 10⁶ rows: not above
    assert given[0] == ([500_000, 250_000], [1_000_000, 1_000_000])
    given.clear()
    fractional_interval([0.5, 0.25], [1, 1], 0.95, denominator=1_000_004)  # 2,000,008 rows: D = 1,000,000
    assert given[0] == ([500_000, 250_000], [1_000_000, 1_000_000])
    given.clear()
    fractional_interval([1.5, 1.0], [1_500_000, 1_500_000], 0.95, denominator=2)  # Σm = 3 · 10⁶: D = 1
    assert given[0] == ([1, 1], [1_500_000, 1_500_000])


def test_values_rounded_to_a_smaller_denominator_take_the_upper_bound_from_the_values_rounded_up(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Above MAX_SCALED_ROWS the values are put on a coarser grid: the lower bound from the values rounded down,
    the upper one from the values rounded up, so neither bound is narrowed by the rounding. Values 1/3 and 2/3
    (D = 3) with the limit at 4 rows get D = ⌊4/2⌋ = 2 (hand counts): rows 2 and 2, passes rounded down 0 and 1,
    rounded up 1 and 2, so the upper bound is 1 − the lower bound of the failures 2 − 1 = 1 and 2 − 2 = 0 (not
    of 2 − 0 and 2 − 1, the failures left by the values rounded down)."""
    from oloproof_nb._core import epochs

    given: list[tuple[list[int], list[int]]] = []

    def record(k: np.ndarray, m: np.ndarray, confidence: float, df: float | None = None) -> float:
        given.append((k.tolist(), m.tolist()))
        return 0.0

    monkeypatch.setattr(epochs, "monotone_low", record)
    monkeypatch.setattr(epochs, "MAX_SCALED_ROWS", 4)
    fractional_interval([1 / 3, 2 / 3], [1, 1], 0.95, denominator=3)
    assert given == [([0, 1], [2, 2]), ([1, 0], [2, 2])]


def test_a_value_of_zero_is_zero_not_minus_zero() -> None:
    """C(0, 2)/C(5, 2) and C(1, 2)/C(5, 2) are 0 (hand count); the product Π(c − i)/(n − i) passes through a
    negative factor there ((0 − 1)/4), which without the clip at 0 gave −0.0, shown as "-0.0" in by-case frames."""
    values = op.pass_hat_k([5, 5, 3], [0, 1, 0], 2)
    assert values.tolist() == [0.0, 0.0, 0.0] and not np.signbit(values).any()


def test_a_negative_sum_is_refused_even_a_small_one() -> None:
    """The docstring: 0 ≤ sums ≤ sizes; only rounding noise (1e-12) is let through, not −0.25."""
    with pytest.raises(ValueError, match="0 ≤ sums ≤ sizes"):
        fractional_interval([-0.25, 1.0, 0.5], [1, 1, 1])


def test_the_mean_reduction_is_the_share_of_passing_epochs() -> None:
    """mean = c/n per case (hand counts 3/4, 5/5, 0/2, 1/3), not a whole-number division."""
    from oloproof_nb._core.epochs import reduce_counts

    assert reduce_counts([4, 5, 2, 3], [3, 5, 0, 1], "mean").tolist() == [0.75, 1.0, 0.0, 1 / 3]


def test_sums_a_float_hair_below_a_whole_number_of_rows_are_not_rounded_down() -> None:
    """pass^2 of 3 epochs, one cluster of cases with 2, 3 and 3 passes: values C(c, 2)/C(3, 2) =
    1/3, 1, 1, exactly 7/3 (hand count with fractions), so with D = 3 the cluster is 7 passing rows of 9. Summed in
    floats the values give 2.333…3 and 3 × that is 6.999999999999999: floored without a tolerance it read 6 passing
    rows, a lower bound of a data set with a row fewer than the cases hold."""
    from fractions import Fraction
    from math import comb

    from oloproof_nb._core import epochs
    from oloproof_nb._core.epochs import reduce_counts

    values = reduce_counts([3, 3, 3], [2, 3, 3], "pass^2")
    exact = sum(Fraction(comb(c, 2), comb(3, 2)) for c in (2, 3, 3))
    assert exact == Fraction(7, 3) and float(values.sum()) * 3 < 7  # the float sum is a hair below
    given: list[tuple[list[int], list[int]]] = []

    def record(k: np.ndarray, m: np.ndarray, confidence: float, df: float | None = None) -> float:
        given.append((k.tolist(), m.tolist()))
        return 0.0

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(epochs, "monotone_low", record)
        fractional_interval([float(values.sum()), 0.0], [3, 1], 0.95, denominator=value_denominator([3], "pass^2"))
    assert given == [([7, 0], [9, 3]), ([2, 3], [9, 3])]  # passes 7 and 0, failures 9 − 7 and 3 − 0


def test_reduce_counts_gives_pass_hat_k_for_pass_caret_and_pass_at_k_for_pass_at() -> None:
    """Mutant: the two estimators swapped in ``reduce_counts`` went unseen. Hand counts, 5 epochs with 3
    passes: pass^2 = C(3, 2)/C(5, 2) = 3/10, pass@2 = 1 − C(2, 2)/C(5, 2) = 9/10."""
    from oloproof_nb._core.epochs import reduce_counts

    assert reduce_counts([5], [3], "pass^2").tolist() == pytest.approx([3 / 10], abs=1e-15)
    assert reduce_counts([5], [3], "pass@2").tolist() == pytest.approx([9 / 10], abs=1e-15)


@pytest.mark.parametrize("estimator", [op.pass_hat_k, op.pass_at_k])
@pytest.mark.parametrize(("n", "c"), [(5, 2.5), (5.9, 5), ([5, 5], [3, 1.5]), ("5", 3), (True, 1), (5, float("nan"))])
def test_counts_that_are_no_whole_numbers_are_refused(estimator, n, c) -> None:
    # 2.5 passes of 5 was read as 2 (pass^2 = C(2,2)/C(5,2) = 0.1), 5 of 5.9 epochs as 5 of 5 (pass^5 = 1.0)
    with pytest.raises(ValueError, match="must hold whole numbers"):
        estimator(n, c, 1)


def test_whole_numbers_given_as_floats_are_counts_and_a_fraction_is_not() -> None:
    # 3.0 passes of 5.0 epochs are 3 of 5: C(3,2)/C(5,2) = 3/10 by hand; 2.5 passes are none
    assert float(op.pass_hat_k(5.0, 3.0, 2)) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="c must hold whole numbers"):
        op.pass_hat_k(5.0, 2.5, 2)


def test_counts_of_an_unsigned_integer_array_are_whole_numbers() -> None:
    # a frame's counts read as uint8 (pyarrow, a value_counts of bytes): 3 of 5 -> C(3,2)/C(5,2) = 3/10 by hand,
    # 100 of 200 -> C(100,2)/C(200,2) = 4950/19900; pass@2 = 1 - C(2,2)/C(5,2) = 9/10
    n, c = np.array([5, 200], dtype=np.uint8), np.array([3, 100], dtype=np.uint8)
    assert np.asarray(op.pass_hat_k(n, c, 2)).tolist() == pytest.approx([3 / 10, 4950 / 19900])
    assert float(op.pass_at_k(np.uint8(5), np.uint8(3), 2)) == pytest.approx(9 / 10)
    # fewer passes than k: C(1,2) = 0 by hand, so pass^2 = 0 and pass@2 = 1 (no count wraps round below zero)
    assert float(op.pass_hat_k(np.uint8(5), np.uint8(1), 2)) == 0.0
    assert float(op.pass_at_k(np.uint8(5), np.uint8(4), 2)) == 1.0


@pytest.mark.parametrize(("n", "c"), [(float("inf"), 3), (5, float("-inf"))])
def test_an_infinite_count_is_no_whole_number(n: float, c: float) -> None:
    # inf equals its own rounding, and is no count: cast to an integer it was -9223372036854775808
    with pytest.raises(ValueError, match="must hold whole numbers"):
        op.pass_hat_k(n, c, 2)
