"""Paired, clustered difference of two rates and the exact McNemar test (full simulation: benchmarks/paired.md).

Outside references: statsmodels (McNemar; Clopper–Pearson when no row changed) and the matrix definitions of
tests/_cr2_reference.py (CR2 and Bell–McCaffrey from the hat matrix, the smallest logit-t bound over every data
set with more passes found by brute force, and their square-and-add of the two directions, `paired_interval`).
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from oloproof_nb._core.paired import mcnemar_exact, paired_difference_from_sums

sys.path.insert(0, str(Path(__file__).parents[1]))
from _cr2_reference import paired_interval  # noqa: E402

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
@pytest.mark.parametrize(("b", "k", "m", "n_min"), [
    ([2, 1, 3, 0, 2], [2, 1, 3, 0, 2], [2, 2, 3, 1, 3], None),  # nothing changed
    ([1], [0], [1], 1),  # one cluster of one row
])
def test_the_clopper_pearson_fallback_is_labeled_so(method, b, k, m, n_min):
    """d̂ ± the Clopper–Pearson bound was labeled ``cluster_t`` (or ``cluster_bootstrap``) in the compare table,
    where the gate labels its own fallback ``clopper_pearson``: a reader took it for a CR2 interval."""
    d = paired_difference_from_sums(b, k, m, method=method)
    assert d.method == "clopper_pearson" and d.reason
    if n_min is not None:  # d̂ = −1 ± u₀, u₀ = statsmodels' upper bound of 0 in n_min = 1 row (0.975)
        u = proportion_confint(0, n_min, alpha=0.05, method="beta")[1]
        assert (d.low, d.high) == pytest.approx((-1.0, -1.0 + u), abs=1e-12)
    changed = paired_difference_from_sums([2, 1, 3, 0, 2], [1, 1, 3, 0, 2], [2, 2, 3, 1, 3], method="cluster_t")
    assert changed.method == "cluster_t"


def test_the_fallback_keeps_the_degrees_of_freedom_cluster_t_has():
    """Nothing changed in 5 clusters of 2 rows: cluster_t falls back to d̂ ± u₀ and still reports its Bell–McCaffrey
    df, G − 1 = 4 with equal clusters; the bootstrap has none (NaN), nor has one cluster (t with 0 df is no
    distribution)."""
    b = [1, 2, 0, 1, 2]
    assert paired_difference_from_sums(b, b, [2] * 5).df == pytest.approx(4.0, abs=1e-12)
    assert math.isnan(paired_difference_from_sums(b, b, [2] * 5, method="cluster_bootstrap").df)
    assert math.isnan(paired_difference_from_sums([1], [0], [1]).df)


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


# ---------------------------------------------------------------- monotone bounds


def _bounds(b, k, m, confidence: float = 0.95) -> tuple[float, float]:
    d = paired_difference_from_sums(b, k, m, confidence=confidence)
    return d.low, d.high


#: The reported false pass: 21 clusters of 1–3 rows; the candidate equals the base except one row of cluster 6.
REPORTED_M = [1, 1, 3, 3, 1, 2, 2, 1, 1, 1, 3, 1, 2, 3, 3, 1, 1, 3, 2, 3, 2]
REPORTED_B = [0, 1, 0, 2, 1, 2, 1, 1, 0, 0, 2, 1, 0, 1, 1, 1, 0, 2, 0, 2, 2]


def test_one_row_turned_to_fail_is_never_judged_better_than_no_change():
    regressed = list(REPORTED_B)
    regressed[6] = 0
    unchanged_low, unchanged_high = _bounds(REPORTED_B, REPORTED_B, REPORTED_M)
    low, high = _bounds(REPORTED_B, regressed, REPORTED_M)
    # no change: ± the Clopper–Pearson bound of 0 discordant rows in n_min = 40²/92
    assert unchanged_low == pytest.approx(-(1 - 0.025 ** (92 / 1600)), abs=1e-12)
    assert low <= unchanged_low and high <= unchanged_high
    assert low < -0.1  # a margin of 0.1 cannot be cleared by a candidate that only lost a row


def _grid_bounds(m: list[int], free: int, rest: list[int]) -> dict[tuple, tuple[float, float]]:
    """Bounds for every (b_c, k_c) of the first ``free`` clusters; the others have b = k = ``rest``."""
    states = [[(mc, bc, kc) for bc in range(mc + 1) for kc in range(mc + 1)] for mc in m[:free]]
    return {combo: _bounds([s[1] for s in combo] + rest, [s[2] for s in combo] + rest, m)
            for combo in itertools.product(*states)}


@pytest.mark.parametrize(("m", "free", "rest"), [
    ([1, 2, 2] + [1, 2] * 8 + [1], 3, "all pass"),
    ([1, 2, 2] + [1, 2] * 8 + [1], 3, "some fail"),
    ([1, 1, 2, 2] + [2, 1] * 8, 4, "some fail"),
    ([1, 2, 2, 2] + [1, 2] * 8, 4, "all pass"),
])
def test_monotone_on_every_configuration_of_a_few_clusters(m, free, rest):
    """G = 20 clusters of 1 or 2 rows; the first ``free`` take every (b, k) (2,916 data sets at most), the
    others pass in both runs (or a third of them fail in both); every step to a better data set is checked:
    a candidate fail turned into a pass, or a base pass turned into a fail, never lowers either bound."""
    others = m[free:] if rest == "all pass" else [mc - (i % 3 == 0) for i, mc in enumerate(m[free:])]
    bounds = _grid_bounds(m, free, others)
    checked = 0
    for combo, (low, high) in bounds.items():
        for c, (mc, bc, kc) in enumerate(combo):
            for better in ((mc, bc, kc + 1), (mc, bc - 1, kc)):
                if 0 <= better[1] <= mc and 0 <= better[2] <= mc:
                    low2, high2 = bounds[combo[:c] + (better,) + combo[c + 1:]]
                    assert low2 >= low - 1e-12 and high2 >= high - 1e-12, (combo, c, better)
                    checked += 1
    sizes = m[:free]
    assert checked == sum(2 * s * (s + 1) * np.prod([(t + 1) ** 2 for j, t in enumerate(sizes) if j != i])
                          for i, s in enumerate(sizes))


def test_monotone_in_a_seeded_random_search():
    """As the search that found the false pass: G = 20..59 clusters of 1–3 rows, base rate 0.5–1, up to five
    random changes, then one step better (a candidate fail turned into a pass, or a base pass into a fail)."""
    rng = np.random.default_rng(1)
    bad = []
    for trial in range(600):
        g = int(rng.integers(20, 60))
        m = rng.integers(1, 4, g)
        b = rng.binomial(m, rng.uniform(0.5, 1))
        k = b.copy()
        for _ in range(rng.integers(0, 6)):
            c = rng.integers(g)
            k[c] = rng.integers(0, m[c] + 1)
        b2, k2 = b.copy(), k.copy()
        if trial % 2 == 0 and (k < m).any():
            k2[rng.choice(np.flatnonzero(k < m))] += 1
        elif (b > 0).any():
            b2[rng.choice(np.flatnonzero(b > 0))] -= 1
        (low, high), (low2, high2) = _bounds(b, k, m), _bounds(b2, k2, m)
        if low2 < low - 1e-12 or high2 < high - 1e-12:
            bad.append((m.tolist(), b.tolist(), k.tolist(), b2.tolist(), k2.tolist()))
    assert bad == []


@pytest.mark.parametrize("confidence", [0.8, 0.99])
def test_monotone_at_other_confidence_levels(confidence):
    """Away from the default level too (below 0.75 the gate's cluster_t is also widened to Clopper–Pearson)."""
    rng = np.random.default_rng(2)
    for _ in range(100):
        g = int(rng.integers(20, 40))
        m = rng.integers(1, 4, g)
        b = rng.binomial(m, rng.uniform(0.6, 1))
        k = np.where(rng.random(g) < 0.9, b, rng.binomial(m, 0.8))
        low, high = _bounds(b, k, m, confidence)
        for c in np.flatnonzero(k < m)[:3]:
            k2 = k.copy()
            k2[c] += 1
            low2, high2 = _bounds(b, k2, m, confidence)
            assert low2 >= low - 1e-12 and high2 >= high - 1e-12


@st.composite
def _paired_sums_and_a_step(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, bool, float]:
    """Clustered paired sums (G 2–12, 1–6 rows a cluster, any b and k), a cluster and which side gets better."""
    g = draw(st.integers(2, 12))
    m = np.array(draw(st.lists(st.integers(1, 6), min_size=g, max_size=g)))
    b = np.array([draw(st.integers(0, int(mc))) for mc in m])
    k = np.array([draw(st.integers(0, int(mc))) for mc in m])
    return m, b, k, draw(st.integers(0, g - 1)), draw(st.booleans()), draw(st.sampled_from([0.8, 0.9, 0.95, 0.99]))


@settings(max_examples=400, deadline=None)
@given(_paired_sums_and_a_step())
def test_monotone_and_symmetric_for_any_counts(case):
    """The two directions' correlation bound: a candidate fail turned into a pass, or a base pass into
    a fail, never lowers ``low`` or ``high``; swapping the runs negates the interval. Many rows change both ways
    here, where the correlation term is large (the searches above mostly change a few rows)."""
    m, b, k, c, candidate_side, confidence = case
    low, high = _bounds(b, k, m, confidence)
    swapped = _bounds(k, b, m, confidence)
    assert swapped == pytest.approx((-high, -low), abs=1e-12)
    b2, k2 = b.copy(), k.copy()
    if candidate_side and k[c] < m[c]:
        k2[c] += 1
    elif not candidate_side and b[c] > 0:
        b2[c] -= 1
    low2, high2 = _bounds(b2, k2, m, confidence)
    assert low2 >= low - 1e-12 and high2 >= high - 1e-12


# ---------------------------------------------------------------- the interval against its definition


@pytest.mark.parametrize(("b", "k", "m"), [
    ([2, 1, 0, 3, 1], [1, 1, 0, 3, 2], [2, 2, 1, 3, 2]),  # one row lost, one gained
    ([2, 2, 1, 3, 1], [1, 2, 0, 3, 1], [2, 2, 1, 3, 2]),  # two rows lost, none gained
    ([1, 1, 1, 0, 1, 1], [1, 0, 1, 1, 0, 1], [1, 1, 1, 1, 1, 1]),  # one row per cluster
    ([3, 0, 2, 1], [1, 2, 2, 0], [3, 2, 2, 1]),  # large changes both ways
])
def test_interval_equals_its_definition_by_brute_force(b, k, m):
    """The MOVER of the two directions (with the correlation bound c), each bound by brute force from the matrix
    definitions, over every product of cluster values and (as the compare tests use it, for larger G) once per
    order of alike clusters."""
    for confidence in (0.95, 0.9):
        d = paired_difference_from_sums(b, k, m, confidence=confidence)
        every = paired_interval(b, k, m, confidence, up_to_order=False)
        assert (d.low, d.high) == pytest.approx(every, abs=1e-10)
        assert paired_interval(b, k, m, confidence) == pytest.approx(every, abs=1e-12)


@pytest.mark.parametrize("clusters", [24, 50])
def test_no_change_is_the_clopper_pearson_bound_of_statsmodels(clusters):
    """Clusters of two rows, n_min = G: with no row changed, d̂ ± statsmodels' exact bound of 0 in G; from
    there a lost row moves both ends down (or leaves them) and a gained row moves both up."""
    m = np.full(clusters, 2)
    b = np.tile([2, 1, 2, 0], clusters // 4 + 1)[:clusters]
    zero = proportion_confint(0, clusters, 0.05, method="beta")[1]
    d = paired_difference_from_sums(b, b, m)
    assert (d.low, d.high) == pytest.approx((-zero, zero), abs=1e-12)
    gained, lost = b.copy(), b.copy()
    gained[1] += 1
    lost[0] -= 1
    assert paired_difference_from_sums(b, gained, m).low >= -zero - 1e-12
    assert paired_difference_from_sums(b, lost, m).low <= -zero + 1e-12
    assert paired_difference_from_sums(b, lost, m).high <= zero + 1e-12
    assert paired_difference_from_sums(b, gained, m).high >= zero - 1e-12


@pytest.mark.parametrize(("clusters", "half_width"), [(24, 0.142), (50, 0.0711), (100, 0.0362)])
def test_the_readmes_smallest_ruled_out_regression(clusters: int, half_width: float) -> None:
    """README §6a: with no row changed, the interval is ± the Clopper–Pearson bound of 0 discordant rows in
    n_min (clusters of two rows: n_min = G), i.e. 1 − (α/2)^(1/G) by hand, and statsmodels' exact interval of
    0 in G gives the same upper end."""
    m = np.full(clusters, 2)
    d = paired_difference_from_sums(m, m, m)
    by_hand = 1 - 0.025 ** (1 / clusters)
    assert d.high == pytest.approx(by_hand, abs=1e-12) and d.low == pytest.approx(-by_hand, abs=1e-12)
    assert d.high == pytest.approx(proportion_confint(0, clusters, alpha=0.05, method="beta")[1], abs=1e-12)
    assert round(d.high, len(str(half_width)) - 2) == half_width


def test_ruling_out_a_two_point_drop_takes_about_180_source_cases() -> None:
    """README §6a: 182 clusters of two unchanged rows still give ± 0.0201 > 0.02; 183 give ± 0.01996."""
    assert [paired_difference_from_sums(*[np.full(g, 2)] * 3).high > 0.02 for g in (182, 183)] == [True, False]


def test_one_lost_and_one_gained_row_widen_the_interval_only_a_little() -> None:
    """README §6a: 24 clusters of two rows, one row lost in one cluster and one gained in another: ±0.145 against
    ±0.1425 with no change (±0.141 before the two directions' correlation was counted; ±0.130 before each
    direction's bound was capped at what its clusters can vouch for); on the example's 47 rows
    (23 clusters of two, one of one) ±0.1462 against ±0.1438."""
    rows = np.full(24, 2)
    base, cand = rows.copy(), rows.copy()
    cand[0], base[1] = 1, 1
    d = paired_difference_from_sums(base, cand, rows)
    assert d.estimate == 0 and (round(d.low, 3), round(d.high, 3)) == (-0.145, 0.145)
    rows = np.r_[np.full(23, 2), 1]
    base, cand = rows.copy(), rows.copy()
    cand[0], base[1] = 1, 1
    example = paired_difference_from_sums(base, cand, rows)
    unchanged = paired_difference_from_sums(rows, rows, rows)
    assert (round(example.high, 4), round(unchanged.high, 4)) == (0.1462, 0.1438)


def test_a_candidate_that_lost_a_few_tries_is_not_held_closer_than_its_cases_can_vouch_for() -> None:
    """20 cases × 10 epochs, the candidate lost one try in each of 3 cases and gained none (d̂ = −0.015; the cap at
    what the cases can vouch for). 20 cases cannot rule out a share 1 − (α/2)^(1/20) of cases never drawn on
    which the candidate lost every try, so the net-loss rate's upper end is at least 1 − (α/2)^(1/20)·(1 − 3/200)
    and, with no gain, low = −(1 − 0.025^(1/20)·0.985) = −0.1809 by hand; before the cap it was −u₀ = −0.1684, the
    bound of no change at all."""
    m = np.full(20, 10)
    k = m.copy()
    k[:3] = 9
    d = paired_difference_from_sums(m, k, m)
    top = 0.025 ** (1 / 20)
    assert d.estimate == pytest.approx(-0.015)
    assert d.low == pytest.approx(-(1 - top * (1 - 3 / 200)), abs=1e-12)
    assert d.low < -(1 - top)  # wider on the loss side than no change at all


# ---------------------------------------------------------------- exact error rates on independent cases


@pytest.fixture(scope="module")
def twenty_independent_cases() -> dict[tuple[int, int], tuple[float, float]]:
    """(low, high) for every outcome of 20 cases of one row: b pass→fail and c fail→pass rows."""
    n = 20
    out = {}
    for b in range(n + 1):
        for c in range(n + 1 - b):
            base, cand = [1] * b + [0] * c + [1] * (n - b - c), [0] * b + [1] * c + [1] * (n - b - c)
            out[b, c] = _bounds(base, cand, [1] * n)
    return out


@pytest.mark.parametrize(("p10", "margin", "before"), [
    (0.5, 0.0, (0.0577, 0.0577)),    # two 50% agents disagreeing on every case
    (0.35, 0.0, (0.0404, 0.0404)),   # 35% of cases change each way
    (0.51, 0.02, (0.0480, 0.0688)),
    (0.525, 0.05, (0.0894, 0.0346)),
    (0.55, 0.1, (0.0580, 0.0553)),
])
def test_a_true_drop_equal_to_the_margin_gets_a_wrong_verdict_at_most_2_5_percent_of_the_time(
        twenty_independent_cases, p10, margin, before):
    """20 independent cases, (pass→fail, fail→pass, unchanged) ~ Multinomial(20; p10,
    p10 − margin, ·), true difference −margin. Summing scipy's multinomial probabilities of the outcomes whose
    interval gives NO_REGRESSION (low ≥ −margin) gives the exact chance of that wrong verdict, and of those whose
    interval gives REGRESSION (high < −margin) the chance of a wrong REGRESSION just inside the margin; each is
    promised at most 2.5%. Without the two directions' correlation they were ``before``."""
    p01 = p10 - margin
    probs = [p10, p01, max(0.0, 1.0 - p10 - p01)]
    wrong_pass = wrong_block = 0.0
    for (b, c), (low, high) in twenty_independent_cases.items():
        chance = float(stats.multinomial.pmf([b, c, 20 - b - c], 20, probs))
        wrong_pass += chance if low >= -margin else 0.0
        wrong_block += chance if high < -margin else 0.0
    assert wrong_pass <= 0.025 and wrong_block <= 0.025
    assert wrong_pass <= before[0] and wrong_block <= before[1]


# -- gaps a mutant showed -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("base", "candidate", "rows", "message"), [
    ([1, 2], [3, 0], [2, 2], "0 ≤ passes ≤ rows"),  # the candidate passes 3 of a cluster's 2 rows
    ([1, 2], [0.5, 1], [2, 2], "whole numbers"),     # half a pass
    ([1.5, 2], [1, 1], [2, 2], "whole numbers"),
])
def test_counts_no_run_could_give_are_refused(base: list[float], candidate: list[float], rows: list[int],
                                              message: str) -> None:
    with pytest.raises(ValueError, match=message):
        paired_difference_from_sums(base, candidate, rows)


