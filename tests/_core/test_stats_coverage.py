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
sys.path.insert(0, str(_PATH.parent))  # hard_cells imports coverage_simulation's draw by name
_hard_spec = importlib.util.spec_from_file_location("hard_cells", _PATH.parent / "hard_cells.py")
assert _hard_spec is not None and _hard_spec.loader is not None
hard_cells = importlib.util.module_from_spec(_hard_spec)
_hard_spec.loader.exec_module(hard_cells)


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


def test_epochs_of_cases_drawn_without_a_kind_that_never_passes_rarely_pass_above_the_truth() -> None:
    """20 cases × 10 epochs; a case never passes with probability 0.1, else passes each try with
    probability 0.9 (rate 0.81). In the 0.9^20 = 12% of samples that drew no such case, the CR2 interval saw
    only the tries: its lower bound was above 0.81 in 10.67% of these 300 samples on the code before (11.55% in
    hard_cells.py's 2,000, seed 2025). Capped at (α/2)^(1/n_min)·p̂ it is at most the nominal 2.5% plus noise."""
    row = hard_cells.cell("mixture0.1", 20, 0.0, 0.9, 10, 10, reps=300, seed=7)
    assert row["target"] == pytest.approx(0.81)
    assert row["lower_miss"] <= 0.03


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
    assert [row.split(" | ")[0] for row in rows] == ["| near1", "| lognormal10", "| epochs3", "| pass^3", "| pass^3",
                                                     "| mixture0.1"]
    assert "6 cells, 20 repetitions each" in proc.stdout


def test_hard_cells_raw_bound_is_the_matrix_reference_and_never_below_the_gates():
    """``--raw`` backs README §6's "the unmodified bound misses as often": its bound is the CR2 logit-t bound of
    tests/_cr2_reference.py (hat matrix, scipy's t quantile), and the gate's bound never exceeds it."""
    import numpy as np

    sys.path.insert(0, str(_PATH.parents[1]))
    from _cr2_reference import raw_logit_t

    import oloproof_nb as op

    rng = np.random.default_rng(11)
    checked = 0
    for design in ("lognormal3", "geometric5"):
        for _ in range(10):
            m = hard_cells._sizes(rng, design, 25)
            k = rng.binomial(m, rng.beta(*hard_cells._beta(0.9, 0.5), 25))
            gate_low = op.rate_interval_from_sums(k, m, method="cluster_t").low
            raw = hard_cells.raw_low(k, m, gate_low)
            if 0 < k.sum() < m.sum():
                assert raw == pytest.approx(raw_logit_t(k, m), abs=1e-9)
                checked += 1
            assert gate_low <= raw + 1e-12
    assert checked >= 15


def _pct(x: float) -> str:
    """A share as the README writes it: 0.0325 is 3.25%, 0.05 is 5%."""
    return f"{100 * x:.2f}".rstrip("0").rstrip(".") + "%"


def _hard_cells_table() -> list[dict[str, str]]:
    text = (_PATH.parents[2] / "benchmarks" / "coverage.md").read_text(encoding="utf-8").split("## Hard cells")[1]
    lines = [line.strip("|").split("|") for line in text.splitlines() if line.startswith("| ")]
    header = [c.strip() for c in lines[0]]
    return [dict(zip(header, (c.strip().rstrip(" *") for c in line), strict=True)) for line in lines[1:]]


