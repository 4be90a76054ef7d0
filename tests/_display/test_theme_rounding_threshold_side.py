"""An interval end shown beside its threshold stays on the side of it the computed end is on.

Every interval shown is rounded outward to three decimals. Beside a threshold with more decimals that put a PASS's
low end below its threshold (20 of 20 at threshold 0.8315: ci_low 0.83157, shown ``0.831`` beside ``0.8315``
and ``PASS``; the gate plot wrote ``ci_low 0.831 ≥ 0.8315``, which is false) and a FAIL's high end at or above
it (10 of 20 at 0.72805: ci_high 0.7280422, shown ``0.729``). Such an end is now shown with the decimals it takes:
``0.8315`` and ``0.728043``, still rounded outward. The ends are checked against SciPy's beta quantiles.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pytest
from scipy.stats import beta

import oloproof_nb as op
from oloproof_nb._display.markdown import markdown_table
from oloproof_nb._display.theme import fmt_bound, fmt_interval
from oloproof_nb.cli import main

matplotlib.use("Agg")

#: 20 of 20 and 10 of 20 at 95%, Clopper–Pearson from SciPy (the outside reference).
LOW_20_OF_20 = float(beta.ppf(0.025, 20, 1))  # 0.8315665…
HIGH_10_OF_20 = float(beta.ppf(0.975, 11, 10))  # 0.7280421…
PASS_AT, FAIL_AT = 0.8315, 0.72805  # ci_low ≥ 0.8315: PASS; ci_high < 0.72805: FAIL

CODE = '''
class Desk:
    version = "desk-1"
    def reset(self, state):
        pass
    def snapshot(self):
        return {}
    def run(self, input):
        return {"steps": [], "answer": "ok", "status": "completed"}
'''
CHECKS = "def half(case, initial_state, final_state, trajectory):\n    return case.input['n'] % 2 == 0\n"


@pytest.fixture
def run(make_suite: Any, tmp_path: Path) -> op.Run:
    cases = [{"id": f"c{i:02d}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(20)]
    evaluators = [{"type": "answer_matches"}, {"type": "python", "name": "half", "check": "checks:half"}]
    root = make_suite(cases, system="sysmod:Desk", system_code=CODE, evaluators=evaluators,
                      release={"criteria": {"answer_matches": PASS_AT, "half": FAIL_AT}})
    (root / "checks.py").write_text(CHECKS, encoding="utf-8")
    return op.run(op.load_suite(root), out=tmp_path / "run", progress=False)


def test_the_reference_numbers() -> None:
    """The premise, by SciPy alone: each end three decimals out sits on the other side of its threshold."""
    assert PASS_AT <= LOW_20_OF_20 and math.floor(LOW_20_OF_20 * 1000) / 1000 < PASS_AT
    assert HIGH_10_OF_20 < FAIL_AT and math.ceil(HIGH_10_OF_20 * 1000) / 1000 >= FAIL_AT


def test_an_end_gets_the_decimals_that_keep_it_on_its_side() -> None:
    assert fmt_bound(LOW_20_OF_20, "low") == "0.831"  # no threshold: three decimals, as before
    assert fmt_bound(LOW_20_OF_20, "low", threshold=PASS_AT) == "0.8315"
    # 4 decimals give 0.7281 and 5 give 0.72805, the threshold itself, which reads as not below it
    assert fmt_bound(HIGH_10_OF_20, "high", threshold=FAIL_AT) == "0.728043"
    # an end already on its side keeps three decimals; a missing threshold decides nothing
    assert fmt_interval(0.55455, 0.8261, threshold=0.555) == "[0.554, 0.827]"
    assert fmt_bound(LOW_20_OF_20, "low", threshold=math.nan) == "0.831"
    # 0.6999999999999999 is below 0.7 (no PASS at 0.7): three decimals made it 0.700 (a tolerance of 1e-12)
    assert fmt_bound(0.6999999999999999, "low", threshold=0.7) == "0.6999"
    assert fmt_bound(0.7, "low", threshold=0.7) == "0.700"  # the threshold itself: a PASS, shown equal
    assert fmt_bound(0.000039, "high", sign=True, threshold=0.00004) == "+0.000039"


def _ends(run: op.Run) -> tuple[float, float]:
    table = op.gate(run).table.set_index("criterion")
    assert table.loc["answer_matches", "verdict"] == "PASS" and table.loc["half", "verdict"] == "FAIL"
    low, high = float(table.loc["answer_matches", "ci_low"]), float(table.loc["half", "ci_high"])
    assert low == pytest.approx(LOW_20_OF_20, abs=1e-12) and high == pytest.approx(HIGH_10_OF_20, abs=1e-12)
    return low, high


def _shown_on_its_side(text: str) -> None:
    """``text`` shows the PASS's low end as 0.8315 and the FAIL's high end as 0.728043, never three decimals."""
    assert re.search(r"0\.8315(?!\d)", text) and "0.728043" in text, text
    assert "0.729" not in text and not re.search(r"0\.831(?!\d)", text), text


def test_the_terminal_tables_the_repr_and_the_html_repr(run: op.Run, capsys: pytest.CaptureFixture[str]) -> None:
    _ends(run)
    for wide in ([], ["--wide"]):
        assert main(["gate", str(run.directory), *wide]) == 1
        out = capsys.readouterr().out
        _shown_on_its_side(out)
        assert "0.8315–1.000" in out or "| 0.8315 " in out
    g = op.gate(run)
    _shown_on_its_side(repr(g))
    assert "answer_matches ≥ 0.8315: 1.000 [0.8315, 1.000]" in repr(g)
    html = g._repr_html_()
    _shown_on_its_side(html)
    assert '<td class="num">0.8315</td>' in html and '<td class="num">0.728043</td>' in html


def test_the_report_in_markdown_and_html(run: op.Run, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         plots_not_encoded: None) -> None:
    _ends(run)
    for name in ("r.md", "r.html"):
        assert main(["report", str(run.directory), "--out", str(tmp_path / name)]) == 1
        text = (tmp_path / name).read_text(encoding="utf-8")
        _shown_on_its_side(text)
        plain = text.replace("\\[", "[").replace("\\]", "]")  # Markdown escapes the brackets
        assert "[0.8315, 1.000]" in plain and "[0.271, 0.728043]" in plain
    capsys.readouterr()


def test_the_plot_note_is_true(run: op.Run) -> None:
    low, high = _ends(run)
    ax = op.plots.gate(op.gate(run))
    notes = [t.get_text() for t in ax.texts]
    assert "20/20  PASS  ci_low 0.8315 ≥ 0.8315" in notes  # was "ci_low 0.831 ≥ 0.8315"
    assert "10/20  FAIL  ci_high 0.728043 < 0.72805" in notes  # was "ci_high 0.729 < 0.72805"
    assert 0.8315 <= low and high < 0.728043 < 0.72805  # each note holds for the computed end, and rounds outward


def test_a_styled_markdown_table_reads_each_rows_threshold() -> None:
    import pandas as pd

    table = pd.DataFrame({"criterion": ["a", "b"], "ci_low": [LOW_20_OF_20, LOW_20_OF_20],
                          "ci_high": [1.0, 1.0], "threshold": [PASS_AT, 0.5]})
    text = markdown_table(table, styled=True)
    assert " 0.8315 | " in text and " 0.831 | " in text  # row b's threshold is 0.5: three decimals are enough
    assert "0.8315665290169146" in markdown_table(table)  # unstyled (an export): raw, as before


def test_a_comparison_shows_its_low_end_on_the_side_of_minus_margin(make_suite: Any, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Two runs of 20 cases that all pass: the paired interval is ±(1 − 0.025^(1/20)) = ±0.16843 (0 discordant rows,
    Clopper–Pearson), which at a margin of 0.1685 is NO_REGRESSION (ci_low ≥ −0.1685). Three decimals outward
    showed ``-0.169`` beside ``margin 0.1685``, a regression to the eye, and the HTML table wrote the margin as
    ``0.169``; now ``-0.1685`` and ``0.1685``."""
    cases = [{"id": f"c{i:02d}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(20)]
    root = make_suite(cases, system="sysmod:Desk", system_code=CODE, evaluators=[{"type": "answer_matches"}],
                      release={"criteria": {"answer_matches": 0.5}, "regression": {"margin": 0.1685}})
    suite = op.load_suite(root)
    base, cand = (op.run(suite, out=tmp_path / name, progress=False) for name in ("base", "cand"))
    cmp = op.compare(base, cand)
    row = cmp.table.iloc[0]
    bound = 1 - 0.025 ** (1 / 20)  # by hand: the Clopper–Pearson upper bound of 0 of 20
    assert row["verdict"] == "NO_REGRESSION" and row["ci_low"] == pytest.approx(-bound, abs=1e-12)
    assert -0.1685 <= row["ci_low"] and math.floor(row["ci_low"] * 1000) / 1000 < -0.1685  # the premise
    assert "[-0.1685, +0.169]" in repr(cmp)
    html = cmp._repr_html_()
    assert '<td class="num">-0.1685</td>' in html and '<td class="num">0.1685</td>' in html
    assert "-0.169<" not in html and ">0.169<" not in html
    assert main(["compare", str(base.directory), str(cand.directory)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"-0\.1685\s+\+0\.169\s", out) and "-0.169 " not in out, out


def test_a_rate_that_is_not_whole_never_shows_as_a_whole_number(make_suite: Any, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str],
                                                                plots_not_encoded: None) -> None:
    """1,999 of 2,000 at threshold 1: a FAIL whose rate three decimals show as ``1.000`` (the row read "1.000 ≥ 1,
    FAIL"); every display shows ``0.9995``, a hand count."""
    cases = [{"id": f"c{i:04d}", "input": {"n": i}, "expected": {"answer": "no" if i == 7 else "ok"}}
             for i in range(2000)]
    root = make_suite(cases, system="sysmod:Desk", system_code=CODE, evaluators=[{"type": "answer_matches"}],
                      release={"criteria": {"answer_matches": 1.0}})
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    g = op.gate(run)
    row = g.table.set_index("criterion").loc["answer_matches"]
    assert (row["passed"], row["n"], row["verdict"]) == (1999, 2000, "FAIL") and row["rate"] == 1999 / 2000
    assert ": 0.9995 [" in repr(g) and '<td class="num">0.9995</td>' in g._repr_html_()
    for wide in ([], ["--wide"]):
        assert main(["gate", str(run.directory), *wide]) == 1
        out = capsys.readouterr().out
        assert "0.9995" in out, out  # the interval's ends are 0.997 and 0.99999, the threshold 1.000
    assert main(["report", str(run.directory), "--out", str(tmp_path / "r.md")]) == 1
    assert "0.9995" in (tmp_path / "r.md").read_text(encoding="utf-8")
    capsys.readouterr()


def test_fmt_number_takes_the_decimals_a_value_needs_not_to_look_whole() -> None:
    from oloproof_nb._display.theme import fmt_number, fmt_signed

    assert [fmt_number(x) for x in (19999 / 20000, 0.0004, 2.0004, 1.0, 0.0, 0.5, 0.99949)] == [
        "0.99995", "0.0004", "2.0004", "1.000", "0.000", "0.500", "0.999"]
    assert [fmt_signed(x) for x in (-0.00004, 0.0, 0.12)] == ["-0.00004", "+0.000", "+0.120"]
    assert fmt_number(1e-20) == "1e-20"  # 17 decimals still show 0: the value as it is
    # a missing difference is blank, as fmt_number shows it (a NaN raised ValueError from round())
    assert (fmt_signed(float("nan")), fmt_signed(np.float64("nan")), fmt_number(float("nan"))) == ("", "", "")
    assert [fmt_number(x) for x in (-0.9996, np.float32(0.9999), np.float64(19999 / 20000))] == [
        "-0.9996", "0.9999", "0.99995"]


def test_a_value_no_17_decimals_show_is_shown_as_it_is_and_signed_as_a_difference() -> None:
    """3e-18 at 17 decimals still reads 0.00000000000000000: shown as it is (``3e-18``), ``+3e-18`` as a difference;
    the infinities signed too, and a table's difference cell (the mutants it catches: an 18th decimal, an unsigned
    difference, an unsigned +∞, a difference cell at three decimals)."""
    from oloproof_nb._display.theme import fmt_number, fmt_signed

    assert (fmt_number(3e-18), fmt_signed(3e-18), fmt_signed(-3e-18)) == ("3e-18", "+3e-18", "-3e-18")
    assert (fmt_number(math.inf), fmt_signed(math.inf), fmt_signed(-math.inf)) == ("∞", "+∞", "−∞")
    # a table of differences: 1 of 2,500 case runs lost is -0.0004, not -0.000
    from oloproof_nb._display.theme import fmt_cell

    assert (fmt_cell("difference", -1 / 2500, sign=True), fmt_cell("difference", 0.00004, sign=True)) == (
        "-0.0004", "+0.00004")
