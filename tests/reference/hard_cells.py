"""The gate's false-PASS rate in hard cells: the second table of benchmarks/coverage.md.

tests/reference/coverage_simulation.py covers G ∈ {20, 30, 50, 100} × ρ ∈ {0.1, 0.3, 0.5} × p ∈ {0.8, 0.9, 0.95}
with sizes uniform on 1..6. These cells are the ones it leaves out, each with the interval the gate computes
(seeded; each repetition draws one data set; the cluster pass probability is p_c ~ Beta(p(1−ρ)/ρ, (1−p)(1−ρ)/ρ)
as there, mean p, intra-cluster correlation ρ):

- ``near1``: rates near 1 (p ∈ {0.97, 0.98, 0.99}), sizes uniform on 1..6 (``coverage_simulation.draw``),
  rows ~ Bernoulli(p_c); ``cluster_t`` on the cluster sums. Target p.
- ``lognormal<M>`` / ``geometric<M>``: cluster sizes that vary, mean about M rows (lognormal: ⌈X⌉ with
  log X ~ N(log(M − 0.5) − 0.5, 1); geometric: support 1, 2, ..., mean M); ``cluster_t``. Target p.
- ``epochs<k>``: G cases, each a cluster of k tries (``tries``) of one case whose success probability is p_c (a run
  with ``epochs: k``, a criterion reduced with ``mean``); ``cluster_t`` on the sums (every size k). Target p.
- ``mixture<s>``: G cases of k tries (a run with ``epochs: k``, a ``mean`` criterion) from a population where a
  share s of the cases never passes and the others pass each try with probability p_c ~ Beta as above (ρ = 0:
  every such case at p). Target (1 − s)·p. The population README §6 names ("one case in ten always fails"); in
  the (1 − s)^G of samples that draw none of the failing cases, the clusters differ only by their tries, and
  the CR2 interval alone vouched for a rate those cases pull down (11.55% lower misses at G = 20, 10 tries,
  s = 0.1, p = 0.9, before the bound was capped at (α/2)^(1/n_min)·p̂ where no case passes nothing, and 5% at
  G = 100, s = 0.05, where a few do, before the cap counted them: ``binomial.never_pass_cap``).
- ``pass^<k>`` (``tries`` n): G cases (each its own source cluster) of n tries each, reduced with ``pass^k``. With
  n = k the values are 0/1 and the gate uses Clopper–Pearson on the G cases; with n > k they are the unbiased
  C(c, k)/C(n, k) (fractional) and the gate uses ``fractional_interval`` with the common denominator
  (``value_denominator``), as ``gate.reduced_interval`` does. Target E[p_c^k] = Π_{i<k} (a + i)/(a + b + i).

G = 20 is the default ``min_clusters``: the smallest suite the gate judges. A lower miss is ci_low > target
(a threshold at the target would PASS); nominal two-sided 95% means 2.5% each side. ``se`` is the Monte-Carlo
standard error √(q(1 − q)/reps) of lower_miss; a cell is flagged (``*``) when lower_miss exceeds 3.25% (the
bound README states for the grid of coverage_simulation.py) by more than 2 se.

    python tests/reference/hard_cells.py --reps 2000             # the table in benchmarks/coverage.md
    python tests/reference/hard_cells.py --smoke                  # a few cells, 20 repetitions: does it run
    python tests/reference/hard_cells.py --only lognormal10 --G 200 --raw   # those cells, and the unmodified bound's

``--raw`` adds ``raw_miss`` to the ``cluster_t`` cells: how often the unmodified CR2 logit-t lower bound
expit(logit p̂ − t_ν·SE/(p̂(1 − p̂))) (SE the CR2 standard error, ν Bell–McCaffrey's) is above the target, in the
same data sets (the gate's own bound where p̂ is 0 or 1, which has no logit bound). The gate's bound never exceeds
it, so a ``raw_miss`` as high as ``lower_miss`` says the miss is the logit-t bound's, not the monotone construction's.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from scipy import special

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from coverage_simulation import draw  # noqa: E402

import oloproof_nb as op  # noqa: E402
from oloproof_nb._core.cr2 import bell_mccaffrey_df, cr2_se  # noqa: E402
from oloproof_nb._core.epochs import fractional_interval, value_denominator  # noqa: E402

LIMIT = 0.0325  # README's bound on cluster_t's lower miss over coverage_simulation.py's grid
GRID_G = (20, 30, 50)
#: Larger G for rates near 1: at G ≤ 50 ci_low never exceeds the all-pass bound (α/2)^(1/n_min) ≤ 0.929 < p
BEYOND_CAP = (100, 200, 400)


def _beta(p: float, rho: float) -> tuple[float, float]:
    scale = (1 - rho) / rho
    return p * scale, (1 - p) * scale


def _sizes(rng: np.random.Generator, design: str, g: int) -> np.ndarray:
    mean = float(design.removeprefix("lognormal").removeprefix("geometric"))
    if design.startswith("lognormal"):
        return np.ceil(rng.lognormal(math.log(mean - 0.5) - 0.5, 1.0, g)).astype(np.int64)
    return rng.geometric(1 / mean, g).astype(np.int64)


def target(design: str, p: float, rho: float, k: int) -> float:
    """The true rate the interval estimates: p, or E[p_c^k] for pass^k."""
    if design.startswith("mixture"):
        return (1 - float(design.removeprefix("mixture"))) * p
    if not design.startswith("pass^"):
        return p
    a, b = _beta(p, rho)
    return float(np.prod([(a + i) / (a + b + i) for i in range(k)]))


def interval(rng: np.random.Generator, design: str, g: int, p: float, rho: float, k: int,
             n: int) -> tuple[float, float, float, float]:
    """(ci_low, ci_high, mean rows per cluster, raw lower bound) of one data set drawn for the cell (the raw
    bound is NaN for ``pass^k``, whose interval is not ``cluster_t``)."""
    if design == "near1":
        passes, m = draw(rng, "betabin", g, p, rho)
    else:
        if design.startswith(("epochs", "mixture")):
            m = np.full(g, k, dtype=np.int64)
        elif design.startswith("pass^"):
            m = np.full(g, n, dtype=np.int64)
        else:
            m = _sizes(rng, design, g)
        rates = rng.beta(*_beta(p, rho), g) if rho > 0 else np.full(g, p)
        if design.startswith("mixture"):  # a share of the cases never passes
            rates = np.where(rng.random(g) < float(design.removeprefix("mixture")), 0.0, rates)
        passes = rng.binomial(m, rates)
    if not design.startswith("pass^"):
        iv = op.rate_interval_from_sums(passes, m, method="cluster_t")
        return iv.low, iv.high, float(m.mean()), raw_low(passes, m, iv.low)
    values = op.pass_hat_k(m, passes, k)
    if n == k:  # binary values, one case per cluster: Clopper–Pearson on the G cases
        iv = op.rate_interval_from_sums([int(values.sum())], [g], method="clopper_pearson")
    else:
        iv = fractional_interval(values, np.ones(g, dtype=np.int64), 0.95,
                                 denominator=value_denominator(m, f"pass^{k}"))
    return iv.low, iv.high, 1.0, math.nan


def raw_low(k: np.ndarray, m: np.ndarray, gate_low: float) -> float:
    """The unmodified CR2 logit-t lower bound at 95% of cluster sums ``k`` of sizes ``m`` (``gate_low`` when
    p̂ is 0 or 1: no logit bound there)."""
    p = k.sum() / m.sum()
    if p in (0.0, 1.0):
        return gate_low
    t = float(special.stdtrit(bell_mccaffrey_df(m), 0.975))
    return float(special.expit(special.logit(p) - t * cr2_se(k, m) / (p * (1 - p))))


def cell(design: str, g: int, rho: float, p: float, k: int, n: int, reps: int,
         seed: int) -> dict[str, float | int | str]:
    """lower_miss, its Monte-Carlo SE, upper_miss, coverage and median width of one cell."""
    rng = np.random.default_rng([seed, g, int(rho * 1000), int(p * 1000), k, n, sum(map(ord, design))])
    truth = target(design, p, rho, k)
    out = np.array([interval(rng, design, g, p, rho, k, n) for _ in range(reps)])
    low, high, raw = out[:, 0], out[:, 1], out[:, 3]
    lower_miss, upper_miss = float(np.mean(low > truth)), float(np.mean(high < truth))
    raw_miss = float(np.mean(raw > truth)) if not design.startswith("pass^") else math.nan
    se = math.sqrt(lower_miss * (1 - lower_miss) / reps)
    return {"design": design, "G": g, "tries": n if design.startswith(("pass^", "epochs", "mixture")) else "",
            "rho": rho, "p": p, "target": truth, "mean_m": float(out[:, 2].mean()),
            "reps": reps, "lower_miss": lower_miss, "se": se, "upper_miss": upper_miss,
            "coverage": 1 - lower_miss - upper_miss, "median_width": float(np.median(high - low)),
            "raw_miss": raw_miss,
            "flag": lower_miss - LIMIT > 2 * se}


def cells(smoke: bool = False) -> list[tuple[str, int, float, float, int, int]]:
    """(design, G, ρ, p, k, n) of every cell."""
    if smoke:
        return [("near1", 20, 0.1, 0.99, 1, 1), ("lognormal10", 20, 0.5, 0.9, 1, 1),
                ("epochs3", 20, 0.1, 0.95, 3, 3), ("pass^3", 20, 0.1, 0.98, 3, 3), ("pass^3", 20, 0.1, 0.98, 3, 6),
                ("mixture0.1", 20, 0.0, 0.9, 10, 10)]
    out = [("near1", g, rho, p, 1, 1) for g, rho, p in
           itertools.product((*GRID_G, *BEYOND_CAP), (0.1, 0.5), (0.97, 0.98, 0.99))]
    out += [(d, g, rho, p, 1, 1) for d, g, rho, p in itertools.product(
        ("lognormal3", "lognormal10", "geometric5"), (20, 50, 100, 200), (0.1, 0.5), (0.8, 0.9, 0.95))]
    out += [(f"epochs{k}", g, rho, p, k, k) for k, g, rho, p in
            itertools.product((3, 5), (*GRID_G, 100, 200), (0.1, 0.5), (0.9, 0.95, 0.98))]
    out += [(f"mixture{s}", g, rho, p, k, k) for s, k, g, rho, p in
            itertools.product((0.05, 0.1), (5, 10), (*GRID_G, 100), (0.0, 0.1), (0.9, 0.97))]
    out += [(f"pass^{k}", g, rho, p, k, k * twice) for k, g, rho, p, twice in
            itertools.product((3, 5), (*GRID_G, 100), (0.1, 0.5), (0.95, 0.98), (1, 2))]
    return out


def _run(args: tuple[str, int, float, float, int, int, int, int]) -> dict[str, float | int | str]:
    return cell(*args)


def table(rows: list[dict[str, float | int | str]], raw: bool = False) -> str:
    """The rows as a Markdown table (``*`` marks a flagged cell; ``raw``: with the ``raw_miss`` column)."""
    lines = ["| design | G | tries | rho | p | target | mean_m | lower_miss | se | upper_miss | coverage "
             "| median_width |" + (" raw_miss |" if raw else ""),
             "|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if raw else "")]
    for r in rows:
        flag = " *" if r["flag"] else ""
        extra = "" if not raw or math.isnan(float(r["raw_miss"])) else f" {r['raw_miss']:.4f} |"
        lines.append(f"| {r['design']} | {r['G']} | {r['tries']} | {r['rho']} | {r['p']} | {r['target']:.4f} | "
                     f"{r['mean_m']:.2f} | "
                     f"{r['lower_miss']:.4f}{flag} | {r['se']:.4f} | {r['upper_miss']:.4f} | {r['coverage']:.4f} | "
                     f"{r['median_width']:.4f} |" + (extra or (" |" if raw else "")))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=2025)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", default="", help="run only the designs starting with this text")
    parser.add_argument("--smoke", action="store_true", help="five cells, 20 repetitions, one process")
    parser.add_argument("--raw", action="store_true", help="add raw_miss: the unmodified CR2 logit-t bound's miss")
    parser.add_argument("--G", type=int, default=0, help="run only the cells with this number of clusters")
    args = parser.parse_args(argv)
    reps = 20 if args.smoke else args.reps
    t0 = time.perf_counter()
    jobs = [(*c, reps, args.seed) for c in cells(args.smoke) if c[0].startswith(args.only) and args.G in (0, c[1])]
    if args.smoke or args.workers == 1:
        rows = [_run(j) for j in jobs]
    else:
        with ProcessPoolExecutor(args.workers) as pool:
            rows = list(pool.map(_run, jobs))
    flagged = sum(bool(r["flag"]) for r in rows)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(table(rows, args.raw) + f"\n{len(rows)} cells, {reps} repetitions each, seed {args.seed}; {flagged} flagged "
          f"(lower_miss > {LIMIT} + 2 se); {time.perf_counter() - t0:.0f} s, {stamp}")


if __name__ == "__main__":
    main()
