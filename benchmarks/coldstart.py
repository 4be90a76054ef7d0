"""Benchmark: what ``import oloproof_nb`` costs beyond ``import pandas``, in fresh interpreters.

Alternating fresh processes: one times ``import pandas``, the next ``import oloproof_nb`` (which imports
pandas itself), each with ``time.perf_counter`` inside the process (interpreter start-up is not counted).
The figure is the median of the differences of consecutive pairs, so a burst of load on a shared machine
moves both sides of a pair. Target: ≤ 0.15 s. Run::

    python benchmarks/coldstart.py              # 21 pairs
    python benchmarks/coldstart.py --smoke      # 3 pairs (CI)
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = "import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"


def timed(module: str) -> float:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", CODE.format(module=module)], capture_output=True, text=True,
                         check=True, env=env)
    return float(out.stdout.strip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="import oloproof_nb against import pandas")
    parser.add_argument("--pairs", type=int, default=21)
    parser.add_argument("--smoke", action="store_true", help="3 pairs (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.pairs = 3
    print(f"platform: {platform.platform()} | cpus: {os.cpu_count()} | python {platform.python_version()}")
    timed("oloproof_nb")  # compile caches written once, outside the figures
    pandas, ours = [], []
    for _ in range(args.pairs):
        pandas.append(timed("pandas"))
        ours.append(timed("oloproof_nb"))
    extra = [o - p for p, o in zip(pandas, ours, strict=True)]
    print(f"import pandas      : median {statistics.median(pandas):.3f} s (min {min(pandas):.3f})")
    print(f"import oloproof_nb : median {statistics.median(ours):.3f} s (min {min(ours):.3f})")
    print(f"extra              : median {statistics.median(extra):.3f} s over {args.pairs} pairs "
          f"(quartiles {statistics.quantiles(extra, n=4)[0]:.3f} – {statistics.quantiles(extra, n=4)[2]:.3f}); "
          "target ≤ 0.150 s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
