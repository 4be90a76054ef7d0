"""Plots: return Axes on Agg, one errorbar per criterion or bin, thresholds marked, no line between bins."""

from __future__ import annotations

import ast
import math
import re
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
    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(5)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.5}})
    g = op.gate(op.run(op.load_suite(root), out=tmp_path / "run", progress=False))
    fig, ax = plt.subplots()
    assert plots.gate(g, ax=ax) is ax
    assert len(errorbars(ax)) == 1
    assert g.verdict in ax.get_title(loc="left")
    fig.savefig(tmp_path / "gate.png")
    assert (tmp_path / "gate.png").stat().st_size > 1000


def test_a_plot_of_the_gate_or_comparison_table_alone_gives_the_level_of_its_intervals(tmp_path: Path,
                                                                                      make_suite: Any) -> None:
    """``plots.gate`` and ``plots.compare`` take the table alone (``g.table``, ``cmp.table``, or a selection of its
    rows), as the slice and validity plots take theirs: its x-axis named no level ("pass rate and interval") while
    the plot of the Gate itself said 90%, since only the slice and validity tables recorded theirs."""
    cases = [{"id": f"c{i}", "input": {"answer": "ok" if i % 4 else "no", "n": i}, "expected": {"answer": "ok"}}
             for i in range(8)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.5}})
    base, candidate = (op.run(op.load_suite(root), out=tmp_path / name, progress=False) for name in ("a", "b"))
    g = op.gate(base, confidence=0.9)
    assert plots.gate(g).get_xlabel() == "pass rate and 90% interval"
    assert plots.gate(g.table).get_xlabel() == "pass rate and 90% interval"
    assert plots.gate(g.table[g.table["verdict"] != "REPORT_ONLY"]).get_xlabel() == "pass rate and 90% interval"
    assert plots.gate(op.gate(base).table).get_xlabel() == "pass rate and 95% interval"  # the release's own
    cmp = op.compare(base, candidate, release={"confidence": 0.8})
    assert plots.compare(cmp.table).get_xlabel() == plots.compare(cmp).get_xlabel() == (
        "difference in pass rate (percentage points), candidate − base, with its paired 80% interval")


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


def test_slices_rows_without_a_few_clusters_flag_are_drawn_filled() -> None:
    """A slice table concatenated with one that has no ``few_clusters`` column holds NaN there, which ``bool``
    reads as True: every row of criterion c was drawn hollow, and the legend said "hollow: few clusters", of rows
    that say nothing about their clusters. Only the one row flagged True (n=7) is hollow."""
    other = slice_frame().drop(columns="few_clusters")
    other = other[other["criterion"] == "a"].assign(criterion="c")
    table = pd.concat([slice_frame(), other], ignore_index=True)
    assert table["few_clusters"].isna().sum() == 4
    ax = plots.slices(table)
    bars = errorbars(ax)
    assert len(bars) == 5  # a: 7, 17; b: 12; c: 7, 17
    hollow = [b for b in bars if b.lines[0].get_markerfacecolor() in ("white", "w", (1.0, 1.0, 1.0, 1.0))]
    # a's bar in [1, 2): the first of 3 slots of width 0.8 / 3 in the bin at x = 1
    assert len(hollow) == 1 and hollow[0].lines[0].get_xdata()[0] == pytest.approx(1 - 0.4 + 0.8 / 6)
    assert "hollow: few clusters" in [t.get_text() for t in ax.get_legend().get_texts()]
    ax = plots.slices(other)  # none flagged: no hollow marker, no legend entry for one
    assert not [b for b in errorbars(ax) if b.lines[0].get_markerfacecolor() in ("white", "w", (1.0, 1.0, 1.0, 1.0))]
    assert "hollow: few clusters" not in [t.get_text() for t in ax.get_legend().get_texts()]


