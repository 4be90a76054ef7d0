"""The face of op.compare: repr, HTML with the flipped cases, the paired case panel, and plots.compare."""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib
import pytest

import oloproof_nb as op

matplotlib.use("Agg")


class Answerer:
    def __init__(self, broken: frozenset[str] = frozenset()) -> None:
        self.broken, self.state, self.version = broken, {}, "v-" + ",".join(sorted(broken))

    def reset(self, state: dict[str, Any]) -> None:
        self.state = copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def run(self, input: dict[str, Any]) -> dict[str, Any]:
        answer = "wrong <b>" if input["tag"] in self.broken else input["answer"]
        return {"steps": [{"kind": "message", "role": "assistant", "content": str(answer)}], "answer": answer}


@pytest.fixture
def cmp(make_suite: Callable[..., Path], tmp_path: Path) -> op.Comparison:
    cases = [{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}", "answer": "ok"}, "expected": {"answer": "ok"}}
             for i in range(24)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}])
    suite = op.load_suite(root)
    base = op.run(suite, system=lambda: Answerer(), out=tmp_path / "b", progress=False)
    cand = op.run(suite, system=lambda: Answerer(frozenset({"c00", "c01", "c02", "c03", "c04", "c05", "c06",
                                                            "c07", "c08", "c09"})),
                  out=tmp_path / "c", progress=False)
    return op.compare(base.directory, cand.directory)


def test_repr_and_html(cmp: op.Comparison) -> None:
    assert isinstance(cmp, op.Comparison) and cmp.verdict == "REGRESSION"
    text = repr(cmp)
    assert text.startswith("Comparison: REGRESSION") and "pass->fail=10" in text
    # base first, then the candidate
    assert text.splitlines()[0].endswith(f" — {cmp.base.run_id} -> {cmp.candidate.run_id}, margin 0.02")
    assert "flipped: 10 rows in 10 cases, e.g. cmp.panel('c00')" in text
    html = cmp._repr_html_()
    assert "REGRESSION" in html and "Flipped cases" in html and "cmp.panel(&#39;c09&#39;)" in html
    assert "cmp.base.panel(case_id)" in html and "No flipped cases" not in html
    assert "more rows" not in html  # 10 flipped rows are all shown


def test_the_paired_panel_shows_both_runs(cmp: op.Comparison) -> None:
    panel = cmp.panel("c03")
    text = repr(panel)
    assert "answer_matches: pass -> fail  <- flipped" in text
    # the case's own rows only: one criterion, one row
    assert panel.rows[["case_id", "criterion", "base", "candidate"]].to_dict("records") == [
        {"case_id": "c03", "criterion": "answer_matches", "base": "pass", "candidate": "fail"}]
    assert cmp.base.run_id in text and cmp.candidate.run_id in text
    assert '"ok"' in text and '"wrong <b>"' in text
    html = panel._repr_html_()
    assert html.count("Case <code>c03</code>") == 3  # the header, then each run's own panel
    assert "wrong &lt;b&gt;" in html and "wrong <b>" not in html  # the candidate's answer, escaped
    assert panel.base.answer == "ok" and panel.candidate.answer == "wrong <b>"


def test_plot(cmp: op.Comparison) -> None:
    ax = op.plots.compare(cmp)
    dashed = [line for line in ax.lines if line.get_linestyle() == "--"]
    assert len(dashed) == 1 and list(dashed[0].get_xdata()) == [-0.02, -0.02]
    assert ax.get_title(loc="left") == "Candidate vs base: REGRESSION"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["answer_matches"]
    row = cmp.table.iloc[0]
    lo, hi = ax.get_xlim()
    assert lo < row["ci_low"] and hi > 0
    ax2 = op.plots.compare(cmp.table)  # the table alone works too
    assert ax2.get_title(loc="left") == "Candidate vs base"
    with pytest.raises(op.OloproofError, match="plots.compare: the table has no column 'difference'"):
        op.plots.compare(cmp.table.drop(columns=["difference"]))


def test_a_filtered_table_with_no_rows_plots_empty(cmp: op.Comparison) -> None:
    """Before, the REGRESSION rows of a comparison without any (no rows, no margin line) raised numpy's
    "number sections must be larger than 0" from a legend of zero columns."""
    ax = op.plots.compare(cmp.table[cmp.table["verdict"] == "NO_REGRESSION"])  # none: this one regressed
    assert ax.get_legend() is None and not [t.get_text() for t in ax.get_yticklabels() if t.get_text()]


