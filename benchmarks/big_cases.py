"""Benchmark: peak memory while a 200 MB ``cases.jsonl`` runs (cases are streamed to the runner).

Writes the benchmark desk suite (``_workload.py``) with a case file of about ``--mb`` megabytes, in one of
two shapes, then measures in fresh subprocesses (peak resident memory from ``getrusage``, so everything the
process touched counts, not only Python objects):

- **run**: ``op.load_suite(folder)`` (one streamed validation pass) and ``op.run`` (a second streamed pass,
  every case run, its record appended to the run directory and to the columnar copy) — what "a 200 MB case
  file runs" costs; with ``--runner``, the runner alone (``run_suite``: the journal, no columnar copy), the
  streaming promise, which fails the script at 1 GB or more;
- **gate**: ``op.load_run(dir)`` and ``op.gate(run)`` on the finished run directory (what ``oloproof run``
  does after the run, in its own process): the manifest, then the ``cases`` and ``verdicts`` columns of the
  run's Parquet copy (the journal is not read again). ``suite_drift_s``: the part of the gate that compares
  the suite folder's ``oloproof.yaml`` and case file with the run's (``suite_drift``: each file hashed, and read
  again only when it changed), timed once more on its own after the gate; ``edits`` what it found (none here).

Shapes: ``many`` (small refund requests, ~335 bytes a line: about 600,000 cases for 200 MB) and ``wide``
(each case's ``initial_state`` also holds 300 bystander orders, ~16 KB a line: about 12,800 cases). Run::

    python benchmarks/big_cases.py                     # 200 MB, both shapes
    python benchmarks/big_cases.py --mb 50 --shape wide
    python benchmarks/big_cases.py --smoke             # 2 MB (CI)
    python benchmarks/big_cases.py --shape many --no-gate   # the run only
    python benchmarks/big_cases.py --runner --no-gate      # the runner alone (no columnar copy)
    python benchmarks/big_cases.py --checkout /path/to/other/oloproof_nb/checkout   # the same, another version
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _workload import STATUSES, write_suite  # noqa: E402

MEASURE = r'''
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
import oloproof_nb as op
what, folder, out = sys.argv[2], sys.argv[3], sys.argv[4]
t0 = time.perf_counter()
if what in ("run", "runner"):
    suite = op.load_suite(folder)
    t1 = time.perf_counter()
    if what == "run":  # as `oloproof run`: the columnar copy built as the records are appended
        op.run(suite, out=out, progress=False)
    else:  # the runner alone: the journal, no copy
        from oloproof_nb._run.runner import run_suite
        run_suite(suite, out=out, progress=None)
    extra = {"load_s": t1 - t0, "cases": getattr(suite, "n_cases", None) or len(suite.cases)}
else:
    run = op.load_run(out)
    verdict = op.gate(run).verdict
    extra = {"verdict": verdict, "cases": int(run.n_cases)}
    try:  # part of the gate: the suite folder's files compared with the run's (a version before has none)
        from oloproof_nb._analysis.gate_drift import suite_drift
    except ImportError:
        pass
    else:
        t1 = time.perf_counter()
        extra["edits"] = [str(change) for _, change in suite_drift(run)]
        extra["suite_drift_s"] = time.perf_counter() - t1
        t0 += time.perf_counter() - t1  # seconds: load_run and the gate only, as before
print(json.dumps({"seconds": time.perf_counter() - t0,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, **extra}))
'''


def write_cases(folder: Path, megabytes: float, shape: str) -> int:
    """Overwrite ``folder/cases.jsonl`` with about ``megabytes`` MB of cases of ``shape``; the number written."""
    target = int(megabytes * 1_000_000)
    bystanders = ({f"ord-b{j:04d}": {"status": "delivered", "amount": 5 + j % 7} for j in range(300)}
                  if shape == "wide" else {"ord-x": {"status": "delivered", "amount": 5}})
    written = n = 0
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as handle:
        while written < target:
            oid = f"ord-{n:07d}"
            status = STATUSES[n % len(STATUSES)]
            after = "refunded" if status == "delivered" else status
            line = json.dumps({
                "id": oid, "input": {"order_id": oid, "message": f"Please refund order {oid}."},
                "initial_state": {"orders": {oid: {"status": status, "amount": 10 + n % 90}, **bystanders}},
                "expected": {"answer": "refunded" if status == "delivered" else "refused",
                             "state": {"orders": {oid: {"status": after}}}}}) + "\n"
            handle.write(line)
            written += len(line.encode("utf-8"))
            n += 1
    return n


def measure(checkout: Path, what: str, folder: Path, out: Path) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-c", MEASURE, str(checkout), what, str(folder), str(out)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=200.0, help="size of the case file (default 200)")
    parser.add_argument("--shape", choices=["many", "wide", "both"], default="both")
    parser.add_argument("--checkout", type=Path, default=HERE.parent, help="the oloproof_nb checkout to measure")
    parser.add_argument("--smoke", action="store_true", help="2 MB, both shapes (CI)")
    parser.add_argument("--no-gate", action="store_true", help="measure the run only")
    parser.add_argument("--runner", action="store_true", help="the runner alone (run_suite: no columnar copy); "
                                                              "fails at a peak of 1 GB or more")
    args = parser.parse_args()
    megabytes = 2.0 if args.smoke else args.mb
    print(f"platform: {platform.platform()} | cpus: {os.cpu_count()} | python {platform.python_version()}")
    print(f"checkout: {args.checkout}")
    shapes = ["many", "wide"] if args.shape == "both" else [args.shape]
    with tempfile.TemporaryDirectory() as tmp:
        for shape in shapes:
            folder = write_suite(Path(tmp) / shape, 1)
            t0 = time.perf_counter()
            n = write_cases(folder, megabytes, shape)
            size = (folder / "cases.jsonl").stat().st_size / 1e6
            print(f"\n[{shape}] cases.jsonl: {size:.1f} MB, {n:,} cases (written in {time.perf_counter() - t0:.1f} s)")
            out = Path(tmp) / f"{shape}-run"
            run = measure(args.checkout, "runner" if args.runner else "run", folder, out)
            print(f"  run  (load_suite + {'runner' if args.runner else 'op.run'}): {json.dumps(run)}")
            if "error" not in run and not args.no_gate:
                gate = measure(args.checkout, "gate", folder, out)
                print(f"  gate (load_run + gate):     {json.dumps(gate)}")
            if "error" not in run and args.runner and not args.smoke and run["peak_mb"] >= 1024:
                print("  FAIL: the runner peaked at 1 GB or more")
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
