"""Benchmark: runner overhead of oloproof_nb next to Inspect AI on the same 2,000-case refund workload.

Both harnesses run the trivial in-memory refund desk of ``benchmarks/_workload.py`` (no model, no I/O in
the desk itself), so what is measured is the harness: per case, reset / run / snapshot, the two checks
(``answer_matches``; ``state_matches`` as a subset), the record written to disk, and at the end the
summary (oloproof: the run directory's columnar copy written, the run loaded back and the release gate;
Inspect AI: its log written to a temporary log dir and its ``accuracy`` metrics).

(a) oloproof_nb: ``op.load_suite(folder)`` → ``op.run(suite, out=…)`` (one flushed append per record, then
    the Parquet copy of the frames) → ``op.gate(run)`` (reads ``run.cases`` and ``run.verdicts``).
(b) Inspect AI: a ``Task`` of 2,000 ``Sample``s read from the same cases.jsonl, a solver calling the same
    desk code (``desk.py`` of the suite folder), two scorers equivalent to the two checks, run with
    ``eval(task, model="mockllm/model", log_dir=<temp>, display="none")``. The solver never calls the model.

Each measurement is one call in a **fresh Python process**, timed from just after the harness's own
package is imported (``import oloproof_nb`` / ``from inspect_ai import …``): lazy imports inside the calls
count, warm caches do not exist. The two harnesses alternate, ``--repeat`` processes each; the figures are
the medians. Run::

    pip install -e ".[bench]"                 # Inspect AI (extra 'bench')
    python benchmarks/runner.py               # 2,000 cases, both harnesses, 3 fresh processes each
    python benchmarks/runner.py --profile     # also a cProfile of one oloproof process (top functions)
    python benchmarks/runner.py --no-inspect --copy-parts   # also where the columnar copy's time goes, and
                                                            # the garbage collections it makes a run pay
    python benchmarks/runner.py --smoke       # 50 cases, 1 process each (CI); Inspect part skipped if not installed
    python benchmarks/runner.py --inspect-python /other/venv/bin/python   # Inspect AI in another interpreter
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.append(str(HERE.parent))  # the checkout, unless oloproof_nb is installed (or on PYTHONPATH)

from _workload import answer_ok, child_env, compile_caches, load_desk, make_cases, state_ok, write_suite  # noqa: E402


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
    """One oloproof run in this process, timed from here (call it right after ``import oloproof_nb``)."""
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


def oloproof_child(folder: Path, out: Path) -> dict[str, Any]:
    """The fresh-process measurement: import, then :func:`oloproof_once`; also the copy's share of the run."""
    t = time.perf_counter()
    import oloproof_nb  # noqa: F401

    imported = time.perf_counter() - t
    result = oloproof_once(folder, out)
    result["import"] = imported
    import shutil

    import oloproof_nb as op
    from oloproof_nb._analysis.run import Run
    from oloproof_nb._run.runner import run_suite

    again = out.parent / (out.name + "-harness")  # the same run again, now that every import is done
    suite = op.load_suite(folder)
    copy = timed_copy()
    t = time.perf_counter()
    with gc_passes() as collected:
        run_suite(suite, out=again, sink=copy)
        if not copy.commit():
            raise SystemExit("the live columnar copy was not written")
    total = time.perf_counter() - t
    result["copy"], result["harness"] = copy.spent, total - copy.spent
    result["copy_cpu"] = copy.cpu
    result["end"] = copy.end
    result["full_gc"] = collected[2][1]
    shutil.rmtree(out / "frames")  # for comparison: the same copy built by reading the journal back
    t = time.perf_counter()
    Run.load(out)
    result["convert"] = time.perf_counter() - t
    return result


def floor_child() -> dict[str, Any]:
    """The imports ``load_suite`` + ``run`` + ``gate`` cannot avoid, timed in a fresh process after
    ``import oloproof_nb``: pandas (the gate's table is a DataFrame), pyarrow.parquet (the columnar copy)
    and scipy.special (the Clopper–Pearson quantile)."""
    import oloproof_nb  # noqa: F401

    t = time.perf_counter()
    import pandas  # noqa: F401
    import pyarrow.parquet  # noqa: F401
    import scipy.special  # noqa: F401

    return {"seconds": time.perf_counter() - t}


