"""Tidy DataFrames built from run records (one row per observation, ids on every frame).

The column lists here are part of the public API (shared/DESIGN.md) and are
pinned by tests. Extra columns come after the documented ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from .paths import ABSENT, leaf_diff
from .system import MALFORMED_RESULT

__all__ = [
    "CASE_COLUMNS",
    "STEP_COLUMNS",
    "SNAPSHOT_COLUMNS",
    "CHANGE_COLUMNS",
    "VERDICT_COLUMNS",
    "COMPARISON_COLUMNS",
    "REPLAY_COLUMNS",
    "PAIR_COLUMNS",
    "cases_frame",
    "steps_frame",
    "snapshots_frame",
    "changes_frame",
    "verdicts_frame",
    "comparisons_frame",
    "replays_frame",
    "pairs_frame",
    "decode_absent",
]

CASE_COLUMNS = ["case_id", "source_id", "transform", "cluster", "digest", "status", "answer", "n_tool_calls",
                "trajectory_length", "duration_s", "error", "has_state", "started_at", "metadata"]
STEP_COLUMNS = ["case_id", "step", "kind", "tool", "args", "result", "is_error", "role", "content"]
SNAPSHOT_COLUMNS = ["case_id", "schema", "captured_at", "state_digest", "state", "case_digest", "system_version",
                    "run_id"]
CHANGE_COLUMNS = ["case_id", "path", "before", "after"]
VERDICT_COLUMNS = ["case_id", "cluster", "criterion", "evaluator", "verdict", "reason"]
COMPARISON_COLUMNS = ["case_id", "criterion", "path", "expected", "actual", "ok"]
REPLAY_COLUMNS = ["case_id", "criterion", "tool", "fault", "checkpoint", "control_reproduced", "recovered",
                  "escalated", "constraint_broken", "verdict", "reason", "cached"]
PAIR_COLUMNS = ["source_id", "derived_id", "transform", "relation", "criterion", "holds", "label", "cluster"]


def decode_absent(value: Any) -> Any:
    """Stored ``{"$absent": true}`` back to :data:`~oloproof_nb.paths.ABSENT`."""
    if isinstance(value, dict) and len(value) == 1 and value.get("$absent") is True:
        return ABSENT
    return value


#: Columns holding the user's JSON values: kept as Python objects (``None`` stays ``None``, ``1`` stays ``1``).
VALUE_COLUMNS = frozenset({"answer", "metadata", "args", "result", "content", "state", "before", "after", "expected",
                           "actual"})


def _frame(rows: list[dict[str, Any]] | list[list[Any]], columns: list[str],
           dtypes: dict[str, str] | None = None) -> pd.DataFrame:
    if rows and isinstance(rows[0], dict):
        columns = columns + [c for c in rows[0] if c not in columns]  # type: ignore[union-attr]
    df = pd.DataFrame(rows, columns=columns, dtype=object)
    for col in df.columns:
        if col not in VALUE_COLUMNS and col not in (dtypes or {}):
            df[col] = df[col].infer_objects()
    for col, dtype in (dtypes or {}).items():
        if col in df.columns:
            df[col] = df[col].astype(dtype)
    return df


def _step_is_error(step: dict[str, Any]) -> bool:
    if step.get("kind") != "tool_call":
        return False
    res = step.get("result")
    if isinstance(res, dict):
        return res.get("ok") is False or "error" in res
    return res == MALFORMED_RESULT


def cases_frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per case.

    Columns: ``case_id, source_id, transform, cluster, digest, status, answer,
    n_tool_calls, trajectory_length, duration_s, error, has_state``, then
    ``started_at`` and ``metadata``. ``status`` is the trajectory's own
    (``completed``, ``failed``, ``waiting``) or the harness's (``error``, ``timeout``).
    """
    rows = []
    for rec in records:
        case = rec["case"]
        traj = rec.get("trajectory")
        steps = traj["steps"] if traj else []
        rows.append([
            case["id"], case["source_id"], case.get("transform"), case["cluster"], case["digest"], rec["status"],
            traj.get("answer") if traj else None,
            sum(1 for s in steps if s.get("kind") == "tool_call") if traj else pd.NA,
            len(steps) if traj else pd.NA,
            rec["duration_s"], rec.get("error"), rec.get("environment_state") is not None,
            pd.Timestamp(rec["started_at"]), case.get("metadata") or {},
        ])
    return _frame(rows, CASE_COLUMNS, {"n_tool_calls": "Int64", "trajectory_length": "Int64",
                                       "has_state": "bool", "duration_s": "float64"})


