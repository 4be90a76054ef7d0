"""Benchmark: the columnar copy's files written with Zstandard (level 1) and with Snappy, time and size.

The copy writes a frame of fewer than ``SMALL_ROWS`` rows in one piece with Snappy and no dictionary pages
or statistics (``columnar.SMALL_FILE``), one of fewer than ``MEDIUM_ROWS`` in one piece with Zstandard and no
dictionary pages or statistics (``columnar.MEDIUM_FILE``), a larger one streamed with Zstandard
(``columnar.large_file``: ``LARGE_FILE``, without dictionary pages for the columns whose every row holds a value of
its own, ``columnar.ONE_PER_ROW``).
This writes the nine frames of real runs again with each setting: the bundled ``stateful-agent`` example
(48 cases: every frame small) and the benchmark desk at 2,000 cases (frames of 2,000–6,000 rows), each
file into a new folder as the copy does; medians of the rounds. Run::

    python benchmarks/codecs.py              # 15 rounds
    python benchmarks/codecs.py --smoke      # 2 rounds, the example and 200 desk cases (CI)
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from _workload import write_suite  # noqa: E402

import oloproof_nb as op  # noqa: E402
from oloproof_nb._analysis import columnar  # noqa: E402
from oloproof_nb._analysis.columns import FRAMES  # noqa: E402
from oloproof_nb.examples import init_example  # noqa: E402

#: Each setting: the writer options, or a function of a table's column names that gives them.
SETTINGS: dict[str, dict[str, Any] | Callable[[list[str]], dict[str, Any]]] = {
    "small-file setting (Snappy, no dictionary, no statistics)": columnar.SMALL_FILE,
    "medium-file setting (Zstandard level 1, no dictionary, no statistics)": columnar.MEDIUM_FILE,
    "Snappy": {"compression": "snappy"},
    "large-file setting (Zstandard level 1, no dictionary for one-per-row columns)": columnar.large_file,
}


def write_all(tables: dict[str, pa.Table], root: Path,
              options: dict[str, Any] | Callable[[list[str]], dict[str, Any]]) -> tuple[float, int]:
    """Seconds to write every table into a new folder, and the folder's bytes."""
    folder = root / uuid.uuid4().hex
    t = time.perf_counter()
    folder.mkdir()
    for name, table in tables.items():
        kwargs = options(table.schema.names) if callable(options) else options
        with pq.ParquetWriter(folder / f"{name}.parquet", table.schema, **kwargs) as writer:
            writer.write_table(table, row_group_size=max(table.num_rows, 1))
    seconds = time.perf_counter() - t
    return seconds, sum(f.stat().st_size for f in folder.iterdir())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the copy's Parquet settings: time and size")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--cases", type=int, default=2000, help="desk cases")
    parser.add_argument("--smoke", action="store_true", help="2 rounds, 200 desk cases (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.rounds, args.cases = 2, 200
    print(f"platform: {platform.platform()} | cpus: {os.cpu_count()} | python {platform.python_version()} | "
          f"pyarrow {pa.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        runs = {
            "stateful-agent (48 cases)": op.run(init_example("stateful-agent", root / "example"),
                                                out=root / "run-example", progress=False),
            f"desk ({args.cases:,} cases)": op.run(write_suite(root / "desk", args.cases), out=root / "run-desk",
                                                   progress=False),
        }
        for label, run in runs.items():
            tables = {name: pq.read_table(columnar.frame_path(run.directory, name)) for name in FRAMES}
            rows = ", ".join(f"{name} {table.num_rows:,}" for name, table in tables.items())
            print(f"{label}: rows {rows}")
            for setting, options in SETTINGS.items():
                write_all(tables, root, options)  # first use, not counted
                results = [write_all(tables, root, options) for _ in range(args.rounds)]
                seconds = statistics.median(r[0] for r in results)
                print(f"  {setting:78}: {seconds * 1e3:7.2f} ms for the nine files, {results[0][1] / 1024:8.1f} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
