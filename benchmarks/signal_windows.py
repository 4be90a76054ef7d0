"""Benchmark: how long the ``oloproof`` command is left to the system's default SIGTERM, as it starts and as it ends.

The console script's module, ``_oloproof_nb_entry``, turns SIGTERM into exit 2 from its first line of Python, and
the command's own handlers take over while it works and give those back when it is done; what is left to the
default (death by the signal, 143) is the interpreter's start-up before that first line, and its wind-down once
Python no longer runs handlers (``Py_FinalizeEx`` puts every handler back to the default before it tears the
modules down). Each process here is watched from outside, polled in a loop: its SIGTERM disposition (the
``SigCgt`` mask of ``/proc/PID/status``: set while a Python handler is installed), its output and its exit. Per
command, medians and ranges over fresh processes of:

- start-up: from just before the process is started to the first poll that sees the handler installed;
- wind-down: from the last output to the exit, and, of that, from the first poll that sees the handler gone
  (after the answer) to the exit.

A poll takes a few tens of microseconds (the poller holds one core: on a 2-core machine the command has the
other). The commands: ``oloproof receipt`` on a verified artifact, ``oloproof gate`` on a finished run, and
``python -m oloproof_nb.cli receipt``, which imports the package before any handler is installed. Then, for the
console script, a black-box check that the disposition read is what a signal meets: SIGTERM sent at the first
poll that sees no handler yet must end the process by the signal, at the first poll that sees the handler must
exit 2, and at the first poll that sees it gone after the answer must not exit 2 (by the signal, or
the exit came first); the script exits 1 if one does not. The console script ends the process with its handler
still installed (``_oloproof_nb_entry._end``): no poll sees it gone, and that probe is never sent. Linux only
(``/proc``). Run::

    python benchmarks/signal_windows.py              # 21 processes per command, 3 probes of each kind
    python benchmarks/signal_windows.py --smoke      # 2 processes, 1 probe (CI)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _workload import child_env, compile_caches, write_suite  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: The installed console script (``pip install -e .`` makes it next to the interpreter).
SCRIPT = Path(sys.executable).with_name("oloproof")
TERM_BIT = 1 << (signal.SIGTERM - 1)


@dataclass
class Watched:
    """One process watched from its start to its exit (seconds from just before it was started)."""

    returncode: int
    caught: float | None  # the first poll that saw a SIGTERM handler
    last_output: float | None  # the last poll that read output
    released: float | None  # the first poll, after the last output, that saw no handler any more
    exited: float  # the first poll that saw the process gone
    sent: bool = False  # whether the SIGTERM asked for was sent (the moment it waits for may never come)


def term_caught(pid: int) -> bool | None:
    """Whether ``pid`` has a handler for SIGTERM (``SigCgt``); None when its status cannot be read."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"SigCgt:"):
                    return bool(int(line.split()[1], 16) & TERM_BIT)
    except OSError:
        return None
    return None


