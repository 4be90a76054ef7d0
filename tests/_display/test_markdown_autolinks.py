"""Reports as an agent's output channel: a Markdown cell makes no link of a bare URL, which GitHub's Markdown would
link."""

from __future__ import annotations

import html

from markdown_it import MarkdownIt

from oloproof_nb._display.markdown import md_cell


def test_a_url_in_a_markdown_cell_is_no_autolink_and_reads_as_written() -> None:
    """GitHub's Markdown (cmark-gfm's autolink extension) linked bare ``https://…`` and ``www.…`` text: an answer
    ``see https://evil.example/x`` quoted in a report's reason was a link there. Its ``:`` and ``.`` are escaped now
    (``https\\://``, ``www\\.``: checked with cmarkgfm, no ``<a``), and a CommonMark reader shows the text as
    written."""
    texts = ["see https://evil.example/x now", "(www.evil.example)", "_www.e.example_", "FTP://x.example", "a\\://b"]
    assert [md_cell(t) for t in texts] == ["see https\\://evil.example/x now", "(www\\.evil.example)",
                                           "\\_www\\.e.example\\_", "FTP\\://x.example", "a\\\\\\://b"]
    md = MarkdownIt("commonmark", {"html": True})
    assert [html.unescape(md.render(md_cell(t)).strip()[len("<p>"):-len("</p>")]) for t in texts] == texts
    assert md_cell("10:30 snake_case xwww.e.example") == "10:30 snake_case xwww.e.example"  # nothing else changes
