"""Every benchmark script runs end to end at smoke size (CI); no timing is asserted.

The full benchmarks and their recorded figures are in benchmarks/README.md. The Inspect AI half of
``benchmarks/runner.py`` runs only where ``inspect_ai`` is importable (extra ``bench``); elsewhere the
script says it skipped it.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a developer loop skips these: pytest -m 'not slow'

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
HAS_INSPECT = importlib.util.find_spec("inspect_ai") is not None


def smoke(script: str, *args: str, hide: Path | None = None) -> str:
    """Run a benchmark at smoke size; its standard output. ``hide``: a folder put first on ``PYTHONPATH``."""
    env = {**os.environ, "MPLBACKEND": "Agg"}
    if hide is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(hide), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, str(BENCHMARKS / script), "--smoke", *args], capture_output=True,
                          text=True, timeout=600, env=env, cwd=BENCHMARKS.parent)
    assert proc.returncode == 0, f"{script} exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def test_bootstrap_smoke() -> None:
    out = smoke("bootstrap.py")
    assert "speedup" in out


def test_hostile_smoke() -> None:
    out = smoke("hostile.py")
    bombs = [line for line in out.splitlines() if line.startswith("alias bomb")]
    beyond = [int(line.split(" beyond the path")[0].rsplit("(", 1)[1]) for line in bombs]
    assert len(bombs) == 2 and all(0 < n <= 200 for n in beyond), bombs  # one short line, as the README says
    assert "more than max_artifact_bytes=1073741824" in out and "a thread timeout cannot fire" in out
    assert "each more letter multiplies it by" in out and "(accepted) on the whole answer" in out
    assert out.count("generated module of") == 2 and "_top_imports of the" in out


def test_suite_load_smoke() -> None:
    out = smoke("suite_load.py")
    assert "the duplicate-case check adds" in out and "cases repeating another: 0" in out
    assert "each field transform adds" in out and "copies repeating a case: 0" in out


def test_cluster_types_smoke() -> None:
    out = smoke("cluster_types.py")
    assert "failure types" in out and "interval [" in out and "DIFFERENT" not in out
    out = smoke("cluster_types.py", "--reduced")
    assert "scaled rows" in out and "monotone [" in out and "NARROWER" not in out
    out = smoke("cluster_types.py", "--layout", "1000,3,0.9")
    assert "1,000 clusters of 1–3 rows, p=0.9: " in out and "interval [" in out and "200 clusters" not in out


def test_runner_smoke_oloproof() -> None:
    out = smoke("runner.py", "--no-inspect", "--examples", "--copy-parts")
    assert "(a) oloproof_nb" in out and "cases/s" in out and "FAIL" not in out
    assert "imports the calls cannot avoid" in out and "skipped (--no-inspect)" in out
    assert "stateful-agent (48 cases): copy" in out and "writing the nine Parquet files" in out
    assert "where the copy of 50 cases goes" in out and "records into rows" in out and "the nine files" in out
    assert "garbage collections of one run_suite" in out and "without a copy: " in out
    assert "the end of that run (the last record's add to the copy in place, wall)" in out
    # the live copy's CPU time in the run, which benchmarks/README's 5 Dec pass quotes (93.5 ms)
    assert "the CPU time of the copy's calls in the runner's thread: " in out and ", collector on)" in out
    assert "the same runs' wall time: with the copy (committed)" in out


@pytest.mark.skipif(not HAS_INSPECT, reason="inspect_ai is not installed (extra 'bench')")
def test_runner_smoke_side_by_side_with_inspect() -> None:
    out = smoke("runner.py")
    assert "(b) Inspect AI" in out and "ratio:" in out and "FAIL" not in out


def test_runner_skips_inspect_when_missing(tmp_path: Path) -> None:
    """Where inspect_ai is missing the script says it skipped it. It runs everywhere (before, it was skipped
    wherever inspect_ai is installed, which the test extra installs: CI never ran it): a stand-in package that
    fails to import, first on the path, hides the installed one."""
    stand_in = tmp_path / "inspect_ai"
    stand_in.mkdir()
    (stand_in / "__init__.py").write_text('raise ImportError("hidden by the test")\n', encoding="utf-8")
    out = smoke("runner.py", hide=tmp_path)
    assert "(a) oloproof_nb" in out and "FAIL" not in out
    assert "(b) Inspect AI  : skipped (inspect_ai is not installed: pip install -e '.[bench]')" in out


def test_parallel_smoke() -> None:
    out = smoke("parallel.py")
    assert "identical" in out and "DIFFERENT" not in out and "FAIL" not in out


def test_frames_smoke() -> None:
    out = smoke("frames.py")
    assert "load_run" in out and "memory growth" in out


def test_big_cases_smoke() -> None:
    out = smoke("big_cases.py")
    assert out.count('"peak_mb"') == 4 and "error" not in out and "FAIL" not in out


def test_states_smoke() -> None:
    out = smoke("states.py")
    assert "by content" in out and "equal" in out and "DIFFERENT" not in out


def test_states_tasks_are_distinct() -> None:
    """The 40 tasks whose folder README section 9 quotes hold 40 distinct contents (by hand, each case's fields as
    JSON): half of them repeating another recorded the same states again, which storing by content made free, and
    put 25.5× where distinct tasks give less."""
    import json

    spec = importlib.util.spec_from_file_location("states_benchmark", BENCHMARKS / "states.py")
    assert spec is not None and spec.loader is not None
    states = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(states)
    tasks = states.cases(40)
    contents = {json.dumps([c["input"], c["initial_state"], c["expected"]], sort_keys=True) for c in tasks}
    assert len(tasks) == 40 and len(contents) == 40
    bills = {c["input"]["message"] for c in tasks if c["input"]["message"].startswith("pay:")}
    assert len(bills) == 16


def test_coldstart_smoke() -> None:
    out = smoke("coldstart.py")
    assert out.count("beyond pandas: median") == 2 and "first use of every name" in out


def test_signal_windows_smoke() -> None:
    out = smoke("signal_windows.py")
    if not Path("/proc/self/status").exists():  # the dispositions are read from /proc (Linux)
        assert "skipped: needs /proc" in out
        return
    assert out.count("start-up, to the SIGTERM handler") == 3 and out.count("of which the handler gone") == 3
    assert out.count("(as exit 2)") == 2 and "FAIL" not in out
    # the console script ends with its handler installed (python -m still tears its modules down without one)
    assert out.count("none (the handler stays to the exit)") == 2 and out.count("never sent, no such poll") == 2


def test_handoff_smoke() -> None:
    out = smoke("handoff.py")
    assert out.count("through the helper thread") == 4 and "hand-off" in out


def test_codecs_smoke() -> None:
    out = smoke("codecs.py")
    assert out.count("ms for the nine files") == 8 and "stateful-agent (48 cases)" in out  # 4 settings x 2 runs


def test_convert_smoke() -> None:
    out = smoke("convert.py")
    assert "500 cases, each with its own state" in out and "convert (process 1, this checkout)" in out and "MiB" in out
    assert "full garbage-collector passes" in out


@pytest.mark.skipif(not HAS_INSPECT, reason="inspect_ai is not installed (extra 'bench')")
def test_inspect_logs_smoke() -> None:
    out = smoke("inspect_logs.py")
    rows = [line.split() for line in out.splitlines() if line.strip() and line.split()[0].isdigit()]
    assert [row[0] for row in rows] == ["20", "80"] and "FAIL" not in out


def test_pooled_smoke() -> None:
    out = smoke("pooled.py")
    assert "first call" in out and "repeat a try another run of the pool holds" in out
