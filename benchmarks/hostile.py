r"""Benchmark: the figures the README gives for hostile input, measured.

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
4. **Long lists matched without order.** One ``state_matches`` check of a ``transactions`` list of N
   elements (N = 1,000, 4,000, 16,000) on the main thread, where no timeout applies: ``unordered`` and
   ``by_key`` lists whose elements lack the key field, a failing check with a ``tolerance``, a timestamp left
   out by ``ignore``, expected elements that name a few fields (``subset``), ``changes`` mode. Side by side:
   the matching as it is, and the matching as it was (``fits`` asked of every pair, the
   ``reference_hopcroft_karp`` of ``tests/_core/test_compare_anchors.py``), the latter only where it ends
   within ``--before-max`` elements (it grows with N²).
5. **An ``honest_answers`` regex that backtracks.** ``^(\w+\s?)*(failed|declined)``, which
   ``load_suite`` now refuses, searched in prefixes of the faulted answer of the suite that found it (28, 32 and
   36 characters; none matches), next to the rewrite the refusal suggests, ``^(\w+\s)*(failed|declined)``, on the
   whole answer: the time one search takes, and how much each more letter multiplies it, hence what the whole
   92-character answer would take (extrapolated: it was not waited for).
6. **A generated module over the import-scan cap.** A module file of 4.9 MB (a table: a dict literal of
   tuples) beside one of the cap, 1 MiB: the time parsing each takes (``ast.parse``, what reading its import
   statements costs, so a suite's code fingerprint would pay it), and the time ``_top_imports`` takes to pass
   over the bigger one with its warning.

Run::

    python benchmarks/hostile.py            # 5 rounds each; the 256 MiB file is written once (temporary)
    python benchmarks/hostile.py --smoke    # 1 round, a 16 MiB file, n = 18 and 20, N = 100 and 200,
                                            # prefixes of 20 and 24 characters, modules of 0.1 and
                                            # 0.05 MB (CI)
"""

from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import os
import platform
import random
import re
import statistics
import sys
import tempfile
import time
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _hostile_files import alias_bomb  # noqa: E402

import oloproof_nb._core.compare as compare  # noqa: E402
import oloproof_nb._core.lists as matching  # noqa: E402
from oloproof_nb._config.imports import MAX_IMPORT_SCAN_BYTES, _top_imports  # noqa: E402
from oloproof_nb._config.release import load_release  # noqa: E402
from oloproof_nb._core.receipts import OutcomeContract  # noqa: E402
from oloproof_nb._run.observe import UnobservableArtifact, observe_file  # noqa: E402
from oloproof_nb.errors import OloproofError  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "_core"))
from test_compare_anchors import reference_hopcroft_karp  # noqa: E402


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


#: The faulted answer of the suite that found the backtracking regex: an ordinary sentence that does not say
#: "failed" or "declined".
FAULTED_ANSWER = "Your refund has been processed and the money will arrive within three to five business days!"


def honest_regex(lengths: tuple[int, ...], rounds: int) -> None:
    refused, rewrite = re.compile(r"^(\w+\s?)*(failed|declined)"), re.compile(r"^(\w+\s)*(failed|declined)")
    letters, seconds = [], []
    for n in lengths:
        text = FAULTED_ANSWER[:n]
        took = statistics.median(_seconds(functools.partial(refused.search, text)) for _ in range(rounds))
        letters.append(sum(c.isalnum() for c in text))
        seconds.append(took)
        print(f"{refused.pattern} on the answer's first {n} characters ({letters[-1]} letters): {took:.3f} s a "
              f"search (median of {rounds})")
    per_letter = (seconds[-1] / seconds[0]) ** (1 / (letters[-1] - letters[0]))
    whole = sum(c.isalnum() for c in FAULTED_ANSWER)
    years = seconds[-1] * per_letter ** (whole - letters[-1]) / (365.25 * 86400)
    took = statistics.median(_seconds(functools.partial(rewrite.search, FAULTED_ANSWER)) for _ in range(rounds))
    print(f"each more letter multiplies it by {per_letter:.2f}: the whole {len(FAULTED_ANSWER)}-character answer "
          f"({whole} letters) would take about {years:.1e} years (extrapolated); {rewrite.pattern} (accepted) on the "
          f"whole answer: {took * 1e6:.1f} µs a search")


def _table_module(size: int) -> str:
    """A generated module of about ``size`` bytes: one import, then a dict literal of tuples (a table)."""
    lines, total, i = ["from rules import LIMIT\n", "TABLE = {\n"], 0, 0
    while total < size - 40:
        lines.append(f"    'key_{i:07d}': ({i}, {i * 0.5}, 'value number {i}'),\n")
        total, i = total + len(lines[-1]), i + 1
    return "".join([*lines, "}\n"])


