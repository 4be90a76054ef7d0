"""Plots of untrusted text: a name drawn in an axis label is drawn as written, and a name or reason of 100,000
characters draws a plot of bounded size."""

from __future__ import annotations

import io
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import oloproof_nb as op  # noqa: E402
from oloproof_nb import plots  # noqa: E402
from oloproof_nb._display.report import write_report  # noqa: E402
from oloproof_nb.cli import main  # noqa: E402

GATE_COLUMNS = ["criterion", "n", "passed", "rate", "ci_low", "ci_high", "threshold", "verdict", "method"]
DOLLARS = "refund_$50_to_$100"  # matplotlib reads "$50_to_$" as a formula: "50_to_" is no formula it can parse


def _size(ax: Any) -> tuple[int, int]:
    """Width and height in pixels of the PNG the report embeds of ``ax`` (its own savefig settings)."""
    from oloproof_nb._display.report import _png

    png = _png(ax)
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")  # the IHDR chunk
    return width, height


def test_a_criterion_named_with_dollars_is_drawn_where_the_axis_label_names_its_method() -> None:
    """When rows differ in method, the x-axis label names the one or two rows of the rarer method: there the name
    was drawn raw, and ``refund_$50_to_$100`` stopped the draw (ValueError from matplotlib's formula parser; in
    ``oloproof report``, an internal error, exit 2). The y-axis labels escaped it already."""
    table = pd.DataFrame([[DOLLARS, 5, 3, 0.6, 0.2, 0.9, 0.5, "INSUFFICIENT_EVIDENCE", "wilson"],
                          ["b", 5, 3, 0.6, 0.2, 0.9, 0.5, "INSUFFICIENT_EVIDENCE", "cluster_t"],
                          ["c", 5, 3, 0.6, 0.2, 0.9, 0.5, "INSUFFICIENT_EVIDENCE", "cluster_t"]],
                         columns=GATE_COLUMNS)
    ax = plots.gate(table)
    assert ax.get_xlabel() == r"pass rate and interval (cluster t; Wilson for refund_\$50_to_\$100)"
    assert _size(ax)[0] > 0  # drawn
    slice_rows = pd.DataFrame({"slice": "tool_calls:1", "bin": ["<1", "≥1"], "criterion": DOLLARS,
                               "support": [5, 6], "rate": [0.6, 0.5], "ci_low": [0.2, 0.1], "ci_high": [0.9, 0.9],
                               "method": ["wilson", "cluster_t"]})
    ax = plots.slices(pd.concat([slice_rows, slice_rows.assign(criterion="b", method="cluster_t")]))
    assert r"Wilson for refund_\$50_to_\$100 <1" in ax.get_xlabel()
    assert _size(ax)[0] > 0


