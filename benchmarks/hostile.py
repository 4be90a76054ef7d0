"""Benchmark: the figures the README gives for hostile input, measured.

1. **A YAML alias bomb.** ``release.yaml`` whose threshold is a list of 9 lists nested 9 deep by aliases
   (435,848,049 strings once expanded, 550 bytes on disk) and its 9⁶ sibling: the time ``load_release``
   takes to refuse it, the length of the error line, and the peak memory Python allocated meanwhile
   (``tracemalloc``).
2. **A huge artifact.** A sparse 8 GiB file as the artifact of an outcome receipt: the time
   ``observe_file`` takes to refuse it (over ``max_artifact_bytes``), next to what reading and hashing
   it would take — SHA-256 of a 256 MiB file read the same way (1 MiB blocks), scaled to 8 GiB.
3. **A call that holds the GIL.** The backtracking expression ``(a+)+$`` on ``"a" * n + "b"`` that
   ``tests/_run/test_isolation.py`` uses: how long one match takes at n = 22 and n = 26, i.e. how late a
   thread timeout can fire (the waiting thread gets the GIL back only when the match ends).

Run::

    python benchmarks/hostile.py            # 5 rounds each; the 256 MiB file is written once (temporary)
    python benchmarks/hostile.py --smoke    # 1 round, a 16 MiB file, n = 18 and 20 (CI)
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import re
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _hostile_files import alias_bomb  # noqa: E402

from oloproof_nb._config.release import load_release  # noqa: E402
from oloproof_nb._core.receipts import OutcomeContract  # noqa: E402
from oloproof_nb._run.observe import UnobservableArtifact, observe_file  # noqa: E402
from oloproof_nb.errors import OloproofError  # noqa: E402


def bomb(folder: Path, width: int, depth: int, rounds: int) -> None:
    path = folder / f"release-{width}-{depth}.yaml"
    path.write_text(alias_bomb(width, depth), encoding="utf-8")
    times, peaks, line = [], [], ""
    try:  # untimed: the first call imports YAML and builds the release model
        load_release(path)
    except OloproofError:
        pass
    for _ in range(rounds):
        tracemalloc.start()
        started = time.perf_counter()
        try:
            load_release(path)
        except OloproofError as exc:
            line = str(exc)
        else:  # pragma: no cover - a bomb must be refused
            sys.exit(f"{path}: the alias bomb was accepted")
        times.append(time.perf_counter() - started)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    ms = statistics.median(times) * 1e3
    print(f"alias bomb {width}^{depth} ({path.stat().st_size} bytes): refused in {ms:.1f} ms (median of {rounds}), "
          f"error line {len(line)} characters ({len(line) - len(str(path))} beyond the path), "
          f"peak {max(peaks) / 2**20:.2f} MiB")


def artifact(folder: Path, sample_mib: int, rounds: int) -> None:
    huge = folder / "huge.bin"
    with huge.open("wb") as fh:
        fh.truncate(8 << 30)  # sparse: takes no disk
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        try:
            observe_file(OutcomeContract(artifact_id="a"), huge)
        except UnobservableArtifact as exc:
            reason = exc.reason
        else:  # pragma: no cover
            sys.exit("the 8 GiB artifact was read")
        times.append(time.perf_counter() - started)
    huge.unlink()
    sample = folder / "sample.bin"
    block = os.urandom(1 << 20)
    with sample.open("wb") as fh:
        for _ in range(sample_mib):
            fh.write(block)
    rates = []
    for _ in range(rounds):
        started = time.perf_counter()
        digest = hashlib.sha256()
        with sample.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
        rates.append(sample_mib / (time.perf_counter() - started))
    sample.unlink()
    rate = statistics.median(rates)
    print(f"8 GiB artifact: refused in {statistics.median(times) * 1e3:.2f} ms ({reason}); reading and hashing "
          f"{sample_mib} MiB runs at {rate:.0f} MiB/s, so 8 GiB would take about {8192 / rate:.0f} s")


def gil(lengths: tuple[int, int], rounds: int) -> None:
    pattern = re.compile(r"(a+)+$")
    for n in lengths:
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            pattern.match("a" * n + "b")
            times.append(time.perf_counter() - started)
        print(f"(a+)+$ on 'a' * {n} + 'b': {statistics.median(times):.3f} s a match (median of {rounds}); "
              "a thread timeout cannot fire before it ends")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="small sizes, one round (CI)")
    args = parser.parse_args()
    print(f"platform: {platform.platform()} | cpus: {os.cpu_count()} | python {platform.python_version()}")
    rounds = 1 if args.smoke else 5
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bomb(folder, 9, 9, rounds)
        bomb(folder, 9, 6, rounds)
        artifact(folder, 16 if args.smoke else 256, rounds)
    gil((18, 20) if args.smoke else (22, 26), 1 if args.smoke else 3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
