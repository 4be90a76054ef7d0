"""A report of one stored run: the gate and the cases that did not pass, validity, replays and slice tables, with
their plots.

``write_report(run, "report.html")`` writes one standalone HTML file (plots
embedded as base64 PNG, no external references); ``write_report(run,
"report.md")`` writes Markdown with the plots and the raw tables (CSV) in
``report_files/`` beside it. Tables in a report are rounded for the eye
(three decimals); the exact numbers are in ``op.export_table`` exports and, for
Markdown reports, in the CSV files written beside it. Every value that comes
from the run (case ids, answers, reasons, names) is escaped for the format.
"""

from __future__ import annotations

import base64
import io
import os
import re
import stat
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

import numpy as np
import pandas as pd
from markupsafe import Markup

from .._analysis.baseline import Baseline
from .._analysis.frames import ended_case_runs
from .._analysis.gate import Gate
from .._analysis.gate_reasons import abrupt_ends, abrupt_ends_note
from .._analysis.gate_settings import (
    ReleaseLike,
    approximate_once,
    bare_approximate,
    relaxed_note,
)
from .._analysis.receipts import outcome_summary
from .._analysis.reduce import epoch_counts, repeated_rows
from .._analysis.run import Run
from .._analysis.slices import slice_table
from .._analysis.validity import broken_note, validity
from .._config.files import not_home
from .._core.epochs import parse_reduce, reduce_counts
from .._core.slicespec import NA_BIN, parse_slice_spec
from .._version import __version__
from ..errors import ExportError, OloproofError, SliceWarning
from . import plots
from .export import export_table, make_folder, read_only, write_file
from .html import html_table, html_text, render
from .markdown import markdown_table, md_cell, md_code, md_link
from .notebook import gate
from .terminal import exit_line, gate_size, no_criteria_note, pool_note, run_size
from .theme import PAGE_CSS, TABLE_CSS, fmt_interval, fmt_level, fmt_number, row_thresholds

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["REPORT_SUFFIXES", "write_report", "report_and_gate", "build_sections", "Section"]

REPORT_SUFFIXES: tuple[str, ...] = (".html", ".md")
_CANNOT = ("What this report cannot tell: why the agent acted as it did; anything about a live system (only the "
           "sandbox the suite wrote was checked) or whether that sandbox behaves like production; faults and "
           "transforms nobody declared; a trend of errors with trajectory length (slice tables are descriptive: "
           "bins side by side, no fitted curve).")
_ROUNDING = ("numbers rounded to three decimals for display, an interval's ends outward (the low end down, the high "
            "end up, so the interval shown holds the one computed), with more decimals where three would put an end "
            "on the other side of its threshold")


class Plain(str):
    """A line of prose that quotes the run (a finding, a criterion name an agent or a config chose): the
    Markdown report writes it escaped (:func:`md_cell`), never as markup, and so does the HTML report (its own
    prose may hold `code` and **bold**; a criterion named with backticks made code of its name).

    ``Plain.after(lead, text)``: the report's own prose ``lead`` (markup) comes first, in the same paragraph.
    """

    lead = ""

    @classmethod
    def after(cls, lead: str, text: str) -> Plain:
        """``text``, escaped as it quotes the run, after ``lead``, the report's own prose (markup allowed)."""
        line = cls(text)
        line.lead = lead
        return line


@dataclass
class Section:
    """One part of a report: a heading, prose, tables (display frame, raw frame, name) and figures.

    ``headings`` and ``notes``, by a table's name: the heading above it (a name from the run, shown as code) and a
    line of prose between that heading and the table.
    """

    key: str
    title: str
    text: list[str] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame, pd.DataFrame]] = field(default_factory=list)
    figures: list[tuple[str, bytes]] = field(default_factory=list)
    verdict: str = ""
    headings: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)


def _png(ax: Axes) -> bytes:
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    buf = io.BytesIO()
    figure = ax.figure  # not get_figure(root=True): matplotlib ≥ 3.10 only, and the dependency is ≥ 3.8.4
    assert isinstance(figure, Figure)  # plots draws each Axes on a figure of its own, never on a subfigure
    figure.savefig(buf, format="png", dpi=130, bbox_inches="tight", facecolor="white")
    plt.close(figure)
    return buf.getvalue()


def _intervals(table: pd.DataFrame) -> list[str]:
    """``[low, high]`` per row of a table with ``ci_low`` and ``ci_high``, rounded outward (each end on the side of
    the row's ``threshold`` or ``minimum_validity``, when the table has one, that the computed end is on:
    :func:`~.theme.row_thresholds`); ``""`` without one."""
    thresholds = row_thresholds(table)
    return [fmt_interval(lo, hi, threshold=thr) if fmt_number(lo) else ""
            for lo, hi, thr in zip(table["ci_low"], table["ci_high"], thresholds, strict=True)]


def _reduced_name(criterion: str, reduce: str) -> str:
    """``answer_matches (pass^3)`` for a criterion reduced over epochs, the name alone for ``mean``."""
    return criterion if reduce == "mean" else f"{criterion} ({reduce})"


def _sentence(note: str) -> str:
    """A gate's note (``resumed after …``) as a sentence of the report: capitalised, with its full stop."""
    return note[:1].upper() + note[1:] + "."


