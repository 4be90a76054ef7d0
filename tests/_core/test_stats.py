"""Tests for oloproof_nb.stats against outside references.

Expected numbers come from statsmodels, scipy, hand formulas, and
tests/reference/stats_reference.py (which wrote tests/reference/stats_reference.json
and does not import oloproof_nb).
"""

from __future__ import annotations

import dataclasses
import doctest
import importlib.util
import inspect
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

import oloproof_nb._core.stats as ops
from oloproof_nb._core.stats import (
    METHODS,
    Interval,
    clopper_pearson,
    cluster_bootstrap,
    cluster_se,
    cluster_sums,
    cluster_t,
    is_clustered,
    is_clustered_from_sums,
    rate_interval,
    rate_interval_from_sums,
    wilson,
)

REFERENCE_DIR = Path(__file__).parents[1] / "reference"
REFERENCE = json.loads((REFERENCE_DIR / "stats_reference.json").read_text())


def _load_reference_module():
    spec = importlib.util.spec_from_file_location("stats_reference", REFERENCE_DIR / "stats_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


stats_reference = _load_reference_module()


def statsmodels_cluster_se(values, clusters) -> float:
    """Outside reference: OLS of the rows on a constant, cluster-robust (CR1) SE."""
    codes = np.unique(np.asarray(clusters), return_inverse=True)[1].reshape(-1)
    y = np.asarray(values, dtype=float)
    fit = sm.OLS(y, np.ones((y.size, 1))).fit(cov_type="cluster", cov_kwds={"groups": codes})
    return float(fit.bse[0])


def beta_binomial_data(seed: int, n_clusters: int = 40, max_size: int = 5, a: float = 4.0, b: float = 1.0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_size + 1, n_clusters)
    clusters = np.repeat(np.arange(n_clusters), sizes)
    pc = rng.beta(a, b, n_clusters)
    values = (rng.random(clusters.size) < pc[clusters]).astype(int)
    return values, clusters


def n_min_of(clusters) -> float:
    m = np.unique(np.asarray(clusters), return_counts=True)[1].astype(float)
    return m.sum() ** 2 / (m**2).sum()


# ---------------------------------------------------------------- public face


def test_interval_fields_and_methods_are_pinned():
    names = [f.name for f in dataclasses.fields(Interval)]
    assert names == ["estimate", "low", "high", "method", "n", "n_clusters", "reason"]
    assert METHODS == ("clopper_pearson", "wilson", "cluster_t", "cluster_bootstrap")
    iv = rate_interval([1, 0, 1])
    with pytest.raises(dataclasses.FrozenInstanceError):
        iv.low = 0.0  # type: ignore[misc]


def test_docstring_examples_run():
    result = doctest.testmod(ops, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 8
    assert result.failed == 0


# ---------------------------------------------------------------- binomial intervals

GRID = [(k, n) for n in (1, 5, 20, 137) for k in sorted({0, 1, n // 3, n - 1, n}) if 0 <= k <= n]


@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
@pytest.mark.parametrize(("k", "n"), GRID)
def test_binomial_intervals_equal_statsmodels(k, n, confidence):
    alpha = 1 - confidence
    assert clopper_pearson(k, n, confidence) == pytest.approx(
        proportion_confint(k, n, alpha=alpha, method="beta"), abs=1e-12
    )
    assert wilson(k, n, confidence) == pytest.approx(
        np.clip(proportion_confint(k, n, alpha=alpha, method="wilson"), 0, 1), abs=1e-12
    )


@pytest.mark.parametrize("row", REFERENCE["binomial"], ids=lambda r: f"{r['k']}/{r['n']}@{r['confidence']}")
def test_binomial_intervals_equal_pinned_reference(row):
    # clopper_pearson: scipy.stats.binomtest(k, n).proportion_ci(method="exact"); wilson: hand formula
    k, n, conf = row["k"], row["n"], row["confidence"]
    assert clopper_pearson(k, n, conf) == pytest.approx(row["clopper_pearson"], abs=1e-10)
    assert wilson(k, n, conf) == pytest.approx(row["wilson"], abs=1e-12)


def test_binomial_literal_values():
    # scipy.stats.binomtest(9, 10).proportion_ci(method="exact")
    assert clopper_pearson(9, 10) == pytest.approx((0.5549838829718047, 0.9974714214555375), abs=1e-10)
    # scipy.stats.binomtest(17, 40).proportion_ci(confidence_level=0.9, method="exact")
    assert clopper_pearson(17, 40, 0.9) == pytest.approx((0.29184657878648973, 0.5668609107163234), abs=1e-10)
    # Wilson by hand: (p + z²/2n ± z√(p(1−p)/n + z²/4n²)) / (1 + z²/n), p = 0.9, n = 10
    z = sps.norm.ppf(0.975)
    center = (0.9 + z**2 / 20) / (1 + z**2 / 10)
    half = z * np.sqrt(0.09 / 10 + z**2 / 400) / (1 + z**2 / 10)
    assert wilson(9, 10) == pytest.approx((center - half, center + half), abs=1e-12)


@pytest.mark.parametrize("n", [1, 5, 14, 47, 51, 1000])
@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.95, 0.999])
def test_wilson_ends_are_exact_so_interval_contains_estimate(n, confidence):
    # statsmodels can return 0.9999999999999999 at k = n (a rounding of the exact 1)
    assert wilson(n, n, confidence)[1] == 1.0
    assert wilson(0, n, confidence)[0] == 0.0
    assert wilson(n, n, confidence)[0] == pytest.approx(
        proportion_confint(n, n, alpha=1 - confidence, method="wilson")[0], abs=1e-12
    )


def test_clopper_pearson_accepts_fractional_counts():
    # beta quantiles directly: low = Beta⁻¹(α/2; x, n − x + 1), high = Beta⁻¹(1 − α/2; x + 1, n − x)
    x, n = 3.5, 7.2
    assert clopper_pearson(x, n) == pytest.approx(
        (sps.beta.ppf(0.025, x, n - x + 1), sps.beta.isf(0.025, x + 1, n - x)), abs=1e-12
    )
    assert clopper_pearson(31.2, 31.2) == pytest.approx((0.025 ** (1 / 31.2), 1.0), abs=1e-12)


# ---------------------------------------------------------------- clustered SE


def test_cluster_sums_string_ids():
    k, m = cluster_sums([1, 0, 1, 1, 0], ["b", "b", "a", "c", "c"])
    assert k.tolist() == [1, 1, 1]  # a, b, c
    assert m.tolist() == [1, 2, 2]


DATASETS = {
    "random": beta_binomial_data(1),
    "many_small": beta_binomial_data(2, n_clusters=200, max_size=3),
    "unequal_sizes": beta_binomial_data(3, n_clusters=12, max_size=30, a=2, b=2),
    "string_ids": (
        beta_binomial_data(4)[0],
        np.array([f"source-{c}" for c in beta_binomial_data(4)[1]], dtype=object),
    ),
}


@pytest.mark.parametrize("name", DATASETS)
def test_cluster_se_equals_statsmodels(name):
    values, clusters = DATASETS[name]
    p, se = cluster_se(values, clusters)
    assert p == pytest.approx(np.mean(values), abs=1e-15)
    assert se == pytest.approx(statsmodels_cluster_se(values, clusters), abs=1e-9)


def test_cluster_se_shuffled_string_ids_equals_statsmodels():
    values, clusters = beta_binomial_data(5)
    order = np.random.default_rng(0).permutation(values.size)
    ids = [f"c{c:02d}" for c in clusters[order]]
    assert cluster_se(values[order], ids)[1] == pytest.approx(statsmodels_cluster_se(values[order], ids), abs=1e-9)
    assert cluster_se(values[order], ids)[1] == pytest.approx(cluster_se(values, clusters)[1], abs=1e-12)


@pytest.mark.parametrize("name", sorted(REFERENCE["clustered"]))
def test_cluster_se_equals_pinned_reference(name):
    row = REFERENCE["clustered"][name]
    p, se = cluster_se(row["values"], row["clusters"])
    assert p == pytest.approx(row["estimate"], abs=1e-15)
    assert se == pytest.approx(row["se"], abs=1e-12)


def test_cluster_se_hand_example():
    # k = [1, 2, 1], m = [2, 2, 2], p̂ = 2/3: residuals [-1/3, 2/3, -1/3], SE² = 3/2 · (6/9) / 36
    assert cluster_se([1, 0, 1, 1, 0, 1], [0, 0, 1, 1, 2, 2]) == pytest.approx((2 / 3, 1 / 6), abs=1e-15)


@pytest.mark.parametrize("values", [[1, 0, 1, 1, 0, 1], [1] * 37 + [0] * 3, [0, 1]])
def test_cluster_se_singletons_is_binomial_se_with_n_over_n_minus_1(values):
    # one row per cluster: SE² = n/(n−1) · Σ(y − p̂)²/n² = p̂(1 − p̂)/(n − 1)
    n, p = len(values), np.mean(values)
    expected = np.sqrt(p * (1 - p) / n * n / (n - 1))
    assert cluster_se(values, np.arange(n))[1] == pytest.approx(expected, abs=1e-12)
    assert cluster_se(values, np.arange(n))[1] == pytest.approx(statsmodels_cluster_se(values, np.arange(n)), abs=1e-9)


def test_cluster_se_single_cluster_is_nan():
    p, se = cluster_se([1, 0, 1], ["a", "a", "a"])
    assert p == pytest.approx(2 / 3)
    assert np.isnan(se)


# ---------------------------------------------------------------- cluster_t


@pytest.mark.parametrize("name", DATASETS)
def test_cluster_t_low_never_above_raw_cr2_and_contains_estimate(name):
    # the exact CR2 / Bell–McCaffrey numbers are pinned against clubSandwich in tests/_core/test_cr2.py
    values, clusters = DATASETS[name]
    p, se = cluster_se(values, clusters, kind="CR2")
    k, m = cluster_sums(values, clusters)
    half = sps.t.ppf(0.975, ops.bell_mccaffrey_df(m)) * se / (p * (1 - p))
    iv = cluster_t(values, clusters)
    assert iv.method == "cluster_t" and iv.reason == ""
    assert iv.low <= special.expit(special.logit(p) - half) + 1e-15 and iv.low < p < iv.high
    assert iv.high >= special.expit(special.logit(p) + half) - 1e-15


def test_cluster_t_without_clusters_treats_rows_as_clusters():
    values = [1] * 18 + [0] * 2
    iv = cluster_t(values, None)
    assert iv.n_clusters == 20 and iv.method == "cluster_t"
    # singletons: CR2 = √(Σ(y − p̂)²·n/(n−1))/n = √(p̂(1−p̂)/(n−1)), Bell–McCaffrey df = n − 1
    half = sps.t.ppf(0.975, 19) * np.sqrt(0.9 * 0.1 / 19) / 0.09
    assert iv.low <= special.expit(special.logit(0.9) - half) + 1e-15


# ---------------------------------------------------------------- cluster_bootstrap


def test_cluster_bootstrap_same_seed_same_interval_and_seeds_close():
    values, clusters = DATASETS["random"]
    a = cluster_bootstrap(values, clusters, seed=7)
    assert a == cluster_bootstrap(values, clusters, seed=7)
    b = cluster_bootstrap(values, clusters, seed=8)
    assert (a.low, a.high) != (b.low, b.high)
    assert abs(a.low - b.low) < 0.01 and abs(a.high - b.high) < 0.01
    assert a.method == "cluster_bootstrap" and a.reason == ""
    assert a.low < a.estimate < a.high


@pytest.mark.parametrize("name", ["random", "unequal_sizes", "string_ids"])
def test_cluster_bootstrap_matches_slow_loop_reference(name):
    values, clusters = DATASETS[name]
    iv = cluster_bootstrap(values, clusters, resamples=20_000, seed=3)
    low, high = stats_reference.slow_cluster_bca(values, clusters, resamples=20_000, seed=11)
    assert iv.low == pytest.approx(low, abs=0.01)
    assert iv.high == pytest.approx(high, abs=0.01)


def _scipy_rng(seed: int) -> dict:
    # scipy >= 1.15 takes `rng`; older versions `random_state`
    name = "rng" if "rng" in inspect.signature(sps.bootstrap).parameters else "random_state"
    return {name: np.random.default_rng(seed)}


def test_cluster_bootstrap_matches_scipy_bca_over_cluster_indices():
    # scipy's BCa, resampling cluster indices; its jackknife leaves one cluster out
    values, clusters = DATASETS["random"]
    k, m = np.bincount(clusters, weights=values), np.bincount(clusters)
    res = sps.bootstrap(
        (np.arange(k.size),),
        lambda idx, axis=-1: k[idx].sum(axis) / m[idx].sum(axis),
        method="BCa",
        n_resamples=20_000,
        vectorized=True,
        **_scipy_rng(5),
    )
    iv = cluster_bootstrap(values, clusters, resamples=20_000, seed=5)
    assert iv.low == pytest.approx(res.confidence_interval.low, abs=0.01)
    assert iv.high == pytest.approx(res.confidence_interval.high, abs=0.01)


def test_cluster_bootstrap_unclustered_matches_scipy_bca_of_mean():
    values = np.array([1] * 70 + [0] * 10)
    res = sps.bootstrap((values,), np.mean, method="BCa", n_resamples=20_000, **_scipy_rng(1))
    iv = cluster_bootstrap(values, None, resamples=20_000, seed=1)
    assert iv.n_clusters == 80
    assert iv.low == pytest.approx(res.confidence_interval.low, abs=0.01)
    assert iv.high == pytest.approx(res.confidence_interval.high, abs=0.01)


def test_cluster_bootstrap_does_not_mutate_input():
    values, clusters = DATASETS["random"]
    v, c = values.copy(), clusters.copy()
    cluster_bootstrap(values, clusters, resamples=100)
    np.testing.assert_array_equal(values, v)
    np.testing.assert_array_equal(clusters, c)


def test_cluster_bootstrap_low_is_capped_at_the_all_pass_bound():
    """5 clusters of 10 rows, 49 of 50 passing: n_min = 50² / (5 · 10²) = 5, so the lower bound is capped at
    (α/2)^(1/n_min) = 0.025^(1/5) ≈ 0.478 (hand count). Without the cap the resamples, nearly all 1, gave 0.92."""
    iv = cluster_bootstrap([1] * 49 + [0], [i // 10 for i in range(50)], resamples=2000, seed=0)
    assert iv.method == "cluster_bootstrap"
    assert iv.low == pytest.approx(0.025 ** (1 / 5), rel=1e-12)


def test_cluster_bootstrap_high_is_capped_at_the_all_fail_bound():
    """The mirror of the test above: 1 of 50 rows passing in 5 clusters of 10, so the upper bound is at least
    1 − (α/2)^(1/n_min) = 1 − 0.025^(1/5) ≈ 0.522 (hand count); the resamples, nearly all 0, sit far below it."""
    iv = cluster_bootstrap([0] * 49 + [1], [i // 10 for i in range(50)], resamples=2000, seed=0)
    assert iv.method == "cluster_bootstrap"
    assert iv.high == pytest.approx(1 - 0.025 ** (1 / 5), rel=1e-12)


# ---------------------------------------------------------------- fallbacks


@pytest.mark.parametrize("fn", [cluster_t, cluster_bootstrap])
@pytest.mark.parametrize("outcome", [0, 1])
def test_degenerate_falls_back_to_clopper_pearson_on_n_min(fn, outcome):
    clusters = ["a"] * 5 + ["b"] * 3 + ["c"] * 1 + [f"s{i}" for i in range(31)]
    values = [outcome] * len(clusters)
    n_min = n_min_of(clusters)  # 40² / (25 + 9 + 1 + 31) = 24.24...
    iv = fn(values, clusters)
    assert iv.method == "clopper_pearson"
    assert iv.reason.startswith("degenerate")
    assert ("all 40 rows pass" if outcome else "none of the 40 rows passes") in iv.reason  # missing rows too
    assert iv.estimate == outcome and (iv.n, iv.n_clusters) == (40, 34)
    expected = proportion_confint(outcome * n_min, n_min, alpha=0.05, method="beta")
    assert (iv.low, iv.high) == pytest.approx(expected, abs=1e-12)
    assert iv.low < iv.high


@pytest.mark.parametrize("fn", [cluster_t, cluster_bootstrap])
def test_single_mixed_cluster_falls_back_without_nan(fn):
    iv = fn([1, 0, 1, 1], ["x"] * 4)
    assert iv.method == "clopper_pearson" and iv.reason.startswith("too few clusters")
    # n_min = 16/16 = 1 effective observation, 0.75 successes
    assert (iv.low, iv.high) == pytest.approx(proportion_confint(0.75, 1.0, method="beta"), abs=1e-12)
    assert 0 <= iv.low < iv.estimate < iv.high <= 1


def test_equal_cluster_rates_never_give_zero_width_bootstrap():
    # every bootstrap ratio equals p̂
    iv = cluster_bootstrap([1, 0, 1, 0, 1, 0], [1, 1, 2, 2, 3, 3])
    assert iv.method == "clopper_pearson" and iv.reason.startswith("zero-width")
    assert (iv.low, iv.high) == pytest.approx(proportion_confint(1.5, 3.0, method="beta"), abs=1e-12)


def test_equal_cluster_rates_cluster_t_uses_the_better_data_sets():
    # S = 0 here carries no variance information; the bound comes from the data sets with more passes
    iv = cluster_t([1, 0, 1, 0, 1, 0], [1, 1, 2, 2, 3, 3])
    assert iv.method == "cluster_t" and iv.low < 0.5 < iv.high


def test_equal_cluster_rates_at_low_confidence_are_widened_not_zero_width():
    iv = cluster_t([1, 0] * 20, np.repeat(np.arange(20), 2), confidence=0.2)
    assert iv.method == "cluster_t" and iv.low < 0.5 < iv.high


def test_bootstrap_with_one_resample_is_capped_not_zero_width():
    iv = cluster_bootstrap([1, 0, 1, 1], [1, 2, 3, 4], resamples=1)
    assert iv.low < iv.high


@settings(max_examples=400, deadline=None)
@given(
    data=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 8)), min_size=1, max_size=40),
    method=st.sampled_from(("auto", *METHODS)),
    confidence=st.sampled_from([0.5, 0.9, 0.95, 0.999]),
)
def test_interval_is_never_zero_width_and_is_ordered(data, method, confidence):
    values = [v for v, _ in data]
    clusters = [f"c{c}" for _, c in data]
    iv = rate_interval(values, clusters, method, confidence, resamples=200, seed=0)
    assert np.isfinite([iv.low, iv.high]).all()
    assert 0.0 <= iv.low <= iv.estimate <= iv.high <= 1.0
    assert iv.low < iv.high
    assert iv.estimate == pytest.approx(np.mean(values))
    assert iv.n == len(values) and iv.n_clusters == len(set(clusters))


# ---------------------------------------------------------------- rate_interval


def test_rate_interval_auto_choices():
    assert rate_interval([1, 0, 1]).method == "clopper_pearson"
    assert rate_interval([1, 0, 1], clusters=["a", "b", "c"]).method == "clopper_pearson"
    clustered = (["a", "a", "b", "b", "c"], [1, 0, 1, 1, 1])
    assert rate_interval(clustered[1], clustered[0]).method == "cluster_t"
    iv = rate_interval(clustered[1], clustered[0], clustered_method="cluster_bootstrap", resamples=500)
    assert iv.method == "cluster_bootstrap"


def test_rate_interval_unclustered_is_statsmodels_beta():
    iv = rate_interval([1] * 17 + [0] * 3, confidence=0.9)
    assert (iv.low, iv.high) == pytest.approx(proportion_confint(17, 20, alpha=0.1, method="beta"), abs=1e-12)
    assert (iv.estimate, iv.n, iv.n_clusters, iv.reason) == (0.85, 20, 20, "")


def test_rate_interval_explicit_binomial_on_clustered_rows():
    values, clusters = DATASETS["string_ids"]
    iv = rate_interval(values, clusters, method="wilson")
    assert iv.method == "wilson" and iv.n_clusters == 40
    expected = proportion_confint(int(np.sum(values)), len(values), method="wilson")
    assert (iv.low, iv.high) == pytest.approx(expected, abs=1e-12)


def test_rate_interval_passes_through_to_clustered_methods():
    values, clusters = DATASETS["random"]
    assert rate_interval(values, clusters, "cluster_t") == cluster_t(values, clusters)
    assert rate_interval(values, clusters, "cluster_bootstrap", seed=4, resamples=1000) == cluster_bootstrap(
        values, clusters, resamples=1000, seed=4
    )


def test_bool_values_and_mixed_ids():
    iv = rate_interval(np.array([True, False, True, True]), [1, "a", 1, "a"])
    assert iv.estimate == 0.75 and iv.n_clusters == 2 and iv.method == "cluster_t"


def test_is_clustered():
    assert is_clustered(["a", "b", "a"])
    assert not is_clustered(["a", "b", "c"])
    assert not is_clustered(None)
    assert not is_clustered([])


def test_is_clustered_from_sums_at_the_boundary():
    # every cluster exactly one row is not clustered; one cluster of two rows is
    assert not is_clustered_from_sums([1, 1, 1, 1])
    assert is_clustered_from_sums([1, 2, 1])
    assert not is_clustered_from_sums([])
    assert not is_clustered(["a", "b", "c", "d"]) and is_clustered(["a", "b", "a", "d"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["g1", "g2", "g3", "g4", "g5", "g6"]), max_size=8))
def test_is_clustered_is_pandas_duplicated(ids):
    # outside reference: pandas' duplicated(), on the string column a run's cases frame holds, as the run's
    # clustering was decided before it went through is_clustered
    column = pd.Series(ids, dtype="string")
    expected = bool(column.duplicated().any())
    assert is_clustered(column) is expected
    assert is_clustered(np.array(ids, dtype=str)) is expected
    assert is_clustered_from_sums(column.value_counts().to_numpy()) is expected


def test_the_string_nan_is_an_id_not_a_missing_one():
    # only a missing marker is refused: "nan" written as text is a cluster like any other (two rows, one cluster)
    assert cluster_sums([1, 0, 1], ["nan", "nan", "b"])[1].tolist() == [1, 2]
    assert cluster_sums([1, 0, 1], ("a", "nan", "b"))[1].tolist() == [1, 1, 1]


@pytest.mark.parametrize("ids", [[1, "1", 1, "1", 2, 2], [b"a", "a", b"a", "a", "b", "b"]])
def test_ids_of_other_types_numpy_would_make_one_text_are_other_clusters(ids):
    # NumPy made text of [1, "1", 2] (and [b"a", "a"]), so 1 and "1" were one cluster of 4 rows; the gate groups
    # with pandas, which keeps them apart. By hand: 1 holds 2 passes of 2, "1" 0 of 2, 2 2 of 2 (in the order met,
    # as mixed ids cannot be sorted)
    values = [1, 0, 1, 0, 1, 1]
    k, m = cluster_sums(values, ids)
    assert (k.tolist(), m.tolist()) == ([2, 0, 2], [2, 2, 2])
    grouped = pd.Series(values).groupby(pd.Series(ids, dtype=object), sort=False).agg(["sum", "size"])
    assert grouped["size"].tolist() == m.tolist() and grouped["sum"].tolist() == k.tolist()
    assert rate_interval(values, ids).n_clusters == 3
    assert cluster_se(values, ids)[1] == pytest.approx(statsmodels_cluster_se(values, [0, 1, 0, 1, 2, 2]), rel=1e-9)
    # every row its own cluster: not clustered, so Clopper-Pearson on 2 of 3 (scipy's beta quantiles)
    alone = rate_interval([1, 0, 1], ids[:2] + ids[4:5])
    assert (alone.method, alone.n_clusters) == ("clopper_pearson", 3)
    assert (alone.low, alone.high) == pytest.approx((sps.beta.ppf(0.025, 2, 2), sps.beta.ppf(0.975, 3, 1)), rel=1e-9)
    assert not is_clustered(ids[:2])


def test_is_clustered_checks_its_ids():
    unhashable = np.empty(2, dtype=object)
    unhashable[:] = [[1], [1]]  # counted by their codes (no hash)
    assert is_clustered(unhashable)
    with pytest.raises(ValueError, match="clusters contains None/NaN/NA"):
        is_clustered(pd.Series(["a", pd.NA, "b"], dtype="string"))
    with pytest.raises(ValueError, match="one-dimensional"):
        is_clustered([["a", "b"]])


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: rate_interval([]), "values is empty"),
        (lambda: rate_interval([1, 2, 0]), r"values contains 2 at row 1; only 0/1"),
        (lambda: rate_interval([1, 0.5, 0]), r"values contains 0\.5 at row 1; only 0/1"),  # not read as 0
        # dates of 1970-01-01 and -02 cast to 0 and 1: refused as dates, never read as a fail and a pass
        (lambda: rate_interval(np.array(["1970-01-01", "1970-01-02"], dtype="M8[D]")), "not strings or dates"),
        (lambda: rate_interval([1, 0, 1], [1.0, np.nan, 2.0]), "clusters contains NaN; every row needs a cluster id"),
        (lambda: rate_interval_from_sums([], []), "passes must be a non-empty one-dimensional array"),
        (lambda: rate_interval_from_sums([1.5, 1], [2, 2]), r"passes must hold whole numbers \(counts per cluster\)$"),
        (lambda: rate_interval_from_sums(np.array([True, False]), [1, 1]), "passes must hold whole .*dtype bool"),
        (lambda: rate_interval([1, np.nan]), "values contains NaN"),
        (lambda: rate_interval([1, None]), "values contains NaN"),
        (lambda: rate_interval(["1", "0"]), "values must be 0/1"),
        (lambda: rate_interval([[1, 0]]), "one-dimensional"),
        (lambda: rate_interval([1, 0, 1], ["a", "b"]), "clusters has 2 ids but values has 3 rows"),
        (lambda: rate_interval([1, 0], [None, "a"]), "clusters contains None"),
        # pandas' NA (a nullable string column) put every NA row into one cluster, silently
        (lambda: rate_interval([1, 0, 1, 0], pd.Series(["a", pd.NA, "b", pd.NA], dtype="string")),
         "clusters contains None/NaN/NA"),
        (lambda: rate_interval([1, 0, 1], np.array(["a", pd.NA, "b"], dtype=object)), "contains None/NaN/NA"),
        (lambda: rate_interval([1, 0, 1], np.array(["a", pd.NaT, "b"], dtype=object)), "contains None/NaN/NA"),
        # a plain list of strings and a float NaN: NumPy made it the id "nan", one cluster of every missing row
        (lambda: rate_interval([1, 0, 1, 0], ["a", float("nan"), "b", float("nan")]), "contains None/NaN/NA"),
        # a tuple is given as it is too, and bytes ids are text as str ids are
        (lambda: rate_interval([1, 0, 1, 0], ("a", float("nan"), "b", float("nan"))), "contains None/NaN/NA"),
        (lambda: rate_interval([1, 0, 1, 0], [b"a", float("nan"), b"b", float("nan")]), "contains None/NaN/NA"),
        (lambda: rate_interval([1, 0], confidence=1.5), r"confidence=1\.5 is outside \(0, 1\)"),
        (lambda: rate_interval([1, 0], confidence=0), r"confidence=0 is outside \(0, 1\)"),
        (lambda: rate_interval([1, 0], confidence="high"), "confidence='high' is not a number"),
        (lambda: rate_interval([1, 0], confidence=True), "confidence=True is not a number"),  # not 1.0
        # the methods listed as words, as every message lists what is allowed (not a tuple's repr, ('auto', ...))
        (lambda: rate_interval([1, 0], method="bayes"),
         r"^method='bayes' is unknown; allowed: auto, clopper_pearson, wilson, cluster_t, cluster_bootstrap$"),
        (lambda: rate_interval([1, 0], clustered_method="wilson"),
         r"^clustered_method='wilson' is unknown; allowed: cluster_t, cluster_bootstrap$"),
        (lambda: cluster_bootstrap([1, 0], None, resamples=0), "resamples=0 must be an integer"),
        (lambda: cluster_t([1, 0], None, confidence=1.0), "confidence=1.0 is outside"),
        (lambda: clopper_pearson(5, 4), r"successes=5 must lie in \[0, nobs=4\]"),
        # more passes than rows in a cluster: without the k > m check the sums came back as a 100% pass rate
        (lambda: rate_interval_from_sums([3, 1], [2, 2]), "cluster 0 has 3 passes in 2 rows"),
        (lambda: rate_interval_from_sums([1, 0], [2, 0]), "rows must be ≥ 1 in every cluster; cluster 1 has 0"),
        # one count of passes for three clusters broadcast against their rows: an interval of clusters never given
        (lambda: rate_interval_from_sums([1], [2, 2, 2]), "passes has 1 clusters but rows has 3"),
        # before, Σm wrapped around in int64, an interval of n = -4,611,686,018,427,387,904 rows, estimate 1.0
        (lambda: rate_interval_from_sums([2**62] * 3, [2**62] * 3), r"rows total 1\.384e\+19, more than counts can"),
        (lambda: wilson(0, 0), "nobs=0 must be a positive number"),
        (lambda: cluster_se([1, 0], [1]), "clusters has 1 ids but values has 2 rows"),
    ],
)
def test_input_errors_name_argument_and_allowed_values(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_auto_on_sums_uses_the_clustered_method_asked_for() -> None:
    # clusters of 2 rows: clustered, so "auto" takes clustered_method (as rate_interval does on the rows)
    k, m = [1, 0, 2, 2], [2, 2, 2, 2]
    boot = rate_interval_from_sums(k, m, clustered_method="cluster_bootstrap", resamples=2000)
    rows = rate_interval([1, 0, 0, 0, 1, 1, 1, 1], ["a", "a", "b", "b", "c", "c", "d", "d"],
                         clustered_method="cluster_bootstrap", resamples=2000)
    assert boot.method == rows.method == "cluster_bootstrap"
    assert rate_interval_from_sums(k, m).method == "cluster_t"


def test_bootstrap_from_sums_uses_the_resamples_and_seed_given() -> None:
    """rate_interval_from_sums is rate_interval on the rows (its Notes), the bootstrap's resamples and seed included:
    500 resamples at seed 3 are not the defaults' 10,000 at seed 0."""
    k, m = [2, 5, 0, 3, 1, 4, 1, 2, 5, 2, 1, 3], [3, 5, 2, 4, 1, 6, 3, 2, 5, 4, 2, 3]
    values = [int(j < passes) for passes, rows in zip(k, m, strict=True) for j in range(rows)]
    clusters = [c for c, rows in enumerate(m) for _ in range(rows)]
    for resamples, seed in ((500, 3), (500, 0), (10_000, 3)):
        sums = rate_interval_from_sums(k, m, method="cluster_bootstrap", resamples=resamples, seed=seed)
        assert sums == rate_interval(values, clusters, method="cluster_bootstrap", resamples=resamples, seed=seed)
        assert sums.method == "cluster_bootstrap"
        assert sums != rate_interval(values, clusters, method="cluster_bootstrap")  # 10,000 at seed 0


def test_the_bootstrap_falls_back_only_when_every_cluster_has_the_overall_rate() -> None:
    # cluster 1 passes 1 of 2 rows, the overall rate (3 of 6); the others pass 0 and 2: the rates differ, so the
    # bootstrap decides (its zero-width fallback is for every cluster at one rate)
    iv = rate_interval_from_sums([1, 0, 2], [2, 2, 2], method="cluster_bootstrap", resamples=2000)
    assert iv.method == "cluster_bootstrap" and iv.reason == "" and iv.low < 0.5 < iv.high
    same = rate_interval_from_sums([1, 2, 1], [2, 4, 2], method="cluster_bootstrap", resamples=2000)
    assert same.method == "clopper_pearson" and same.reason.startswith("zero-width cluster_bootstrap")


def test_the_bootstrap_bound_is_not_monotone_as_the_readme_warns() -> None:
    """README's method table: one more passing row can lower the cluster_bootstrap bound (the reason the gate never
    decides with it, and why the table says not to rank agents by it); cluster_t's bound never falls."""
    k = [3, 3, 1, 4, 1, 1, 1, 0, 1, 3, 0, 4]
    m = [3, 3, 1, 4, 1, 1, 1, 2, 1, 4, 1, 4]
    better = list(k)
    better[9] += 1  # one more pass in cluster 10
    boot = [rate_interval_from_sums(x, m, method="cluster_bootstrap").low for x in (k, better)]
    assert [round(b, 3) for b in boot] == [0.571, 0.563] and boot[1] < boot[0]
    t = [rate_interval_from_sums(x, m, method="cluster_t").low for x in (k, better)]
    assert t[1] >= t[0]


def test_sums_from_two_groupbys_in_other_orders_are_refused_not_paired_by_position() -> None:
    """``passes`` and ``rows`` as two pandas Series (two groupbys of a run's verdicts, or one sorted): they were
    paired by position, so cluster b's passes met cluster c's rows: the totals stayed right and the clustered
    SE did not. Aligned Series, or arrays, give the interval of the rows themselves."""
    rows = pd.DataFrame({"cluster": list("aabbbbcd"), "passed": [1, 1, 0, 0, 1, 0, 1, 1]})
    by_cluster = rows.groupby("cluster")["passed"]
    passes, counts = by_cluster.sum(), by_cluster.size()
    with pytest.raises(ValueError, match="indexed by other clusters or in another order"):
        rate_interval_from_sums(passes.sort_values(), counts)
    aligned = rate_interval_from_sums(passes.sort_values(), counts.reindex(passes.sort_values().index))
    assert aligned.estimate == 5 / 8 and (aligned.n, aligned.n_clusters) == (8, 4)  # a hand count
    assert aligned == rate_interval_from_sums(passes.to_numpy(), counts.to_numpy())
    assert aligned == rate_interval(rows["passed"], rows["cluster"])  # the rows' own interval
    assert rate_interval_from_sums(passes, counts.to_numpy()) == aligned  # an array carries no clusters to check


def test_rows_and_clusters_as_series_in_other_orders_are_refused_not_paired_by_position() -> None:
    """``values`` and ``clusters`` as two pandas Series, one of them sorted or taken from another frame: they were
    paired by position, so a row met another row's cluster: the rate stayed right and the clustered SE did not
    (statsmodels' 0.1225 became 0.2). Series of one frame, in any order, give the rows' own interval."""
    rows = pd.DataFrame({"cluster": list("aabbccddee"), "passed": [1, 0, 1, 0, 1, 1, 1, 1, 0, 1]})
    fit = sm.OLS(rows["passed"].to_numpy(float), np.ones(10)).fit(
        cov_type="cluster", cov_kwds={"groups": pd.factorize(rows["cluster"])[0]})
    shuffled = rows.sort_values("passed")
    for call in (cluster_se, cluster_sums, rate_interval, cluster_t):
        with pytest.raises(ValueError, match="values and clusters are indexed by other rows or in another order"):
            call(shuffled["passed"], rows["cluster"])
    estimate, se = cluster_se(shuffled["passed"], shuffled["cluster"])
    assert estimate == 0.7 and se == pytest.approx(fit.bse[0], abs=1e-12)  # a hand count, and statsmodels' CR1
    expected = rate_interval(rows["passed"], rows["cluster"])
    assert rate_interval(shuffled["passed"], shuffled["cluster"]) == expected
    assert rate_interval(shuffled["passed"], shuffled["cluster"].to_numpy()) == expected  # an array: no labels
    assert rate_interval(rows["passed"].eq(1), rows["cluster"]) == expected  # a Series made from the frame's


def test_sums_whose_clusters_are_the_same_labels_of_another_dtype_are_paired() -> None:
    """``passes`` indexed by int64 cluster ids, ``rows`` by the same ids in the same order read as nullable Int64 (or
    Arrow int64, as a frame read with another ``dtype_backend`` has them): the same clusters, so the interval is the
    rows' own. ``Index.equals`` tells the dtypes apart, and they were refused as clusters in another order."""
    rows = pd.DataFrame({"cluster": [1, 1, 2, 2, 2, 2, 3, 4], "passed": [1, 1, 0, 0, 1, 0, 1, 1]})
    by_cluster = rows.groupby("cluster")["passed"]
    passes, counts = by_cluster.sum(), by_cluster.size()
    expected = rate_interval(rows["passed"], rows["cluster"])  # the rows' own interval
    assert (expected.estimate, expected.n, expected.n_clusters) == (5 / 8, 8, 4)  # a hand count
    for dtype in ("Int64", "int64[pyarrow]"):
        assert rate_interval_from_sums(passes, counts.set_axis(counts.index.astype(dtype))) == expected, dtype
    with pytest.raises(ValueError, match="indexed by other clusters"):  # other labels are still refused
        rate_interval_from_sums(passes, counts.set_axis(counts.index.astype(str)))


def test_sums_from_two_groupbys_that_keep_a_missing_cluster_id_are_paired() -> None:
    """Two groupbys with ``dropna=False`` of numeric cluster ids, one of them missing: both Series carry the labels
    1.0, 2.0, 3.0, NaN in that order, so they are paired (NaN is no label equal to itself, and it is still the same
    cluster at the same place); the interval is that of the arrays."""
    rows = pd.DataFrame({"cluster": [1.0, 1.0, 2.0, np.nan, np.nan, 3.0, 3.0, 3.0],
                         "passed": [1, 0, 1, 1, 1, 0, 1, 1]})
    passes = rows.groupby("cluster", dropna=False)["passed"].sum()
    counts = rows.groupby("cluster", dropna=False).size()
    assert passes.index is not counts.index and counts.tolist() == [2, 1, 3, 2]  # a hand count
    iv = rate_interval_from_sums(passes, counts)
    assert iv == rate_interval_from_sums(passes.to_numpy(), counts.to_numpy())
    assert (iv.estimate, iv.n, iv.n_clusters) == (6 / 8, 8, 4)


def _mixed_ids() -> np.ndarray:
    ids = np.empty(4, dtype=object)
    ids[:] = ["a", 1, "b", 1.0]  # unorderable; 1 == 1.0 is one cluster
    return ids


@pytest.mark.parametrize(("ids", "clustered"), [
    (["a", "b", "c", "d"], False),
    (["a", "b", "a", "d"], True),
    (pd.Series(["x", "y", "z", "y"], dtype="string"), True),
    (pd.Series(["x", "y", "z", "w"], dtype="string"), False),
    (_mixed_ids(), True),
    ([3, 1, 2, 0], False),
])
def test_auto_on_rows_decides_from_the_sums_it_computes(ids: object, clustered: bool) -> None:
    """``rate_interval``'s ``"auto"`` is decided from the rows per cluster its sums hold, as on sums:
    a hand count of repeated ids says which method runs, and the interval is that of the sums."""
    values = [1, 0, 1, 1]
    iv = rate_interval(values, ids)
    assert iv.method == ("cluster_t" if clustered else "clopper_pearson")
    k, m = cluster_sums(values, ids)
    assert iv == rate_interval_from_sums(k, m)


@pytest.mark.parametrize("confidence", [0.05, 0.3, 0.4999])
def test_the_public_intervals_refuse_an_alpha_given_as_the_confidence(confidence: float) -> None:
    """The gate refuses ``confidence: 0.05`` (alpha written for 0.95), but ``rate_interval_from_sums``,
    README's "the gate's interval from sums computed anywhere", gave the 5% interval: 34 of 40 got [0.831, 0.863]
    (scipy's exact interval at 5%), above a threshold of 0.8 that the 95% one, [0.702, 0.943], holds."""
    assert sps.binomtest(34, 40).proportion_ci(0.05, "exact").low > 0.8 > sps.binomtest(34, 40).proportion_ci().low
    for call in (lambda: rate_interval_from_sums([34], [40], "clopper_pearson", confidence),
                 lambda: rate_interval_from_sums([1] * 34 + [0] * 6, [1] * 40, confidence=confidence),
                 lambda: rate_interval([1] * 34 + [0] * 6, confidence=confidence)):
        with pytest.raises(ValueError, match=rf"confidence={confidence} is below 0\.5: .* not alpha \(0\.05\)"):
            call()
    iv = rate_interval_from_sums([34], [40], "clopper_pearson", 0.5)  # the lowest the gate takes stays
    assert (iv.low, iv.high) == pytest.approx(proportion_confint(34, 40, alpha=0.5, method="beta"), abs=1e-12)


def test_a_clustered_interval_of_more_rows_than_it_counts_exactly_is_refused() -> None:
    """Σk*/Σm* is the same for every resample when each count is multiplied by one factor, so the bootstrap
    interval is too; it was (0.338, 0.588) up to a factor of 2**20 and (0.128, 0.463) at 2**28 (7.9e10 rows, within
    the row-total limit of 2**62): the packed (k, m) keys and the products of two counts wrapped in int64. The
    clustered methods now refuse 2**28 rows or more, and the independent ones still count them."""
    rng = np.random.default_rng(0)
    m = rng.integers(5, 15, 30).astype(np.int64)
    k = np.array([rng.integers(0, size + 1) for size in m], dtype=np.int64)
    base = rate_interval_from_sums(k, m, "cluster_bootstrap")
    scaled = rate_interval_from_sums(k * 2**19, m * 2**19, "cluster_bootstrap")  # 1.55e8 rows, below the limit
    assert (scaled.low, scaled.high) == pytest.approx((base.low, base.high), abs=1e-12)
    for method in ("cluster_bootstrap", "cluster_t", "auto"):
        with pytest.raises(ValueError, match=r"^rows total 79,456,894,976: more than cluster_\w+ can count exactly"):
            rate_interval_from_sums(k * 2**28, m * 2**28, method)
    with pytest.raises(ValueError, match=r"^rows total 268,435,456: more than cluster_t"):  # the limit itself
        rate_interval_from_sums([1, 2**27], [2**27, 2**27], "cluster_t")
    assert rate_interval_from_sums(k * 2**28, m * 2**28, "clopper_pearson").n == int(m.sum()) * 2**28
