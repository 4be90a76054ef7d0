"""The case panel's replay section: the recorded steps next to the faulted steps of each fault replay."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import pandas as pd

from .paths import leaf_diff, values_equal

if TYPE_CHECKING:
    from .panel import CasePanel

__all__ = ["replay_views", "replay_text", "replay_html"]


def _step_text(step: dict[str, Any] | None, limit: int) -> str:
    from .panel import _show

    if step is None:
        return ""
    if step.get("kind") == "tool_call":
        return f"{step.get('tool')}({_show(step.get('args'), limit // 2)}) -> {_show(step.get('result'), limit // 2)}"
    who = step.get("name") or step.get("role") or "message"
    return f"{who}: {_show(step.get('content'), limit)}"


def replay_views(panel: CasePanel) -> list[dict[str, Any]]:
    """One view per fault replay of the panel's case.

    Returns
    -------
    list of dict
        ``row`` (the case's row of ``run.replays``), ``pairs`` (list of
        ``(index, recorded step, faulted step)``, None where a side has no step
        at that index), ``recorded_answer``, ``faulted_answer``, ``has_fault``
        (a faulted replay was recorded) and ``state_diff`` (``(path, recorded,
        faulted)`` leaves where the faulted replay's state differs from the recorded state).
    """
    recorded = panel.record.get("trajectory") or {}
    recorded_steps = recorded.get("steps", [])
    recorded_env = panel.record.get("environment_state") or {}
    views = []
    for row in panel.replays.to_dict("records"):
        fault = next((r for r in panel.replay_records
                      if r.get("kind") == "fault" and r.get("criterion") == row["criterion"]), None)
        faulted = (fault or {}).get("trajectory") or {}
        faulted_steps = faulted.get("steps", [])
        n = max(len(recorded_steps), len(faulted_steps)) if faulted else len(recorded_steps)
        pairs = [(i, recorded_steps[i] if i < len(recorded_steps) else None,
                  faulted_steps[i] if i < len(faulted_steps) else None) for i in range(n)]
        fault_env = (fault or {}).get("environment_state") or {}
        diff = (leaf_diff(recorded_env["state"], fault_env["state"])
                if "state" in recorded_env and "state" in fault_env else [])
        views.append({"row": row, "pairs": pairs, "recorded_answer": recorded.get("answer"),
                      "faulted_answer": faulted.get("answer"), "has_fault": bool(faulted), "state_diff": diff})
    return views


def _flag(value: Any) -> bool | None:
    """A boolean cell as True / False, or None when it is NA."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return None
    return bool(value)


def _headline(row: dict[str, Any]) -> str:
    notes = []
    if _flag(row.get("control_reproduced")) is True:
        notes.append("control reproduced")
    elif _flag(row.get("control_reproduced")) is False:
        notes.append("control NOT reproduced")
    if _flag(row.get("cached")):
        notes.append("cached")
    extra = f" ({', '.join(notes)})" if notes else ""
    return (f"replay {row['criterion']}: {row['tool']} -> {row['fault']} at step {row['checkpoint']} — "
            f"{str(row['verdict']).upper()} {row['reason']}{extra}")


def replay_text(panel: CasePanel, width: int = 160) -> list[str]:
    """Text lines of the replay section (empty when the case has no replay).

    A step both sides share is printed once, marked ``(same)``; a step that
    differs is printed twice, the recorded line above the faulted one.
    """
    from .panel import _show

    views = replay_views(panel)
    lines = ["  fault replays:"] if views else []
    for view in views:
        row = view["row"]
        lines.append(f"    {_headline(row)}")
        if not view["has_fault"]:
            continue
        for i, rec, fau in view["pairs"]:
            mark = "  <- fault" if i == row["checkpoint"] else ""
            label = f"[{i}]"
            if rec is not None and fau is not None and values_equal(rec, fau):
                lines.append(f"      {label:5} {_step_text(rec, width)}  (same)")
                continue
            lines.append(f"      {label:5} recorded {_step_text(rec, width) if rec is not None else '(no step)'}")
            lines.append(f"      {'':5} faulted  {_step_text(fau, width) if fau is not None else '(no step)'}{mark}")
        lines.append(f"      answer: recorded {_show(view['recorded_answer'], 80)} | "
                     f"faulted {_show(view['faulted_answer'], 80)}")
        for path, before, after in view["state_diff"]:
            lines.append(f"      state {path}: recorded {_show(before, 60)} | faulted {_show(after, 60)}")
    return lines


def replay_html(panel: CasePanel) -> str:
    """HTML of the replay section: per replay, a recorded | faulted table (empty when there is none)."""
    from .panel import _show

    esc = html.escape
    colour = {"pass": "#1a7f37", "fail": "#cf222e", "missing": "#9a6700"}
    views = replay_views(panel)
    parts = ["<h5>Fault replays</h5>"] if views else []
    for view in views:
        row = view["row"]
        parts.append(f"<p><b>replay</b> <code>{esc(str(row['criterion']))}</code>: "
                     f"<code>{esc(str(row['tool']))}</code> &rarr; <code>{esc(str(row['fault']))}</code> at step "
                     f"{esc(str(row['checkpoint']))} — <b style=\"color:{colour.get(row['verdict'], '#000')}\">"
                     f"{esc(str(row['verdict']))}</b> {esc(str(row['reason']))}"
                     f"{' (cached)' if _flag(row.get('cached')) else ''}</p>")
        if not view["has_fault"]:
            continue
        parts.append("<table><tr><th>#</th><th>recorded</th><th>faulted</th></tr>")
        for i, rec, fau in view["pairs"]:
            style = ' style="background:#fff8c5"' if i == row["checkpoint"] else ""
            parts.append(f"<tr{style}><td>{i}</td><td><code>{esc(_step_text(rec, 160))}</code></td>"
                         f"<td><code>{esc(_step_text(fau, 160))}</code></td></tr>")
        parts.append(f"<tr><td><i>answer</i></td><td><code>{esc(_show(view['recorded_answer']))}</code></td>"
                     f"<td><code>{esc(_show(view['faulted_answer']))}</code></td></tr>")
        for path, before, after in view["state_diff"]:
            parts.append(f"<tr><td><i>state</i> <code>{esc(path)}</code></td><td><code>{esc(_show(before))}</code>"
                         f"</td><td><code>{esc(_show(after))}</code></td></tr>")
        parts.append("</table>")
    return "\n".join(parts)
