"""Tidy DataFrames built from run records: one row per observation, ids on every frame.

Each function walks the records to the items its frame has one row per (a
case, a step, a changed leaf, a verdict …) and lets the frame's
:class:`~oloproof_nb._analysis.columns.FrameSpec` read and type the columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from .._core.paths import ABSENT, leaf_diff
from .._core.records import CaseRecord, PairRow, ReceiptRow, RunVerdictRow
from .._core.trajectory import DEFAULT_TOOL_ERRORS, ToolErrorRule
from .columns import CASES, CHANGES, COMPARISONS, PAIRS, RECEIPTS, REPLAYS, SNAPSHOTS, STEPS, VERDICTS

__all__ = [
    "cases_frame",
    "steps_frame",
    "snapshots_frame",
    "changes_frame",
    "verdicts_frame",
    "comparisons_frame",
    "replays_frame",
    "pairs_frame",
    "receipts_frame_from_rows",
    "decode_absent",
]


def decode_absent(value: Any) -> Any:
    """Stored ``{"$absent": true}`` back to :data:`~oloproof_nb.ABSENT`.

    Examples
    --------
    >>> decode_absent({"$absent": True}), decode_absent({"a": 1})
    (<absent>, {'a': 1})
    """
    if isinstance(value, dict) and len(value) == 1 and value.get("$absent") is True:
        return ABSENT
    return value


def cases_frame(records: Sequence[CaseRecord]) -> pd.DataFrame:
    """One row per case (columns: :data:`~oloproof_nb._analysis.columns.CASES`)."""
    return CASES.build(records)


def steps_frame(records: Iterable[CaseRecord], tool_errors: ToolErrorRule = DEFAULT_TOOL_ERRORS) -> pd.DataFrame:
    """One row per trajectory step (columns: :data:`~oloproof_nb._analysis.columns.STEPS`).

    ``kind`` is ``tool_call`` or ``message``; tool fields are empty on message rows and vice versa;
    ``is_error`` follows the suite's ``tool_errors`` rule.
    """
    items = []
    for rec in records:
        traj = rec.get("trajectory")
        if traj:
            cid = rec["case"]["id"]
            items += [(cid, i, s, s.get("kind") == "tool_call" and tool_errors.is_error(s.get("result")))
                      for i, s in enumerate(traj["steps"])]
    return STEPS.build(items)


def snapshots_frame(records: Iterable[CaseRecord]) -> pd.DataFrame:
    """One row per recorded state, ``environment_state/v1`` (columns: :data:`~oloproof_nb._analysis.columns.SNAPSHOTS`)."""
    return SNAPSHOTS.build([rec["environment_state"] for rec in records if rec.get("environment_state") is not None])


def changes_frame(records: Iterable[CaseRecord]) -> pd.DataFrame:
    """One row per leaf of the recorded state that differs from ``initial_state``.

    A leaf that appeared or disappeared has :data:`~oloproof_nb.ABSENT` on the other side.
    """
    items = []
    for rec in records:
        env = rec.get("environment_state")
        if env is not None:
            cid = rec["case"]["id"]
            items += [(cid, path, before, after)
                      for path, before, after in leaf_diff(rec["case"].get("initial_state", {}), env["state"])]
    return CHANGES.build(items)


def verdicts_frame(records: Iterable[CaseRecord], run_rows: Iterable[RunVerdictRow] = ()) -> pd.DataFrame:
    """One row per case × criterion; ``run_rows`` are verdicts judged across cases (metamorphic pairs)."""
    items: list[tuple[str, str, Any]] = [(rec["case"]["id"], rec["case"]["cluster"], v)
                                         for rec in records for v in rec["verdicts"]]
    items += [(r["case_id"], r["cluster"], r) for r in run_rows]
    return VERDICTS.build(items)


def comparisons_frame(records: Iterable[CaseRecord]) -> pd.DataFrame:
    """One row per compared path; stored ABSENT values are decoded back."""
    items = [{**c, "expected": decode_absent(c["expected"]), "actual": decode_absent(c["actual"])}
             for rec in records for c in rec["comparisons"]]
    return COMPARISONS.build(items)


def replays_frame(records: Iterable[CaseRecord]) -> pd.DataFrame:
    """One row per fault replay of a case."""
    return REPLAYS.build([r for rec in records for r in rec.get("replays", [])])


def pairs_frame(rows: Iterable[PairRow]) -> pd.DataFrame:
    """One row per source/derived pair and relation."""
    return PAIRS.build(list(rows))


def receipts_frame_from_rows(rows: Iterable[ReceiptRow]) -> pd.DataFrame:
    """One row per stored receipt (rows already validated when the run wrote them)."""
    return RECEIPTS.build(list(rows))
