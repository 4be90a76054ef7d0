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
from pathlib import Path
from typing import Any

from bench.env import ShopEnv
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


def main() -> None:
    db = json.loads((HERE / "bench" / "db.json").read_text(encoding="utf-8"))
    tasks = json.loads((HERE / "bench" / "tasks.json").read_text(encoding="utf-8"))
    before = database_after(db, [])  # as snapshot() reads it: SQLite's types, every table
    with open(HERE / "cases.jsonl", "w", encoding="utf-8", newline="\n") as out:
        for task in tasks:
            case = {"id": str(task["task_id"]),
                    "input": {"customer_id": task["user_id"], "instruction": task["instruction"]},
                    "initial_state": before,
                    "expected": {"state": expected_changes(before, database_after(db, task["actions"]))},
                    "cluster": task["user_id"],
                    "metadata": {"gold_actions": task["actions"]}}
            out.write(json.dumps(case) + "\n")
    print(f"{len(tasks)} cases written to cases.jsonl")


if __name__ == "__main__":
    main()
