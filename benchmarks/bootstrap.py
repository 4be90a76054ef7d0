"""Benchmark: oloproof_nb._core.stats.cluster_bootstrap against a plain vectorised cluster bootstrap.

Data: ``--rows`` rows in ``--clusters`` clusters of 1-7 rows (a source case with its derived cases
and replays), cluster pass probabilities ~ Beta with mean 0.9 and intra-cluster correlation 0.3.

(a) ``cluster_bootstrap``: one Multinomial(G, c_t/G) draw per resample over the T distinct
    (passes, rows) cluster types, B × T work.
(b) baseline: cluster indices drawn B × G in chunks of 200 resamples, per-cluster passes and rows
    gathered and summed, then the same BCa (ties count half, leave-one-cluster-out jackknife).

Both timings include turning rows into per-cluster sums. Run:

    python benchmarks/bootstrap.py            # 100,000 rows, 25,000 clusters, 10,000 resamples
    python benchmarks/bootstrap.py --smoke    # tiny sizes for CI
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import scipy
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from oloproof_nb._core.stats import cluster_bootstrap  # noqa: E402

MAX_SIZE = 7


def make_data(rows: int, clusters: int, seed: int = 0, p: float = 0.9, rho: float = 0.3):
    """Rows in clusters of 1..7 rows (exactly ``rows`` in total), beta-binomial passes."""
    if not clusters <= rows <= MAX_SIZE * clusters:
        raise SystemExit(f"--rows must lie in [--clusters, {MAX_SIZE} × --clusters]; got {rows}, {clusters}")
    rng = np.random.default_rng(seed)
    extra = rng.choice(clusters * (MAX_SIZE - 1), size=rows - clusters, replace=False) // (MAX_SIZE - 1)
    sizes = 1 + np.bincount(extra, minlength=clusters)
    scale = (1 - rho) / rho
    pc = rng.beta(p * scale, (1 - p) * scale, clusters)
    ids = np.repeat(np.arange(clusters), sizes)
    values = (rng.random(rows) < pc[ids]).astype(np.int8)
    order = rng.permutation(rows)  # rows arrive in run order, not grouped by cluster
    return values[order], ids[order]


def baseline_bootstrap(values, clusters, confidence=0.95, resamples=10_000, seed=0, chunk=200):
    """A competent plain cluster bootstrap: B × G index draws in chunks, gather, sum, BCa."""
    codes = np.unique(clusters, return_inverse=True)[1]
    k = np.bincount(codes, weights=values)
    m = np.bincount(codes).astype(float)
    g, big_k, big_m = k.size, k.sum(), m.sum()
    p = big_k / big_m
    rng = np.random.default_rng(seed)
    theta = np.empty(resamples)
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        idx = rng.integers(0, g, size=(size, g))
        theta[start : start + size] = k[idx].sum(axis=1) / m[idx].sum(axis=1)
    share = (np.count_nonzero(theta < p) + 0.5 * np.count_nonzero(theta == p)) / resamples
    z0 = stats.norm.ppf(np.clip(share, 0.5 / resamples, 1 - 0.5 / resamples))
    jack = (big_k - k) / (big_m - m)
    d = jack.mean() - jack
    a = np.sum(d**3) / (6 * np.sum(d**2) ** 1.5)
    z = stats.norm.ppf([0.5 - confidence / 2, 0.5 + confidence / 2])
    q = stats.norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))
    low, high = np.quantile(theta, q)
    return float(low), float(high)


def best_of(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="cluster bootstrap benchmark")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--clusters", type=int, default=25_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="timings are the best of this many runs")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (2,000 rows, 500 clusters, 500 resamples)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.rows, args.clusters, args.resamples, args.repeat = 2_000, 500, 500, 1

    print(f"platform: {platform.platform()} | {platform.processor() or platform.machine()}")
    print(
        f"cpus: {os.cpu_count()} | python {platform.python_version()} | "
        f"numpy {np.__version__} | scipy {scipy.__version__}"
    )
    values, clusters = make_data(args.rows, args.clusters)
    print(
        f"data: {args.rows:,} rows, {args.clusters:,} clusters (1-{MAX_SIZE} rows), "
        f"pass rate {values.mean():.4f}; "
        f"{args.resamples:,} resamples, best of {args.repeat}"
    )

    t_ours, ours = best_of(lambda: cluster_bootstrap(values, clusters, resamples=args.resamples, seed=1), args.repeat)
    t_base, base = best_of(lambda: baseline_bootstrap(values, clusters, resamples=args.resamples, seed=2), args.repeat)

    tracemalloc.start()
    cluster_bootstrap(values, clusters, resamples=args.resamples, seed=1)
    peak_ours = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    tracemalloc.start()
    baseline_bootstrap(values, clusters, resamples=args.resamples, seed=2)
    peak_base = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    diff = max(abs(ours.low - base[0]), abs(ours.high - base[1]))
    print(
        f"(a) cluster_bootstrap : {t_ours:8.3f} s  [{ours.low:.5f}, {ours.high:.5f}]  peak {peak_ours / 2**20:7.1f} MiB"
    )
    print(f"(b) plain B×G chunks  : {t_base:8.3f} s  [{base[0]:.5f}, {base[1]:.5f}]  peak {peak_base / 2**20:7.1f} MiB")
    print(f"estimate {ours.estimate:.5f}; speedup {t_base / t_ours:.1f}x; max |Δbound| {diff:.5f} (must be ≤ 0.01)")
    if diff > 0.01:
        print("FAIL: intervals differ by more than 0.01")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