def test_slices_plot_keeps_a_filled_na_bin_and_real_table(tmp_path: Path, make_suite: Any) -> None:
    table = slice_frame()
    table.loc[(table["bin"] == "n/a") & (table["criterion"] == "a"), ["support", "rate", "ci_low", "ci_high"]] = [
        2, 0.0, 0.0, 0.8]
    ax = plots.slices(table)
    assert [t.get_text() for t in ax.get_xticklabels()][-1] == "n/a"
    assert len(errorbars(ax)) == 4
    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i, "writes": [{"path": ["k", str(j)], "value": j}
                                                                  for j in range(i % 3)]},
              "expected": {"answer": "ok"}} for i in range(9)]
    evaluators = [{"type": "answer_matches"}, {"type": "answer_matches", "criterion": "again"}]
    run = op.run(op.load_suite(make_suite(cases, evaluators=evaluators)), out=tmp_path / "run", progress=False)
    real = op.slice_table(run, "tool_calls:1,2")
    ax = plots.slices(real)
    assert len(errorbars(ax)) == int((real["support"] > 0).sum()) == 6  # 2 criteria × 3 filled bins (0, 1, 2 calls)
    # the table records its level, so the plot of a real run says it (at the release's confidence)
    assert ax.get_ylabel() == "pass rate and 95% interval"
    assert op.slice_table(run, "tool_calls:1,2", release={"confidence": 0.8}).attrs["confidence"] == 0.8


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
    with pytest.raises(op.OloproofError, match="plots.gate needs a DataFrame, got int"):
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


# --- readability -------------------------------------------------------------------------------------------------

def _support_labels(ax: Any) -> list[Any]:
    return [t for t in ax.texts if t.get_text().startswith("n=")]


def _overlaps(texts: list[Any]) -> list[tuple[str, str]]:
    """Pairs of texts whose rendered boxes overlap (the figure must have been drawn)."""
    boxes = [(t.get_text(), t.get_window_extent()) for t in texts]
    return [(a, b) for i, (a, box_a) in enumerate(boxes) for b, box_b in boxes[i + 1:] if box_a.overlaps(box_b)]


