"""The case panel: one case's input, steps, verdicts, every compared path, its replays and its pair partners."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .._analysis.run import Run
from .._core.pairs import injected_paths
from .._core.paths import get_path, leaf_diff, values_equal
from ..errors import terminal_text
from ..evaluators.state import StateMatches
from .html import render, step_text
from .theme import HIGHLIGHT, contrast, fmt_text, preview

__all__ = ["CasePanel", "UNSCORED_NOTE"]

#: What the panel of a copy no criterion scores says first (:attr:`CasePanel.unscored`).
UNSCORED_NOTE = ("scored by no criterion: labeled invalid, and its transform is checked (op.validity(run)); what its "
                 "checks found below counts in no verdict")

#: Rows shown of each of the panel's lists that grow with the case (steps, unexpected changes, compared paths, and of
#: the fault replays their steps and changed state paths, all replays together): a state check of a table of 100,000
#: rows wrote a panel of 14 MB of HTML and 6 MB of text into the notebook cell. The attributes (and
#: :meth:`CasePanel.replay_views`) hold every row; the compared paths that failed, and the replay steps that differ,
#: are shown before those that matched.
SHOWN = 500


def _first_shown(rows: pd.DataFrame) -> pd.DataFrame:
    """At most :data:`SHOWN` of the compared paths ``rows``, in their order: those not ``ok`` first picked."""
    if len(rows) <= SHOWN:
        return rows
    return rows.iloc[_picked([pd.isna(ok) or not bool(ok) for ok in rows["ok"]])]


def _first_pairs(pairs: list[tuple[int, Any, Any]], limit: int = SHOWN) -> list[tuple[int, Any, Any]]:
    """At most ``limit`` of a replay's ``(index, recorded, faulted)`` step pairs, in their order: those whose
    sides differ (the faulted step and those after it) first picked."""
    if len(pairs) <= limit:
        return pairs
    differ = [rec is None or fau is None or not values_equal(rec, fau) for _, rec, fau in pairs]
    return [pairs[i] for i in _picked(differ, limit)]


def _picked(first: list[bool], limit: int = SHOWN) -> list[int]:
    """The indexes of at most ``limit`` items, ascending: those ``first`` marks picked before the others (a
    stable sort keeps each group in its order)."""
    return sorted(sorted(range(len(first)), key=lambda i: not first[i])[:limit])


def _more(total: int, what: str, attribute: str, shown: int = SHOWN) -> str:
    """``… and 99,500 more compared paths: see panel.comparisons`` for a list cut to ``shown``; ``""`` when
    it is whole."""
    return f"… and {total - shown:,} more {what}: see panel.{attribute}" if total > shown else ""


def _share_out(views: list[dict[str, Any]]) -> None:
    """Set what the panel shows of each fault replay view: :data:`SHOWN` step pairs and :data:`SHOWN` changed state
    paths for all the case's replays together, those of replays that did not pass first, then in their order.

    Cut for each replay alone, a fault of ``calls: every`` on a tool the agent called 200 times gave 200 replays of
    200 steps each: 40,000 rows, a panel of 7.9 MB of HTML.
    """
    pairs_left = states_left = SHOWN
    for view in sorted(views, key=lambda v: str(v["row"].get("verdict")) == "pass"):  # stable: each group in order
        pairs = view["pairs"] if view["has_fault"] else []
        view["shown_pairs"] = _first_pairs(pairs, pairs_left)
        view["shown_state_diff"] = view["state_diff"][:states_left]
        view["more_pairs"] = _more(len(pairs), "replay steps", "replay_views()", len(view["shown_pairs"]))
        view["more_state_diff"] = _more(len(view["state_diff"]), "changed state paths", "replay_views()",
                                        len(view["shown_state_diff"]))
        pairs_left -= len(view["shown_pairs"])
        states_left -= len(view["shown_state_diff"])


def _flag(value: Any) -> bool | None:
    """A boolean cell as True / False, or None when it is NA."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return None
    return bool(value)