@contextlib.contextmanager
def gc_passes() -> Iterator[dict[int, list[float]]]:
    """The garbage collector's passes inside the block: per generation (0 young, 1 middle, 2 full), how many
    and the seconds they took, as ``[count, seconds]``."""
    seen: dict[int, list[float]] = {0: [0, 0.0], 1: [0, 0.0], 2: [0, 0.0]}
    started = [0.0]

    def watch(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            passes = seen.setdefault(info["generation"], [0, 0.0])
            passes[0] += 1
            passes[1] += time.perf_counter() - started[0]

    gc.callbacks.append(watch)
    try:
        yield seen
    finally:
        gc.callbacks.remove(watch)


def timed_copy() -> Any:
    """A ``LiveCopy`` (the columnar copy op.run builds as records are appended) counting its own seconds
    (``spent``: wall, in its calls, in the caller's thread; ``cpu``: that thread's CPU time in them, which a
    loaded machine does not inflate as it does the wall), and ``end``: the wall seconds from the last record's
    ``add`` to the end of ``commit`` (the runner finishing the run in between, while the copy's thread
    completes the files)."""
    from oloproof_nb._analysis.live_copy import LiveCopy

    class TimedCopy(LiveCopy):
        spent = 0.0
        cpu = 0.0
        end = 0.0
        _last_add = 0.0

        def start(self, directory: Path) -> None:
            t, c = time.perf_counter(), time.thread_time()
            super().start(directory)
            self.spent += time.perf_counter() - t
            self.cpu += time.thread_time() - c

        def add(self, record: Any, state_ref: str | None, initial_ref: str | None = None) -> None:
            t, c = time.perf_counter(), time.thread_time()
            self._last_add = t
            super().add(record, state_ref, initial_ref)
            self.spent += time.perf_counter() - t
            self.cpu += time.thread_time() - c

        def commit(self) -> bool:
            t, c = time.perf_counter(), time.thread_time()
            written = super().commit()
            self.spent += time.perf_counter() - t
            self.cpu += time.thread_time() - c
            self.end = time.perf_counter() - self._last_add
            return written

    return TimedCopy()


def copy_share_on_examples(tmp: Path, repeat: int = 5) -> str:
    """The copy's share of the harness's own time on each bundled example (fault replays live: no cache)."""
    import oloproof_nb as op
    from oloproof_nb._run.runner import run_suite
    from oloproof_nb.examples import init_example

    lines = []
    for name in ("stateful-agent", "false-success"):
        suite = op.load_suite(init_example(name, tmp / name))
        warm = timed_copy()
        run_suite(suite, out=tmp / f"{name}-warm", sink=warm, cache=False)  # first-use costs, not counted
        warm.commit()
        shares = []
        for i in range(repeat):
            copy = timed_copy()
            t = time.perf_counter()
            run_suite(suite, out=tmp / f"{name}-{i}", sink=copy, cache=False)
            if not copy.commit():
                raise SystemExit("the live columnar copy was not written")
            total = time.perf_counter() - t
            shares.append((copy.spent, total - copy.spent))
        lines.append(f"    {name} ({suite.n_cases} cases): copy " + ", ".join(f"{c * 1e3:.0f}" for c, _ in shares)
                     + " ms against harness " + ", ".join(f"{h * 1e3:.0f}" for _, h in shares) + " ms = "
                     + ", ".join(f"{100 * c / h:.0f}%" for c, h in shares)
                     + "; of it, writing the nine Parquet files of the finished tables: "
                     + ", ".join(f"{w * 1e3:.1f}" for w in parquet_floor(tmp / f"{name}-0", repeat)) + " ms")
    return "\n".join(lines)


def parquet_floor(run_dir: Path, repeat: int) -> list[float]:
    """Seconds the copy's writer takes for the tables alone: the run's frames read back, written again."""
    import pyarrow.parquet as pq

    from oloproof_nb._analysis.columnar import CopyWriter
    from oloproof_nb._analysis.columns import FRAMES

    tables = {name: pq.read_table(run_dir / "frames" / f"{name}.parquet") for name in FRAMES}
    seconds = []
    for _ in range(repeat):
        t = time.perf_counter()
        writer = CopyWriter(run_dir, {})
        for name, table in tables.items():
            writer.write(name, table)
        writer.commit()
        seconds.append(time.perf_counter() - t)
    return seconds


class KeptRecords:
    """A record sink that keeps what the runner hands it: each case record and its states' addresses."""

    def __init__(self) -> None:
        self.added: list[tuple[Any, str | None, str | None]] = []

    def start(self, directory: Path) -> None:
        self.added = []

    def add(self, record: Any, state_ref: str | None, initial_ref: str | None = None) -> None:
        self.added.append((record, state_ref, initial_ref))


def copy_parts_child(folder: Path, out: Path, copies: int, runs: int) -> dict[str, Any]:
    """Where the live columnar copy's time goes, in one warm process, and the collections it makes a run pay.

    The parts: the copy's own steps as ``LiveCopy`` takes them, done again on one run's records — each record
    turned into every frame's rows, JSON cells as text (``frames.ChunkItems``; ``changes`` is ``leaf_diff``), each
    chunk's rows of ``CHUNK`` cases into Arrow tables (``to_arrow``), the tables into the nine files (``CopyWriter``,
    its commit included). CPU time of this thread with the garbage collector paused, medians of ``copies`` copies after
    an untimed one. The collections: counted per generation in ``run_suite`` (the copy committed) with the
    live copy and without any sink, ``runs`` runs each, alternating, after one untimed run of each.
    """
    import oloproof_nb as op
    from oloproof_nb._analysis import frames
    from oloproof_nb._analysis.columnar import CopyWriter, journal_fingerprint, to_arrow
    from oloproof_nb._analysis.columns import FRAMES
    from oloproof_nb._analysis.live_copy import CHUNK, LiveCopy
    from oloproof_nb._analysis.run import Run
    from oloproof_nb._run.runner import run_suite
    from oloproof_nb._run.store import read_manifest

    suite = op.load_suite(folder)
    kept = KeptRecords()
    run_suite(suite, out=out, sink=kept)
    run = Run(out, read_manifest(out))
    if any(ev.scope == "run" for ev in run.config.evaluators):
        raise SystemExit("--copy-parts takes a suite without evaluators judged across cases (pairs)")
    parts: dict[str, list[float]] = {}
    cells = json_cells = 0
    for i in range(copies + 1):  # the first: first-use costs, not counted
        spent = {"rows": 0.0, "arrow": 0.0, "files": 0.0}
        writer = CopyWriter(out, {})
        gc.disable()
        try:
            for start in range(0, len(kept.added), CHUNK):
                t = time.thread_time()
                chunk = frames.ChunkItems(run.config.tool_errors, unscored=run.unscored_ids)
                for rec, ref, _ in kept.added[start:start + CHUNK]:
                    chunk.add(rec, ref)
                spent["rows"] += time.thread_time() - t
                for name, rows, state_refs in chunk.parts():
                    t = time.thread_time()
                    table = to_arrow(FRAMES[name], rows, state_refs)
                    spent["arrow"] += time.thread_time() - t
                    t = time.thread_time()
                    writer.write(name, table)
                    spent["files"] += time.thread_time() - t
                    if i == 0:
                        cells += table.num_rows * table.num_columns
                        json_cells += table.num_rows * sum(col.is_json for col in FRAMES[name].columns)
            writer.fingerprint = journal_fingerprint(out)
            t = time.thread_time()
            writer.commit()
            spent["files"] += time.thread_time() - t
        finally:
            gc.enable()
        if i:
            for name, seconds in spent.items():
                parts.setdefault(name, []).append(seconds)
    passes: dict[str, list[dict[int, list[float]]]] = {"copy": [], "none": []}
    walls: dict[str, list[float]] = {"copy": [], "none": []}
    for i in range(runs + 1):
        for label, seen in passes.items():
            sink = LiveCopy() if label == "copy" else None
            gc.collect()
            t = time.perf_counter()
            with gc_passes() as counted:
                run_suite(suite, out=out.parent / f"{out.name}-{label}-{i}", sink=sink)
                if sink is not None and not sink.commit():
                    raise SystemExit("the live columnar copy was not written")
            if i:  # the first of each: untimed
                seen.append(counted)
                walls[label].append(time.perf_counter() - t)
    return {"cases": len(kept.added), "cells": cells, "json_cells": json_cells,
            "parts": {name: statistics.median(s) for name, s in parts.items()},
            "walls": {label: statistics.median(w) for label, w in walls.items()},
            "gc": {label: {str(gen): [statistics.median(r[gen][k] for r in rows) for k in (0, 1)] for gen in (0, 1, 2)}
                   for label, rows in passes.items()}}


def copy_parts_lines(parts: dict[str, Any], copies: int, runs: int) -> str:
    """The lines ``--copy-parts`` prints of :func:`copy_parts_child`'s result."""
    ms = {name: 1e3 * s for name, s in parts["parts"].items()}
    per_cell = 1e6 * ms["arrow"] / max(parts["cells"], 1)
    gc_line = "; ".join(
        f"{'with the copy' if label == 'copy' else 'without a copy'}: "
        + " / ".join(f"{young_middle_full[0]:.0f}" for young_middle_full in gens.values())
        + f" passes, {1e3 * sum(passes[1] for passes in gens.values()):.1f} ms"
        for label, gens in parts["gc"].items())
    return (f"    where the copy of {parts['cases']:,} cases goes (one warm process, CPU time, collector paused, "
            f"medians of {copies} copies): records into rows {ms['rows']:.1f} ms (every frame's, the JSON cells "
            f"written as text, the changes diffed), Arrow tables {ms['arrow']:.1f} ms ({parts['cells']:,} cells, "
            f"{per_cell:.0f} ns a cell; {parts['json_cells']:,} of them JSON texts), the nine files "
            f"{ms['files']:.1f} ms; in all {sum(ms.values()):.1f} ms\n"
            f"    garbage collections of one run_suite (young / middle / full passes and their time, medians of "
            f"{runs} runs each, alternating): {gc_line}; the same runs' wall time: with the copy (committed) "
            f"{1e3 * parts['walls']['copy']:.0f} ms, without {1e3 * parts['walls']['none']:.0f} ms")


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
    """One Inspect AI eval in this process, timed after its imports (and the desk's)."""
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


def child(flag: str, python: str, folder: Path, out: Path, *extra: str) -> dict[str, Any]:
    """Run one measurement in a fresh process of ``python``; its JSON result."""
    env = child_env(HERE.parent)  # every module read from bytecode, as an installed package's (compile_caches)
    proc = subprocess.run([python, str(Path(__file__).resolve()), flag, str(folder), str(out), *extra],
                          capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{flag} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def floor(python: str) -> float:
    """:func:`floor_child` in a fresh process of ``python``: its seconds."""
    env = child_env(HERE.parent)
    proc = subprocess.run([python, str(Path(__file__).resolve()), "--floor-child"],
                          capture_output=True, text=True, check=True, env=env)
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["seconds"])


# -- main ------------------------------------------------------------------------------------------------------


def median(rows: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(r[key] for r in rows))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="runner overhead: oloproof_nb next to Inspect AI")
    parser.add_argument("--cases", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per harness (figures: medians)")
    parser.add_argument("--smoke", action="store_true", help="50 cases, one process each (CI)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one oloproof run")
    parser.add_argument("--no-inspect", action="store_true", help="time oloproof_nb only")
    parser.add_argument("--examples", action="store_true",
                        help="also the columnar copy's share of the harness's time on the bundled examples")
    parser.add_argument("--copy-parts", action="store_true",
                        help="also where the columnar copy's time goes, step by step, and the garbage "
                             "collections it makes a run pay (one more fresh process)")
    parser.add_argument("--inspect-python", help="run the Inspect AI part with this interpreter")
    parser.add_argument("--oloproof-child", nargs=2, metavar=("SUITE", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--inspect-child", nargs=2, metavar=("SUITE", "LOGS"), help=argparse.SUPPRESS)
    parser.add_argument("--floor-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--copy-parts-child", nargs=4, metavar=("SUITE", "OUT", "COPIES", "RUNS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.copy_parts_child:
        suite_dir, out_dir, copies, runs = args.copy_parts_child
        print(json.dumps(copy_parts_child(Path(suite_dir), Path(out_dir), int(copies), int(runs))))
        return 0
    if args.floor_child:
        print(json.dumps(floor_child()))
        return 0
    if args.oloproof_child:
        print(json.dumps(oloproof_child(Path(args.oloproof_child[0]), Path(args.oloproof_child[1]))))
        return 0
    if args.inspect_child:
        print(json.dumps(inspect_once(Path(args.inspect_child[0]), Path(args.inspect_child[1]))))
        return 0
    if args.smoke:
        args.cases, args.repeat = 50, 1

    print(machine())
    hand = expected_passes(args.cases)
    inspect_python = args.inspect_python or (sys.executable if inspect_available() else None)
    with_inspect = not args.no_inspect and inspect_python is not None
    with tempfile.TemporaryDirectory(prefix="oloproof-bench-") as tmp_name:
        tmp = Path(tmp_name)
        folder = write_suite(tmp / "suite", args.cases)
        # every module either harness imports read from bytecode, as an installed package's (see child_env)
        compile_caches(sys.executable, HERE.parent / "oloproof_nb", HERE, folder)
        if with_inspect and inspect_python != sys.executable:
            compile_caches(str(inspect_python), HERE, folder)
        print(f"workload: {args.cases:,} cases (refund desk, answer_matches + state_matches), "
              f"{args.repeat} fresh process(es) per harness; hand count of passes (answer/state): {hand[0]}/{hand[1]}")
        ours: list[dict[str, Any]] = []
        theirs: list[dict[str, Any]] = []
        for i in range(args.repeat):
            ours.append(child("--oloproof-child", sys.executable, folder, tmp / "runs" / f"r{i}"))
            if with_inspect:
                theirs.append(child("--inspect-child", inspect_python, folder, tmp / "logs" / f"r{i}"))
        seconds = median(ours, "seconds")
        print(f"(a) oloproof_nb : {seconds:8.3f} s  {args.cases / seconds:10,.0f} cases/s  "
              f"(load_suite {median(ours, 'load_suite'):.3f} s, run {median(ours, 'run'):.3f} s, "
              f"gate {median(ours, 'gate'):.3f} s; import before it {median(ours, 'import'):.3f} s; "
              f"passed {ours[0]['answer_passed']}/{ours[0]['state_passed']}, gate {ours[0]['verdict']})")
        share = 100 * median(ours, "copy") / median(ours, "harness")
        print(f"    columnar copy: {median(ours, 'copy'):.3f} s = {share:.0f}% "
              f"of the harness's own time for the run ({median(ours, 'harness'):.3f} s: run_suite, warm; "
              f"shares process by process: "
              + ", ".join(f"{100 * r['copy'] / r['harness']:.0f}%" for r in ours)
              + f"); the CPU time of the copy's calls in the runner's thread: {1e3 * median(ours, 'copy_cpu'):.1f} ms "
              f"(processes " + ", ".join(f"{1e3 * r['copy_cpu']:.1f}" for r in ours) + ", collector on)"
              + f"; built from the journal instead: {median(ours, 'convert'):.3f} s; full garbage collections "
              f"during that run: " + ", ".join(f"{r['full_gc']:.3f}" for r in ours) + " s; the end of that run "
              f"(the last record's add to the copy in place, wall): {1e3 * median(ours, 'end'):.0f} ms (processes "
              + ", ".join(f"{1e3 * r['end']:.0f}" for r in ours) + ")")
        floors = [floor(sys.executable) for _ in range(args.repeat)]
        print(f"    imports the calls cannot avoid (pandas, pyarrow.parquet, scipy.special; fresh process after "
              f"import oloproof_nb): {statistics.median(floors):.3f} s (processes "
              + ", ".join(f"{f:.3f}" for f in floors) + ")")
        ok = all((r["answer_passed"], r["state_passed"]) == hand for r in ours)
        if args.copy_parts:
            copies = 1 if args.smoke else 5
            parts = child("--copy-parts-child", sys.executable, folder, tmp / "runs" / "parts", str(copies),
                          str(args.repeat))
            print(copy_parts_lines(parts, copies, args.repeat))
        if args.examples:
            print("    the copy on the bundled examples (5 runs each, warm, replays live):")
            print(copy_share_on_examples(tmp / "examples"))
        if args.profile:
            print(profile_oloproof(folder, tmp / "runs" / "profiled"))
        if args.no_inspect:
            print("(b) Inspect AI  : skipped (--no-inspect)")
        elif not with_inspect:
            print("(b) Inspect AI  : skipped (inspect_ai is not installed: pip install -e '.[bench]')")
        else:
            other = median(theirs, "seconds")
            print(f"(b) Inspect AI  : {other:8.3f} s  {args.cases / other:10,.0f} cases/s  "
                  f"(inspect_ai {theirs[0]['version']}, mockllm/model; passed "
                  f"{theirs[0]['answer_passed']}/{theirs[0]['state_passed']})")
            pairs = ", ".join(f"{t['seconds'] / o['seconds']:.1f}x" for o, t in zip(ours, theirs, strict=True))
            print(f"ratio: oloproof_nb runs {other / seconds:.1f}x the cases per second of Inspect AI "
                  f"(target ≥ 50x; process by process: {pairs}); 50x means {other / 50:.3f} s for oloproof_nb, "
                  f"{statistics.median(floors):.3f} s of it the unavoidable imports")
            ok = ok and all((r["answer_passed"], r["state_passed"]) == hand for r in theirs)
    if not ok:
        print(f"FAIL: a harness did not count {hand[0]}/{hand[1]} passes (answer/state)")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
