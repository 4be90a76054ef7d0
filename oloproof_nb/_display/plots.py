"""Figures a reviewer wants: the gate, slice tables and transform validity.

Each function takes a frame (or a :class:`~oloproof_nb.Gate`) of precomputed
statistics plus ``ax=None``, draws on ``ax`` (a new figure when None) and
returns the Axes. Nothing here computes a statistic, fits a line or calls
``show``. matplotlib is imported when a function is called, so importing the
toolkit never loads it.

Examples
--------
>>> ax = op.plots.gate(op.gate(run))                              # doctest: +SKIP
>>> ax = op.plots.slices(op.slice_table(run, "tool_calls:1,2"))   # doctest: +SKIP
>>> ax = op.plots.compare(op.compare(base, candidate))               # doctest: +SKIP
>>> ax.figure.savefig("slices.png", dpi=150)                      # doctest: +SKIP
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..errors import OloproofError
from .theme import COLOURS, CRITERION_COLOURS, GRID, INK, MUTED, colour, fmt_level, table_of

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["gate", "slices", "validity", "compare"]

_INK = INK
_MUTED = MUTED
_GATE_VERDICTS = ("PASS", "FAIL", "INSUFFICIENT_EVIDENCE", "REPORT_ONLY")
_COMPARE_VERDICTS = ("NO_REGRESSION", "REGRESSION", "INSUFFICIENT_EVIDENCE", "REPORT_ONLY")
_DIMENSION_LABELS = {"tool_calls": "number of tool calls", "trajectory_length": "trajectory length (steps)"}


def _plain(text: Any) -> str:
    """``text`` drawn as written: matplotlib reads the text between two ``$`` as a formula (a criterion named
    ``refund_$50_to_$100`` failed to draw), so every ``$`` is escaped."""
    return str(text).replace("$", r"\$")


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


def _interval_rows(ax: Axes, table: pd.DataFrame, labels: list[str], colours: list[str],
                   marks: pd.Series, mark_label: str, notes: list[str], empty_note: str) -> None:
    """Horizontal rows: point + interval per row, a ``|`` mark (threshold or minimum), a note on the right."""
    from matplotlib.transforms import blended_transform_factory

    n = len(table)
    ys = np.arange(n)[::-1].astype(float)
    right = blended_transform_factory(ax.transAxes, ax.transData)
    for i, r in enumerate(table.itertuples(index=False)):
        y, colour = ys[i], colours[i]
        if _finite(r.rate):
            lo, hi = float(r.ci_low), float(r.ci_high)
            ax.errorbar([float(r.rate)], [y], xerr=[[float(r.rate) - lo], [hi - float(r.rate)]], fmt="o",
                        color=colour, ecolor=colour, elinewidth=2.2, capsize=4, capthick=1.6, ms=7, zorder=4)
        else:
            ax.text(0.5, y, empty_note, transform=right, ha="center", va="center", color=_MUTED, style="italic")
        ax.text(1.02, y, notes[i], transform=right, ha="left", va="center", fontsize=8.5, color=colour)
    has_mark = marks.map(_finite).to_numpy(dtype=bool)
    if has_mark.any():
        ax.scatter(marks[has_mark].astype(float), ys[has_mark], marker="|", s=420, linewidths=2.6, color=_INK,
                   zorder=3, label=mark_label)
    ax.set_yticks(ys, labels)
    ax.set_ylim(-0.7, n - 0.3)
    ax.tick_params(axis="y", length=0, labelsize=9.5)


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
        One errorbar per criterion with rows (point = rate, bar = interval),
        a black ``|`` at each threshold, ``passed/n`` and the verdict on the right.
    """
    from matplotlib.lines import Line2D

    cols = ["criterion", "n", "passed", "rate", "ci_low", "ci_high", "threshold", "verdict"]
    table = _table(g, cols, "gate", "op.gate(run)")
    ax = _axes(ax, 8.0, 1.5 + 0.5 * max(len(table), 1))
    colours = [colour(v) for v in table["verdict"]]
    notes = [f"{r.passed}/{r.n}  {r.verdict}" for r in table.itertuples(index=False)]
    reduce = table["reduce"] if "reduce" in table.columns else pd.Series("mean", index=table.index)
    vacuous = table["vacuous"] if "vacuous" in table.columns else pd.Series(False, index=table.index)
    names = [_plain(c if r in ("mean", "") or not isinstance(r, str) else f"{c} ({r})")  # a reduced one says how
             + (" (vacuous)" if isinstance(v, (bool, np.bool_)) and v else "")  # as the report marks it
             for c, r, v in zip(table["criterion"], reduce, vacuous, strict=True)]
    _interval_rows(ax, table, names, colours, table["threshold"], "threshold", notes, "no rows")
    lows = pd.concat([table["ci_low"], table["threshold"]]).astype(float)
    _rate_axis(ax, "x", float(lows.min()) if lows.notna().any() else 0.0)
    is_gate = not isinstance(g, pd.DataFrame)  # a DataFrame's getattr would find its columns
    release = getattr(g, "release", None) if is_gate else None
    conf = f"{fmt_level(release.confidence)} " if release is not None else ""
    ax.set_xlabel(f"pass rate and {conf}interval")
    verdict = getattr(g, "verdict", None) if is_gate else None
    reason = getattr(g, "reason", "") if is_gate else ""
    title = _plain("Release gate" + (f": {verdict}" if verdict else "") + (f" ({reason})" if reason else ""))
    ax.set_title(title, loc="left", fontweight="bold",
                 color=colour("PASS" if verdict == "PASS" else "FAIL") if verdict else _INK)
    handles = [Line2D([], [], marker="o", ls="", color=COLOURS[v], label=v.replace("_", " ").lower())
               for v in _GATE_VERDICTS if v in set(table["verdict"])]
    handles.append(Line2D([], [], marker="|", ls="", ms=12, mew=2.4, color=_INK, label="threshold"))
    _legend_below(ax, handles)
    return ax


