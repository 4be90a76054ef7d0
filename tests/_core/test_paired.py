"""Paired, clustered difference of two rates and the exact McNemar test (full simulation: benchmarks/paired.md)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from oloproof_nb._core.paired import mcnemar_exact, paired_difference_from_sums

_PATH = Path(__file__).parents[1] / "reference" / "paired_simulation.py"
_spec = importlib.util.spec_from_file_location("paired_simulation", _PATH)
assert _spec is not None and _spec.loader is not None
paired_simulation = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(paired_simulation)


@pytest.mark.parametrize(("b", "c"), [(0, 0), (1, 0), (0, 5), (9, 2), (2, 9), (10, 10), (30, 12), (3, 40)])
def test_mcnemar_exact_equals_statsmodels(b, c):
    expected = mcnemar(np.array([[5, b], [c, 7]]), exact=True).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(expected, abs=1e-12)


def test_mcnemar_rejects_bad_counts():
    with pytest.raises(ValueError, match="whole numbers ≥ 0"):
        mcnemar_exact(-1, 2)


def test_difference_of_a_run_with_itself_is_zero_and_not_zero_width():
    b = np.array([2, 1, 3, 0, 2])
    m = np.array([2, 2, 3, 1, 3])
    d = paired_difference_from_sums(b, b, m)
    assert d.estimate == 0.0 and d.low < 0.0 < d.high and "do not vary" in d.reason


@pytest.mark.parametrize("method", ["cluster_t", "cluster_bootstrap"])
def test_swapping_the_runs_negates_the_interval(method):
    rng = np.random.default_rng(4)
    m = rng.integers(1, 6, 30)
    b = rng.binomial(m, 0.85)
    k = rng.binomial(m, 0.7)
    d = paired_difference_from_sums(b, k, m, method=method, resamples=2000)
    r = paired_difference_from_sums(k, b, m, method=method, resamples=2000)
    assert d.estimate == pytest.approx((k.sum() - b.sum()) / m.sum()) == -r.estimate
    assert d.low < d.estimate < d.high
    if method == "cluster_t":
        assert (d.low, d.high) == pytest.approx((-r.high, -r.low), abs=1e-12)


def test_difference_inputs_are_checked():
    with pytest.raises(ValueError, match="0 ≤ passes ≤ rows"):
        paired_difference_from_sums([3], [1], [2])
    with pytest.raises(ValueError, match="one entry per cluster"):
        paired_difference_from_sums([1, 1], [1], [2, 2])
    with pytest.raises(ValueError, match="method='wald' is unknown"):
        paired_difference_from_sums([1], [1], [2], method="wald")


@pytest.mark.parametrize(("g", "rho"), [(20, 0.3), (50, 0.5)])
def test_smoke_simulation_one_sided_misses(g, rho):
    row = paired_simulation.cell(g, rho, 0.9, -0.1, "cluster_t", reps=300, seed=3)
    assert row["lower_miss"] <= 0.05 and row["upper_miss"] <= 0.05
