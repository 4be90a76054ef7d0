"""Independent reference computations for the CR2 / Bell–McCaffrey cluster_t interval (tests only).

Written from the matrix definitions, not from the package's closed forms:

- CR2 (Bell & McCaffrey 2002): X = 1 (N × 1), H = X(XᵀX)⁻¹Xᵀ, A_c = (I − H_cc)^(−1/2) by eigendecomposition,
  V = (XᵀX)⁻¹ Σ_c X_cᵀ A_c e_c e_cᵀ A_c X_c (XᵀX)⁻¹.
- Bell–McCaffrey degrees of freedom (Imbens & Kolesár 2016, eq. for K_BM): G_c = (I − H)_cᵀ A_c X_c (XᵀX)⁻¹
  stacked as the columns of an N × G matrix, λ the eigenvalues of GᵀG, ν = (Σλ)²/Σλ².
- The monotone lower bound by brute force: the CR2 logit-t bound of every data set reachable by turning
  fails into passes (same clusters and rows), the all-pass bound and p̂, minimum taken.
"""

from __future__ import annotations

import itertools

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


def brute_force_low(k: list[int], m: list[int], confidence: float = 0.95) -> float:
    """min(p̂, all-pass bound, the bound of every data set with k ≤ k' ≤ m, k' ≠ all-pass): the CR2 logit-t
    bound, or, where every cluster has the same rate r (zero spread), Clopper–Pearson on n_min with r·n_min
    successes, from scipy.stats.beta."""
    k_arr, m_arr = np.asarray(k), np.asarray(m)
    n_min = m_arr.sum() ** 2 / (m_arr.astype(float) ** 2).sum()
    best = min(k_arr.sum() / m_arr.sum(), (0.5 - confidence / 2) ** (1 / n_min))
    for kp in itertools.product(*[range(a, b + 1) for a, b in zip(k, m, strict=True)]):
        kp_arr = np.asarray(kp)
        if kp_arr.sum() in (0, m_arr.sum()):
            continue
        rates = kp_arr / m_arr
        if np.all(kp_arr * m_arr[0] == kp_arr[0] * m_arr):  # every cluster at one rate, compared exactly
            x = rates[0] * n_min
            low = float(stats.beta.ppf(0.5 - confidence / 2, x, n_min - x + 1))
        else:
            low = raw_logit_t(kp_arr, m_arr, confidence)
        if not np.isnan(low):
            best = min(best, low)
    return float(best)
