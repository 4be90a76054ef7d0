"""The cluster bootstrap (BCa) of the ratio Σk/Σm, from cluster sums; vectorised and seeded."""

from __future__ import annotations

import numpy as np

from .binomial import Interval, all_pass_low
from .cr2 import cp_on_n_min, fallback_reason

__all__ = ["cluster_bootstrap_from_sums", "bca_ratio", "BOOTSTRAP_MIN_CLUSTERS", "PAIRED_BOOTSTRAP_MIN_CLUSTERS"]

_CHUNK_CELLS = 2_000_000  # bootstrap draws held at once: resamples per chunk × cluster types

#: The gate lets ``cluster_bootstrap`` decide only from this many clusters on; below it the gate uses
#: ``cluster_t`` and says so. The simulation (benchmarks/coverage.md, 2,000 repetitions per cell) puts the BCa
#: lower bound above the true rate more than 3% of the time in some cell at every G from 30 to 200 (up to
#: 4.45% at G = 50 and 4.4% at G = 100; at G = 20 at most 2.2%). A minimum from which on every G holds does
#: not exist, so none is validated: infinity, until a simulation shows one.
BOOTSTRAP_MIN_CLUSTERS: float = float("inf")
#: The same for the *paired* bootstrap of ``op.compare``, validated on its own: benchmarks/paired.md shows its
#: one-sided misses up to 7.05% at G = 20 and 5.3% at G = 50. A minimum shown for the unpaired bootstrap does not
#: carry over, so the two are separate: infinity, until a paired simulation shows one.
PAIRED_BOOTSTRAP_MIN_CLUSTERS: float = float("inf")


def bca_ratio(k: np.ndarray, m: np.ndarray, confidence: float, resamples: int, seed: int | None) -> tuple[float, float]:
    """BCa bounds of Σk*/Σm* over resampled clusters (``k`` any integer sums, e.g. paired differences)."""
    from scipy import special  # imported on first use: keeps `import oloproof_nb` fast
    g, big_k, big_m = k.shape[0], int(k.sum()), int(m.sum())
    base, low_k = int(m.max()) + 1, int(k.min())  # k may be negative (paired differences): shift it
    keys, counts = np.unique((k.astype(np.int64) - low_k) * base + m, return_counts=True)  # 1-D: fast
    kt, mt = keys // base + low_k, keys % base

    rng = np.random.default_rng(seed)
    theta = np.empty(resamples)
    below = 0.0
    step = max(1, _CHUNK_CELLS // len(counts))
    for start in range(0, resamples, step):  # chunks of many resamples, to bound memory
        draws = rng.multinomial(g, counts / g, size=min(step, resamples - start))
        ks, ms = draws @ kt, draws @ mt
        theta[start : start + len(ks)] = ks / ms
        cross = ks * big_m - big_k * ms  # sign of θ* − θ̂, exact in integers
        below += np.count_nonzero(cross < 0) + 0.5 * np.count_nonzero(cross == 0)
    z0 = special.ndtri(np.clip(below / resamples, 0.5 / resamples, 1 - 0.5 / resamples))

    jack = (big_k - kt) / (big_m - mt)  # leave one cluster of each type out
    d = np.average(jack, weights=counts) - jack
    ss = float(counts @ d**2)
    accel = float(counts @ d**3) / (6 * ss**1.5) if ss > 0 else 0.0

    z = special.ndtri(np.array([0.5 - confidence / 2, 0.5 + confidence / 2]))
    with np.errstate(divide="ignore", invalid="ignore"):
        q = special.ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z)))
    q = np.clip(np.nan_to_num(q, nan=0.5), 0.0, 1.0)
    low, high = np.quantile(theta, q)
    return float(low), float(high)


def cluster_bootstrap_from_sums(k: np.ndarray, m: np.ndarray, confidence: float, resamples: int,
                                seed: int | None) -> Interval:
    """The ``cluster_bootstrap`` interval from cluster sums (validated by the caller); see ``cluster_bootstrap``."""
    why = fallback_reason(k, m, "cluster_bootstrap")
    if why is not None:
        return cp_on_n_min(k, m, confidence, why)
    g, big_k, big_m = k.shape[0], int(k.sum()), int(m.sum())
    if (k * big_m == big_k * m).all():
        return cp_on_n_min(k, m, confidence, "zero-width cluster_bootstrap: every cluster has the same pass rate")
    p = big_k / big_m
    low, high = bca_ratio(k, m, confidence, resamples, seed)
    low = min(float(low), p, all_pass_low(m, confidence))  # never above the all-pass bound
    high = max(float(high), p, 1.0 - all_pass_low(m, confidence))  # never below the all-fail bound
    if not low < high:
        return cp_on_n_min(k, m, confidence, f"zero-width cluster_bootstrap with {resamples} resamples")
    return Interval(p, low, high, "cluster_bootstrap", big_m, g)
