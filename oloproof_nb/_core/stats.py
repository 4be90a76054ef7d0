"""Intervals for pass rates, with and without clustered cases.

Pure NumPy/SciPy/statsmodels: no pandas, no files, no plotting. Rows are binary
(pass = 1; fail and missing = 0). With cluster sums k_c (passes) and m_c (rows)
over G clusters the rate is the ratio p̂ = Σk/Σm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "METHODS",
    "Interval",
    "clopper_pearson",
    "cluster_bootstrap",
    "cluster_se",
    "cluster_sums",
    "cluster_t",
    "is_clustered",
    "rate_interval",
    "wilson",
]

METHODS: tuple[str, ...] = ("clopper_pearson", "wilson", "cluster_t", "cluster_bootstrap")
_CLUSTERED = ("cluster_t", "cluster_bootstrap")
_CHUNK_CELLS = 2_000_000  # bootstrap draws held at once: resamples per chunk × cluster types


@dataclass(frozen=True)
class Interval:
    """A pass rate with its confidence interval.

    Attributes
    ----------
    estimate : float
        The rate p̂ = Σk/Σm.
    low, high : float
        Interval bounds, 0 ≤ low ≤ estimate ≤ high ≤ 1 and low < high.
    method : str
        The method that produced ``low`` and ``high`` (one of `METHODS`); a clustered
        method that fell back says ``"clopper_pearson"``.
    n : int
        Number of rows.
    n_clusters : int
        Number of clusters G (equal to ``n`` when rows are not clustered).
    reason : str
        Why a fallback was used (starts with ``"degenerate"`` when every row agrees); empty otherwise.
    """

    estimate: float
    low: float
    high: float
    method: str
    n: int
    n_clusters: int
    reason: str = ""


# ---------------------------------------------------------------- validation


def _check_confidence(confidence: float) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float, np.floating, np.integer)):
        raise ValueError(f"confidence={confidence!r} is not a number; use a probability in (0, 1), e.g. 0.95")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence={confidence!r} is outside (0, 1); use e.g. 0.95")
    return float(confidence)


def _as_values(values: ArrayLike) -> np.ndarray:
    if np.asarray(values).dtype.kind in "USM":
        raise ValueError("values must be 0/1 (or bool) numbers, not strings or dates")
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"values must be 0/1 (or bool) numbers; could not read them as numbers: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"values must be one-dimensional; got an array of shape {arr.shape}")
    if arr.size == 0:
        raise ValueError("values is empty; an interval needs at least one row")
    if np.isnan(arr).any():
        raise ValueError(
            f"values contains NaN at row {int(np.flatnonzero(np.isnan(arr))[0])}; "
            "a missing case counts as a fail, so pass 0 for it"
        )
    bad = (arr != 0) & (arr != 1)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(f"values contains {arr[row]:g} at row {row}; only 0/1 (or False/True) are allowed")
    return arr.astype(np.int64)


def _codes(clusters: ArrayLike | None, n: int) -> np.ndarray:
    """Integer codes 0..G-1 for ``clusters`` (each row its own cluster when None)."""
    if clusters is None:
        return np.arange(n)
    arr = np.asarray(clusters)
    if arr.ndim != 1:
        raise ValueError(f"clusters must be one-dimensional; got an array of shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"clusters has {arr.shape[0]} ids but values has {n} rows; give one id per row")
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError("clusters contains NaN; every row needs a cluster id")
    if arr.dtype.kind == "O" and any(c is None or (isinstance(c, float) and math.isnan(c)) for c in arr):
        raise ValueError("clusters contains None/NaN; every row needs a cluster id")
    try:
        return np.unique(arr, return_inverse=True)[1].reshape(-1)
    except TypeError:  # mixed, unorderable ids: factorize in order of appearance
        seen: dict[object, int] = {}
        return np.array([seen.setdefault(c, len(seen)) for c in arr.tolist()], dtype=np.int64)


def _sums(values: ArrayLike, clusters: ArrayLike | None) -> tuple[np.ndarray, np.ndarray]:
    y = _as_values(values)
    codes = _codes(clusters, y.shape[0])
    return np.bincount(codes, weights=y).astype(np.int64), np.bincount(codes).astype(np.int64)


# ---------------------------------------------------------------- binomial intervals


def _binomial(successes: float, nobs: float, confidence: float, method: str) -> tuple[float, float]:
    confidence = _check_confidence(confidence)
    if not (np.isfinite(nobs) and nobs > 0):
        raise ValueError(f"nobs={nobs!r} must be a positive number")
    if not (np.isfinite(successes) and 0 <= successes <= nobs):
        raise ValueError(f"successes={successes!r} must lie in [0, nobs={nobs!r}]")
    from statsmodels.stats.proportion import proportion_confint  # imported on first use: keeps `import` fast

    low, high = proportion_confint(successes, nobs, alpha=1.0 - confidence, method=method)
    # exact ends: the Wilson bounds at k = 0 and k = n are 0 and 1 up to rounding
    low = 0.0 if successes == 0 else float(np.clip(low, 0.0, 1.0))
    high = 1.0 if successes == nobs else float(np.clip(high, 0.0, 1.0))
    return low, high


def clopper_pearson(successes: float, nobs: float, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper–Pearson) binomial interval.

    Parameters
    ----------
    successes : float
        Number of passes, 0 ≤ successes ≤ nobs. May be fractional (an effective count).
    nobs : float
        Number of trials, > 0. May be fractional (an effective size such as n_min).
    confidence : float, default 0.95
        Two-sided confidence level in (0, 1).

    Returns
    -------
    tuple of float
        ``(low, high)``.

    Notes
    -----
    With α = 1 − confidence, low = Beta⁻¹(α/2; k, n − k + 1) and high = Beta⁻¹(1 − α/2; k + 1, n − k),
    with low = 0 when k = 0 and high = 1 when k = n. Wraps statsmodels
    ``proportion_confint(method="beta")``; the beta quantiles are defined for real k and n.

    References
    ----------
    Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a binomial proportion.
    Statistical Science 16(2), 101–133.

    Examples
    --------
    >>> low, high = clopper_pearson(9, 10)
    >>> round(low, 4), round(high, 4)
    (0.555, 0.9975)
    """
    return _binomial(successes, nobs, confidence, "beta")


