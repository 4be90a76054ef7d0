"""The metamorphic pair section of the case panel: a case's pair partners and the relation verdicts."""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from .panel import CasePanel
    from .results import Run

__all__ = ["pair_partners", "pair_text", "pair_html"]


def _show(value: Any, limit: int = 160) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def pair_partners(run: Run, case: dict[str, Any]) -> tuple[list[str], pd.DataFrame]:
    """A case's pair partners and its rows of ``run.pairs``.

    A source case's partners are its derived copies (in run order); a derived
    case's partner is its source. Partners not recorded in the run are left out.
    """
    case_id = case["id"]
    recorded = [rec["case"] for rec in run.records]
    if case.get("transform"):
        partners = [c["id"] for c in recorded if c["id"] == case["source_id"]]
    else:
        partners = [c["id"] for c in recorded if c.get("source_id") == case_id and c["id"] != case_id]
    pairs = run.pairs
    mine = pairs[(pairs["source_id"] == case_id) | (pairs["derived_id"] == case_id)].reset_index(drop=True)
    return partners, mine


def _holds_word(holds: Any) -> str:
    if holds is pd.NA or holds is None:
        return "missing"
    return "holds" if bool(holds) else "BROKEN"


def _input_changes(mine: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """The partner's input values that differ from this case's."""
    return {k: v for k, v in other.items() if mine.get(k) != v}


def _partner_summary(panel: CasePanel, partner_id: str) -> tuple[str, dict[str, Any], Any, str]:
    rec = panel.run.record(partner_id)
    traj = rec.get("trajectory")
    changed = _input_changes(panel.input, rec["case"]["input"])
    return rec["case"].get("transform") or "source", changed, traj.get("answer") if traj else None, rec["status"]


def _pair_rows(panel: CasePanel, partner_id: str) -> pd.DataFrame:
    p = panel.pairs
    return p[(p["source_id"] == partner_id) | (p["derived_id"] == partner_id)]


def pair_text(panel: CasePanel) -> list[str]:
    """Text lines of the pair section (none when the case has no partner)."""
    if not panel.partners:
        return []
    lines = ["  pair partners:"]
    for pid in panel.partners:
        kind, changed, answer, status = _partner_summary(panel, pid)
        lines.append(f"    {pid} ({kind}) — status {status}, answer {_show(answer, 60)}, input {_show(changed, 120)}")
        for r in _pair_rows(panel, pid).itertuples():
            label = r.label or "unlabeled"
            lines.append(f"      {_holds_word(r.holds):7} {r.criterion} (label: {label})")
    return lines


def pair_html(panel: CasePanel) -> str:
    """HTML of the pair section (empty when the case has no partner)."""
    if not panel.partners:
        return ""
    esc = html.escape
    colour = {"holds": "#1a7f37", "BROKEN": "#cf222e", "missing": "#9a6700"}
    parts = ["<h5>Pair partners</h5>",
             "<table><tr><th>partner</th><th>transform</th><th>status</th><th>answer</th><th>input that differs</th>"
             "<th>relation</th><th>result</th><th>label</th></tr>"]
    for pid in panel.partners:
        kind, changed, answer, status = _partner_summary(panel, pid)
        rows = list(_pair_rows(panel, pid).itertuples()) or [None]
        for r in rows:
            word = "" if r is None else _holds_word(r.holds)
            crit = "" if r is None else esc(str(r.criterion))
            label = "" if r is None else esc(r.label or "unlabeled")
            parts.append(f"<tr><td><code>{esc(pid)}</code></td><td>{esc(kind)}</td><td>{esc(status)}</td>"
                         f"<td><code>{esc(_show(answer, 80))}</code></td><td><code>{esc(_show(changed, 200))}</code>"
                         f'</td><td>{crit}</td><td style="color:{colour.get(word, "#000")}"><b>{esc(word)}</b></td>'
                         f"<td>{label}</td></tr>")
    parts.append("</table>")
    return "\n".join(parts)
