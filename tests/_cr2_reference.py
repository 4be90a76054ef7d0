"""Independent reference computations for the CR2 / Bell–McCaffrey cluster_t interval (tests only).

Written from the matrix definitions, not from the package's closed forms:

- CR2 (Bell & McCaffrey 2002): X = 1 (N × 1), H = X(XᵀX)⁻¹Xᵀ, A_c = (I − H_cc)^(−1/2) by eigendecomposition,
  V = (XᵀX)⁻¹ Σ_c X_cᵀ A_c e_c e_cᵀ A_c X_c (XᵀX)⁻¹.
- Bell–McCaffrey degrees of freedom (Imbens & Kolesár 2016, eq. for K_BM): G_c = (I − H)_cᵀ A_c X_c (XᵀX)⁻¹
  stacked as the columns of an N × G matrix, λ the eigenvalues of GᵀG, ν = (Σλ)²/Σλ².
- The monotone lower bound by brute force: the CR2 logit-t bound of every data set reachable by turning
  fails into passes (same clusters and rows), the all-pass bound and p̂, minimum taken.
- The paired interval of two runs (README §6a): each cluster's change e_c = k_c − b_c splits into a net loss
  max(−e_c, 0) and a net gain max(e_c, 0); each of the two rates gets the brute-force bounds above (ℓ(0) = 0,
  upper end υ(x) = 1 − ℓ(m − x)), and the MOVER combines them with correlation −c, c = min(1, υ/(1 − υ)) of
  the net-loss rate for the lower end and of the net-gain rate for the upper end (0 when that rate's count is 0).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator

import numpy as np
from scipy import special, stats


def _inv_sqrt(mat: np.ndarray) -> np.ndarray:
    w, v = np.linalg.eigh(mat)
    return (v / np.sqrt(w)) @ v.T


def cr2_matrix(y: np.ndarray, clusters: np.ndarray) -> tuple[float, float, float]:
    """(estimate, CR2 SE, Bell–McCaffrey df) of the intercept-only regression, from the matrices."""
    y = np.asarray(y, dtype=float)
    clusters = np.asarray(clusters)
    n = y.size
    x = np.ones((n, 1))
    xtx_inv = np.linalg.inv(x.T @ x)
    h = x @ xtx_inv @ x.T
    beta = xtx_inv @ x.T @ y
    e = y - x @ beta
    ids = list(dict.fromkeys(clusters.tolist()))
    meat = np.zeros((1, 1))
    g_cols = []
    i_minus_h = np.eye(n) - h
    for c in ids:
        idx = np.flatnonzero(clusters == c)
        a_c = _inv_sqrt(np.eye(idx.size) - h[np.ix_(idx, idx)])
        u = x[idx].T @ a_c @ e[idx]
        meat += np.outer(u, u)
        g_cols.append(i_minus_h[idx, :].T @ a_c @ x[idx] @ xtx_inv)
    v = xtx_inv @ meat @ xtx_inv
    g = np.hstack(g_cols)  # N × G
    lam = np.linalg.eigvalsh(g.T @ g)
    df = lam.sum() ** 2 / (lam**2).sum()
    return float(beta[0]), float(np.sqrt(v[0, 0])), float(df)


def raw_logit_t(k: np.ndarray, m: np.ndarray, confidence: float = 0.95) -> float:
    """The CR2 logit-t lower bound of one data set given by cluster sums (NaN when undefined)."""
    y = np.concatenate([np.r_[np.ones(kc), np.zeros(mc - kc)] for kc, mc in zip(k, m, strict=True)])
    cl = np.repeat(np.arange(len(m)), m)
    p, se, df = cr2_matrix(y, cl)
    if not 0 < p < 1 or se == 0:
        return float("nan")
    t = stats.t.ppf(0.5 + confidence / 2, df)
    return float(special.expit(special.logit(p) - t * se / (p * (1 - p))))


def _every_data_set_with_more_hits(k: list[int], m: list[int]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Every (k', m) with k ≤ k' ≤ m, clusters in the given order: the plain product over the clusters."""
    m_arr = np.asarray(m)
    for kp in itertools.product(*[range(a, b + 1) for a, b in zip(k, m, strict=True)]):
        yield np.asarray(kp), m_arr


