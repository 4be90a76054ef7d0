"""Coverage of the gate's clustered intervals by simulation: the table in benchmarks/coverage.md.

Designs (each repetition draws one data set of G clusters, seeded):

- ``betabin``: sizes uniform on 1..6, cluster pass probability p_c ~ Beta(p(1−ρ)/ρ, (1−p)(1−ρ)/ρ)
  (mean p, intra-cluster correlation ρ), rows ~ Bernoulli(p_c);
- ``unequal``: one 50-row cluster and G − 1 singletons, the same beta-binomial rows (the issue's design);
- ``concentrated``: sizes 1..6; a cluster is "failing" with probability π (column ``rho`` holds π) and then
  passes with probability 1 − (1 − p)/π, else always passes: failures sit in few clusters.

The target is the true rate p (sizes are independent of p_c, so E[Σk]/E[Σm] = p). A lower miss is
ci_low > p (the gate could PASS a threshold above the truth); nominal two-sided 95% means 2.5% each side.
Width is the median of ci_high − ci_low.

    python tests/reference/coverage_simulation.py --reps 2000 --out benchmarks/coverage.md   # the full table
    python tests/reference/coverage_simulation.py --reps 2000 --method cluster_t    # only the gate's method's rows
    python tests/reference/coverage_simulation.py --reps 2000 --G 5 8 10 12 15      # below the default min_clusters
    python tests/reference/coverage_simulation.py --reps 2000 --G 5 8 10 12 15 --p 0.3 0.5 0.7

``--G`` runs, instead of the grid, the ``cluster_t`` cells of ``betabin`` (every ρ and p of the grid) and
``concentrated`` (π ∈ {0.1, 0.2}, p ∈ {0.9, 0.95}) at those G, and the all-pass bounds of those G: what lowering
``min_clusters`` in release.yaml would let the gate decide on. ``--p`` replaces those p (``concentrated`` keeps
the cells with π ≥ 1 − p, the others have no such design). No clustered lower bound exceeds the all-pass bound
(α/2)^(1/G) (0.78 at G = 15), so at G ≤ 15 the grid's p ≥ 0.8 cannot be missed: rates below it can.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from oloproof_nb._core.stats import rate_interval_from_sums  # noqa: E402

GRID_G = (20, 30, 50, 100)
GRID_RHO = (0.1, 0.3, 0.5)
GRID_P = (0.8, 0.9, 0.95)
#: π (share of failing clusters) and p of the ``concentrated`` cells; π ≥ 1 − p, so a failing cluster's rate is ≥ 0
CONCENTRATED = ((0.1, 0.2), (0.9, 0.95))


def draw(rng: np.random.Generator, design: str, g: int, p: float, rho: float) -> tuple[np.ndarray, np.ndarray]:
    """Passes and rows per cluster for one data set."""
    if design == "unequal":
        m = np.r_[50, np.ones(g - 1, dtype=np.int64)]
    else:
        m = rng.integers(1, 7, g)
    if design == "concentrated":
        failing = rng.random(g) < rho
        pc = np.where(failing, 1 - (1 - p) / rho, 1.0)
    else:
        scale = (1 - rho) / rho
        pc = rng.beta(p * scale, (1 - p) * scale, g)
    return rng.binomial(m, pc), m


def cell(design: str, g: int, rho: float, p: float, method: str, reps: int, seed: int,
         resamples: int = 1000) -> dict[str, float | int | str]:
    """Coverage, lower/upper miss and median width of one method in one cell."""
    rng = np.random.default_rng([seed, g, int(rho * 1000), int(p * 1000), sum(map(ord, design))])
    low, high = np.empty(reps), np.empty(reps)
    for r in range(reps):
        k, m = draw(rng, design, g, p, rho)
        iv = rate_interval_from_sums(k, m, method=method, resamples=resamples, seed=r)
        low[r], high[r] = iv.low, iv.high
    lower_miss, upper_miss = float(np.mean(low > p)), float(np.mean(high < p))
    return {"design": design, "G": g, "rho": rho, "p": p, "method": method, "reps": reps,
            "coverage": 1 - lower_miss - upper_miss, "lower_miss": lower_miss, "upper_miss": upper_miss,
            "median_width": float(np.median(high - low)), "median_low": float(np.median(low))}


def cells(reps: int, gs: tuple[int, ...] = (), ps: tuple[float, ...] = ()) -> list[tuple]:
    """(design, G, ρ, p, method, reps) of every cell; with ``gs``, only the ``cluster_t`` cells of ``betabin`` and
    ``concentrated`` at those G (``--G``), at the rates ``ps`` if given (``--p``)."""
    if gs:
        out = [("betabin", g, rho, p, "cluster_t") for g, rho, p in itertools.product(gs, GRID_RHO, ps or GRID_P)]
        out += [("concentrated", g, pi, p, "cluster_t")
                for g, pi, p in itertools.product(gs, CONCENTRATED[0], ps or CONCENTRATED[1]) if pi >= 1 - p]
        return [(*c, reps) for c in out]
    out = [("betabin", g, rho, p, "cluster_t") for g, rho, p in itertools.product(GRID_G, GRID_RHO, GRID_P)]
    out += [("unequal", 20, rho, p, "cluster_t") for rho, p in itertools.product(GRID_RHO, GRID_P)]
    out += [("concentrated", g, pi, p, "cluster_t") for g, pi, p in itertools.product(GRID_G, *CONCENTRATED)]
    out += [("betabin", g, rho, p, "cluster_bootstrap")
            for g, rho, p in itertools.product((*GRID_G, 200), GRID_RHO, GRID_P)]
    return [(*c, reps) for c in out]


def _run(args: tuple) -> dict[str, float | int | str]:
    design, g, rho, p, method, reps, seed = args
    return cell(design, g, rho, p, method, reps, seed)


def all_pass_bounds(gs: tuple[int, ...] = (20, 50, 100)) -> list[tuple[int, float, float]]:
    """The lower bound of an all-pass run with G clusters of 1 and of 3 rows (what a suite can show at best)."""
    out = []
    for g in gs:
        singles = rate_interval_from_sums(np.ones(g, int), np.ones(g, int), method="clopper_pearson").low
        triples = rate_interval_from_sums(np.full(g, 3), np.full(g, 3), method="cluster_t").low
        out.append((g, singles, triples))
    return out


def table(rows: list[dict], command: str, gs: tuple[int, ...] = ()) -> str:
    lines = ["# Coverage of the gate's intervals (simulation)", "",
             f"Made by `{command}` (seeded; {rows[0]['reps']} repetitions per cell; bootstrap 1,000 resamples). "
             "Design and definitions: the docstring of tests/reference/coverage_simulation.py. "
             "`lower_miss` is how often ci_low is above the true rate p (nominal 0.025): the figure a false PASS "
             "depends on. For `concentrated` the `rho` column is the share π of failing clusters.", "",
             "| design | method | G | rho | p | coverage | lower_miss | upper_miss | median_width | median_low |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['design']} | {r['method']} | {r['G']} | {r['rho']} | {r['p']} | {r['coverage']:.4f} | "
                     f"{r['lower_miss']:.4f} | {r['upper_miss']:.4f} | {r['median_width']:.4f} | "
                     f"{r['median_low']:.4f} |")
    lines += ["", "All-pass lower bounds (95%): the best a suite of G clusters can show.", "",
              "| G | G independent cases (Clopper–Pearson) | G clusters of 3 rows (cluster_t) |", "|---|---|---|"]
    lines += [f"| {g} | {a:.4f} | {b:.4f} |" for g, a, b in all_pass_bounds(gs or (20, 50, 100))]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--method", default="", help="run only the cells of this method (cluster_t, cluster_bootstrap)")
    parser.add_argument("--G", type=int, nargs="+", default=[], metavar="G",
                        help="run only the cluster_t cells of betabin and concentrated at these G (e.g. 5 8 10)")
    parser.add_argument("--p", type=float, nargs="+", default=[], metavar="P",
                        help="with --G: these true rates instead of the grid's (each in (0, 1))")
    args = parser.parse_args(argv)
    if any(g < 2 for g in args.G):
        parser.error(f"--G takes numbers of clusters of at least 2, not {min(args.G)}")
    if args.p and (not args.G or not all(0 < p < 1 for p in args.p)):
        parser.error("--p takes true rates in (0, 1), with --G")
    gs, ps = tuple(sorted(set(args.G))), tuple(sorted(set(args.p)))
    t0 = time.perf_counter()
    jobs = [(*c, args.seed) for c in cells(args.reps, gs, ps) if args.method in ("", c[4])]
    if not jobs:
        parser.error(f"no cells of --method {args.method}" + (" at --G (its cells are cluster_t's)" if gs else ""))
    with ProcessPoolExecutor(args.workers) as pool:
        rows = list(pool.map(_run, jobs))
    command = (f"python tests/reference/coverage_simulation.py --reps {args.reps} --seed {args.seed}"
               + (f" --method {args.method}" if args.method else "")
               + (f" --G {' '.join(map(str, gs))}" if gs else "") + (f" --p {' '.join(map(str, ps))}" if ps else ""))
    seconds = time.perf_counter() - t0
    text = table(rows, command, gs) + f"\n({seconds:.0f} s on this machine, {args.workers} processes)\n"
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
