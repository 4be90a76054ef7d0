"""Benchmark: ``load_run``, every frame and the gate of a stored run of 25,000 / 50,000 / 100,000 cases.

The run directories are synthetic but shaped exactly like real ones: the bundled ``stateful-agent`` example
(24 refund requests and their 24 ``~injected`` copies; answer, state, untouched-order, metamorphic and
fault-recovery checks) is run once for real, and its 48 case records and their replay records are the
templates. Each copy gets new case ids (``ord-001-c00042``, ``ord-001-c00042~injected``; clusters follow
the source), a new index, and a validity label per derived case, and is appended through
``RunStore.append_case`` / ``append_replay`` (one flushed write per record, as in a live run).

For each size, timed (best of ``--repeat``): ``op.load_run(dir)``; then every frame (``cases, steps,
snapshots, changes, verdicts, comparisons, replays, pairs, receipts``); then ``op.gate(run)`` (release.yaml
of the example: ``cluster_t`` intervals) and ``op.validity(run)``. Then, in a separate pass, the tracemalloc
peak of the same work (tracemalloc slows Python down, so it is never timed). Run::

    python benchmarks/frames.py              # 25k, 50k, 100k cases
    python benchmarks/frames.py --smoke      # 960 and 1,920 cases (CI)
"""

from __future__ import annotations

import argparse
import gc
import json
from datetime import datetime
import os
import platform
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # the checkout, unless oloproof_nb is installed

import oloproof_nb as op  # noqa: E402
from oloproof_nb.examples import init_example  # noqa: E402
from oloproof_nb._run.store import RunStore  # noqa: E402

FRAMES = ("cases", "steps", "snapshots", "changes", "verdicts", "comparisons", "replays", "pairs", "receipts")


def machine() -> str:
    import numpy
    import pandas

    return (f"platform: {platform.platform()} | {platform.processor() or platform.machine()}\n"
            f"cpus: {os.cpu_count()} | python {platform.python_version()} | numpy {numpy.__version__} | "
            f"pandas {pandas.__version__}")


def templates(tmp: Path) -> op.Run:
    """A real run of the bundled example: the records every synthetic run is made of."""
    suite = init_example("stateful-agent", tmp / "stateful-agent")
    return op.run(suite, out=tmp / "template-run", progress=False)


def write_run(template: op.Run, directory: Path, n_cases: int) -> Path:
    """A run directory of ``n_cases`` records copied from ``template`` under new case ids."""
    records = template.records
    per_copy = len(records)
    copies = -(-n_cases // per_copy)
    lines = [json.dumps(rec) for rec in records]
    replay_lines: dict[str, list[str]] = {}
    for rep in template.replay_records:
        replay_lines.setdefault(rep["case_id"], []).append(json.dumps(rep))
    base_labels = {j["case_id"]: j for j in template.labels.get("injected", [])}
    labels = []
    manifest = template.manifest.model_copy(update={"finished_at": None, "n_cases": n_cases})
    store = RunStore.create(directory, manifest)
    index = 0
    for c in range(copies):
        for line, rec in zip(lines, records, strict=True):
            if index == n_cases:
                break
            old_id = rec["case"]["id"]
            src = rec["case"]["source_id"]
            new_src = f"{src}-c{c:05d}"
            new_id = new_src + old_id[len(src):]
            new = json.loads(line)
            new["index"] = index
            case = new["case"]
            case["id"], case["source_id"], case["cluster"] = new_id, new_src, new_src
            if new.get("environment_state"):
                new["environment_state"]["case_id"] = new_id
            for row in new["comparisons"] + new["replays"] + new["receipts"]:
                row["case_id"] = new_id
            for rep_line in replay_lines.get(old_id, []):
                rep = json.loads(rep_line)
                rep["case_id"] = new_id
                if rep.get("environment_state"):
                    rep["environment_state"]["case_id"] = new_id
                store.append_replay(rep)
            store.append_case(new)
            if old_id in base_labels:
                labels.append({**base_labels[old_id], "case_id": new_id})
            index += 1
    store.manifest.suite_config.labels = {"injected": labels}
    store.finish(finished_at=datetime.fromisoformat(manifest.started_at.replace("Z", "+00:00")))
    return directory


class GcClock:
    """Seconds spent in Python's cyclic garbage collector (through ``gc.callbacks``)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._start

    def __enter__(self) -> GcClock:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


def work(directory: Path) -> dict[str, float]:
    """load_run, every frame, the gate and validity; seconds for each step (and in the garbage collector)."""
    with GcClock() as clock:
        out = _work(directory)
    out["gc"] = clock.seconds
    return out


def _work(directory: Path) -> dict[str, float]:
    out: dict[str, float] = {}
    t = time.perf_counter()
    run = op.load_run(directory)
    out["load_run"] = time.perf_counter() - t
    for name in FRAMES:
        t = time.perf_counter()
        frame = getattr(run, name)
        out[name] = time.perf_counter() - t
        out[f"rows_{name}"] = len(frame)
    t = time.perf_counter()
    gate = op.gate(run)
    op.validity(run)
    out["gate"] = time.perf_counter() - t
    out["verdict_is_" + gate.verdict] = 1
    return out


def peak_memory(directory: Path) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        work(directory)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        gc.collect()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="load_run + frames + gate at scale")
    parser.add_argument("--sizes", type=int, nargs="+", default=[25_000, 50_000, 100_000])
    parser.add_argument("--repeat", type=int, default=2, help="timings are the best of this many runs")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc pass")
    parser.add_argument("--smoke", action="store_true", help="960 and 1,920 cases, one repeat (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.repeat = [960, 1_920], 1

    print(machine())
    with tempfile.TemporaryDirectory(prefix="oloproof-frames-") as tmp_name:
        tmp = Path(tmp_name)
        template = templates(tmp)
        print(f"template: the stateful-agent example, {len(template.records)} records, "
              f"{len(template.replay_records)} replay records; best of {args.repeat}")
        header = (f"{'cases':>8} {'load_run':>9} {'frames':>8} {'gate':>7} {'total':>8} {'(in gc)':>8} "
                  f"{'peak MiB':>9} {'KiB/case':>9}")
        print(header)
        results = []
        for size in args.sizes:
            directory = write_run(template, tmp / f"run-{size}", size)
            timings = [work(directory) for _ in range(args.repeat)]
            best = min(timings, key=lambda r: r["load_run"] + sum(r[f] for f in FRAMES) + r["gate"])
            frames_s = sum(best[f] for f in FRAMES)
            total = best["load_run"] + frames_s + best["gate"]
            peak = None if args.no_memory else peak_memory(directory)
            results.append((size, best, peak))
            mem = "" if peak is None else f"{peak / 2**20:9.1f} {peak / 1024 / size:9.2f}"
            print(f"{size:8,} {best['load_run']:9.3f} {frames_s:8.3f} {best['gate']:7.3f} {total:8.3f} "
                  f"{best['gc']:8.3f} {mem}",
                  flush=True)
        size, best, _ = results[-1]
        print(f"per frame at {size:,} cases (s): "
              + ", ".join(f"{f} {best[f]:.3f} ({best[f'rows_{f}']:,} rows)" for f in FRAMES))
        if len(results) > 1 and results[0][2] is not None:
            (s0, _, p0), (s1, _, p1) = results[0], results[-1]
            print(f"memory growth: {s1 / s0:.1f}x the cases -> {p1 / p0:.2f}x the peak")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
