"""HTML through jinja2 templates with autoescaping: one table writer, and the reprs, panel and report pages.

Every value a user wrote (answers, case ids, reasons, tool names) reaches a page
through a template, and the environment writes every ``{{ … }}`` with
:func:`html_text`, the one rule for text in HTML: ``<>&"'`` escaped, and every
character :func:`~oloproof_nb.errors.terminal_text` writes as an escape (``\\x1b``,
``\\u202e``, a zero-width space, a line separator) shown as that escape. Markup comes
only from the templates in ``_display/templates/`` and from :class:`markupsafe.Markup`
built here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

import pandas as pd
from markupsafe import Markup, escape

from .theme import (
    ESCAPE,
    SHAPED_COLUMNS,
    Screen,
    cell_text,
    colour,
    contrast,
    fmt_cell,
    fmt_checked,
    fmt_number,
    fmt_text,
    preview,
    row_thresholds,
)

if TYPE_CHECKING:
    from jinja2 import Environment

__all__ = ["render", "html_text", "html_table", "numeric_column", "step_text"]


def _marked(escaped: str) -> str:
    """An escape in a mark of its own, so a reader tells ``\\u202e`` shown from the same six characters typed. Its
    attributes are unquoted: the mark holds no quote, so even inside an attribute's value it cannot end it."""
    return f"<span class=oloproof-escape style=color:{ESCAPE}>{escaped}</span>"


#: The rule's three tables: text in an element; the lines of a ``<pre>`` (a traceback keeps its line breaks);
#: the value of an attribute or a ``<title>``, where no element can be (the escape unmarked).
_TEXT, _LINES, _PLAIN = Screen(shown=_marked), Screen(keep="\n", shown=_marked), Screen()


def html_text(text: Any, *, lines: bool = False, plain: bool = False) -> Markup:
    """``text`` as HTML shows it as written: ``<>&"'`` escaped (markupsafe), and every character
    :func:`~oloproof_nb.errors.terminal_text` writes as an escape written as that escape (in a mark of its own).

    A right-to-left override (``\\u202e``) reversed the rest of a line in a browser (a FAIL cell read as
    something else), an ESC or a zero-width space made two different case ids look the same, a line separator
    broke a cell's line. Every value a template writes goes through here (the environment's ``finalize``), so
    do the filters that build markup; a number or the library's own text has no such character, and is left as
    it is.

    Parameters
    ----------
    text : any
        The value (``str()`` of anything but a string).
    lines : bool
        Keep line breaks (``\\r\\n`` read as one): the text of a ``<pre>``.
    plain : bool
        The escape without its mark: the value of an attribute or the page's ``<title>``.

    Examples
    --------
    >>> html_text("ok\\u202e<b>", plain=True)
    Markup('ok\\\\u202e&lt;b&gt;')
    """
    value = str(text)
    if value.isprintable():  # most values: nothing to show as an escape
        return escape(value)
    if lines:
        value = value.replace("\r\n", "\n")
    table = _PLAIN if plain else _LINES if lines else _TEXT
    return Markup(str(escape(value)).translate(table))  # noqa: S704 - escaped first; the table adds only its marks


def _finalize(value: Any) -> Any:
    """Every ``{{ … }}`` of a template: markup built here as it is, anything else by :func:`html_text`."""
    return value if isinstance(value, Markup) else html_text(value)


def _wbr(text: Any) -> Markup:
    """Escaped text with a line-break opportunity after every ``_`` (long snake_case words wrap)."""
    return Markup("_<wbr>").join(html_text(part) for part in str(text).split("_"))


def _inline(text: str) -> Markup:
    """The report's prose markup: ``**bold**`` and backtick code spans; everything else escaped."""
    out = []
    for i, part in enumerate(str(text).split("`")):
        if i % 2:
            out.append(Markup("<code>{}</code>").format(html_text(part)))
        else:
            bits = str(part).split("**")
            out.append(Markup("").join(Markup("<b>{}</b>").format(html_text(b)) if j % 2 else html_text(b)
                                       for j, b in enumerate(bits)))
    return Markup("").join(out)


