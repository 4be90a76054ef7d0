"""Coverage of the clustered intervals on beta-binomial clusters.

Each repetition draws G clusters with sizes uniform on [size_min, size_max], a cluster pass
probability p_c ~ Beta(a, b) with a = p(1−ρ)/ρ and b = (1−p)(1−ρ)/ρ (mean p, intra-cluster
correlation ρ = 1/(a+b+1)), and rows ~ Bernoulli(p_c). The target is the true rate p (cluster
sizes are independent of p_c, so E[Σk]/E[Σm] = p). A lower miss is ci_low > p, an upper miss
is ci_high < p; nominal two-sided 95% means 2.5% each.

Standalone (prints the coverage table; the two contrasts are the plain clustered ±t interval
on the raw scale and the percentile cluster bootstrap, which the design rejects):

    python tests/reference/coverage_simulation.py --reps 2000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from oloproof_nb._core.stats import cluster_bootstrap, cluster_se, cluster_t  # noqa: E402

METHODS = ("cluster_t", "cluster_bootstrap")
CONTRASTS = ("wald_t", "percentile_bootstrap")


def draw(rng: np.random.Generator, n_clusters: int, sizes: tuple[int, int], p: float, rho: float):
    """One data set: (values, clusters) with beta-binomial clusters."""
    m = rng.integers(sizes[0], sizes[1] + 1, n_clusters)
    scale = (1 - rho) / rho
    pc = rng.beta(p * scale, (1 - p) * scale, n_clusters)
    clusters = np.repeat(np.arange(n_clusters), m)
    values = (rng.random(clusters.size) < pc[clusters]).astype(int)
    return values, clusters


def _wald_t(values, clusters, confidence):
    p, se = cluster_se(values, clusters)
    g = np.unique(clusters).size
    half = stats.t.ppf(0.5 + confidence / 2, g - 1) * se
    return max(0.0, p - half), min(1.0, p + half)


def _percentile_bootstrap(values, clusters, confidence, resamples, rng):
    k = np.bincount(clusters, weights=values)
    m = np.bincount(clusters).astype(float)
    idx = rng.integers(0, k.size, size=(resamples, k.size))
    theta = k[idx].sum(1) / m[idx].sum(1)
    return tuple(np.quantile(theta, [0.5 - confidence / 2, 0.5 + confidence / 2]))


def simulate(
    reps: int = 300,
    n_clusters: int = 50,
    sizes: tuple[int, int] = (1, 6),
    p: float = 0.9,
    rho: float = 0.3,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 2024,
    contrasts: bool = False,
) -> dict[str, dict[str, float]]:
    """Coverage, lower/upper miss rates and mean width per method."""
    rng = np.random.default_rng(seed)
    names = METHODS + (CONTRASTS if contrasts else ())
    bounds = {name: np.empty((reps, 2)) for name in names}
    for r in range(reps):
        values, clusters = draw(rng, n_clusters, sizes, p, rho)
        iv = cluster_t(values, clusters, confidence)
        bounds["cluster_t"][r] = iv.low, iv.high
        iv = cluster_bootstrap(values, clusters, confidence, resamples=resamples, seed=r)
        bounds["cluster_bootstrap"][r] = iv.low, iv.high
        if contrasts:
            bounds["wald_t"][r] = _wald_t(values, clusters, confidence)
            bounds["percentile_bootstrap"][r] = _percentile_bootstrap(values, clusters, confidence, resamples, rng)
    out = {}
    for name, b in bounds.items():
        lower_miss, upper_miss = float(np.mean(b[:, 0] > p)), float(np.mean(b[:, 1] < p))
        out[name] = {
            "coverage": 1 - lower_miss - upper_miss,
            "lower_miss": lower_miss,
            "upper_miss": upper_miss,
            "mean_width": float(np.mean(b[:, 1] - b[:, 0])),
        }
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--rho", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    scenarios = [(50, 0.85), (50, 0.9), (20, 0.9)]
    print(f"reps={args.reps} resamples={args.resamples} rho={args.rho} sizes=1-6 seed={args.seed}")
    print(f"{'G':>3} {'p':>5} {'method':<21} {'coverage':>8} {'low_miss':>8} {'up_miss':>8} {'width':>7}")
    for g, p in scenarios:
        t0 = time.perf_counter()
        res = simulate(args.reps, g, (1, 6), p, args.rho, args.resamples, seed=args.seed, contrasts=True)
        for name, row in res.items():
            print(
                f"{g:>3} {p:>5} {name:<21} {row['coverage']:>8.3f} {row['lower_miss']:>8.3f} "
                f"{row['upper_miss']:>8.3f} {row['mean_width']:>7.3f}"
            )
        print(f"    ({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
