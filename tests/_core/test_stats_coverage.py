"""A seeded smoke version of the coverage simulation (the full table: benchmarks/coverage.md).

The full run (`python tests/reference/coverage_simulation.py --reps 2000 --out benchmarks/coverage.md`)
covers G ∈ {20, 30, 50, 100} × ρ ∈ {0.1, 0.3, 0.5} × p ∈ {0.8, 0.9, 0.95}, the unequal-size design and
failures concentrated in few clusters. Here a few cells run with 300 repetitions: with that many the Monte
Carlo SE of a 2.5% miss rate is about 0.009, so the bounds leave room for noise but not for a badly
calibrated method (the old CR1 cluster_t, uncapped, put its bound above the truth 4.8% of the time in the
few-failing-clusters cells; a raw-scale ±t interval 12% at G = 20).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).parents[1] / "reference" / "coverage_simulation.py"
_spec = importlib.util.spec_from_file_location("coverage_simulation", _PATH)
assert _spec is not None and _spec.loader is not None
coverage_simulation = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(coverage_simulation)


@pytest.mark.parametrize(("design", "g", "rho", "p", "bound"), [
    ("betabin", 20, 0.5, 0.9, 0.03),  # the key cell of the issue: ≤ 3%
    ("betabin", 50, 0.3, 0.9, 0.06),
    ("concentrated", 50, 0.1, 0.95, 0.06),
    ("unequal", 20, 0.3, 0.9, 0.03),
])
def test_default_method_lower_bound_rarely_above_the_truth(design, g, rho, p, bound):
    row = coverage_simulation.cell(design, g, rho, p, "cluster_t", reps=300, seed=7)
    assert row["lower_miss"] <= bound
    assert row["coverage"] >= 0.9


def test_simulation_is_deterministic():
    a = coverage_simulation.cell("betabin", 20, 0.3, 0.9, "cluster_bootstrap", reps=10, seed=1)
    b = coverage_simulation.cell("betabin", 20, 0.3, 0.9, "cluster_bootstrap", reps=10, seed=1)
    assert a == b


def test_hard_cells_smoke_prints_its_table():
    """tests/reference/hard_cells.py (the hard-cell table of benchmarks/coverage.md) runs at smoke size.

    Only that it runs and prints one row per cell: 20 repetitions say nothing about coverage.
    """
    script = _PATH.parent / "hard_cells.py"
    proc = subprocess.run([sys.executable, str(script), "--smoke"], capture_output=True, text=True, timeout=300,
                          cwd=_PATH.parents[2])
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("| design | G | tries | rho | p | target | mean_m | lower_miss | se |")
    rows = [line for line in lines[2:] if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows] == ["| near1", "| lognormal10", "| epochs3", "| pass^3", "| pass^3"]
    assert "5 cells, 20 repetitions each" in proc.stdout
