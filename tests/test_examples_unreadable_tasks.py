"""``make_cases.py`` of the ``wrapped-benchmark`` example names every task file it cannot convert in one
line, exit 2, ``cases.jsonl`` left as it was (``tests/test_examples_added_tasks.py`` covers a refused action, a
repeated ``task_id`` and a missing key). A gold action whose argument SQLite cannot bind (an ``order_id`` written as
a list) and a ``tasks.json`` an edit left unreadable or not a list ended in a traceback, exit 1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from oloproof_nb.examples import init_example


def _make_cases(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "make_cases.py"], cwd=folder, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, check=False)


def _bad_action(text: str) -> str:
    tasks = json.loads(text)
    # bench/db.json has an order W1001; an id given as a list is no value SQLite binds
    tasks.append({"task_id": 99, "user_id": "C01", "instruction": "Look up #W1001.",
                  "actions": [{"name": "get_order", "kwargs": {"order_id": ["W1001"]}}]})
    return json.dumps(tasks)


@pytest.mark.parametrize(("edit", "start", "end"), [
    (_bad_action, "bench/tasks.json: task 99: its gold actions do not run (",  # sqlite3 names its own class
     '); a task whose right ending changes nothing has "actions": []; cases.jsonl is unchanged'),
    (lambda text: text.rstrip()[:-1], "bench/tasks.json: not JSON (", "); cases.jsonl is unchanged"),
    (lambda text: json.dumps({"tasks": json.loads(text)}),
     "bench/tasks.json: must hold a list of tasks", "; cases.jsonl is unchanged"),
])
def test_a_task_file_the_converter_cannot_read_is_named_in_one_line(tmp_path: Path, edit: object, start: str,
                                                                     end: str) -> None:
    folder = init_example("wrapped-benchmark", tmp_path / "wb")
    shipped = (folder / "cases.jsonl").read_bytes()
    tasks_file = folder / "bench" / "tasks.json"
    tasks_file.write_text(edit(tasks_file.read_text(encoding="utf-8")), encoding="utf-8")  # type: ignore[operator]
    done = _make_cases(folder)
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(start) and done.stderr.endswith(end + "\n"), done.stderr
    assert (folder / "cases.jsonl").read_bytes() == shipped