def test_readme_hard_cell_figures_are_the_tables():
    """README's figures on the hard cells (section 6 and "What it cannot tell you") are the maxima of the hard-cell
    table in benchmarks/coverage.md, which hard_cells.py makes: a table made again must change the prose with it."""
    rows = _hard_cells_table()
    assert len(rows) == 296

    def worst(keep) -> str:  # the largest lower_miss of the rows kept, as the README writes it (5.6%, 3.95%)
        return _pct(max(float(r["lower_miss"]) for r in rows if keep(r)))

    def long_tail(g: int):
        return lambda r: r["design"].startswith(("lognormal", "geometric")) and r["rho"] == "0.5" and int(r["G"]) == g

    readme = " ".join((_PATH.parents[2] / "README.md").read_text(encoding="utf-8").split())
    assert f"no cell misses more than {worst(lambda r: r['G'] == '20')}" in readme
    assert f"rates of 0.97–0.99 miss {worst(lambda r: r['design'] == 'near1' and int(r['G']) <= 100)} up to G = 100" \
        in readme
    assert f"at most {worst(lambda r: r['design'].startswith('epochs'))} up to G = 200" in readme
    binary = worst(lambda r: r["design"].startswith("pass^") and r["tries"] == r["design"][5:])
    fractional = worst(lambda r: r["design"].startswith("pass^") and r["tries"] != r["design"][5:])
    assert f"`pass^k` at most {binary} (with more tries than k, fractional values: {fractional})" in readme
    assert (f"up to **{worst(long_tail(50))}** at G = 50 (p = 0.8), **{worst(long_tail(100))}** at G = 100 "
            f"(geometric sizes, p = 0.8) and **{worst(long_tail(200))}** at G = 200") in readme

    def mixture(g: int):
        return lambda r: r["design"].startswith("mixture") and int(r["G"]) == g

    assert (f"now at most {worst(mixture(20))} at G = 20, {worst(mixture(30))} at G = 30, {worst(mixture(50))} at "
            f"G = 50 and {worst(mixture(100))} at G = 100") in readme
    assert f"a few of them in the sample, up to **{worst(mixture(100))}** at G = 100" in readme
    assert "no cell of the 296 is above 3.25% by more than 2 Monte-Carlo SE" in readme
    assert all(float(r["lower_miss"]) - 0.0325 <= 2 * float(r["se"]) for r in rows)
    # sizes of little spread or weakly correlated clusters: the hard cells so made, and the main grid (1-6 rows a
    # cluster, G up to 100); cluster_t's cells only: a pass^k cell of k tries (0/1 values) gets Clopper–Pearson on
    # its cases, and its 2.85% was given as cluster_t's
    grid = max(float(r["lower_miss"]) for r in _main_table() if r["method"] == "cluster_t")
    hard = max(float(r["lower_miss"]) for r in rows if not r["design"].startswith("mixture") and int(r["G"]) <= 200
               and (r["rho"] == "0.1" or not r["design"].startswith(("lognormal", "geometric")))
               and not (r["design"].startswith("pass^") and r["tries"] == r["design"][5:]))
    small = _pct(max(grid, hard))
    near1 = worst(lambda r: r["design"] == "near1")
    assert f"up to {worst(lambda r: True)} of the time (nominal 2.5%) when a kind of case" in readme
    assert f"and up to {worst(long_tail(200))} when cluster sizes have" in readme
    assert f"it stays at or below {small} up to 200 clusters and {near1} in the worst cell at 400" in readme


def _main_table() -> list[dict[str, str]]:
    """The first table of benchmarks/coverage.md (coverage_simulation.py's): its rows up to the first blank line."""
    text = (_PATH.parents[2] / "benchmarks" / "coverage.md").read_text(encoding="utf-8").split("\n| design")[1]
    text = "| design" + text.split("\n\n")[0]
    lines = [line.strip("|").split("|") for line in text.splitlines() if line.startswith("| ")]
    header = [c.strip() for c in lines[0]]
    return [dict(zip(header, (c.strip() for c in line), strict=True)) for line in lines[1:]]


def test_the_bootstraps_documented_misses_are_the_tables():
    """The figures the docstrings give for the cluster bootstrap (``cluster_bootstrap``'s Notes, the comment on
    ``BOOTSTRAP_MIN_CLUSTERS``, the gate's module docstring) are the lower_miss maxima per G of the simulated table
    (stated coverage, pinned by no test before): a table made again must change the prose with it."""
    import inspect

    import oloproof_nb._analysis.gate as gate_module
    import oloproof_nb._core.bootstrap as bootstrap_module
    from oloproof_nb._core.stats import cluster_bootstrap

    rows = [r for r in _main_table() if r["method"] == "cluster_bootstrap"]
    worst = {g: max(float(r["lower_miss"]) for r in rows if int(r["G"]) == g) for g in {int(r["G"]) for r in rows}}
    assert sorted(worst) == [20, 30, 50, 100, 200]
    assert all(worst[g] > 0.03 for g in (30, 50, 100, 200)) and worst[20] <= 0.03  # "more than 3% … from 30 to 200"

    def pct(x: float) -> str:
        return f"{100 * x:.2f}".rstrip("0").rstrip(".") + "%"

    top = max(worst.values())
    notes = " ".join((cluster_bootstrap.__doc__ or "").split())
    assert f"every G simulated from 30 to 200 (up to {pct(top)}; at G = 20 at most {pct(worst[20])};" in notes
    comment = " ".join(inspect.getsource(bootstrap_module).replace("#:", " ").split())
    assert (f"every G from 30 to 200 (up to {pct(worst[50])} at G = 50 and {pct(worst[100])} at G = 100; at G = 20 "
            f"at most {pct(worst[20])})") in comment
    assert f"from 30 to 200 (at G = 20 at most {pct(worst[20])})" in " ".join((gate_module.__doc__ or "").split())


