"""A validity table's ``rate`` shown beside its ``minimum_validity`` stays on the side of it that it is on.

A transform is checked when ``rate >= minimum_validity`` (the point rate). 188 valid labels of 209 pairs (0.89952…,
by hand) is below a minimum of 0.9 and the transform is not checked, yet the report's validity table (HTML and
Markdown, through ``html_table`` and ``markdown_table``) showed the rate as ``0.900`` beside ``0.9`` and ``no``.
"""

from __future__ import annotations

import pandas as pd

from oloproof_nb._display.html import html_table
from oloproof_nb._display.markdown import markdown_table
from oloproof_nb._display.theme import fmt_number, row_thresholds

N, VALID = 209, 188


def _validity_table() -> pd.DataFrame:
    return pd.DataFrame({"transform": ["reword", "even"], "derived": [N, N], "labeled": [N, N],
                         "valid": [VALID, VALID], "rate": [VALID / N, 0.9], "minimum_validity": [0.9, 0.9],
                         "checked": [False, True]})


def test_the_reference_numbers() -> None:
    """The premise, by hand: 188/209 is below 0.9, and three decimals round it to 0.900."""
    assert VALID * 10 < 9 * N and fmt_number(VALID / N) == "0.900"


def test_the_rows_threshold_is_the_minimum_validity() -> None:
    assert row_thresholds(_validity_table()) == [0.9, 0.9]
    assert row_thresholds(pd.DataFrame({"threshold": [0.8], "minimum_validity": [0.9]})) == [0.8]
    assert row_thresholds(pd.DataFrame({"rate": [0.5, 0.6]})) == [None, None]


def test_html_shows_the_validity_rate_below_its_minimum() -> None:
    html = str(html_table(_validity_table(), fmt_number, styled=True))
    assert ">0.8995<" in html  # the unchecked transform
    assert html.count(">0.900<") == 3  # the two minimums, and the rate exactly at its minimum (three decimals)


def test_markdown_shows_the_validity_rate_below_its_minimum() -> None:
    cells = [[c.strip() for c in line.strip("|").split("|")]
             for line in markdown_table(_validity_table(), fmt_number, styled=True).splitlines()[2:]]
    assert [row[4] for row in cells] == ["0.8995", "0.900"]
    assert [row[6] for row in cells] == ["no", "checked"]
