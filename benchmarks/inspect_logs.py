"""Benchmark: reading an Inspect AI ``.eval`` log of N samples, next to Inspect AI's own readers.

A real eval (the tests' refund desk on ``mockllm/model``: a tool, two scorers) is run once; its samples are copied
under new ids into logs of N samples, each written by Inspect's own ``write_eval_log``. For each N, in one
run, side by side:

- ``op.from_inspect(log)``: samples read in batches of one archive parse each, every frame built;
- Inspect's ``read_eval_log(log, resolve_attachments=True)``: the whole log in memory at once (the peer);
- Inspect's ``read_eval_log_samples`` (one sample at a time, the archive's directory parsed for each):
  what ``from_inspect`` used before, whose time grew with the square of N. Timed up to ``--slow-max``
  samples only, as it takes minutes beyond.

Run::

    pip install -e ".[bench]"              # Inspect AI
    python benchmarks/inspect_logs.py      # 250, 1,000 and 4,000 samples
    python benchmarks/inspect_logs.py --smoke
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def real_log(folder: Path) -> Path:
    """The real log the tests read (``tests/_inspect_task.py``: a refund desk, a tool, two scorers, two
    epochs), made in a child process."""
    env = {**os.environ, "INSPECT_DISPLAY": "none", "XDG_DATA_HOME": str(folder / "xdg"), "NO_PROXY": "*"}
    subprocess.run([sys.executable, str(ROOT / "tests" / "_inspect_task.py"), str(folder / "logs"),
                    str(folder / "json")], env=env, check=True, capture_output=True, timeout=600)
    (log,) = sorted((folder / "logs").glob("*.eval"))
    return log


def scaled(source: Path, n: int, folder: Path) -> Path:
    """A log of ``n`` samples: the source's samples copied under new ids, written by Inspect."""
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(source)
    assert log.samples
    log.samples = [s for s in log.samples if s.error is None]  # the samples that finished (the task's s4 raises)
    samples: list[Any] = []
    for i in range(n):
        sample = log.samples[i % len(log.samples)].model_copy(deep=True)
        sample.id, sample.epoch = f"x{i}", 1
        samples.append(sample)
    log.samples = samples
    log.eval.dataset.sample_ids = [s.id for s in samples]
    log.eval.dataset.samples = n
    log.eval.config.epochs = 1
    assert log.results is not None
    log.results.total_samples = n
    path = folder / f"n{n}.eval"
    write_eval_log(log, path)
    return path


def clock(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="reading Inspect AI .eval logs: oloproof_nb next to Inspect AI")
    parser.add_argument("--sizes", default="250,1000,4000", help="samples per log, comma-separated")
    parser.add_argument("--slow-max", type=int, default=1000,
                        help="largest log read one sample at a time (it grows with the square of the samples)")
    parser.add_argument("--smoke", action="store_true", help="logs of 20 and 80 samples (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.slow_max = "20,80", 80
    sizes = [int(x) for x in args.sizes.split(",")]
    os.environ.setdefault("INSPECT_DISPLAY", "none")
    import inspect_ai
    from inspect_ai.log import read_eval_log, read_eval_log_samples

    import oloproof_nb as op

    print(f"platform: {platform.platform()} | cpus: {os.cpu_count()} | python {platform.python_version()} | "
          f"inspect_ai {inspect_ai.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = real_log(folder / "source")
        op.from_inspect(source)  # first use (imports) outside the figures
        print(f"{'samples':>8} {'from_inspect':>14} {'per sample':>11} {'read_eval_log':>14} "
              f"{'one at a time':>14}")
        for n in sizes:
            path = scaled(source, n, folder)
            ours = clock(lambda path=path: op.from_inspect(path))
            whole = clock(lambda path=path: read_eval_log(path, resolve_attachments=True))
            slow = (f"{clock(lambda path=path: list(read_eval_log_samples(path, resolve_attachments=True))):12.2f} s"
                    if n <= args.slow_max else f"{'(not timed)':>14}")
            print(f"{n:8d} {ours:12.2f} s {1000 * ours / n:8.2f} ms {whole:12.2f} s {slow}")
            run = op.from_inspect(path)
            if len(run.cases) != n or run.verdicts["verdict"].eq("missing").any():
                print(f"FAIL: {len(run.cases)} cases read of {n}, verdicts {sorted(set(run.verdicts['verdict']))}")
                return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
