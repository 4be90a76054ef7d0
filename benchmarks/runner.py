"""Benchmark: runner overhead of oloproof_nb next to Inspect AI on the same 2,000-case refund workload.

Both harnesses run the trivial in-memory refund desk of ``benchmarks/_workload.py`` (no model, no I/O in
the desk itself), so what is measured is the harness: per case, reset / run / snapshot, the two checks
(``answer_matches``; ``state_matches`` as a subset), the record written to disk, and at the end the
summary (oloproof: the run directory loaded back, its frames and the release gate; Inspect AI: its log
written to a temporary log dir and its ``accuracy`` metrics).

(a) oloproof_nb: ``op.load_suite(folder)`` → ``op.run(suite, out=…)`` (one flushed append per record)
    → ``op.gate(run)`` (builds ``run.cases`` and ``run.verdicts``).
(b) Inspect AI: a ``Task`` of 2,000 ``Sample``s read from the same cases.jsonl, a solver calling the same
    desk code (``desk.py`` of the suite folder), two scorers equivalent to the two checks, run with
    ``eval(task, model="mockllm/model", log_dir=<temp>, display="none")``. The solver never calls the model.

Both harnesses first run an untimed 20-case warm-up (lazy imports); timings are the best of ``--repeat``
runs. Run::

    pip install -e ".[bench]"                 # Inspect AI (extra 'bench')
    python benchmarks/runner.py               # 2,000 cases, both harnesses, best of 3
    python benchmarks/runner.py --profile     # also a cProfile of one oloproof run (top functions)
    python benchmarks/runner.py --smoke       # 50 cases, 1 repeat (CI); Inspect part skipped if not installed
    python benchmarks/runner.py --inspect-python /other/venv/bin/python   # Inspect AI in another interpreter
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import io
import json
import os
import platform
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.append(str(HERE.parent))  # the checkout, unless oloproof_nb is installed (or on PYTHONPATH)

from _workload import answer_ok, load_desk, make_cases, state_ok, write_suite  # noqa: E402


def machine() -> str:
    import numpy
    import pandas

    return (f"platform: {platform.platform()} | {platform.processor() or platform.machine()}\n"
            f"cpus: {os.cpu_count()} | python {platform.python_version()} | numpy {numpy.__version__} | "
            f"pandas {pandas.__version__}")


def expected_passes(n_cases: int) -> tuple[int, int]:
    """Hand count of (answer, state) passes: a ``lost`` order gets a false "refunded" (the desk's defect),
    which fails ``answer_matches`` while its state stays as expected."""
    lost = sum(1 for c in make_cases(n_cases) if c["initial_state"]["orders"][c["id"]]["status"] == "lost")
    return n_cases - lost, n_cases


# -- (a) oloproof_nb ---------------------------------------------------------------------------------------


def oloproof_once(folder: Path, out: Path) -> dict[str, Any]:
    import oloproof_nb as op

    t0 = time.perf_counter()
    suite = op.load_suite(folder)
    t1 = time.perf_counter()
    run = op.run(suite, out=out, progress=False)
    t2 = time.perf_counter()
    gate = op.gate(run)
    t3 = time.perf_counter()
    passed = dict(zip(gate.table["criterion"], gate.table["passed"], strict=True))
    return {"seconds": t3 - t0, "load_suite": t1 - t0, "run": t2 - t1, "gate": t3 - t2,
            "answer_passed": int(passed["answer_matches"]), "state_passed": int(passed["state_matches"]),
            "verdict": gate.verdict}


def profile_oloproof(folder: Path, out: Path, top: int = 30) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    oloproof_once(folder, out)
    profiler.disable()
    buffer = io.StringIO()
    stats = pstats.Stats(profiler, stream=buffer)
    stats.sort_stats("tottime").print_stats(top)
    return buffer.getvalue()


# -- (b) Inspect AI -----------------------------------------------------------------------------------------


def inspect_once(folder: Path, log_dir: Path) -> dict[str, Any]:
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
    from inspect_ai.solver import Generate, TaskState, solver

    desk = load_desk(folder)

    @solver
    def refund_desk():  # type: ignore[no-untyped-def]
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            sandbox = desk.Desk()
            sandbox.reset(copy.deepcopy(state.metadata["initial_state"]))
            out = sandbox.run({"order_id": state.metadata["order_id"], "message": state.input_text})
            state.output = ModelOutput.from_content(model="mockllm/model", content=out["answer"])
            state.store.set("steps", out["steps"])
            state.store.set("final_state", sandbox.snapshot())
            return state

        return solve

    @scorer(metrics=[accuracy()])
    def answer_matches():  # type: ignore[no-untyped-def]
        async def score(state: TaskState, target: Target) -> Score:
            ok = answer_ok(target.text, state.output.completion)
            return Score(value=CORRECT if ok else INCORRECT, answer=state.output.completion)

        return score

    @scorer(metrics=[accuracy()])
    def state_matches():  # type: ignore[no-untyped-def]
        async def score(state: TaskState, target: Target) -> Score:
            ok = state_ok(state.metadata["expected_state"], state.store.get("final_state"))
            return Score(value=CORRECT if ok else INCORRECT)

        return score

    t0 = time.perf_counter()
    samples = []
    with (folder / "cases.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            case = json.loads(line)
            samples.append(Sample(id=case["id"], input=case["input"]["message"], target=case["expected"]["answer"],
                                  metadata={"order_id": case["input"]["order_id"],
                                            "initial_state": case["initial_state"],
                                            "expected_state": case["expected"]["state"]}))
    task = Task(dataset=samples, solver=refund_desk(), scorer=[answer_matches(), state_matches()])
    [log] = eval(task, model="mockllm/model", log_dir=str(log_dir), display="none", log_level="error")
    t1 = time.perf_counter()
    if log.status != "success" or log.results is None:
        raise RuntimeError(f"Inspect AI eval ended with status {log.status}: {log.error}")
    acc = {s.name: s.metrics["accuracy"].value for s in log.results.scores}
    n = len(samples)
    return {"seconds": t1 - t0, "answer_passed": round(acc["answer_matches"] * n),
            "state_passed": round(acc["state_matches"] * n), "version": _inspect_version()}


def _inspect_version() -> str:
    import inspect_ai

    return str(getattr(inspect_ai, "__version__", "?"))


def inspect_available() -> bool:
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        return False
    return True


def inspect_repeats(folder: Path, repeat: int, python: str | None) -> list[dict[str, Any]] | None:
    """Inspect AI timings: in this interpreter, or in ``python`` (a subprocess of this one); None: not installed."""
    if python is None:
        if not inspect_available():
            return None
        with tempfile.TemporaryDirectory(prefix="inspect-logs-") as logs:
            return [inspect_once(folder, Path(logs) / f"r{i}") for i in range(repeat)]
    proc = subprocess.run([python, str(Path(__file__).resolve()), "--inspect-only", str(folder),
                           "--repeat", str(repeat)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"the Inspect AI subprocess failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


# -- main ------------------------------------------------------------------------------------------------------


def warm_up(tmp: Path, inspect: bool) -> None:
    """One untimed 20-case run of each harness, so lazy imports (statsmodels for the gate, Inspect AI's
    providers) and first-use caches are not in the timings of either."""
    folder = write_suite(tmp / "warm-up", 20)
    oloproof_once(folder, tmp / "warm-up-run")
    if inspect:
        inspect_once(folder, tmp / "warm-up-logs")



def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="runner overhead: oloproof_nb next to Inspect AI")
    parser.add_argument("--cases", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3, help="timings are the best of this many runs")
    parser.add_argument("--smoke", action="store_true", help="50 cases, one repeat (CI)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one oloproof run")
    parser.add_argument("--no-inspect", action="store_true", help="time oloproof_nb only")
    parser.add_argument("--inspect-python", help="run the Inspect AI part with this interpreter")
    parser.add_argument("--inspect-only", metavar="SUITE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inspect_only:  # the subprocess side of --inspect-python: print the timings as JSON
        with tempfile.TemporaryDirectory(prefix="inspect-logs-") as logs:
            warm_up(Path(logs), inspect=True)
            print(json.dumps([inspect_once(Path(args.inspect_only), Path(logs) / f"r{i}")
                              for i in range(args.repeat)]))
        return 0
    if args.smoke:
        args.cases, args.repeat = 50, 1

    print(machine())
    hand = expected_passes(args.cases)
    with tempfile.TemporaryDirectory(prefix="oloproof-bench-") as tmp:
        folder = write_suite(Path(tmp) / "suite", args.cases)
        print(f"workload: {args.cases:,} cases (refund desk, answer_matches + state_matches), "
              f"best of {args.repeat}; hand count of passes (answer/state): {hand[0]}/{hand[1]}")
        warm_up(Path(tmp), inspect=not args.no_inspect and args.inspect_python is None and inspect_available())
        runs = [oloproof_once(folder, Path(tmp) / "runs" / f"r{i}") for i in range(args.repeat)]
        best = min(runs, key=lambda r: r["seconds"])
        ours = args.cases / best["seconds"]
        print(f"(a) oloproof_nb : {best['seconds']:8.3f} s  {ours:10,.0f} cases/s  "
              f"(load_suite {best['load_suite']:.3f} s, run {best['run']:.3f} s, gate {best['gate']:.3f} s; "
              f"passed {best['answer_passed']}/{best['state_passed']}, gate {best['verdict']})")
        ok = all((r["answer_passed"], r["state_passed"]) == hand for r in runs)
        if args.profile:
            print(profile_oloproof(folder, Path(tmp) / "runs" / "profiled"))
        theirs_runs = None if args.no_inspect else inspect_repeats(folder, args.repeat, args.inspect_python)
        if theirs_runs is None:
            print("(b) Inspect AI  : skipped (inspect_ai is not installed: pip install -e '.[bench]')")
        else:
            other = min(theirs_runs, key=lambda r: r["seconds"])
            theirs = args.cases / other["seconds"]
            print(f"(b) Inspect AI  : {other['seconds']:8.3f} s  {theirs:10,.0f} cases/s  "
                  f"(inspect_ai {other['version']}, mockllm/model; passed "
                  f"{other['answer_passed']}/{other['state_passed']})")
            print(f"ratio: oloproof_nb runs {ours / theirs:.1f}x the cases per second of Inspect AI (target ≥ 10x)")
            ok = ok and all((r["answer_passed"], r["state_passed"]) == hand for r in theirs_runs)
    if not ok:
        print(f"FAIL: a harness did not count {hand[0]}/{hand[1]} passes (answer/state)")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
