"""A report of one stored run: the gate, validity, replays and slice tables, with their plots.

``write_report(run, "report.html")`` writes one standalone HTML file (plots
embedded as base64 PNG, no external references); ``write_report(run,
"report.md")`` writes Markdown with the plots and the raw tables (CSV) in
``report_files/`` beside it. Tables in a report are rounded for the eye
(three decimals); the exact numbers are in ``op.export_table`` exports and, for
Markdown reports, in the CSV files written beside it.
"""

from __future__ import annotations

import base64
import html
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from tabulate import tabulate

from ._version import __version__
from .errors import OloproofError
from .export import TABLE_CSS, export_table

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from .release import ReleaseConfig
    from .results import Run

__all__ = ["REPORT_SUFFIXES", "write_report", "build_sections", "Section"]

REPORT_SUFFIXES: tuple[str, ...] = (".html", ".md")
_COLOURS = {"PASS": "#1a7f37", "FAIL": "#cf222e", "INSUFFICIENT_EVIDENCE": "#9a6700", "REPORT_ONLY": "#57606a",
            "BLOCK": "#cf222e"}
_CANNOT = ("What this report cannot tell: why the agent acted as it did; anything about a live system (only the "
           "sandbox the suite wrote was checked) or whether that sandbox behaves like production; faults and "
           "transforms nobody declared; a trend of errors with trajectory length (slice tables are descriptive: "
           "bins side by side, no fitted curve).")


@dataclass
class Section:
    """One part of a report: a heading, prose, tables (display frame, raw frame, name) and figures."""

    key: str
    title: str
    text: list[str] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame, pd.DataFrame]] = field(default_factory=list)
    figures: list[tuple[str, bytes]] = field(default_factory=list)
    verdict: str = ""


def _num(value: Any) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        return f"{value:.3f}"
    return str(value)


def _display(df: pd.DataFrame) -> pd.DataFrame:
    """A copy with every cell as display text (three decimals; booleans as yes/blank)."""
    return pd.DataFrame([[_num(v) for v in row] for row in df.itertuples(index=False, name=None)],
                        columns=list(df.columns), dtype=object)


def _png(ax: Axes) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    ax.figure.savefig(buf, format="png", dpi=130, bbox_inches="tight", facecolor="white")
    plt.close(ax.figure)
    return buf.getvalue()


def _gate_section(run: Run, release: ReleaseConfig | dict[str, Any] | str | Path | None) -> Section:
    from . import plots
    from .gate import gate

    g = gate(run, release=release)
    sec = Section("gate", "Release gate", verdict=g.verdict)
    sec.text.append(f"Verdict **{g.verdict}** ({'clustered' if g.clustered else 'unclustered'} run, "
                    f"{g.n_source_clusters} source clusters, {g.release.confidence:.0%} intervals). A criterion "
                    "passes when its interval's lower end is at or above the threshold and fails when its upper "
                    "end is below; otherwise the evidence is insufficient.")
    shown = g.table[["criterion", "n", "n_clusters", "passed", "missing", "rate"]].copy()
    shown[f"{g.release.confidence:.0%} CI"] = [f"[{_num(lo)}, {_num(hi)}]" if _num(lo) else ""
                                               for lo, hi in zip(g.table["ci_low"], g.table["ci_high"], strict=True)]
    shown = pd.concat([shown, g.table[["method", "threshold", "verdict", "reason"]]], axis=1)
    sec.tables.append(("gate", shown, g.table))
    sec.figures.append(("gate", _png(plots.gate(g))))
    return sec


def _validity_section(run: Run) -> Section | None:
    if not run.config.metamorphic.transforms:
        return None
    try:
        from .validity import validity
    except ImportError:  # pragma: no cover - validity lands with the metamorphic issue
        return None
    from . import plots

    table = validity(run)
    sec = Section("validity", "Transform validity")
    sec.text.append("Human labels say whether each metamorphic copy kept the request's meaning. A transform is "
                    "checked when every pair is labeled and the valid share reaches its minimum; until then the "
                    "gate reports its relations as insufficient evidence.")
    sec.tables.append(("validity", table, table))
    sec.figures.append(("validity", _png(plots.validity(table))))
    return sec


def _replays_section(run: Run) -> Section | None:
    rep = run.replays
    if rep.empty:
        return None
    rows = []
    for (criterion, tool, fault), sub in rep.groupby(["criterion", "tool", "fault"], sort=False):
        rows.append({"criterion": criterion, "tool": tool, "fault": fault, "replays": len(sub),
                     "passed": int((sub["verdict"] == "pass").sum()), "failed": int((sub["verdict"] == "fail").sum()),
                     "missing": int((sub["verdict"] == "missing").sum()),
                     "control_reproduced": int(sub["control_reproduced"].fillna(False).astype(bool).sum()),
                     "recovered": int(sub["recovered"].fillna(False).astype(bool).sum()),
                     "escalated": int(sub["escalated"].fillna(False).astype(bool).sum()),
                     "constraint_broken": int(sub["constraint_broken"].fillna(False).astype(bool).sum()),
                     "cached": int(sub["cached"].fillna(False).astype(bool).sum())})
    table = pd.DataFrame(rows)
    sec = Section("replays", "Fault replays")
    sec.text.append("Each case that made the call was replayed from the checkpoint before it with the call's "
                    "result replaced by the fault, after a control replay reproduced the recording. Counts are "
                    "replays; see `run.replays` and `run.panel(case_id)` for each one.")
    sec.tables.append(("replays", table, table))
    return sec


