"""The one Markdown table writer (GitHub tables), with every cell escaped for Markdown."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
from tabulate import tabulate

from .html import numeric_column
from .theme import cell_text

__all__ = ["md_cell", "md_code", "markdown_table", "text_table"]


_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")


def md_cell(text: str) -> str:
    """Text safe inside a Markdown table cell: one line, ``|`` escaped, no raw HTML tag or entity.

    ``<`` and ``>`` become ``&lt;``/``&gt;`` (a renderer shows them, never runs them), an ``&``
    that would start an entity becomes ``&amp;``; any other ``&`` is left as written.

    Examples
    --------
    >>> md_cell("<script>a|b & c</script>\\r\\nnext")
    '&lt;script&gt;a\\\\|b & c&lt;/script&gt; next'
    """
    one_line = " ".join(str(text).replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    escaped = _ENTITY.sub("&amp;", one_line).replace("<", "&lt;").replace(">", "&gt;")
    return escaped.replace("|", "\\|")


def md_code(text: str) -> str:
    """``text`` as an inline code span that no backtick inside it can end (CommonMark's longer fence).

    Examples
    --------
    >>> md_code("v1"), md_code("a`b")
    ('`v1`', '`` a`b ``')
    """
    text = " ".join(str(text).replace("\r", "\n").split("\n"))
    ticks = 1
    while "`" * ticks in text:  # longer than every run of backticks inside
        ticks += 1
    fence = "`" * ticks
    pad = " " if ticks > 1 or text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_table(df: pd.DataFrame, text: Callable[[Any], str] = cell_text) -> str:
    """A GitHub Markdown table of ``df``: cells from ``text``, escaped with :func:`md_cell`, numbers right-aligned."""
    rows = [[md_cell(text(v)) for v in row] for row in df.itertuples(index=False, name=None)]
    align = ["right" if numeric_column(df[c]) else "left" for c in df.columns]
    return str(tabulate(rows, headers=[md_cell(str(c)) for c in df.columns], tablefmt="github",
                        disable_numparse=True, colalign=align if len(df.columns) else None))


def text_table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str:
    """A plain GitHub-style table for a terminal (cells already formatted)."""
    return str(tabulate([list(r) for r in rows], headers=list(headers), tablefmt="github", disable_numparse=True))
