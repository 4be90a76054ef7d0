"""Benchmark: the gate's clustered interval (``cluster_t``) when the failing clusters come in many types.

The monotone lower bound of ``_core/cr2.py`` is a minimum over "better" data sets, found per count of
failures kept: exactly (a knapsack over the distinct (failures, size) types of the failing clusters) up to
64 failures, by a Lagrangian bound beyond. Its cost grows with the number of types T, so unequal cluster
sizes (a source case with many derived cases, epochs) are the hard cell. Four layouts, from T ≈ 26 to
T ≈ 500:

    python benchmarks/cluster_types.py                                  # this checkout
    python benchmarks/cluster_types.py --checkout /path/to/other/checkout --rounds 3
                                                                        # side by side, alternating processes

Each figure is the CPU time of one ``cluster_t_from_sums`` call in a fresh process (both bounds),
the minimum over ``--rounds`` processes per checkout; the intervals of every checkout must be identical
(exit 1 otherwise).

``--reduced`` times the interval of a pass^k / pass@k criterion over epochs instead
(``_core/epochs.fractional_interval`` with the values' common denominator D, the gate's path): the same
monotone bound on Σm·D scaled rows (at most 2,000,000), beside the raw CR2 logit-t interval.

    python benchmarks/cluster_types.py --reduced

``--layout CLUSTERS,LARGEST,P`` (repeatable) times these layouts instead of the four, e.g. the gate's interval
at scale, 500,000 clusters of 1–3 rows (about 1,000,000 rows):

    python benchmarks/cluster_types.py --layout 500000,3,0.9
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

#: (clusters, largest size, pass probability); sizes uniform on 1..largest, passes binomial, seed 0.
LAYOUTS = [(2000, 60, 0.8), (2000, 30, 0.9), (500, 30, 0.95), (20000, 8, 0.9)]
SMOKE = [(200, 10, 0.9)]
#: (cases, fewest epochs, most epochs, reduction, largest cluster in cases); per-epoch pass probability ~ Beta(8, 1).
REDUCED = [(2000, 10, 10, "pass^5", 3), (100000, 5, 5, "pass^3", 1), (500, 8, 8, "pass^4", 6),
           (100, 5, 12, "pass^3", 2), (20000, 3, 10, "pass^2", 2), (20000, 3, 10, "pass^2", 6)]
REDUCED_SMOKE = [(100, 5, 6, "pass^3", 2)]


def reduced_child(designs: list[tuple[int, int, int, str, int]]) -> list[dict[str, object]]:
    """Time the reduced criterion's interval for every design in this process."""
    import numpy as np

    from oloproof_nb._core.epochs import fractional_interval, reduce_counts, value_denominator

    out = []
    rng = np.random.default_rng(1)
    fractional_interval(np.array([0.5, 1.0]), np.array([1, 1]), 0.95, denominator=2)  # first use: imports
    for cases, fewest, most, reduction, largest in designs:
        n = rng.integers(fewest, most + 1, cases)
        c = rng.binomial(n, rng.beta(8, 1, cases))
        values = reduce_counts(n, c, reduction)
        cluster = np.repeat(np.arange(cases), rng.integers(1, largest + 1, cases))[:cases]
        sums, sizes = np.bincount(cluster, weights=values), np.bincount(cluster)
        used = sizes > 0
        d = value_denominator(n, reduction)
        t = time.thread_time()
        iv = fractional_interval(sums[used], sizes[used], 0.95, denominator=d)
        spent = time.thread_time() - t
        raw = fractional_interval(sums[used], sizes[used], 0.95)
        out.append({"design": [cases, fewest, most, reduction, largest], "denominator": d, "seconds": spent,
                    "low": iv.low, "high": iv.high, "raw_low": raw.low, "raw_high": raw.high})
    return out


def child(layouts: list[tuple[int, int, float]]) -> list[dict[str, object]]:
    """Time every layout in this process (the checkout on sys.path first)."""
    import numpy as np

    from oloproof_nb._core.cr2 import _types, cluster_t_from_sums

    out = []
    rng = np.random.default_rng(0)
    cluster_t_from_sums(np.array([1, 2]), np.array([2, 2]), 0.95)  # first use: scipy.special imported
    for g, largest, p in layouts:
        m = rng.integers(1, largest + 1, g)
        k = rng.binomial(m, p)
        t = time.thread_time()
        iv = cluster_t_from_sums(k, m, 0.95)
        spent = time.thread_time() - t
        out.append({"layout": [g, largest, p], "types": int(_types(m - k, m)[0].shape[0]),
                    "failures": int((m - k).sum()), "rows": int(m.sum()), "seconds": spent,
                    "low": iv.low, "high": iv.high})
    return out


