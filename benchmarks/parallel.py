"""Benchmark: ``op.run(suite, workers=N)`` on a system that waits 20 ms per case, against a serial run.

The workload is the refund desk of ``benchmarks/_workload.py`` as ``desk:SlowDesk``: each case sleeps
``DELAY_S`` = 20 ms in ``run`` (an agent waiting on its model), so a serial run cannot go faster than
50 cases per second. With ``workers=N`` the runner builds N desks from the suite's factory and runs cases
on them concurrently (threads; one case at a time per desk). Each parallel run's frames are compared with
the serial run's (every column but run id, timestamps and durations) and must be identical, in the same
order. Timings include writing the run directory and loading it back (``op.run`` returns ``load_run``).
Run::

    python benchmarks/parallel.py                     # 400 cases; serial, then 2, 4, 8 and 16 workers
    python benchmarks/parallel.py --workers 8         # serial and 8 workers only
    python benchmarks/parallel.py --smoke             # 40 cases, 4 workers (CI)
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.append(str(HERE.parent))  # the checkout, unless oloproof_nb is installed (or on PYTHONPATH)

from _workload import write_suite  # noqa: E402

import oloproof_nb as op  # noqa: E402

FRAMES = ("cases", "steps", "snapshots", "changes", "verdicts", "comparisons", "replays", "pairs")
#: Columns that differ between two runs of the same suite by design.
VOLATILE = ("started_at", "duration_s", "captured_at", "run_id")


def machine() -> str:
    import numpy

    return (f"platform: {platform.platform()} | {platform.processor() or platform.machine()}\n"
            f"cpus: {os.cpu_count()} | python {platform.python_version()} | numpy {numpy.__version__} | "
            f"pandas {pd.__version__}")


def same_frames(a: op.Run, b: op.Run) -> str | None:
    """None when every frame of ``a`` equals ``b``'s (volatile columns left out), else the first difference."""
    for name in FRAMES:
        left, right = getattr(a, name), getattr(b, name)
        left = left.drop(columns=[c for c in VOLATILE if c in left.columns])
        right = right.drop(columns=[c for c in VOLATILE if c in right.columns])
        try:
            pd.testing.assert_frame_equal(left, right)
        except AssertionError as exc:
            return f"{name}: {str(exc).splitlines()[0]}"
    return None


def timed_run(suite: op.Suite, out: Path, workers: int) -> tuple[float, op.Run]:
    t = time.perf_counter()
    run = op.run(suite, workers=workers, out=out, progress=False)
    return time.perf_counter() - t, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="parallel sandboxes: workers=N against serial")
    parser.add_argument("--cases", type=int, default=400)
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 4, 8, 16])
    parser.add_argument("--smoke", action="store_true", help="40 cases, 4 workers (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.cases, args.workers = 40, [4]

    print(machine())
    failures = []
    with tempfile.TemporaryDirectory(prefix="oloproof-parallel-") as tmp_name:
        tmp = Path(tmp_name)
        suite = op.load_suite(write_suite(tmp / "suite", args.cases, system="desk:SlowDesk"))
        delay = sys.modules[suite.resolve_system().__module__].DELAY_S
        print(f"workload: {args.cases} cases on desk:SlowDesk ({delay * 1000:.0f} ms per case)")
        serial_s, serial = timed_run(suite, tmp / "serial", 1)
        base = args.cases / serial_s
        print(f"{'workers':>8} {'seconds':>8} {'cases/s':>8} {'speedup':>8}  frames")
        print(f"{1:8d} {serial_s:8.3f} {base:8.1f} {1.0:8.2f}  (reference)")
        for n in args.workers:
            seconds, run = timed_run(suite, tmp / f"w{n}", n)
            diff = same_frames(serial, run)
            if diff is not None:
                failures.append(f"workers={n}: {diff}")
            print(f"{n:8d} {seconds:8.3f} {args.cases / seconds:8.1f} {serial_s / seconds:8.2f}  "
                  f"{'identical' if diff is None else 'DIFFERENT: ' + diff}")
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
