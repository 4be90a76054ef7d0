"""Figures a reviewer wants: the gate, slice tables and transform validity.

Each function takes a frame (or a :class:`~oloproof_nb.Gate`) of precomputed
statistics plus ``ax=None``, draws on ``ax`` (a new figure when None) and
returns the Axes. Nothing here computes a statistic, fits a line or calls
``show``. matplotlib is imported when a function is called, so importing the
toolkit never loads it.

Examples
--------
>>> import oloproof_nb as op
>>> ax = op.plots.gate(op.gate(run))                              # doctest: +SKIP
>>> ax = op.plots.slices(op.slice_table(run, "tool_calls:1,2"))   # doctest: +SKIP
>>> ax = op.plots.compare(op.compare(base, candidate))               # doctest: +SKIP
>>> ax.figure.savefig("slices.png", dpi=150)                      # doctest: +SKIP
"""

from __future__ import annotations

import math
import textwrap
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._config.files import yaml_number
from .._core.binomial import check_confidence
from .._core.slicespec import MAX_EDGES, NA_BIN
from ..errors import OloproofError, terminal_text
from .theme import (
    COLOURS,
    CRITERION_COLOURS,
    GRID,
    INK,
    MARK_ALPHA,
    MUTED,
    colour,
    fmt_bound,
    fmt_level,
    marker,
    table_of,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["gate", "slices", "validity", "compare"]

_INK = INK
_MUTED = MUTED
_GATE_VERDICTS = ("PASS", "FAIL", "INSUFFICIENT_EVIDENCE", "REPORT_ONLY")
_COMPARE_VERDICTS = ("NO_REGRESSION", "REGRESSION", "INSUFFICIENT_EVIDENCE", "REPORT_ONLY")
_DIMENSION_LABELS = {"tool_calls": "number of tool calls", "trajectory_length": "trajectory length (steps)"}
_METHOD_NAMES = {"cluster_t": "cluster t", "cluster_bootstrap": "cluster bootstrap",
                 "clopper_pearson": "Clopper–Pearson", "wilson": "Wilson"}
#: Marker of a slice plot's criteria, one per round of :data:`CRITERION_COLOURS` (a disc for the first 8).
_SLICE_SHAPES = ("o", "s", "^", "D", "v")
#: A threshold this close to an interval end (in rate) is hard to tell from it by eye: the note prints the end.
_NEAR = 0.02


def _dollars(text: str) -> str:
    """``text`` with every ``$`` escaped: matplotlib reads the text between two ``$`` as a formula (a criterion named
    ``refund_$50_to_$100`` failed to draw), so each is drawn as a dollar."""
    return text.replace("$", r"\$")


#: Characters of a name drawn as a label (a row's, a legend entry's): a longer one is cut in its middle with ``…``.
#: A criterion named in 100,000 characters (a key of an Inspect AI score is the log's) drew a gate plot 901,072
#: pixels wide, a 377-megapixel PNG in the report, which an image reader refuses as a decompression bomb.
LABEL_WIDTH = 64


def _label(text: Any) -> str:
    """``text`` drawn as written: a line break or a control character as its escape (:func:`terminal_text`), as the
    terminal and the reports show it (a name holding line breaks was drawn over its neighbours' rows), every ``$``
    escaped (:func:`_dollars`); cut in its middle to :data:`LABEL_WIDTH` characters before that, its start and end
    kept (names that share a start, ``scorer/a`` and ``scorer/b``, stay apart)."""
    shown = terminal_text(str(text))
    if len(shown) > LABEL_WIDTH:
        head = (LABEL_WIDTH - 1) // 2
        shown = shown[:head] + "…" + shown[len(shown) - (LABEL_WIDTH - 1 - head):]
    return _dollars(shown)


#: Characters of a title line: a gate's reason can be a long sentence, and a title wider than the figure
#: squeezed the axes to nothing ("constrained_layout not applied").
TITLE_WIDTH = 80
#: Lines of a title at most: the last ends with ``…`` when the text is longer (the reports and ``gate.reason``
#: hold it whole).
TITLE_LINES = 6
#: Inches a new figure grows by per title line after the first: its axes keep their height (a title of 7 lines on a
#: gate of one row squeezed them to nothing).
TITLE_LINE_HEIGHT = 0.22


def _title(text: str) -> str:
    """``text`` drawn as written (as :func:`_label` draws a name, uncut) in at most :data:`TITLE_LINES` lines of at
    most :data:`TITLE_WIDTH` characters, words kept whole unless one is longer than a line (a word of 100,000
    characters in a reason drew the title as wide). Wrapped before its ``$`` are escaped, so no line break falls
    between a ``\\`` and its ``$``."""
    lines = textwrap.wrap(terminal_text(str(text)), TITLE_WIDTH, break_long_words=True, break_on_hyphens=False,
                          max_lines=TITLE_LINES, placeholder=" …")
    return _dollars("\n".join(lines))


def _verdict_title(head: str, obj: Any) -> tuple[str, str | None]:
    """The title of a gate or comparison plot (:func:`_title`): ``head``, the verdict and the reason when no
    criterion says it (a run that did not finish); and the verdict. A table given alone (a DataFrame, whose
    ``getattr`` would find its columns) has neither."""
    whole = not isinstance(obj, pd.DataFrame)
    verdict = getattr(obj, "verdict", None) if whole else None
    reason = getattr(obj, "reason", "") if whole else ""
    return _title(head + (f": {verdict}" if verdict else "") + (f" ({reason})" if reason else "")), verdict


#: Rows of a gate, comparison or validity plot at most, as a slice plot draws at most ``MAX_EDGES + 1`` bins: each
#: row takes half an inch, so 100 rows are a figure 51.5 inches tall; 500 criteria drew one of 251.5 inches (25,150
#: pixels) that took 6 s, and as a report's PNG a 1.9 MB image nobody reads as a picture. The table holds every row.
PLOT_ROWS = 100


def _plotted_rows(table: pd.DataFrame, what: str) -> None:
    """Refuse a table of more than :data:`PLOT_ROWS` rows in one line naming how many it has and what to do."""
    if len(table) > PLOT_ROWS:
        raise OloproofError(f"plots.{what}: the table has {len(table):,} rows; a plot shows at most {PLOT_ROWS}, as "
                            "more cannot be read: plot a selection of its rows (those that did not pass, say), or "
                            "read the table")


def _rows_height(rows: int, title: str) -> float:
    """Inches of a figure of ``rows`` interval rows under ``title``: its axes keep their height however many lines
    the title takes (:data:`TITLE_LINE_HEIGHT`)."""
    return 1.5 + 0.5 * max(rows, 1) + TITLE_LINE_HEIGHT * title.count("\n")


def _table(obj: Any, columns: list[str], what: str, source: str) -> pd.DataFrame:
    table = table_of(obj)
    if not isinstance(table, pd.DataFrame):
        raise OloproofError(f"plots.{what} needs a DataFrame, got {type(obj).__name__}")
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise OloproofError(f"plots.{what}: the table has no column {missing[0]!r}; "
                            f"it needs {', '.join(columns)} (as {source} gives them)")
    return table.reset_index(drop=True)


def _axes(ax: Axes | None, width: float, height: float) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, new = plt.subplots(figsize=(width, height), layout="constrained")
    return new


def _finite(x: Any) -> bool:
    try:
        return x is not None and x is not pd.NA and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def _level(obj: Any, confidence: float | None = None, what: str = "") -> str:
    """The interval level as ``"95% "`` from the data: ``confidence`` when given, else the release of a Gate or
    Comparison, else a table's ``attrs["confidence"]``; ``""`` when none says (never a guessed 95%).

    Raises
    ------
    OloproofError
        When ``confidence`` is given and is no probability in (0, 1): one line naming ``plots.<what>``'s
        argument (``confidence=95`` labelled the axis ``9500% interval``, ``confidence=True`` ``100%``).
    """
    if confidence is not None:
        try:
            check_confidence(confidence)  # checked, not widened: a float32 0.95 keeps its digits (fmt_level)
        except ValueError as e:
            raise OloproofError(f"plots.{what}: {e}") from None
    level: Any = confidence
    if level is None:
        release = None if isinstance(obj, pd.DataFrame) else getattr(obj, "release", None)
        level = getattr(release, "confidence", None)
    if level is None:
        table = table_of(obj)
        level = table.attrs.get("confidence") if isinstance(table, pd.DataFrame) else None
    return f"{fmt_level(level if isinstance(level, np.floating) else float(level))} " if _finite(level) else ""


def _methods(table: pd.DataFrame, names: list[str], unit: str) -> str:
    """The interval methods of the drawn rows when they differ, for an axis label: ``cluster t; Clopper–Pearson
    where all rows agree`` / ``… for a, b`` / ``… for 3 <unit>``; ``""`` when every row has the same method (the
    tables name it) or there is no ``method`` column."""
    if "method" not in table.columns:
        return ""
    rows = [(str(m), n, float(r)) for m, n, r in zip(table["method"], names, table["rate"], strict=True)
            if isinstance(m, str) and m and _finite(r)]
    counts = Counter(m for m, _, _ in rows)
    if len(counts) < 2:
        return ""
    # Clopper–Pearson on rows that all agree (rate 0 or 1) is the other methods' fallback, never the main one
    fallback = "clopper_pearson" in counts and all(
        r in (0.0, 1.0) for m, _, r in rows if m == "clopper_pearson")
    main = max((m for m in counts if not (fallback and m == "clopper_pearson")), key=lambda m: counts[m])
    parts = [_METHOD_NAMES.get(main, main)]  # the most rows; a tie: the first drawn
    for m in counts:
        if m == main:
            continue
        mine = [(n, r) for mm, n, r in rows if mm == m]
        word = _METHOD_NAMES.get(m, m)
        if fallback and m == "clopper_pearson":
            parts.append(f"{word} where all rows agree")
        elif len(mine) <= 2:  # a name drawn as a label is: a `$` in it read as a formula stopped the draw
            parts.append(f"{word} for {', '.join(_label(n) for n, _ in mine)}")
        else:
            parts.append(f"{word} for {len(mine)} {unit}")
    return "; ".join(parts)


def _interval_label(head: str, methods: str, width: int = 80) -> str:
    """``head (methods)``, the parenthesis on a second line when one line would be wider than ``width``."""
    if not methods:
        return head
    return f"{head} ({methods})" if len(head) + len(methods) + 3 <= width else f"{head}\n({methods})"


def _rate_axis(ax: Axes, axis: str, low: float) -> None:
    from matplotlib.ticker import MultipleLocator, PercentFormatter

    low = max(0.0, math.floor(low * 10) / 10 - 0.1) if _finite(low) else 0.0
    step = 0.1 if low >= 0.5 else 0.2
    if axis == "x":
        ax.set_xlim(low - 0.025, 1.025)
        ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.xaxis.set_major_locator(MultipleLocator(step))
        ax.grid(axis="x", color=GRID, lw=0.8)
    else:
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.yaxis.set_major_locator(MultipleLocator(step))
        ax.grid(axis="y", color=GRID, lw=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def _interval_rows(ax: Axes, table: pd.DataFrame, labels: list[str], colours: list[str], shapes: list[str],
                   marks: pd.Series, mark_label: str, notes: list[str], empty_note: str) -> None:
    """Horizontal rows: point + interval per row, a ``|`` mark (threshold or minimum), a note on the right.

    The mark is thin, translucent and drawn behind the interval, whose caps are on top: an interval end at
    the mark (a ci_low of 0.857 beside a threshold of 0.85) stays visible."""
    from matplotlib.transforms import blended_transform_factory

    n = len(table)
    ys = np.arange(n)[::-1].astype(float)
    right = blended_transform_factory(ax.transAxes, ax.transData)
    for i, r in enumerate(table.itertuples(index=False)):
        y, colour = ys[i], colours[i]
        if _finite(r.rate):
            lo, hi = float(r.ci_low), float(r.ci_high)
            ax.errorbar([float(r.rate)], [y], xerr=[[float(r.rate) - lo], [hi - float(r.rate)]], fmt=shapes[i],
                        color=colour, ecolor=colour, elinewidth=2.2, capsize=5, capthick=2.0, ms=7, zorder=4)
        else:
            ax.text(0.5, y, empty_note, transform=right, ha="center", va="center", color=_MUTED, style="italic")
        ax.text(1.02, y, notes[i], transform=right, ha="left", va="center", fontsize=8.5, color=colour)
    has_mark = marks.map(_finite).to_numpy(dtype=bool)
    if has_mark.any():
        ax.scatter(marks[has_mark].astype(float), ys[has_mark], marker="|", s=420, linewidths=1.2, color=_INK,
                   alpha=MARK_ALPHA, zorder=2, label=mark_label)
    ax.set_yticks(ys, labels)
    ax.set_ylim(-0.7, n - 0.3)
    ax.tick_params(axis="y", length=0, labelsize=9.5)


def _near_note(low: Any, high: Any, threshold: Any) -> str:
    """``  ci_low 0.857 ≥ 0.85`` for an interval end within ``_NEAR`` of the threshold (the marks cannot show
    which side it is on), ends rounded outward as every interval shown; ``""`` otherwise."""
    if not _finite(threshold):
        return ""
    thr = float(threshold)
    for name, end, side in (("ci_low", low, "low"), ("ci_high", high, "high")):
        if _finite(end) and abs(float(end) - thr) < _NEAR:
            sign = "≥" if float(end) >= thr else "<"
            # every digit of the threshold (0.9999999 is not 1), and of the end as many as keep the sign true
            return f"  {name} {fmt_bound(end, side, threshold=thr)} {sign} {yaml_number(thr)}"
    return ""


#: Where ``n=0`` and ``no cases`` stand in a slices plot: midway, where no one reads them as a rate of 0
#: (at the foot of the axis, beside a criterion whose bar sat at 0%, they did).
_NO_ROWS_Y = 0.5


def _fitting_locator() -> Any:
    """Nice ticks at most one per 0.8 inch of the axes as drawn (after the layout gave the notes their room):
    ``−25 pp`` is wider than ``−25%``, and the default density ran ``−50 pp−25 pp`` together."""
    from matplotlib.ticker import MaxNLocator

    class Fitting(MaxNLocator):
        def __call__(self) -> Any:
            axes = getattr(self.axis, "axes", None)  # None before the locator is set on an axis
            if axes is not None:
                self.set_params(nbins=max(2, int(axes.get_window_extent().width / axes.figure.dpi / 0.8)))
            return super().__call__()

    return Fitting(nbins=4, steps=[1, 2, 2.5, 5, 10])


def _points(x: float, _pos: Any = None) -> str:
    """A difference of two rates as percentage points: ``−25 pp``, ``0 pp``, ``+10 pp`` (a ``%`` read as a
    relative change)."""
    value = round(x * 100, 6)
    if value == 0:
        return "0 pp"
    return f"{'+' if value > 0 else '−'}{abs(value):g} pp"


def _legend_below(ax: Axes, handles: list[Any]) -> None:
    """A one-row legend a fixed distance below the x-axis label (none without handles: a filtered, empty table)."""
    from matplotlib.transforms import ScaledTranslation

    if not handles:
        return

    below = ax.transAxes + ScaledTranslation(0, -0.62, ax.figure.dpi_scale_trans)
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), bbox_transform=below,
              ncol=len(handles), frameon=False, fontsize=8.5, handletextpad=0.3, columnspacing=1.4)


