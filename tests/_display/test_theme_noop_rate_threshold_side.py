"""A gate's ``rate`` and a baseline's ``noop_rate`` shown beside the threshold stay on the side of it they are on.

``passes_when_idle`` is ``noop_rate ≥ threshold``: the rate is read against the threshold itself. A do-nothing
agent that passes 188 of 209 cases (0.89952…, by hand) at a threshold of 0.9 is not idle-passing, and its rate was
shown as ``0.900`` beside the threshold ``0.900`` and no ``idle`` mark, in the terminal table, the gate's repr and
its HTML, and the report; so was the agent's own rate of 188 of 209, read as meeting the threshold. Both are shown
as ``0.8995`` now; a rate on the threshold's side at three decimals keeps them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import oloproof_nb as op
from oloproof_nb._display.html import html_table
from oloproof_nb._display.markdown import markdown_table
from oloproof_nb._display.report import write_report
from oloproof_nb._display.theme import fmt_cell, fmt_number
from oloproof_nb.cli import main

N, PASSED = 209, 188
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
#: Passes the cases numbered 21 and above, whatever the agent does: the idle agent too.
CHECKS = f"def late(case, initial_state, final_state, trajectory):\n    return case.input['n'] >= {N - PASSED}\n"


def test_the_reference_numbers() -> None:
    """The premise, by hand: 188/209 is below 0.9, and three decimals round it to 0.900."""
    assert PASSED * 10 < 9 * N and fmt_number(PASSED / N) == "0.900"


def test_a_table_shows_the_noop_rate_on_its_thresholds_side() -> None:
    table = pd.DataFrame({"criterion": ["late", "even"], "threshold": [0.9, 0.9], "noop_rate": [PASSED / N, 0.9],
                          "passes_when_idle": [False, True]})
    assert fmt_cell("noop_rate", PASSED / N, threshold=0.9) == fmt_cell("rate", PASSED / N, threshold=0.9) == "0.8995"
    assert fmt_cell("noop_rate", 0.9, threshold=0.9) == "0.900"  # at the threshold: its three decimals
    assert fmt_cell("noop_rate", PASSED / N) == "0.900"  # no threshold to be on a side of
    html = str(html_table(table, fmt_number, styled=True))
    assert ">0.8995<" in html and ">0.900<" in html
    cells = [[c.strip() for c in line.strip("|").split("|")]
             for line in markdown_table(table, fmt_number, styled=True).splitlines()[2:]]
    assert cells == [["late", "0.900", "0.8995", ""], ["even", "0.900", "0.900", "yes"]]


@pytest.fixture
def suite(make_suite: Any) -> Path:
    cases = [{"id": f"c{i:03d}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(N)]
    root = make_suite(cases, system="sysmod:Desk", system_code=CODE,
                      evaluators=[{"type": "python", "name": "late", "check": "checks:late"}],
                      release={"criteria": {"late": 0.9}})
    (root / "checks.py").write_text(CHECKS, encoding="utf-8")
    return root


def test_the_gate_shows_the_rates_below_their_threshold(suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    run = op.run(op.load_suite(suite), out=tmp_path / "run", progress=False)
    idle = op.baseline(suite, out=tmp_path / "idle", progress=False)
    g = op.gate(run, baseline=idle)
    row = g.table.iloc[0]
    assert (row["noop_rate"], bool(row["passes_when_idle"])) == (PASSED / N, False)
    assert (row["rate"], row["verdict"]) == (PASSED / N, "INSUFFICIENT_EVIDENCE")
    assert "late ≥ 0.9: 0.8995 [" in repr(g)
    assert "noop=0.8995" in repr(g) and "0.900" not in repr(g).replace("≥ 0.9:", "")
    assert ">0.8995<" in g._repr_html_()
    monkeypatch.setenv("COLUMNS", "160")  # the table uncut
    main(["gate", str(tmp_path / "run"), "--baseline", str(tmp_path / "idle")])
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("| late "))
    assert [c.strip() for c in line.strip("|").split("|")][4:] == [
        "0.8995", "0.850–0.937", "0.900", "INSUFFICIENT_EVIDENCE", "0.8995", ""]  # rate, CI, thr, verdict, noop, idle
    report = write_report(run, tmp_path / "report.md", baseline=idle).read_text(encoding="utf-8")
    gate_row = next(x for x in report.splitlines() if x.startswith("| late "))
    assert " ".join(gate_row.split()).count("| 0.8995 |") == 2 and "0.900 |" in gate_row  # rate, noop; threshold
