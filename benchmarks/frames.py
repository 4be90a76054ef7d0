"""Benchmark: ``load_run``, every frame and the gate of a stored run of 100,000 / 1,000,000 cases.

The run directories are synthetic but shaped exactly like real ones: the bundled ``stateful-agent`` example
(24 refund requests and their 24 ``~injected`` copies; answer, state, untouched-order, metamorphic and
fault-recovery checks) is run once for real, and its 48 case records and their replay records are the
templates. Each copy gets new case ids (``ord-001-c00042``, ``ord-001-c00042~injected``; clusters follow
the source), a new index, and a validity label per derived case, and is appended through
``RunStore.append_case`` / ``append_replay`` (one flushed write per record, states by address, as in a live
run). The copies repeat the template's values (arguments, results, states), so a JSON column decodes from
few distinct texts and the state store holds few states; see benchmarks/README.md for what that means.

For each size, each step in a fresh Python process (so nothing is shared with the writer):

1. **convert**: the first ``op.load_run(dir)`` builds the columnar copy (``frames/*.parquet``) from the
   journal; its seconds, against the harness's own time for the same cases (the template's ``run_suite``
   seconds per case, times the cases);
2. **cold**: ``import oloproof_nb``, then ``op.load_run(dir)``, every frame (``cases, steps, snapshots,
   changes, verdicts, comparisons, replays, pairs, receipts``), ``op.gate(run)`` and ``op.validity(run)``
   once — lazy imports (pyarrow.parquet, scipy) inside those calls count;
3. **warm**: the same work ``--repeat`` times after that, best of them.

Peak memory is the process's peak resident set (``VmHWM``, Python and Arrow alike) during the work, and
its growth over the resident set just before the work. Run::

    python benchmarks/frames.py                      # 100k and 1M cases (1M: ~30 min to write and convert)
    python benchmarks/frames.py --sizes 100000       # 100k only
    python benchmarks/frames.py --smoke              # 960 and 1,920 cases (CI)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))  # the checkout, unless oloproof_nb is installed

FRAMES = ("cases", "steps", "snapshots", "changes", "verdicts", "comparisons", "replays", "pairs", "receipts")


def machine() -> str:
    import numpy
    import pandas

    return (f"platform: {platform.platform()} | {platform.processor() or platform.machine()}\n"
            f"cpus: {os.cpu_count()} | python {platform.python_version()} | numpy {numpy.__version__} | "
            f"pandas {pandas.__version__}")


def templates(tmp: Path) -> tuple[Any, float]:
    """A real run of the bundled example (the records every synthetic run is made of), and the seconds
    the harness took for it (``run_suite``: reset, run, snapshot, checks, replays, the journal)."""
    import oloproof_nb as op
    from oloproof_nb._run.runner import run_suite
    from oloproof_nb.examples import init_example

    warm_up = op.load_suite(init_example("stateful-agent", tmp / "warm-up"))
    run_suite(warm_up, out=tmp / "warm-up-run")  # imports and first-use costs out of the timing
    suite = op.load_suite(init_example("stateful-agent", tmp / "stateful-agent"))  # its own, empty replay cache
    t = time.perf_counter()
    directory = run_suite(suite, out=tmp / "template-run")
    seconds = time.perf_counter() - t
    return op.load_run(directory), seconds


def write_run(template: Any, directory: Path, n_cases: int, distinct: bool = False) -> Path:
    """A run directory of ``n_cases`` records copied from ``template`` under new case ids.

    ``distinct``: each copy's initial and final states get a key ``"copy"`` holding the copy's number, so every
    copy's states differ from every other copy's (a source and its derived case, copied together, still agree).
    """
    from oloproof_nb._run.store import RunStore

    records = template.records
    copies = -(-n_cases // len(records))
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
            if distinct:
                for state in (case.get("initial_state"), (new.get("environment_state") or {}).get("state")):
                    if isinstance(state, dict):
                        state["copy"] = c
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


def _status(key: str) -> int:
    """A ``/proc/self/status`` figure in bytes (``VmRSS``, ``VmHWM``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(key)


def _reset_peak() -> None:
    """Start a new peak resident set (Linux: writing 5 to clear_refs resets VmHWM)."""
    Path("/proc/self/clear_refs").write_text("5")


def work(directory: Path) -> dict[str, float]:
    """load_run, every frame, the gate and validity; seconds for each step."""
    import oloproof_nb as op

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
    out["gate"] = time.perf_counter() - t
    t = time.perf_counter()
    op.validity(run)
    out["validity"] = time.perf_counter() - t
    out["total"] = out["load_run"] + sum(out[f] for f in FRAMES) + out["gate"] + out["validity"]
    out["verdict_is_" + gate.verdict] = 1
    return out


def child_work(directory: Path, repeat: int) -> dict[str, Any]:
    """In a fresh process: the cold pass (imports included), then ``repeat`` warm passes; peak memory."""
    t = time.perf_counter()
    import oloproof_nb  # noqa: F401

    imported = time.perf_counter() - t
    _reset_peak()
    base = _status("VmRSS")
    cold = work(directory)
    cold["import"] = imported
    peak = _status("VmHWM")
    warm = [work(directory) for _ in range(repeat)]
    best = min(warm, key=lambda r: r["total"]) if warm else cold
    return {"cold": cold, "warm": best, "peak": peak, "base": base, "peak_all": _status("VmHWM")}


def child_convert(directory: Path, warm_up: Path) -> dict[str, Any]:
    """In a fresh process: build the columnar copy of ``directory`` (after converting ``warm_up``, a copy of
    the template run, so imports and first-use costs are not counted)."""
    import shutil

    import oloproof_nb as op

    shutil.rmtree(warm_up / "frames", ignore_errors=True)
    op.load_run(warm_up)
    shutil.rmtree(directory / "frames", ignore_errors=True)  # a kept folder: convert it again
    _reset_peak()
    base = _status("VmRSS")
    t = time.perf_counter()
    op.load_run(directory)
    return {"seconds": time.perf_counter() - t, "peak": _status("VmHWM"), "base": base}


def in_child(flag: str, directory: Path, *extra: str) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), flag, str(directory), *extra],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{flag} {directory} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="load_run + frames + gate at scale")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=3, help="warm timings are the best of this many passes")
    parser.add_argument("--smoke", action="store_true", help="960 and 1,920 cases, one repeat (CI)")
    parser.add_argument("--keep", metavar="DIR", help="write the run folders under DIR and keep them; "
                        "a folder already there (run-<size>) is reused")
    parser.add_argument("--work-child", metavar="RUN", help=argparse.SUPPRESS)
    parser.add_argument("--convert-child", metavar="RUN", help=argparse.SUPPRESS)
    parser.add_argument("--warm-up", metavar="RUN", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.work_child:
        print(json.dumps(child_work(Path(args.work_child), args.repeat)))
        return 0
    if args.convert_child:
        print(json.dumps(child_convert(Path(args.convert_child), Path(args.warm_up))))
        return 0
    if args.smoke:
        args.sizes, args.repeat = [960, 1_920], 1

    print(machine())
    with tempfile.TemporaryDirectory(prefix="oloproof-frames-") as tmp_name:
        tmp = Path(tmp_name)
        keep = Path(args.keep) if args.keep else tmp
        template, harness_s = templates(tmp)
        per_case = harness_s / len(template.records)
        print(f"template: the stateful-agent example, {len(template.records)} records, "
              f"{len(template.replay_records)} replay records; harness {per_case * 1e3:.1f} ms per case "
              f"(run_suite); warm = best of {args.repeat}")
        print(f"{'cases':>9} {'write s':>8} {'convert s':>9} {'(% harness)':>11} {'cold s':>7} {'warm s':>7} "
              f"{'frames':>7} {'gate':>6} {'peak MiB':>9} {'(+work)':>8}")
        results = []
        for size in args.sizes:
            directory = keep / f"run-{size}"
            t = time.perf_counter()
            if not (directory / "manifest.json").exists():
                write_run(template, directory, size)
            written = time.perf_counter() - t
            conv = in_child("--convert-child", directory, "--warm-up", str(template.directory))
            res = in_child("--work-child", directory, "--repeat", str(args.repeat))
            warm = res["warm"]
            frames_s = sum(warm[f] for f in FRAMES)
            results.append((size, conv, res))
            print(f"{size:9,} {written:8.1f} {conv['seconds']:9.1f} {100 * conv['seconds'] / (per_case * size):10.1f}% "
                  f"{res['cold']['total']:7.3f} {warm['total']:7.3f} {frames_s:7.3f} {warm['gate']:6.3f} "
                  f"{res['peak'] / 2**20:9.0f} {(res['peak'] - res['base']) / 2**20:8.0f}", flush=True)
        for size, conv, res in results:
            warm = res["warm"]
            print(f"at {size:,} cases (warm, s): load_run {warm['load_run']:.3f}; "
                  + ", ".join(f"{f} {warm[f]:.3f} ({warm[f'rows_{f}']:,} rows)" for f in FRAMES)
                  + f"; gate {warm['gate']:.3f}; validity {warm['validity']:.3f}; "
                  f"cold: import {res['cold']['import']:.3f}, load_run {res['cold']['load_run']:.3f}, "
                  f"frames {sum(res['cold'][f] for f in FRAMES):.3f}, gate {res['cold']['gate']:.3f}, "
                  f"validity {res['cold']['validity']:.3f}, total {res['cold']['total']:.3f}; "
                  f"convert peak {conv['peak'] / 2**20:.0f} MiB")
        if len(results) > 1:
            (s0, _, r0), (s1, _, r1) = results[0], results[-1]
            growth = (r1["peak"] - r1["base"]) / max(r0["peak"] - r0["base"], 1)
            print(f"memory growth: {s1 / s0:.1f}x the cases -> {growth:.2f}x "
                  "the work's peak")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