def test_the_documented_coverage_figures_are_the_tables() -> None:
    """``paired_difference_from_sums``'s Coverage paragraph quotes benchmarks/paired.md (made by
    tests/reference/paired_simulation.py): each figure is the largest one-sided miss of its cells (stated coverage,
    pinned by no test before), so a table made again must change the prose with it."""
    from collections.abc import Callable

    text = (_PATH.parents[2] / "benchmarks" / "paired.md").read_text(encoding="utf-8")
    tables = [[line.strip("|").split("|") for line in block.splitlines() if line.startswith("| ")]
              for block in text.split("\n\n")]
    simulated, exact = [[dict(zip([c.strip() for c in t[0]], (c.strip() for c in line), strict=True))
                         for line in t[1:]] for t in tables if t]
    rows = simulated

    def worst(keep: Callable[[dict[str, str]], bool], sides: tuple[str, ...] = ("lower_miss", "upper_miss")) -> str:
        x = max(float(r[s]) for r in rows if keep(r) for s in sides)
        return f"{100 * x:.2f}".rstrip("0").rstrip(".") + "%"

    def cells(design: str, method: str, taus: tuple[str, ...] = (), g: str = "") -> Callable[[dict[str, str]], bool]:
        return lambda r: (r["design"] == design and r["method"] == method and (not g or r["G"] == g)
                          and (not taus or r["change"].split(",")[0] in taus))

    notes = " ".join((paired_difference_from_sums.__doc__ or "").split())
    assert f"each one-sided miss is at most {worst(cells('repeat', 'cluster_t', ('tau=0.7',)))} at the nominal" in notes
    rare = max(worst(cells("repeat", "cluster_t", ("tau=0.95", "tau=0.99"))), worst(cells("row_flips", "cluster_t")),
               key=lambda s: float(s[:-1]))
    assert f"(τ = 0.95 and 0.99, row-by-row flips) each miss is at most {rare}" in notes
    assert (f"the lower miss reaches {worst(cells('cluster_flips', 'cluster_t', g='50'), ('lower_miss',))} at G = 50"
            in notes)
    assert (f"misses up to {worst(cells('repeat', 'cluster_bootstrap', g='20'))} (G = 20) and "
            f"{worst(cells('repeat', 'cluster_bootstrap', g='50'))} (G = 50)") in notes
    # the exact table (tests/reference/paired_exact.py): agents passing 50-70% of the time, independently
    stochastic = [r for r in exact if float(r["p_b"]) <= 0.7]
    at_50, at_100 = (sorted(float(r[f"n = {n}"].rstrip("%")) for r in stochastic) for n in (50, 100))
    assert (f"low > truth in {at_50[0]:.1f}–{at_50[-1]:.1f}% (n = 50) and {at_100[0]:.1f}–{at_100[-1]:.1f}% "
            "(n = 100)") in notes


