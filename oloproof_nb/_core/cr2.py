"""The clustered t interval: CR2 standard error, Bell–McCaffrey degrees of freedom, and a lower bound
that is monotone by construction.

Everything here works on cluster sums: k_c passes and m_c rows in each of G clusters, N = Σm, p̂ = Σk/N.
The intercept-only regression of the rows on a constant has the hat matrix H = 11ᵀ/N, whose block for
cluster c is H_cc = 11ᵀ/N (m_c × m_c). Its CR2 adjustment (I − H_cc)^(−1/2) multiplies a cluster's
residual sum by 1/√(1 − m_c/N), so

    SE²_CR2 = Σ_c (k_c − p̂ m_c)² / (1 − m_c/N) / N²,

and the Bell–McCaffrey degrees of freedom under a working-independence model are

    ν = N² / (N² Σ m²/(N−m)² − 2N Σ m³/(N−m)² + (Σ m²/(N−m))²),

which depend on the cluster sizes only (ν = G − 1 when every cluster has the same size).
"""

from __future__ import annotations

import math

import numpy as np

from .binomial import Interval, all_pass_low, clopper_pearson, n_min, never_pass_cap

__all__ = ["cr2_se", "cr1_se", "bell_mccaffrey_df", "monotone_low", "cluster_t_from_sums", "EXACT_FAILURES",
           "LOW_CONFIDENCE", "cp_on_n_min", "cp_on_n_min_at", "fallback_reason", "low_confidence_floor"]

#: Up to this many failures the worst-case variance of a "better" data set is found exactly (dynamic
#: programming); above it, by the Lagrangian (fractional-knapsack) bound. A constant: it must not depend
#: on the data, or the lower bound would lose its monotonicity.
EXACT_FAILURES = 64
_CELLS = 2_000_000  # array cells held at once in the Lagrangian bound

#: Below this two-sided confidence the monotone bounds can meet at p̂ (a zero-width interval): when every
#: cluster has the same rate, S = 0 is skipped, and the data set with one failure fewer already gives a
#: bound above p̂ once t_ν·√S_max ≲ 1, which needs t_ν ≲ 1, a confidence ≲ 0.683 (the largest seen in a
#: sweep of designs: 0.68). So below it every interval — whatever the data, or the switch would break
#: monotonicity — is widened to hold Clopper–Pearson on n_min (:func:`low_confidence_floor`). A constant.
LOW_CONFIDENCE = 0.75


def cr1_se(k: np.ndarray, m: np.ndarray) -> float:
    """CR1 standard error of p̂: √(G/(G−1) · Σ(k_c − p̂m_c)²) / N; NaN when G < 2.

    ``k`` may hold any per-cluster sums of the rows (not only pass counts): the formula is the intercept's.
    """
    g, big_k, big_m = k.shape[0], k.sum(), int(m.sum())
    if g < 2:
        return float("nan")
    resid = (k * big_m - big_k * m).astype(float)  # = (k_c − p̂·m_c)·N, exact in integers
    return math.sqrt(g / (g - 1) * float(resid @ resid)) / big_m**2


def cr2_se(k: np.ndarray, m: np.ndarray) -> float:
    """CR2 standard error of p̂: √(Σ (k_c − p̂m_c)²/(1 − m_c/N)) / N; NaN when G < 2 (any per-cluster sums ``k``)."""
    g, big_k, big_m = k.shape[0], k.sum(), int(m.sum())
    if g < 2:
        return float("nan")
    resid = (k * big_m - big_k * m).astype(float) / big_m
    return math.sqrt(float(resid**2 @ (big_m / (big_m - m.astype(float))))) / big_m


def bell_mccaffrey_df(m: np.ndarray) -> float:
    """Bell–McCaffrey degrees of freedom of the CR2 t statistic of the intercept (sizes ``m``, G ≥ 2)."""
    mf = np.sort(m.astype(float))  # sorted: the same sizes in any order give the same float sums
    big = mf.sum()
    rest = big - mf
    den = big**2 * np.sum(mf**2 / rest**2) - 2 * big * np.sum(mf**3 / rest**2) + np.sum(mf**2 / rest) ** 2
    return float(big**2 / den)


