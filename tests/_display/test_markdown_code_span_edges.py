"""Edges of md_code and markdown_table's headers, read back with an outside CommonMark reader (markdown-it-py)."""

from __future__ import annotations

import pandas as pd
import pytest
from _hostile_files import render_markdown

from oloproof_nb._display.markdown import markdown_table, md_code


@pytest.mark.parametrize(("text", "written"), [
    (" padded ", "`  padded  `"),  # CommonMark strips one space from each end when both ends have one
    ("`x", "`` `x ``"),
    ("x`", "`` x` ``"),
    ("a`b", "`` a`b ``"),
    ("v1", "`v1`"),
])
def test_a_code_span_keeps_its_edge_spaces_and_backticks(text: str, written: str) -> None:
    """The spans written out by hand from CommonMark's rules (a fence longer than every backtick run inside;
    one space of padding at each end that the reader strips), and the code the reader shows is the text exactly,
    spaces at its ends included."""
    assert md_code(text) == written
    html = render_markdown(md_code(text)).text
    assert html.strip("\n") == text


def test_a_header_holding_a_bar_stays_one_column() -> None:
    """A column named ``a|b`` (a frame the user exports) is escaped in the header as in the cells: the reader
    shows two columns, not three."""
    page = render_markdown(markdown_table(pd.DataFrame({"a|b": ["x"], "n": [1]})))
    assert page.rows == [["a|b", "n"], ["x", "1"]]