def one_bin_frame(supports: list[int]) -> pd.DataFrame:
    """One slice of three bins; criterion j has ``supports[j]`` rows in the middle bin, the same rate everywhere
    (the labels sit at one height, where they collided), and n=0 in the last bin for the first half."""
    rows = []
    k = len(supports)
    for j, n_mid in enumerate(supports):
        for label, n in (("<3", 41), ("[3, 6)", n_mid), ("≥6", 0 if j < k // 2 else 9)):
            rows.append(["x:3,6", label, f"criterion_{j}", n, 0.7 if n else math.nan, 0.55 if n else math.nan,
                         0.82 if n else math.nan, n < 20, "cluster_t" if n else ""])
    return pd.DataFrame(rows, columns=["slice", "bin", "criterion", "support", "rate", "ci_low", "ci_high",
                                       "few_clusters", "method"])


@pytest.mark.parametrize("small", [False, True], ids=["own-figure", "small-axes"])
@pytest.mark.parametrize("first", [12, 100, 1000], ids=["2-digit", "3-digit", "4-digit"])
@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_support_labels_never_overlap(k: int, first: int, small: bool) -> None:
    """Before, the supports of criteria in one bin ran together ("n=41n=41"; more digits, worse)."""
    mixed = [first + 7 * j for j in range(k)]  # all different
    ax = None
    if small:  # the notebook's smaller figure
        _, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    ax = plots.slices(one_bin_frame(mixed), ax=ax)
    ax.figure.canvas.draw()
    labels = _support_labels(ax)
    assert _overlaps(labels) == []
    # every support is written: "n=41 each" once for the bin they share, each of the differing ones, the zeros
    texts = [t.get_text() for t in labels]
    assert texts.count("n=41 each") == 1
    assert sorted(t for t in texts if t not in ("n=41 each", "n=0", "n=9")) == sorted(f"n={n}" for n in mixed)
    assert texts.count("n=0") == k // 2 and texts.count("n=9") == k - k // 2
    # and no label runs into the title
    title = ax.title.get_window_extent()
    assert not [t.get_text() for t in labels if t.get_window_extent().overlaps(title)]


def test_a_shared_support_is_written_once_per_bin() -> None:
    ax = plots.slices(one_bin_frame([41, 41, 41]))
    texts = [t.get_text() for t in _support_labels(ax)]
    assert texts.count("n=41 each") == 2 and "n=41" not in texts


def test_every_criterion_of_a_slice_plot_is_told_apart_past_the_eight_colours() -> None:
    """Before, with 10 criteria the 9th and 10th were drawn and listed in the legend as the 1st and 2nd (the
    same colour, the same disc), so no reader could tell whose bars they were."""
    ax = plots.slices(one_bin_frame([41] * 10))
    legend = [(to_hex(h.get_color()), h.get_marker()) for h in ax.get_legend().legend_handles[:10]]
    assert [t.get_text() for t in ax.get_legend().get_texts()[:10]] == [f"criterion_{j}" for j in range(10)]
    assert len(set(legend)) == 10
    # each bar is drawn as its legend entry shows it: in the first bin the criteria in order, one bar each
    first = [(to_hex(b.lines[0].get_color()), b.lines[0].get_marker()) for b in errorbars(ax)[:10]]
    assert first == legend


@pytest.mark.parametrize(("bins", "criteria", "width"),
                         [(3, 1, 6.0), (51, 1, 40.0), (51, 10, 40.0), (8, 2, 1.1 * 8 * 2**0.5 + 2.5)])
def test_a_slice_plot_is_as_wide_as_its_bins_need_up_to_40_inches(bins: int, criteria: int, width: float) -> None:
    """Before, the width grew with the bins without end (1,000 edges: a picture 143,480 pixels wide). By hand:
    1.1 · bins · √criteria + 2.5 inches, at least 6, at most 40 (51 bins of 10 criteria: 180 asked)."""
    rows = [["x", f"bin {b}", f"criterion_{j}", 30, 0.7, 0.55, 0.82, False, "cluster_t"]
            for b in range(bins) for j in range(criteria)]
    table = pd.DataFrame(rows, columns=["slice", "bin", "criterion", "support", "rate", "ci_low", "ci_high",
                                        "few_clusters", "method"])
    assert plots.slices(table).figure.get_size_inches()[0] == pytest.approx(width, abs=1e-9)


def test_a_slice_of_more_bins_than_a_suite_s_slice_may_have_is_not_plotted() -> None:
    """A table of op.slice_table with a spec of 5,000 edges took minutes to draw, every bin thinner than a line. A
    slice of a suite has at most 50 edges (51 bins, and n/a): one bin more is refused in one line naming the slice,
    before a figure is made; 51 bins and n/a, or two slices of 51 bins each, are drawn."""
    def table(slices: dict[str, int]) -> pd.DataFrame:
        rows = [[name, label, "a", 30, 0.7, 0.55, 0.82]
                for name, bins in slices.items() for label in [*(f"bin {b}" for b in range(bins)), "n/a"]]
        return pd.DataFrame(rows, columns=["slice", "bin", "criterion", "support", "rate", "ci_low", "ci_high"])

    figures = plt.get_fignums()
    with pytest.raises(op.OloproofError) as info:
        plots.slices(table({"tool_calls:1,2": 3, "x:many": 52}))
    assert str(info.value) == ("plots.slices: slice 'x:many' has 52 bins; a plot shows at most 51 of a slice (at "
                               "most 50 edges, as a suite's slices have), as more cannot be read: slice with fewer "
                               "edges, or read the table")
    assert plt.get_fignums() == figures
    ax = plots.slices(table({"x:one": 51, "y:two": 51}))
    assert len(ax.get_xticks()) == 2 * 52


def test_a_slice_plot_s_markers_go_round_by_eights_and_start_again_past_forty_criteria() -> None:
    """The 8-colour test tells 10 criteria apart, which a shape changed one criterion early, or a
    square for the first round, also did. By hand: criteria 1-8 discs (the legend's "few clusters" disc too), 9-16
    squares, 17-24 triangles, 25-32 diamonds, 33-40 downward triangles, and the 41st a disc again (five rounds of 8
    colours; before the wrap it raised IndexError)."""
    ax = plots.slices(one_bin_frame([41] * 41))
    handles = ax.get_legend().legend_handles
    assert [t.get_text() for t in ax.get_legend().get_texts()[:41]] == [f"criterion_{j}" for j in range(41)]
    assert [h.get_marker() for h in handles[:41]] == ["o"] * 8 + ["s"] * 8 + ["^"] * 8 + ["D"] * 8 + ["v"] * 8 + ["o"]
    assert to_hex(handles[40].get_color()) == to_hex(handles[0].get_color())  # the 41st: the first's colour again
    assert [b.lines[0].get_marker() for b in errorbars(ax)[:41]] == [h.get_marker() for h in handles[:41]]
    plt.close(ax.figure)


def test_empty_criteria_are_labeled_in_their_own_colour() -> None:
    """Before, grey "n=0 n=0" said nothing of whose rows were missing."""
    ax = plots.slices(slice_frame())  # b has no rows in [1, 2)
    legend = {t.get_text(): to_hex(h.get_color()) for t, h in zip(ax.get_legend().get_texts(),
                                                                    ax.get_legend().legend_handles, strict=True)}
    zeros = [t for t in ax.texts if t.get_text() == "n=0"]
    assert len(zeros) == 1 and to_hex(zeros[0].get_color()) == legend["b"]
    # it stands in b's slot of the bin, where b's bar would be
    bars = errorbars(ax)
    x_b = [b.lines[0].get_xdata()[0] for b in bars if to_hex(b.lines[0].get_color()) == legend["b"]]
    x_a = [b.lines[0].get_xdata()[0] for b in bars if to_hex(b.lines[0].get_color()) == legend["a"]]
    # b's bar in "≥2" (at 2) is in the same slot, one bin to the right; a's slot is left of b's
    assert zeros[0].get_position()[0] == pytest.approx(x_b[0] - 1) and x_a[0] < x_b[0]


def _dark_pixels(ax: Any, x0: float, x1: float, y: float, half_height: float) -> int:
    """Near-black pixels (ink) between data x0 and x1 on row y, ± half_height pixels, in the drawn figure."""
    fig = ax.figure
    fig.canvas.draw()
    rgba = np.asarray(fig.canvas.buffer_rgba())
    height = rgba.shape[0]
    (px0, py), (px1, _) = ax.transData.transform([(x0, y), (x1, y)])
    rows = slice(int(height - py - half_height), int(height - py + half_height) + 1)
    cols = slice(int(math.floor(px0)), int(math.ceil(px1)) + 1)
    patch = rgba[rows, cols, :3].astype(int)
    return int((patch.max(axis=2) < 100).sum())


def test_the_threshold_does_not_hide_a_close_interval_end() -> None:
    """Before, an opaque black threshold bar at 0.85 swallowed the cap at ci_low 0.857 (the only PASS)."""
    table = GATE.iloc[[0, 2]].reset_index(drop=True)
    table.loc[1, ["ci_low", "threshold", "verdict"]] = [0.857, 0.85, "PASS"]
    fig, ax = plt.subplots(figsize=(8, 2.5), dpi=100, layout="constrained")
    plots.gate(table, ax=ax)
    mark = next(c for c in ax.collections if c.get_label() == "threshold")
    bar = errorbars(ax)[1]
    caps = bar.lines[1]
    assert mark.get_zorder() < min(c.get_zorder() for c in caps)  # drawn behind the interval
    assert mark.get_linewidths()[0] < caps[0].get_markeredgewidth()  # thinner than the cap
    assert mark.get_alpha() is not None and mark.get_alpha() < 1
    # the rendered pixels: no ink between the threshold and the cap, the cap in the verdict's colour
    assert _dark_pixels(ax, 0.845, 0.862, 0.0, 6) == 0
    fig.canvas.draw()
    rgba = np.asarray(fig.canvas.buffer_rgba())
    px, py = ax.transData.transform((0.857, 0.0))
    assert to_hex(rgba[int(round(rgba.shape[0] - py)), int(round(px)), :3] / 255) == COLOURS["PASS"]
    # and the note says which side of the threshold the end is on
    assert "48/48  PASS  ci_low 0.857 ≥ 0.85" in [t.get_text() for t in ax.texts]
    assert "34/48  FAIL" in [t.get_text() for t in ax.texts]  # far from its threshold: no note


def compare_frame(margin: float = 0.15) -> pd.DataFrame:
    return pd.DataFrame({
        "criterion": ["answer_matches", "state_matches", "flaky"], "difference": [-0.46, 0.0, 0.0],
        "ci_low": [-0.66, -0.142, -0.148], "ci_high": [-0.25, 0.14, 0.15], "method": ["cluster_t"] * 3,
        "n": [48, 48, 38], "pass_to_fail": [22, 0, 0], "fail_to_pass": [0, 0, 0], "margin": [margin] * 3,
        "verdict": ["REGRESSION", "NO_REGRESSION", "NO_REGRESSION"]})


def test_the_margin_line_does_not_hide_a_close_interval_end() -> None:
    """Before, the dashed −margin line at −0.15 sat on the caps at −0.142 and −0.148."""
    fig, ax = plt.subplots(figsize=(8, 2.5), dpi=100, layout="constrained")
    plots.compare(compare_frame(), ax=ax)
    line = next(line for line in ax.lines if line.get_linestyle() == "--")
    caps = [cap for bar in errorbars(ax) for cap in bar.lines[1]]
    assert line.get_zorder() < min(c.get_zorder() for c in caps)
    assert line.get_alpha() is not None and line.get_alpha() < 1
    assert line.get_linewidth() < caps[0].get_markeredgewidth()
    for y in (1.0, 0.0):  # the rows of state_matches and flaky
        assert _dark_pixels(ax, -0.153, -0.139, y, 6) == 0


def test_axis_labels_give_the_level_from_the_data_and_the_methods_where_they_differ() -> None:
    """Before, the slice plot gave no level, the validity plot no level, the gate plot not its methods."""
    from types import SimpleNamespace

    g = SimpleNamespace(table=GATE, release=SimpleNamespace(confidence=0.9), verdict="BLOCK", reason="")
    # the untouched row (all rows pass) is Clopper–Pearson, the others cluster t
    assert plots.gate(g).get_xlabel() == "pass rate and 90% interval (cluster t; Clopper–Pearson where all rows agree)"
    table = GATE.copy()
    table.attrs["confidence"] = 0.8
    assert plots.gate(table).get_xlabel().startswith("pass rate and 80% interval (")
    table["method"] = ["cluster_t", "wilson", "cluster_t", "wilson", ""]  # not a fallback: the rows are named
    assert plots.gate(table).get_xlabel() == "pass rate and 80% interval (cluster t; Wilson for state_matches, extra)"
    table["method"] = "cluster_t"  # one method: the tables name it, the label only the level
    assert plots.gate(table).get_xlabel() == "pass rate and 80% interval"
    # slices: the level on the y-axis, from confidence= or the table's attrs; differing methods below the x-axis
    frame = slice_frame()
    frame.loc[frame["support"] == 7, "method"] = "clopper_pearson"
    frame.loc[frame["support"] == 7, ["rate", "ci_low", "ci_high"]] = [1.0, 0.6, 1.0]
    ax = plots.slices(frame, confidence=0.9)
    assert ax.get_ylabel() == "pass rate and 90% interval"
    assert ax.get_xlabel().endswith("\nintervals: cluster t; Clopper–Pearson where all rows agree")
    frame.attrs["confidence"] = 0.995
    assert plots.slices(frame).get_ylabel() == "pass rate and 99.5% interval"
    # validity: the level of its Wilson interval
    v = pd.DataFrame({"transform": ["t"], "derived": [4], "labeled": [4], "valid": [4], "rate": [1.0],
                      "ci_low": [0.5], "ci_high": [1.0], "minimum_validity": [0.85], "checked": [True]})
    assert plots.validity(v, confidence=0.9).get_xlabel().endswith("(90% Wilson interval)")
    v.attrs["confidence"] = 0.95
    assert plots.validity(v).get_xlabel().endswith("(95% Wilson interval)")
    # never a guessed level: a bare table without one says none
    assert "%" not in plots.slices(slice_frame()).get_ylabel()


@pytest.mark.parametrize("confidence, says", [(95, "confidence=95 is outside (0, 1)"),
                                              (1.0, "confidence=1.0 is outside (0, 1)"),
                                              (True, "confidence=True is not a number")])
def test_a_confidence_that_is_no_probability_is_refused_not_drawn_as_a_level(confidence: Any, says: str) -> None:
    """``confidence=95`` (a percentage for a probability) labelled the axis ``pass rate and 9500% interval``, and
    ``confidence=True`` ``100%``: both are refused in one line naming the plot and what is allowed."""
    v = pd.DataFrame({"transform": ["t"], "derived": [4], "labeled": [4], "valid": [4], "rate": [1.0],
                      "ci_low": [0.5], "ci_high": [1.0], "minimum_validity": [0.85], "checked": [True]})
    with pytest.raises(op.OloproofError, match=rf"^plots\.slices: {re.escape(says)}; .*e\.g\. 0\.95$"):
        plots.slices(slice_frame(), confidence=confidence)
    with pytest.raises(op.OloproofError, match=rf"^plots\.validity: {re.escape(says)}; .*e\.g\. 0\.95$"):
        plots.validity(v, confidence=confidence)
    assert plots.slices(slice_frame(), confidence=0.9).get_ylabel() == "pass rate and 90% interval"


def test_a_slices_table_whose_slice_is_a_number_is_drawn_under_its_name() -> None:
    """Two slices of a table built by hand, one named by a number: the bins' tick labels split the name at its
    ``:`` (``7.split`` raised AttributeError), so each bin is labelled with its slice's name."""
    table = pd.concat([slice_frame(), slice_frame().assign(slice=7)], ignore_index=True)
    ticks = [t.get_text() for t in plots.slices(table).get_xticklabels()]
    assert ticks == ["tool_calls\n<1", "tool_calls\n[1, 2)", "tool_calls\n≥2", "7\n<1", "7\n[1, 2)", "7\n≥2"]
    one = slice_frame().assign(slice=7)
    ax = plots.slices(one)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["<1", "[1, 2)", "≥2"]
    assert ax.get_title(loc="left") == "Pass rate by bin — 7"
    assert ax.get_xlabel().startswith("bin  (bins: lower ≤ x < upper)")


def test_the_compare_axis_is_in_percentage_points_and_the_legend_gives_the_margin() -> None:
    """Before: "−50%" for a difference of rates; "−margin" without its value."""
    ax = plots.compare(compare_frame(0.15))
    ax.figure.canvas.draw()
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert ticks and all(t.endswith(" pp") for t in ticks) and not [t for t in ticks if "%" in t]
    assert "0 pp" in ticks and "−50 pp" in ticks
    assert "percentage points" in ax.get_xlabel()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "−margin (0.15)" in legend
    # the tick labels do not run into each other
    assert _overlaps([t for t in ax.get_xticklabels() if t.get_text()]) == []


def test_pass_and_fail_differ_by_shape_too() -> None:
    """Before, red and green discs told pass from fail by colour alone."""
    ax = plots.gate(GATE)
    shape = {v: b.lines[0].get_marker() for v, b in zip(GATE["verdict"], errorbars(ax), strict=False)}
    assert len({shape["PASS"], shape["FAIL"], shape["INSUFFICIENT_EVIDENCE"], shape["REPORT_ONLY"]}) == 4
    # the legend shows each verdict with the shape its rows have
    legend = {t.get_text(): h.get_marker() for t, h in zip(ax.get_legend().get_texts(),
                                                          ax.get_legend().legend_handles, strict=True)}
    assert legend["pass"] == shape["PASS"] and legend["fail"] == shape["FAIL"]
    assert legend["insufficient evidence"] == shape["INSUFFICIENT_EVIDENCE"]
    assert legend["report only"] == shape["REPORT_ONLY"]
    # a regression too
    ax = plots.compare(compare_frame())
    bars = errorbars(ax)
    assert bars[0].lines[0].get_marker() != bars[1].lines[0].get_marker()


def test_a_name_is_drawn_as_written_on_one_line() -> None:
    """A criterion name is the suite's, and the plot drew its line breaks (a name ``x`` + eight line
    breaks + ``state_matches`` stood over its neighbours' rows, beside their verdicts) and its control characters
    (missing glyphs). Each is now drawn as its escape, as the terminal and the reports show it; a ``$`` still
    draws as a dollar."""
    name = "x\n\n\n\n\n\n\n\nstate_matches\r\x1b[2K $5"
    table = GATE.assign(criterion=[name, *GATE["criterion"][1:]])
    labels = [t.get_text() for t in plots.gate(table).get_yticklabels()]
    assert labels[0] == "x\\n\\n\\n\\n\\n\\n\\n\\nstate_matches\\r\\x1b[2K \\$5"
    assert all(label.isprintable() for label in labels)


def test_a_long_reason_in_the_title_is_wrapped_and_the_axes_keep_their_size(tmp_path: Path) -> None:
    """A gate's reason can be a long sentence (an unfinished run, a do-nothing baseline naming its run id): on one
    title line it was wider than the figure, and saving it squeezed the axes to nothing ("constrained_layout not
    applied because axes sizes collapsed to zero"). The title now wraps at 80 characters, words kept whole."""
    import warnings
    from types import SimpleNamespace

    reason = ("noop_baseline: run 20261203T054355Z-637bc0-and-a-long-suffix is the do-nothing baseline of the "
              "suite, so it has no release decision; gate the agent's own run instead of this one")
    g = SimpleNamespace(table=GATE, verdict="BLOCK", reason=reason, release=SimpleNamespace(confidence=0.95))
    ax = plots.gate(g)
    lines = ax.get_title(loc="left").split("\n")
    assert " ".join(lines) == f"Release gate: BLOCK ({reason})"  # every word, in order
    assert len(lines) == 4 and max(map(len, lines)) <= 80  # 190 characters, wrapped at word ends
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the collapse is only a warning
        ax.figure.savefig(tmp_path / "g.png", bbox_inches="tight")
    width, height = ax.get_window_extent().size
    assert width > 100 and height > 50


def test_no_rows_are_marked_midway_where_no_one_reads_a_rate_of_zero() -> None:
    """Before, ``n=0`` and ``no cases`` at the foot of the axis, beside a bar at 0%, read as a rate of 0."""
    frame = pd.concat([slice_frame(), pd.DataFrame([{**slice_frame().iloc[0].to_dict(), "bin": "[9, 10)",
                                                    "lower": 9, "upper": 10, "support": 0, "rate": np.nan,
                                                    "ci_low": np.nan, "ci_high": np.nan}])], ignore_index=True)
    ax = plots.slices(frame)
    marks = [t for t in ax.texts if t.get_text() in ("n=0", "no cases")]
    assert {t.get_text() for t in marks} == {"n=0", "no cases"}
    assert all(t.get_position()[1] == 0.5 and t.get_verticalalignment() == "center" for t in marks)
    plt.close(ax.figure)


def test_the_compare_axis_has_minor_ticks_between_its_few_labels() -> None:
    """Before, a narrow axis was labeled −50 pp and 0 pp only; the minor ticks read the margin's neighbourhood."""
    fig, ax = plt.subplots(figsize=(8, 2.5), dpi=100, layout="constrained")
    plots.compare(compare_frame(), ax=ax)
    fig.canvas.draw()
    major = ax.xaxis.get_majorticklocs()
    minor = [x for x in ax.xaxis.get_minorticklocs() if ax.get_xlim()[0] <= x <= ax.get_xlim()[1]]
    assert len(minor) >= 2 * (len(major) - 1)
    plt.close(fig)


#: One row of a validity table: a transform with every copy labeled, 22 of 24 valid.
VALIDITY_ROW = pd.DataFrame({"transform": ["t"], "derived": [24], "labeled": [24], "valid": [22], "rate": [22 / 24],
                             "ci_low": [0.74], "ci_high": [0.98], "minimum_validity": [0.85], "checked": [True]})


@pytest.mark.parametrize("what", ["gate", "compare", "validity"])
def test_a_gate_or_comparison_of_more_rows_than_a_figure_can_show_is_not_plotted(what: str) -> None:
    """Before, the figure grew half an inch a row without end: 500 criteria drew one 251.5 inches tall, a picture
    nobody reads. As a slice plot refuses more bins than a suite's slice may have, a table of more than 100 rows is
    refused in one line, before a figure is made; 100 rows are drawn, one errorbar each. The validity plot draws a
    row a transform the same way, and had no such limit."""
    def table(rows: int) -> pd.DataFrame:
        one = {"gate": GATE.iloc[[0]], "compare": compare_frame().iloc[[0]], "validity": VALIDITY_ROW}[what]
        key = "transform" if what == "validity" else "criterion"
        return pd.concat([one] * rows, ignore_index=True).assign(**{key: [f"c{i}" for i in range(rows)]})

    draw = {"gate": plots.gate, "compare": plots.compare, "validity": plots.validity}[what]
    figures = plt.get_fignums()
    with pytest.raises(op.OloproofError) as info:
        draw(table(101))
    assert str(info.value) == (f"plots.{what}: the table has 101 rows; a plot shows at most 100, as more cannot be "
                               "read: plot a selection of its rows (those that did not pass, say), or read the table")
    assert plt.get_fignums() == figures
    assert len(errorbars(draw(table(100)))) == 100


def test_the_refusal_counts_the_rows_with_thousands_separated() -> None:
    table = pd.concat([GATE.iloc[[0]]] * 1500, ignore_index=True).assign(criterion=[f"c{i}" for i in range(1500)])
    with pytest.raises(op.OloproofError, match=r"^plots\.gate: the table has 1,500 rows; a plot shows at most 100,"):
        plots.gate(table)