def slices(table: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Per bin and criterion: the pass rate with its interval, support written above it.

    Parameters
    ----------
    table : pandas.DataFrame
        ``op.slice_table(run, spec)`` (columns ``slice, bin, criterion,
        support, rate, ci_low, ci_high``, optionally ``few_clusters``); several
        slices may be concatenated.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        Bins along x in table order, criteria side by side in each bin: one
        errorbar per non-empty (criterion, bin), hollow when the bin has few
        clusters, ``n=support`` above it (``n=0`` in grey for an empty bin).
        The ``n/a`` bin is drawn only when it holds rows. No line joins bins:
        the table is descriptive, not a trend.
    """
    from matplotlib.lines import Line2D

    table = _table(table, ["slice", "bin", "criterion", "support", "rate", "ci_low", "ci_high"], "slices",
                   "op.slice_table(run, spec)")
    keep = ~((table["bin"] == "n/a") & (table.groupby(["slice", "bin"])["support"].transform("sum") == 0))
    table = table[keep].reset_index(drop=True)
    positions = list(dict.fromkeys(zip(table["slice"], table["bin"], strict=True)))
    criteria = list(dict.fromkeys(table["criterion"]))
    ax = _axes(ax, max(6.0, 1.1 * len(positions) * max(1, len(criteria)) ** 0.5 + 2.5), 4.2)
    palette = CRITERION_COLOURS
    colour = {c: palette[i % len(palette)] for i, c in enumerate(criteria)}
    width = 0.8 / max(len(criteria), 1)
    x_of = {key: i for i, key in enumerate(positions)}
    few = table["few_clusters"] if "few_clusters" in table.columns else pd.Series(False, index=table.index)
    small = 7.5 if len(criteria) > 2 else 8.5
    totals = table.groupby(["slice", "bin"], sort=False)["support"].sum()
    empty = {key for key, total in totals.items() if total == 0}
    for r, is_few in zip(table.itertuples(index=False), few, strict=True):
        j = criteria.index(r.criterion)
        x = x_of[(r.slice, r.bin)] - 0.4 + width * (j + 0.5)
        if r.support > 0 and _finite(r.rate):
            rate = float(r.rate)
            ax.errorbar([x], [rate], yerr=[[rate - float(r.ci_low)], [float(r.ci_high) - rate]], fmt="o",
                        ls="none", color=colour[r.criterion], ecolor=colour[r.criterion], elinewidth=2,
                        capsize=3, ms=6.5, mfc="white" if bool(is_few) else colour[r.criterion], mew=1.6, zorder=3)
            ax.annotate(f"n={r.support}", (x, float(r.ci_high)), xytext=(0, 4), textcoords="offset points",
                        ha="center", va="bottom", fontsize=small, color=_INK)
        elif (r.slice, r.bin) not in empty:
            ax.text(x, 0.02, "n=0", ha="center", va="bottom", fontsize=small, color=_MUTED, style="italic")
    for key in empty:
        ax.text(x_of[key], 0.02, "no cases", ha="center", va="bottom", fontsize=8.5, color=_MUTED, style="italic")
    names = list(dict.fromkeys(table["slice"]))
    single = len(names) == 1
    ax.set_xticks(range(len(positions)), [b if single else f"{s.split(':')[0]}\n{b}" for s, b in positions])
    ax.set_xlim(-0.6, len(positions) - 0.4)
    ax.set_ylim(-0.03, 1.13)
    _rate_axis(ax, "y", 0.0)
    ax.tick_params(axis="x", length=0, labelsize=10)
    dimension = names[0].split(":")[0] if single else ""
    ax.set_xlabel(_DIMENSION_LABELS.get(dimension, "bin") + ("  (bins: lower ≤ x < upper)" if single else ""))
    ax.set_ylabel("pass rate and interval")
    ax.set_title(f"Pass rate by bin — {names[0]}" if single else "Pass rate by bin", loc="left", fontweight="bold")
    handles = [Line2D([], [], marker="o", ls="", color=colour[c], label=_plain(c)) for c in criteria]
    if bool(np.asarray(few, dtype=bool).any()):
        handles.append(Line2D([], [], marker="o", ls="", mfc="white", color=_MUTED, mew=1.6,
                              label="hollow: few clusters"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8.5)
    return ax


def validity(frame: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Per transform: the share of pairs labeled valid, its interval, and the minimum it needs.

    Parameters
    ----------
    frame : pandas.DataFrame
        ``op.validity(run)`` (columns ``transform, derived, labeled, valid,
        rate, ci_low, ci_high, minimum_validity, checked``).
    ax : matplotlib Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        One errorbar per transform with labels (green when checked, amber when
        not), a black ``|`` at ``minimum_validity``, and the valid, labeled and
        derived counts on the right.
    """
    from matplotlib.lines import Line2D

    cols = ["transform", "derived", "labeled", "valid", "rate", "ci_low", "ci_high", "minimum_validity", "checked"]
    table = _table(frame, cols, "validity", "op.validity(run)")
    ax = _axes(ax, 8.0, 1.5 + 0.5 * max(len(table), 1))
    ok, no = colour("checked"), colour("not checked")
    colours = [ok if bool(c) else no for c in table["checked"]]
    notes = [f"{r.valid}/{r.labeled} valid, {r.labeled}/{r.derived} labeled" for r in table.itertuples(index=False)]
    _interval_rows(ax, table, [_plain(t) for t in table["transform"]], colours, table["minimum_validity"], "minimum",
                   notes, "no labels")
    lows = pd.concat([table["ci_low"], table["minimum_validity"]]).astype(float)
    _rate_axis(ax, "x", float(lows.min()) if lows.notna().any() else 0.0)
    ax.set_xlabel("share of labeled pairs that kept the meaning (Wilson interval)")
    ax.set_title("Transform validity (human labels)", loc="left", fontweight="bold")
    handles = [Line2D([], [], marker="o", ls="", color=ok, label="checked"),
               Line2D([], [], marker="o", ls="", color=no, label="not checked"),
               Line2D([], [], marker="|", ls="", ms=12, mew=2.4, color=_INK, label="minimum validity")]
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
        One errorbar per criterion with paired rows (point = difference, bar = interval), coloured by
        verdict; a grey line at 0, a dashed line at −margin (a criterion regressed when its whole bar is
        left of it, and showed no regression when its whole bar is right of it); the flips and the
        verdict on the right.
    """
    from matplotlib.lines import Line2D
    from matplotlib.ticker import PercentFormatter

    cols = ["criterion", "difference", "ci_low", "ci_high", "n", "pass_to_fail", "fail_to_pass", "margin", "verdict"]
    table = _table(cmp, cols, "compare", "op.compare(base, candidate)")
    ax = _axes(ax, 8.0, 1.5 + 0.5 * max(len(table), 1))
    colours = [colour(v) for v in table["verdict"]]
    notes = [f"{r.pass_to_fail} pass→fail, {r.fail_to_pass} fail→pass of {r.n}  {r.verdict}"
             for r in table.itertuples(index=False)]
    none = pd.Series([math.nan] * len(table))
    _interval_rows(ax, table.rename(columns={"difference": "rate"}), [_plain(c) for c in table["criterion"]],
                   colours, none, "",
                   notes, "no paired rows")
    margins = table["margin"].dropna().astype(float).unique()
    ax.axvline(0.0, color=_MUTED, lw=1.0, zorder=1)
    for m in margins:
        ax.axvline(-float(m), color=_INK, lw=1.4, ls="--", zorder=2)
    ends = pd.concat([table["ci_low"], table["ci_high"], pd.Series(-margins)]).astype(float).dropna()
    lo = min(float(ends.min()), 0.0) if len(ends) else -0.1
    hi = max(float(ends.max()), 0.0) if len(ends) else 0.1
    pad = max(0.02, 0.06 * (hi - lo))
    ax.set_xlim(max(-1.0, lo - pad), min(1.0, hi + pad))
    ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    ax.grid(axis="x", color=GRID, lw=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    is_cmp = not isinstance(cmp, pd.DataFrame)
    release = getattr(cmp, "release", None) if is_cmp else None
    conf = f"{fmt_level(release.confidence)} " if release is not None else ""
    ax.set_xlabel(f"difference in pass rate, candidate − base, with its paired {conf}interval")
    verdict = getattr(cmp, "verdict", None) if is_cmp else None
    reason = getattr(cmp, "reason", "") if is_cmp else ""  # why, when no criterion says (a run that did not finish)
    title = _plain("Candidate vs base" + (f": {verdict}" if verdict else "") + (f" ({reason})" if reason else ""))
    ax.set_title(title, loc="left", fontweight="bold", color=colour(verdict) if verdict else _INK)
    handles = [Line2D([], [], marker="o", ls="", color=colour(v), label=v.replace("_", " ").lower())
               for v in _COMPARE_VERDICTS if v in set(table["verdict"])]
    if len(margins):
        handles.append(Line2D([], [], ls="--", color=_INK, label="−margin"))
    _legend_below(ax, handles)
    return ax