def watch(command: list[str], env: dict[str, str], send: str | None = None) -> Watched:
    """Start ``command`` and poll it until it exits. ``send``: SIGTERM once, at the first poll that sees no handler
    before any was seen (``"start"``), at the first that sees the handler (``"caught"``), or at the first that
    sees it gone after the last output (``"released"``)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    caught = last_output = released = None
    sent = False
    while True:
        now = time.perf_counter() - t0
        handler = term_caught(proc.pid)  # before the output: what was written before a change is read with it
        try:
            if os.read(fd, 1 << 16):
                last_output, released = now, None
        except BlockingIOError:
            pass
        if proc.poll() is not None:
            exited = now
            break
        if handler and caught is None:
            caught = now
        if handler is False and last_output is not None and released is None and caught is not None:
            released = now
        elif handler:
            released = None
        moment = {"start": handler is False and caught is None, "caught": handler and caught == now,
                  "released": released is not None and released == now}
        if send is not None and not sent and moment[send]:
            proc.send_signal(signal.SIGTERM)
            sent = True
    proc.stdout.read()
    proc.stdout.close()
    return Watched(proc.returncode, caught, last_output, released, exited, sent)


def spread(values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return f"median {statistics.median(ms):5.1f} ms ({min(ms):.1f}–{max(ms):.1f})"


def report(label: str, runs: list[Watched], load: tuple[float, float]) -> None:
    start = [r.caught for r in runs if r.caught is not None]
    tail = [r.exited - r.last_output for r in runs if r.last_output is not None]
    default = [r.exited - r.released for r in runs if r.released is not None]
    codes = sorted({r.returncode for r in runs})
    print(f"{label} ({len(runs)} processes, exit {', '.join(map(str, codes))}; "
          f"load average {min(load):.1f}–{max(load):.1f})")
    if start:
        print(f"  start-up, to the SIGTERM handler           : {spread(start)}")
    if tail:
        print(f"  wind-down, the last output to the exit     : {spread(tail)}")
    if default:
        print(f"  of which the handler gone, to the exit     : {spread(default)}")
    elif tail:
        print("  of which the handler gone, to the exit     : none (the handler stays to the exit)")


def probe(command: list[str], env: dict[str, str], times: int) -> bool:
    """The black-box check; whether every probe met what the disposition read said."""
    expected = {"start": ("after the start", {-signal.SIGTERM}, "ended by SIGTERM"),
                "caught": ("that sees the handler", {2}, "exit 2"),
                "released": ("after the answer with no handler", {-signal.SIGTERM, 0, 1}, "not exit 2")}
    ok = True
    for when, (moment, allowed, meaning) in expected.items():
        codes = [w.returncode for w in (watch(command, env, send=when) for _ in range(times)) if w.sent]
        good = all(code in allowed for code in codes)
        ok = ok and good
        if not codes:  # the moment never came: the console script ends with its handler installed
            print(f"  SIGTERM at the first poll {moment:32}: never sent, no such poll in {times} processes")
            continue
        by_signal = sum(code == -signal.SIGTERM for code in codes)
        print(f"  SIGTERM at the first poll {moment:32}: {by_signal} of {len(codes)} ended by the signal, codes "
              f"{codes} ({'as' if good else 'FAIL: not'} {meaning})")
    return ok


def make_inputs(folder: Path, cases: int) -> tuple[Path, Path]:
    """A receipt contract whose artifact is verified, and a finished run of the benchmark desk."""
    import oloproof_nb as op

    (folder / "out.txt").write_text("report\n", encoding="utf-8")
    contract = folder / "CONTRACT.json"
    contract.write_text(json.dumps({"artifact_id": "r1", "locator": "out.txt",
                                    "run_started_at": "2026-01-01T00:00:00Z"}), encoding="utf-8")
    run = op.run(write_suite(folder / "suite", cases), out=folder / "run", progress=False)
    return contract, run.directory


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the oloproof command's start and end left to SIGTERM's default")
    parser.add_argument("--processes", type=int, default=21, help="fresh processes per command")
    parser.add_argument("--probes", type=int, default=3, help="black-box probes of each kind per command")
    parser.add_argument("--cases", type=int, default=2000, help="cases in the run that `oloproof gate` reads")
    parser.add_argument("--smoke", action="store_true", help="2 processes, 1 probe, 20 cases (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.processes, args.probes, args.cases = 2, 1, 20
    print(f"platform: {platform.platform()} | cpus: {os.cpu_count()} | python {platform.python_version()}")
    if not Path("/proc/self/status").exists() or not SCRIPT.exists():
        print(f"skipped: needs /proc and the console script {SCRIPT} (pip install -e .)")
        return 0
    compile_caches(sys.executable, ROOT / "oloproof_nb")
    env = child_env(ROOT)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        contract, run = make_inputs(Path(tmp), args.cases)
        commands = {"oloproof receipt CONTRACT.json (verified)": [str(SCRIPT), "receipt", str(contract)],
                    f"oloproof gate RUN ({args.cases:,} cases)": [str(SCRIPT), "gate", str(run)],
                    "python -m oloproof_nb.cli receipt CONTRACT.json": [sys.executable, "-m", "oloproof_nb.cli",
                                                                        "receipt", str(contract)]}
        for label, command in commands.items():
            watch(command, env)  # untimed: the entry module's bytecode written
            before = os.getloadavg()[0]
            runs = [watch(command, env) for _ in range(args.processes)]
            report(label, runs, (before, os.getloadavg()[0]))
            if command[0] == str(SCRIPT):
                ok = probe(command, env, args.probes) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
