"""The one theme: colours of every verdict word, the number format for the eye, and value previews.

Plots, HTML reprs, the case panel and reports all take their colours and
formats from here; stored numbers are never rounded (formatting is for display
only, exports stay raw).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Mapping
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any

import numpy as np
import pandas as pd

from .._config.files import float_text, yaml_number
from .._core.paths import Absent
from ..errors import quote, terminal_text

__all__ = ["COLOURS", "INK", "MUTED", "GRID", "HIGHLIGHT", "ESCAPE", "CRITERION_COLOURS", "MARKERS", "MARK_ALPHA",
           "colour", "marker", "fmt_number", "preview", "contrast", "Screen",
           "cell_text", "json_text", "PAGE_CSS", "TABLE_CSS", "table_of", "fmt_interval", "fmt_bound", "TEXT_SHOWN",
           "fmt_text"]

#: Colour of every verdict word: gate verdicts, row verdicts, pair results, validity.
COLOURS: dict[str, str] = {
    "PASS": "#1a7f37", "FAIL": "#cf222e", "INSUFFICIENT_EVIDENCE": "#9a6700", "REPORT_ONLY": "#6e7781",
    "BLOCK": "#cf222e", "NO_REGRESSION": "#1a7f37", "REGRESSION": "#cf222e",
    "pass": "#1a7f37", "fail": "#cf222e", "missing": "#9a6700",
    "holds": "#1a7f37", "BROKEN": "#cf222e",
    "checked": "#1a7f37", "not checked": "#9a6700",
}
INK = "#24292f"
MUTED = "#6e7781"
GRID = "#d0d7de"
#: Background of the faulted step in a replay table: translucent amber, so the row's text keeps the page's own
#: colour and stays readable on a dark theme too (an opaque light yellow behind JupyterLab's light-on-dark text
#: made the faulted step unreadable). The row also says ``← fault``: never told by colour alone.
HIGHLIGHT = "rgba(212, 167, 44, 0.25)"
#: Colour of a character an HTML page shows as its escape (``\\u202e``, ``\\x1b``): a reader tells it from the same
#: text typed out.
ESCAPE = "#8250df"
#: Criterion colours in slice plots: tab10 without its red and green, which read as fail / pass.
CRITERION_COLOURS = ("#1f77b4", "#ff7f0e", "#9467bd", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")
#: Plot marker of every verdict word, so a verdict never reads by colour alone (a colour-blind reader tells
#: a pass from a fail by the shape): a pass is a disc, a fail a cross, an undecided row a diamond.
MARKERS: dict[str, str] = {
    "PASS": "o", "FAIL": "X", "INSUFFICIENT_EVIDENCE": "D", "REPORT_ONLY": "s",
    "NO_REGRESSION": "o", "REGRESSION": "X",
    "checked": "o", "not checked": "D",
}
#: Opacity of a threshold, minimum or −margin mark: drawn thin and behind the intervals, so an interval end
#: at the mark stays visible (a cap at 0.857 vanished under an opaque threshold bar at 0.85).
MARK_ALPHA = 0.5

TABLE_CSS = ("table{border-collapse:collapse;font:13px/1.4 system-ui,sans-serif}"
             "th,td{border:1px solid #d0d7de;padding:3px 8px;vertical-align:top}"
             "th{background:#f6f8fa;text-align:left}"
             "td.num{text-align:right;font-variant-numeric:tabular-nums}td.ci{white-space:nowrap}"
             "td.wrap{min-width:200px;font-size:12px}")
PAGE_CSS = ("body{font:14px/1.5 system-ui,-apple-system,'Segoe UI',sans-serif;color:#24292f;max-width:1200px;"
            "margin:24px auto;padding:0 16px}h1{font-size:24px;margin-bottom:4px}h2{font-size:19px;"
            "border-bottom:1px solid #d0d7de;padding-bottom:4px;margin-top:32px}h3{font-size:15px}"
            "img{max-width:100%;display:block;margin:12px 0}.verdict{font-size:18px;font-weight:700}"
            ".muted{color:#57606a;font-size:12.5px}.tables{overflow-x:auto}.tables table{font-size:12.5px}")


class Screen(dict[int, str]):
    """A ``str.translate`` table: every character a screen acts on as its escape, as :func:`terminal_text` writes
    it (the one rule of what the terminal, the plots, the reports and the HTML pages show as an escape): a
    bidirectional control reorders what a reader sees (rtl\\u202eexe.txt shows as rtltxt.exe), a control character
    acts on a terminal showing the file (``cat report.md``: ``\\x1b[2K`` erases a line), a zero-width space makes
    two ids look the same. Entries are made on first sight of a character, so the table stays small.

    Parameters
    ----------
    table : mapping, optional
        Entries of the format's own (Markdown's ``|`` and backticks), looked up first.
    keep : str
        Characters the writer handles itself, kept as they are (a line break in a ``<pre>``).
    shown : callable
        How an escape is written (HTML marks it as one); by default as it is.
    """

    def __init__(self, table: Mapping[int, str] | None = None, *, keep: str = "",
                 shown: Callable[[str], str] = str) -> None:
        super().__init__(table or {})
        self.keep, self.shown = keep, shown

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        self[code] = ch if ch.isprintable() or ch in self.keep else self.shown(terminal_text(ch))
        return self[code]


def colour(word: Any) -> str:
    """The colour of a verdict word (ink for anything else).

    Examples
    --------
    >>> colour("PASS"), colour("fail"), colour("other")
    ('#1a7f37', '#cf222e', '#24292f')
    """
    return COLOURS.get(str(word), INK)


def marker(word: Any) -> str:
    """The plot marker of a verdict word (a disc for anything else).

    Examples
    --------
    >>> marker("PASS"), marker("FAIL"), marker("other")
    ('o', 'X', 'o')
    """
    return MARKERS.get(str(word), "o")


def is_blank(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def fmt_number(value: Any) -> str:
    """A cell for the eye: floats with three decimals, ∞ for infinities, booleans yes/blank, missing blank.

    A float that is not a whole number never shows as one: it takes the decimals it needs to differ from the
    whole number three would round it to (a rate of 19,999 of 20,000 showed as ``1.000`` beside a threshold of 1
    and a FAIL; it shows as ``0.99995``), its shortest text at most.

    Examples
    --------
    >>> fmt_number(0.12345), fmt_number(float("inf")), fmt_number(None), fmt_number(True), fmt_number(3)
    ('0.123', '∞', '', 'yes', '3')
    >>> fmt_number(19999 / 20000), fmt_number(0.00004), fmt_number(0.9996), fmt_number(1.0), fmt_number(0.99949)
    ('0.99995', '0.00004', '0.9996', '1.000', '0.999')
    """
    if is_blank(value):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else ""
    if isinstance(value, (float, np.floating)):
        return float_text(float(value))
    return str(value)


def fmt_signed(value: float) -> str:
    """A difference for the eye, with its sign, as :func:`fmt_number` shows a float (never a whole number for one that
    is not); missing (NaN, None): blank, as :func:`fmt_number` shows it.

    Examples
    --------
    >>> fmt_signed(0.0), fmt_signed(-0.1204), fmt_signed(0.00004), fmt_signed(float("nan"))
    ('+0.000', '-0.120', '+0.00004', '')
    """
    if is_blank(value):  # a NaN reached round() in float_text: ValueError
        return ""
    return float_text(float(value), sign=True)


def fmt_level(confidence: float | np.floating[Any]) -> str:
    """A confidence level as a percentage with the digits it has: 0.995 is ``99.5%`` (whole percents showed
    it as ``100%``, and 0.975 as ``98%``), and 0.9999999 is ``99.99999%`` (six significant digits showed it as
    ``100%``, a level no interval has), from the level's shortest text in its own precision (``repr`` of a float;
    a NumPy float's own: ``np.float32(0.95)`` is ``95%``, where the float it widens to read ``94.9999988079071%``).

    Examples
    --------
    >>> fmt_level(0.95), fmt_level(0.995), fmt_level(0.975), fmt_level(0.57), fmt_level(0.9999999)
    ('95%', '99.5%', '97.5%', '57%', '99.99999%')
    """
    text = (np.format_float_positional(confidence, unique=True, trim="-") if isinstance(confidence, np.floating)
            else repr(float(confidence)))
    return f"{(Decimal(text) * 100).normalize():f}%"


def fmt_interval(low: Any, high: Any, sign: bool = False, threshold: Any = None) -> str:
    """An interval for the eye, ``[low, high]`` to three decimals, rounded outward (the low end down, the high
    end up): the interval shown always holds the one computed, so a low end just under a threshold never shows
    equal to it (0.55455 beside a threshold of 0.555 showed as 0.555, and the verdict was not PASS). ``sign``:
    differences, ``+0.020``. ``threshold``: the row's threshold, which each end shown stays on the same side
    of (:func:`fmt_bound`).

    Examples
    --------
    >>> fmt_interval(0.55455, 0.8261), fmt_interval(-0.0204, 0.0311, sign=True)
    ('[0.554, 0.827]', '[-0.021, +0.032]')
    >>> fmt_interval(0.83157, 0.99, threshold=0.8315), fmt_interval(-0.0204, float("inf"), sign=True)
    ('[0.8315, 0.990]', '[-0.021, +∞]')
    """
    return f"[{fmt_bound(low, 'low', sign, threshold)}, {fmt_bound(high, 'high', sign, threshold)}]"


def _outward(x: float, side: str, digits: int) -> float:
    """``x`` rounded down (``side`` ``"low"``) or up to ``digits`` decimals, from its shortest text (``repr``): the
    float the user and the gate compare, never its binary expansion (0.7 is 0.69999… in binary)."""
    step = Decimal(1).scaleb(-digits)
    return float(Decimal(repr(x)).quantize(step, rounding=ROUND_FLOOR if side == "low" else ROUND_CEILING))


def fmt_bound(value: Any, side: str, sign: bool = False, threshold: Any = None) -> str:
    """One end of an interval rounded outward to three decimals (see :func:`fmt_interval`); missing: blank.

    Given the row's ``threshold`` (a finite number), the end is shown with more decimals where three would put it
    on the other side of the threshold than the computed end, the side the verdict is read from (``PASS`` when
    ci_low ≥ threshold, ``FAIL`` when ci_high < threshold): a ci_low of 0.83157 at threshold 0.8315 is a PASS,
    and showed as 0.831 beside it (the plot said ``ci_low 0.831 ≥ 0.8315``); it shows as 0.8315. As many
    decimals are taken as that needs, the shortest text of the end at most, so the shown end is still rounded
    outward.

    Examples
    --------
    >>> fmt_bound(0.83157, "low"), fmt_bound(0.83157, "low", threshold=0.8315)
    ('0.831', '0.8315')
    >>> fmt_bound(0.79949, "high", threshold=0.7995)
    '0.79949'
    """
    if is_blank(value) or isinstance(value, (bool, np.bool_)):
        return ""
    x = float(value)
    if math.isinf(x):  # with its sign when the finite ends carry one: [-0.021, +∞], not [-0.021, ∞]
        return float_text(x, sign=sign)
    # 1e-9 of a thousandth: a value that is a whole thousandth up to floating-point noise stays that thousandth
    ends = math.floor(x * 1000 + 1e-9) if side == "low" else math.ceil(x * 1000 - 1e-9)
    shown, digits = ends / 1000, 3
    if _is_threshold(threshold):
        thr = float(threshold)

        def other_side(end: float) -> bool:  # ci_low ≥ threshold passes, ci_high < threshold fails: one split
            return (end >= thr) != (x >= thr)

        while other_side(shown) and digits < 17:
            digits += 1
            shown = _outward(x, side, digits)
        if other_side(shown):  # an end and a threshold apart by less than 1e-17: the end as it is
            return f"{x:+}" if sign else repr(x)
    return f"{shown:+.{digits}f}" if sign else f"{shown:.{digits}f}"


def _is_threshold(value: Any) -> bool:
    """Whether ``value`` is a finite number a verdict can be read against (not a missing one, a flag or text)."""
    return (isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
            and math.isfinite(float(value)))


def fmt_threshold(value: Any) -> str:
    """A threshold to three decimals when that is every digit it has, else with every digit it has: a threshold
    is the user's number, and 0.9999999 shown as ``1.000`` beside a low end of ``0.999`` and a FAIL read as "it
    needs 1"; 0.8995 shown as ``0.900`` beside a low end of ``0.899`` and a PASS read as a PASS below it.

    Examples
    --------
    >>> fmt_threshold(0.9), fmt_threshold(0.9999999), fmt_threshold(0.8995), fmt_threshold(None)
    ('0.900', '0.9999999', '0.8995', '')
    """
    if is_blank(value) or isinstance(value, (bool, np.bool_)) or not isinstance(value, (float, int, np.number)):
        return fmt_number(value)
    x = float(value)
    if not math.isfinite(x) or abs(x * 1000 - round(x * 1000)) < 1e-9:
        return fmt_number(x)
    return yaml_number(x)


def fmt_rate(value: Any, threshold: Any = None) -> str:
    """A rate shown beside the row's ``threshold`` (a gate's ``rate``; a baseline's ``noop_rate``, which
    ``passes_when_idle`` reads against it: ``noop_rate ≥ threshold``) as :func:`fmt_number` shows it, with more
    decimals where those would put it on the other side of the threshold than the rate is: 188 of 209 (0.89952…)
    showed as ``0.900`` beside a threshold of 0.9 and no ``passes_when_idle``; it shows as ``0.8995``. Without a
    finite threshold, :func:`fmt_number`.

    Examples
    --------
    >>> fmt_rate(188 / 209), fmt_rate(188 / 209, threshold=0.9), fmt_rate(0.9, threshold=0.9), fmt_rate(None, 0.9)
    ('0.900', '0.8995', '0.900', '')
    """
    text = fmt_number(value)
    if not text or isinstance(value, (bool, np.bool_)) or not _is_threshold(threshold):
        return text
    x, thr = float(value), float(threshold)
    if not math.isfinite(x):
        return text
    digits = len(text.partition(".")[2])
    while (float(text) >= thr) != (x >= thr) and digits < 17:
        digits += 1
        text = f"{x:.{digits}f}"
    return text if (float(text) >= thr) == (x >= thr) else repr(x)


#: Characters shown of one text the run wrote (a verdict's reason, an error message) in a table or a panel for the
#: eye; the frames and exports keep it whole. A check that returned a reason of a megabyte made a report of 16 MB
#: (every row of the cases that did not pass held it) and a panel of 1 MB in the notebook cell.
TEXT_SHOWN = 2000


def fmt_text(value: Any, limit: int = TEXT_SHOWN) -> str:
    """``str(value)`` cut to ``limit`` characters, its end written as ``…`` when cut (a table or panel for the
    eye: :data:`TEXT_SHOWN`).

    Examples
    --------
    >>> fmt_text("fail: " + "x" * 10, limit=8), fmt_text("ok")
    ('fail: x…', 'ok')
    """
    return _cut(str(value), limit)


def fmt_checked(value: Any) -> str:
    """A validity table's ``checked`` cell as a table shown as text writes it: ``checked``, or ``no`` (the HTML and
    Markdown tables alike)."""
    return "checked" if bool(value) else "no"


#: The numeric columns a table shown as text writes by :func:`fmt_cell` (the HTML and Markdown tables alike).
SHAPED_COLUMNS = ("ci_low", "ci_high", "threshold", "minimum_validity", "margin", "rate", "noop_rate")


def row_thresholds(df: pd.DataFrame) -> list[Any]:
    """The number each row of ``df``'s ``rate`` and interval ends are shown beside (:func:`fmt_cell`'s
    ``threshold``): a gate table's ``threshold``, a validity table's ``minimum_validity`` (188 of 209 valid, 0.89952…,
    showed as ``0.900`` beside a minimum of 0.9 and ``checked: no``), else None.

    Examples
    --------
    >>> row_thresholds(pd.DataFrame({"rate": [0.5], "minimum_validity": [0.9]}))
    [0.9]
    """
    for column in ("threshold", "minimum_validity"):
        if column in df.columns:
            values: list[Any] = df[column].tolist()
            return values
    return [None] * len(df)


def fmt_cell(column: str, value: Any, sign: bool = False, threshold: Any = None) -> str:
    """One cell of a table shown as text: ``ci_low`` and ``ci_high`` rounded outward (:func:`fmt_bound`, as every
    interval shown, on the side of the row's ``threshold`` the computed end is on), ``threshold``,
    ``minimum_validity`` and ``margin`` (the user's numbers) by :func:`fmt_threshold`, ``rate`` and ``noop_rate`` on
    the side of the row's ``threshold`` they are on (:func:`fmt_rate`), anything else by :func:`fmt_number`.
    ``sign``: a table of differences, whose ``difference`` and interval ends carry their sign (``+0.000``,
    ``[-0.144, +0.144]``, as ``Comparison`` shows them).

    Examples
    --------
    >>> fmt_cell("ci_high", 0.1441), fmt_cell("ci_high", 0.1441, sign=True), fmt_cell("difference", 0.0, sign=True)
    ('0.145', '+0.145', '+0.000')
    """
    if column in ("ci_low", "ci_high") and not isinstance(value, str):
        return fmt_bound(value, "low" if column == "ci_low" else "high", sign, threshold)
    # a minimum of 0.9584 shown as 0.958 beside a rate of 0.958; a comparison's margin of 0.1685 shown as 0.169
    if column in ("threshold", "minimum_validity", "margin"):
        return fmt_threshold(value)
    if column in ("rate", "noop_rate"):  # beside the threshold: on the side of it the rate is on
        return fmt_rate(value, threshold)
    if sign and column == "difference" and isinstance(value, (float, np.floating)):  # +∞ too; NaN: blank
        return fmt_signed(float(value))
    return fmt_number(value)


def preview(value: Any, limit: int = 160) -> str:
    """A value as short JSON-like text (``<absent>`` for ABSENT), its objects' keys sorted (an object has no order:
    an expected and an actual value read side by side in one order), cut to ``limit`` characters.

    Examples
    --------
    >>> preview({"b": 1, "a": 2}), preview("x" * 10, limit=5), preview(10 ** 5000)
    ('{"a": 2, "b": 1}', '"xxx…', '<int of 16610 bits>')
    """
    return _cut(_preview_text(value, limit), limit)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _preview_text(value: Any, limit: int) -> str:
    """The text :func:`preview` cuts (a value that is no JSON: its repr, bounded at ``limit + 1`` characters)."""
    if isinstance(value, Absent):
        return "<absent>"
    try:
        return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    except (TypeError, ValueError, RecursionError):  # keys that do not sort, an int too long to print, deep nesting
        return quote(value, limit + 1)  # repr, bounded, never raising


def contrast(value: Any, other: Any, limit: int = 160) -> str:
    """:func:`preview` of ``value`` shown beside ``other``: where both previews read alike though the texts of the
    values differ (two long texts, or objects, that part past the cut), the part of ``value``'s text from shortly
    before the first character where they differ, so the two shown differ where the values do.

    Before, a note expected to end ``clause 4.2(b)`` and left ending ``clause 4.2(c)`` was shown as the same 59
    characters on both sides of its ``BAD`` row.

    Examples
    --------
    >>> a, b = "x" * 70 + "A", "x" * 70 + "B"
    >>> preview(a, 12) == preview(b, 12), contrast(a, b, 12), contrast(b, a, 12)
    (True, '…xxxxxxxxxA"', '…xxxxxxxxxB"')
    >>> contrast("a", "b", 12), contrast("x" * 20, "x" * 20, 12)
    ('"a"', '"xxxxxxxxxx…')
    """
    text, peer = _preview_text(value, limit), _preview_text(other, limit)  # each value written once
    shown = _cut(text, limit)
    if shown != _cut(peer, limit) or limit < 8:
        return shown
    at = _first_difference(text, peer)
    if text == peer or at < limit - 1:  # equal texts, or a difference the previews show already
        return shown
    # two thirds of the room before the difference, or as much as the longer text leaves: one place on both sides
    start = min(at - (limit - 2) * 2 // 3, max(len(text), len(peer)) - (limit - 1))
    window = "…" + text[start:start + limit - 1]
    return window if start + limit - 1 >= len(text) else window[: limit - 1] + "…"


def _first_difference(text: str, peer: str) -> int:
    """The first index where ``text`` and ``peer`` differ (the shorter one's length where it begins the other),
    found by halving the span still in doubt, each half compared as one slice: a character at a time, two texts of
    10 MB that differ at their end took 8 s a row of a panel."""
    low, high = 0, min(len(text), len(peer))  # text[:low] == peer[:low]; the first difference is at high or before
    while low < high:
        middle = (low + high + 1) // 2
        if text[low:middle] == peer[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _json_default(value: Any) -> Any:
    if isinstance(value, Absent):
        return {"$absent": True}
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (pd.Timestamp, dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def json_text(value: Any) -> str:
    if isinstance(value, Absent):
        return json.dumps({"$absent": True})
    return json.dumps(value, ensure_ascii=False, default=_json_default)


def cell_text(value: Any) -> str:
    """One cell as raw text, the way every text export writes it.

    Floats use ``repr`` (shortest exact round-trip: ``0.1 + 0.2`` is
    ``0.30000000000000004``), infinities ``inf``/``-inf``; NaN, None and
    ``pd.NA`` are empty; booleans ``True``/``False``; dicts, lists and
    :data:`~oloproof_nb.ABSENT` JSON text (ABSENT is ``{"$absent": true}``,
    as in the run's files); timestamps ISO 8601.
    """
    if isinstance(value, (dict, list, tuple, Absent, np.ndarray)):
        return json_text(value)
    if is_blank(value):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (pd.Timestamp, dt.datetime, dt.date)):
        return value.isoformat()
    return str(value)


def table_of(obj: Any) -> Any:
    """The table ``obj`` shows: a DataFrame itself, or a result's ``table`` (a Gate, a Comparison).

    A DataFrame is taken as it is: ``getattr`` would find its column named ``table``.
    """
    return obj if isinstance(obj, pd.DataFrame) else getattr(obj, "table", obj)
