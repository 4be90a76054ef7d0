"""The case panel: one case's input, steps, verdicts and every compared path."""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING, Any

import pandas as pd

from .pair_panel import pair_html, pair_partners, pair_text
from .paths import Absent
from .replay_panel import replay_html, replay_text

if TYPE_CHECKING:
    from .results import Run

__all__ = ["CasePanel"]


def _show(value: Any, limit: int = 160) -> str:
    if isinstance(value, Absent):
        return "<absent>"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class CasePanel:
    """Everything about one case, for a notebook cell.

    Attributes
    ----------
    case_id : str
    input : dict
    status : str
    answer : object
    steps, verdicts, comparisons, changes, replays : pandas.DataFrame
        The case's rows of the run's frames.
    replay_records : list of dict
        The case's records of ``replays.jsonl`` (control and faulted replays, each with its
        trajectory and ``environment_state/v1``); shown recorded | faulted, step by step.
    partners : list of str
        The metamorphic pair partners: a source case's derived copies, or a derived case's source.
    pairs : pandas.DataFrame
        The rows of ``run.pairs`` the case is part of (relation verdicts and labels).
    """

    def __init__(self, run: Run, case_id: str) -> None:
        self.run = run
        self.record = run.record(case_id)
        self.case_id = case_id
        case = self.record["case"]
        self.input: dict[str, Any] = case["input"]
        self.initial_state: dict[str, Any] = case.get("initial_state", {})
        self.expected: dict[str, Any] | None = case.get("expected")
        self.status: str = self.record["status"]
        traj = self.record.get("trajectory")
        self.answer: Any = traj.get("answer") if traj else None
        self.error: str | None = self.record.get("error")

        def rows(df: pd.DataFrame, key: str = "case_id") -> pd.DataFrame:
            return df[df[key] == case_id].reset_index(drop=True)

        self.steps = rows(run.steps)
        self.verdicts = rows(run.verdicts)
        self.comparisons = rows(run.comparisons)
        self.changes = rows(run.changes)
        self.replays = rows(run.replays)
        self.partners, self.pairs = pair_partners(run, case)
        self.replay_records = [r for r in run.replay_records if r.get("case_id") == case_id]

    def __repr__(self) -> str:
        lines = [f"Case {self.case_id} — status {self.status}, answer {_show(self.answer)}",
                 f"  input: {_show(self.input)}"]
        if self.error:
            lines.append(f"  error: {self.error}")
        for s in self.steps.itertuples():
            if s.kind == "tool_call":
                lines.append(f"  [{s.step}] {s.tool}({_show(s.args, 80)}) -> {_show(s.result, 80)}")
            else:
                lines.append(f"  [{s.step}] {s.role}: {_show(s.content, 100)}")
        for v in self.verdicts.itertuples():
            lines.append(f"  {v.verdict.upper():7} {v.criterion} {v.reason}")
        for c in self.comparisons.itertuples():
            lines.append(f"    {'ok ' if c.ok else 'BAD'} {c.criterion}: {c.path} expected {_show(c.expected, 60)} "
                         f"actual {_show(c.actual, 60)}")
        lines += replay_text(self)
        lines += pair_text(self)
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        esc = html.escape
        colour = {"pass": "#1a7f37", "fail": "#cf222e", "missing": "#9a6700"}
        parts = [f"<h4>Case <code>{esc(self.case_id)}</code> — {esc(self.status)}</h4>",
                 f"<p><b>input</b> <code>{esc(_show(self.input, 400))}</code><br>"
                 f"<b>answer</b> <code>{esc(_show(self.answer, 400))}</code></p>"]
        if self.error:
            parts.append(f"<p><b>error</b> {esc(self.error)}</p>")
        parts.append("<table><tr><th>#</th><th>step</th><th>result</th></tr>")
        for s in self.steps.itertuples():
            if s.kind == "tool_call":
                style = ' style="color:#cf222e"' if s.is_error else ""
                parts.append(f"<tr><td>{s.step}</td><td><code>{esc(str(s.tool))}({esc(_show(s.args, 120))})"
                             f"</code></td><td{style}><code>{esc(_show(s.result, 120))}</code></td></tr>")
            else:
                parts.append(f"<tr><td>{s.step}</td><td><i>{esc(str(s.role))}</i></td>"
                             f"<td>{esc(_show(s.content, 200))}</td></tr>")
        parts.append("</table><table><tr><th>criterion</th><th>verdict</th><th>reason</th></tr>")
        for v in self.verdicts.itertuples():
            parts.append(f'<tr><td>{esc(v.criterion)}</td><td style="color:{colour.get(v.verdict, "#000")}">'
                         f"<b>{esc(v.verdict)}</b></td><td>{esc(v.reason)}</td></tr>")
        parts.append("</table><table><tr><th>criterion</th><th>path</th><th>expected</th><th>actual</th>"
                     "<th>ok</th></tr>")
        for c in self.comparisons.itertuples():
            mark = "✓" if c.ok else '<b style="color:#cf222e">✗</b>'
            parts.append(f"<tr><td>{esc(c.criterion)}</td><td><code>{esc(c.path)}</code></td>"
                         f"<td><code>{esc(_show(c.expected))}</code></td><td><code>{esc(_show(c.actual))}</code>"
                         f"</td><td>{mark}</td></tr>")
        parts.append("</table>")
        parts.append(replay_html(self))
        parts.append(pair_html(self))
        return "\n".join(parts)