def _slices_section(run: Run, release: ReleaseConfig | dict[str, Any] | str | Path | None) -> Section:
    from . import plots
    from .slices import slice_table

    sec = Section("slices", "Slices")
    if not run.config.slices:
        sec.text.append("No slices declared: add e.g. `slices: [\"tool_calls:1,2\"]` to oloproof.yaml.")
        return sec
    sec.text.append("Pass rate per bin of a trajectory measure, with the interval the gate would use: each cell "
                    "is `rate [ci_low, ci_high] n=support`; † marks a bin with fewer clusters than `min_clusters` "
                    "(read its interval with care), — an empty bin, and `n/a` cases that recorded no trajectory. "
                    "Descriptive only: compare bins with their intervals and supports; no trend is fitted.")
    for spec in run.config.slices:
        table = slice_table(run, spec, release=release)
        shown = _slice_display(table)
        name = spec.replace(":", "_").replace(",", "-")
        sec.tables.append((f"slice {spec}", shown, table))
        sec.figures.append((f"slice_{name}", _png(plots.slices(table))))
    return sec


def _slice_display(table: pd.DataFrame) -> pd.DataFrame:
    """One row per criterion, one column per bin: ``rate [low, high] n=support`` (``†`` few clusters, ``—`` empty)."""
    from .slices import NA_BIN

    bins = list(dict.fromkeys(table["bin"]))
    if int(table.loc[table["bin"] == NA_BIN, "support"].sum()) == 0:
        bins.remove(NA_BIN)
    rows = []
    for criterion, sub in table.groupby("criterion", sort=False):
        row: dict[str, str] = {"criterion": str(criterion)}
        for r in sub.itertuples(index=False):
            if r.bin in bins:
                row[r.bin] = "—" if r.support == 0 else (
                    f"{r.rate:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}] n={r.support}{' †' if r.few_clusters else ''}")
        rows.append(row)
    return pd.DataFrame(rows, columns=["criterion", *bins], dtype=object)


def build_sections(run: Run, release: ReleaseConfig | dict[str, Any] | str | Path | None = None) -> list[Section]:
    """The report's sections, in order: gate, validity (with transforms), replays (if any), slices."""
    found = [_gate_section(run, release), _validity_section(run), _replays_section(run),
             _slices_section(run, release)]
    return [s for s in found if s is not None]


def _header(run: Run) -> tuple[str, list[str]]:
    status = run.cases["status"].value_counts().to_dict() if len(run.records) else {}
    lines = [f"Run `{run.run_id}` of suite `{run.suite_name}`, system version `{run.system_version}`.",
             f"{len(run.records)} cases ({', '.join(f'{k}: {v}' for k, v in status.items()) or 'none'}); "
             f"started {run.manifest.get('started_at', '?')}, "
             + (f"finished {run.manifest['finished_at']}." if run.finished else "**not finished**.")]
    return f"oloproof report — {run.suite_name}", lines


def _md_inline(text: str) -> str:
    """Markdown ``**b**`` and backticks to HTML (the only markup the report's prose uses)."""
    out, parts = [], text.split("`")
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f"<code>{html.escape(part)}</code>")
        else:
            bits = html.escape(part).split("**")
            out.append("".join(f"<b>{b}</b>" if j % 2 else b for j, b in enumerate(bits)))
    return "".join(out)


