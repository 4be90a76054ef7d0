"""html_table's cells: which are numbers (right-aligned), and which are shaped for the eye."""

from __future__ import annotations

import pandas as pd

from oloproof_nb._display.html import html_table


def test_a_text_column_is_not_right_aligned() -> None:
    """Only numeric, non-boolean columns get ``class="num"``: a text column of case ids and a boolean column are
    left-aligned (expected rows written by hand)."""
    df = pd.DataFrame({"case_id": ["c1"], "passed": [True], "n": [3]})
    table = str(html_table(df))
    assert "<tr><td>c1</td><td>True</td><td class=\"num\">3</td></tr>" in table


def test_an_export_table_keeps_every_digit_of_an_interval_end() -> None:
    """Unstyled (the ``.html`` export), ``ci_low`` and ``threshold`` are raw text (``repr`` of the float): only a
    styled table rounds an interval end outward for the eye."""
    df = pd.DataFrame({"ci_low": [0.123456789], "threshold": [0.9]})
    table = str(html_table(df))
    assert "<td class=\"num\">0.123456789</td><td class=\"num\">0.9</td>" in table
    styled = str(html_table(df, styled=True))
    assert "<td class=\"num\">0.123</td>" in styled  # rounded down, away from the threshold above it


def test_a_signed_table_writes_the_difference_with_its_sign() -> None:
    """A table of differences (``signed``): ``difference`` carries its sign (``+0.100``), a rate beside it does
    not (``0.800``)."""
    df = pd.DataFrame({"rate": [0.8], "difference": [0.1], "margin": [0.05]})
    table = str(html_table(df, lambda v: f"{v:.3f}", styled=True, signed=True))
    assert "<td class=\"num\">0.800</td><td class=\"num\">+0.100</td>" in table