def _holds_word(holds: Any) -> str:
    flag = _flag(holds)
    return "missing" if flag is None else ("holds" if flag else "BROKEN")


class CasePanel:
    """Everything about one case, for a notebook cell (HTML) or a terminal (``repr``).

    Attributes
    ----------
    case_id, input, initial_state, expected, status, answer, error
        From the case's record.
    traceback : str or None
        The full traceback when the system's own code raised on the case (else None); a replay's
        traceback is in its record (``replay_records``).
    steps, verdicts, comparisons, changes, replays : pandas.DataFrame
        The case's rows of the run's frames.
    replay_records : list of dict
        The case's records of ``replays.jsonl`` (control and faulted replays, each with its
        trajectory and ``environment_state/v1``); shown recorded | faulted, step by step.
    partners : list of str
        The metamorphic pair partners: a source case's derived copies, or a derived case's source.
    pairs : pandas.DataFrame
        The rows of ``run.pairs`` the case is part of (relation verdicts and labels).
    unexpected : list of dict
        ``criterion, path, before, after`` of every change a ``state_matches`` check in ``changes``
        mode did not expect: shown first, before the steps.
    tracebacks : list of tuple
        ``(criterion, traceback)`` of every check that raised (a Python check's exception).
    unscored : bool
        True for a copy labeled invalid by a checked transform (:attr:`~oloproof_nb._analysis.run.Run.unscored_ids`):
        no criterion scores it, so it has no verdict rows while its compared paths still show what its checks found
        (a ``BAD`` line there counts in no verdict; the panel says so first).
    epoch : int
        The epoch shown in detail (1 unless asked for; a run without ``epochs`` has only 1).
    epochs : pandas.DataFrame
        The case's epochs side by side, one row each: ``epoch, status, answer, n_tool_calls``, then one
        column per criterion holding its verdict (empty for a run without ``epochs``); read the verdicts by
        position (``.iloc[:, 4:]``) where a criterion is named like one of the first four.
    """

    def __init__(self, run: Run, case_id: str, epoch: int = 1) -> None:
        self.run = run
        self.record = run.record(case_id, epoch)
        self.case_id = case_id
        self.epoch = epoch
        case = self.record["case"]
        self.input: dict[str, Any] = case["input"]
        self.initial_state: dict[str, Any] = case.get("initial_state", {})
        self.expected: dict[str, Any] | None = case.get("expected")
        self.status: str = self.record["status"]
        traj = self.record.get("trajectory")
        self.answer: Any = traj.get("answer") if traj else None
        self.error: str | None = self.record.get("error")
        self.unscored: bool = case_id in run.unscored_ids
        self.traceback: str | None = self.record.get("traceback")

        def rows(df: pd.DataFrame) -> pd.DataFrame:
            return df[(df["case_id"] == case_id) & (df["epoch"] == epoch)].reset_index(drop=True)

        self.steps = rows(run.steps)
        self.verdicts = rows(run.verdicts)
        self.comparisons = rows(run.comparisons)
        self.changes = rows(run.changes)
        self.replays = rows(run.replays)
        self.replay_records = run.case_replay_records(case_id, epoch)
        self.epochs = self._epochs_side_by_side()
        cases = run.cases
        if case.get("transform"):
            partners = cases["case_id"][cases["case_id"] == case["source_id"]]
        else:
            partners = cases["case_id"][(cases["source_id"] == case_id) & (cases["case_id"] != case_id)]
        self.partners: list[str] = list(dict.fromkeys(partners))
        pairs = run.pairs
        self.pairs = pairs[((pairs["source_id"] == case_id) | (pairs["derived_id"] == case_id))
                           & (pairs["epoch"] == epoch)].reset_index(drop=True)
        self.unexpected = self._unexpected_changes()
        stored: list[dict[str, Any]] = [dict(v) for v in self.record.get("verdicts", [])]
        self.tracebacks = [(str(v["criterion"]), str(v["traceback"])) for v in stored if v.get("traceback")]

    def _epochs_side_by_side(self) -> pd.DataFrame:
        """One row per epoch of the case: status, answer, tool calls, and each criterion's verdict."""
        cases = self.run.cases
        mine = cases[cases["case_id"] == self.case_id]
        if len(mine) < 2:
            return pd.DataFrame()
        out = mine[["epoch", "status", "answer", "n_tool_calls"]].sort_values("epoch").reset_index(drop=True)
        v = self.run.verdicts
        v = v[v["case_id"] == self.case_id]
        if len(v):
            wide = v.pivot_table(index="epoch", columns="criterion", values="verdict", aggfunc="first")
            order = [c for c in self.run.criteria if c in wide.columns]
            # joined by position: a criterion may be named like a column (Inspect's built-in scorer ``answer``, one
            # named ``epoch``), which a merge on ``epoch`` suffixed or refused (KeyError, ValueError)
            verdicts = wide[order].reindex(out["epoch"].to_numpy())
            out = pd.concat([out, verdicts.set_axis(out.index)], axis=1)
        out.columns.name = None
        return out

    def _unexpected_changes(self) -> list[dict[str, Any]]:
        """The changes ``changes``-mode state checks did not expect, recomputed from the stored record."""
        env = self.record.get("environment_state")
        expected = (self.expected or {}).get("state")
        if env is None or expected is None:
            return []
        out = []
        for ev in self.run.config.evaluators:
            if isinstance(ev, StateMatches) and ev.mode == "changes":
                unexpected, _ = ev.changes(self.initial_state, expected, env["state"])
                out += [{"criterion": ev.name, "path": p, "before": b, "after": a} for p, b, a, _ in unexpected]
        return out

    # -- replays ----------------------------------------------------------------------------
    def replay_views(self) -> list[dict[str, Any]]:
        """One view per fault replay of the case.

        Returns
        -------
        list of dict
            ``row`` (the case's row of ``run.replays``), ``pairs`` (list of ``(index,
            recorded step, faulted step)``, None where a side has no step), ``recorded_answer``,
            ``faulted_answer``, ``has_fault`` (a faulted replay was recorded), ``cached`` and
            ``state_diff`` (``(path, recorded, faulted)`` leaves where the faulted state differs); and what
            the panel shows of them, at most :data:`SHOWN` step pairs and :data:`SHOWN` state paths for all the
            replays together (those of replays that did not pass first): ``shown_pairs`` (those that differ first
            picked), ``shown_state_diff``, ``more_pairs`` and ``more_state_diff`` (``"… and N more …"``, or ``""``).
        """
        recorded: dict[str, Any] = dict(self.record.get("trajectory") or {})
        recorded_steps = recorded.get("steps", [])
        recorded_env: dict[str, Any] = dict(self.record.get("environment_state") or {})
        views = []
        for row in self.replays.to_dict("records"):
            fault = next((r for r in self.replay_records  # a case's calls (calls: every) by their checkpoint
                          if r.get("kind") == "fault" and r.get("criterion") == row["criterion"]
                          and r.get("checkpoint") == row["checkpoint"]), None)
            faulted: dict[str, Any] = dict((fault["trajectory"] if fault else None) or {})
            faulted_steps = faulted.get("steps", [])
            n = max(len(recorded_steps), len(faulted_steps)) if faulted else len(recorded_steps)
            pairs = [(i, recorded_steps[i] if i < len(recorded_steps) else None,
                      faulted_steps[i] if i < len(faulted_steps) else None) for i in range(n)]
            fault_env: dict[str, Any] = dict((fault["environment_state"] if fault else None) or {})
            diff = (leaf_diff(recorded_env["state"], fault_env["state"])
                    if "state" in recorded_env and "state" in fault_env else [])
            views.append({"row": row, "pairs": pairs, "recorded_answer": recorded.get("answer"),
                          "faulted_answer": faulted.get("answer"), "has_fault": bool(faulted),
                          "cached": bool(_flag(row.get("cached"))), "state_diff": diff})
        _share_out(views)
        return views

    # -- pairs ------------------------------------------------------------------------------
    def partner_rows(self) -> list[dict[str, Any]]:
        """One row per partner and relation: the partner's transform, status, answer, differing input (and
        ``initial_state.<path>`` where a state transform rewrote the environment), result."""
        out = []
        for pid in self.partners:
            rec = self.run.record(pid, self.epoch)
            traj = rec.get("trajectory")
            changed = {k: v for k, v in rec["case"]["input"].items() if self.input.get(k) != v}
            source, derived = (self.record["case"], rec["case"]) if rec["case"].get("transform") else (
                rec["case"], self.record["case"])
            for path in injected_paths(source, derived):  # a state_path transform rewrote the environment
                changed[f"initial_state.{path}"] = get_path(rec["case"].get("initial_state") or {}, path)
            base = {"partner": pid, "kind": rec["case"].get("transform") or "source", "status": rec["status"],
                    "answer": traj.get("answer") if traj else None, "changed": changed}
            p = self.pairs
            mine = p[(p["source_id"] == pid) | (p["derived_id"] == pid)]
            if mine.empty:
                out.append({**base, "criterion": "", "word": "", "label": ""})
            for r in mine.itertuples():
                out.append({**base, "criterion": str(r.criterion), "word": _holds_word(r.holds),
                            "label": r.label or "unlabeled"})
        return out

    # -- views ------------------------------------------------------------------------------
    def __repr__(self) -> str:
        shown = f" (epoch {self.epoch} of {len(self.epochs)})" if len(self.epochs) else ""
        lines = [f"Case {self.case_id}{shown} — status {self.status}, answer {preview(self.answer)}",
                 f"  input: {preview(self.input)}"]
        if self.unscored:  # its BAD comparisons below were read as failures the gate counted
            lines.append(f"  {UNSCORED_NOTE}")
        if len(self.epochs):
            lines.append("  epochs:")
            names = list(self.epochs.columns[4:])
            for epoch, status, answer, _, *marks in self.epochs.itertuples(index=False):  # by position, as built
                verdicts = ", ".join(f"{c} {mark}" for c, mark in zip(names, marks, strict=True))
                lines.append(f"    [{epoch}] {status}, answer {preview(answer, 40)}: {verdicts}")
        if self.error:
            lines.append(f"  error: {fmt_text(self.error)}")
        if self.unexpected:
            lines.append("  unexpected changes:")
            for u in self.unexpected[:SHOWN]:
                before, after = contrast(u["before"], u["after"], 60), contrast(u["after"], u["before"], 60)
                lines.append(f"    {u['criterion']}: {u['path']} {before} -> {after}")
            if len(self.unexpected) > SHOWN:
                lines.append(f"    {_more(len(self.unexpected), 'unexpected changes', 'unexpected')}")
        for trace in [self.traceback] + [r.get("traceback") for r in self.replay_records]:
            if trace:
                lines += ["  traceback:"] + [f"    {line}" for line in trace.rstrip().splitlines()]
        for s in self.steps.head(SHOWN).to_dict("records"):  # a message's model call is named as the replays name it
            step = s if s["kind"] == "tool_call" else {**s, "name": s["tool"] if isinstance(s["tool"], str) else None}
            lines.append(f"  [{s['step']}] {step_text(step)}")
        if len(self.steps) > SHOWN:
            lines.append(f"  {_more(len(self.steps), 'steps', 'steps')}")
        for v in self.verdicts.itertuples():
            lines.append(f"  {v.verdict.upper():7} {v.criterion} {fmt_text(v.reason)}".rstrip())  # no reason: no space
        for criterion, text in self.tracebacks:
            lines.append(f"  traceback of {criterion}:")
            lines += [f"    {line}" for line in text.rstrip().splitlines()]
        for c in _first_shown(self.comparisons).itertuples():
            lines.append(f"    {'ok ' if c.ok else 'BAD'} {c.criterion}: {c.path} expected "
                         f"{contrast(c.expected, c.actual, 60)} actual {contrast(c.actual, c.expected, 60)}")
        if len(self.comparisons) > SHOWN:
            lines.append(f"    {_more(len(self.comparisons), 'compared paths', 'comparisons')}")
        lines += self._replay_lines()
        if self.partners:
            lines.append("  pair partners:")
            for r in self.partner_rows():
                lines.append(f"    {r['partner']} ({r['kind']}) — status {r['status']}, answer "
                             f"{preview(r['answer'], 60)}, input {preview(r['changed'], 120)}")
                if r["criterion"]:
                    lines.append(f"      {r['word']:7} {r['criterion']} (label: {r['label']})")
        return "\n".join(map(terminal_text, lines))  # every value shown as written (a traceback keeps its lines)

    def _replay_lines(self, width: int = 160) -> list[str]:
        """Text of the replay section: a step both sides share is printed once, marked ``(same)``."""
        views = self.replay_views()
        lines = ["  fault replays:"] if views else []
        for view in views:
            row = view["row"]
            notes = []
            reproduced = _flag(row.get("control_reproduced"))
            if reproduced is not None:
                notes.append("control reproduced" if reproduced else "control NOT reproduced")
            if view["cached"]:
                notes.append("cached")
            extra = f" ({', '.join(notes)})" if notes else ""
            lines.append(f"    replay {row['criterion']}: {row['tool']} -> {row['fault']} "
                         f"at step {row['checkpoint']} — "
                         f"{str(row['verdict']).upper()} {fmt_text(row['reason'])}".rstrip() + extra)
            if not view["has_fault"]:
                continue
            for i, rec, fau in view["shown_pairs"]:
                mark = "  <- fault" if i == row["checkpoint"] else ""
                label = f"[{i}]"
                if rec is not None and fau is not None and values_equal(rec, fau):
                    lines.append(f"      {label:5} {step_text(rec, width)}  (same)")
                    continue
                lines.append(f"      {label:5} recorded {step_text(rec, width) if rec is not None else '(no step)'}")
                lines.append(f"      {'':5} faulted  {step_text(fau, width) if fau is not None else '(no step)'}{mark}")
            if view["more_pairs"]:
                lines.append(f"      {view['more_pairs']}")
            recorded, faulted = view["recorded_answer"], view["faulted_answer"]
            lines.append(f"      answer: recorded {contrast(recorded, faulted, 80)} | "
                         f"faulted {contrast(faulted, recorded, 80)}")
            for path, before, after in view["shown_state_diff"]:
                lines.append(f"      state {path}: recorded {contrast(before, after, 60)} | "
                             f"faulted {contrast(after, before, 60)}")
            if view["more_state_diff"]:
                lines.append(f"      {view['more_state_diff']}")
        return lines

    def _repr_html_(self) -> str:
        return render("panel.html", p=self, steps=self.steps.head(SHOWN).to_dict("records"),
                      more_steps=_more(len(self.steps), "steps", "steps"), unexpected=self.unexpected[:SHOWN],
                      more_unexpected=_more(len(self.unexpected), "unexpected changes", "unexpected"),
                      verdicts=self.verdicts.to_dict("records"),
                      comparisons=_first_shown(self.comparisons).to_dict("records"),
                      more_comparisons=_more(len(self.comparisons), "compared paths", "comparisons"),
                      replays=self.replay_views(), partners=self.partner_rows() if self.partners else [],
                      highlight=HIGHLIGHT, unscored_note=UNSCORED_NOTE)