def gate(g: Any, ax: Axes | None = None) -> Axes:
    """Per criterion: the pass rate, its interval and the threshold, coloured by verdict.

    Parameters
    ----------
    g : Gate or pandas.DataFrame
        ``op.gate(run)`` or its ``table`` (columns ``criterion, n, passed, rate,
        ci_low, ci_high, threshold, verdict``).
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        One errorbar per criterion with rows (point = rate, bar = interval), coloured and shaped by verdict
        (pass a disc, fail a cross), a thin ``|`` behind each threshold, ``passed/n`` and the verdict on the
        right, and the interval end beside the threshold when the two are within 0.02. The x-axis label gives
        the level (the release's ``confidence``; a bare table's ``attrs["confidence"]``) and, when rows
        differ, the methods.

    Raises
    ------
    OloproofError
        A table of more than :data:`PLOT_ROWS` rows (criteria): a plot of more cannot be read.
    """
    from matplotlib.lines import Line2D

    cols = ["criterion", "n", "passed", "rate", "ci_low", "ci_high", "threshold", "verdict"]
    table = _table(g, cols, "gate", "op.gate(run)")
    _plotted_rows(table, "gate")
    title, verdict = _verdict_title("Release gate", g)
    ax = _axes(ax, 8.0, _rows_height(len(table), title))
    colours = [colour(v) for v in table["verdict"]]
    notes = [f"{r.passed}/{r.n}  {r.verdict}{_near_note(r.ci_low, r.ci_high, r.threshold)}"
             for r in table.itertuples(index=False)]
    reduce = table["reduce"] if "reduce" in table.columns else pd.Series("mean", index=table.index)
    vacuous = table["vacuous"] if "vacuous" in table.columns else pd.Series(False, index=table.index)
    names = [_label(c if r in ("mean", "") or not isinstance(r, str) else f"{c} ({r})")  # a reduced one says how
             + (" (vacuous)" if isinstance(v, (bool, np.bool_)) and v else "")  # as the report marks it
             for c, r, v in zip(table["criterion"], reduce, vacuous, strict=True)]
    _interval_rows(ax, table, names, colours, [marker(v) for v in table["verdict"]], table["threshold"], "threshold",
                   notes, "no rows")
    lows = pd.concat([table["ci_low"], table["threshold"]]).astype(float)
    _rate_axis(ax, "x", float(lows.min()) if lows.notna().any() else 0.0)
    ax.set_xlabel(_interval_label(f"pass rate and {_level(g)}interval",
                                  _methods(table, [str(c) for c in table["criterion"]], "rows")))
    ax.set_title(title, loc="left", fontweight="bold",
                 color=colour("PASS" if verdict == "PASS" else "FAIL") if verdict else _INK)
    handles = [Line2D([], [], marker=marker(v), ls="", color=COLOURS[v], label=v.replace("_", " ").lower())
               for v in _GATE_VERDICTS if v in set(table["verdict"])]
    handles.append(Line2D([], [], marker="|", ls="", ms=12, mew=1.2, alpha=MARK_ALPHA, color=_INK,
                          label="threshold"))
    _legend_below(ax, handles)
    return ax


