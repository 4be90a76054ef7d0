"""Plots: return Axes on Agg, one errorbar per criterion or bin, thresholds marked, no line between bins."""

from __future__ import annotations

import ast
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.container import ErrorbarContainer  # noqa: E402

import oloproof_nb as op  # noqa: E402
from oloproof_nb import plots  # noqa: E402
from oloproof_nb._analysis.gate import GATE_COLUMNS  # noqa: E402
from oloproof_nb._display.theme import COLOURS  # noqa: E402

PACKAGE = Path(op.__file__).parent


@pytest.fixture(autouse=True)
def _no_show(monkeypatch: pytest.MonkeyPatch) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a plot function called show()")

    monkeypatch.setattr(plt, "show", refuse)
    yield
    plt.close("all")


def errorbars(ax: Any) -> list[ErrorbarContainer]:
    return [c for c in ax.containers if isinstance(c, ErrorbarContainer)]


GATE = pd.DataFrame([
    ["answer_matches", "answer_matches", 48, 24, 34, 0, 34 / 48, 0.55, 0.83, "cluster_t", 0.9, "FAIL", "", 10, False],
    ["state_matches", "state_matches", 48, 24, 47, 0, 47 / 48, 0.91, 0.99, "cluster_t", 0.9, "PASS", "", 1, False],
    ["untouched", "state_unchanged", 48, 24, 48, 0, 1.0, 0.86, 1.0, "clopper_pearson", 0.95,
     "INSUFFICIENT_EVIDENCE", "", 0, True],
    ["extra", "answer_matches", 48, 24, 40, 0, 40 / 48, 0.7, 0.92, "cluster_t", math.nan, "REPORT_ONLY", "", 6, False],
    ["nothing", "fault_recovery", 0, 0, 0, 0, math.nan, math.nan, math.nan, "", 0.9, "INSUFFICIENT_EVIDENCE",
     "no_evidence", 0, False],
], columns=GATE_COLUMNS[:15])  # the columns up to vacuous; later ones are not drawn


def test_gate_plot_one_errorbar_per_criterion_with_rows() -> None:
    ax = plots.gate(GATE)
    assert isinstance(ax, matplotlib.axes.Axes)
    bars = errorbars(ax)
    assert len(bars) == 4  # "nothing" has no rows: no bar, a note instead
    # a vacuous check is marked as the report marks it (its PASS would say nothing about the agent)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["answer_matches", "state_matches",
                                                           "untouched (vacuous)", "extra", "nothing"]
    # colour by verdict, in table order
    expected = [COLOURS[v] for v in GATE["verdict"][:4]]
    assert [to_hex(b.lines[0].get_color()) for b in bars] == expected
    # the point is the rate, the bar spans the interval
    for bar, r in zip(bars, GATE.itertuples(), strict=False):
        assert bar.lines[0].get_xdata()[0] == pytest.approx(r.rate)
        segs = bar.lines[2][0].get_segments()[0]
        assert sorted(segs[:, 0]) == pytest.approx([r.ci_low, r.ci_high])
    # thresholds: one mark per listed criterion (REPORT_ONLY has none)
    marks = [c for c in ax.collections if c.get_label() == "threshold"]
    assert len(marks) == 1
    assert sorted(marks[0].get_offsets()[:, 0]) == pytest.approx(sorted([0.9, 0.9, 0.95, 0.9]))
    texts = [t.get_text() for t in ax.texts]
    assert "no rows" in texts and "34/48  FAIL" in texts
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "threshold" in labels and "fail" in labels and "pass" in labels


def test_gate_plot_from_a_gate_draws_on_a_given_axes(tmp_path: Path, make_suite: Any) -> None:
    cases = [{"id": f"c{i}", "input": {"answer": "ok"}, "expected": {"answer": "ok"}} for i in range(5)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.5}})
    g = op.gate(op.run(op.load_suite(root), out=tmp_path / "run", progress=False))
    fig, ax = plt.subplots()
    assert plots.gate(g, ax=ax) is ax
    assert len(errorbars(ax)) == 1
    assert g.verdict in ax.get_title(loc="left")
    fig.savefig(tmp_path / "gate.png")
    assert (tmp_path / "gate.png").stat().st_size > 1000


def slice_frame() -> pd.DataFrame:
    rows = []
    bins = [("<1", -math.inf, 1.0), ("[1, 2)", 1.0, 2.0), ("≥2", 2.0, math.inf), ("n/a", math.nan, math.nan)]
    support = {"a": [0, 7, 17, 0], "b": [0, 0, 12, 0]}
    for crit in ("a", "b"):
        for (label, lo, hi), n in zip(bins, support[crit], strict=True):
            rate = 0.8 if n else math.nan
            rows.append(["tool_calls:1,2", label, lo, hi, crit, n, min(n, 9), round(0.8 * n), rate,
                         rate - 0.2 if n else math.nan, min(rate + 0.1, 1.0) if n else math.nan, n < 10,
                         "cluster_t" if n else ""])
    return pd.DataFrame(rows, columns=["slice", "bin", "lower", "upper", "criterion", "support", "clusters",
                                       "passed", "rate", "ci_low", "ci_high", "few_clusters", "method"])


