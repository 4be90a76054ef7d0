"""Benchmark: ``op.gate`` on two pooled runs whose fault criterion is reduced with pass^2.

In runs pooled by ``op.load_runs``, a fault replay the replay cache gave several runs is one try of the agent,
and pass^k counts it once (README section 6b). Telling a cached replay from its original reads each run's
``replays.jsonl`` (the time each replay was made), which the columnar copy does not hold. This script measures
what that costs: two runs of ``--cases`` cases each, made from a real run of the bundled ``stateful-agent``
example (``benchmarks/frames.py``'s ``write_run``), the first with live replays, the second with every replay
from the cache; then, in a fresh process, ``op.load_runs`` and the frames the gate reads (untimed), and

1. ``op.gate`` with pass^2 on ``answer_matches`` only (no fault criterion reduced: no replay record read);
2. ``op.gate`` with pass^2 on the fault criterion, first call (the replay records read) and the best of
   ``--repeat`` more (read once per pooled Run);
3. ``op.reduce_epochs`` with pass^2 after that.

Run::

    python benchmarks/pooled.py                # 50,000 cases a run (about a minute in all)
    python benchmarks/pooled.py --smoke        # 480 cases a run (CI)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # the checkout, unless oloproof_nb is installed
sys.path.append(str(Path(__file__).resolve().parent))  # frames.py, beside this script

FAULT = "recovers_from_error_at_issue_refund"


def release(criterion: str) -> dict[str, object]:
    """The example's gate settings with ``criterion`` reduced with pass^2."""
    return {"allow_approximate_methods": True, "min_clusters": 20, "method": "cluster_t",
            "criteria": {criterion: {"threshold": 0.5, "reduce": "pass^2"}}}


def child(first: Path, second: Path, repeat: int) -> dict[str, object]:
    """The timings, in this (fresh) process."""
    import oloproof_nb as op

    pool = op.load_runs([first, second])
    _ = pool.verdicts, pool.cases, pool.replays  # read anyway by any gate: out of the timings
    t = time.perf_counter()
    op.gate(pool, release=release("answer_matches"))
    plain = time.perf_counter() - t
    t = time.perf_counter()
    gate = op.gate(pool, release=release(FAULT))
    cold = time.perf_counter() - t
    warm = []
    for _ in range(repeat):
        t = time.perf_counter()
        gate = op.gate(pool, release=release(FAULT))
        warm.append(time.perf_counter() - t)
    t = time.perf_counter()
    op.reduce_epochs(pool, reduce="pass^2")
    reduce = time.perf_counter() - t
    row = gate.table.set_index("criterion").loc[FAULT]
    return {"plain": plain, "cold": cold, "warm": min(warm), "reduce": reduce, "n": int(row["n"]),
            "reason": str(row["reason"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="op.gate on two pooled runs, pass^2 on the fault criterion")
    parser.add_argument("--cases", type=int, default=50_000, help="cases a run")
    parser.add_argument("--repeat", type=int, default=3, help="warm timings are the best of this many calls")
    parser.add_argument("--smoke", action="store_true", help="480 cases a run, one repeat (CI)")
    parser.add_argument("--child", nargs=2, metavar="RUN", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(Path(args.child[0]), Path(args.child[1]), args.repeat)))
        return 0
    cases, repeat = (480, 1) if args.smoke else (args.cases, args.repeat)
    from frames import machine, write_run

    import oloproof_nb as op
    from oloproof_nb._run.runner import run_suite
    from oloproof_nb.examples import init_example

    print(machine())
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        suite = op.load_suite(init_example("stateful-agent", tmp / "suite"))
        live, cached = (op.load_run(run_suite(suite, out=tmp / name)) for name in ("live", "cached"))
        if live.replays["cached"].any() or not cached.replays["cached"].all():
            print("error: the second template run did not take every replay from the cache")
            return 1
        t = time.perf_counter()
        for name, template in (("A", live), ("B", cached)):
            op.load_run(write_run(template, tmp / name, cases))  # the columnar copy built here, not timed below
        print(f"two runs of {cases:,} cases written and converted in {time.perf_counter() - t:.1f} s "
              f"(the second's {len(cached.replays):,}-row template replays all from the cache)")
        out = subprocess.run([sys.executable, __file__, "--child", str(tmp / "A"), str(tmp / "B"),
                              "--repeat", str(repeat)], capture_output=True, text=True, check=True)
        got = json.loads(out.stdout)
    print(f"op.gate, pass^2 on answer_matches only (no replay record read): {got['plain']:.3f} s")
    print(f"op.gate, pass^2 on {FAULT}: first call {got['cold']:.3f} s (each run's replays.jsonl read), "
          f"best of {repeat} more {got['warm']:.3f} s")
    print(f"op.reduce_epochs(pool, reduce='pass^2') after it: {got['reduce']:.3f} s")
    print(f"the fault criterion: n {got['n']}, reason {got['reason'][:110]!r}")
    if "repeat a try" not in got["reason"]:
        print("error: the pooled gate did not count the cached replays once")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
