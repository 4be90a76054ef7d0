"""A table for the eye (a report's, a repr's: ``styled``) shows a long text cell cut to ``TEXT_SHOWN`` characters;
a table written as an export keeps every cell whole."""

from __future__ import annotations

import pandas as pd

from oloproof_nb._display.html import html_table
from oloproof_nb._display.markdown import markdown_table
from oloproof_nb._display.theme import TEXT_SHOWN, fmt_number

LONG = "a<b " * 50_000  # 200,000 characters, each "<" escaped as "&lt;"


def _flips() -> pd.DataFrame:
    """Rows as a comparison's flips hold them: both sides' reasons."""
    return pd.DataFrame({"case_id": ["c0"], "criterion": ["policy"], "base_reason": [""], "candidate_reason": [LONG]})


def test_a_styled_html_table_cuts_a_long_cell_and_an_export_keeps_it() -> None:
    styled = str(html_table(_flips(), fmt_number, styled=True))
    kept = LONG[:TEXT_SHOWN - 1]
    assert kept.replace("<", "&lt;") + "…</td>" in styled
    assert styled.count("a&lt;b") == TEXT_SHOWN // 4  # 2,000 characters: 500 whole "a<b " and the cut
    assert len(styled) < 3 * TEXT_SHOWN
    assert str(html_table(_flips())).count("a&lt;b") == 50_000  # an export's table: every character


def test_a_styled_markdown_table_cuts_a_long_cell_and_an_export_keeps_it() -> None:
    styled = markdown_table(_flips(), fmt_number, styled=True)
    assert styled.count("a&lt;b") == TEXT_SHOWN // 4
    assert styled.count("…") == 1
    assert len(styled) < 3 * TEXT_SHOWN
    assert markdown_table(_flips()).count("a&lt;b") == 50_000
