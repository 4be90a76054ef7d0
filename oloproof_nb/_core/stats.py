"""Intervals for pass rates, with and without clustered cases.

Pure NumPy/SciPy (statsmodels is never imported): no pandas, no files, no plotting. Rows are binary
(pass = 1; fail and missing = 0). With cluster sums k_c (passes) and m_c (rows)
over G clusters the rate is the ratio p̂ = Σk/Σm.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .binomial import Interval, check_confidence, clopper_pearson, wilson
from .bootstrap import BOOTSTRAP_MIN_CLUSTERS, cluster_bootstrap_from_sums
from .cr2 import bell_mccaffrey_df, cluster_t_from_sums, cr1_se, cr2_se

__all__ = [
    "METHODS",
    "MIN_CONFIDENCE",
    "CLUSTERED_MAX_ROWS",
    "BOOTSTRAP_MIN_CLUSTERS",
    "CLUSTERED_METHODS",
    "Interval",
    "bell_mccaffrey_df",
    "clopper_pearson",
    "cluster_bootstrap",
    "cluster_se",
    "cluster_sums",
    "cluster_t",
    "is_clustered",
    "is_clustered_from_sums",
    "rate_interval",
    "rate_interval_from_sums",
    "wilson",
]

METHODS: tuple[str, ...] = ("clopper_pearson", "wilson", "cluster_t", "cluster_bootstrap")
#: The methods for clustered rows (the others treat rows as independent).
CLUSTERED_METHODS: tuple[str, ...] = ("cluster_t", "cluster_bootstrap")
#: The lowest confidence the gate's intervals may have (release.yaml's, and :func:`rate_interval` and
#: :func:`rate_interval_from_sums`, which give them): below it an interval holds the rate less often than not, and
#: ``0.05`` is alpha written where the confidence goes.
MIN_CONFIDENCE = 0.5
#: The rows a clustered interval (:data:`CLUSTERED_METHODS`) counts at most, exclusive: their exact integer
#: arithmetic (the bootstrap's packed ``(k, m)`` keys and ``Σk*·N − K·Σm*`` signs, the residuals ``k_c·N − K·m_c``)
#: takes products of two counts, which wrap around in int64 long before the row total does (the bootstrap
#: of one set of clusters, every count times 2**28, gave [0.128, 0.463] for [0.338, 0.588], and times 2**30 a negative
#: lower bound). Below 2**28 a product reaches 2**63 only for a cluster drawn 128 times in one resample.
CLUSTERED_MAX_ROWS = 2**28


# ---------------------------------------------------------------- validation


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


def _missing_id(c: object) -> bool:
    """Whether a cluster id is a missing marker: None, or a value unequal to itself (NaN, NaT) or whose equality
    has no truth value (pandas' NA, which a nullable ``string`` column holds), found without importing pandas."""
    if c is None:
        return True
    try:
        return not bool(c == c)
    except (TypeError, ValueError):
        return True


def _ids(clusters: ArrayLike, n: int | None = None) -> np.ndarray:
    """``clusters`` as a one-dimensional array of ids, checked: ``n`` of them when given, none missing."""
    arr = np.asarray(clusters)
    if arr.ndim != 1:
        raise ValueError(f"clusters must be one-dimensional; got an array of shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"clusters has {arr.shape[0]} ids but values has {n} rows; give one id per row")
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError("clusters contains NaN; every row needs a cluster id")
    if arr.dtype.kind == "O" and any(map(_missing_id, arr)):
        raise ValueError("clusters contains None/NaN/NA; every row needs a cluster id")
    if arr.dtype.kind in "US" and not isinstance(clusters, np.ndarray):
        given = np.asarray(clusters, dtype=object)  # the items given: NumPy made text of every one
        # a sequence of strings and a float NaN becomes the string "nan" in NumPy
        if any(map(_missing_id, given)):
            raise ValueError("clusters contains None/NaN/NA; every row needs a cluster id")
        # and 1 the string "1": ids 1 and "1" (b"a" and "a") were one cluster, which the gate (a pandas groupby)
        # keeps apart; ids of more than one type are grouped as the objects they are
        text = str if arr.dtype.kind == "U" else bytes
        if not all(isinstance(c, text) for c in given):
            return given
    return arr


def _codes(clusters: ArrayLike | None, n: int) -> np.ndarray:
    """Integer codes 0..G-1 for ``clusters`` (each row its own cluster when None)."""
    if clusters is None:
        return np.arange(n)
    arr = _ids(clusters, n)
    try:
        return np.unique(arr, return_inverse=True)[1].reshape(-1)
    except TypeError:  # mixed, unorderable ids: factorize in order of appearance
        seen: dict[object, int] = {}
        return np.array([seen.setdefault(c, len(seen)) for c in arr.tolist()], dtype=np.int64)


def _same_labels(first: object, second: object) -> bool:
    """Whether two pandas objects (duck-typed: an ``index`` with ``tolist``) carry the same labels in the same order;
    True when either is no such object (an array or list carries no labels to check).

    The labels, not their dtype: ``Index.equals`` tells int64 from Int64 or int64[pyarrow] labels 1, 2 apart.
    """
    labels: list[Any] = [getattr(value, "index", None) for value in (first, second)]
    if not all(hasattr(label, "tolist") for label in labels) or labels[0] is labels[1]:
        return True
    if hasattr(labels[0], "equals") and labels[0].equals(labels[1]):  # fast, and NaN labels at one place are equal
        return True
    return bool(labels[0].tolist() == labels[1].tolist())


def _sums(values: ArrayLike, clusters: ArrayLike | None) -> tuple[np.ndarray, np.ndarray]:
    y = _as_values(values)
    codes = _codes(clusters, y.shape[0])
    if clusters is not None and not _same_labels(values, clusters):
        # paired by position, a sorted or filtered Series met another row's cluster: the rate stayed right and the
        # clustered SE did not (0.122 became 0.2 for 7 of 10 rows in 5 clusters)
        raise ValueError("values and clusters are indexed by other rows or in another order, and they are paired by "
                         "position: take both from one frame (df['passed'], df['cluster']) or align them first")
    return np.bincount(codes, weights=y).astype(np.int64), np.bincount(codes).astype(np.int64)


def _check_sums(passes: ArrayLike, rows: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster (passes, rows) as int64 arrays, checked: same length ≥ 1, 0 ≤ passes ≤ rows, rows ≥ 1."""
    arrays = []
    for name, value in (("passes", passes), ("rows", rows)):
        raw = np.asarray(value)
        if raw.ndim != 1 or raw.size == 0:
            raise ValueError(f"{name} must be a non-empty one-dimensional array of counts (one per cluster)")
        if raw.dtype.kind not in "iuf" or (raw.dtype.kind == "f" and not np.all(np.isfinite(raw))):
            raise ValueError(f"{name} must hold whole numbers (counts per cluster), got dtype {raw.dtype}")
        as_int = raw.astype(np.int64)
        if not np.array_equal(as_int, raw):
            raise ValueError(f"{name} must hold whole numbers (counts per cluster)")
        arrays.append(as_int)
    k, m = arrays
    if k.shape != m.shape:
        raise ValueError(f"passes has {k.size} clusters but rows has {m.size}; give one count of each per cluster")
    if not _same_labels(passes, rows):  # two pandas Series's clusters
        raise ValueError("passes and rows are indexed by other clusters or in another order, and counts are paired by "
                         "position: take both from one groupby (e.g. .agg(passes=..., rows=...)) or align them first")
    if (m < 1).any():
        raise ValueError(f"rows must be ≥ 1 in every cluster; cluster {int(np.flatnonzero(m < 1)[0])} has {m.min()}")
    if float(m.sum(dtype=np.float64)) >= 2.0**62:  # Σm wraps around in int64: 3 clusters of 2**62 rows gave n < 0
        raise ValueError(f"rows total {float(m.sum(dtype=np.float64)):.4g}, more than counts can hold (2**62)")
    bad = (k < 0) | (k > m)
    if bad.any():
        c = int(np.flatnonzero(bad)[0])
        raise ValueError(f"passes must lie in [0, rows]; cluster {c} has {k[c]} passes in {m[c]} rows")
    return k, m


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


def cluster_se(values: ArrayLike, clusters: ArrayLike, kind: str = "CR1") -> tuple[float, float]:
    """Rate and its cluster-robust standard error (CR1 or CR2).

    Parameters
    ----------
    values : array-like of 0/1
        One entry per row (pass = 1; fail and missing = 0).
    clusters : array-like
        One hashable cluster id per row.
    kind : {"CR1", "CR2"}, default "CR1"
        ``"CR1"``: the small-sample factor G/(G−1) (statsmodels' ``cov_type="cluster"``). ``"CR2"``: the
        bias-reduced linearisation of Bell & McCaffrey (2002), the standard error `cluster_t` uses.

    Returns
    -------
    estimate : float
        p̂ = Σk/Σm.
    se : float
        The standard error of p̂; NaN when there is a single cluster.

    Notes
    -----
    With r_c = k_c − p̂·m_c and N = Σm:

    - CR1: SE² = G/(G−1) · Σ_c r_c² / N². This is the standard error of the constant in an OLS
      regression of the rows on a constant with ``cov_type="cluster"`` in statsmodels, whose factor
      G/(G−1)·(N−1)/(N−K) reduces to G/(G−1) with K = 1 regressor.
    - CR2: SE² = Σ_c r_c² / (1 − m_c/N) / N². The intercept-only hat matrix is H = 11ᵀ/N; its
      cluster block H_cc = 11ᵀ/N has the eigenvalue m_c/N on 1, so (I − H_cc)^(−1/2) scales a cluster's
      residual sum by (1 − m_c/N)^(−1/2). With equal cluster sizes CR2 equals CR1.

    References
    ----------
    Bell, R. M. & McCaffrey, D. F. (2002). Bias reduction in standard errors for linear regression
    with multi-stage samples. Survey Methodology 28(2), 169–181.
    Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust inference.
    Journal of Human Resources 50(2), 317–372.
    Miller, E. (2024). Adding error bars to evals: a statistical approach to language model evaluations.
    arXiv:2411.00640.

    Examples
    --------
    >>> p, se = cluster_se([1, 0, 1, 1, 0, 1], [0, 0, 1, 1, 2, 2])
    >>> round(p, 4), round(se, 4)
    (0.6667, 0.1667)
    >>> p, se = cluster_se([1, 0, 1, 1, 0, 1, 1], [0, 0, 1, 1, 2, 2, 2], kind="CR2")
    >>> round(se, 4)
    0.1237
    """
    if kind not in ("CR1", "CR2"):
        raise ValueError(f"kind={kind!r} is unknown; use 'CR1' or 'CR2'")
    k, m = _sums(values, clusters)
    return int(k.sum()) / int(m.sum()), (cr1_se if kind == "CR1" else cr2_se)(k, m)


def is_clustered(clusters: ArrayLike | None) -> bool:
    """True when any cluster holds more than one row: :func:`is_clustered_from_sums` of the rows per id.

    Parameters
    ----------
    clusters : array-like or None
        One hashable cluster id per row (a run's ``cases["cluster"]``: one per case run); None means
        independent rows.

    Examples
    --------
    >>> is_clustered(["a", "b", "a"]), is_clustered([1, 2, 3]), is_clustered(None)
    (True, False, False)
    """
    if clusters is None:
        return False
    arr = _ids(clusters)
    if arr.dtype.kind == "O":  # e.g. a pandas string column: count by hash, without sorting Python objects
        try:
            return is_clustered_from_sums(np.fromiter(Counter(arr.tolist()).values(), dtype=np.int64))
        except TypeError:  # unhashable ids: counted by their codes below
            pass
    return is_clustered_from_sums(np.bincount(_codes(arr, arr.shape[0])))


def is_clustered_from_sums(rows: ArrayLike) -> bool:
    """True when any cluster holds more than one row, from the rows per cluster m_c.

    The one test of "clustered" (through :func:`is_clustered` for ids): ``method="auto"`` uses it to choose a
    clustered interval, and the gate, ``slice_table``, ``reduce_epochs`` and ``compare`` ask it of a run's
    (or the paired) case runs, and of a reduced criterion's cases per cluster.

    Parameters
    ----------
    rows : array-like of int
        Rows per cluster, m_c ≥ 1; empty when there is no cluster (not clustered).

    Examples
    --------
    >>> is_clustered_from_sums([1, 1, 1]), is_clustered_from_sums([1, 2, 1]), is_clustered_from_sums([])
    (False, True, False)
    """
    return bool((np.asarray(rows) > 1).any())


# ---------------------------------------------------------------- clustered intervals


def cluster_t(values: ArrayLike, clusters: ArrayLike | None, confidence: float = 0.95) -> Interval:
    """Clustered t interval on the logit scale: CR2 standard error, Bell–McCaffrey degrees of freedom,
    and a lower bound that is monotone by construction.

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
    **The raw bound.** With N = Σm, p̂ = K/N, a_c = 1/(1 − m_c/N) and S = Σ_c a_c (k_c − p̂ m_c)² (so the
    CR2 standard error is √S/N, see `cluster_se`), the CR2 logit-t lower bound is

        h(K, S) = expit(logit p̂ − t_ν · (√S/N) / (p̂(1 − p̂))),

    t_ν the 1 − α/2 quantile of Student's t on the Bell–McCaffrey degrees of freedom
    ν = N² / (N² Σ m²/(N−m)² − 2N Σ m³/(N−m)² + (Σ m²/(N−m))²), which depend on the sizes only.

    **Monotone by construction.** h alone is not monotone: turning a fail into a pass can raise S more
    than it raises p̂ (and near all-pass the logit interval is tighter than the all-pass bound). So the
    reported lower bound is the smallest h over every "better" data set — the same clusters and rows
    with any of the failures turned into passes:

        low(k) = min( C(k),  L_eq(k),  min_{K ≤ K' < N} h(K', S_max(k, K')) ),

    where L_eq(k) is the lowest bound of a better data set whose clusters all pass the same share r of
    their rows. Such a data set (S = 0) says nothing about how clusters differ, so it is judged as a
    degenerate one is, by Clopper–Pearson on n_min = (Σm)²/Σm² with r·n_min successes; the smallest
    such r at or above every cluster's rate gives the minimum (``cr2.equal_rate_low``). When a cluster
    passes every row, r = 1 and L_eq is the all-pass bound L_all = (α/2)^(1/n_min). (20 cases × 5 epochs
    that each fail only epoch 2: L_eq = 0.563, where the other two terms alone give 0.665.)
    S_max(k, K') is the largest S over the data sets with K' passes reachable from k by turning fails
    into passes (computed exactly by a small knapsack over cluster types when N − K' ≤ 64, and bounded
    above by its Lagrangian dual — a fractional knapsack — beyond). Both are maxima over the reachable
    set, or a bound that only grows with it, so they shrink when a fail turns into a pass: the set of
    better data sets of k + e_c is contained in that of k. Hence turning a fail into a pass never lowers
    ``low``, and ``low`` never exceeds L_all (the value for the all-pass data set of the same sizes).
    C(k) (``binomial.never_pass_cap``) is what the clusters can vouch for given the j of them that pass nothing,
    of Z rows: (1 − s_U)·K/(N − Z), s_U the Clopper–Pearson upper bound of their share (n_min·Z/N successes in
    n_min), made monotone by a minimum over those clusters turned into ones that pass; with j = 0 it is L_all·p̂
    (n_min clusters cannot rule out a share 1 − L_all of clusters never drawn that pass nothing), and with one
    row a cluster it is Clopper–Pearson's lower end. Without it, where one case in ten never passes and the
    others pass 9 tries in 10 (rate 0.81), 20 cases × 10 epochs put the bound above 0.81 in 11.55% of samples
    — those that drew no such case, whose clusters differ only by their tries — and with j = 0 alone,
    one case in twenty at 100 cases × 10 epochs in 5% (``tests/reference/hard_cells.py``'s ``mixture`` cells).
    The upper bound is the mirror image: 1 − low of the failures.

    When every row agrees, or G < 2, it returns Clopper–Pearson on n_min with p̂·n_min successes
    (``reason`` says why). Below confidence ``cr2.LOW_CONFIDENCE`` = 0.75, where the two bounds can
    meet at p̂ when every cluster has the same rate, every interval is widened to hold that
    Clopper–Pearson interval — for all data alike, which keeps both bounds monotone — so a zero-width
    interval is never reported.

    References
    ----------
    Bell, R. M. & McCaffrey, D. F. (2002). Bias reduction in standard errors for linear regression
    with multi-stage samples. Survey Methodology 28(2), 169–181.
    Imbens, G. W. & Kolesár, M. (2016). Robust standard errors in small samples: some practical advice.
    Review of Economics and Statistics 98(4), 701–712.
    Pustejovsky, J. E. & Tipton, E. (2018). Small-sample methods for cluster-robust variance estimation
    and hypothesis testing in fixed effects models. JBES 36(4), 672–683.

    Examples
    --------
    >>> iv = cluster_t([1, 1, 0, 1, 1, 1, 1, 0], ["a", "a", "b", "b", "c", "c", "d", "d"])
    >>> iv.method, round(iv.estimate, 4), iv.low < iv.estimate < iv.high
    ('cluster_t', 0.75, True)
    >>> cluster_t([1, 1, 1], ["a", "a", "b"]).reason
    'degenerate: all 3 rows pass; clopper_pearson on n_min=1.8'
    """
    confidence = check_confidence(confidence)
    k, m = _sums(values, clusters)
    return cluster_t_from_sums(k, m, confidence)


def _check_resamples(resamples: int) -> int:
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise ValueError(f"resamples={resamples!r} must be an integer ≥ 1, e.g. 10_000")
    return int(resamples)


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

    BCa (Efron 1987): z₀ = Φ⁻¹(#{θ* < p̂}/B + ½·#{θ* = p̂}/B), the share clipped to [1/(2B), 1 − 1/(2B)] so
    that z₀ stays finite when every θ* lies on one side of p̂; from the leave-one-cluster-out jackknife
    θ₍c₎ = (Σk − k_c)/(Σm − m_c) with mean θ̄ and d_c = θ̄ − θ₍c₎, acceleration a = Σd_c³ / (6 (Σd_c²)^{3/2});
    the bounds are the θ* quantiles (linear interpolation) at Φ(z₀ + (z₀ + z_q)/(1 − a(z₀ + z_q))) for
    z_q = Φ⁻¹(α/2), Φ⁻¹(1 − α/2). The lower bound is capped at the all-pass bound (α/2)^(1/n_min) and at
    p̂; the upper bound mirrors it. It falls back to Clopper–Pearson on n_min = (Σm)²/Σm² as `cluster_t`
    does. Unlike `cluster_t` it is not monotone by construction, and its lower bound exceeds the true rate
    more than 3% of the time in some cell at every G simulated from 30 to 200 (up to 4.45%; at G = 20 at most
    2.2%; benchmarks/coverage.md):
    the gate therefore uses `cluster_t` to decide (``BOOTSTRAP_MIN_CLUSTERS``), and a bootstrap bound
    exactly equal to a threshold is never a PASS.

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
    confidence = check_confidence(confidence)
    resamples = _check_resamples(resamples)
    k, m = _sums(values, clusters)
    return cluster_bootstrap_from_sums(k, m, confidence, resamples, seed)


# ---------------------------------------------------------------- dispatchers


def _interval_from_sums(k: np.ndarray, m: np.ndarray, method: str, confidence: float, clustered_method: str,
                        resamples: int, seed: int | None) -> Interval:
    if method == "auto":
        method = clustered_method if is_clustered_from_sums(m) else "clopper_pearson"
    if method in CLUSTERED_METHODS and int(m.sum()) >= CLUSTERED_MAX_ROWS:
        raise ValueError(f"rows total {int(m.sum()):,}: more than {method} can count exactly (2**28 rows); "
                         "clopper_pearson and wilson count up to 2**62 rows, taken as independent")
    if method == "cluster_t":
        return cluster_t_from_sums(k, m, confidence)
    if method == "cluster_bootstrap":
        return cluster_bootstrap_from_sums(k, m, confidence, resamples, seed)
    n, big_k = int(m.sum()), int(k.sum())
    low, high = (clopper_pearson if method == "clopper_pearson" else wilson)(big_k, n, confidence)
    return Interval(big_k / n, low, high, method, n, k.shape[0])


def _gate_confidence(confidence: float) -> float:
    """``confidence`` checked as release.yaml's is: in [:data:`MIN_CONFIDENCE`, 1) (a ValueError naming it otherwise).

    ``op.rate_interval_from_sums(k, m, confidence=0.05)`` gave the 5% interval the gate refuses to compute: 34 of 40
    got [0.831, 0.863], above a threshold of 0.8 that the 95% interval [0.702, 0.943] holds.
    """
    confidence = check_confidence(confidence)
    if confidence < MIN_CONFIDENCE:
        raise ValueError(f"confidence={confidence!r} is below {MIN_CONFIDENCE:g}: it is the confidence level of the "
                         "interval (e.g. 0.95), not alpha (0.05), as in release.yaml")
    return confidence


def _check_methods(method: str, clustered_method: str) -> None:
    if method not in ("auto", *METHODS):
        # listed as every message lists what is allowed (compare's mode=, pairs' relation=), not as a tuple's repr
        raise ValueError(f"method={method!r} is unknown; allowed: {', '.join(('auto', *METHODS))}")
    if clustered_method not in CLUSTERED_METHODS:
        raise ValueError(f"clustered_method={clustered_method!r} is unknown; allowed: {', '.join(CLUSTERED_METHODS)}")


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
        One hashable cluster id per row (e.g. the source case id); None means independent rows. Paired with
        ``values`` by position: two pandas Series must carry the same index in the same order (a ``ValueError``
        says so otherwise).
    method : {"auto", "clopper_pearson", "wilson", "cluster_t", "cluster_bootstrap"}, default "auto"
        ``"auto"`` uses ``"clopper_pearson"`` when no cluster holds more than one row and
        ``clustered_method`` otherwise. ``"clopper_pearson"``/``"wilson"`` treat rows as independent.
    confidence : float, default 0.95
        Two-sided confidence level in [0.5, 1), as release.yaml's (0.05 is alpha: a ``ValueError`` says so).
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
    The same as `rate_interval_from_sums` on the per-cluster sums of ``values``. See `clopper_pearson`,
    `wilson`, `cluster_t` and `cluster_bootstrap` for the formulas. Clustered methods fall back to
    Clopper–Pearson on n_min = (Σm)²/Σm² when every row agrees (reason starting with "degenerate").

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
    _check_methods(method, clustered_method)
    confidence = _gate_confidence(confidence)
    resamples = _check_resamples(resamples)
    k, m = _sums(values, clusters)
    return _interval_from_sums(k, m, method, confidence, clustered_method, resamples, seed)


def rate_interval_from_sums(
    passes: ArrayLike,
    rows: ArrayLike,
    method: str = "auto",
    confidence: float = 0.95,
    *,
    clustered_method: str = "cluster_t",
    resamples: int = 10_000,
    seed: int | None = 0,
) -> Interval:
    """Pass rate and confidence interval from per-cluster sums: the interval `op.gate` computes.

    Parameters
    ----------
    passes : array-like of int
        Passes per cluster, k_c (0 ≤ k_c ≤ m_c).
    rows : array-like of int
        Rows per cluster, m_c ≥ 1, in the same order as ``passes`` (counts are paired by position; two
        pandas Series must carry the same clusters in the same order, whatever their dtype, or a
        ``ValueError`` says so). Σm below 2**62 rows, and below :data:`CLUSTERED_MAX_ROWS` (2**28) for
        the clustered methods (a ``ValueError`` otherwise).
    method : {"auto", "clopper_pearson", "wilson", "cluster_t", "cluster_bootstrap"}, default "auto"
        ``"auto"`` uses ``"clopper_pearson"`` on Σk of Σm when every cluster holds one row and
        ``clustered_method`` otherwise.
    confidence : float, default 0.95
        Two-sided confidence level in [0.5, 1), as release.yaml's (0.05 is alpha: a ``ValueError`` says so).
    clustered_method : {"cluster_t", "cluster_bootstrap"}, default "cluster_t"
        The method ``"auto"`` uses for clustered rows.
    resamples : int, default 10_000
        Bootstrap resamples (``cluster_bootstrap`` only).
    seed : int or None, default 0
        Bootstrap seed (``cluster_bootstrap`` only).

    Returns
    -------
    Interval
        ``estimate``, ``low``, ``high``, ``method``, ``n`` (Σm), ``n_clusters`` (G), ``reason``.

    Notes
    -----
    Every interval of this module depends on the rows only through the cluster sums (k_c, m_c), so
    sums computed anywhere — a pandas or Dask ``groupby(["criterion", "cluster"])`` over a run's
    verdicts, Arrow, SQL — give the same interval as `rate_interval` on the rows and as the gate
    (the gate decides "clustered" for the whole run: pass ``method="cluster_t"`` for a clustered run's
    criterion whose own clusters all hold one row). Two exceptions: the gate decides with ``cluster_t``
    where the release asks for ``cluster_bootstrap`` (:data:`BOOTSTRAP_MIN_CLUSTERS`), and a criterion with
    ``reduce: pass^k`` or ``pass@k`` is judged on one reduced value per case, not on sums of its rows.
    Clusters with the same (k, m) may come in any order.

    Examples
    --------
    >>> iv = rate_interval_from_sums([2, 1, 2], [2, 2, 2])
    >>> iv.method, round(iv.estimate, 4), iv.n, iv.n_clusters
    ('cluster_t', 0.8333, 6, 3)
    >>> rate_interval_from_sums([9], [10], method="clopper_pearson").low == clopper_pearson(9, 10)[0]
    True
    """
    _check_methods(method, clustered_method)
    confidence = _gate_confidence(confidence)
    resamples = _check_resamples(resamples)
    k, m = _check_sums(passes, rows)
    return _interval_from_sums(k, m, method, confidence, clustered_method, resamples, seed)