def _gate_section(run: Run, g: Gate, release: ReleaseLike | None) -> Section:
    sec = Section("gate", "Release gate", verdict=g.verdict)
    why = exit_line(g).split(": ", 2)[-1]  # the sentence `oloproof gate` ends with, without its exit code
    sizes = gate_size(g)
    # the reason may quote a run id or an Inspect AI log (an early-stopping manager's name): escaped, not markup
    sec.text.append(Plain.after(f"Verdict **{g.verdict}** ({'clustered' if g.clustered else 'unclustered'} run, "
                                f"{sizes}, {fmt_level(g.release.confidence)} intervals): ",
                                why + (", whatever the table says" if g.reason else "") + ". A criterion "
                                "passes when its interval's lower end is at or above the threshold and fails when "
                                "its upper end is below; otherwise the evidence is insufficient."))
    pooled = pool_note(run, g.table)
    if pooled:  # as the gate's text and HTML say under its verdict: n=6 of a 3-case suite read as 6 cases
        sec.text.append(Plain(_sentence(pooled)))
    sec.text.append(Plain(f"Release settings: {_release_source(run, release)}; min_clusters "
                          f"{g.release.min_clusters}, approximate methods "
                          f"{'allowed' if g.release.allow_approximate_methods else 'not allowed'}."))
    nothing = no_criteria_note(run, g, release)
    if nothing:  # which settings name no criterion, and where the thresholds go, as `oloproof gate` says it
        sec.text.append(Plain(_sentence(nothing)))
    if g.relaxed:  # the verdict sentence says a PASS was given by weaker settings: here, which
        given = (str(release) if isinstance(release, (str, Path)) else
                 "the settings given" if release is not None else "")  # "": the run's own, stored with it
        note = relaxed_note(g.relaxed, given, than=g.weaker_than)
        sec.text.append(Plain(_sentence(note)))
    for changed in g.drift:  # the suite folder changed since the run (`oloproof report` warned on stderr): a
        sec.text.append(Plain(f"Changed since the run: {changed}."))  # reader of the file is told the same
    for finding in g.findings:
        sec.text.append(Plain(f"Vacuous check (it cannot fail as configured): {finding}"))
    resumed = abrupt_ends_note(abrupt_ends(run))
    if resumed:  # case runs a crash cut short ran again: a PASS is read knowing they had a second chance
        sec.text.append(Plain(_sentence(resumed)))
    if g.unscored:  # rows no criterion counts: a PASS is read knowing them
        broke = len(g.unscored_broken)  # a copy that failed its pair, left out, no longer counts against the agent
        sec.text.append(Plain(f"Copies labeled invalid, scored by no criterion ({len(g.unscored)}): "
                              f"{', '.join(g.unscored[:20])}" + (" …" if len(g.unscored) > 20 else "") + "."
                              + (f" {broken_note(len(g.unscored), broke).capitalize()}." if broke else "")))
    shown = g.table[["criterion", "n", "n_clusters", "passed", "missing", "rate"]].copy()
    shown["criterion"] = [_reduced_name(c, r) + (" (vacuous)" if v else "")
                          for c, r, v in zip(g.table["criterion"], g.table["reduce"], g.table["vacuous"], strict=True)]
    if (g.table["reduce"] != "mean").any():
        sec.text.append("A criterion marked (pass^k) or (pass@k) is reduced over each case's epochs: its n counts "
                        "cases, passed the cases whose value is 1, missing the cases whose every epoch is missing, "
                        "and rate is the mean of the cases' values.")
    shown[f"{fmt_level(g.release.confidence)} CI"] = _intervals(g.table)
    # the key that decides approximate_methods_not_allowed: said once, here, as `oloproof report` says it (--release)
    reasons, approximate = approximate_once(g.table["reason"], release, run.release is not None,
                                            "--release to report on this run")
    if approximate:
        sec.text.append(Plain(_sentence(approximate)))
    shown = pd.concat([shown, g.table[["method", "threshold", "verdict", "reason", "failing_clusters"]]
                       .assign(reason=reasons)], axis=1)
    if "noop_rate" in g.table.columns:
        shown = pd.concat([shown, g.table[["noop_rate", "passes_when_idle"]]], axis=1)
        idle = [str(c) for c, i in zip(g.table["criterion"], g.table["passes_when_idle"], strict=True) if i]
        sec.text.append("noop_rate: each criterion's pass rate when the agent does nothing (the do-nothing "
                        "baseline: the sandbox reset, no step, no answer), reduced as the criterion is. "
                        "passes_when_idle: that rate already meets the threshold — expected for a check of "
                        "collateral damage, a red flag for a task check. It never changes a verdict."
                        + ("" if idle else " No gated criterion passes when idle."))
        if idle:
            sec.text.append(Plain(f"Passes when idle: {', '.join(idle)}."))
    sec.tables.append(("gate", shown, g.table))
    if len(g.table) > plots.PLOT_ROWS:  # plots.gate refuses a figure too tall to read
        sec.text.append(f"No gate plot: {len(g.table):,} criteria, and a plot shows at most {plots.PLOT_ROWS}; the "
                        "table holds them all.")
    else:
        sec.figures.append(("gate", _png(plots.gate(g))))
    return sec


def _release_source(run: Run, release: ReleaseLike | None) -> str:
    """Where the gate's settings came from, for a reader of the report: the settings given, the run's own
    release.yaml, or none (an Inspect AI log has no release.yaml of its own, and a suite may have had none when the
    run started: the defaults, which gate no criterion)."""
    if release is None:
        if run.release is None:  # "the run's own release.yaml" named a file that never was
            whose = ("Inspect AI logs have no release.yaml of their own" if run.suite_root is None else
                     "the suite had no release.yaml when the run started")
            return f"none, {whose} (the defaults, which gate no criterion)"
        return "the run's own release.yaml (as recorded in its manifest)"
    if isinstance(release, (str, Path)):
        return f"{release} (given for this report)"
    return "given in code for this report"


