"""README section 8's CI recipe runs as a CI job would run it: both jobs, in a shell with no HOME,
``LANG=C``, ``TERM=dumb`` and ``NO_COLOR``, on paths with spaces, the baseline carried between them as a tarball.

The job's exit code is the gate's (0 PASS, 1 BLOCK, 2 an error), the report is written whatever the verdict, and the
comparison with the baseline is published beside it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parent.parent.parent / "README.md"
PERFECT = [{"id": f"p{i:02d}", "input": {"answer": f"done {i}"}, "initial_state": {},
            "expected": {"answer": f"done {i}"}} for i in range(10)]


def recipe() -> str:
    """The ```bash block that follows ``<!-- ci-recipe -->`` in the README."""
    text = README.read_text(encoding="utf-8")
    after = text.split("<!-- ci-recipe -->\n```bash\n", 1)[1]
    return after.split("\n```", 1)[0]


def ci_job(suite: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    work, artifacts = tmp_path / "ci work", tmp_path / "ci artifacts"
    work.mkdir()
    artifacts.mkdir()
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "LANG": "C", "TERM": "dumb", "NO_COLOR": "1",
           "SUITE": str(suite), "WORK": str(work), "ARTIFACTS": str(artifacts)}
    done = subprocess.run(["bash", "-c", recipe()], env=env, capture_output=True, text=True, timeout=600)
    return done, artifacts


@pytest.mark.slow
@pytest.mark.parametrize(("threshold", "code", "verdict"), [(0.5, 0, "PASS"), (0.99, 1, "BLOCK")])
def test_the_ci_recipe_exits_as_the_gate_and_publishes_the_report_and_the_comparison(
        make_suite: Any, tmp_path: Path, threshold: float, code: int, verdict: str) -> None:
    # 10 of 10 pass: the Clopper-Pearson lower bound is 0.025 ** (1 / 10) = 0.6915, above 0.5 and below 0.99
    suite = make_suite(PERFECT, evaluators=[{"type": "answer_matches"}], folder="my suite",
                       release={"criteria": {"answer_matches": threshold}})
    done, artifacts = ci_job(suite, tmp_path)
    assert done.returncode == code, done.stderr
    assert (artifacts / "report.html").stat().st_size > 0
    assert (artifacts / "gate.txt").read_text(encoding="utf-8").splitlines()[-1].startswith(
        f"gate: {verdict} — exit {code}: ")
    # 10 unclustered cases are fewer than min_clusters: no comparison can say NO_REGRESSION, and it decides nothing
    assert (artifacts / "compare.txt").read_text(encoding="utf-8").splitlines()[-1].startswith(
        "compare: INSUFFICIENT_EVIDENCE — exit 1: ")
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_the_ci_recipe_exits_2_on_a_suite_that_cannot_load_and_keeps_no_baseline(make_suite: Any,
                                                                                  tmp_path: Path) -> None:
    suite = make_suite(PERFECT, evaluators=[{"type": "answer_matches"}], folder="my suite")
    (suite / "oloproof.yaml").write_text("name: broken\nsystem: [\n", encoding="utf-8")
    done, artifacts = ci_job(suite, tmp_path)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"oloproof: error: {suite / 'oloproof.yaml'}: "), line
    assert list(artifacts.iterdir()) == []
