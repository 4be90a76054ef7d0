"""Paired comparison of two rates on the same cases: a clustered interval of the difference, and McNemar.

From cluster-level paired sums: per cluster c, m_c rows judged in both runs, b_c passes in the base run and
k_c in the candidate. The row differences y_i = candidate_i − base_i ∈ {−1, 0, 1} have cluster sums
e_c = k_c − b_c, and the difference of rates is d̂ = Σe/Σm. Each cluster's net loss max(−e_c, 0) and net gain
max(e_c, 0) are two rates on the same clusters; each gets the gate's monotone CR2 logit-t bound, and the MOVER
combines them with a bound on their (negative) correlation that grows with one direction's count only, so the
interval only moves up when the candidate gets better (see `paired_difference_from_sums`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .binomial import all_pass_low, check_confidence, n_min
from .bootstrap import bca_ratio
from .cr2 import bell_mccaffrey_df, monotone_low

__all__ = ["Difference", "paired_difference_from_sums", "mcnemar_exact"]


@dataclass(frozen=True)
class Difference:
    """A difference of two paired rates (candidate − base) with its confidence interval.

    Attributes
    ----------
    base, candidate : float
        The two rates, Σb/Σm and Σk/Σm.
    estimate : float
        d̂ = candidate − base.
    low, high : float
        Interval bounds, −1 ≤ low ≤ estimate ≤ high ≤ 1, low < high.
    method : str
        ``"cluster_t"`` or ``"cluster_bootstrap"``; ``"clopper_pearson"`` for d̂ ± u₀ (fewer than two clusters,
        or paired differences that do not vary: see `reason`), as the gate labels its own fallback.
    n : int
        Paired rows Σm.
    n_clusters : int
        Clusters G.
    df : float
        Bell–McCaffrey degrees of freedom (NaN for the bootstrap).
    reason : str
        Why a fallback was used; empty otherwise.
    """

    base: float
    candidate: float
    estimate: float
    low: float
    high: float
    method: str
    n: int
    n_clusters: int
    df: float
    reason: str = ""


def _counts(name: str, value: ArrayLike) -> np.ndarray:
    raw = np.asarray(value)
    if raw.ndim != 1 or raw.size == 0 or raw.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be a non-empty one-dimensional array of counts (one per cluster)")
    out = raw.astype(np.int64)
    if not np.array_equal(out, raw):
        raise ValueError(f"{name} must hold whole numbers (counts per cluster)")
    return out


def paired_difference_from_sums(
    base_passes: ArrayLike,
    candidate_passes: ArrayLike,
    rows: ArrayLike,
    method: str = "cluster_t",
    confidence: float = 0.95,
    *,
    resamples: int = 10_000,
    seed: int | None = 0,
) -> Difference:
    """Paired, clustered interval of candidate rate − base rate from per-cluster sums.

    Parameters
    ----------
    base_passes : array-like of int
        Passes per cluster in the base run, b_c (0 ≤ b_c ≤ m_c).
    candidate_passes : array-like of int
        Passes per cluster in the candidate run, k_c, on the same rows.
    rows : array-like of int
        Rows judged in both runs per cluster, m_c ≥ 1.
    method : {"cluster_t", "cluster_bootstrap"}, default "cluster_t"
        ``cluster_t``: the MOVER of the net-loss and net-gain rates' monotone CR2 logit-t intervals
        (Bell–McCaffrey degrees of freedom) with a bound on their correlation, monotone by construction;
        ``cluster_bootstrap``: BCa over resampled clusters of Σe*/Σm* (not monotone; it does not decide); a BCa
        interval of zero width gives the ``cluster_t`` one instead, labeled ``cluster_t``.
    confidence : float, default 0.95
        Two-sided confidence level in (0, 1).
    resamples : int, default 10_000
        Bootstrap resamples (``cluster_bootstrap`` only).
    seed : int or None, default 0
        Bootstrap seed (``cluster_bootstrap`` only).

    Returns
    -------
    Difference
        ``base, candidate, estimate, low, high, method, n, n_clusters, df, reason``.

    Notes
    -----
    **Two directions.** With N = Σm, each cluster's paired sum e_c = k_c − b_c splits into a net loss
    x⁻_c = max(−e_c, 0) and a net gain x⁺_c = max(e_c, 0), both in [0, m_c], so d̂ = p̂⁺ − p̂⁻ with p̂± = Σx±/N.
    Each direction's rate gets the gate's `cluster_t` bounds (CR2 logit-t, Bell–McCaffrey ν of the sizes,
    monotone by construction): ℓ(x) the smallest CR2 logit-t bound over every data set with more hits, capped
    at the Clopper–Pearson bound of the best-but-lowest data set whose clusters all hit at one rate — the
    all-hit bound (α/2)^(1/n_min) when a cluster hits on every row (``cr2.monotone_low``,
    ``cr2.equal_rate_low``; ℓ(0) = 0) — and υ(x) = 1 − ℓ(m − x), so a
    direction's upper end is never below u₀ = 1 − (α/2)^(1/n_min), the Clopper–Pearson bound of 0 discordant
    rows in n_min = (Σm)²/Σm². The MOVER (Zou & Donner 2008) combines them with a bound c on the correlation
    of p̂⁺ and p̂⁻, which is ≤ 0 (a cluster has a net loss or a net gain, not both):

        low  = d̂ − √(A² + B² + 2·c⁻·A·B),     A = p̂⁺ − ℓ(x⁺),   B = υ(x⁻) − p̂⁻,
        high = d̂ + √(A'² + B'² + 2·c⁺·A'·B'),  A' = υ(x⁺) − p̂⁺,  B' = p̂⁻ − ℓ(x⁻),
        c⁻ = min(1, υ(x⁻)/(1 − υ(x⁻))),        c⁺ = min(1, υ(x⁺)/(1 − υ(x⁺))),   c± = 0 when x± = 0,

    clipped to [−1, 1]; c = 0 is Newcombe's square-and-add for independent rates (method 10 of Newcombe 1998a),
    c = 1 adds the two half-widths. For n independent rows (one per cluster) the counts are multinomial and
    corr(p̂⁺, p̂⁻) = −√(p⁺p⁻/((1 − p⁺)(1 − p⁻))), at most p⁻/(1 − p⁻) in size where p⁺ ≤ p⁻: the truths
    d ≤ 0 at which a ``low`` above −margin is a wrong NO_REGRESSION. c⁻ puts the net-loss rate's upper end in
    place of p⁻ (a plug-in, not a proof: see Coverage); ``high`` mirrors it, for the truths d ≥ 0. With no net
    loss (or no net gain) at all the estimate p̂⁺p̂⁻ of the covariance is 0 and so is c, which keeps the
    interval of a candidate that only lost (or only gained) rows as it was before the correlation. When no
    cluster changed (e = 0) this is d̂ ± u₀ (``reason`` says so), never zero width; with G < 2 clusters (no
    Bell–McCaffrey ν) the interval is d̂ ± u₀ too.

    **Monotone by construction.** ℓ and υ are non-decreasing in every x_c (the gate's bound is a minimum over the
    data sets with more hits, a set that only shrinks when x_c rises, capped at L_all·p̂, which rises). A candidate
    fail turned into a pass, or a base pass turned into a fail, raises one e_c by 1 and d̂ by 1/N. Either x⁻_c falls
    by 1: p̂⁻ falls by 1/N and υ(x⁻) does not rise, so B = υ(x⁻) − p̂⁻ rises by at most 1/N and c⁻ does not rise (c⁻
    is 0 at x⁻ = 0 and ≥ 0 above it, non-decreasing); or x⁺_c rises by 1: ℓ(x⁺) does not fall, so A = p̂⁺ − ℓ(x⁺)
    rises by at most 1/N, and c⁻ (of x⁻ only) stays. For A, B ≥ 0 and 0 ≤ c ≤ 1, √(A² + B² + 2cAB) is non-decreasing
    in c, A and B and 1-Lipschitz in each of A, B (its slope in A is (A + cB)/√(A² + B² + 2cAB) ≤ 1, as
    (A + cB)² = A² + 2cAB + c²B²), so it rises by at most 1/N and ``low`` does not fall; ``high`` is the mirror
    image (c⁺ is of x⁺ only and does not fall when x⁺ rises). So a candidate that gets better never gets a lower
    ``low`` or ``high``, a base that gets better never a higher one, and a candidate that only lost rows has A = 0,
    so low = d̂ − B ≤ −u₀, the bound of no change. Swapping the runs swaps x⁺ and x⁻ and negates the interval.

    **Why these choices.** The correlation bound of ``low`` depends on the net-loss count alone (that of ``high`` on
    the net-gain count): a correlation estimated from both counts, such as the plug-in
    −√(p̂⁺p̂⁻/((1 − p̂⁺)(1 − p̂⁻))), rises in size when the candidate gains a row and would break the argument
    above. Leaving the correlation out (c = 0) makes it too narrow where many rows change both ways (two runs of a
    stochastic agent): on n independent cases the exact chance of NO_REGRESSION at a true drop equal to the margin
    reaches 5.4–8.9% (n = 20–100, margins 0–0.2), against 1.1–2.4% with c
    (``tests/reference/paired_exact.py --worst``). c = 1 is valid too but wider: at n = 50 and p⁺ = p⁻ = 0.1 the median
    width is 0.282 with c = 0, 0.314 with c and 0.379 with c = 1. The cap on n_min keeps a direction in which
    nothing (or little) changed as uncertain as no change at all, which monotonicity requires once no change is
    d̂ ± u₀ and the ICC of the changes is unknown. A cap on N (independent rows) gives narrower intervals, but then
    one gained row moves ``low`` from −u₀ to about −2.7/N, and in a simulation with that cap the lower bound
    was above the truth 6.25% of the time when whole clusters change together (``cluster_flips``, G = 20,
    p10 = p01 = 0.05). Newcombe's method 10 on the two runs' rates with their CR2 correlation (d̂ ± u₀ when no
    cluster changed) is not monotone: with 21 clusters of 1–3 rows, a candidate that lost one row gets
    low = −0.075 and an unchanged one −0.191.

    **Coverage** (benchmarks/paired.md: ``python tests/reference/paired_simulation.py --reps 2000``, 2,000
    repetitions per cell). In the ``repeat`` cells (τ = 0.7, G = 20 and 50) each one-sided miss is at most
    0% at the nominal 2.5% (2.4% with that Newcombe interval), at a price in width: without the cap on what the
    clusters can vouch for (``binomial.never_pass_cap``) the median interval was 1.22–1.94 times as wide as the
    Newcombe one at G = 20 and 1.18–1.65 times at G = 50, because a direction's upper end never falls below u₀,
    and the cap makes it 1.04–1.21 (G = 20) and 1.14–1.50 (G = 50) times as wide again. Where changes are rare
    (τ = 0.95 and 0.99, row-by-row flips) each miss is at most 0.8%; where whole clusters change together (a
    stress design) the lower miss reaches 1.05% at G = 50 (3.3% without the cap; 6.25% at G = 20 with the cap on
    N above and without it). The ``cluster_bootstrap`` option misses up to 7.05% (G = 20) and 5.3%
    (G = 50), so a regression rule should decide with ``cluster_t``. Where many rows change both ways (two
    independent runs of an agent that passes each case 50–70% of the time), counted exactly on independent cases
    (``python tests/reference/paired_exact.py``), low > truth in 1.2–1.5% (n = 50) and 1.6–1.8% (n = 100) of
    samples (2.6–3.3% and 3.3–3.7% with c = 0). Over every truth (``--worst``:
    n = 20–100, margins 0–0.2) a wrong NO_REGRESSION at a true drop equal to the margin is at most 2.35% (8.9%
    with c = 0); a wrong REGRESSION just inside the margin is at most 2.07% with p10 ≤ 0.35 and passes 2.5% only where
    90% or more of the cases change (2.72% at n = 100, margin 0.1, p10 = 0.55, p01 = 0.45; 2.87% at margin 0.2).
    In the simulated ``two_runs`` cells (clusters drawn independently in the two runs) each miss is at most 1.45%
    (3.3% with c = 0), at 1.09–1.30 times the width of c = 0; in the other cells c changes no miss and widens the
    interval 1.00–1.05 times.

    References
    ----------
    Newcombe, R. G. (1998a). Interval estimation for the difference between independent proportions:
    comparison of eleven methods. Statistics in Medicine 17(8), 873–890.
    Newcombe, R. G. (1998b). Improved confidence intervals for the difference between binomial proportions
    based on paired data. Statistics in Medicine 17(22), 2635–2650.
    Zou, G. Y. & Donner, A. (2008). Construction of confidence limits about effect measures: a general
    approach. Statistics in Medicine 27(10), 1693–1702.
    Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated in the case
    of the binomial. Biometrika 26(4), 404–413.
    Bell, R. M. & McCaffrey, D. F. (2002). Survey Methodology 28(2), 169–181.
    Pustejovsky, J. E. & Tipton, E. (2018). JBES 36(4), 672–683.

    Examples
    --------
    >>> d = paired_difference_from_sums([2, 2, 1, 2], [1, 2, 1, 1], [2, 2, 2, 2])
    >>> round(d.estimate, 4), d.low < d.estimate < d.high
    (-0.25, True)
    >>> same = paired_difference_from_sums([2, 1, 2, 2], [2, 1, 2, 2], [2, 2, 2, 2])
    >>> lost = paired_difference_from_sums([2, 1, 2, 2], [1, 1, 2, 2], [2, 2, 2, 2])
    >>> round(same.low, 4), lost.low <= same.low  # no change: ± the exact bound of 0 in n_min = 4
    (-0.6024, True)
    """
    if method not in ("cluster_t", "cluster_bootstrap"):
        raise ValueError(f"method={method!r} is unknown; use 'cluster_t' or 'cluster_bootstrap'")
    confidence = check_confidence(confidence)
    b, k, m = _counts("base_passes", base_passes), _counts("candidate_passes", candidate_passes), _counts("rows", rows)
    if not b.shape == k.shape == m.shape:
        raise ValueError("base_passes, candidate_passes and rows must have one entry per cluster each")
    if (m < 1).any() or (b < 0).any() or (k < 0).any() or (b > m).any() or (k > m).any():
        raise ValueError("every cluster needs rows ≥ 1 and 0 ≤ passes ≤ rows in both runs")
    total, g = int(m.sum()), m.size
    e = k - b
    est = float(e.sum()) / total
    base, cand = float(b.sum()) / total, float(k.sum()) / total

    def no_spread(why: str, df: float) -> Difference:  # labeled as the gate labels its fallback
        u = 1.0 - all_pass_low(m, confidence)  # u₀, the Clopper–Pearson bound of 0 discordant rows in n_min
        return Difference(base, cand, est, max(-1.0, est - u), min(1.0, est + u), "clopper_pearson", total, g, df,
                          f"{why}: d̂ ± the Clopper–Pearson bound of 0 discordant rows in n_min={n_min(m):.4g}")

    if g < 2:
        return no_spread("too few clusters", float("nan"))
    if method == "cluster_bootstrap":
        if not e.any():
            return no_spread("the paired differences do not vary", float("nan"))
        # every cluster changed at one rate (e_c = d̂·m_c ≠ 0): every resample gives d̂, a zero-width BCa interval,
        # so the cluster_t one below (d̂ ± u₀ here was narrower than it: 2 clusters of 1,000 rows that lost every
        # row got [−1, −0.158], where cluster_t gives [−1, +0.191])
        if float((e - est * m) ** 2 @ (total / (total - m.astype(float)))) > 1e-24 * total**2:
            low, high = bca_ratio(e, m, confidence, resamples, seed)
            low, high = min(low, est), max(high, est)
            if low < high:
                return Difference(base, cand, est, low, high, method, total, g, float("nan"))
    df = bell_mccaffrey_df(m)
    if not e.any():  # what _two_directions gives too: ℓ(0) = 0 and υ(0) = u₀ on both sides
        return no_spread("the paired differences do not vary", df)
    low, high = _two_directions(e, m, confidence, df)
    return Difference(base, cand, est, low, high, "cluster_t", total, g, df)


def _two_directions(e: np.ndarray, m: np.ndarray, confidence: float, df: float) -> tuple[float, float]:
    """(low, high): the MOVER of the gate's monotone intervals of the net-loss and net-gain rates with the
    correlation bound c (G ≥ 2, ``df`` the Bell–McCaffrey degrees of freedom of the sizes; see
    `paired_difference_from_sums`)."""
    total = int(m.sum())
    down, up = np.maximum(-e, 0), np.maximum(e, 0)
    p_down, p_up = float(down.sum()) / total, float(up.sum()) / total
    low_down, high_down = monotone_low(down, m, confidence, df), 1.0 - monotone_low(m - down, m, confidence, df)
    low_up, high_up = monotone_low(up, m, confidence, df), 1.0 - monotone_low(m - up, m, confidence, df)
    low = p_up - p_down - _mover(p_up - low_up, high_down - p_down, _correlation_bound(down, high_down))
    high = p_up - p_down + _mover(high_up - p_up, p_down - low_down, _correlation_bound(up, high_up))
    return max(-1.0, low), min(1.0, high)


def _correlation_bound(hits: np.ndarray, upper: float) -> float:
    """c = min(1, υ/(1 − υ)) of one direction's rate with upper end υ, or 0 when no cluster changed that way."""
    if not hits.any():
        return 0.0
    return 1.0 if upper >= 0.5 else upper / (1.0 - upper)