def test_the_plot_title_says_why_when_no_criterion_does(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """A candidate that did not finish: every row NO_REGRESSION, the comparison INSUFFICIENT_EVIDENCE.

    The repr, the HTML and ``oloproof compare`` say why (``cmp.reason``); the plot's title said only
    INSUFFICIENT_EVIDENCE above rows that all read NO_REGRESSION (the gate's plot gives its reason).
    """
    import json
    import shutil

    cases = [{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}", "answer": "ok"}, "expected": {"answer": "ok"}}
             for i in range(24)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release={"regression": {"margin": 0.5}})
    suite = op.load_suite(root)
    base = op.run(suite, system=lambda: Answerer(), out=tmp_path / "b", progress=False)
    shutil.copytree(base.directory, tmp_path / "partial", ignore=shutil.ignore_patterns("frames"))
    manifest = json.loads((tmp_path / "partial" / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (tmp_path / "partial" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    cmp = op.compare(base.directory, tmp_path / "partial")
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE" and list(cmp.table["verdict"]) == ["NO_REGRESSION"]
    assert cmp.reason.startswith(f"the candidate run {cmp.candidate.run_id}: unfinished: ")
    title = op.plots.compare(cmp).get_title(loc="left")
    assert title.replace("\n", " ") == f"Candidate vs base: INSUFFICIENT_EVIDENCE ({cmp.reason})"  # wrapped at 80
    assert max(len(line) for line in title.split("\n")) <= 80
    assert repr(cmp).startswith(f"Comparison: INSUFFICIENT_EVIDENCE ({cmp.reason})")


def test_a_row_that_passes_in_neither_run_is_not_flipped(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """c00 fails in the base and is missing in the candidate (its system raised): pass/not-pass is the same in both
    runs, so the paired panel marks no flip, as ``cmp.flips`` holds none."""
    class Raiser(Answerer):
        def run(self, input: dict[str, Any]) -> dict[str, Any]:
            if input["tag"] in self.broken:
                raise RuntimeError("down")
            return super().run(input)

    cases = [{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}", "answer": "ok"}, "expected": {"answer": "ok"}}
             for i in range(4)]
    suite = op.load_suite(make_suite(cases, evaluators=[{"type": "answer_matches"}]))
    base = op.run(suite, system=lambda: Answerer(frozenset({"c00"})), out=tmp_path / "b", progress=False)
    cand = op.run(suite, system=lambda: Raiser(frozenset({"c00"})), out=tmp_path / "c", progress=False)
    cmp = op.compare(base.directory, cand.directory)
    assert cmp.flips.empty
    text = repr(cmp.panel("c00"))
    assert "  answer_matches: fail -> missing\n" in text and "flipped" not in text


def test_the_html_says_how_many_unpaired_cases_it_does_not_show(make_suite: Callable[..., Path],
                                                                  tmp_path: Path) -> None:
    """31 cases only the candidate's suite has: 30 are shown and the HTML says 1 more (31 − 30, a hand count; the
    frame holds them all)."""
    def cases(n: int) -> list[dict[str, Any]]:
        return [{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}", "answer": "ok"}, "expected": {"answer": "ok"}}
                for i in range(n)]

    base_root = make_suite(cases(24), evaluators=[{"type": "answer_matches"}])
    cand_root = make_suite(cases(55), evaluators=[{"type": "answer_matches"}])
    base = op.run(op.load_suite(base_root), system=lambda: Answerer(), out=tmp_path / "b", progress=False)
    cand = op.run(op.load_suite(cand_root), system=lambda: Answerer(), out=tmp_path / "c", progress=False)
    cmp = op.compare(base.directory, cand.directory)
    assert len(cmp.unpaired) == 31
    assert "… and 1 more: see <code>cmp.unpaired</code>" in cmp._repr_html_()


def test_the_html_table_signs_the_difference_and_its_interval(make_suite: Callable[..., Path],
                                                              tmp_path: Path) -> None:
    """The notebook's table of a comparison showed the upper end of a difference unsigned (``0.145``), read as a
    rate beside the two rates, where the text repr and ``oloproof compare`` sign it (``+0.145``); every
    difference and end now carries its sign in the HTML too, rounded outward as before."""
    cases = [{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}", "answer": "ok"}, "expected": {"answer": "ok"}}
             for i in range(24)]
    suite = op.load_suite(make_suite(cases, evaluators=[{"type": "answer_matches"}]))
    base, cand = (op.run(suite, system=lambda: Answerer(), out=tmp_path / name, progress=False) for name in "bc")
    cmp = op.compare(base, cand)
    row = cmp.table.iloc[0]
    # nothing changed: 0 [-(1 - 0.025^(1/24)), +(1 - 0.025^(1/24))], the exact bound of 0 discordant rows in 24
    bound = 1 - 0.025 ** (1 / 24)
    assert row.difference == 0 and row.ci_high == pytest.approx(bound) and row.ci_low == pytest.approx(-bound)
    high = f"{math.ceil(bound * 1000) / 1000:.3f}"  # 0.143: rounded outward
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", cmp._repr_html_())
    assert ["+0.000", f"-{high}", f"+{high}"] == [c for c in cells if c in ("+0.000", f"-{high}", f"+{high}")]
    assert high not in cells and "0.000" not in cells  # no unsigned end or difference beside the rates
    assert "1.000" in cells  # the rates stay unsigned
    assert f"+0.000 [-{high}, +{high}]" in repr(cmp)  # as the text repr shows them



def test_a_compare_row_without_a_reason_ends_with_its_counts_not_a_space(make_suite: Any, tmp_path: Path) -> None:
    """A row of the comparison's text whose reason is empty (a REPORT_ONLY criterion with no
    note) ends ``fail->pass=0``, no space after; the test of the gate's and compare's reprs saw none (every compare
    row there had a reason or a note). A row with a reason still ends with it."""
    import dataclasses

    root = make_suite([{"id": f"c{i}", "input": {"answer": "yes", "i": i}, "initial_state": {},
                        "expected": {"answer": "yes"}} for i in range(4)],
                      evaluators=[{"type": "answer_matches"}, {"type": "answer_matches", "criterion": "kept"}],
                      release={"regression": {"margin": 0.05, "criteria": ["answer_matches"]}})
    cmp = op.compare(*(op.run(op.load_suite(root), out=tmp_path / name, progress=False) for name in ("a", "b")))
    table = cmp.table.copy()
    assert table.set_index("criterion").loc["kept", "verdict"] == "REPORT_ONLY"
    table.loc[table["criterion"] == "kept", "reason"] = ""  # as compare gives it when no note applies
    rows = {line.split()[1].rstrip(":"): line for line in repr(dataclasses.replace(cmp, table=table)).splitlines()
            if line.startswith("  ") and " n=4 " in line}
    assert rows["kept"].endswith(" n=4 pass->fail=0 fail->pass=0"), rows
    reason = table.set_index("criterion").loc["answer_matches", "reason"]
    assert reason and rows["answer_matches"].endswith(f"fail->pass=0 {reason}"), rows


def test_a_low_end_equal_to_minus_margin_is_shown_on_its_side_with_the_margin_whole(
        make_suite: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two runs of 20 cases that all pass: the paired interval is ±(1 − 0.025^(1/20)) = ±0.1684334709830854 by hand
    (0 discordant rows, Clopper–Pearson). At a margin equal to that low end, ci_low = −margin exactly and the rule
    (ci_low ≥ −margin) says NO_REGRESSION. The low end shows every digit (three outward, -0.169, would lie below
    −margin); the margin was shown to six significant digits (``margin 0.168433``, in the repr, the HTML, the
    command's header and the plot's legend), above the low end shown beside it: a regression to the eye."""
    from oloproof_nb.cli import main

    cases = [{"id": f"c{i:02d}", "input": {"answer": "ok", "i": i}, "initial_state": {}, "expected": {"answer": "ok"}}
             for i in range(20)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}])
    base, cand = (op.run(op.load_suite(root), out=tmp_path / name, progress=False) for name in ("b", "c"))
    low = float(op.compare(base, cand).table.iloc[0]["ci_low"])
    assert low == pytest.approx(-(1 - 0.025 ** (1 / 20)), abs=1e-15)  # the hand bound
    margin = -low
    cmp = op.compare(base, cand, release={"regression": {"margin": margin}})
    row = cmp.table.iloc[0]
    assert (row["ci_low"], row["margin"], row["verdict"]) == (-margin, margin, "NO_REGRESSION")  # exactly at it
    shown = repr(margin)  # every digit, as release.yaml would hold it (no exponent at this size)
    assert "e" not in shown and len(shown) > 8  # the premise: more digits than six significant ones
    text = repr(cmp)
    assert text.splitlines()[0].endswith(f", margin {shown}") and f"[-{shown}, +0.169]" in text, text
    html = cmp._repr_html_()
    assert f"lies below −{shown}." in html and f'<td class="num">-{shown}</td>' in html
    legend = [t.get_text() for t in op.plots.compare(cmp).get_legend().get_texts()]
    assert f"−margin ({shown})" in legend
    release = tmp_path / "release.yaml"
    release.write_text(f"regression: {{margin: {shown}}}\n", encoding="utf-8")
    assert main(["compare", str(base.directory), str(cand.directory), "--release", str(release)]) == 0
    out = capsys.readouterr().out
    assert f"interval; margin {shown}\n" in out and re.search(rf"-{re.escape(shown)}\s+\+0\.169\s", out), out
    for number in re.findall(r"-0\.1\d+", out + text):  # no low end shown, nor margin, on the other side
        assert float(number) >= -margin
