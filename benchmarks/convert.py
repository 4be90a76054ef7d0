"""Benchmark: building the columnar copy from the journal ("convert"), and the same against another checkout.

``benchmarks/frames.py`` copies one example's records, so its run directories hold a few dozen distinct
states. A real agent's cases each leave a state of their own. By default (``--shape desk``) this script runs
the refund desk of ``benchmarks/_workload.py`` (each case has its own order, so its own initial and final
state) for real with ``op.run``; ``--shape example`` writes the run ``frames.py`` writes instead (the
bundled example's records copied: metamorphic pairs judged across every case, fault replays), and
``--shape example-distinct`` the same with each copy's states made its own (every pair's two final states
read back from the state store when the pair is judged: the hard case for packed pair views). It deletes
the run's columnar copy (as for a run that stopped early, or one written by an older version) and then, in
a **fresh process**, times the first ``op.load_run(dir)``, which builds the copy from the journal. It
reports the seconds and the process's peak resident set (``VmHWM``). With ``--against CHECKOUT`` the same
folder is also converted by the ``oloproof_nb`` of another checkout (say, a ``git worktree`` of an older
commit), the two alternating A B A B, each in a fresh process. Run::

    python benchmarks/convert.py                  # 100,000 cases (about 45 s to write, 20 s to convert)
    python benchmarks/convert.py --cases 20000 --shape example --against /tmp/older-checkout
    python benchmarks/convert.py --shape example-distinct --cases 20000 --against /tmp/older-checkout
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


def convert_child(directory: str, keep_whole: int | None = None) -> dict[str, Any]:
    """In a fresh process: import, then the first ``load_run`` (which converts), timed and measured, with the
    garbage collector's full passes during it (``gc.callbacks``: count and seconds). ``keep_whole``: for a
    checkout from before packed pair views (``c9b88f1`` and older), judge pairs on lazy records above this many
    cases (its ``KEEP_WHOLE``) instead of its default; the current code has one path at every size."""
    import gc

    import oloproof_nb as op

    if keep_whole is not None:
        from oloproof_nb._analysis import run as run_module

        run_module.KEEP_WHOLE = keep_whole
    passes, started = [0, 0.0], [0.0]

    def watch(phase: str, info: dict[str, Any]) -> None:
        if info["generation"] == 2:
            if phase == "start":
                started[0] = time.perf_counter()
            else:
                passes[0] += 1
                passes[1] += time.perf_counter() - started[0]

    before = peak_kib()
    gc.callbacks.append(watch)
    t = time.perf_counter()
    run = op.load_run(directory)
    seconds = time.perf_counter() - t
    gc.callbacks.remove(watch)
    after = peak_kib()
    return {"seconds": seconds, "peak_kib": after[0], "start_kib": before[1], "cases": len(run.cases),
            "full_passes": passes[0], "full_pass_s": passes[1],
            "package": str(Path(op.__file__).resolve().parent.parent)}


def write_run(shape: str, tmp: Path, n: int) -> Path:
    """A finished run of ``n`` cases of ``shape`` (see the module's docstring) under ``tmp``."""
    import oloproof_nb as op

    if shape == "desk":
        return op.run(write_suite(tmp / "suite", n), out=tmp / "run", progress=False).directory
    import frames  # benchmarks/frames.py: the example's records copied under new case ids

    template, _ = frames.templates(tmp / "template")
    return frames.write_run(template, tmp / "run", n, distinct=shape == "example-distinct")


def convert_in(checkout: Path, directory: Path, keep_whole: int | None = None) -> dict[str, Any]:
    """Convert ``directory`` in a fresh process that imports ``oloproof_nb`` from ``checkout``."""
    shutil.rmtree(directory / "frames", ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    extra = [] if keep_whole is None else ["--keep-whole", str(keep_whole)]
    proc = subprocess.run([sys.executable, __file__, "--child", str(directory), *extra], capture_output=True, text=True,
                          check=False, env=env)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    result: dict[str, Any] = json.loads(proc.stdout)
    if Path(result["package"]) != checkout.resolve():
        raise SystemExit(f"the child imported oloproof_nb from {result['package']}, not {checkout}")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=2, help="fresh conversion processes (default 2)")
    parser.add_argument("--shape", choices=("desk", "example", "example-distinct"), default="desk",
                        help="desk: every case its own state (default); example: frames.py's run, with pairs; "
                             "example-distinct: the same with every copy's states its own")
    parser.add_argument("--against", type=Path, metavar="CHECKOUT",
                        help="also convert with the oloproof_nb of this checkout, alternating with this one")
    parser.add_argument("--smoke", action="store_true", help="500 cases, 1 process (CI)")
    parser.add_argument("--keep-whole", type=int, metavar="N",
                        help="checkouts up to c9b88f1: judge pairs on lazy records above N cases (their KEEP_WHOLE, "
                             "100,000); the current code has one path and ignores it")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(convert_child(args.child, args.keep_whole)))
        return 0
    n, repeat = (500, 1) if args.smoke else (args.cases, args.repeat)
    checkouts = [("this checkout", HERE.parent)]
    if args.against is not None:
        if not (args.against / "oloproof_nb" / "__init__.py").is_file():
            print(f"--against {args.against}: no oloproof_nb package there", file=sys.stderr)
            return 2
        checkouts.insert(0, (f"{args.against}", args.against))

    print(f"platform: {platform.platform()} | cpus: {os.cpu_count()} | python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        directory = write_run(args.shape, Path(tmp), n)
        written = time.perf_counter() - t
        what = {"desk": "each with its own state", "example": "the example's records copied, with pairs",
                "example-distinct": "the example's records copied, with pairs, each copy's states its own"}[args.shape]
        print(f"{n:,} cases, {what}: written in {written:.1f} s")
        for i in range(repeat):
            for label, checkout in checkouts:
                r = convert_in(checkout, directory, args.keep_whole)
                if r["cases"] != n:
                    print(f"the converted run has {r['cases']} cases, not {n}", file=sys.stderr)
                    return 1
                print(f"convert (process {i + 1}, {label}): {r['seconds']:.2f} s, {r['seconds'] / n * 1e6:.0f} µs "
                      f"a case; peak resident set {r['peak_kib'] / 1024:,.0f} MiB ({r['start_kib'] / 1024:,.0f} "
                      f"MiB after import); {r['full_passes']} full garbage-collector passes, "
                      f"{r['full_pass_s']:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