def test_slices_plot_one_errorbar_per_non_empty_bin_and_no_joining_line() -> None:
    table = slice_frame()
    ax = plots.slices(table)
    bars = errorbars(ax)
    assert len(bars) == int((table["support"] > 0).sum()) == 3
    # the data line of every errorbar is markers only; no Line2D spans more than one x position
    for bar in bars:
        assert bar.lines[0].get_linestyle() == "None"
    for line in ax.get_lines():
        xs = np.asarray(line.get_xdata(), dtype=float)
        if line.get_linestyle() not in ("None", "", " ") and xs.size:
            assert np.allclose(xs, xs[0]), "a line joins bins"
    # support written above each point; empty bins marked; the all-empty n/a bin is dropped
    texts = [t.get_text() for t in ax.texts]
    assert sorted(t for t in texts if t.startswith("n=") and t != "n=0") == ["n=12", "n=17", "n=7"]
    assert "no cases" in texts and "n=0" in texts
    assert [t.get_text() for t in ax.get_xticklabels()] == ["<1", "[1, 2)", "≥2"]
    # few clusters → hollow marker (n=7 has 7 clusters, flagged)
    hollow = [b for b in bars if b.lines[0].get_markerfacecolor() in ("white", "w", (1.0, 1.0, 1.0, 1.0))]
    assert len(hollow) == 1 and hollow[0].lines[0].get_ydata()[0] == pytest.approx(0.8)


def test_slices_plot_keeps_a_filled_na_bin_and_real_table(tmp_path: Path, make_suite: Any) -> None:
    table = slice_frame()
    table.loc[(table["bin"] == "n/a") & (table["criterion"] == "a"), ["support", "rate", "ci_low", "ci_high"]] = [
        2, 0.0, 0.0, 0.8]
    ax = plots.slices(table)
    assert [t.get_text() for t in ax.get_xticklabels()][-1] == "n/a"
    assert len(errorbars(ax)) == 4
    cases = [{"id": f"c{i}", "input": {"answer": "ok", "writes": [{"path": ["k", str(j)], "value": j}
                                                                  for j in range(i % 3)]},
              "expected": {"answer": "ok"}} for i in range(9)]
    evaluators = [{"type": "answer_matches"}, {"type": "answer_matches", "criterion": "again"}]
    run = op.run(op.load_suite(make_suite(cases, evaluators=evaluators)), out=tmp_path / "run", progress=False)
    real = op.slice_table(run, "tool_calls:1,2")
    ax = plots.slices(real)
    assert len(errorbars(ax)) == int((real["support"] > 0).sum()) == 6  # 2 criteria × 3 filled bins (0, 1, 2 calls)


def test_validity_plot() -> None:
    v = pd.DataFrame({"transform": ["injected", "paraphrase", "unlabeled"], "derived": [24, 24, 10],
                      "labeled": [24, 20, 0], "valid": [22, 19, 0], "coverage": [1.0, 20 / 24, 0.0],
                      "rate": [22 / 24, 19 / 20, math.nan], "ci_low": [0.74, 0.76, math.nan],
                      "ci_high": [0.98, 0.99, math.nan], "minimum_validity": [0.85, 0.9, 0.85],
                      "checked": [True, False, False]})
    ax = plots.validity(v)
    bars = errorbars(ax)
    assert len(bars) == 2
    assert [to_hex(b.lines[0].get_color()) for b in bars] == [COLOURS["PASS"],
                                                              COLOURS["INSUFFICIENT_EVIDENCE"]]
    marks = [c for c in ax.collections if c.get_label() == "minimum"]
    assert sorted(marks[0].get_offsets()[:, 0]) == pytest.approx([0.85, 0.85, 0.9])
    assert "no labels" in [t.get_text() for t in ax.texts]


def test_bad_inputs_are_oloproof_errors() -> None:
    with pytest.raises(op.OloproofError):
        plots.gate(42)
    with pytest.raises(op.OloproofError, match="ci_low"):
        plots.slices(slice_frame().drop(columns="ci_low"))
    with pytest.raises(op.OloproofError, match="minimum_validity"):
        plots.validity(pd.DataFrame({"transform": ["t"]}))


def test_importing_the_toolkit_does_not_load_matplotlib() -> None:
    code = "import sys, oloproof_nb; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


BELOW_DISPLAY = sorted(str(p.relative_to(PACKAGE)) for layer in ("_core", "_config", "evaluators", "_run", "_analysis")
                       for p in (PACKAGE / layer).glob("*.py"))


@pytest.mark.parametrize("module", BELOW_DISPLAY)
def test_modules_below_the_display_layer_never_import_plots(module: str) -> None:
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names |= {f"{node.module or ''}:{a.name}" for a in node.names} | {node.module or ""}
    assert not [n for n in names if "matplotlib" in n or n.endswith(":plots") or n == "plots"]