def layout(text: str) -> tuple[int, int, float]:
    """``CLUSTERS,LARGEST,P`` of ``--layout``: positive whole numbers of clusters and rows, 0 < P < 1."""
    try:
        g, largest, p = text.split(",")
        parsed = (int(g), int(largest), float(p))
    except ValueError:
        parsed = (0, 0, 0.0)
    if parsed[0] < 1 or parsed[1] < 1 or not 0 < parsed[2] < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: write CLUSTERS,LARGEST,P, e.g. 500000,3,0.9 "
                                         "(whole numbers of at least 1, 0 < P < 1)")
    return parsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", action="append", default=[], type=Path,
                        help="another checkout to time side by side (repeatable)")
    parser.add_argument("--rounds", type=int, default=3, help="fresh processes per checkout (figures: minimum)")
    parser.add_argument("--smoke", action="store_true", help="one small layout, one round (CI)")
    parser.add_argument("--reduced", action="store_true",
                        help="time a pass^k / pass@k criterion's monotone interval instead")
    parser.add_argument("--layout", action="append", default=[], type=layout, metavar="CLUSTERS,LARGEST,P",
                        help="time this layout instead of the four (repeatable): clusters, largest size, pass "
                             "probability")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--reduced-child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child([tuple(x) for x in json.loads(args.child)])))
        return 0
    if args.reduced_child:
        print(json.dumps(reduced_child([tuple(x) for x in json.loads(args.reduced_child)])))
        return 0
    if args.reduced:
        return reduced_main(REDUCED_SMOKE if args.smoke else REDUCED)
    layouts = args.layout or (SMOKE if args.smoke else LAYOUTS)
    rounds = 1 if args.smoke else args.rounds
    checkouts = [HERE, *[c.resolve() for c in args.checkout]]
    import numpy

    print(f"platform: {platform.platform()} | cpus: {os.cpu_count()} | python {platform.python_version()} | "
          f"numpy {numpy.__version__}")
    results: dict[Path, list[list[dict[str, object]]]] = {c: [] for c in checkouts}
    for _ in range(rounds):
        for c in checkouts:  # alternating: A B A B
            env = {**os.environ, "PYTHONPATH": str(c)}
            proc = subprocess.run([sys.executable, __file__, "--child", json.dumps(layouts)], env=env,
                                  capture_output=True, text=True, check=True, cwd=c)
            results[c].append(json.loads(proc.stdout))
    ok = True
    for i, (g, largest, p) in enumerate(layouts):
        first = results[HERE][0][i]
        print(f"{g:,} clusters of 1–{largest} rows, p={p}: {first['rows']:,} rows, {first['types']} failure types, "
              f"{first['failures']:,} failures")
        for c in checkouts:
            best = min(r[i]["seconds"] for r in results[c])  # type: ignore[type-var]
            same = all((r[i]["low"], r[i]["high"]) == (first["low"], first["high"]) for r in results[c])
            ok = ok and same
            print(f"    {str(c):50s} {best:7.3f} s   interval [{first['low']:.6f}, {first['high']:.6f}]"
                  f"{'' if same else '  DIFFERENT'}")
    return 0 if ok else 1


def reduced_main(designs: list[tuple[int, int, int, str, int]]) -> int:
    """The reduced criterion's interval, one fresh process for all designs (this checkout)."""
    proc = subprocess.run([sys.executable, __file__, "--reduced-child", json.dumps(designs)], check=True,
                          env={**os.environ, "PYTHONPATH": str(HERE)}, capture_output=True, text=True, cwd=HERE)
    ok = True
    for r in json.loads(proc.stdout):
        cases, fewest, most, reduction, largest = r["design"]
        epochs = f"{fewest}" if fewest == most else f"{fewest}–{most}"
        wider = r["low"] <= r["raw_low"] + 1e-12 and r["high"] >= r["raw_high"] - 1e-12
        ok = ok and wider
        print(f"{cases:,} cases, {epochs} epochs each, {reduction}, clusters of 1–{largest} cases: "
              f"D={r['denominator']:,} ({cases * r['denominator']:,} scaled rows): {r['seconds']:.3f} s   monotone "
              f"[{r['low']:.4f}, {r['high']:.4f}], raw [{r['raw_low']:.4f}, {r['raw_high']:.4f}]"
              f"{'' if wider else '  NARROWER THAN RAW'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
