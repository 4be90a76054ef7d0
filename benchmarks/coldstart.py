"""Benchmark: what ``import oloproof_nb`` costs beyond ``import pandas``, in fresh interpreters.

Alternating fresh processes, each timed with ``time.perf_counter`` inside the process (interpreter start-up
is not counted): ``import pandas``; ``import oloproof_nb`` (the package face only: its public names are
imported on first use, so this loads the evaluator families and pydantic, not pandas); and ``import
oloproof_nb`` followed by a first use of **every** public name (the whole face loaded, pandas included: what
a notebook that touches everything pays before its first computation; modules the calls themselves import
later, such as scipy or matplotlib, are not counted). The figures are medians of the differences within a
round, so a burst of load on a shared machine moves both sides. Target: the whole face ≤ pandas + 0.15 s.
Last, the completion hook as an agent's harness runs it: ``oloproof receipt CONTRACT.json`` on a verified
artifact, the whole process timed from outside (interpreter start-up included). Run::

    python benchmarks/coldstart.py              # 21 pairs
    python benchmarks/coldstart.py --smoke      # 2 pairs (CI)
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _workload import child_env, compile_caches  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CODE = "import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"
PANDAS = "import pandas"
FACE = "import oloproof_nb"
WHOLE = "import oloproof_nb as op; [getattr(op, name) for name in op.__all__]"


def timed(code: str) -> float:
    env = child_env(ROOT)
    out = subprocess.run([sys.executable, "-c", CODE.format(code=code)], capture_output=True, text=True,
                         check=True, env=env)
    return float(out.stdout.strip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="import oloproof_nb against import pandas")
    parser.add_argument("--pairs", type=int, default=21, help="rounds (one process of each kind per round)")
    parser.add_argument("--smoke", action="store_true", help="2 pairs (CI)")
    args = parser.parse_args(argv)
    if args.smoke:  # two: the fewest the quartiles below take (statistics.quantiles); every path runs
        args.pairs = 2
    print(f"platform: {platform.platform()} | cpus: {os.cpu_count()} | python {platform.python_version()}")
    compile_caches(sys.executable, ROOT / "oloproof_nb")  # every module read from bytecode (see child_env)
    timed(WHOLE)
    pandas, face, whole = [], [], []
    for _ in range(args.pairs):
        pandas.append(timed(PANDAS))
        face.append(timed(FACE))
        whole.append(timed(WHOLE))
    print(f"import pandas                     : median {statistics.median(pandas):.3f} s (min {min(pandas):.3f})")
    for label, ours in (("import oloproof_nb", face), ("  + first use of every name", whole)):
        extra = [o - p for p, o in zip(pandas, ours, strict=True)]
        quartiles = statistics.quantiles(extra, n=4)
        print(f"{label:34}: median {statistics.median(ours):.3f} s (min {min(ours):.3f}); beyond pandas: median "
              f"{statistics.median(extra):+.3f} s (quartiles {quartiles[0]:+.3f} – {quartiles[2]:+.3f})")
    print(f"{args.pairs} rounds; target: the whole face ≤ pandas + 0.150 s")
    hook = [receipt_hook() for _ in range(args.pairs)]
    print(f"oloproof receipt (a verified artifact, whole process): median {statistics.median(hook):.3f} s "
          f"(min {min(hook):.3f})")
    return 0


def receipt_hook() -> float:
    """Seconds of one ``python -m oloproof_nb.cli receipt CONTRACT.json`` process on a verified artifact."""
    import tempfile
    import time

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "out.txt").write_text("report\n", encoding="utf-8")
        (folder / "CONTRACT.json").write_text(
            '{"artifact_id": "r1", "locator": "out.txt", "run_started_at": "2026-01-01T00:00:00Z"}', encoding="utf-8")
        env = child_env(ROOT)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "oloproof_nb.cli", "receipt", str(folder / "CONTRACT.json")],
                       capture_output=True, check=True, env=env)
        return time.perf_counter() - t


if __name__ == "__main__":
    raise SystemExit(main())
