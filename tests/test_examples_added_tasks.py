"""The ``wrapped-benchmark`` example as a new user extends it: a task added to ``bench/tasks.json`` that
the converter cannot turn into a case is named in one line, exit 2, with ``cases.jsonl`` left as it was (before, a
gold action the shop refuses ended ``make_cases.py`` in a traceback after it had truncated the case file and written
the tasks before it); a task added right needs its copy's label, and the gate says in which file.

Every expected text here is written from the benchmark's own files (its database and its tools' refusals), never
read back from the code under test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb.examples import init_example


def _make_cases(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "make_cases.py"], cwd=folder, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, check=False)


def _with_tasks(folder: Path, edit: Any) -> None:
    tasks_file = folder / "bench" / "tasks.json"
    tasks = json.loads(tasks_file.read_text(encoding="utf-8"))
    edit(tasks)
    tasks_file.write_text(json.dumps(tasks), encoding="utf-8")


# W1001 (C01's blender) cost 60.00 and nothing of it was refunded (bench/db.json): the shop refuses 75.
REFUSED = {"task_id": 24, "user_id": "C01", "instruction": "Refund $75 on #W1001.",
           "actions": [{"name": "refund", "kwargs": {"order_id": "W1001", "amount": 75.0}}]}


@pytest.mark.parametrize(("edit", "line"), [
    (lambda t: t.insert(0, REFUSED),  # first in the list: the old converter left an empty case file
     "bench/tasks.json: task 24: its gold actions do not run (ToolError: cannot refund 75.00 on W1001: 60.00 is "
     'left to refund); a task whose right ending changes nothing has "actions": []; cases.jsonl is unchanged'),
    (lambda t: t.append(dict(t[3])),
     "bench/tasks.json: task_id 3 is given twice (a case id must be unique); cases.jsonl is unchanged"),
    (lambda t: t[5].pop("user_id"),
     "bench/tasks.json: the task at index 5 needs the keys task_id, user_id, instruction, actions; cases.jsonl is "
     "unchanged"),
])
def test_a_task_the_converter_cannot_convert_is_named_and_the_case_file_kept(tmp_path: Path, edit: Any,
                                                                            line: str) -> None:
    folder = init_example("wrapped-benchmark", tmp_path / "wb")
    shipped = (folder / "cases.jsonl").read_bytes()
    _with_tasks(folder, edit)
    done = _make_cases(folder)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == line + "\n"  # one line, no traceback
    assert (folder / "cases.jsonl").read_bytes() == shipped
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith("cases")) == ["cases.jsonl"]


def test_a_task_added_is_converted_and_its_copy_waits_for_its_label(tmp_path: Path) -> None:
    """A refund of 15 on W1052 (C21's delivered blender, 60.00): the new case expects C21's credit 0 → 15 and the
    order's refunded 0 → 15; its polite copy has no label, so the relation is not judged until it has one, and the
    gate names the file the line goes in."""
    folder = init_example("wrapped-benchmark", tmp_path / "wb")
    task = {"task_id": 24, "user_id": "C21", "instruction": "Please refund $15 on #W1052, the lid cracked.",
            "actions": [{"name": "refund", "kwargs": {"order_id": "W1052", "amount": 15.0}}]}
    _with_tasks(folder, lambda t: t.append(task))
    done = _make_cases(folder)
    assert done.returncode == 0 and done.stdout == "25 cases written to cases.jsonl\n", done.stderr
    lines = (folder / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 25
    added = json.loads(lines[-1])
    assert added["id"] == "24" and added["cluster"] == "C21"
    assert added["expected"] == {"state": {"customers": {"C21": {"credit": 15.0}},
                                           "orders": {"W1052": {"refunded": 15.0}}}}
    # in a process of its own: Python keeps the first ``bench`` package it imported
    # (tests/test_examples_wrapped_benchmark.py)
    run = subprocess.run([sys.executable, "-m", "oloproof_nb.cli", "run", str(folder), "--quiet"], capture_output=True,
                         text=True, timeout=300, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, check=False)
    assert run.returncode == 1, run.stdout + run.stderr
    out = " ".join(run.stdout.split())
    labels = (folder / "labels" / "polite.jsonl").resolve()  # the suite's own file, not the shipped labels/ folder's
    assert ("transform polite is not checked: 1 of its 25 pairs has no label (24~polite); its relations are judged "
            f"once every pair is labeled in {labels} and the valid share") in out
    assert out.endswith("gate: BLOCK — exit 1: 1 criterion FAIL, 1 criterion INSUFFICIENT_EVIDENCE (of 2 gated; PASS "
                        "needs every one to pass)")
    assert len(op.load_run(next((folder / "runs").iterdir())).cases) == 50  # 25 tasks and their 25 polite copies