def _every_data_set_up_to_order(k: list[int], m: list[int]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The same data sets, each once up to the order of clusters of equal size and equal k: clusters with the
    same (m_c, k_c) take a multiset of values in k_c..m_c. The bound of the intercept-only regression does not
    depend on the order of the clusters, so the minimum is the same; the count is small enough for
    G = 100 clusters of one row (51 data sets for 50 hits, where the product has 2⁵⁰)."""
    groups = Counter(zip(m, k, strict=True))
    keys = sorted(groups)
    choices = [list(itertools.combinations_with_replacement(range(kc, mc + 1), groups[mc, kc])) for mc, kc in keys]
    sizes = np.concatenate([np.full(groups[key], key[0]) for key in keys])
    for combo in itertools.product(*choices):
        yield np.concatenate([np.asarray(values, dtype=int) for values in combo]), sizes


def never_pass_share_low(zero_rows: float, k: np.ndarray, m: np.ndarray, confidence: float = 0.95) -> float:
    """1 − the Clopper–Pearson upper bound (scipy.stats.beta) of the share of rows in clusters that pass nothing,
    from n_min·zero_rows/N successes in n_min = (Σm)²/Σm² (j of G with equal sizes)."""
    n_min = m.sum() ** 2 / (m.astype(float) ** 2).sum()
    x = n_min * zero_rows / m.sum()
    return 1.0 - float(stats.beta.ppf(0.5 + confidence / 2, x + 1, n_min - x))


def never_pass_cap_by_hand(k: list[int] | np.ndarray, m: list[int] | np.ndarray, confidence: float = 0.95) -> float:
    """``binomial.never_pass_cap`` by its formula, in plain loops: the minimum over c = 0..j (j the clusters that
    pass nothing, of Z rows) of (1 − s_U(Z − S_c))·(K + c)/(N − Z + B_c), S_c the rows of the c smallest of them
    and B_c of the c largest; 0 when nothing passes."""
    k_arr, m_arr = np.asarray(k), np.asarray(m)
    total, passed = float(m_arr.sum()), float(k_arr.sum())
    if passed == 0:
        return 0.0
    zero = sorted(float(size) for size, hits in zip(m_arr, k_arr, strict=True) if hits == 0)
    best = float("inf")
    for c in range(len(zero) + 1):
        left = sum(zero) - sum(zero[:c])
        turned = sum(zero[::-1][:c])
        share = never_pass_share_low(left, k_arr, m_arr, confidence)
        best = min(best, share * (passed + c) / (total - sum(zero) + turned))
    return best


def brute_force_low(k: list[int], m: list[int], confidence: float = 0.95, *, up_to_order: bool = False) -> float:
    """min(the cap of what the clusters can vouch for, the bound of every data set with k ≤ k' ≤ m, k' ≠
    all-pass): the CR2 logit-t bound, or, where every cluster has the same rate r (zero spread), Clopper–Pearson
    on n_min with r·n_min successes, from scipy.stats.beta. The cap (:func:`never_pass_cap_by_hand`; with no
    cluster that passes nothing, the all-pass bound (α/2)^(1/n_min) times p̂) is below p̂.
    ``up_to_order`` visits each data set once up to the order of alike clusters (see
    `_every_data_set_up_to_order`) instead of every product."""
    k_arr, m_arr = np.asarray(k), np.asarray(m)
    best = never_pass_cap_by_hand(k_arr, m_arr, confidence)
    n_min = m_arr.sum() ** 2 / (m_arr.astype(float) ** 2).sum()
    data_sets = _every_data_set_up_to_order if up_to_order else _every_data_set_with_more_hits
    for kp_arr, sizes in data_sets(k, m):
        if kp_arr.sum() in (0, sizes.sum()):
            continue
        rates = kp_arr / sizes
        if np.all(kp_arr * sizes[0] == kp_arr[0] * sizes):  # every cluster at one rate, compared exactly
            x = rates[0] * n_min
            low = float(stats.beta.ppf(0.5 - confidence / 2, x, n_min - x + 1))
        else:
            low = raw_logit_t(kp_arr, sizes, confidence)
        if not np.isnan(low):
            best = min(best, low)
    return float(best)


def paired_interval(b: list[int], k: list[int], m: list[int], confidence: float = 0.95,
                    *, up_to_order: bool = True) -> tuple[float, float]:
    """(low, high) of candidate rate − base rate from per-cluster sums (b base passes, k candidate passes, m
    rows): the MOVER of the net-loss and net-gain rates, each bounded by `brute_force_low`, with correlation −c
    (c = min(1, υ/(1 − υ)), υ the upper end of the net-loss rate for ``low``, of the net-gain rate for ``high``;
    c = 0 when that direction has no row), clipped to [−1, 1]. With no change (e = 0) it is d̂ ± u₀,
    u₀ = 1 − (α/2)^(1/n_min); G ≥ 2 clusters."""
    total = sum(m)
    down = [max(bc - kc, 0) for bc, kc in zip(b, k, strict=True)]
    up = [max(kc - bc, 0) for bc, kc in zip(b, k, strict=True)]
    p_down, p_up = sum(down) / total, sum(up) / total

    seen: dict[tuple[tuple[int, int], ...], float] = {}  # ℓ of one direction is often ℓ(m − x) of the other

    def low_of(x: list[int]) -> float:
        key = tuple(sorted((int(mc), int(xc)) for mc, xc in zip(m, x, strict=True)))  # the order does not matter
        if key not in seen:
            seen[key] = 0.0 if sum(x) == 0 else brute_force_low(x, m, confidence, up_to_order=up_to_order)
        return seen[key]

    def high_of(x: list[int]) -> float:
        return 1.0 - low_of([c - a for c, a in zip(m, x, strict=True)])

    def half(a: float, b: float, x: list[int]) -> float:  # √(a² + b² + 2cab), c of direction x, by definition
        upper = high_of(x)
        c = 0.0 if sum(x) == 0 else min(1.0, upper / (1.0 - upper)) if upper < 1.0 else 1.0
        return float(np.sqrt(a * a + b * b + 2.0 * c * a * b))

    low = p_up - p_down - half(p_up - low_of(up), high_of(down) - p_down, down)
    high = p_up - p_down + half(high_of(up) - p_up, p_down - low_of(down), up)
    return max(-1.0, low), min(1.0, high)
