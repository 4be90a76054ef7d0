"""Exact chance that ``op.compare`` says NO_REGRESSION for a candidate worse by exactly the margin, on independent
cases: the second table of benchmarks/paired.md.

n cases, one row each (singleton clusters). A case passes in the base run with probability p_b and in the
candidate with probability p_c, independently (two runs of agents that are stochastic per case), so the pair is
(pass→fail, fail→pass, unchanged) ~ Multinomial(n; p10, p01, 1 − p10 − p01) with p10 = p_b(1 − p_c) and
p01 = (1 − p_b)p_c, and the true difference is d = p_c − p_b. With the margin set to −d (the candidate is worse by
exactly the margin), the rule (NO_REGRESSION iff ci_low ≥ −margin) should say NO_REGRESSION at most 2.5% of the time
(confidence 0.95, one side). Every outcome (b, c) is enumerated: ci_low depends on the two counts only, so the
chance is Σ P(b, c) over the outcomes with ci_low(b, c) ≥ −margin — no simulation error.

``--worst`` also gives, per margin, the largest chance over every (p10, p01 = p10 − margin) — the worst truth — of
that wrong NO_REGRESSION and of a wrong REGRESSION just inside the margin (ci_high < −margin at d = −margin, also
promised at most 2.5%), over every p10 and over p10 ≤ 0.35. ``--power`` gives, at d = 0 (p10 = p01), the median
width and the chance of NO_REGRESSION at margins 0.05 and 0.1 instead.

    python tests/reference/paired_exact.py                 # the table of benchmarks/paired.md
    python tests/reference/paired_exact.py --worst --n 20 30 50 100
    python tests/reference/paired_exact.py --power --n 50 100 200
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from oloproof_nb._core.paired import paired_difference_from_sums  # noqa: E402

#: (p_b, p_c): the two runs' pass probabilities per case; the candidate is worse by p_b − p_c (the margin).
AGENTS = [(0.5, 0.5), (0.7, 0.7), (0.9, 0.9), (0.7, 0.6), (0.6, 0.5), (0.9, 0.8), (0.95, 0.9)]
SIZES = [20, 50, 100]


def bounds_table(n: int, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """ci_low and ci_high of every outcome: ``[b, c]`` for b rows pass→fail and c fail→pass of n (NaN where
    b + c > n)."""
    low, high = np.full((n + 1, n + 1), np.nan), np.full((n + 1, n + 1), np.nan)
    rows = np.ones(n, dtype=np.int64)
    for b in range(n + 1):
        for c in range(n + 1 - b):
            base = np.array([1] * b + [0] * c + [1] * (n - b - c))
            cand = np.array([0] * b + [1] * c + [1] * (n - b - c))
            d = paired_difference_from_sums(base, cand, rows, confidence=confidence)
            low[b, c], high[b, c] = d.low, d.high
    return low, high


def chance(cells: np.ndarray, p10: float, p01: float) -> float:
    """P((b, c) in ``cells``, a boolean [b, c] array) when (b, c, rest) ~ Multinomial(n; p10, p01, ·)."""
    n = cells.shape[0] - 1
    b, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    ok = (b + c <= n) & cells
    rest = max(0.0, 1.0 - p10 - p01)
    pmf = stats.multinomial.pmf(np.stack([b[ok], c[ok], n - b[ok] - c[ok]], axis=-1), n, [p10, p01, rest])
    return float(np.sum(pmf))


def no_regression_chance(low: np.ndarray, p10: float, p01: float, margin: float) -> float:
    """P(ci_low ≥ −margin) when (b, c, rest) ~ Multinomial(n; p10, p01, 1 − p10 − p01)."""
    return chance(np.nan_to_num(low, nan=-np.inf) >= -margin - 1e-12, p10, p01)


def regression_chance(high: np.ndarray, p10: float, p01: float, margin: float) -> float:
    """P(ci_high < −margin) under the same multinomial."""
    return chance(np.nan_to_num(high, nan=np.inf) < -margin - 1e-12, p10, p01)


def power(low: np.ndarray, high: np.ndarray, p: float) -> tuple[float, float, float]:
    """At p10 = p01 = p (d = 0): the median width and P(NO_REGRESSION) at margins 0.05 and 0.1."""
    n = low.shape[0] - 1
    b, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    ok = b + c <= n
    weight = stats.multinomial.pmf(np.stack([b[ok], c[ok], n - b[ok] - c[ok]], axis=-1), n, [p, p, 1 - 2 * p])
    width = (high - low)[ok]
    order = np.argsort(width, kind="stable")
    median = float(width[order][np.searchsorted(np.cumsum(weight[order]), 0.5)])
    return median, no_regression_chance(low, p, p, 0.05), no_regression_chance(low, p, p, 0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, nargs="+", default=SIZES)
    parser.add_argument("--worst", action="store_true", help="also the worst truth per margin")
    parser.add_argument("--power", action="store_true", help="median width and power at d = 0 instead")
    args = parser.parse_args()
    start = time.time()
    bounds = {n: bounds_table(n) for n in args.n}
    tables = {n: low for n, (low, _) in bounds.items()}
    if args.power:
        print("| n | p10 = p01 | median width | P(NO_REGRESSION), margin 0.05 | margin 0.1 |")
        print("|---:|---:|---:|---:|---:|")
        for n in args.n:
            for p in (0.02, 0.05, 0.1, 0.25):
                width, at_5, at_10 = power(*bounds[n], p)
                print(f"| {n} | {p} | {width:.3f} | {100 * at_5:.2f}% | {100 * at_10:.2f}% |")
        print(f"\n{time.time() - start:.0f} s")
        return
    print("| p_b | p_c | margin | p10 | p01 | " + " | ".join(f"n = {n}" for n in args.n) + " |")
    print("|---:|---:|---:|---:|---:|" + "---:|" * len(args.n))
    for pb, pc in AGENTS:
        p10, p01, margin = pb * (1 - pc), (1 - pb) * pc, round(pb - pc, 10)
        chances = [no_regression_chance(tables[n], p10, p01, margin) for n in args.n]
        print(f"| {pb} | {pc} | {margin:g} | {p10:.3f} | {p01:.3f} | "
              + " | ".join(f"{100 * x:.2f}%" for x in chances) + " |")
    if args.worst:
        print()
        for n in args.n:
            for margin in (0.0, 0.02, 0.05, 0.1, 0.2):
                grid = [p for p in np.linspace(margin, (1 + margin) / 2, 201)]
                low, high = bounds[n]
                worst = max((no_regression_chance(low, p, p - margin, margin), p) for p in grid)
                block = max((regression_chance(high, p, p - margin, margin), p) for p in grid)
                band = [p for p in grid if p <= 0.35]
                worst_band = max(((no_regression_chance(low, p, p - margin, margin), p) for p in band), default=(0, 0))
                block_band = max(((regression_chance(high, p, p - margin, margin), p) for p in band), default=(0, 0))
                print(f"n = {n}, margin {margin:g}: worst {100 * worst[0]:.2f}% at p10 = {worst[1]:.3f}; "
                      f"REGRESSION {100 * block[0]:.2f}% at p10 = {block[1]:.3f}; with p10 ≤ 0.35: "
                      f"{100 * worst_band[0]:.2f}% and {100 * block_band[0]:.2f}%")
    print(f"\n{time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