def _types(j: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (failures, size) pairs of the failing clusters and how many clusters have each."""
    fail = j > 0
    base = int(m.max()) + 1
    keys, counts = np.unique(j[fail].astype(np.int64) * base + m[fail], return_counts=True)  # 1-D: fast
    return keys // base, keys % base, counts.astype(np.int64)


def _worst_exact(jt: np.ndarray, mt: np.ndarray, ct: np.ndarray, total: int, kept: np.ndarray) -> np.ndarray:
    """max Σ_c a_c·x_c(x_c − 2q m_c) over 0 ≤ x_c ≤ j_c with Σx = J', for each J' in ``kept`` (q = J'/N).

    Within one (j, m) type a convex separable sum is largest when the failures are packed (Schur-convexity):
    X failures over clusters of that type give ⌊X/j⌋ full clusters and one holding X mod j. The types are
    then combined by a max-plus convolution over the number of failures kept (a small knapsack).
    """
    rows, cap = kept.shape[0], int(kept.max())
    q = kept / total
    dp = np.full((rows, cap + 1), -np.inf)
    dp[:, 0] = 0.0
    for j, m, c in zip(jt.tolist(), mt.tolist(), ct.tolist(), strict=True):
        a = total / (total - m)
        x = np.arange(min(c * j, cap) + 1)
        full, part = x // j, x % j
        gain = a * (full[None, :] * (j * (j - 2 * q[:, None] * m))
                    + part[None, :] * (part[None, :] - 2 * q[:, None] * m))
        new = dp.copy()  # x = 0: this type keeps none of its failures (gain 0)
        for i in range(1, x.shape[0]):  # x = i failures of this type: new[:, s + i] ≥ dp[:, s] + gain[:, i]
            np.maximum(new[:, i:], dp[:, : cap + 1 - i] + gain[:, i : i + 1], out=new[:, i:])
        dp = new
    return dp[np.arange(rows), kept.astype(np.int64)]


def _lagrangian_rows(jt: np.ndarray, mt: np.ndarray, ct: np.ndarray, total: int, kept: np.ndarray) -> np.ndarray:
    """`_worst_lagrangian` row by row: the densities sorted afresh for every J' (used on short stretches, and
    where J' is below a type's failures j: there a cluster keeps at most u = min(j, J') of them, so its
    density is a(u − 2qm) and its weight c·u — with u = j, the same as on a stretch)."""
    out = np.empty(kept.shape[0])
    a = total / (total - mt.astype(float))
    step = max(1, _CELLS // max(1, jt.shape[0]))
    for start in range(0, kept.shape[0], step):
        cap = kept[start : start + step]
        q = cap / total
        u = np.minimum(jt[None, :], cap[:, None])  # a cluster keeps at most J' failures
        dens = a[None, :] * (u - 2 * q[:, None] * mt[None, :])
        order = np.argsort(-dens, axis=1)  # ties in density give the same bound in any order
        dens = np.take_along_axis(dens, order, 1)
        w = np.take_along_axis(ct[None, :] * u, order, 1)
        cum = np.cumsum(w, axis=1)
        stop = np.argmax(cum >= cap[:, None], axis=1)
        lam = dens[np.arange(cap.shape[0]), stop]
        before = np.arange(dens.shape[1])[None, :] < stop[:, None]
        out[start : start + step] = np.where(before, (dens - lam[:, None]) * w, 0.0).sum(axis=1) + lam * cap
    return out


def _density_order(jt: np.ndarray, mt: np.ndarray, a: np.ndarray, q: float) -> np.ndarray:
    """The types by decreasing density a(j − 2qm) at q (ties by type index)."""
    return np.argsort(-(a * (jt - 2 * q * mt)), kind="stable")


def _worst_lagrangian(jt: np.ndarray, mt: np.ndarray, ct: np.ndarray, total: int, kept: np.ndarray) -> np.ndarray:
    """An upper bound of the same maximum: its Lagrangian dual (a fractional knapsack, greedy by density).

    A cluster keeps x_c ≤ u_c = min(j_c, J') of its failures, so x_c(x_c − 2q m_c) ≤ x_c(u_c − 2q m_c) and,
    for every λ, max ≤ λJ' + Σ_c max(0, u_c(λ_c − λ)) with λ_c = a_c(u_c − 2q m_c); the minimum over λ is at
    the density where the greedy fill reaches J'. Each term only grows when a cluster has more failures,
    so the bound is nested like the exact maximum. (Without the cap at J' the bound is loose wherever a
    cluster holds many more failures than J': x² ≤ x·j.)

    Cost: the densities are lines in q = J'/N and two lines cross at most once, so the order of the types
    is the same on every stretch of ``kept`` whose two ends have the same order. Stretches are found by
    halving (one sort of the T types per end); on a stretch the greedy fill is a prefix of one order, so
    each J' costs a binary search in the cumulative weights and prefix sums (O(log T)), not a sort of
    the T types (O(T log T)) as row by row (`_lagrangian_rows`, still used for the rows of stretches of
    ≤ 16 rows, all of them in one vectorised call, and for every J' below the largest j, where the cap
    makes the densities depend on J' otherwise than through q). ``kept`` must be increasing.
    """
    result = np.empty(kept.shape[0])
    below = int(np.searchsorted(kept, jt.max(initial=0), side="left"))  # J' < the largest j: capped, row by row
    result[:below] = _lagrangian_rows(jt, mt, ct, total, kept[:below])
    kept, out = kept[below:], result[below:]  # the stretches fill the rest (out is a view of result)
    n = kept.shape[0]
    if n == 0:
        return result
    a = total / (total - mt.astype(float))
    weight = (ct * jt).astype(float)
    q = kept / total
    orders: dict[int, np.ndarray] = {}

    def order(i: int) -> np.ndarray:
        if i not in orders:
            orders[i] = _density_order(jt, mt, a, float(q[i]))
        return orders[i]

    short: list[np.ndarray] = []  # rows of short stretches: filled row by row, in one call at the end
    stack = [(0, n - 1)]
    while stack:
        lo, hi = stack.pop()
        if hi - lo < 16:
            short.append(np.arange(lo, hi + 1))
            continue
        o = order(lo)
        if not np.array_equal(o, order(hi)):
            mid = (lo + hi) // 2
            stack += [(lo, mid), (mid + 1, hi)]
            continue
        rows = slice(lo, hi + 1)
        cap, qs = kept[rows], q[rows]
        ja, ma, aa, w = jt[o].astype(float), mt[o].astype(float), a[o], weight[o]
        cum = np.cumsum(w)
        stop = np.searchsorted(cum, cap, side="left")  # the first type whose cumulative weight reaches J'
        lam = aa[stop] * (ja[stop] - 2 * qs * ma[stop])
        head_w = np.concatenate(([0.0], cum))[stop]  # Σ_{i<stop} w_i
        head_aj = np.concatenate(([0.0], np.cumsum(aa * ja * w)))[stop]  # Σ_{i<stop} a_i j_i w_i
        head_am = np.concatenate(([0.0], np.cumsum(aa * ma * w)))[stop]  # Σ_{i<stop} a_i m_i w_i
        out[rows] = (head_aj - 2 * qs * head_am - lam * head_w) + lam * cap
    if short:
        rows_left = np.concatenate(short)
        out[rows_left] = _lagrangian_rows(jt, mt, ct, total, kept[rows_left])
    return result


def equal_rate_low(k: np.ndarray, m: np.ndarray, confidence: float) -> float:
    """The lowest bound of a data set at least as good whose clusters all pass the same share of their rows.

    Such a data set says nothing about how clusters differ (its CR2 spread is zero), so it is judged as a
    degenerate one is: Clopper–Pearson on n_min = (Σm)²/Σm² with r·n_min successes. A common rate r makes
    every r·m_c whole exactly when r = j/d, d = gcd(m); the best-but-lowest one is the smallest j with
    j/d ≥ k_c/m_c for every c, and Clopper–Pearson's lower bound rises with r, so that r gives the minimum.
    At r = 1 it is the all-pass bound (α/2)^(1/n_min).
    """
    d = int(np.gcd.reduce(m))
    j = int(np.max(-((-k * d) // m)))  # the smallest j with j·m_c ≥ k_c·d for every cluster: ⌈k_c·d/m_c⌉, largest
    if j >= d:
        return all_pass_low(m, confidence)
    size = n_min(m)
    return clopper_pearson(j / d * size, size, confidence)[0]


def monotone_low(k: np.ndarray, m: np.ndarray, confidence: float, df: float | None = None) -> float:
    """The lower bound of `cluster_t_from_sums`: the CR2 logit-t bound made monotone (see Notes there)."""
    from scipy import special  # first use; not scipy.stats (t quantile: special.stdtrit, as stats.t.ppf computes it)
    order = np.argsort(m, kind="stable")  # float sums over sizes in one order: clusters may come in any order
    k, m = k[order], m[order]
    total, passed = int(m.sum()), int(k.sum())
    estimate = passed / total
    # the all-pass bound when a cluster passes every row, and never above what the clusters can vouch for
    top = min(equal_rate_low(k, m, confidence), never_pass_cap(k, m, confidence))
    if passed == total:
        return top
    if passed == 0:
        return 0.0
    jt, mt, ct = _types(m - k, m)
    failures = total - passed
    kept = np.arange(1, failures + 1, dtype=float)  # J' = N − K' failures left in a "better" data set
    worst = np.empty(failures)
    exact = kept <= EXACT_FAILURES
    if exact.any():
        worst[exact] = _worst_exact(jt, mt, ct, total, kept[exact])
    if not exact.all():
        worst[~exact] = _worst_lagrangian(jt, mt, ct, total, kept[~exact])
    q = kept / total
    size = m.astype(float)
    spread = worst + q**2 * float(np.sum(size**2 * total / (total - size)))  # Σ a_c (x_c − q m_c)², maximised
    t = float(special.stdtrit(bell_mccaffrey_df(m) if df is None else df, 0.5 + confidence / 2))
    p = 1.0 - q
    with np.errstate(divide="ignore", invalid="ignore"):
        half = t * np.sqrt(np.maximum(spread, 0.0)) / total / (p * q)
        bound = special.expit(special.logit(p) - half)
    bound = np.where(spread > 0, bound, np.inf)  # a zero spread carries no information about the variance
    return float(min(bound.min(initial=np.inf), top, estimate))


def cp_on_n_min_at(estimate: float, m: np.ndarray, confidence: float, reason: str) -> Interval:
    """The fallback of every clustered interval: Clopper–Pearson on the effective size n_min = (Σm)²/Σm² with
    ``estimate``·n_min successes, labeled ``clopper_pearson`` with ``reason`` (``n`` = Σm, ``n_clusters`` = G)."""
    size = n_min(m)
    low, high = clopper_pearson(estimate * size, size, confidence)
    return Interval(estimate, low, high, "clopper_pearson", int(m.sum()), m.shape[0],
                    f"{reason}; clopper_pearson on n_min={size:.4g}")


def cp_on_n_min(k: np.ndarray, m: np.ndarray, confidence: float, reason: str) -> Interval:
    """Clopper–Pearson on the effective size n_min = (Σm)²/Σm² with p̂·n_min successes, p̂ = Σk/Σm
    (:func:`cp_on_n_min_at`)."""
    return cp_on_n_min_at(int(k.sum()) / int(m.sum()), m, confidence, reason)


def fallback_reason(k: np.ndarray, m: np.ndarray, method: str) -> str | None:
    """Why a clustered ``method`` cannot be computed on these sums (every row agrees, or G < 2), or None."""
    total, passed, g = int(m.sum()), int(k.sum()), k.shape[0]
    if passed in (0, total):
        if total == 1:  # "all 1 rows pass" read as a typo in a first suite's one-case criterion
            return "degenerate: its one row passes" if passed else "degenerate: its one row does not pass"
        return f"degenerate: all {total} rows pass" if passed else f"degenerate: none of the {total} rows passes"
    if g < 2:
        return f"too few clusters for {method}: G={g}, need at least 2"
    return None


def cluster_t_from_sums(k: np.ndarray, m: np.ndarray, confidence: float) -> Interval:
    """The ``cluster_t`` interval from cluster sums (validated by the caller); see :func:`cluster_t`."""
    why = fallback_reason(k, m, "cluster_t")
    if why is not None:
        return cp_on_n_min(k, m, confidence, why)
    total, passed, g = int(m.sum()), int(k.sum()), k.shape[0]
    df = bell_mccaffrey_df(m)
    low = monotone_low(k, m, confidence, df)
    high = 1.0 - monotone_low(m - k, m, confidence, df)
    low, high = low_confidence_floor(low, high, passed / total, m, confidence)
    same = bool((k * total == passed * m).all())  # every cluster at one rate: its bounds are equal_rate_low's
    why = f"every cluster passes the same share of its rows; at most clopper_pearson on n_min={n_min(m):.4g}"
    return Interval(passed / total, low, high, "cluster_t", total, g, why if same else "")


def low_confidence_floor(low: float, high: float, estimate: float, m: np.ndarray,
                         confidence: float) -> tuple[float, float]:
    """Below :data:`LOW_CONFIDENCE`, widen [low, high] to hold Clopper–Pearson on n_min; else unchanged.

    The widening depends on the confidence only, never on the data: an interval that fell back to
    Clopper–Pearson only when it came out zero width would give a worse data set a higher lower bound
    (at confidence 0.5, clusters of 4, 4, 2 rows passing 2, 2, 0 got 0.309 from ``cluster_t``; one more
    pass, 2, 2, 1 — every cluster at 1/2 — got 0.187 from Clopper–Pearson). Clopper–Pearson on
    n_min = (Σm)²/Σm² with p̂·n_min successes rises with every added pass (same sizes), and the minimum
    (maximum) of two bounds that never fall keeps that property. For 0 < p̂ < 1 its bounds lie strictly
    around p̂, so the interval is never zero width.
    """
    if confidence >= LOW_CONFIDENCE:
        return low, high
    size = n_min(m)
    cp_low, cp_high = clopper_pearson(estimate * size, size, confidence)
    return min(low, cp_low), max(high, cp_high)
