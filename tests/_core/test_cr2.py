"""cluster_t: CR2 standard error, Bell–McCaffrey degrees of freedom, and the monotone lower bound.

Outside references: clubSandwich (R) on its documented worked example and on binary data sets
(tests/reference/cr2_clubsandwich.R and its JSON), and the matrix definitions written independently
in tests/_cr2_reference.py (hat matrix of the intercept-only model; a brute-force search over every
"better" data set for the monotone bound).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special
from scipy import stats as sps

import oloproof_nb._core.cr2 as cr2
from oloproof_nb._core.epochs import fractional_interval
from oloproof_nb._core.stats import cluster_se, cluster_sums, cluster_t, rate_interval_from_sums

sys.path.insert(0, str(Path(__file__).parents[1]))
from _cr2_reference import brute_force_low, cr2_matrix, never_pass_cap_by_hand, never_pass_share_low  # noqa: E402

CLUB = json.loads((Path(__file__).parents[1] / "reference" / "cr2_clubsandwich.json").read_text())
CLUB_SETS = sorted(k for k, v in CLUB.items() if isinstance(v, dict))


def layouts(max_clusters: int = 6, max_size: int = 3) -> st.SearchStrategy[tuple[list[int], list[int]]]:
    """(passes, rows) per cluster: 2..max_clusters clusters of 1..max_size rows."""
    return st.lists(st.integers(1, max_size), min_size=2, max_size=max_clusters).flatmap(
        lambda m: st.tuples(st.tuples(*[st.integers(0, size) for size in m]).map(list), st.just(m)))


def rows_of(k: list[int], m: list[int]) -> tuple[np.ndarray, np.ndarray]:
    y = np.concatenate([np.r_[np.ones(a), np.zeros(b - a)] for a, b in zip(k, m, strict=True)])
    return y, np.repeat(np.arange(len(m)), m)


# ---------------------------------------------------------------- CR2 and the degrees of freedom


@pytest.mark.parametrize("name", CLUB_SETS)
def test_cr2_se_and_df_equal_clubsandwich(name):
    ref = CLUB[name]
    y = np.asarray(ref["values"], dtype=float)
    ids = np.unique(np.asarray(ref["clusters"]), return_inverse=True)[1].reshape(-1)
    sums, m = np.bincount(ids, weights=y), np.bincount(ids)
    assert sums.sum() / m.sum() == pytest.approx(ref["estimate"], rel=1e-13)
    assert cr2.cr2_se(sums, m) == pytest.approx(ref["se_cr2"], rel=1e-12)
    assert cr2.bell_mccaffrey_df(m) == pytest.approx(ref["df_cr2"], rel=1e-12)


def test_chickweight_worked_example_is_really_unbalanced():
    # guards the reference: with equal sizes CR2 = CR1 and df = G − 1, which would test little
    ref = CLUB["ChickWeight_weight_by_Chick"]
    sizes = np.unique(np.asarray(ref["clusters"]), return_counts=True)[1]
    assert sizes.min() < sizes.max() and ref["df_cr2"] != pytest.approx(sizes.size - 1, abs=0.5)


@pytest.mark.parametrize("name", [n for n in CLUB_SETS if n != "ChickWeight_weight_by_Chick"])
def test_cluster_se_cr2_of_binary_rows_equals_clubsandwich(name):
    ref = CLUB[name]
    p, se = cluster_se(ref["values"], ref["clusters"], kind="CR2")
    assert (p, se) == pytest.approx((ref["estimate"], ref["se_cr2"]), rel=1e-12)


@settings(max_examples=150, deadline=None)
@given(layout=layouts(max_clusters=9, max_size=6))
def test_cr2_and_df_equal_direct_matrix_computation(layout):
    k, m = layout
    y, cl = rows_of(k, m)
    p, se, df = cr2_matrix(y, cl)
    assert cluster_se(y, cl, kind="CR2") == pytest.approx((p, se), rel=1e-9, abs=1e-12)
    assert cr2.bell_mccaffrey_df(np.asarray(m)) == pytest.approx(df, rel=1e-9)


def test_equal_sizes_give_cr1_and_g_minus_1():
    y, cl = rows_of([1, 2, 0, 3, 2], [3] * 5)
    assert cluster_se(y, cl, kind="CR2")[1] == pytest.approx(cluster_se(y, cl)[1], rel=1e-12)
    assert cr2.bell_mccaffrey_df(np.full(5, 3)) == pytest.approx(4.0, rel=1e-12)


def test_cluster_se_kind_is_checked():
    with pytest.raises(ValueError, match="kind='CR3' is unknown; use 'CR1' or 'CR2'"):
        cluster_se([1, 0], [1, 2], kind="CR3")


# ---------------------------------------------------------------- the interval


def test_low_equals_raw_cr2_logit_t_from_clubsandwich_where_the_envelope_does_not_bind():
    """The lower end is clubSandwich's CR2 logit-t bound. The upper end is the mirror image of the cap on what the
    clusters can vouch for: 20 of the 30 clusters pass every row, and 30 clusters cannot rule out a larger share of
    cases that never fail than the CR2 spread says (0.9033 against the raw 0.8917)."""
    ref = CLUB["random_int_ids"]
    p, se, df = ref["estimate"], ref["se_cr2"], ref["df_cr2"]
    half = sps.t.ppf(0.975, df) * se / (p * (1 - p))
    iv = cluster_t(ref["values"], ref["clusters"])
    assert iv.method == "cluster_t" and iv.reason == ""
    assert iv.low == pytest.approx(special.expit(special.logit(p) - half), abs=1e-12)
    ids = np.unique(np.asarray(ref["clusters"]), return_inverse=True)[1].reshape(-1)
    k, m = np.bincount(ids, weights=ref["values"]).astype(int), np.bincount(ids)
    assert (k == m).sum() == 20 and m.size == 30
    assert special.expit(special.logit(p) + half) < iv.high == pytest.approx(1 - never_pass_cap_by_hand(m - k, m),
                                                                                abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(layout=layouts(), confidence=st.sampled_from([0.9, 0.95]))
def test_low_equals_brute_force_minimum_over_better_data_sets(layout, confidence):
    k, m = layout
    y, cl = rows_of(k, m)
    iv = cluster_t(y, cl, confidence)
    if iv.method != "cluster_t":
        return
    assert iv.low == pytest.approx(brute_force_low(k, m, confidence), abs=1e-12)
    mirror = brute_force_low([b - a for a, b in zip(k, m, strict=True)], m, confidence)
    assert iv.high == pytest.approx(1 - mirror, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(sizes=st.lists(st.integers(1, 12), min_size=2, max_size=30), data=st.data(),
       confidence=st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_no_clustered_bound_is_above_what_its_clusters_can_vouch_for(sizes: list[int], data: st.DataObject,
                                                                      confidence: float) -> None:
    """ci_low ≤ (α/2)^(1/n_min)·p̂ and ci_high ≥ 1 − (α/2)^(1/n_min)·(1 − p̂), n_min = (Σm)²/Σm², for any cluster
    sums (the formula by hand, not the package's all_pass_low)."""
    m = np.asarray(sizes)
    k = np.asarray([data.draw(st.integers(0, int(size))) for size in sizes])
    iv = rate_interval_from_sums(k, m, "cluster_t", confidence)
    top = ((1 - confidence) / 2) ** (1 / (m.sum() ** 2 / (m.astype(float) ** 2).sum()))
    p = k.sum() / m.sum()
    assert iv.low <= top * p + 1e-12
    assert iv.high >= 1 - top * (1 - p) - 1e-12


def _flip_monotone(k: list[int], m: list[int], confidence: float = 0.95) -> None:
    ks, ms = np.asarray(k), np.asarray(m)
    before = cr2.cluster_t_from_sums(ks, ms, confidence)  # rate_interval_from_sums refuses confidence < 0.5
    top = (0.5 - confidence / 2) ** (1 / (ms.sum() ** 2 / (ms.astype(float) ** 2).sum()))
    assert before.low <= top + 1e-15
    for c in np.flatnonzero(ks < ms):
        after = cr2.cluster_t_from_sums(ks + np.eye(ks.size, dtype=np.int64)[c], ms, confidence)
        assert after.low >= before.low - 1e-15, (k, m, c)
        assert after.high >= before.high - 1e-15, (k, m, c)


@settings(max_examples=300, deadline=None)
@given(layout=layouts(max_clusters=25, max_size=6))
def test_turning_a_fail_into_a_pass_never_lowers_either_bound(layout):
    _flip_monotone(*layout)


def test_equal_rates_at_low_confidence_do_not_beat_a_worse_run():
    """At confidence 0.5, 4, 4, 2 rows passing 2, 2, 0 got 0.309; one more pass (every cluster at 1/2) fell back
    to Clopper–Pearson on n_min because its monotone bounds met at p̂, and got 0.187: a worse run passed 0.3."""
    from statsmodels.stats.proportion import proportion_confint

    m = np.array([4, 4, 2])
    worse = rate_interval_from_sums(np.array([2, 2, 0]), m, "cluster_t", 0.5)
    better = rate_interval_from_sums(np.array([2, 2, 1]), m, "cluster_t", 0.5)
    assert better.low >= worse.low and better.high >= worse.high
    assert better.method == "cluster_t" and better.low < better.estimate < better.high
    size = 100 / 36  # n_min = (Σm)²/Σm²; below cr2.LOW_CONFIDENCE the bounds hold its Clopper–Pearson interval
    cp_low, cp_high = proportion_confint(0.5 * size, size, alpha=0.5, method="beta")
    assert better.low == pytest.approx(min(cr2.monotone_low(np.array([2, 2, 1]), m, 0.5), cp_low), abs=1e-12)
    assert better.high == pytest.approx(cp_high, abs=1e-12)


@settings(max_examples=300, deadline=None)
@given(layout=layouts(max_clusters=12, max_size=6), confidence=st.sampled_from([0.3, 0.5, 0.6, 0.7, 0.74, 0.75]))
def test_never_lowers_either_bound_at_low_confidence(layout, confidence):
    _flip_monotone(*layout, confidence=confidence)


@pytest.mark.parametrize("confidence", [0.3, 0.5, 0.68, 0.75, 0.8, 0.95])
def test_equal_rates_never_give_a_zero_width_interval(confidence):
    """Every design whose clusters share one rate (G ≤ 6, sizes ≤ 4, and 1,000 clusters of 2 at 1/2; the
    monotone bounds met at p̂ up to confidence 0.68): the interval is never zero width, the floor or not."""
    designs = [(np.full(1000, 1), np.full(1000, 2))]
    for g in range(2, 7):
        for size in range(2, 5):
            designs += [(np.full(g, k), np.full(g, size)) for k in range(1, size)]
        designs.append((np.array([1] * (g - 1) + [2]), np.array([2] * (g - 1) + [4])))
    for k, m in designs:
        iv = cr2.cluster_t_from_sums(k, m, confidence)
        assert iv.method == "cluster_t" and iv.low < iv.estimate < iv.high, (k, m)
        if confidence >= cr2.LOW_CONFIDENCE:  # the floor is for low confidence only: the bare bounds here
            assert iv.low == cr2.monotone_low(k, m, confidence)
            assert iv.high == 1 - cr2.monotone_low(m - k, m, confidence)


def test_the_low_confidence_floor_starts_below_0_75_not_at_it():
    """10 clusters of 5 rows passing 43 of 50: n_min = 10 (equal sizes), so the floor is Clopper–Pearson of 8.6 in
    10 (statsmodels). Just below 0.75 the interval holds it (here: is it); at 0.75 the bare bounds stand, tighter."""
    from statsmodels.stats.proportion import proportion_confint

    k, m = np.array([5, 4, 5, 3, 5, 4, 5, 5, 2, 5]), np.full(10, 5)
    below = rate_interval_from_sums(k, m, "cluster_t", 0.7499)
    assert (below.low, below.high) == pytest.approx(proportion_confint(8.6, 10, alpha=0.2501, method="beta"),
                                                    abs=1e-12)
    at = rate_interval_from_sums(k, m, "cluster_t", 0.75)
    cp_low, cp_high = proportion_confint(8.6, 10, alpha=0.25, method="beta")
    assert cp_low < at.low < 0.86 < at.high < cp_high


def test_issue_example_perfect_run_is_not_below_one_failure():
    # 20 clusters of 3 rows: 60/60 must not be judged worse than 59/60 (the old code: 0.832 vs 0.875)
    m = np.full(20, 3)
    perfect = rate_interval_from_sums(m, m, "cluster_t")
    one_fail = rate_interval_from_sums(np.r_[2, np.full(19, 3)], m, "cluster_t")
    assert one_fail.low <= perfect.low == pytest.approx(0.025 ** (1 / 20), abs=1e-12)


def test_issue_example_unequal_sizes_is_wider_than_independent_rows():
    # one 50-row cluster with 49 passes and 19 passing singletons: the old cluster_t gave [0.9735, 0.9921],
    # narrower than Clopper–Pearson on 69 independent rows
    k, m = np.r_[49, np.ones(19, int)], np.r_[50, np.ones(19, int)]
    iv = rate_interval_from_sums(k, m, "cluster_t")
    cp_low = sps.beta.ppf(0.025, 68, 2)
    # before: `iv.low < cp_low and iv.high == 1.0 or iv.high > 0.9921` read as (… and …) or …; the high bound is
    # 1 - 3e-16, so only `iv.high > 0.9921` was ever checked and a lower bound of 0.9735 passed
    assert iv.low < cp_low and iv.high > 0.9921
    assert iv.low == pytest.approx(brute_force_low(k.tolist(), m.tolist()), abs=1e-12)  # 2 better data sets


def test_lagrangian_bound_is_conservative_and_monotone(monkeypatch):
    # above EXACT_FAILURES failures the worst variance is bounded by the fractional knapsack: force it everywhere
    rng = np.random.default_rng(5)
    for _ in range(40):
        m = rng.integers(1, 4, int(rng.integers(2, 6)))
        k = rng.binomial(m, 0.7)
        if k.sum() in (0, m.sum()):
            continue
        exact = cr2.monotone_low(k, m, 0.95)
        monkeypatch.setattr(cr2, "EXACT_FAILURES", 0)
        assert cr2.monotone_low(k, m, 0.95) <= exact + 1e-15
        _flip_monotone(k.tolist(), m.tolist())
        monkeypatch.setattr(cr2, "EXACT_FAILURES", 64)


def test_many_failures_use_the_lagrangian_path_and_stay_monotone():
    rng = np.random.default_rng(11)
    m = rng.integers(1, 7, 60)
    k = rng.binomial(m, 0.6)
    assert (m - k).sum() > cr2.EXACT_FAILURES
    _flip_monotone(k.tolist(), m.tolist())


def test_lagrangian_bound_caps_a_cluster_at_the_failures_kept():
    # 20 clusters of 1,000 rows holding 100-300 failures each: for J' = 65..199 (above EXACT_FAILURES) a cluster
    # keeps at most J' failures, so x² ≤ x·J', not only x·j. Without that cap the bound was 4.6× the exact
    # maximum (and, on the scaled rows of a pass^k with many epoch counts, made the interval [0, 1]).
    rng = np.random.default_rng(3)
    m = np.full(20, 1000)
    k = m - rng.integers(100, 300, 20)
    jt, mt, ct = cr2._types(m - k, m)
    total = int(m.sum())
    kept = np.arange(65, 200, dtype=float)
    exact = cr2._worst_exact(jt, mt, ct, total, kept)  # the knapsack works at any J' (slowly)
    bound = cr2._worst_lagrangian(jt, mt, ct, total, kept)
    assert (bound >= exact - 1e-9 * np.abs(exact)).all()  # still an upper bound of the maximum
    assert (bound <= exact * (1 + 1e-9)).all()  # here the greedy fill is exact: one cluster takes all J'
    _flip_monotone(k.tolist(), m.tolist())  # and the bound stays monotone with the cap


def test_cluster_sums_order_does_not_matter():
    y, cl = rows_of([1, 0, 3, 2], [2, 1, 3, 4])
    k, m = cluster_sums(y, cl)
    order = np.array([2, 0, 3, 1])
    assert rate_interval_from_sums(k, m) == rate_interval_from_sums(k[order], m[order])


def test_lagrangian_by_stretches_equals_the_row_by_row_greedy_fill():
    # the bound sorts the types once per stretch of failure counts with one density order; the direct
    # computation sorts them again for every failure count: same bound, to rounding
    rng = np.random.default_rng(21)
    for _ in range(25):
        m = rng.integers(1, int(rng.integers(2, 30)), int(rng.integers(20, 400)))
        k = rng.binomial(m, rng.uniform(0.3, 0.95))
        if k.sum() in (0, m.sum()):
            continue
        jt, mt, ct = cr2._types(m - k, m)
        kept = np.arange(1, int((m - k).sum()) + 1, dtype=float)
        direct = cr2._lagrangian_rows(jt, mt, ct, int(m.sum()), kept)
        fast = cr2._worst_lagrangian(jt, mt, ct, int(m.sum()), kept)
        assert np.allclose(fast, direct, rtol=1e-12, atol=1e-9 * np.abs(direct).max())


def test_clusters_all_at_one_rate_are_judged_as_a_degenerate_run_is() -> None:
    """20 cases × 5 epochs, each failing epoch 2 only: every cluster at 4/5, no spread between clusters.
    The interval was [0.788, 0.835] (a PASS at 0.78): above the 0.72 of a population where one case in
    ten always fails, in the 12% of 20-case samples holding no such case. Such data say nothing about how
    cases differ, so it is Clopper–Pearson on n_min = 20 with 16 successes (statsmodels: method="beta")."""
    from statsmodels.stats.proportion import proportion_confint

    k, m = np.full(20, 4), np.full(20, 5)
    iv = cr2.cluster_t_from_sums(k, m, 0.95)
    low, high = proportion_confint(16, 20, alpha=0.05, method="beta")
    assert (iv.low, iv.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert iv.low < 0.72 < 0.78  # the planted agent no longer passes a 0.78 threshold
    # one more pass anywhere makes a cluster perfect: the bounds may only rise (monotone), and do
    better = k.copy()
    better[7] = 5
    up = cr2.cluster_t_from_sums(better, m, 0.95)
    assert up.low >= iv.low and up.high >= iv.high
    # README §6: "now [0.563, 0.943]", and "19 cases at 4 of 5 epochs, one at 5 of 5 ... [0.674, 0.943]" (it was
    # [0.788, 0.943] before the bound was capped at what 20 clusters can vouch for: (α/2)^(1/20)·0.81, by hand)
    assert [round(x, 3) for x in (iv.low, iv.high, up.low, up.high)] == [0.563, 0.943, 0.674, 0.943]
    assert up.low == pytest.approx(0.025 ** (1 / 20) * 81 / 100, abs=1e-12)
    # one fewer: the equal-rate data set is better than it, so its lower bound is at most that one's
    worse = k.copy()
    worse[3] = 3
    down = cr2.cluster_t_from_sums(worse, m, 0.95)
    assert down.low <= iv.low and down.high <= iv.high
    # unequal sizes 4 and 6 (gcd 2) share the rate 1/2; n_min is then fractional
    mixed_k, mixed_m = np.array([2, 3, 2, 3] * 5), np.array([4, 6, 4, 6] * 5)
    mixed = cr2.cluster_t_from_sums(mixed_k, mixed_m, 0.95)
    size = mixed_m.sum() ** 2 / (mixed_m.astype(float) ** 2).sum()
    assert mixed.low == pytest.approx(sps.beta.ppf(0.025, size / 2, size / 2 + 1), abs=1e-12)
    assert iv.reason.startswith("every cluster passes the same share") and mixed.reason == iv.reason.replace(
        "n_min=20", f"n_min={size:.4g}")
    assert up.reason == down.reason == ""


@pytest.mark.parametrize("ulp_toward", [0.0, 1.0])
def test_a_perfect_run_is_not_below_one_failure_whatever_the_solver_rounds(monkeypatch, ulp_toward):
    # scipy 1.10's betaincinv(60/3·…, 1, α/2) is one unit in the last place off (α/2)^(1/n): the run with a
    # failure, capped at the closed form, came out 1 ulp above the perfect run (0.8315665290169147 > …146)
    from scipy import special

    solve = special.betaincinv
    monkeypatch.setattr(special, "betaincinv", lambda a, b, y: np.nextafter(solve(a, b, y), ulp_toward))
    for clusters, size, confidence in [(20, 3, 0.95), (7, 2, 0.9), (33, 4, 0.99), (12, 1, 0.8)]:
        m = np.full(clusters, size)
        k = m.copy()
        k[0] -= 1
        perfect = rate_interval_from_sums(m, m, "cluster_t", confidence)
        one_fail = rate_interval_from_sums(k, m, "cluster_t", confidence)
        assert one_fail.low <= perfect.low, (clusters, size, confidence)
        # n_min = G for equal sizes
        assert perfect.low == pytest.approx((0.5 - confidence / 2) ** (1 / clusters), rel=1e-14)
        worst = rate_interval_from_sums(m - m, m, "cluster_t", confidence)  # the mirror: no row passes
        assert worst.high == pytest.approx(1 - (0.5 - confidence / 2) ** (1 / clusters), rel=1e-14)


def test_the_same_share_reason_needs_every_cluster_at_the_overall_rate():
    # cluster 1 passes 1 of 2, the overall 3 of 6, the others 0 and 2: no common rate, no reason
    assert cr2.cluster_t_from_sums(np.array([1, 0, 2]), np.array([2, 2, 2]), 0.95).reason == ""
    same = cr2.cluster_t_from_sums(np.array([1, 2, 1]), np.array([2, 4, 2]), 0.95)
    assert same.reason == "every cluster passes the same share of its rows; at most clopper_pearson on n_min=2.667"


# ---------------------------------------------------------------- edges found by mutation testing


def test_cr2_of_one_cluster_is_nan_without_a_numpy_warning():
    """cr2_se's "NaN when G < 2" is the guard's, not a 0/0 of the formula: one cluster of N rows has 1 − m/N = 0,
    which divides by zero (a RuntimeWarning for whoever calls ``op.cluster_se(kind="CR2")``) on the way to NaN."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rate, se = cluster_se([1, 0, 1], ["a", "a", "a"], kind="CR2")
    assert rate == 2 / 3 and np.isnan(se)  # hand count; no standard error from one cluster


def test_a_cluster_that_passes_every_row_raises_no_numpy_warning():
    """A cluster with no failure is no "type" of the knapsack over failing clusters: j = 0 would divide by zero
    (numpy's floor_divide warning on every gate with a perfect cluster). The bound is the brute-force minimum."""
    import warnings

    k, m = np.array([3, 1, 2]), np.array([3, 2, 4])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        iv = cr2.cluster_t_from_sums(k, m, 0.95)
    assert iv.low == pytest.approx(brute_force_low(k.tolist(), m.tolist()), abs=1e-12)


def test_the_interval_does_not_depend_on_the_order_of_the_clusters_to_the_last_bit():
    """Sizes 1, 6, 5, 6, 1: summed in other orders, Σm²/(N−m)² and its kin differ in the last bits, and so did the
    Bell–McCaffrey degrees of freedom the bounds use. Every one of the 120 orders gives one interval, bit for bit,
    and its ends are the brute-force minimum over better data sets (tests/_cr2_reference.py)."""
    import itertools

    k, m = np.array([1, 4, 4, 1, 1]), np.array([1, 6, 5, 6, 1])
    seen = {cr2.cluster_t_from_sums(k[list(p)], m[list(p)], 0.95) for p in itertools.permutations(range(5))}
    assert len(seen) == 1
    iv = seen.pop()
    assert iv.low == pytest.approx(brute_force_low(k.tolist(), m.tolist()), abs=1e-12)
    assert iv.high == pytest.approx(1 - brute_force_low((m - k).tolist(), m.tolist()), abs=1e-12)
    y, cl = rows_of(k.tolist(), m.tolist())
    assert cr2.bell_mccaffrey_df(m) == pytest.approx(cr2_matrix(y, cl)[2], rel=1e-12)


def test_up_to_64_failures_kept_the_worst_spread_is_the_exact_knapsack(monkeypatch):
    """README §6: the worst case over better data sets is "found exactly by a small knapsack over cluster types up
    to 64 failures, bounded by its Lagrangian dual beyond". A run with 66 failures: J' = 1..64 go to the knapsack,
    65 and 66 to the dual; at J' = 64 the dual is looser here (measured: the bound 0.24250 instead of 0.24280)."""
    m = np.array([2, 7, 7, 5, 6, 5, 2, 1, 3, 2, 7, 5, 2, 1, 4, 4, 6, 3, 7, 6, 1, 7, 3, 3])
    k = np.array([1, 1, 2, 1, 2, 1, 0, 1, 0, 0, 3, 1, 1, 0, 4, 1, 2, 1, 2, 1, 1, 4, 1, 2])
    assert int((m - k).sum()) == 66  # hand count
    calls: dict[str, list[float]] = {"exact": [], "dual": []}
    exact, dual = cr2._worst_exact, cr2._worst_lagrangian

    def spy(name, fn):
        def wrapped(jt, mt, ct, total, kept):
            calls[name] += kept.tolist()
            return fn(jt, mt, ct, total, kept)
        return wrapped

    monkeypatch.setattr(cr2, "_worst_exact", spy("exact", exact))
    monkeypatch.setattr(cr2, "_worst_lagrangian", spy("dual", dual))
    low = cr2.monotone_low(k, m, 0.95)
    assert calls == {"exact": [float(j) for j in range(1, 65)], "dual": [65.0, 66.0]}
    # the knapsack at J' = 64 is an exact maximum, so the dual (an upper bound of it) can only lower the bound
    jt, mt, ct = cr2._types(m - k, m)
    at_64 = np.array([64.0])
    assert dual(jt, mt, ct, int(m.sum()), at_64)[0] > exact(jt, mt, ct, int(m.sum()), at_64)[0]
    assert 0 < low < k.sum() / m.sum()


def test_clusters_that_pass_nothing_have_a_lower_bound_of_0_and_no_warning() -> None:
    """The paired and pass^k intervals ask for the lower bound of a side nothing lands on (no case changed that
    way): it is 0, and computing it divides by no zero (a RuntimeWarning in the user's notebook otherwise)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cr2.monotone_low(np.zeros(5, dtype=int), np.array([1, 2, 3, 3, 4]), 0.95) == 0.0


def test_the_never_pass_cap_by_hand_one_case_of_twenty_never_passing() -> None:
    """20 cases × 10 tries, one case passing none and the others 9 of 10: 1 − the Clopper–Pearson upper bound of
    1 in 20 (statsmodels ``proportion_confint(1, 20, method="beta")``: 0.24873) times the others' rate 171/190;
    turning that case into one pass gives the all-pass bound 0.025^(1/20) times 172/200, which is higher."""
    from statsmodels.stats.proportion import proportion_confint

    from oloproof_nb._core.binomial import never_pass_cap

    k, m = np.r_[0, np.full(19, 9)], np.full(20, 10)
    upper = proportion_confint(1, 20, alpha=0.05, method="beta")[1]
    assert never_pass_cap(k, m, 0.95) == pytest.approx((1 - upper) * 171 / 190, rel=1e-12)
    assert (1 - upper) * 171 / 190 < 0.025 ** (1 / 20) * 172 / 200
    assert rate_interval_from_sums(k, m, "cluster_t").low <= (1 - upper) * 171 / 190 + 1e-15


@settings(max_examples=150, deadline=None)
@given(layout=layouts(max_clusters=6, max_size=3), confidence=st.sampled_from([0.8, 0.95]))
def test_the_never_pass_cap_is_below_that_of_every_better_data_set(layout, confidence) -> None:
    """The cap's argument by brute force: for every data set at least as good (every cluster passing at least as
    many rows), (1 − s_U(its rows in clusters that pass nothing))·(its passes)/(its other rows) is at least the cap,
    and equal to it for the best of them when every cluster has the same size (scipy.stats.beta, every data set)."""
    import itertools

    from oloproof_nb._core.binomial import never_pass_cap

    k, m = (np.asarray(v) for v in layout)
    if k.sum() == 0:
        return
    cap = never_pass_cap(k, m, confidence)
    assert cap == pytest.approx(never_pass_cap_by_hand(k, m, confidence), abs=1e-12)
    each = []
    for kp in itertools.product(*[range(a, b + 1) for a, b in zip(k, m, strict=True)]):
        kp_arr = np.asarray(kp)
        zero_rows = float(m[kp_arr == 0].sum())
        each.append(never_pass_share_low(zero_rows, kp_arr, m, confidence) * kp_arr.sum() / (m.sum() - zero_rows))
    assert cap <= min(each) + 1e-12
    if (m == m[0]).all():
        assert cap == pytest.approx(min(each), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(g=st.integers(2, 80), data=st.data(), confidence=st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_cluster_t_on_one_row_clusters_is_never_narrower_than_clopper_pearson(g: int, data: st.DataObject,
                                                                              confidence: float) -> None:
    """With one row a cluster, the clusters that pass nothing are the failing rows, so the cap is Clopper–Pearson's
    lower end (statsmodels ``proportion_confint(method="beta")``), and the mirror its upper end: ``cluster_t``
    holds the exact binomial interval (35 of 50 independent rows: 0.5539–0.8214 either way; before the cap
    ``cluster_t`` gave 0.554–0.814, narrower)."""
    from statsmodels.stats.proportion import proportion_confint

    passed = data.draw(st.integers(1, g - 1))
    iv = rate_interval_from_sums(np.r_[np.ones(passed), np.zeros(g - passed)], np.ones(g), "cluster_t", confidence)
    low, high = proportion_confint(passed, g, alpha=1 - confidence, method="beta")
    assert iv.method == "cluster_t"
    assert iv.low <= low + 1e-12 and iv.high >= high - 1e-12


def test_the_never_pass_cap_in_blocks_stays_below_and_monotone() -> None:
    """Past CAP_STEPS never-passing clusters left, the counts run in fixed blocks, each bounded from below: the cap
    is never above the exact minimum (``never_pass_cap_by_hand``, every count), and one more pass anywhere — a
    never-passing cluster turned included, which shifts every count — never lowers it (1,200 clusters of 1–4 rows,
    700 passing nothing: blocks from 512 clusters left; before the blocks were fixed, a block of counts taken from
    the data's own j could). With 150 passing nothing and CAP_STEPS set to 16, as this test had it, the blocks below
    512 still held one count each (a 256th of fewer than 512 is under one), so no block was ever formed."""
    from oloproof_nb._core import binomial

    rng = np.random.default_rng(5)
    m = rng.integers(1, 5, 1200)
    k = np.where(np.arange(1200) < 700, 0, rng.binomial(m, 0.5))
    exact = never_pass_cap_by_hand(k, m, 0.95)
    blocked = binomial.never_pass_cap(k, m, 0.95)
    assert blocked <= exact + 1e-15 and blocked > 0.99 * exact
    for _ in range(200):
        c = int(rng.choice(np.flatnonzero(k < m)))
        more = k.copy()
        more[c] += 1
        after = binomial.never_pass_cap(more, m, 0.95)
        assert after >= blocked - 1e-15, c
        k, blocked = more, after


@pytest.mark.parametrize(("k", "m"), [
    (np.r_[np.zeros(600), np.full(1400, 9)], np.full(2000, 10)),  # 600 of 2,000 cases never pass, the others 9 of 10
    (np.r_[np.zeros(1100), np.full(900, 10)], np.full(2000, 10)),
    (np.r_[np.zeros(700), np.ones(300)], np.r_[np.full(350, 3), np.full(350, 1), np.full(300, 2)]),
    (np.r_[np.zeros(1_100_000), np.full(400_000, 9)], np.full(1_500_000, 10)),  # past 2²⁰ left: the blocks go on
])
def test_the_never_pass_cap_counts_each_block_past_512_left_at_its_lowest_terms(k: np.ndarray, m: np.ndarray) -> None:
    """The blocks as documented, by hand: one by one up to 512 never-passing clusters left (0..511), then blocks
    growing by a 256th (a block from s holds max(1, s // 256) counts), each counted as 1 − s_U at its largest count
    left (scipy.stats.beta) times the lowest rate of its counts. Where turning a cluster of 10 rows with one pass
    lowers the rate (9 of 10 passing), the block holding j counts its rate at its start, so the cap is below the
    exact minimum (which is at j), by less than 1% (0.05–0.25% here). The blocks go on past 2²⁰ counts left (1.1
    million never-passing clusters: cut at 2²⁰, the last block would reach j and count 0.214 for 0.237)."""
    from oloproof_nb._core.binomial import never_pass_cap

    total, passed = m.sum(), k.sum()
    zero = np.sort(m[k == 0])[::-1]
    j = zero.size
    left_rows = np.concatenate(([0], np.cumsum(zero)))  # the rows of the r largest never-passing clusters

    r = np.arange(j + 1)  # r left, the j − r largest others turned with one pass each
    rate = (passed + j - r) / (total - zero.sum() + left_rows[j - r])
    starts = list(range(512))
    while starts[-1] < j:
        starts.append(starts[-1] + max(1, starts[-1] // 256))
    blocks = [(a, min(b - 1, j)) for a, b in zip(starts, starts[1:], strict=False) if a <= j]
    tops = np.array([top for _, top in blocks])
    n_min = total**2 / (m.astype(float) ** 2).sum()
    x = n_min * left_rows[tops] / total  # 1 − s_U at each block's largest count, as never_pass_share_low has it
    share = 1.0 - sps.beta.ppf(0.975, x + 1, n_min - x)
    terms = share * np.array([rate[a:top + 1].min() for a, top in blocks])
    assert len(blocks) < j + 1  # blocks were formed
    cap = never_pass_cap(k, m, 0.95)
    assert cap == pytest.approx(min(terms), rel=1e-12)
    if j < 5000:  # the exact minimum by plain loops
        exact = never_pass_cap_by_hand(k, m)
        assert cap <= exact + 1e-15 and cap > 0.99 * exact


def test_a_threshold_of_090_needs_more_clusters_the_more_rows_fail() -> None:
    """README §6 "How big must a suite be?": no clustered bound is above (α/2)^(1/n_min)·p̂, so a PASS at 0.90 needs
    36 clusters with every row passing, 50 at a rate of 0.97 and 69 at 0.95 (equal sizes: n_min = G), by hand."""
    from oloproof_nb._core.binomial import never_pass_cap

    for rate, g in ((1.0, 36), (0.97, 50), (0.95, 69)):
        assert 0.025 ** (1 / (g - 1)) * rate < 0.90 <= 0.025 ** (1 / g) * rate
        caps = [never_pass_cap(np.full(n, round(rate * 100)), np.full(n, 100), 0.95) for n in (g - 1, g)]
        assert caps[0] < 0.90 <= caps[1]  # no cluster passes nothing: the cap is 0.025^(1/G)·p̂
        assert caps[1] == pytest.approx(0.025 ** (1 / g) * rate, rel=1e-12)
    k = np.r_[np.full(9, 3), np.full(60, 4)]  # 69 clusters of 4 rows, 9 of them failing one: p̂ = 267/276 = 0.967
    assert rate_interval_from_sums(k, np.full(69, 4), "cluster_t").low <= 0.025 ** (1 / 69) * 267 / 276


@pytest.mark.parametrize(("k", "m", "why"), [
    ([2, 3, 1], [2, 3, 1], "degenerate: all 6 rows pass"),
    ([0, 0], [4, 2], "degenerate: none of the 6 rows passes"),
    ([3], [5], "too few clusters for {method}: G=1, need at least 2"),
])
def test_the_clustered_methods_fall_back_alike(k: list[int], m: list[int], why: str) -> None:
    """cluster_t, cluster_bootstrap and the reduced (fractional) interval fall back through one routine
    (``cr2.fallback_reason``, ``cr2.cp_on_n_min_at``): the same reason but for the method's name, and
    the bounds of statsmodels' Clopper–Pearson on n_min = (Σm)²/Σm² with p̂·n_min successes."""
    from statsmodels.stats.proportion import proportion_confint

    size = sum(m) ** 2 / sum(x * x for x in m)  # by hand: 36/14 = 2.571... for [4, 2]
    p = sum(k) / sum(m)
    low, high = proportion_confint(p * size, size, alpha=0.05, method="beta")
    low, high = (0.0 if p == 0 else low), (1.0 if p == 1 else high)
    for method in ("cluster_t", "cluster_bootstrap"):
        iv = rate_interval_from_sums(k, m, method=method)
        assert iv.method == "clopper_pearson"
        assert iv.reason == f"{why.format(method=method)}; clopper_pearson on n_min={size:.4g}"
        assert (iv.low, iv.high) == pytest.approx((low, high), abs=1e-12)
        assert (iv.n, iv.n_clusters) == (sum(m), len(m))
    reduced = fractional_interval(k, m)  # per-cluster sums of values in [0, 1]: here whole ones
    assert (reduced.method, reduced.low, reduced.high) == ("clopper_pearson", iv.low, iv.high)
    assert reduced.reason.endswith(f"; clopper_pearson on n_min={size:.4g}")
