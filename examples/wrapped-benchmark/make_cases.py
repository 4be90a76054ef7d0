"""The converter: the benchmark's tasks (``bench/tasks.json`` over ``bench/db.json``) as ``cases.jsonl``.

Run once, ``python make_cases.py`` in this folder; its output is kept beside it. Each task becomes one case:

- ``id``: the task's number as text; ``cluster``: its customer (a customer's tasks are not independent);
- ``input``: the instruction and the customer the agent serves;
- ``initial_state``: the whole database, read back through the wrapper's ``snapshot`` form;
- ``expected.state``: what the task's gold actions change, run by the benchmark's own env on a fresh copy
  (judged with ``state_matches`` in ``changes`` mode: those changes, and nothing else);
- ``metadata``: the gold actions, for the reader (never given to the agent).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

from bench.env import ShopEnv, ToolError
from shop_desk import by_key

import oloproof_nb as op

HERE = Path(__file__).resolve().parent


def expected_changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """``expected.state``: what changed from ``before`` to ``after``, as a nested dict (README section 1a)."""
    out: dict[str, Any] = {}
    for path, _old, new in op.leaf_diff(before, after):
        if new is op.ABSENT and op.get_path(after, path) is not op.ABSENT:
            continue  # the key stays (an empty table that gained rows): its new leaves say so
        *head, last = op.parse_path(path)
        node = out
        for key in head:
            node = node.setdefault(key, {})
        node[last] = {"$absent": True} if new is op.ABSENT else new
    return out


def database_after(db: dict[str, Any], actions: list[dict[str, Any]]) -> dict[str, Any]:
    """The database after ``actions``, run by the benchmark's env on a fresh copy of ``db``."""
    env = ShopEnv(db)
    try:
        for action in actions:
            env.step(action["name"], **action["kwargs"])
        return by_key(env.dump())
    finally:
        env.db.close()


def task_error(task: Any, index: int, seen: set[str]) -> str:
    """Why ``task`` (at ``index`` in tasks.json's list, from 0) cannot become a case, or ``""`` when it can."""
    keys = ("task_id", "user_id", "instruction", "actions")
    if not isinstance(task, dict) or any(key not in task for key in keys):
        return f"the task at index {index} needs the keys {', '.join(keys)}"
    if str(task["task_id"]) in seen:
        return f"task_id {task['task_id']} is given twice (a case id must be unique)"
    return ""


def main() -> int:
    db = json.loads((HERE / "bench" / "db.json").read_text(encoding="utf-8"))
    try:
        tasks = json.loads((HERE / "bench" / "tasks.json").read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:  # an edit left it unreadable: where, not a traceback
        print(f"bench/tasks.json: not JSON ({exc}); cases.jsonl is unchanged", file=sys.stderr)
        return 2
    if not isinstance(tasks, list):
        print("bench/tasks.json: must hold a list of tasks; cases.jsonl is unchanged", file=sys.stderr)
        return 2
    before = database_after(db, [])  # as snapshot() reads it: SQLite's types, every table
    lines: list[str] = []
    seen: set[str] = set()
    for index, task in enumerate(tasks):
        why = task_error(task, index, seen)
        try:
            after = {} if why else database_after(db, task["actions"])
        # a gold action the shop refuses, or one written wrong (an order_id given as a list: SQLite cannot bind it)
        except (ToolError, KeyError, TypeError, sqlite3.Error) as exc:
            why = (f"task {task['task_id']}: its gold actions do not run ({type(exc).__name__}: {exc}); a task whose "
                   'right ending changes nothing has "actions": []')
        if why:  # one line, and the case file left as it was
            print(f"bench/tasks.json: {why}; cases.jsonl is unchanged", file=sys.stderr)
            return 2
        seen.add(str(task["task_id"]))
        case = {"id": str(task["task_id"]),
                "input": {"customer_id": task["user_id"], "instruction": task["instruction"]},
                "initial_state": before,
                "expected": {"state": expected_changes(before, after)},
                "cluster": task["user_id"],
                "metadata": {"gold_actions": task["actions"]}}
        lines.append(json.dumps(case) + "\n")
    partial = HERE / "cases.jsonl.tmp"
    with open(partial, "w", encoding="utf-8", newline="\n") as out:
        out.writelines(lines)
    os.replace(partial, HERE / "cases.jsonl")  # all the cases or none: a run never reads half a file
    print(f"{len(tasks)} cases written to cases.jsonl")
    return 0


if __name__ == "__main__":
    sys.exit(main())