def slices(table: pd.DataFrame, ax: Axes | None = None, *, confidence: float | None = None) -> Axes:
    """Per bin and criterion: the pass rate with its interval, support written above it.

    Parameters
    ----------
    table : pandas.DataFrame
        ``op.slice_table(run, spec)`` (columns ``slice, bin, criterion,
        support, rate, ci_low, ci_high``, optionally ``few_clusters`` and
        ``method``); several slices may be concatenated.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.
    confidence : float, optional
        The intervals' level, for the y-axis label; by default ``table.attrs["confidence"]`` (without
        either, the label names no level).

    Returns
    -------
    matplotlib.axes.Axes
        Bins along x in table order, criteria side by side in each bin: one
        errorbar per non-empty (criterion, bin), hollow when the bin has few
        clusters. Each criterion has its colour and, past the 8 colours, a
        shape of its own (a disc, then a square, a triangle, …). Supports:
        one ``n=41 each`` above a bin whose criteria all have rows and share
        their support; otherwise each criterion's own ``n=support`` stands
        upright above its bar (``n=0`` midway up its slot when it has no
        rows), in the criterion's colour and sized to its slot, so no two
        labels run into each other. ``no cases`` marks a
        bin without rows, midway up too: at the foot, either read as a rate of 0.
        The ``n/a`` bin is drawn only when it holds rows. No line joins bins: the
        table is descriptive, not a trend. The y-axis label gives the level, the
        x-axis label the methods when bins differ.

    Raises
    ------
    OloproofError
        A slice of more than 51 bins besides ``n/a`` (a suite's slices have at most 50 edges): a plot of more
        cannot be read. A ``confidence`` that is no probability in (0, 1), such as ``95``.
    """
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator

    level = _level(table, confidence, "slices")
    table = _table(table, ["slice", "bin", "criterion", "support", "rate", "ci_low", "ci_high"], "slices",
                   "op.slice_table(run, spec)")
    keep = ~((table["bin"] == "n/a") & (table.groupby(["slice", "bin"])["support"].transform("sum") == 0))
    table = table[keep].reset_index(drop=True)
    positions = list(dict.fromkeys(zip(table["slice"], table["bin"], strict=True)))
    # a slice of a suite has at most MAX_EDGES edges; one of op.slice_table's with 5,000 took minutes to draw, on a
    # figure whose bins were thinner than a line
    widest = Counter(name for name, label in positions if label != NA_BIN).most_common(1)
    if widest and widest[0][1] > MAX_EDGES + 1:
        raise OloproofError(f"plots.slices: slice {terminal_text(str(widest[0][0]))!r} has {widest[0][1]:,} bins; a "
                            f"plot shows at most {MAX_EDGES + 1} of a slice (at most {MAX_EDGES} edges, as a suite's "
                            "slices have), as more cannot be read: slice with fewer edges, or read the table")
    criteria = list(dict.fromkeys(table["criterion"]))
    # as wide as its bins need, up to 40 inches (51 bins of 10 criteria asked for 180)
    ax = _axes(ax, min(40.0, max(6.0, 1.1 * len(positions) * max(1, len(criteria)) ** 0.5 + 2.5)), 4.2)
    palette = CRITERION_COLOURS
    hue = {c: palette[i % len(palette)] for i, c in enumerate(criteria)}
    # past the palette a colour comes round again: a shape of its own keeps the 9th criterion from reading as the 1st
    shape = {c: _SLICE_SHAPES[i // len(palette) % len(_SLICE_SHAPES)] for i, c in enumerate(criteria)}
    width = 0.8 / max(len(criteria), 1)
    x_of = {key: i for i, key in enumerate(positions)}
    # hollow only where the table says True: a row without the flag (NaN where a table without the column was
    # concatenated, which bool() reads as True) is drawn filled, as a table without the column is
    few = pd.Series([isinstance(v, (bool, np.bool_)) and bool(v)
                     for v in (table["few_clusters"] if "few_clusters" in table.columns else [False] * len(table))],
                    index=table.index, dtype=bool)
    small = 7.5 if len(criteria) > 2 else 8.5
    upright = _upright_size(ax, width, len(positions), small)
    in_bin: dict[tuple[Any, Any], list[tuple[Any, bool]]] = {key: [] for key in positions}
    for r, is_few in zip(table.itertuples(index=False), few, strict=True):
        in_bin[(r.slice, r.bin)].append((r, bool(is_few)))
    top = 1.13
    for key, rows in in_bin.items():
        filled = [r for r, _ in rows if r.support > 0 and _finite(r.rate)]
        if not filled:
            ax.text(x_of[key], _NO_ROWS_Y, "no cases", ha="center", va="center", fontsize=8.5, color=_MUTED,
                    style="italic")
            continue
        slot = {r.criterion: x_of[key] - 0.4 + width * (criteria.index(r.criterion) + 0.5) for r, _ in rows}
        for r, is_few in rows:
            if r.support > 0 and _finite(r.rate):
                rate, c = float(r.rate), hue[r.criterion]
                ax.errorbar([slot[r.criterion]], [rate], yerr=[[rate - float(r.ci_low)], [float(r.ci_high) - rate]],
                            fmt=shape[r.criterion], ls="none", color=c, ecolor=c, elinewidth=2, capsize=3, ms=6.5,
                            mfc="white" if is_few else c, mew=1.6, zorder=3)
        if len(filled) == len(rows) and len({int(r.support) for r in filled}) == 1:  # one label says it for all
            one = len(filled) == 1
            ax.annotate(f"n={filled[0].support}" + ("" if one else " each"),
                        (x_of[key] if not one else slot[filled[0].criterion], max(float(r.ci_high) for r in filled)),
                        xytext=(0, 4), textcoords="offset points", ha="center", va="bottom", fontsize=small,
                        color=hue[filled[0].criterion] if one else _INK)
            continue
        for r, _ in rows:  # supports differ: each upright in its own slot, which it fits
            text = f"n={r.support}"
            if r.support > 0 and _finite(r.rate):
                ax.annotate(text, (slot[r.criterion], float(r.ci_high)), xytext=(0, 3), textcoords="offset points",
                            ha="center", va="bottom", rotation=90, fontsize=upright, color=hue[r.criterion])
                top = max(top, _room_above(ax, float(r.ci_high), 3 + 0.62 * upright * len(text)))
            else:
                ax.text(slot[r.criterion], _NO_ROWS_Y, text, ha="center", va="center", rotation=90,
                        fontsize=upright, color=hue[r.criterion], style="italic")
    names = list(dict.fromkeys(table["slice"]))
    single = len(names) == 1
    # a slice is named as text: a table built by hand may hold a number there (7.split raised AttributeError)
    ax.set_xticks(range(len(positions)), [b if single else f"{str(s).split(':')[0]}\n{b}" for s, b in positions])
    ax.set_xlim(-0.6, len(positions) - 0.4)
    ax.set_ylim(-0.03, top)
    _rate_axis(ax, "y", 0.0)
    ax.yaxis.set_major_locator(FixedLocator(np.linspace(0.0, 1.0, 6).tolist()))  # no 120% above the labels
    ax.tick_params(axis="x", length=0, labelsize=10)
    dimension = str(names[0]).split(":")[0] if single else ""
    methods = _methods(table, [f"{c} {b}" for c, b in zip(table["criterion"], table["bin"], strict=True)], "bins")
    ax.set_xlabel(_DIMENSION_LABELS.get(dimension, "bin") + ("  (bins: lower ≤ x < upper)" if single else "")
                  + (f"\nintervals: {methods}" if methods else ""))
    ax.set_ylabel(f"pass rate and {level}interval")
    ax.set_title(f"Pass rate by bin — {names[0]}" if single else "Pass rate by bin", loc="left", fontweight="bold")
    handles = [Line2D([], [], marker=shape[c], ls="", color=hue[c], label=_label(c)) for c in criteria]
    if bool(few.any()):
        handles.append(Line2D([], [], marker="o", ls="", mfc="white", color=_MUTED, mew=1.6,
                              label="hollow: few clusters"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8.5)
    return ax


def _upright_size(ax: Axes, width: float, bins: int, largest: float) -> float:
    """The font size (points) of an upright support label that fits a criterion's slot: the slot is ``width`` of
    the ``bins`` data units across the axes, of which a constrained layout keeps about 60% once the legend and
    labels take their room; an upright label is about 1.25 font sizes wide."""
    slot = ax.get_window_extent().width * 72.0 / ax.figure.dpi * width / max(bins, 1) * 0.6
    return max(4.0, min(largest, slot / 1.25))


def _room_above(ax: Axes, y: float, points: float) -> float:
    """The top of the y-axis (from -0.03) that leaves ``points`` above ``y``, on about 80% of the axes' height
    (the rest goes to the title and the labels after layout)."""
    share = points / (ax.get_window_extent().height * 72.0 / ax.figure.dpi * 0.8)
    return min(1.6, (y + 0.03 * share) / (1.0 - share)) if share < 0.5 else 1.6


def validity(frame: pd.DataFrame, ax: Axes | None = None, *, confidence: float | None = None) -> Axes:
    """Per transform: the share of pairs labeled valid, its interval, and the minimum it needs.

    Parameters
    ----------
    frame : pandas.DataFrame
        ``op.validity(run)`` (columns ``transform, derived, labeled, valid,
        rate, ci_low, ci_high, minimum_validity, checked``).
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.
    confidence : float, optional
        The Wilson intervals' level, for the x-axis label; by default ``frame.attrs["confidence"]`` (without
        either, the label names no level).

    Returns
    -------
    matplotlib.axes.Axes
        One errorbar per transform with labels (a green disc when checked, an
        amber diamond when not), a thin ``|`` behind it at ``minimum_validity``,
        and the valid, labeled and derived counts on the right.

    Raises
    ------
    OloproofError
        A table of more than :data:`PLOT_ROWS` rows (transforms): a plot of more cannot be read. A ``confidence``
        that is no probability in (0, 1), such as ``95``.
    """
    from matplotlib.lines import Line2D

    cols = ["transform", "derived", "labeled", "valid", "rate", "ci_low", "ci_high", "minimum_validity", "checked"]
    level = _level(frame, confidence, "validity")
    table = _table(frame, cols, "validity", "op.validity(run)")
    _plotted_rows(table, "validity")
    ax = _axes(ax, 8.0, _rows_height(len(table), ""))
    words = ["checked" if bool(c) else "not checked" for c in table["checked"]]
    notes = [f"{r.valid}/{r.labeled} valid, {r.labeled}/{r.derived} labeled" for r in table.itertuples(index=False)]
    _interval_rows(ax, table, [_label(t) for t in table["transform"]], [colour(w) for w in words],
                   [marker(w) for w in words], table["minimum_validity"], "minimum", notes, "no labels")
    lows = pd.concat([table["ci_low"], table["minimum_validity"]]).astype(float)
    _rate_axis(ax, "x", float(lows.min()) if lows.notna().any() else 0.0)
    ax.set_xlabel(f"share of labeled pairs that kept the meaning ({level}Wilson interval)")
    ax.set_title("Transform validity (human labels)", loc="left", fontweight="bold")
    handles = [Line2D([], [], marker=marker(w), ls="", color=colour(w), label=w) for w in ("checked", "not checked")]
    handles.append(Line2D([], [], marker="|", ls="", ms=12, mew=1.2, alpha=MARK_ALPHA, color=_INK,
                          label="minimum validity"))
    _legend_below(ax, handles)
    return ax


def compare(cmp: Any, ax: Axes | None = None) -> Axes:
    """Per criterion: the difference candidate − base with its paired interval, zero and the −margin line.

    Parameters
    ----------
    cmp : Comparison or pandas.DataFrame
        ``op.compare(base, candidate)`` or its ``table`` (columns ``criterion, difference, ci_low, ci_high,
        n, pass_to_fail, fail_to_pass, margin, verdict``).
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        One errorbar per criterion with paired rows (point = difference, bar = interval), coloured and
        shaped by verdict (no regression a disc, regression a cross); a grey line at 0, a thin dashed line
        behind the bars at −margin (a criterion regressed when its whole bar is left of it, and showed no
        regression when its whole bar is right of it), its value in the legend; the flips and the verdict
        on the right. The x-axis is in percentage points (a difference of two rates).

    Raises
    ------
    OloproofError
        A table of more than :data:`PLOT_ROWS` rows (criteria): a plot of more cannot be read.
    """
    from matplotlib.lines import Line2D
    from matplotlib.ticker import AutoMinorLocator, FuncFormatter

    cols = ["criterion", "difference", "ci_low", "ci_high", "n", "pass_to_fail", "fail_to_pass", "margin", "verdict"]
    table = _table(cmp, cols, "compare", "op.compare(base, candidate)")
    _plotted_rows(table, "compare")
    title, verdict = _verdict_title("Candidate vs base", cmp)
    ax = _axes(ax, 8.0, _rows_height(len(table), title))
    colours = [colour(v) for v in table["verdict"]]
    notes = [f"{r.pass_to_fail} pass→fail, {r.fail_to_pass} fail→pass of {r.n}  {r.verdict}"
             for r in table.itertuples(index=False)]
    none = pd.Series([math.nan] * len(table))
    rows = table.rename(columns={"difference": "rate"})
    _interval_rows(ax, rows, [_label(c) for c in table["criterion"]], colours, [marker(v) for v in table["verdict"]],
                   none, "", notes, "no paired rows")
    margins = table["margin"].dropna().astype(float).unique()
    ax.axvline(0.0, color=_MUTED, lw=1.0, zorder=1)
    for m in margins:  # behind the bars (zorder 4), thin and translucent: a cap at −0.148 stays visible
        ax.axvline(-float(m), color=_INK, lw=1.0, ls="--", alpha=MARK_ALPHA, zorder=2)
    ends = pd.concat([table["ci_low"], table["ci_high"], pd.Series(-margins)]).astype(float).dropna()
    lo = min(float(ends.min()), 0.0) if len(ends) else -0.1
    hi = max(float(ends.max()), 0.0) if len(ends) else 0.1
    pad = max(0.02, 0.06 * (hi - lo))
    ax.set_xlim(max(-1.0, lo - pad), min(1.0, hi + pad))
    ax.xaxis.set_major_formatter(FuncFormatter(_points))
    ax.xaxis.set_major_locator(_fitting_locator())
    ax.xaxis.set_minor_locator(AutoMinorLocator())  # a narrow axis has two labels: the minor ticks read the rest
    ax.grid(axis="x", color=GRID, lw=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_xlabel(_interval_label(f"difference in pass rate (percentage points), candidate − base, with its paired "
                                  f"{_level(cmp)}interval", _methods(rows, [str(c) for c in table["criterion"]],
                                                                     "rows"), width=90))
    ax.set_title(title, loc="left", fontweight="bold", color=colour(verdict) if verdict else _INK)
    handles = [Line2D([], [], marker=marker(v), ls="", color=colour(v), label=v.replace("_", " ").lower())
               for v in _COMPARE_VERDICTS if v in set(table["verdict"])]
    if len(margins):
        values = ", ".join(yaml_number(float(m)) for m in margins)
        handles.append(Line2D([], [], ls="--", lw=1.0, alpha=MARK_ALPHA, color=_INK, label=f"−margin ({values})"))
    _legend_below(ax, handles)
    return ax