#: Cases listed per criterion in the report's section of cases that did not pass; the rest are counted.
FAILING_LIMIT = 20


def _failing_section(run: Run, g: Gate) -> Section | None:
    """The cases that did not pass, by criterion in the gate table's order: every criterion gated that did not
    ``PASS``, and any other with a row that did not pass (``REPORT_ONLY``, or a ``PASS`` over a few failures).
    ``None`` when there is none (a run whose every row passed)."""
    verdicts = run.verdicts
    not_passed = verdicts[(verdicts["verdict"] != "pass").to_numpy(dtype=bool, na_value=True)]
    by_criterion = dict(tuple(not_passed.groupby("criterion", sort=False)))
    epochs = max(member.manifest.epochs for member in run.runs) > 1  # a pooled run's epochs are its runs' sum
    pooled = "run_id" in verdicts.columns
    sec = Section("failing", "Cases that did not pass")
    table = g.table.assign(reason=bare_approximate(g.table["reason"]))  # the key to set: said in the gate section
    for position, row in enumerate(table.itertuples(index=False), 1):
        criterion, reduce = str(row.criterion), str(row.reduce)
        gated_not_passing = row.verdict not in ("PASS", "REPORT_ONLY")
        rows = by_criterion.get(criterion, not_passed.iloc[:0])
        if reduce != "mean":
            raw, what = _reduced_failing(run, verdicts, rows, criterion, reduce), "cases"
        else:
            raw, what = _in_clusters(rows), "rows" if epochs or pooled else "cases"
            keep = [c for c in ("cluster", "case_id", "run_id", "epoch", "verdict", "reason") if c in raw.columns
                    and (c != "epoch" or epochs)]
            raw = raw[keep].reset_index(drop=True)
        if not len(raw) and not gated_not_passing:
            continue
        name = f"failing_{position}"
        sec.headings[name] = _reduced_name(criterion, reduce)
        if not len(raw):  # an interval too wide, a transform not checked, no evidence: no case to name
            sec.notes[name] = Plain.after(f"**{row.verdict}**, with no {what} that did not pass: ",
                                          f"{row.reason or 'see the gate table'}.")
            sec.tables.append((name, pd.DataFrame(), raw))  # no columns: the heading and the note, no table
            continue
        clusters = raw["cluster"].nunique()
        more = len(raw) - FAILING_LIMIT
        cut = f"; the first {FAILING_LIMIT} below, and {more} more (`run.verdicts` holds them)" if more > 0 else ""
        sec.notes[name] = (f"**{row.verdict}**: {len(raw)} of {int(row.n)} {what} did not pass, in {clusters} "
                           f"cluster(s){cut}.")
        sec.tables.append((name, raw.head(FAILING_LIMIT), raw))
    if not sec.tables:
        return None
    sec.text.append(f"Each criterion that did not pass, and any other with rows that did not pass (`fail`, or "
                    f"`missing`, which counts as not passed), in the gate table's order: its cases grouped by "
                    f"cluster, at most {FAILING_LIMIT} per criterion. `run.verdicts` holds every row, "
                    f"{_panel_hint(pooled)} shows a case; copies labeled invalid have no row (the gate names them)."
                    + (" `run_id`: which of the pooled runs." if pooled else "")
                    + (" `epoch`: which run of the case." if epochs else ""))
    if (g.table["reduce"] != "mean").any():
        sec.text.append("A criterion reduced over epochs (pass^k, pass@k) lists each case whose value is below 1 "
                        "once, as the gate counts it: its value, and the epochs that did not pass"
                        + (", each with the run it is of." if pooled else "."))
    return sec