def test_a_report_of_a_reduced_criterion_named_with_dollars_is_written(make_suite: Any, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """End to end: beside a mean criterion (cluster_t, as the run has epochs), a criterion reduced with pass^2 gets
    Clopper–Pearson on its cases, so the gate plot's axis label names it. ``oloproof report`` stopped with
    ``internal error: ValueError: 50_to_``, exit 2; now the report is written and the command exits on the gate."""
    code = '''
class Desk:
    version = "desk-1"
    def reset(self, state):
        pass
    def snapshot(self):
        return {}
    def run(self, input):
        return {"steps": [], "answer": "ok" if input["n"] % 4 else "no", "status": "completed"}
'''
    checks = "def chk(case, initial_state, final_state, trajectory):\n    return case.input['n'] % 3 != 0\n"
    cases = [{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(12)]
    evaluators = [{"type": "answer_matches"}, {"type": "python", "name": DOLLARS, "check": "checks:chk"}]
    root = make_suite(cases, system="sysmod:Desk", system_code=code, epochs=2, evaluators=evaluators,
                      release={"criteria": {"answer_matches": 0.5, DOLLARS: {"threshold": 0.5, "reduce": "pass^2"}},
                               "allow_approximate_methods": True, "min_clusters": 2})
    (root / "checks.py").write_text(checks, encoding="utf-8")
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    table = op.gate(run).table.set_index("criterion")
    assert table.loc[DOLLARS, "method"] == "clopper_pearson" and table.loc["answer_matches", "method"] == "cluster_t"
    assert 0 < table.loc[DOLLARS, "rate"] < 1  # by hand: 8 of 12 cases pass both epochs (n % 3 != 0)
    assert table.loc[DOLLARS, "passed"] == 8
    assert main(["report", str(run.directory), "--out", str(tmp_path / "r.html")]) == 1  # INSUFFICIENT_EVIDENCE
    out, err = capsys.readouterr()
    assert "internal error" not in err and out.splitlines()[-1].startswith("gate: BLOCK — exit 1: ")
    assert "refund_$50_to_$100 (pass^2)" in (tmp_path / "r.html").read_text(encoding="utf-8")
    write_report(run, tmp_path / "r.md")  # and in Markdown, whose plots are files beside it
    assert (tmp_path / "r_files" / "gate.png").stat().st_size > 0


@pytest.mark.parametrize("length", [65, 100_000])
def test_a_long_name_is_cut_in_its_middle_and_the_plot_keeps_its_size(length: int) -> None:
    """A criterion named in 100,000 characters drew a gate plot 901,072 pixels wide (a 377-megapixel PNG in the
    report, which Pillow refuses as a decompression bomb). A name longer than 64 characters is drawn cut in its
    middle, its start and end kept, in the gate, compare, validity and slice plots alike: the PNG stays a few
    thousand pixels wide at most."""
    name = "s" * (length - 4) + "/end"
    short = "short"
    gate_rows = pd.DataFrame([[name, 3, 3, 1.0, 0.3, 1.0, 0.8, "PASS", "clopper_pearson"],
                              [short, 3, 1, 0.33, 0.01, 0.9, 0.8, "INSUFFICIENT_EVIDENCE", "clopper_pearson"]],
                             columns=GATE_COLUMNS)
    ax = plots.gate(gate_rows)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[1] == short and len(labels[0]) == 64 and labels[0].startswith("s" * 31 + "…")
    assert labels[0].endswith("/end")
    width, height = _size(ax)
    assert width < 3000 and height < 1000
    compare_rows = pd.DataFrame([[name, -0.1, -0.2, 0.0, 10, 1, 0, 0.02, "INSUFFICIENT_EVIDENCE"]],
                                columns=["criterion", "difference", "ci_low", "ci_high", "n", "pass_to_fail",
                                         "fail_to_pass", "margin", "verdict"])
    ax = plots.compare(compare_rows)
    assert len(ax.get_yticklabels()[0].get_text()) == 64 and _size(ax)[0] < 3000
    validity_rows = pd.DataFrame([[name, 4, 4, 4, 1.0, 0.4, 1.0, 0.8, True]],
                                 columns=["transform", "derived", "labeled", "valid", "rate", "ci_low", "ci_high",
                                          "minimum_validity", "checked"])
    ax = plots.validity(validity_rows)
    assert len(ax.get_yticklabels()[0].get_text()) == 64 and _size(ax)[0] < 3000
    slice_rows = pd.DataFrame({"slice": "tool_calls:1", "bin": ["<1", "≥1"], "criterion": name, "support": [5, 6],
                               "rate": [0.6, 0.5], "ci_low": [0.2, 0.1], "ci_high": [0.9, 0.9]})
    ax = plots.slices(slice_rows)
    assert [len(t.get_text()) for t in ax.get_legend().get_texts()] == [64] and _size(ax)[0] < 3000


def test_a_reason_of_100000_characters_draws_a_title_of_six_lines_and_the_axes_keep_their_size() -> None:
    """A gate's reason quotes a system version as given (``mixed_systems: … 'v1' → 'v2'``): a version of 100,000
    characters, one word, drew a title as wide (a PNG 1,500,070 pixels wide). The title now breaks a word longer than
    its line and stops at 6 lines with ``…`` (``gate.reason`` and the reports hold it whole); a new figure grows
    with its title, so the axes are not squeezed to nothing. A ``$`` in it is still drawn as a dollar."""
    rows = pd.DataFrame([["a", 3, 3, 1.0, 0.3, 1.0, 0.8, "PASS", "clopper_pearson"]], columns=GATE_COLUMNS)
    reason = "mixed_systems: system version 'v" + "9" * 100_000 + "' → 'v2 $5'"
    g = SimpleNamespace(table=rows, verdict="BLOCK", reason=reason, release=SimpleNamespace(confidence=0.95))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "constrained_layout not applied" is only a warning
        ax = plots.gate(g)
        width, height = _size(ax)
    lines = ax.get_title(loc="left").split("\n")
    assert len(lines) == 6 and max(map(len, lines)) <= 80 and lines[-1].endswith("…")
    assert lines[0].startswith("Release gate: BLOCK (mixed_systems: system version 'v999")
    assert width < 2000 and height < 1000
    ax_height = ax.get_window_extent().height
    assert ax_height > 50
    dollars = SimpleNamespace(table=rows, verdict="BLOCK", reason="unfinished: $5 to $10", release=g.release)
    ax = plots.gate(dollars)
    assert ax.get_title(loc="left") == r"Release gate: BLOCK (unfinished: \$5 to \$10)"
    assert _size(ax)[0] > 0


def test_the_png_size_is_read_from_its_header() -> None:
    """The helper above reads a PNG's size from its IHDR chunk: checked against Pillow on a small plot."""
    from PIL import Image

    from oloproof_nb._display.report import _png

    rows = pd.DataFrame([["a", 3, 3, 1.0, 0.3, 1.0, 0.8, "PASS", "clopper_pearson"]], columns=GATE_COLUMNS)
    png = _png(plots.gate(rows))
    assert Image.open(io.BytesIO(png)).size == (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big"))