def test_the_readmes_paired_coverage_figures_are_the_tables() -> None:
    """README §6a's "Coverage, measured" and "Two runs of a stochastic agent" quote benchmarks/paired.md: the
    simulated table's largest misses per design, the exact table's row of agents passing 70% and 60% of the time,
    and the worst truth its prose gives per n (checked by hand only before). A table made again must change the
    README with it."""
    from collections.abc import Callable

    text = (_PATH.parents[2] / "benchmarks" / "paired.md").read_text(encoding="utf-8")
    tables = [[line.strip("|").split("|") for line in block.splitlines() if line.startswith("| ")]
              for block in text.split("\n\n")]
    simulated, exact = [[dict(zip([c.strip() for c in t[0]], (c.strip() for c in line), strict=True))
                         for line in t[1:]] for t in tables if t]
    readme = " ".join((_PATH.parents[2] / "README.md").read_text(encoding="utf-8").split())

    def worst(keep: Callable[[dict[str, str]], bool], sides: tuple[str, ...] = ("lower_miss", "upper_miss")) -> float:
        return max(float(r[s]) for r in simulated if keep(r) for s in sides)

    def pct(x: float) -> str:
        return f"{100 * x:.2f}".rstrip("0").rstrip(".") + "%"

    def cells(design: str, method: str = "cluster_t", taus: tuple[str, ...] = (), g: str = "") -> Callable[..., bool]:
        return lambda r: (r["design"] == design and r["method"] == method and (not g or r["G"] == g)
                          and (not taus or r["change"].split(",")[0] in taus))

    assert worst(cells("repeat", taus=("tau=0.7",))) == 0
    assert "true difference 0 and −0.03) no one-sided miss of the interval at all (nominal 2.5%)" in readme
    rare = max(worst(cells("repeat", taus=("tau=0.95", "tau=0.99"))), worst(cells("row_flips")))
    assert f"one by one with probability 0.02–0.1) at most **{pct(rare)}**" in readme
    flips = worst(cells("cluster_flips", g="50"), ("lower_miss",))
    assert f"a stress design, the lower miss reaches {pct(flips)} at G = 50" in readme
    boot = [pct(worst(cells("repeat", "cluster_bootstrap", g=g))) for g in ("20", "50")]
    assert f"bootstrap misses up to {boot[0]} at G = 20 and {boot[1]} at G = 50 (one side)" in readme
    assert f"`two_runs` cells (G = 20 and 50, clusters of 1 or 1–6 rows) each miss is at most " \
           f"{pct(worst(cells('two_runs')))}" in readme
    (row,) = [r for r in exact if (r["p_b"], r["p_c"]) == ("0.7", "0.6")]
    now = [f"{float(row[f'n = {n}'].rstrip('%')):.1f}%" for n in (50, 100)]
    assert f"Now **{now[0]} and {now[1]}**" in readme
    prose = " ".join(text.split()).split("a wrong NO_REGRESSION at most")[1].split("before)")[0]
    per_n = [float(x) for x in re.findall(r"(\d+\.\d+)% at n = \d+", prose)]
    assert len(per_n) == 4 and f"and at most **{max(per_n):.2f}%** over every truth (n = 20–100" in readme


def test_a_zero_width_bootstrap_gives_the_cluster_t_interval() -> None:
    """What the ``method`` parameter says: one resample whose Σe*/Σm* is d̂ itself (seed 0 here: the
    four clusters drawn give 2/8) makes a BCa interval of zero width, and the result is the ``cluster_t`` one."""
    b, k, m = [1, 1, 0, 0], [2, 1, 1, 0], [2, 2, 2, 2]
    boot = paired_difference_from_sums(b, k, m, method="cluster_bootstrap", resamples=1, seed=0)
    assert boot == paired_difference_from_sums(b, k, m, method="cluster_t")
    assert boot.method == "cluster_t" and boot.low < boot.estimate == 0.25 < boot.high
