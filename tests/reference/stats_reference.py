"""Outside-reference numbers for tests/test_stats.py (does not import oloproof_nb).

Run from the repository root to regenerate tests/reference/stats_reference.json:

    python tests/reference/stats_reference.py

Sources:
- Clopper–Pearson: ``scipy.stats.binomtest(k, n).proportion_ci(method="exact")``.
- Wilson: the closed form in Brown, Cai & DasGupta (2001), eq. (4), with scipy's normal quantile.
- CR1 clustered SE: plain-Python sums over clusters, SE² = G/(G−1)·Σ_c(k_c − p̂·m_c)²/(Σm)²,
  cross-checked here against statsmodels OLS on a constant with ``cov_type="cluster"``.
- cluster_t (CR2, Bell–McCaffrey df) is checked against clubSandwich: tests/reference/cr2_clubsandwich.R.
- slow_cluster_bca: a loop-per-resample cluster bootstrap with BCa (Efron & Tibshirani 1993, ch. 14),
  imported by the tests (it is too slow to belong in the package).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from scipy import stats

HERE = Path(__file__).resolve().parent
JSON_PATH = HERE / "stats_reference.json"

BINOMIAL_GRID = [(0, 10), (1, 10), (9, 10), (10, 10), (17, 40), (39, 40), (3, 7), (95, 100), (250, 300)]
CONFIDENCES = [0.8, 0.9, 0.95, 0.99]


def clopper_pearson_scipy(k: int, n: int, confidence: float) -> tuple[float, float]:
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="exact")
    return float(ci.low), float(ci.high)


def wilson_hand(k: int, n: int, confidence: float) -> tuple[float, float]:
    z = stats.norm.ppf(0.5 + confidence / 2)
    p = k / n
    center = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, center - half), min(1.0, center + half)


def cluster_counts(values: list[int], clusters: list[object]) -> tuple[list[int], list[int]]:
    k: dict[object, int] = {}
    m: dict[object, int] = {}
    for y, c in zip(values, clusters, strict=True):
        k[c] = k.get(c, 0) + int(y)
        m[c] = m.get(c, 0) + 1
    return [k[c] for c in k], [m[c] for c in k]


def cr1_se_loop(values: list[int], clusters: list[object]) -> tuple[float, float]:
    k, m = cluster_counts(values, clusters)
    g, total_k, total_m = len(k), sum(k), sum(m)
    p = total_k / total_m
    ss = sum((kc - p * mc) ** 2 for kc, mc in zip(k, m, strict=True))
    return p, math.sqrt(g / (g - 1) * ss) / total_m


def cr1_se_statsmodels(values: list[int], clusters: list[object]) -> float:
    import statsmodels.api as sm

    codes = np.unique(np.asarray(clusters), return_inverse=True)[1].reshape(-1)
    y = np.asarray(values, dtype=float)
    fit = sm.OLS(y, np.ones((y.size, 1))).fit(cov_type="cluster", cov_kwds={"groups": codes})
    return float(fit.bse[0])


def slow_cluster_bca(
    values: list[int] | np.ndarray,
    clusters: list[object] | np.ndarray,
    confidence: float = 0.95,
    resamples: int = 20_000,
    seed: int = 12345,
) -> tuple[float, float]:
    """Cluster bootstrap BCa, one resample of cluster indices per loop iteration."""
    k_list, m_list = cluster_counts(list(values), list(clusters))
    k, m = np.array(k_list), np.array(m_list)
    g = k.size
    p = k.sum() / m.sum()
    rng = np.random.default_rng(seed)
    theta = np.empty(resamples)
    for b in range(resamples):
        idx = rng.integers(0, g, size=g)
        theta[b] = k[idx].sum() / m[idx].sum()
    share = (np.sum(theta < p) + 0.5 * np.sum(np.isclose(theta, p, rtol=0, atol=1e-12))) / resamples
    z0 = stats.norm.ppf(share)
    jack = np.array([(k.sum() - k[i]) / (m.sum() - m[i]) for i in range(g)])
    d = jack.mean() - jack
    a = np.sum(d**3) / (6 * np.sum(d**2) ** 1.5)
    alpha = 1 - confidence
    lo_q = stats.norm.cdf(z0 + (z0 + stats.norm.ppf(alpha / 2)) / (1 - a * (z0 + stats.norm.ppf(alpha / 2))))
    hi_q = stats.norm.cdf(z0 + (z0 + stats.norm.ppf(1 - alpha / 2)) / (1 - a * (z0 + stats.norm.ppf(1 - alpha / 2))))
    return float(np.quantile(theta, lo_q)), float(np.quantile(theta, hi_q))


def _datasets() -> dict[str, dict[str, list]]:
    rng = np.random.default_rng(20240611)
    out: dict[str, dict[str, list]] = {}
    # random: 30 clusters of 1-5 rows, correlated passes
    sizes = rng.integers(1, 6, 30)
    cl = np.repeat(np.arange(30), sizes)
    pc = rng.beta(4, 1, 30)
    out["random_int_ids"] = {
        "values": (rng.random(cl.size) < pc[cl]).astype(int).tolist(),
        "clusters": cl.tolist(),
    }
    # string ids, shuffled rows, unequal sizes 1-12
    sizes = rng.integers(1, 13, 15)
    cl = np.repeat(np.arange(15), sizes)
    pc = rng.beta(2, 2, 15)
    vals = (rng.random(cl.size) < pc[cl]).astype(int)
    order = rng.permutation(cl.size)
    out["string_ids_unequal"] = {
        "values": vals[order].tolist(),
        "clusters": [f"src-{c:03d}" for c in cl[order]],
    }
    # small hand-checkable example
    out["tiny"] = {"values": [1, 0, 1, 1, 0, 1, 1, 1], "clusters": ["a", "a", "b", "b", "c", "c", "d", "d"]}
    return out


def build() -> dict:
    binomial = []
    for k, n in BINOMIAL_GRID:
        for conf in CONFIDENCES:
            binomial.append(
                {
                    "k": k,
                    "n": n,
                    "confidence": conf,
                    "clopper_pearson": list(clopper_pearson_scipy(k, n, conf)),
                    "wilson": list(wilson_hand(k, n, conf)),
                }
            )
    clustered = {}
    for name, data in _datasets().items():
        p, se = cr1_se_loop(data["values"], data["clusters"])
        se_sm = cr1_se_statsmodels(data["values"], data["clusters"])
        if abs(se - se_sm) > 1e-12:
            raise RuntimeError(f"{name}: loop SE {se} != statsmodels SE {se_sm}")
        clustered[name] = {
            **data,
            "estimate": p,
            "se": se,
        }
    return {
        "generated_by": "tests/reference/stats_reference.py",
        "binomial": binomial,
        "clustered": clustered,
    }


if __name__ == "__main__":
    ref = build()
    JSON_PATH.write_text(json.dumps(ref, indent=1) + "\n")
    print(
        f"wrote {JSON_PATH.relative_to(HERE.parent.parent)}: {len(ref['binomial'])} binomial rows, "
        f"{len(ref['clustered'])} clustered datasets"
    )
    for name, row in ref["clustered"].items():
        print(f"  {name}: p̂={row['estimate']:.6f} se={row['se']:.6f}")