def test_readme_main_grid_figures_are_the_table():
    """README §6's figures on the main grid and on the cap's price are benchmarks/coverage.md's `cluster_t` rows
    (checked by hand only before): the key cell, the worst cell, and the median ci_low and width the cap left."""
    readme = " ".join((_PATH.parents[2] / "README.md").read_text(encoding="utf-8").split())
    grid = [r for r in _main_table() if r["method"] == "cluster_t"]
    key = {(r["design"], r["G"], r["rho"], r["p"]): r for r in grid}

    def cell(g: str, rho: str, p: str) -> dict[str, str]:
        return key["betabin", g, rho, p]

    k = cell("20", "0.5", "0.9")
    assert (f"rate **{_pct(float(k['lower_miss']))}** of the time at G = 20, ρ = 0.5, p = 0.9 (nominal 2.5%; "
            f"coverage {float(k['coverage']):.3f}, median width {float(k['median_width']):.2f})").replace(
        "**0%**", "**0.0%**") in readme
    assert f"at most **{_pct(max(float(r['lower_miss']) for r in grid))}** in every cell of G" in readme
    price = [f"to {float(cell(g, '0.1', p)['median_low']):.3f} at G = {g}" for g, p in (("20", "0.9"), ("50", "0.95"))]
    assert all(text in readme for text in price), price
    assert f"to {float(cell('100', '0.1', '0.95')['median_low']):.3f} at G = 100" in readme
    epochs = [r for r in _hard_cells_table()
              if (r["design"], r["G"], r["rho"], r["p"]) == ("epochs5", "20", "0.1", "0.9")]
    assert len(epochs) == 1 and f"width grows from 0.155 to {float(epochs[0]['median_width']):.3f} at G = 20" in readme


def test_hard_cells_mixture_draws_the_share_of_cases_that_never_pass() -> None:
    """``mixture0.1``: a share 0.1 of the cases never passes; the others pass 10 tries at 0.9, so a case of theirs
    passes none with probability 0.1^10 (by hand). Over 50 samples of 20 cases the cases with no pass are near
    10% (± 4 standard errors of 1,000 draws: 0.06 to 0.14), each case is 10 tries, and the row says so."""
    import numpy as np

    seen: list[np.ndarray] = []
    sizes: set[int] = set()

    class Spy:
        @staticmethod
        def rate_interval_from_sums(k: np.ndarray, m: np.ndarray, method: str):  # noqa: ANN205
            import oloproof_nb as op

            seen.append(k)
            sizes.update(m.tolist())
            return op.rate_interval_from_sums(k, m, method=method)

    rng = np.random.default_rng(3)
    real = hard_cells.op
    hard_cells.op = Spy
    try:
        for _ in range(50):
            hard_cells.interval(rng, "mixture0.1", 20, 0.9, 0.0, 10, 10)
    finally:
        hard_cells.op = real
    assert 0.06 <= float(np.mean(np.concatenate(seen) == 0)) <= 0.14
    assert sizes == {10}
    assert hard_cells.cell("mixture0.1", 20, 0.0, 0.9, 10, 10, reps=5, seed=1)["tries"] == 10


def test_coverage_simulation_method_runs_only_that_methods_cells_and_says_so(tmp_path: Path) -> None:
    """``--method cluster_bootstrap`` writes only the bootstrap's rows, and the command line it was made by names
    the option, so the table can be made again from its own header."""
    out = tmp_path / "coverage.md"
    proc = subprocess.run([sys.executable, str(_PATH), "--reps", "2", "--method", "cluster_bootstrap", "--workers", "1",
                           "--out", str(out)], capture_output=True, text=True, timeout=300, cwd=_PATH.parents[2])
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text(encoding="utf-8")
    methods = {line.split(" | ")[1] for line in text.splitlines() if line.startswith("| betabin")}
    assert methods == {"cluster_bootstrap"}
    assert "coverage_simulation.py --reps 2 --seed 2024 --method cluster_bootstrap`" in text


