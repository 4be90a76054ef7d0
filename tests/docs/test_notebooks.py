"""The notebooks: committed without outputs, and each runs headless from start to end (nbclient).

Notebook 03 is executed here only when it exists and has no test file of its
own (tests/docs/test_notebook_03.py runs it with its own checks).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from _shared import made_once
from nbclient import NotebookClient

pytestmark = pytest.mark.slow  # a developer loop skips these: pytest -m 'not slow'

ROOT = Path(__file__).resolve().parent.parent.parent
NOTEBOOKS = ROOT / "notebooks"
OWN_TESTS = {"03-outcome-receipts.ipynb": Path(__file__).resolve().parent / "test_notebook_03.py"}
MINE = ["01-quickstart.ipynb", "02-gate-statistics.ipynb"]


@contextlib.contextmanager
def kernel_tmpdir(folder: Path) -> Iterator[None]:
    """``TMPDIR`` for the kernels started inside (they inherit this process's environment at start)."""
    before = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(folder)
    try:
        yield
    finally:
        if before is None:
            del os.environ["TMPDIR"]
        else:
            os.environ["TMPDIR"] = before


def _to_run() -> list[str]:
    names = list(MINE)
    for path in sorted(NOTEBOOKS.glob("03-*.ipynb")):
        own = OWN_TESTS.get(path.name)
        if own is None or not own.exists():
            names.append(path.name)
    return names


def _text(nb: nbformat.NotebookNode) -> str:
    parts = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            parts.append(output.get("data", {}).get("text/plain", ""))
            parts.append(output.get("data", {}).get("text/html", ""))
    return "\n".join(parts)


@pytest.mark.parametrize("name", MINE)
def test_committed_without_outputs(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code and all(cell.outputs == [] and cell.execution_count is None for cell in code)
    assert sum(cell.cell_type == "markdown" for cell in nb.cells) >= len(code) // 2  # explained, not just code


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[nbformat.NotebookNode, float]]]:
    """Each notebook executed, and its seconds: once per session, whichever xdist worker asks first (each worker
    that ran one of these tests executed them all before); the notebooks are read back from the shared folder."""
    def build(root: Path) -> None:
        seconds: dict[str, float] = {}
        for name in _to_run():
            nb = nbformat.read(NOTEBOOKS / name, as_version=4)
            cwd = tmp_path_factory.mktemp(name.split("-")[0])
            tmp = tmp_path_factory.mktemp(name.split("-")[0] + "-tmpdir")
            start = time.perf_counter()
            with kernel_tmpdir(tmp):  # the kernel's tempfile folder: what the notebook leaves there is seen
                NotebookClient(nb, timeout=300, kernel_name="python3",
                               resources={"metadata": {"path": str(cwd)}}).execute()
            seconds[name] = time.perf_counter() - start
            assert not any(cwd.iterdir()), f"{name} left files in the working directory"
            assert not any(tmp.iterdir()), f"{name} left temporary folders: {sorted(p.name for p in tmp.iterdir())}"
            nbformat.write(nb, root / name)
        (root / "seconds.json").write_text(json.dumps(seconds), encoding="utf-8")

    with made_once(tmp_path_factory, "notebooks", build) as root:
        seconds = json.loads((root / "seconds.json").read_text(encoding="utf-8"))
        yield {name: (nbformat.read(root / name, as_version=4), seconds[name]) for name in _to_run()}