def steps_frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per trajectory step: ``case_id, step, kind, tool, args, result, is_error, role, content``.

    ``kind`` is ``tool_call`` or ``message``; tool fields are empty on message rows and vice versa.
    """
    rows = []
    for rec in records:
        traj = rec.get("trajectory")
        if not traj:
            continue
        cid = rec["case"]["id"]
        for i, s in enumerate(traj["steps"]):
            if s.get("kind") == "tool_call":
                rows.append([cid, i, "tool_call", s["tool"], s.get("args"), s.get("result"), _step_is_error(s),
                             None, None])
            else:
                rows.append([cid, i, "message", s.get("name"), s.get("args"), None, False, s.get("role"),
                             s.get("content")])
    return _frame(rows, STEP_COLUMNS, {"step": "int64", "is_error": "bool"})


def snapshots_frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per recorded state (``environment_state/v1``).

    Columns: ``case_id, schema, captured_at, state_digest, state``, then
    ``case_digest, system_version, run_id``.
    """
    rows = []
    for rec in records:
        env = rec.get("environment_state")
        if env is None:
            continue
        rows.append([env["case_id"], env["schema"], pd.Timestamp(env["captured_at"]), env["state_digest"],
                     env["state"], env["case_digest"], env.get("system_version"), env["run_id"]])
    return _frame(rows, SNAPSHOT_COLUMNS)


def changes_frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per leaf of the recorded state that differs from ``initial_state``.

    Columns: ``case_id, path, before, after``; a leaf that appeared or
    disappeared has :data:`~oloproof_nb.paths.ABSENT` on the other side.
    """
    rows = []
    for rec in records:
        env = rec.get("environment_state")
        if env is None:
            continue
        initial = rec["case"].get("initial_state", {})
        cid = rec["case"]["id"]
        rows.extend([cid, path, before, after] for path, before, after in leaf_diff(initial, env["state"]))
    return _frame(rows, CHANGE_COLUMNS)


def verdicts_frame(records: Iterable[dict[str, Any]], run_rows: Iterable[dict[str, Any]] = ()) -> pd.DataFrame:
    """One row per case × criterion: ``case_id, cluster, criterion, evaluator, verdict, reason``.

    ``verdict`` is ``pass``, ``fail`` or ``missing`` (a missing case never passes).
    ``run_rows`` are verdicts judged across cases (metamorphic pairs).
    """
    rows = []
    for rec in records:
        case = rec["case"]
        for v in rec["verdicts"]:
            rows.append([case["id"], case["cluster"], v["criterion"], v["evaluator"], v["verdict"], v["reason"]])
    rows.extend([r["case_id"], r["cluster"], r["criterion"], r["evaluator"], r["verdict"], r["reason"]]
                for r in run_rows)
    return _frame(rows, VERDICT_COLUMNS)


def comparisons_frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per compared path: ``case_id, criterion, path, expected, actual, ok``."""
    rows = []
    for rec in records:
        for c in rec["comparisons"]:
            rows.append([c["case_id"], c["criterion"], c["path"], decode_absent(c["expected"]),
                         decode_absent(c["actual"]), bool(c["ok"])])
    return _frame(rows, COMPARISON_COLUMNS, {"ok": "bool"})


def replays_frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per fault replay of a case: the documented :data:`REPLAY_COLUMNS`."""
    rows = [r for rec in records for r in rec.get("replays", [])]
    return _frame(rows, REPLAY_COLUMNS, {"control_reproduced": "boolean", "recovered": "boolean",
                                         "escalated": "boolean", "constraint_broken": "boolean",
                                         "cached": "boolean", "checkpoint": "Int64"})


def pairs_frame(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """One row per source/derived pair and relation: the documented :data:`PAIR_COLUMNS`."""
    return _frame(list(rows), PAIR_COLUMNS, {"holds": "boolean"})