def test_coverage_simulation_g_runs_the_cells_below_min_clusters_and_says_so(tmp_path: Path) -> None:
    """``--G 5`` runs only the ``cluster_t`` cells of ``betabin`` (3 ρ × 3 p) and ``concentrated`` (2 π × 2 p) at
    5 clusters, with the all-pass bound of 5 clusters, 0.025^(1/5) = 0.4782 (by hand: Clopper–Pearson of 5 of 5),
    and its command line names the option; ``--p 0.5`` keeps no ``concentrated`` cell (π ≤ 0.2 < 1 − p); ``--G 1``
    is refused in one line, exit 2."""
    def run(*extra: str) -> tuple[subprocess.CompletedProcess, str]:
        out = tmp_path / "g.md"
        out.unlink(missing_ok=True)
        proc = subprocess.run([sys.executable, str(_PATH), "--reps", "2", "--workers", "1", "--out", str(out), *extra],
                              capture_output=True, text=True, timeout=300, cwd=_PATH.parents[2])
        return proc, out.read_text(encoding="utf-8") if out.exists() else ""

    proc, text = run("--G", "5")
    assert proc.returncode == 0, proc.stderr[-3000:]
    cells = [line.split(" | ")[:5] for line in text.splitlines() if line.startswith(("| betabin", "| concentrated"))]
    assert len(cells) == 9 + 4 and {c[2] for c in cells} == {"5"} and {c[1] for c in cells} == {"cluster_t"}
    assert sum(c[0] == "| concentrated" for c in cells) == 4
    assert f"| 5 | {0.025 ** (1 / 5):.4f} | {0.025 ** (1 / 5):.4f} |" in text and "| 20 |" not in text
    assert "coverage_simulation.py --reps 2 --seed 2024 --G 5`" in text
    proc, text = run("--G", "8", "5", "--p", "0.5")
    assert proc.returncode == 0, proc.stderr[-3000:]
    cells = [line.split(" | ")[:5] for line in text.splitlines() if line.startswith(("| betabin", "| concentrated"))]
    assert len(cells) == 2 * 3 and {c[0] for c in cells} == {"| betabin"} and {c[4] for c in cells} == {"0.5"}
    assert "--G 5 8 --p 0.5`" in text
    proc, text = run("--G", "1")
    assert proc.returncode == 2 and text == ""
    assert proc.stderr.splitlines()[-1].endswith("--G takes numbers of clusters of at least 2, not 1")


def test_readme_figures_below_min_clusters_are_the_tables() -> None:
    """README §1's sentence on lowering ``min_clusters`` gives the per-G worst lower_miss and the median widths of
    benchmarks/coverage.md's tables at G = 5–15, and its all-pass bounds are 0.025^(1/G) (by hand): a
    table made again must change the sentence with it."""
    import statistics

    text = (_PATH.parents[2] / "benchmarks" / "coverage.md").read_text(encoding="utf-8")
    section = text.split("## Below the default `min_clusters`")[1].split("\n## ")[0]
    header = ("design", "method", "G", "rho", "p", "coverage", "lower_miss", "upper_miss", "median_width", "median_low")
    rows = [dict(zip(header, (c.strip() for c in line.strip("|").split("|")), strict=True))
            for line in section.splitlines() if line.startswith(("| betabin", "| concentrated"))]
    grid = [r for r in rows if float(r["p"]) >= 0.8]
    low = [r for r in rows if float(r["p"]) < 0.8]
    gs = (5, 8, 10, 12, 15)
    assert len(grid) == 13 * len(gs) and len(low) == 9 * len(gs) and all(r["method"] == "cluster_t" for r in rows)
    assert max(float(r["lower_miss"]) for r in grid) == 0 and all(float(r["p"]) > 0.025 ** (1 / 15) for r in grid)
    readme = " ".join((_PATH.parents[2] / "README.md").read_text(encoding="utf-8").split())
    worst = ", ".join(_pct(max(float(r["lower_miss"]) for r in low if r["G"] == str(g))) for g in gs[:-1])
    last = _pct(max(float(r["lower_miss"]) for r in low if r["G"] == "15"))
    assert "G = 5–15, true rates 0.3–0.7" in readme  # the sentence reworded, the figures kept
    assert f"at most {worst} and {last} of the time at G = 5, 8, 10, 12 and 15 (nominal 2.5%)" in readme
    assert "0.478 at G = 5 and 0.782 at G = 15" in readme and f"{0.025 ** (1 / 5):.3f}" == "0.478"
    assert f"{0.025 ** (1 / 15):.3f}" == "0.782"

    def width(g: int, cells: list[dict[str, str]]) -> str:
        return f"{statistics.median(float(r['median_width']) for r in cells if r['G'] == str(g)):.2f}"

    key20 = [r for r in _main_table() if r["method"] == "cluster_t" and r["G"] == "20"
             and r["design"] in ("betabin", "concentrated")]
    assert (f"median width was {width(5, grid)} at G = 5 and {width(15, grid)} at G = 15 "
            f"({width(20, key20)} at G = 20)") in readme
