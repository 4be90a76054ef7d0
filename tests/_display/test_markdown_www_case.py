"""The ``www.`` escape is case-blind, as it must be for a GFM renderer built on micromark
(micromark-extension-gfm-autolink-literal takes each ``w`` in either case, so ``WWW.x.example`` is a link there;
cmark-gfm, GitHub's, takes lower case only), and the escaped text keeps its case."""

from __future__ import annotations

from oloproof_nb._display.markdown import md_cell


def test_an_upper_case_www_is_escaped_as_written() -> None:
    assert md_cell("see WWW.evil.example or Www.evil.example") == "see WWW\\.evil.example or Www\\.evil.example"
