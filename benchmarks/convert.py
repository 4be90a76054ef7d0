"""Benchmark: building the columnar copy from the journal when every case holds states of its own.

``benchmarks/frames.py`` copies one example's records, so its run directories hold a few dozen distinct
states. A real agent's cases each leave a state of their own. This script runs the refund desk of
``benchmarks/_workload.py`` (each case has its own order, so its own initial and final state) for real with
``op.run``, deletes the run's columnar copy (as for a run that stopped early, or one written by an older
version), and then, in a **fresh process**, times the first ``op.load_run(dir)``, which builds the copy
from the journal ("convert"). It reports the seconds and the process's peak resident set (``VmHWM``)
before and after. Run::

    python benchmarks/convert.py                  # 100,000 cases (about 45 s to write, 20 s to convert)
    python benchmarks/convert.py --cases 20000
    python benchmarks/convert.py --smoke          # 500 cases (CI)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.append(str(HERE.parent))  # the checkout, unless oloproof_nb is installed (or on PYTHONPATH)

from _workload import write_suite  # noqa: E402


def peak_kib() -> tuple[int, int]:
    """(VmHWM, VmRSS) of this process in KiB (Linux; zeros elsewhere)."""
    out = {"VmHWM": 0, "VmRSS": 0}
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in out:
                    out[key] = int(value.split()[0])
    except OSError:
        pass
    return out["VmHWM"], out["VmRSS"]


def convert_child(directory: str) -> dict[str, Any]:
    """In a fresh process: import, then the first ``load_run`` (which converts), timed and measured."""
    import oloproof_nb as op

    before = peak_kib()
    t = time.perf_counter()
    run = op.load_run(directory)
    seconds = time.perf_counter() - t
    after = peak_kib()
    return {"seconds": seconds, "peak_kib": after[0], "start_kib": before[1], "cases": len(run.cases)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=2, help="fresh conversion processes (default 2)")
    parser.add_argument("--smoke", action="store_true", help="500 cases, 1 process (CI)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(convert_child(args.child)))
        return 0
    n, repeat = (500, 1) if args.smoke else (args.cases, args.repeat)
    import oloproof_nb as op

    print(f"platform: {platform.platform()} | cpus: {os.cpu_count()} | python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        suite = write_suite(Path(tmp) / "suite", n)
        t = time.perf_counter()
        directory = op.run(suite, out=Path(tmp) / "run", progress=False).directory
        written = time.perf_counter() - t
        print(f"{n:,} cases, each with its own state: op.run {written:.1f} s (harness and live copy)")
        for i in range(repeat):
            shutil.rmtree(directory / "frames")
            proc = subprocess.run([sys.executable, __file__, "--child", str(directory)], capture_output=True,
                                  text=True, check=False)
            if proc.returncode != 0:
                print(proc.stderr[-3000:], file=sys.stderr)
                return 1
            r = json.loads(proc.stdout)
            if r["cases"] != n:
                print(f"the converted run has {r['cases']} cases, not {n}", file=sys.stderr)
                return 1
            print(f"convert (process {i + 1}): {r['seconds']:.2f} s, {r['seconds'] / n * 1e6:.0f} µs a case; "
                  f"peak resident set {r['peak_kib'] / 1024:,.0f} MiB ({r['start_kib'] / 1024:,.0f} MiB "
                  f"after import)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