def _mover(a: float, b: float, c: float) -> float:
    """√(a² + b² + 2·c·a·b): the half-width of a difference whose two estimates have correlation −c."""
    return math.sqrt(max(0.0, a * a + b * b + 2.0 * c * a * b))


def mcnemar_exact(pass_to_fail: int, fail_to_pass: int) -> float:
    """Exact two-sided McNemar p-value for unclustered paired binary rows.

    Parameters
    ----------
    pass_to_fail : int
        Rows that pass in the base run and fail in the candidate (b).
    fail_to_pass : int
        Rows that fail in the base run and pass in the candidate (c).

    Returns
    -------
    float
        min(1, 2 · P[X ≤ min(b, c)]) with X ~ Binomial(b + c, ½); 1 when b + c = 0. Equal to statsmodels
        ``mcnemar(table, exact=True).pvalue``.

    References
    ----------
    McNemar, Q. (1947). Note on the sampling error of the difference between correlated proportions or
    percentages. Psychometrika 12(2), 153–157.

    Examples
    --------
    >>> round(mcnemar_exact(9, 2), 4)
    0.0654
    """
    from scipy import stats  # imported on first use: keeps `import oloproof_nb` fast
    b, c = int(pass_to_fail), int(fail_to_pass)
    if b < 0 or c < 0 or b != pass_to_fail or c != fail_to_pass:
        raise ValueError(f"flip counts must be whole numbers ≥ 0, got {pass_to_fail!r} and {fail_to_pass!r}")
    if b + c == 0:
        return 1.0
    return float(min(1.0, 2.0 * stats.binom.cdf(min(b, c), b + c, 0.5)))
