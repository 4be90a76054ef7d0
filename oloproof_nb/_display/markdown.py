"""The one Markdown table writer (GitHub tables), with every cell escaped for Markdown."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

import pandas as pd

from ..errors import storable, terminal_text
from .html import numeric_column
from .theme import SHAPED_COLUMNS, Screen, cell_text, fmt_cell, fmt_checked, fmt_text, row_thresholds

__all__ = ["md_cell", "md_code", "md_link", "markdown_table", "table_cell", "text_table", "terminal_text"]


_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")


#: A tab, a line break or a carriage return is the writer's to handle (a cell or a code span makes it a space).
_SCREEN_ESCAPE = Screen(keep="\t\n\r")
_MD_ESCAPE = Screen(str.maketrans({"\\": "\\\\", "[": "\\[", "]": "\\]", "|": "\\|", "<": "&lt;", ">": "&gt;",
                                   "`": "\\`", "*": "\\*", "~": "\\~", "$": "\\$"}), keep="\t\n\r")
#: An underscore that could open or close emphasis: not between two letters or digits (snake_case stays as written).
_EMPHASIS_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
#: Where GitHub (its autolink extension) makes a link of bare text: the ``:`` of ``scheme://`` and the ``.`` of a
#: ``www.`` that starts a word. Escaped (``https\://``, ``www\.``), the text renders the same and links nowhere.
_AUTOLINK = re.compile(r":(?=//)|(?<![^\W_])(?:www)(?=\.)", re.IGNORECASE)


def md_cell(text: str) -> str:
    """Text safe inside a Markdown table cell or a line of prose: one line, shown as written, never markup.

    Line breaks (``\\n``, ``\\r``, ``\\r\\n``) become spaces; ``<`` and ``>`` become ``&lt;``/``&gt;``
    (a renderer shows them, never runs them: no ``<script>``, no ``<img onerror>``); an ``&`` that
    would start an entity becomes ``&amp;``; ``|`` is escaped (it would end the cell), and so are
    ``[`` and ``]`` (no link or image — ``![x](https://…)`` would load a remote picture), ``\\``
    (so no escape above can be undone), the ``:`` of ``https://`` and the ``.`` of a word-start ``www.`` (GitHub
    links such bare text: an agent's URL was a link in a report read there; an e-mail address still is one), and
    the backticks, ``*``, ``~`` and word-edge ``_`` that would make code, emphasis or strikethrough, and ``$``
    (GitHub reads the text between two as a formula: ``refund_$50_to_$100``); a bidirectional control
    (``\\u202e``) or a control character (``\\x1b``) is written as its escape.
    A CommonMark reader turns every ``\\`` + punctuation back into the punctuation, so the rendered text
    is the original one.

    Examples
    --------
    >>> print(md_cell("<script>a|b & c</script>\\r\\nnext"))
    &lt;script&gt;a\\|b & c&lt;/script&gt; next
    >>> print(md_cell("![x](https://e.example/p.png)"))
    !\\[x\\](https\\://e.example/p.png)
    """
    one_line = " ".join(str(text).replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    escaped = _EMPHASIS_UNDERSCORE.sub(r"\\_", _ENTITY.sub("&amp;", one_line).translate(_MD_ESCAPE))
    return _AUTOLINK.sub(_unlinked, escaped)


def _unlinked(found: re.Match[str]) -> str:
    """A match of :data:`_AUTOLINK` escaped: ``:`` as ``\\:``, ``www`` as ``www\\`` (before its ``.``)."""
    return "\\:" if found.group(0) == ":" else found.group(0) + "\\"


def md_link(label: str, target: str, *, image: bool = False) -> str:
    """A Markdown link (or image) to a relative file: the label escaped, the target percent-encoded.

    A file name of bytes that are not UTF-8 (read as ``\\udcff``) is linked by those bytes (``%FF``) and
    labeled with their escape: the link finds the file, and the page is UTF-8 text.

    Examples
    --------
    >>> md_link("gate plot", "r files/gate (1).png", image=True)
    '![gate plot](r%20files/gate%20%281%29.png)'
    >>> md_link("r\\udcff.csv", "r\\udcff.csv")
    '[r\\\\\\\\udcff.csv](r%FF.csv)'
    """
    return f"{'!' if image else ''}[{md_cell(storable(label))}]({quote(target, safe='/', errors='surrogateescape')})"


def md_code(text: str) -> str:
    """``text`` as an inline code span that no backtick inside it can end (CommonMark's longer fence), a
    bidirectional control or a control character written as its escape (as :func:`md_cell` writes them).

    Examples
    --------
    >>> md_code("v1"), md_code("a`b")
    ('`v1`', '`` a`b ``')
    """
    text = " ".join(str(text).replace("\r\n", "\n").replace("\r", "\n").split("\n")).translate(_SCREEN_ESCAPE)
    ticks = 1
    while "`" * ticks in text:  # longer than every run of backticks inside
        ticks += 1
    fence = "`" * ticks
    # CommonMark strips one space from each end when both ends have one: pad, so what is stripped is the pad
    edge_spaces = text.startswith(" ") and text.endswith(" ") and text.strip(" ") != ""
    pad = " " if ticks > 1 or text.startswith("`") or text.endswith("`") or edge_spaces else ""
    return f"{fence}{pad}{text}{pad}{fence}"


#: Widest cell a Markdown table pads its column to. A wider one (an agent's long answer) is written as it is, its
#: row's line longer than the others: padded to, it widened every row of its column (5,000 rows beside one answer
#: of 20,000 characters made a 100 MB file of a 64 KB CSV's table). Markdown needs no padding; it is for the eye.
MD_PAD_LIMIT = 200
_HELD = re.compile("\x00([0-9]+)\x00")


def markdown_table(df: pd.DataFrame, text: Callable[[Any], str] = cell_text, *, styled: bool = False) -> str:
    """A GitHub Markdown table of ``df``: cells from ``text``, escaped with :func:`md_cell`, numbers right-aligned.

    Each column is padded to its widest cell of at most :data:`MD_PAD_LIMIT` characters; a wider cell is
    written unpadded, so one long value does not widen every line.

    ``styled``: numeric ``ci_low``, ``ci_high``, ``threshold`` and ``minimum_validity`` columns as the styled HTML
    table shows them (:func:`~.theme.fmt_cell`: interval ends rounded outward, a threshold with every digit it has;
    a report's Markdown gate table showed a threshold of 0.9999999 as ``1.000``), ``checked`` as ``checked`` or
    ``no`` (an unchecked transform was an empty cell, where the HTML report says ``no``), and a cell's text cut to
    :data:`~.theme.TEXT_SHOWN` characters, as the HTML table cuts it (a reason of a megabyte in each of 20 rows).
    """
    numeric = [numeric_column(df[c]) for c in df.columns]
    shaped = [styled and num and c in SHAPED_COLUMNS for c, num in zip(df.columns, numeric, strict=True)]
    long: list[str] = []  # cells wider than MD_PAD_LIMIT, held out of the padding

    def padded(cell: str) -> str:
        if len(cell) <= MD_PAD_LIMIT:
            return cell
        long.append(cell.strip())  # as tabulate writes a cell
        return f"\x00{len(long) - 1}\x00"  # md_cell writes a NUL as its escape: no cell holds one

    def cell(column: Any, value: Any, shape: bool, threshold: Any) -> str:
        if styled and column == "checked":
            return fmt_checked(value)
        if shape:
            return fmt_cell(str(column), value, threshold=threshold)
        return fmt_text(text(value)) if styled else text(value)

    # interval ends on the side of their row's threshold that the computed ends are on (fmt_bound)
    thresholds = row_thresholds(df) if styled else [None] * len(df)
    rows = [[padded(md_cell(cell(c, v, shape, thr))) for c, v, shape in zip(df.columns, row, shaped, strict=True)]
            for row, thr in zip(df.itertuples(index=False, name=None), thresholds, strict=True)]
    align = ["right" if num else "left" for num in numeric]
    from tabulate import tabulate  # imported on first use: keeps ``import oloproof_nb`` fast

    table = str(tabulate(rows, headers=[padded(md_cell(str(c))) for c in df.columns], tablefmt="github",
                         disable_numparse=True, colalign=align if len(df.columns) and rows else None))
    # no colalign on a table without rows: tabulate 0.9 (the oldest supported) raised IndexError on it (a suite with
    # no criterion's report), and 0.10 writes the same header without it
    return _HELD.sub(lambda m: long[int(m.group(1))], table) if long else table


def table_cell(text: str) -> str:
    """``text`` as a cell of :func:`text_table`'s ``github`` table shows it: control characters escaped
    (:func:`terminal_text`) and ``|`` written ``\\|``, as a Markdown table writes it, so that a criterion named
    ``a|b`` does not end its cell and shift the columns after it.

    Examples
    --------
    >>> print(table_cell("refund|escalate"))
    refund\\|escalate
    """
    return terminal_text(text).replace("|", "\\|")


def text_table(rows: Sequence[Sequence[str]], headers: Sequence[str], tablefmt: str = "github") -> str:
    """A plain table for a terminal (cells already formatted; control characters escaped; in a ``github`` table
    ``|`` is written ``\\|``, :func:`table_cell`).

    ``tablefmt`` is ``github`` (default) or ``narrow``: two spaces between columns and a dashed line under
    the headers (for tables that must fit a terminal's width).

    Each column is as wide as its widest cell or header, with one space either side (no extra padding,
    so a table fits a narrow terminal); cells are left-aligned.

    Examples
    --------
    >>> print(text_table([["a", "10"]], ["criterion", "n"]))
    | criterion | n  |
    |-----------|----|
    | a         | 10 |
    """
    cell = terminal_text if tablefmt == "narrow" else table_cell  # no `|` separates a narrow table's columns
    head = [cell(h) for h in headers]
    body = [[cell(c) for c in r] for r in rows]
    widths = [max([len(h), *(len(r[i]) for r in body)]) for i, h in enumerate(head)]

    if tablefmt == "narrow":
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                         for r in [head, ["-" * w for w in widths], *body])

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    return "\n".join([line(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *(line(r) for r in body)])