def scan_cap(folder: Path, big_mb: float, rounds: int) -> None:
    big = _table_module(int(big_mb * 1e6))
    for source in (big, _table_module(min(MAX_IMPORT_SCAN_BYTES, len(big) // 2))):
        took = statistics.median(_seconds(functools.partial(ast.parse, source)) for _ in range(rounds))
        print(f"generated module of {len(source.encode()) / 1e6:.2f} MB: parsed in {took:.3f} s (median of {rounds})")
    path = folder / "table.py"
    path.write_text(big, encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        took = _seconds(functools.partial(_top_imports, path, "bench", ""))
    parsed = "not parsed" if path.stat().st_size > MAX_IMPORT_SCAN_BYTES else "parsed"
    print(f"_top_imports of the {path.stat().st_size / 1e6:.2f} MB module: {took * 1e3:.1f} ms ({parsed}, "
          f"{len(caught)} warning(s))")


def _transactions(n: int) -> list[dict[str, object]]:
    rng = random.Random(n)
    return [{"memo": f"payment {i}", "amount": round(rng.uniform(1, 500), 2), "at": f"2026-12-01T10:{i % 60:02d}"}
            for i in range(n)]


def _checks(n: int) -> dict[str, Callable[[], list[compare.Row]]]:
    """One ``state_matches`` call per shape (the check of one case), on a list of ``n`` elements."""
    act = _transactions(n)
    shuffled = [dict(e) for e in act]
    random.Random(0).shuffle(shuffled)
    off = [dict(e) for e in shuffled]
    off[0]["amount"] = -1.0  # one amount wrong: a failing check
    stamped = [dict(e, at="2026-12-02T09:00") for e in shuffled]  # every timestamp differs: ignored
    named = [{"memo": e["memo"], "amount": e["amount"]} for e in shuffled]  # the fields the case names
    unordered, by_ref = {"t": matching.ListMatch("unordered")}, {"t": matching.ListMatch("by_key", "ref")}
    added = {"memo": "refund", "amount": 9.99, "at": "2026-12-02T09:00"}
    return {
        "whole, unordered, equal (shuffled)": lambda: compare.compare_state({"t": shuffled}, {"t": act}, "whole",
                                                                            lists=unordered),
        "whole, unordered, tolerance 0.01, one amount off": lambda: compare.compare_state(
            {"t": off}, {"t": act}, "whole", tolerance=0.01, lists=unordered),
        "whole, unordered, ignore t.*.at (every one differs)": lambda: compare.compare_state(
            {"t": stamped}, {"t": act}, "whole", lists=unordered, ignore=["t.*.at"]),
        "subset, by_key ref (no element has it), 2 of 3 fields": lambda: compare.compare_state(
            {"t": named}, {"t": act}, "subset", lists=by_ref),
        "changes, by_key ref (no element has it), one added": lambda: compare.compare_state(
            {"t": [{"memo": "refund", "amount": 9.99}]}, {"t": [*act, added]}, "changes", lists=by_ref,
            ignore=["t.*.at"], initial={"t": act}),
    }


def lists(sizes: tuple[int, ...], before_max: int, rounds: int) -> None:
    for n in sizes:
        for name, check in _checks(n).items():
            rows = check()  # untimed: the first call imports scipy
            now = statistics.median(_seconds(check) for _ in range(rounds))
            before = "not run (every pair)"
            if n <= before_max:
                kept = matching._hopcroft_karp
                matching._hopcroft_karp = reference_hopcroft_karp
                try:
                    started = time.perf_counter()
                    rows_before = check()
                    before = f"{time.perf_counter() - started:.3f} s"
                finally:
                    matching._hopcroft_karp = kept
                if repr(rows) != repr(rows_before):  # pragma: no cover - a correctness check of the benchmark
                    sys.exit(f"N = {n}, {name}: the rows differ from those of the matching over every pair")
            print(f"list of {n:,}, {name}: {now:.3f} s a check (median of {rounds}); as it was: {before}")


def _seconds(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="small sizes, one round (CI)")
    parser.add_argument("--before-max", type=int, default=1000,
                        help="longest list also matched as before (over every pair: minutes at 4,000)")
    args = parser.parse_args()
    print(f"platform: {platform.platform()} | cpus: {os.cpu_count()} | python {platform.python_version()}")
    rounds = 1 if args.smoke else 5
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bomb(folder, 9, 9, rounds)
        bomb(folder, 9, 6, rounds)
        artifact(folder, 16 if args.smoke else 256, rounds)
        scan_cap(folder, 0.1 if args.smoke else 4.9, 1 if args.smoke else 3)
    gil((18, 20) if args.smoke else (22, 26), 1 if args.smoke else 3)
    honest_regex((20, 24) if args.smoke else (28, 32, 36), 1 if args.smoke else 3)
    lists((100, 200) if args.smoke else (1000, 4000, 16000), 100 if args.smoke else args.before_max,
          1 if args.smoke else 3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