def step_text(step: dict[str, Any] | None, limit: int = 160) -> str:
    """One stored step as text: ``tool(args) -> result``, or ``name: content`` for a message."""
    if step is None:
        return ""
    if step.get("kind") == "tool_call":
        args, result = preview(step.get("args"), limit // 2), preview(step.get("result"), limit // 2)
        return f"{step.get('tool')}({args}) -> {result}"
    who = step.get("name") or step.get("role") or "message"
    return f"{who}: {preview(step.get('content'), limit)}"


@cache
def _environment() -> Environment:
    """The one jinja2 environment (built on first render: ``import oloproof_nb`` does not import jinja2)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(loader=PackageLoader("oloproof_nb._display", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False,
                      finalize=_finalize)
    env.filters.update(wbr=_wbr, inline=_inline, preview=preview, contrast=contrast, colour=colour, num=fmt_number,
                       text=fmt_text, step_text=step_text, lines=lambda text: html_text(text, lines=True),
                       plain=lambda text: html_text(text, plain=True))
    return env


def render(template: str, **context: Any) -> str:
    """Render ``templates/<template>`` with autoescaping, every value written by :func:`html_text`."""
    return _environment().get_template(template).render(**context)


def numeric_column(series: pd.Series) -> bool:
    """True for a numeric, non-boolean column (right-aligned in every table)."""
    return bool(pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series))


def html_table(df: pd.DataFrame, text: Callable[[Any], str] = cell_text, *, styled: bool = False,
               signed: bool = False) -> Markup:
    """The one HTML table writer: a ``<table>`` of ``df``, every cell escaped, numbers right-aligned.

    Returns :class:`markupsafe.Markup` (safe HTML: every value in it was escaped), so a template
    places it as markup instead of escaping it a second time.

    Parameters
    ----------
    df : pandas.DataFrame
    text : callable
        Cell text: raw (:func:`~oloproof_nb._display.theme.cell_text`, exports) or for the eye
        (:func:`~oloproof_nb._display.theme.fmt_number`, reports and reprs).
    styled : bool
        Colour verdict words, show ``checked`` as a coloured word, wrap ``reason`` cells and
        snake_case headers, and cut a cell's text to :data:`~oloproof_nb._display.theme.TEXT_SHOWN` characters
        (reports and reprs).
    signed : bool
        A table of differences (``Comparison``): with ``styled``, ``difference`` and its interval ends carry their
        sign (``+0.000``, ``-0.144``, ``+0.144``), as the text repr and ``oloproof compare`` show them.
    """
    numeric = [numeric_column(df[c]) for c in df.columns]
    # interval ends are shown on the side of their row's threshold that the computed ends are on (fmt_bound): a
    # gate's threshold, a validity table's minimum_validity, or a comparison's −margin
    thresholds = [-m for m in df["margin"]] if signed and "margin" in df.columns else row_thresholds(df)
    rows = []
    for row, thr in zip(df.itertuples(index=False, name=None), thresholds, strict=True):
        cells = []
        for col, value, num in zip(df.columns, row, numeric, strict=True):
            cell: dict[str, Any] = {"text": text(value), "cls": "num" if num else "", "colour": "", "wbr": False}
            if styled and col == "verdict":
                cell.update(colour=colour(value), wbr=True)
            elif styled and col == "checked":
                word = "checked" if bool(value) else "not checked"
                cell.update(text=fmt_checked(value), colour=colour(word))
            elif styled and col == "reason":
                cell.update(cls="wrap", wbr=True)
            elif styled and str(col).endswith(" CI"):
                cell.update(cls="ci")
            elif styled and num and (col in SHAPED_COLUMNS or (signed and col == "difference")):
                # rounded outward; a threshold with its digits
                cell.update(text=fmt_cell(col, value, sign=signed, threshold=thr))
            if styled:  # a reason of a megabyte in every row of a report's table: shown cut, kept whole in the frame
                cell.update(text=fmt_text(cell["text"]))
            cells.append(cell)
        rows.append(cells)
    return Markup(render("table.html", headers=[str(c) for c in df.columns], rows=rows, styled=styled))
