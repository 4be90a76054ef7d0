"""The reference pair view of a stored case record, written out plainly, for the tests of packed views."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: What a metamorphic relation reads of a record's ``case``.
_VIEW_CASE_KEYS = ("id", "epoch", "source_id", "transform", "cluster", "initial_state")


def pair_view(record: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a stored case record that pairing and ``compare_pair`` read, under the same keys, as plain
    dicts and lists: the reference a packed record (``pack_view``), made again by ``PairViews``, must give back.

    The case's ids and ``initial_state``, the ``status``, the trajectory's ``answer`` and tool calls (``kind``,
    ``tool``, ``args``) and the final ``state`` — not its input, expectations, metadata, tool results,
    messages or rows. For every relation, ``compare_pair`` gives the same result on views as on the records.

    Examples
    --------
    >>> rec = {"case": {"id": "a", "input": {"m": "hi"}, "source_id": "a", "cluster": "a"}, "status": "completed",
    ...        "trajectory": {"steps": [{"kind": "message", "content": "hi"},
    ...                                 {"kind": "tool_call", "tool": "t", "args": {"x": 1}, "result": 2}],
    ...                       "answer": "ok", "input": {"m": "hi"}},
    ...        "environment_state": {"schema": "environment_state/v1", "state": {"n": 1}}, "verdicts": []}
    >>> pair_view(rec)
    {'case': {'id': 'a', 'source_id': 'a', 'cluster': 'a'}, 'status': 'completed', 'trajectory': {'answer': 'ok', \
'steps': [{'kind': 'tool_call', 'tool': 't', 'args': {'x': 1}}]}, 'environment_state': {'state': {'n': 1}}}
    """
    case = record["case"]
    traj, env = record.get("trajectory"), record.get("environment_state")
    view: dict[str, Any] = {"case": {k: case[k] for k in _VIEW_CASE_KEYS if k in case}}
    if "status" in record:
        view["status"] = record["status"]
    view["trajectory"] = None if traj is None else {
        "answer": traj.get("answer"),
        "steps": [{"kind": "tool_call", "tool": s["tool"], "args": s.get("args")}
                  for s in traj.get("steps", []) if s.get("kind") == "tool_call"]}
    view["environment_state"] = None if env is None else {"state": env["state"]}
    return view
