"""Benchmark: what handing one call to the helper thread costs (the mechanism behind ``case_timeout_s``).

Every call into the user's system goes through ``call_with_timeout``: the call runs on a reusable helper
thread while the caller waits at most ``case_timeout_s`` (``_run/timeouts.py``). This times that hand-off
for an empty call, directly against the same call made in place, with a given amount of the caller's own
work between calls (a pure-Python loop calibrated to about G µs). The runner does about 200 µs of its own
work per case between two hand-offs, so the figure at that gap is what a case pays; a helper thread that
has waited that long wakes up later than one that waited a few microseconds (on a virtual machine, an idle
virtual CPU has to be woken by the host). Medians over rounds. Run::

    python benchmarks/handoff.py              # gaps 0, 25, 200, 800 µs; 2,000 calls each, 5 rounds
    python benchmarks/handoff.py --smoke      # 200 calls, 1 round (CI)
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from oloproof_nb._run.timeouts import call_with_timeout  # noqa: E402


def nothing() -> None:
    return None


def busy(loops: int) -> int:
    total = 0
    for i in range(loops):
        total += i
    return total


def loops_per_us() -> float:
    """Iterations of :func:`busy` per microsecond on this machine (best of 5)."""
    n = 200_000
    best = min(_timed(lambda: busy(n)) for _ in range(5))
    return n / (best * 1e6)


def _timed(fn: object) -> float:
    t = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t


def round_us(calls: int, loops: int, timeout_s: float | None) -> tuple[float, float]:
    """Mean µs per call: through the helper thread, and in place; the caller's work between calls not counted."""
    through = direct = 0.0
    for _ in range(calls):
        t = time.perf_counter()
        call_with_timeout(nothing, timeout_s)
        through += time.perf_counter() - t
        busy(loops)
    for _ in range(calls):
        t = time.perf_counter()
        nothing()
        direct += time.perf_counter() - t
        busy(loops)
    return through / calls * 1e6, direct / calls * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the helper-thread hand-off behind case_timeout_s")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--gaps", type=float, nargs="+", default=[0, 25, 200, 800], help="µs of work between calls")
    parser.add_argument("--smoke", action="store_true", help="200 calls, 1 round (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.calls, args.rounds = 200, 1
    print(f"platform: {platform.platform()} | cpus: {os.cpu_count()} | python {platform.python_version()}")
    rate = loops_per_us()
    call_with_timeout(nothing, 300)  # the helper thread started once, outside the figures
    print(f"{args.calls:,} calls per round, {args.rounds} round(s), case_timeout_s=300; medians of the rounds")
    for gap in args.gaps:
        loops = int(gap * rate)
        rounds = [round_us(args.calls, loops, 300.0) for _ in range(args.rounds)]
        through = statistics.median(r[0] for r in rounds)
        direct = statistics.median(r[1] for r in rounds)
        print(f"  {gap:5.0f} µs of work between calls: {through:6.1f} µs a call through the helper thread, "
              f"{direct:4.1f} µs in place (hand-off {through - direct:6.1f} µs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