def _html_table(df: pd.DataFrame) -> str:
    esc = html.escape
    numeric = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) for c in df.columns]
    head = "".join(f"<th>{esc(str(c)).replace('_', '_<wbr>')}</th>" for c in df.columns)
    body = []
    for row in df.itertuples(index=False, name=None):
        cells = []
        for col, value, num in zip(df.columns, row, numeric, strict=True):
            text = esc(_num(value))
            if col == "verdict" and value in _COLOURS:
                text = f'<b style="color:{_COLOURS[value]}">{text.replace("_", "_<wbr>")}</b>'
            elif col == "checked":
                text = '<b style="color:#1a7f37">checked</b>' if value else '<b style="color:#9a6700">no</b>'
            if num:
                cells.append(f'<td class="num">{text}</td>')
            else:
                wrap = col == "reason"
                if wrap:
                    cells.append(f'<td class="wrap">{text.replace("_", "_<wbr>")}</td>')
                else:
                    cells.append(f'<td class="ci">{text}</td>' if str(col).endswith(" CI") else f"<td>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


_PAGE_CSS = ("body{font:14px/1.5 system-ui,-apple-system,'Segoe UI',sans-serif;color:#24292f;max-width:1200px;"
             "margin:24px auto;padding:0 16px}h1{font-size:24px;margin-bottom:4px}h2{font-size:19px;"
             "border-bottom:1px solid #d0d7de;padding-bottom:4px;margin-top:32px}h3{font-size:15px}"
             "img{max-width:100%;display:block;margin:12px 0}.verdict{font-size:18px;font-weight:700}"
             ".muted{color:#57606a;font-size:12.5px}.tables{overflow-x:auto}td.wrap{min-width:200px;font-size:12px}"
             ".tables table{font-size:12.5px}td{vertical-align:top}td.ci{white-space:nowrap}")


def _write_html(run: Run, sections: list[Section], path: Path) -> None:
    title, lines = _header(run)
    verdict = next((s.verdict for s in sections if s.key == "gate"), "")
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{html.escape(title)}</title><style>{_PAGE_CSS}{TABLE_CSS}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>",
             f'<p class="verdict">Gate: <span style="color:{_COLOURS.get(verdict, "#24292f")}">'
             f"{html.escape(verdict)}</span></p>"]
    parts += [f"<p>{_md_inline(line)}</p>" for line in lines]
    for sec in sections:
        parts.append(f'<h2 id="{sec.key}">{html.escape(sec.title)}</h2>')
        parts += [f"<p>{_md_inline(t)}</p>" for t in sec.text]
        figures = dict(sec.figures)
        for i, (name, shown, _raw) in enumerate(sec.tables):
            if name.startswith("slice "):
                parts.append(f"<h3><code>{html.escape(name[6:])}</code></h3>")
            parts.append(f'<div class="tables">{_html_table(shown)}</div>')
            fig_name = sec.figures[i][0] if i < len(sec.figures) else None
            if fig_name is not None:
                data = base64.b64encode(figures[fig_name]).decode("ascii")
                parts.append(f'<img alt="{html.escape(fig_name)} plot" src="data:image/png;base64,{data}">')
    parts.append(f'<p class="muted">{html.escape(_CANNOT)}</p>')
    parts.append(f'<p class="muted">oloproof_nb {html.escape(__version__)}. Numbers rounded to three decimals for '
                 "display; <code>op.export_table</code> writes them unrounded.</p></body></html>")
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")


def _md_table(df: pd.DataFrame) -> str:
    shown = _display(df)
    rows = [[c.replace("|", "\\|") for c in row] for row in shown.itertuples(index=False, name=None)]
    align = ["right" if pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) else "left"
             for c in df.columns]
    return tabulate(rows, headers=list(df.columns), tablefmt="github", disable_numparse=True, colalign=align)


def _write_md(run: Run, sections: list[Section], path: Path) -> None:
    files = path.parent / f"{path.stem}_files"
    files.mkdir(parents=True, exist_ok=True)
    title, lines = _header(run)
    out = [f"# {title}", ""]
    out += [line + "  " for line in lines] + [""]
    for sec in sections:
        out += [f"## {sec.title}", ""]
        out += [t for t in sec.text for t in (t, "")]
        for i, (name, shown, raw) in enumerate(sec.tables):
            stem = name.replace("slice ", "slice_").replace(":", "_").replace(",", "-")
            csv = export_table(raw, files / f"{stem}.csv")
            if name.startswith("slice "):
                out += [f"### `{name[6:]}`", ""]
            out += [_md_table(shown), "", f"Raw numbers: [{files.name}/{csv.name}]({files.name}/{csv.name})", ""]
            if i < len(sec.figures):
                fig_name, png = sec.figures[i]
                (files / f"{fig_name}.png").write_bytes(png)
                out += [f"![{fig_name} plot]({files.name}/{fig_name}.png)", ""]
    out += [f"_{_CANNOT}_", "", f"_oloproof_nb {__version__}; numbers rounded to three decimals for display._", ""]
    path.write_text("\n".join(out), encoding="utf-8")


def write_report(run: Run, out: str | Path, release: ReleaseConfig | dict[str, Any] | str | Path | None = None
                 ) -> Path:
    """Write a report of ``run``: gate, validity, replays, slice tables and their plots.

    Parameters
    ----------
    run : Run
        A stored run (``op.load_run(dir)``).
    out : str or Path
        ``*.html`` — one standalone file, plots embedded as base64 PNG; or
        ``*.md`` — Markdown, with the plots (PNG) and raw tables (CSV) in
        ``<stem>_files/`` beside it. Existing files are overwritten.
    release : ReleaseConfig, dict or path, optional
        Another release.yaml to apply (default: the suite's).

    Returns
    -------
    Path
        The report written.

    Raises
    ------
    OloproofError
        When ``out`` ends in anything but ``.html`` or ``.md``.

    Notes
    -----
    Sections: the gate (table and plot); transform validity when the suite
    declares transforms; a fault-replay summary when the run replayed
    anything; one slice table and plot per spec in oloproof.yaml's
    ``slices``. Tables are rounded to three decimals for display.
    """
    path = Path(out)
    suffix = path.suffix.lower()
    if suffix not in REPORT_SUFFIXES:
        raise OloproofError(f"{path}: a report is .html or .md, not {suffix or '(no suffix)'!r}")
    sections = build_sections(run, release)
    path.parent.mkdir(parents=True, exist_ok=True)
    (_write_html if suffix == ".html" else _write_md)(run, sections, path)
    return path
