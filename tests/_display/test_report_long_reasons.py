"""A check's reason of any length: the report's tables and the case panel show its first characters, and the frames
and the Markdown report's CSV files keep it whole. Shown whole, a check that explained itself with a megabyte wrote it
into every row of the cases that did not pass: a report of 16 MB, and a panel of 1 MB in the notebook cell."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb._display.report import write_report
from oloproof_nb._display.theme import TEXT_SHOWN

CHECKS = '''
def explains_at_length(case, initial_state, final_state, trajectory):
    return False, "refused: " + "x" * 100_000 + " END"
'''
REASON = "refused: " + "x" * 100_000 + " END"


@pytest.fixture
def long_run(make_suite: Callable[..., Path], tmp_path: Path) -> op.Run:
    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(3)]
    root = make_suite(cases, evaluators=[{"type": "python", "name": "policy", "check": "checks:explains_at_length"}])
    (root / "checks.py").write_text(CHECKS, encoding="utf-8")
    return op.run(op.load_suite(root), out=tmp_path / "run", progress=False)


@pytest.mark.usefixtures("plots_not_encoded")
def test_a_report_shows_the_start_of_a_long_reason_and_its_csv_keeps_it_whole(long_run: op.Run,
                                                                              tmp_path: Path) -> None:
    assert list(long_run.verdicts["reason"]) == [REASON] * 3  # stored whole
    shown = REASON[:TEXT_SHOWN - 1] + "…"
    page = write_report(long_run, tmp_path / "r.html").read_text(encoding="utf-8")
    assert page.count(shown) == 3  # each of the three failing rows, cut
    assert "END" not in page
    assert len(page) < 3 * TEXT_SHOWN + 60_000  # 300 KB of reasons before
    text = write_report(long_run, tmp_path / "r.md").read_text(encoding="utf-8")
    assert text.count(shown) == 3
    assert "END" not in text
    with open(tmp_path / "r_files" / "failing_1.csv", encoding="utf-8", newline="") as handle:
        assert [row["reason"] for row in csv.DictReader(handle)] == [REASON] * 3  # the raw table: whole


def test_a_panel_shows_the_start_of_a_long_reason_and_keeps_it_whole(long_run: op.Run) -> None:
    panel = long_run.panel("c0")
    assert list(panel.verdicts["reason"]) == [REASON]
    shown = REASON[:TEXT_SHOWN - 1] + "…"
    html, text = panel._repr_html_(), repr(panel)
    assert shown in html and shown in text
    assert "END" not in html and "END" not in text
    assert len(html) < TEXT_SHOWN + 20_000 and len(text) < TEXT_SHOWN + 5_000