@pytest.mark.parametrize("name", _to_run())
def test_notebook_executes_headless(name: str, executed: dict[str, tuple[nbformat.NotebookNode, float]]) -> None:
    nb, seconds = executed[name]
    errors = [o for cell in nb.cells for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert seconds < 120, f"{name} took {seconds:.0f} s (budget 120 s)"


MAX_ROWS, MAX_COLUMNS, MAX_LINE = 12, 15, 300  # a frame or a printed line a reader takes in at a glance


def walls(nb: nbformat.NotebookNode) -> list[str]:
    """What an executed notebook shows that a reader cannot take in: a displayed DataFrame of more than
    ``MAX_ROWS`` rows or ``MAX_COLUMNS`` columns, or a printed line longer than ``MAX_LINE`` characters, each named
    by its cell's index."""
    found = []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            longest = max(map(len, output.get("text", "").splitlines()), default=0)
            if longest > MAX_LINE:
                found.append(f"cell {index}: a printed line of {longest} characters")
            html = output.get("data", {}).get("text/html", "")
            if 'class="dataframe"' in html:  # pandas' own HTML: one <tr> per row in <tbody>, one <th> per column
                rows = html.split("<tbody>", 1)[1].count("<tr")
                columns = html.split("<thead>", 1)[1].split("</tr>", 1)[0].count("<th") - 1  # less the index
                if rows > MAX_ROWS or columns > MAX_COLUMNS:
                    found.append(f"cell {index}: a frame of {rows} rows x {columns} columns")
    return found


@pytest.mark.parametrize("name", MINE)
def test_notebook_shows_selections_not_walls(name: str,
                                             executed: dict[str, tuple[nbformat.NotebookNode, float]]) -> None:
    """The notebooks read as a learner reads them: notebook 02 showed all 18 rows of
    ``op.reduce_epochs`` where its prose discusses two criteria, and printed the whole Markdown export of
    ``gate.table`` (lines of 358 characters); each output now selects what the text around it explains."""
    nb, _ = executed[name]
    assert walls(nb) == []


def test_quickstart_shows_every_frame_and_a_panel(executed: dict[str, tuple[nbformat.NotebookNode, float]]) -> None:
    nb, _ = executed["01-quickstart.ipynb"]
    sources = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    for frame in ("cases", "steps", "snapshots", "changes", "verdicts", "comparisons", "replays", "pairs",
                  "receipts"):
        assert f"run.{frame}" in sources, frame
    assert "run.panel(" in sources
    text = _text(nb)
    assert "environment_state/v1" in text and "Gate: BLOCK" in text


def test_statistics_notebook_covers_methods_gate_slices_plots_exports(
        executed: dict[str, tuple[nbformat.NotebookNode, float]]) -> None:
    nb, _ = executed["02-gate-statistics.ipynb"]
    sources = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    for name in ("op.rate_interval", "op.cluster_se", "op.gate", "op.slice_table", "op.plots.gate",
                 "op.plots.slices", "op.plots.validity", "op.export_table", "op.compare", "op.plots.compare",
                 "op.baseline", "op.reduce_epochs", "op.rate_interval_from_sums", "op.load_runs"):
        assert name in sources, name
    # a setting op.gate takes as a keyword is shown as one, not as a release rebuilt by hand
    assert 'op.gate(run, method="cluster_bootstrap")' in sources and '"method": "cluster_bootstrap"' not in sources
    text = _text(nb)
    # cluster_t's lower bound rebuilt from the CR2 SE and Bell–McCaffrey df, beside its mirrored upper
    assert "raw logit-t" in text
    # two versions pooled by op.load_runs: BLOCK with mixed_systems, shown, not only stated in §4
    assert "mixed_systems: runs" in text
    for method in ("clopper_pearson", "wilson", "cluster_t", "cluster_bootstrap"):
        assert method in text, method
    assert "few_clusters" in text
    assert "Comparison: REGRESSION" in text and "compare: REGRESSION — exit 1" in text
    assert "passes_when_idle" in text and "noop_rate" in text
    # min_clusters counts a criterion's own clusters, not the run's source cases: shown, not only stated
    assert "too_few_clusters" in text


@pytest.mark.parametrize("name", MINE)
def test_the_first_cell_does_not_import_statsmodels(name: str, tmp_path: Path) -> None:
    """A new user's first hour: notebook 02's first cell imported ``statsmodels.api`` (all of
    statsmodels, about 1.5 s of a 2.8 s CPU cell, 6.8 s wall on a busy machine) for one OLS fit in section 3.
    That section imports ``statsmodels.regression.linear_model`` itself; the first cell, run alone in a fresh
    interpreter, loads no statsmodels module."""
    import subprocess
    import sys

    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    first = next(cell.source for cell in nb.cells if cell.cell_type == "code")
    probe = first + "\nimport sys\nprint(sorted(m for m in sys.modules if m.split('.')[0] == 'statsmodels'))\n"
    env = {**os.environ, "TMPDIR": str(tmp_path), "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "[]"


def _coverage_tables() -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """benchmarks/coverage.md's two tables, rows as dicts: the main grid (coverage_simulation.py) and the hard cells."""
    main, hard = (ROOT / "benchmarks" / "coverage.md").read_text(encoding="utf-8").split("## Hard cells")
    tables = []
    for text in (main, hard):
        block = "| design" + text.split("\n| design", 1)[1].split("\n\n")[0]
        lines = [line.strip("|").split("|") for line in block.splitlines() if line.startswith("| ")]
        header = [c.strip() for c in lines[0]]
        tables.append([dict(zip(header, (c.strip().rstrip(" *") for c in line), strict=True)) for line in lines[1:]])
    return tables[0], tables[1]


def test_statistics_notebook_epochs_name_the_interval_that_did_not_move(
        executed: dict[str, tuple[nbformat.NotebookNode, float]]) -> None:
    """Notebook 02 §9 said "Only an interval can change" above a table whose three rows of
    ``same_state_under_injected`` (mean by ``cluster_t``, pass^3 and pass@3 by Clopper–Pearson) print one interval,
    and said nothing of why. The prose now gives it, Clopper–Pearson's for 14 of 23 (scipy here, not the code),
    and the executed table shows it to four places under both method names."""
    from scipy.stats import beta

    low, high = beta.ppf(0.025, 14, 10), beta.ppf(0.975, 15, 9)
    nb, _ = executed["02-gate-statistics.ipynb"]
    prose = " ".join(" ".join(cell.source for cell in nb.cells if cell.cell_type == "markdown").split())
    assert f"Clopper–Pearson's [{low:.4f}, {high:.4f}]" in prose and "Only an interval can change." not in prose
    table = next(o["data"]["text/plain"] for cell in nb.cells for o in cell.get("outputs", [])
                 if "pass^3" in o.get("data", {}).get("text/plain", "") and "cases" in o["data"]["text/plain"])
    rows = [line.split() for line in table.splitlines() if line.split()[1:3] and
            line.split()[1] == "same_state_under_injected"]
    assert [r[2] for r in rows] == ["mean", "pass^3", "pass@3"]
    assert {(r[6], r[7]) for r in rows} == {(f"{low:.6f}", f"{high:.6f}")}  # index, criterion, reduce, cases, ...
    assert [r[8] for r in rows] == ["cluster_t", "clopper_pearson", "clopper_pearson"]


def test_statistics_notebook_coverage_figures_are_the_tables() -> None:
    """Notebook 02 §2's coverage figures are those of benchmarks/coverage.md, the hard cells' included (the
    notebook gave only the main grid's 3.25% as cluster_t's worst, while the same file's hard cells reach 5.6%).
    A table made again must change the notebook's prose with it."""
    main, hard = _coverage_tables()
    prose = " ".join(" ".join(cell.source for cell in nbformat.read(NOTEBOOKS / "02-gate-statistics.ipynb",
                                                                       as_version=4).cells
                              if cell.cell_type == "markdown").split())

    def pct(rows: list[dict[str, str]]) -> str:  # the largest lower_miss, written as the notebook writes it (5.6%)
        return f"{100 * max(float(r['lower_miss']) for r in rows):.2f}".rstrip("0").rstrip(".") + "%"

    cluster_t = [r for r in main if r["method"] == "cluster_t"]
    boot = [r for r in main if r["method"] == "cluster_bootstrap"]
    assert f"`cluster_t`'s lower bound is above the truth in at most {pct(cluster_t)} of the runs of any cell" in prose
    key = [r for r in cluster_t if (r["design"], r["G"], r["rho"], r["p"]) == ("betabin", "20", "0.5", "0.9")]
    assert len(key) == 1 and float(key[0]["lower_miss"]) == 0 and "never in the key cell (G = 20, ρ = 0.5, p = 0.9)" \
        in prose
    sizes = sorted({int(r["G"]) for r in boot})
    over = [g for g in sizes if max(float(r["lower_miss"]) for r in boot if int(r["G"]) == g) > 0.03]
    assert over == [g for g in sizes if g >= 30] and sizes[-1] == 200
    assert f"exceeds 3% in some cell at every G from 30 to 200 (up to {pct(boot)})" in prose
    assert max(int(r["G"]) for r in cluster_t) == 100 and "from 20 to 100 for `cluster_t` and to 200 for the" in prose
    long_tail = [r for r in hard if r["design"].startswith(("lognormal", "geometric")) and r["rho"] == "0.5"]
    worst = max(long_tail, key=lambda r: float(r["lower_miss"]))
    assert worst["G"] == "200" and f"up to {pct(long_tail)} at G = 200" in prose
    assert f"no cell misses more than {pct([r for r in hard if r['G'] == '20'])}" in prose

    def mixture(g: str) -> str:  # the cells of a kind of case that never passes (their figures were unpinned)
        return pct([r for r in hard if r["design"].startswith("mixture") and r["G"] == g])

    assert f"each run for 10 epochs) up to {mixture('100')} at G = 100" in prose
    assert f"such cells miss at most {mixture('20')} at G = 20 and {mixture('30')} at G = 30" in prose


def test_every_sentence_on_a_pooled_runs_first_column_says_snapshots_keeps_its_own() -> None:
    """A pooled run's frames start with ``run_id``, but ``snapshots`` keeps its own last (an environment state
    records its run: ``op.load_runs(...).snapshots.columns[-1] == "run_id"``, as notebook 02 asserts beside the
    sentence). Notebook 02 said "every frame with a first column `run_id`", and README §9 said so for
    snapshots: each sentence on that first column, in the notebooks and the README, names the
    exception."""
    texts = [cell.source for path in sorted(NOTEBOOKS.glob("*.ipynb"))
             for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "markdown"]
    texts.append((ROOT / "README.md").read_text(encoding="utf-8"))
    sentences = [s for text in texts for s in " ".join(text.split()).split(". ") if "first column `run_id`" in s]
    assert len(sentences) >= 2  # README §9 and notebook 02
    for sentence in sentences:
        assert "`snapshots` keeps its own, last" in sentence, sentence


def _markdown(nb: nbformat.NotebookNode) -> str:
    """The notebook's prose, its line breaks made spaces (a sentence wrapped anywhere reads as one line)."""
    return " ".join(" ".join(cell.source for cell in nb.cells if cell.cell_type == "markdown").split())


def test_quickstart_rebuilds_the_degenerate_bounds_with_scipy(
        executed: dict[str, tuple[nbformat.NotebookNode, float]]) -> None:
    """Notebook 01 printed two ``degenerate`` bounds (0.856 and 0.161) and explained ``n_min`` in words
    only; it now rebuilds both from the verdict rows' cluster sizes and scipy. Here they are made again from the
    example's design (47 rows: 23 pairs and ``ord-018`` alone; 37 replayed rows: 14 pairs and 9 alone) and scipy."""
    from scipy.stats import beta

    nb, _ = executed["01-quickstart.ipynb"]
    low, high = beta.ppf(0.025, 47**2 / (23 * 4 + 1), 1), beta.ppf(0.975, 1, 37**2 / (14 * 4 + 9))
    table = next(o["data"]["text/plain"] for cell in nb.cells for o in cell.get("outputs", [])
                 if "scipy" in o.get("data", {}).get("text/plain", "") and "n_min" in o["data"]["text/plain"])
    rows = {line.split()[0]: line.split()[1:] for line in table.splitlines()[2:]}
    assert rows["other_order_untouched"] == ["ci_low", "23.752688", f"{low:.6f}", f"{low:.6f}"]
    assert rows["recovers_from_error_at_issue_refund"] == ["ci_high", "21.061538", f"{high:.6f}", f"{high:.6f}"]


def test_statistics_notebook_names_what_a_notebooks_edit_does_to_the_gate(
        executed: dict[str, tuple[nbformat.NotebookNode, float]]) -> None:
    """Notebook 02 §4 listed what makes a run BLOCK whatever its table says (unfinished, mixed_systems,
    mixed_cases) but not what a notebook itself does: a frame set in the session or a manifest edited in place
    (``edited_frames``), nor a listed criterion without rows (``no_evidence``). It names both
    and drops the failing rows of a second copy of the run to show it (the cell asserts the reason). §2 and the
    validity table check their independent intervals against statsmodels, and §9 no longer says that epochs make
    every frame gain an ``epoch`` column (every frame has one, 1 in a run of one epoch: notebook 01)."""
    nb, _ = executed["02-gate-statistics.ipynb"]
    prose = _markdown(nb)
    sources = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    assert "(`edited_frames`): a frame set in the session (`run.verdicts = …`" in prose
    assert "(`no_evidence`, `all_missing`)" in prose
    assert 'trimmed.verdicts = trimmed.verdicts[' in sources and 'reason.startswith("edited_frames' in sources
    assert sources.count("proportion_confint(") == 2  # 34 of 47 (Clopper–Pearson and Wilson), 23 of 24 (Wilson)
    assert "every frame gains `epoch`" not in prose