def wilson(successes: float, nobs: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score binomial interval.

    Parameters
    ----------
    successes : float
        Number of passes, 0 ≤ successes ≤ nobs.
    nobs : float
        Number of trials, > 0.
    confidence : float, default 0.95
        Two-sided confidence level in (0, 1).

    Returns
    -------
    tuple of float
        ``(low, high)``, clipped to [0, 1]; exactly 0 when k = 0 and 1 when k = n.

    Notes
    -----
    With z = Φ⁻¹(1 − α/2) and p̂ = k/n: (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n).
    Wraps statsmodels ``proportion_confint(method="wilson")``.

    References
    ----------
    Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a binomial proportion.
    Statistical Science 16(2), 101–133.

    Examples
    --------
    >>> low, high = wilson(9, 10)
    >>> round(low, 4), round(high, 4)
    (0.5958, 0.9821)
    """
    return _binomial(successes, nobs, confidence, "wilson")


# ---------------------------------------------------------------- clustered standard error


def cluster_sums(values: ArrayLike, clusters: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Passes and rows per cluster.

    Parameters
    ----------
    values : array-like of 0/1
        One entry per row (pass = 1; fail and missing = 0).
    clusters : array-like
        One hashable cluster id per row (strings, ints, ...).

    Returns
    -------
    k : numpy.ndarray of int
        Passes per cluster, k_c.
    m : numpy.ndarray of int
        Rows per cluster, m_c. Clusters are in sorted id order (order of first appearance when ids
        of mixed types cannot be sorted).

    Examples
    --------
    >>> k, m = cluster_sums([1, 0, 1, 1], ["b", "b", "a", "c"])
    >>> k.tolist(), m.tolist()
    ([1, 1, 1], [1, 2, 1])
    """
    return _sums(values, clusters)


def _se_from_sums(k: np.ndarray, m: np.ndarray) -> float:
    g, big_k, big_m = k.shape[0], int(k.sum()), int(m.sum())
    if g < 2:
        return float("nan")
    resid = (k * big_m - big_k * m).astype(float)  # = (k_c − p̂·m_c)·Σm, exact in integers
    return math.sqrt(g / (g - 1) * float(resid @ resid)) / big_m**2


def cluster_se(values: ArrayLike, clusters: ArrayLike) -> tuple[float, float]:
    """Rate and its cluster-robust (CR1) standard error.

    Parameters
    ----------
    values : array-like of 0/1
        One entry per row (pass = 1; fail and missing = 0).
    clusters : array-like
        One hashable cluster id per row.

    Returns
    -------
    estimate : float
        p̂ = Σk/Σm.
    se : float
        CR1 standard error of p̂; NaN when there is a single cluster (G − 1 = 0).

    Notes
    -----
    SE² = G/(G−1) · Σ_c (k_c − p̂·m_c)² / (Σm)². This is the standard error of the constant in an
    OLS regression of the rows on a constant with ``cov_type="cluster"`` in statsmodels, whose small-sample
    factor G/(G−1)·(N−1)/(N−K) reduces to G/(G−1) with K = 1 regressor. When every cluster holds one
    row it reduces to √(p̂(1−p̂)/(n−1)).

    References
    ----------
    Miller, E. (2024). Adding error bars to evals: a statistical approach to language model evaluations.
    arXiv:2411.00640.
    Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust inference.
    Journal of Human Resources 50(2), 317–372.

    Examples
    --------
    >>> p, se = cluster_se([1, 0, 1, 1, 0, 1], [0, 0, 1, 1, 2, 2])
    >>> round(p, 4), round(se, 4)
    (0.6667, 0.1667)
    """
    k, m = _sums(values, clusters)
    return int(k.sum()) / int(m.sum()), _se_from_sums(k, m)


def is_clustered(clusters: ArrayLike | None) -> bool:
    """True when any cluster holds more than one row.

    Examples
    --------
    >>> is_clustered(["a", "b", "a"]), is_clustered([1, 2, 3]), is_clustered(None)
    (True, False, False)
    """
    if clusters is None:
        return False
    arr = np.asarray(clusters)
    if arr.ndim != 1:
        raise ValueError(f"clusters must be one-dimensional; got an array of shape {arr.shape}")
    codes = _codes(arr, arr.shape[0])
    return bool(codes.size and np.bincount(codes).max() > 1)


# ---------------------------------------------------------------- clustered intervals


def _fallback_reason(k: np.ndarray, m: np.ndarray, method: str) -> str:
    """Why a clustered method cannot give a positive-width interval here ("" when it can)."""
    n, g, big_k = int(m.sum()), k.shape[0], int(k.sum())
    if big_k in (0, n):
        return f"degenerate: all {n} rows {'pass' if big_k else 'fail'}"
    if g < 2:
        return f"too few clusters for {method}: G={g}, need at least 2"
    if (k * n == big_k * m).all():
        return f"zero-width {method}: every cluster has the same pass rate"
    return ""


def _cp_on_n_min(k: np.ndarray, m: np.ndarray, confidence: float, reason: str) -> Interval:
    """Clopper–Pearson on the effective size n_min = (Σm)²/Σm² with p̂·n_min successes."""
    n, p = int(m.sum()), int(k.sum()) / int(m.sum())
    n_min = n**2 / float((m.astype(float) ** 2).sum())
    low, high = clopper_pearson(p * n_min, n_min, confidence)
    return Interval(p, low, high, "clopper_pearson", n, k.shape[0], f"{reason}; clopper_pearson on n_min={n_min:.4g}")


def cluster_t(values: ArrayLike, clusters: ArrayLike | None, confidence: float = 0.95) -> Interval:
    """Clustered t interval on the logit scale.

    Parameters
    ----------
    values : array-like of 0/1
        One entry per row (pass = 1; fail and missing = 0).
    clusters : array-like or None
        One hashable cluster id per row; None treats every row as its own cluster.
    confidence : float, default 0.95
        Two-sided confidence level in (0, 1).

    Returns
    -------
    Interval
        ``method="cluster_t"``, or ``"clopper_pearson"`` with a ``reason`` when it falls back.

    Notes
    -----
    low, high = expit(logit p̂ ∓ t_{G−1, 1−α/2} · SE / (p̂(1 − p̂))), with SE from `cluster_se` (the delta
    method carries SE to the logit scale). When every row agrees, G < 2, or every cluster has the same
    rate (SE = 0), it returns Clopper–Pearson on the effective size n_min = (Σm)²/Σm² with p̂·n_min
    successes instead, so a zero-width interval is never reported.

    References
    ----------
    Miller, E. (2024). Adding error bars to evals: a statistical approach to language model evaluations.
    arXiv:2411.00640.
    Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust inference.
    Journal of Human Resources 50(2), 317–372.

    Examples
    --------
    >>> iv = cluster_t([1, 1, 0, 1, 1, 1], ["a", "a", "b", "b", "c", "c"])
    >>> iv.method, round(iv.estimate, 4), round(iv.low, 4), round(iv.high, 4)
    ('cluster_t', 0.8333, 0.0278, 0.9989)
    >>> cluster_t([1, 1, 1], ["a", "a", "b"]).reason
    'degenerate: all 3 rows pass; clopper_pearson on n_min=1.8'
    """
    confidence = _check_confidence(confidence)
    k, m = _sums(values, clusters)
    reason = _fallback_reason(k, m, "cluster_t")
    if reason:
        return _cp_on_n_min(k, m, confidence, reason)
    g, n = k.shape[0], int(m.sum())
    p = int(k.sum()) / n
    from scipy import special
    from scipy import stats as sps

    half = sps.t.ppf(0.5 + confidence / 2, g - 1) * _se_from_sums(k, m) / (p * (1 - p))
    low, high = special.expit(special.logit(p) + np.array([-half, half]))
    return Interval(p, float(low), float(high), "cluster_t", n, g)


def cluster_bootstrap(
    values: ArrayLike,
    clusters: ArrayLike | None,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int | None = 0,
) -> Interval:
    """Cluster bootstrap of the ratio Σk/Σm with a BCa interval.

    Parameters
    ----------
    values : array-like of 0/1
        One entry per row (pass = 1; fail and missing = 0).
    clusters : array-like or None
        One hashable cluster id per row; None treats every row as its own cluster.
    confidence : float, default 0.95
        Two-sided confidence level in (0, 1).
    resamples : int, default 10_000
        Number of bootstrap resamples B ≥ 1.
    seed : int or None, default 0
        Seed for ``numpy.random.default_rng``; the same seed gives the same interval.

    Returns
    -------
    Interval
        ``method="cluster_bootstrap"``, or ``"clopper_pearson"`` with a ``reason`` when it falls back.

    Notes
    -----
    Each resample draws G whole clusters with replacement and takes θ* = Σk*/Σm*. The ratio depends only
    on how many clusters of each distinct (k, m) type are drawn, so with type counts c_t a resample is one
    Multinomial(G, c_t/G) draw over the T types: the work is B × T, never B × G.

    BCa (Efron 1987): z₀ = Φ⁻¹(#{θ* < p̂}/B + ½·#{θ* = p̂}/B); from the leave-one-cluster-out jackknife
    θ₍c₎ = (Σk − k_c)/(Σm − m_c) with mean θ̄ and d_c = θ̄ − θ₍c₎, acceleration a = Σd_c³ / (6 (Σd_c²)^{3/2});
    the bounds are the θ* quantiles at Φ(z₀ + (z₀ + z_q)/(1 − a(z₀ + z_q))) for z_q = Φ⁻¹(α/2), Φ⁻¹(1 − α/2).
    The bounds are widened to include p̂ if needed. It falls back to Clopper–Pearson on
    n_min = (Σm)²/Σm² as `cluster_t` does.

    References
    ----------
    Efron, B. (1987). Better bootstrap confidence intervals. JASA 82(397), 171–185.
    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap, ch. 14. Chapman & Hall.
    Miller, E. (2024). Adding error bars to evals. arXiv:2411.00640.

    Examples
    --------
    >>> iv = cluster_bootstrap([1, 1, 0, 1, 1, 1, 0, 1], [1, 1, 2, 2, 3, 3, 4, 4], resamples=2000, seed=1)
    >>> iv.method, iv.n_clusters, iv.low < iv.estimate < iv.high
    ('cluster_bootstrap', 4, True)
    """
    confidence = _check_confidence(confidence)
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise ValueError(f"resamples={resamples!r} must be an integer ≥ 1, e.g. 10_000")
    k, m = _sums(values, clusters)
    reason = _fallback_reason(k, m, "cluster_bootstrap")
    if reason:
        return _cp_on_n_min(k, m, confidence, reason)
    g, big_k, big_m = k.shape[0], int(k.sum()), int(m.sum())
    p = big_k / big_m
    types, counts = np.unique(np.column_stack([k, m]), axis=0, return_counts=True)
    kt, mt = types[:, 0], types[:, 1]

    rng = np.random.default_rng(seed)
    theta = np.empty(resamples)
    below = 0.0
    step = max(1, _CHUNK_CELLS // len(counts))
    for start in range(0, resamples, step):  # chunks of many resamples, to bound memory
        draws = rng.multinomial(g, counts / g, size=min(step, resamples - start))
        ks, ms = draws @ kt, draws @ mt
        theta[start : start + len(ks)] = ks / ms
        cross = ks * big_m - big_k * ms  # sign of θ* − p̂, exact in integers
        below += np.count_nonzero(cross < 0) + 0.5 * np.count_nonzero(cross == 0)
    from scipy import stats as sps

    z0 = sps.norm.ppf(np.clip(below / resamples, 0.5 / resamples, 1 - 0.5 / resamples))

    jack = (big_k - kt) / (big_m - mt)  # leave one cluster of each type out
    d = np.average(jack, weights=counts) - jack
    ss = float(counts @ d**2)
    accel = float(counts @ d**3) / (6 * ss**1.5) if ss > 0 else 0.0

    z = sps.norm.ppf([0.5 - confidence / 2, 0.5 + confidence / 2])
    with np.errstate(divide="ignore", invalid="ignore"):
        q = sps.norm.cdf(z0 + (z0 + z) / (1 - accel * (z0 + z)))
    q = np.clip(np.nan_to_num(q, nan=0.5), 0.0, 1.0)
    low, high = np.quantile(theta, q)
    low, high = min(float(low), p), max(float(high), p)
    if not low < high:
        return _cp_on_n_min(k, m, confidence, f"zero-width cluster_bootstrap with {resamples} resamples")
    return Interval(p, low, high, "cluster_bootstrap", big_m, g)


# ---------------------------------------------------------------- dispatcher


def rate_interval(
    values: ArrayLike,
    clusters: ArrayLike | None = None,
    method: str = "auto",
    confidence: float = 0.95,
    *,
    clustered_method: str = "cluster_t",
    resamples: int = 10_000,
    seed: int | None = 0,
) -> Interval:
    """Pass rate and confidence interval, choosing the method from the clustering.

    Parameters
    ----------
    values : array-like of 0/1
        One entry per row (pass = 1; fail and missing = 0).
    clusters : array-like or None, default None
        One hashable cluster id per row (e.g. the source case id); None means independent rows.
    method : {"auto", "clopper_pearson", "wilson", "cluster_t", "cluster_bootstrap"}, default "auto"
        ``"auto"`` uses ``"clopper_pearson"`` when no cluster holds more than one row and
        ``clustered_method`` otherwise. ``"clopper_pearson"``/``"wilson"`` treat rows as independent.
    confidence : float, default 0.95
        Two-sided confidence level in (0, 1).
    clustered_method : {"cluster_t", "cluster_bootstrap"}, default "cluster_t"
        The method ``"auto"`` uses for clustered rows.
    resamples : int, default 10_000
        Bootstrap resamples (``cluster_bootstrap`` only).
    seed : int or None, default 0
        Bootstrap seed (``cluster_bootstrap`` only).

    Returns
    -------
    Interval
        ``estimate`` (p̂ = Σk/Σm), ``low``, ``high``, ``method`` (the one that produced the bounds),
        ``n`` (rows), ``n_clusters`` (G), ``reason`` (why a fallback was used, else "").

    Notes
    -----
    See `clopper_pearson`, `wilson`, `cluster_t` and `cluster_bootstrap` for the formulas. Clustered
    methods fall back to Clopper–Pearson on n_min = (Σm)²/Σm² when every row agrees (reason starting
    with "degenerate") or the clustered interval would have zero width.

    References
    ----------
    Miller, E. (2024). Adding error bars to evals: a statistical approach to language model evaluations.
    arXiv:2411.00640.
    Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a binomial proportion.
    Statistical Science 16(2), 101–133.

    Examples
    --------
    >>> rate_interval([1, 1, 0, 1]).method
    'clopper_pearson'
    >>> iv = rate_interval([1, 1, 0, 1, 1, 1], clusters=["a", "a", "b", "b", "c", "c"])
    >>> iv.method, iv.n, iv.n_clusters
    ('cluster_t', 6, 3)
    """
    if method not in ("auto", *METHODS):
        raise ValueError(f"method={method!r} is unknown; use one of {('auto', *METHODS)}")
    if clustered_method not in _CLUSTERED:
        raise ValueError(f"clustered_method={clustered_method!r} is unknown; use one of {_CLUSTERED}")
    if method == "auto":
        method = clustered_method if is_clustered(clusters) else "clopper_pearson"
    if method == "cluster_t":
        return cluster_t(values, clusters, confidence)
    if method == "cluster_bootstrap":
        return cluster_bootstrap(values, clusters, confidence, resamples=resamples, seed=seed)
    confidence = _check_confidence(confidence)
    k, m = _sums(values, clusters)
    n, big_k = int(m.sum()), int(k.sum())
    low, high = (clopper_pearson if method == "clopper_pearson" else wilson)(big_k, n, confidence)
    return Interval(big_k / n, low, high, method, n, k.shape[0])