def _in_clusters(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with each cluster's rows together and, within a cluster, each case's: clusters and cases in the order
    they first appear (the case file's: a case, then its copies), a case's rows by pooled run and epoch."""
    keys = [pd.factorize(rows[c])[0] for c in ("cluster", "case_id", "run_id") if c in rows.columns]
    if "epoch" in rows.columns:
        keys.append(rows["epoch"].to_numpy())
    return rows.iloc[np.lexsort(keys[::-1])]


def _reduced_failing(run: Run, verdicts: pd.DataFrame, rows: pd.DataFrame, criterion: str,
                     reduce: str) -> pd.DataFrame:
    """Each case of ``criterion`` whose value under ``reduce`` (pass^k, pass@k) is below 1, as the gate counts it
    (cases with fewer than k rows left out; in a pooled run, a try repeated counted once: :func:`repeated_rows`),
    with the epochs that did not pass (``rows``), their verdicts and reasons."""
    r = parse_reduce(reduce)
    mine = verdicts[(verdicts["criterion"] == criterion).to_numpy(dtype=bool, na_value=False)]
    mine = mine[~repeated_rows(run, mine, [criterion])]
    rows = rows[rows.index.isin(mine.index)]  # a repeated replay's row is no epoch of its own either
    counts = epoch_counts(mine)
    counts = counts[counts["epochs"] >= r.k]
    values = reduce_counts(counts["epochs"].to_numpy(), counts["passes"].to_numpy(), r)
    below = _in_clusters(counts.assign(value=values)[values < 1])
    # a case below 1 has a row that did not pass: its epochs, verdicts and reasons, in one pass over those rows
    seen: dict[str, tuple[list[str], set[str], dict[str, None]]] = {}
    # pooled, a case's tries are its epochs in every run: each named with its run (``1, 1 of 4`` named none), by run
    pooled = "run_id" in rows.columns
    runs = pd.factorize(rows["run_id"])[0] if pooled else np.zeros(len(rows), dtype=int)
    ordered = rows.iloc[np.lexsort((rows["epoch"].to_numpy(), runs))]
    labels = ([f"{epoch} in {run_id}" for epoch, run_id in zip(ordered["epoch"], ordered["run_id"], strict=True)]
              if pooled else [str(epoch) for epoch in ordered["epoch"]])
    for case, label, verdict, reason in zip(ordered["case_id"], labels, ordered["verdict"],
                                            ordered["reason"].fillna(""), strict=True):
        epochs, verdicts_, reasons = seen.setdefault(case, ([], set(), {}))
        epochs.append(label)
        verdicts_.add(verdict)
        if reason:
            reasons[str(reason)] = None
    out = []
    for case in below.itertuples(index=False):
        epochs, verdicts_, reasons = seen.get(case.case_id, ([], set(), {}))
        out.append((case.cluster, case.case_id, float(case.value), f"{', '.join(epochs)} of {case.epochs}",
                    ", ".join(v for v in ("fail", "missing") if v in verdicts_), "; ".join(reasons)))
    return pd.DataFrame(out, columns=["cluster", "case_id", reduce, "epochs not passed", "verdict", "reason"])


def _validity_section(run: Run) -> Section | None:
    if not run.config.metamorphic.transforms:
        return None
    table = validity(run)
    sec = Section("validity", "Transform validity")
    sec.text.append("Human labels say whether each metamorphic copy kept the request's meaning. A transform is "
                    "checked when every pair is labeled and the valid share (the rate, not its interval) reaches "
                    "its minimum; until then the gate reports its relations as insufficient evidence. The "
                    "Wilson interval shows how far the share could be from the labels' own.")
    shown = table.drop(columns=["ci_low", "ci_high"])
    shown.insert(shown.columns.get_loc("rate") + 1, f"{fmt_level(table.attrs.get('confidence', 0.95))} CI",
                 _intervals(table))
    sec.tables.append(("validity", shown, table))
    if len(table) > plots.PLOT_ROWS:  # plots.validity refuses a figure too tall to read
        sec.text.append(f"No validity plot: {len(table):,} transforms, and a plot shows at most {plots.PLOT_ROWS}; "
                        "the table holds them all.")
    else:
        sec.figures.append(("validity", _png(plots.validity(table))))
    return sec


def _replays_section(run: Run) -> Section | None:
    """The fault replays by criterion, tool and fault, counted over the copies some criterion scores (as the gate
    table's ``n``): the replays of copies labeled invalid are named below the prose, not counted."""
    rep = run.replays
    if rep.empty:
        return None
    unscored = rep["case_id"].isin(run.unscored_ids).to_numpy()
    left_out, rep = rep[unscored], rep[~unscored]
    rows = []
    for (criterion, tool, fault), sub in rep.groupby(["criterion", "tool", "fault"], sort=False):
        rows.append({"criterion": criterion, "tool": tool, "fault": fault, "replays": len(sub),
                     "passed": int((sub["verdict"] == "pass").sum()), "failed": int((sub["verdict"] == "fail").sum()),
                     "missing": int((sub["verdict"] == "missing").sum()),
                     "control_reproduced": int(sub["control_reproduced"].fillna(False).astype(bool).sum()),
                     "recovered": int(sub["recovered"].fillna(False).astype(bool).sum()),
                     "escalated": int(sub["escalated"].fillna(False).astype(bool).sum()),
                     "constraint_broken": int(sub["constraint_broken"].fillna(False).astype(bool).sum()),
                     "cached": int(sub["cached"].fillna(False).astype(bool).sum()),
                     "fail_reasons": "; ".join(f"{reason} {count}" for reason, count in  # most first, then by name
                                               sorted(sub.loc[sub["verdict"] != "pass", "reason"].fillna("")
                                                      .value_counts().items(), key=lambda rc: (-rc[1], rc[0])))})
    table = pd.DataFrame(rows)
    sec = Section("replays", "Fault replays")
    sec.text.append("Each case that made the call was replayed from the checkpoint before it with the call's "
                    "result replaced by the fault, after a control replay reproduced the recording (before each "
                    "of its calls, each in a replay of its own, for a criterion with calls: every). Counts are "
                    "replays of the cases some criterion scores (as the gate table's n, or more with calls: "
                    "every: one per faulted call); fail_reasons counts the "
                    "replays that did not pass by reason (false_success: the answer the case expects while a state "
                    "check fails; constraint_broken also counts a protected path changed). See `run.replays` and "
                    f"{_panel_hint(len(run.runs) > 1)} for each one.")
    if len(left_out):  # their verdict rows are left out of the gate: so are they here
        copies = list(dict.fromkeys(left_out["case_id"]))
        sec.text.append(Plain(f"Not counted: {len(left_out)} replay(s) of copies labeled invalid, scored by no "
                              f"criterion ({', '.join(copies[:20])}" + (" …" if len(copies) > 20 else "")
                              + "); run.replays keeps them."))
    if len(table):
        sec.tables.append(("replays", table, table))
    return sec


def _receipts_section(run: Run) -> Section | None:
    rec = run.receipts
    if rec.empty:
        return None
    sec = Section("receipts", "Outcome receipts")
    sec.text.append("Each promised outcome was looked up after its case: `verified` when the artifact exists, is "
                    "fresh and passes the contract's digest or validator; `waiting` is neither a failure nor a "
                    "success. check_coverage is the share whose contract checks the content (a validator or a "
                    "pinned digest); the rest were checked for existence and freshness only.")
    summary = outcome_summary(rec)
    sec.tables.append(("outcome_summary", summary, summary))
    bad = rec[rec["status"] != "verified"]
    if len(bad):
        limit = 50
        sec.text.append(f"Below the summary, the {len(bad)} receipt(s) not verified"
                        + (f" (the first {limit})" if len(bad) > limit else "") + "; `run.receipts` has every one.")
        shown = bad[["case_id", "artifact_id", "status", "reason"]].head(limit).reset_index(drop=True)
        sec.tables.append(("not_verified", shown, bad.reset_index(drop=True)))
    return sec


def _panel_hint(pooled: bool) -> str:
    """The call that shows a case: on a pooled run with its ``run_id`` (``run.panel(case_id)`` raises for a case id
    several of the pooled runs hold)."""
    return "`run.panel(case_id, run_id=run_id)`" if pooled else "`run.panel(case_id)`"


def _errors_section(run: Run) -> Section | None:
    """The case runs the system ended in error or by timeout, by message: their verdicts are missing, and the
    gate table alone showed only ``missing`` counts."""
    cases = run.cases
    ended = ended_case_runs(cases)
    if ended.empty:
        return None
    keys = [c for c in ("run_id", "case_id", "epoch") if c in ended.columns]  # pooled: which run
    grouped = (ended.groupby(["message", "status"], sort=False)
               .agg(case_runs=("case_id", "size"), example=("case_id", "first")).reset_index()
               .sort_values("case_runs", ascending=False, kind="stable").reset_index(drop=True))
    limit = 20
    sec = Section("errors", "Case runs that ended in error")
    sec.text.append(f"{len(ended)} of {len(cases)} case runs ended in error or by timeout: the system raised, "
                    "returned what a case cannot hold, or overran `case_timeout_s`; their verdicts are `missing`, "
                    "which counts as not passed. By message"
                    + (f" (the {limit} commonest)" if len(grouped) > limit else "")
                    + f"; `run.cases` holds each, {_panel_hint('run_id' in keys)} shows the case.")
    raw = ended[[*keys, "status", "error"]].reset_index(drop=True)
    sec.tables.append(("errors", grouped.head(limit), raw))
    return sec


def _slices_section(run: Run, release: ReleaseLike | None) -> Section:
    sec = Section("slices", "Slices")
    if not run.config.slices:
        sec.text.append("No slices declared: add e.g. `slices: [\"tool_calls:1,2\"]` to oloproof.yaml.")
        return sec
    if not run.criteria:  # no evaluator: every slice table is empty (the report stopped on an internal error)
        sec.text.append(Plain(f"The suite has no criterion, so the slices it declares "
                              f"({', '.join(parse_slice_spec(s).text for s in run.config.slices)}) have no pass "
                              "rate to show."))
        return sec
    sec.text.append("Pass rate per bin of a trajectory measure, with the interval the gate would use: each cell "
                    "is `rate [ci_low, ci_high] n=support`; † marks a bin with fewer clusters than `min_clusters` "
                    "(read its interval with care), — an empty bin, and `n/a` cases that recorded no trajectory. "
                    "Descriptive only: compare bins with their intervals and supports; no trend is fitted.")
    for written in run.config.slices:
        spec = parse_slice_spec(written).text  # as the table and its plot name it: `tool_calls: 1, 2` made file names
        with warnings.catch_warnings(record=True) as caught:  # with spaces and a heading the plot did not repeat
            warnings.simplefilter("always", SliceWarning)
            table = slice_table(run, spec, release=release)
        for w in caught:
            if issubclass(w.category, SliceWarning):
                sec.text.append(Plain(str(w.message)))
            else:  # not ours to swallow
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        shown = _slice_display(table)
        name = spec.replace(":", "_").replace(",", "-")
        sec.tables.append((f"slice {spec}", shown, table))
        sec.headings[f"slice {spec}"] = spec
        sec.figures.append((f"slice_{name}", _png(plots.slices(table))))
    return sec


def _slice_display(table: pd.DataFrame) -> pd.DataFrame:
    """One row per criterion, one column per bin: ``rate [low, high] n=support`` (``†`` few clusters, ``—`` empty)."""
    bins = list(dict.fromkeys(table["bin"]))
    if int(table.loc[table["bin"] == NA_BIN, "support"].sum()) == 0:
        bins.remove(NA_BIN)
    rows = []
    for criterion, sub in table.groupby("criterion", sort=False):
        row: dict[str, str] = {"criterion": _reduced_name(str(criterion), str(sub["reduce"].iloc[0]))}
        for r in sub.itertuples(index=False):
            if r.bin in bins:
                cell = f"{fmt_number(r.rate)} {fmt_interval(r.ci_low, r.ci_high)} n={r.support}"
                row[r.bin] = "—" if r.support == 0 else cell + (" †" if r.few_clusters else "")
        rows.append(row)
    return pd.DataFrame(rows, columns=["criterion", *bins], dtype=object)


def build_sections(run: Run, release: ReleaseLike | None = None,
                   baseline: Baseline | Run | None = None) -> list[Section]:
    """The report's sections, in order: gate, the cases that did not pass, case runs that ended in error, validity
    (with transforms), replays and receipts (each if any), slices."""
    return _sections(run, gate(run, release=release, baseline=baseline), release)


def _sections(run: Run, g: Gate, release: ReleaseLike | None) -> list[Section]:
    """:func:`build_sections` with the gate ``g`` already decided."""
    found = [_gate_section(run, g, release), _failing_section(run, g), _errors_section(run), _validity_section(run),
             _replays_section(run), _receipts_section(run), _slices_section(run, release)]
    return [s for s in found if s is not None]


def _header(run: Run, code: Callable[[str], str], plain: Callable[[str], str]) -> tuple[str, list[str]]:
    """The title and the two header lines; ``code`` and ``plain`` escape a value from the run for the format."""
    status = run.cases["status"].value_counts().to_dict()
    counts = ", ".join(f"{k}: {v}" for k, v in status.items()) or "none"
    members = run.runs
    last = max(str(r.manifest.finished_at) for r in members) if run.finished else ""
    ended = f"finished {last}." if run.finished else "not finished."
    size = run_size(run)
    started = min(str(r.manifest.started_at) for r in members)
    lines = [f"Run {code(run.run_id)} of suite {code(run.suite_name)}, system version {code(str(run.system_version))}.",
             plain(f"{size} ({counts}); started {started}, {ended}")]
    return f"{_REPORT_TITLE}{run.suite_name}", lines


#: The ``#`` that end an ATX heading's line after a space or a tab: CommonMark reads them as the heading's closing
#: sequence and shows none of them (a suite named ``triage #`` was titled ``oloproof report — triage``).
_CLOSING_HASHES = re.compile(r"(?<=[ \t])#+[ \t]*$")


def _heading(text: str) -> str:
    """``text`` (escaped by :func:`md_cell`) as an ATX heading's text: a closing sequence of ``#`` it ends with is
    kept as text, its first ``#`` escaped (``\\#``, shown as ``#``)."""
    return _CLOSING_HASHES.sub(lambda found: "\\" + found.group(0), text)


def _html_line(line: str) -> tuple[str, str, bool]:
    """A line of prose for the HTML template: (the report's own lead, the line, whether it quotes the run). A line
    quoting the run is escaped as it is; the report's own prose may use `code` and **bold**."""
    return (line.lead if isinstance(line, Plain) else "", line, isinstance(line, Plain))


def _md_line(line: str) -> str:
    """A line of prose for the Markdown report: one quoting the run escaped (:func:`md_cell`), after its lead."""
    return line.lead + md_cell(line) if isinstance(line, Plain) else line


def _write_html(run: Run, sections: list[Section], path: Path) -> None:
    title, lines = _header(run, lambda value: Markup("<code>{}</code>").format(html_text(value)), html_text)
    verdict = next((s.verdict for s in sections if s.key == "gate"), "")
    items = []
    for sec in sections:
        figures = dict(sec.figures)
        sec_items = []
        for i, (name, shown, _raw) in enumerate(sec.tables):
            fig_name = sec.figures[i][0] if i < len(sec.figures) else None
            note = sec.notes.get(name)
            sec_items.append({"heading": sec.headings.get(name, ""), "note": [_html_line(note)] if note else [],
                              "table": Markup(html_table(shown, fmt_number, styled=True)) if len(shown.columns)
                              else "",
                              "figure": fig_name or "",
                              "png": base64.b64encode(figures[fig_name]).decode("ascii") if fig_name else ""})
        items.append({"key": sec.key, "title": sec.title, "text": [_html_line(line) for line in sec.text],
                      "parts": sec_items})
    page = render("report.html", title=title, css=Markup(PAGE_CSS + TABLE_CSS), verdict=verdict,
                  lines=[Markup(line) for line in lines], sections=items, cannot=_CANNOT,
                  rounding=_ROUNDING[0].upper() + _ROUNDING[1:], version=__version__)
    write_file(path, page + "\n")


def _write_md(run: Run, sections: list[Section], path: Path) -> None:
    files = path.parent / f"{path.stem}_files"  # made by write_report
    earlier = _earlier_files(path, files)  # read before the report replaces it
    for name in _file_names(sections):  # a read-only one is refused before any file is replaced, not half-way
        file = files / name
        if not file.is_symlink() and read_only(file):  # a link there is replaced (_own_file), never written through
            raise ExportError(f"{not_home(file)}: is read-only, so it is kept, and the report at {not_home(path)} with "
                              "it; make it writable first (chmod u+w), or choose another out=")
    written: set[str] = set()
    title, lines = _header(run, md_code, md_cell)
    out = [f"# {_heading(md_cell(title))}", ""]
    verdict = next((s.verdict for s in sections if s.key == "gate"), "")
    out += [f"**Gate: {verdict}**", ""] if verdict else []
    out += [line + "  " for line in lines] + [""]
    for sec in sections:
        out += [f"## {sec.title}", ""]
        out += [t for line in sec.text for t in (_md_line(line), "")]
        for i, (name, shown, raw) in enumerate(sec.tables):
            if name in sec.headings:
                out += [f"### {md_code(sec.headings[name])}", ""]
            if name in sec.notes:
                out += [_md_line(sec.notes[name]), ""]
            if not len(shown.columns):  # a heading and its note, no table
                continue
            csv = export_table(raw, _own_file(files / f"{_csv_stem(name)}.csv"))
            written.add(csv.name)
            out += [markdown_table(shown, fmt_number, styled=True), "",
                    f"Raw numbers: {md_link(f'{files.name}/{csv.name}', f'{files.name}/{csv.name}')}", ""]
            if i < len(sec.figures):
                fig_name, png = sec.figures[i]
                write_file(_own_file(files / f"{fig_name}.png"), png)
                written.add(f"{fig_name}.png")
                out += [md_link(f"{fig_name} plot", f"{files.name}/{fig_name}.png", image=True), ""]
    out += [f"_{_CANNOT}_", "", f"_oloproof_nb {__version__}; {_ROUNDING}._", ""]
    write_file(path, "\n".join(out))
    for name in sorted(earlier - written):  # the earlier report's, of another run: no longer this report's
        _remove_stale(files / name, path)


def _csv_stem(table: str) -> str:
    """The name of a table's CSV file in ``<stem>_files/``, without ``.csv`` (``slice tool_calls:1,2``:
    ``slice_tool_calls_1-2``)."""
    return table.replace("slice ", "slice_").replace(":", "_").replace(",", "-")


def _file_names(sections: list[Section]) -> list[str]:
    """The files :func:`_write_md` writes in ``<stem>_files/`` for ``sections``: each table's CSV and its plot."""
    names = []
    for sec in sections:
        for i, (name, shown, _raw) in enumerate(sec.tables):
            if len(shown.columns):  # a heading and its note alone write no file
                names.append(f"{_csv_stem(name)}.csv")
                if i < len(sec.figures):
                    names.append(f"{sec.figures[i][0]}.png")
    return names


#: A line of a Markdown report that links one of its files: ``Raw numbers: [label](target)`` or ``![label](target)``.
#: Text quoting the run never starts so (:func:`md_cell` writes ``[`` as ``\[``), and a target is percent-encoded
#: (:func:`md_link`: no parenthesis, no space).
_LINK_LINE = re.compile(r"(?:Raw numbers: |!)\[.*\]\(([^()\s]+)\)")


def _earlier_files(path: Path, files: Path) -> set[str]:
    """The names of the files in ``files`` (``<stem>_files/``) that the earlier Markdown report at ``path`` links (its
    tables and plots: the lines :func:`_link_line` writes); none when no earlier report stands there. Only a name
    directly in ``files`` counts."""
    if not _an_earlier_report(path):
        return set()
    names: set[str] = set()
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            for line in handle:
                found = _LINK_LINE.fullmatch(line.rstrip("\r\n"))
                if found is None:
                    continue
                folder, _, name = unquote(found.group(1), errors="surrogateescape").partition("/")
                if (folder == files.name and name not in ("", ".", "..") and "/" not in name
                        and line.rstrip("\r\n") == _link_line(files, name)):
                    names.add(name)
    except OSError:
        return set()  # read a moment ago: the write that follows says what is wrong, if anything
    return names


def _link_line(files: Path, name: str) -> str | None:
    """The line :func:`_write_md` writes to link ``name`` in ``files``: a table's ``Raw numbers: [<folder>/<name>](…)``,
    a plot's ``![<stem> plot](…)``; None for a name it never writes (neither ``.csv`` nor ``.png``). Only a line
    written so names a file of the earlier report: a link the user added to it (``![my photo](r_files/photo.png)``)
    names a file of theirs, which was removed with the report's."""
    target = f"{files.name}/{name}"
    if name.endswith(".csv"):
        return f"Raw numbers: {md_link(target, target)}"
    if name.endswith(".png"):
        return md_link(f"{name[:-len('.png')]} plot", target, image=True)
    return None


def _remove_stale(file: Path, report: Path) -> None:
    """Remove ``file``, a table or plot the earlier report at ``report`` wrote in its folder and this one did not (a
    list of failing cases of another run read as this run's); a folder of that name is left alone."""
    try:
        if file.is_symlink() or file.is_file():
            file.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise ExportError(f"{not_home(file)}: written by the earlier report at {not_home(report)}, not by this one, "
                          f"and cannot be removed ({why}); remove it, or choose another out=") from None


def _own_file(path: Path) -> Path:
    """``path``, a file the report names itself in ``<stem>_files/``, with a symbolic link found there removed: the
    report's plot or table is written in its place, never through the link (into the file it points to, anywhere
    the user can write)."""
    if path.is_symlink():
        path.unlink()
    return path


def write_report(run: Run, out: str | Path, release: ReleaseLike | None = None,
                 baseline: Baseline | Run | None = None) -> Path:
    """Write a report of ``run``: gate, the cases that did not pass, validity, replays, slice tables and their plots.

    Parameters
    ----------
    run : Run
        A stored run (``op.load_run(dir)``).
    out : str or Path
        ``*.html`` — one standalone file, plots embedded as base64 PNG; or
        ``*.md`` — Markdown, with the plots (PNG) and raw tables (CSV) in
        ``<stem>_files/`` beside it. An earlier report (or an empty file) there is replaced, and with an earlier
        Markdown report the tables and plots it wrote in ``<stem>_files/`` that this one does not write again (the
        list of cases that did not pass of another run; a file the user put there is kept, even one a line of theirs
        in the report links); any other
        file is kept and the report refused (an ``OloproofError`` naming it), so a typo never replaces a
        file the user wrote. A ``<stem>_files/`` that holds anything is written into only when an earlier
        Markdown report stands at ``out`` (else refused the same way: it may be the user's own folder).
        Nothing is written through a symbolic link in ``<stem>_files/`` (a link in place of one of its files
        is replaced by the file), and a ``<stem>_files`` that is a link is refused.
    release : ReleaseConfig, dict or path, optional
        Another release.yaml to apply (default: the suite's).
    baseline : Baseline or Run, optional
        The do-nothing baseline (``op.baseline(suite)``): the gate table shows ``noop_rate`` and
        ``passes_when_idle``.

    Returns
    -------
    Path
        The report written.

    Raises
    ------
    OloproofError
        When ``out`` ends in anything but ``.html`` or ``.md``, or is a folder.

    Notes
    -----
    Sections: the gate (table and plot); the cases that did not pass, by
    criterion in the gate table's order (each criterion that did not pass, and
    any other with a row that did not pass; at most ``FAILING_LIMIT`` (20)
    cases each, the rest counted; none when every row passed); the case runs
    that ended in error; transform validity when the suite declares
    transforms; a fault-replay summary when the run replayed anything; the
    outcome receipts (summary, and each one not verified) when cases promised
    outcomes; one slice table and plot per spec in
    oloproof.yaml's ``slices``. Tables are rounded to three decimals for
    display, intervals outward.
    """
    return report_and_gate(run, out, release, baseline)[0]


def report_and_gate(run: Run, out: str | Path, release: ReleaseLike | None = None,
                    baseline: Baseline | Run | None = None) -> tuple[Path, Gate]:
    """:func:`write_report`, and the gate the report shows (``oloproof report`` exits on it; decided once)."""
    path = report_path(out)
    suffix = path.suffix.lower()
    g = gate(run, release=release, baseline=baseline)
    sections = _sections(run, g, release)
    make_folder(path.parent, f"the folder of the report {path.name}", "choose another out=")
    if suffix == ".md":
        files = path.parent / f"{path.stem}_files"
        if files.is_symlink():  # its files would be written into the folder it points to, over files of that name
            raise OloproofError(f"{not_home(files)}: is a symbolic link; the report {path.name} writes its plots and "
                                "tables into a folder of its own there, never through a link (remove it, or choose "
                                "another out=)")
        make_folder(files, f"where the report {path.name} keeps its plots and tables", "choose another out=")
    (_write_html if suffix == ".html" else _write_md)(run, sections, path)
    return path, g


def report_path(out: str | Path) -> Path:
    """``out`` as a path, once its suffix says a report it can be (``.html`` or ``.md``, any case)."""
    path = Path(out)
    suffix = path.suffix.lower()
    if suffix not in REPORT_SUFFIXES:
        raise OloproofError(f"{not_home(path)}: a report is .html or .md, not {suffix or '(no suffix)'!r}")
    if path.is_dir():  # refused only once the report was made, and a Markdown one had filled <stem>_files/ by then
        raise OloproofError(f"{not_home(path)}: is a folder, not a report's file; choose another out=, e.g. "
                            f"{not_home(path / f'report{path.suffix}')}")
    if _a_file_of_the_user(path):  # `--out README.md` in the suite folder replaced the suite's README
        raise OloproofError(f"{not_home(path)}: exists and is no oloproof report, so it is kept; choose another out=, "
                            "or remove the file first to put the report there")
    if read_only(path):  # an earlier report made read-only: refused before its tables and plots are written
        raise OloproofError(f"{not_home(path)}: is read-only, so it is kept; choose another out=, or make it writable "
                            "first (chmod u+w)")
    files = path.parent / f"{path.stem}_files"
    if suffix == ".md" and _holds_files(files) and not _an_earlier_report(path):
        # `--out notes.md` beside the user's own notes_files/ replaced its gate.csv and gate.png: only an earlier
        # report at `out` says the folder is a report's
        raise OloproofError(f"{not_home(files)}: holds files and no earlier oloproof report stands at "
                            f"{not_home(path)} to own them, so they are kept; choose another out=, or empty or remove "
                            f"{files.name}/ first")
    return path


#: How a report this module wrote starts: its title (``oloproof report — <suite>``) as the Markdown heading, or
#: as the HTML page's ``<title>`` after the doctype. A file that only mentions the words elsewhere is the user's.
_REPORT_TITLE = "oloproof report — "
_MD_START = f"# {_REPORT_TITLE}".encode()
_HTML_START = re.compile(rb"\A<!DOCTYPE html>\s*<html[^>]*>\s*<head>\s*(?:<meta [^>]*>\s*)*<title>"
                         + re.escape(_REPORT_TITLE.encode()))


def _holds_files(folder: Path) -> bool:
    """Whether ``folder`` is a folder (not a link to one) with anything in it."""
    try:
        return not folder.is_symlink() and folder.is_dir() and any(folder.iterdir())
    except OSError:
        return False  # unreadable: make_folder or the write says what is wrong


def _an_earlier_report(path: Path) -> bool:
    """Whether ``path`` is a regular file holding a Markdown report written here (not an empty file: it owns no
    ``<stem>_files/``)."""
    try:
        head = _head(path)
    except OSError:
        return False
    return head is not None and head.startswith(_MD_START)


def _head(path: Path) -> bytes | None:
    """The first 4 KiB of ``path`` when it is a regular file (None: nothing there, or not a regular file: a named
    pipe or a device is never opened); an ``OSError`` when it cannot be read (mode 000)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
    except OSError:
        return None
    with open(path, "rb") as handle:
        return handle.read(4096)


def _a_file_of_the_user(path: Path) -> bool:
    """Whether ``path`` is a regular file that is not a report written here (one is replaced, as a report of the
    run again; a named pipe or a device is replaced by :func:`write_file` without being opened)."""
    try:
        head = _head(path)  # None: nothing there (the write says what is wrong, if anything), or a pipe
    except OSError:
        return True  # a file that cannot be read (mode 000) cannot be told from the user's: kept
    return head is not None and head != b"" and not (head.startswith(_MD_START) or _HTML_START.match(head))

