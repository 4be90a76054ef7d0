"""A process run an error stops kills a worker still building its system, as a busy one.

An error ends the workers as a run's end does (:meth:`~oloproof_nb._run.isolation.ProcessWorkers.finish`):
a busy worker is killed at once, an idle one drops its system. A worker still building its system (the second of
``workers: 2``, or one rebuilding after a failed case) was told to stop too and waited for: the stop took as long
as its constructor, up to ``case_timeout_s`` (20.0 s of a 20 s timeout measured, with a constructor that sleeps
30 s). At a run's end it is still waited for (its finaliser removes what it made: ``test_isolation_finish.py``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._run.store import RunStore
from oloproof_nb.errors import StoreWriteError

#: The first instance is built at once; the second sleeps 4 s in its constructor, then notes it was built (a
#: constructor the stop waited for ends so). The one case waits until the second worker is building.
SLOW_SECOND = '''import os
import time

MARKS = os.environ["L4_MARKS"]


class Desk:
    version = "l4-desk"

    def __init__(self):
        first = os.path.join(MARKS, "first-built")
        if os.path.exists(first):
            open(os.path.join(MARKS, "second-building"), "w").close()
            time.sleep(4)
            open(os.path.join(MARKS, "second-built"), "w").close()
        open(first, "a").close()

    def run(self, input):
        deadline = time.monotonic() + 30
        while not os.path.exists(os.path.join(MARKS, "second-building")) and time.monotonic() < deadline:
            time.sleep(0.02)
        return {"steps": [], "answer": "ok", "status": "completed"}
'''


def test_an_error_kills_a_worker_still_building_its_system(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("L4_MARKS", str(marks))
    root = tmp_path / "suite"
    root.mkdir()
    (root / "l4desk.py").write_text(SLOW_SECOND, encoding="utf-8")
    (root / "oloproof.yaml").write_text(
        "name: l4\nsystem: l4desk:Desk\ncase_timeout_s: 30\nevaluators:\n  - {type: answer_matches}\n",
        encoding="utf-8")
    lines = [{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(2)]
    (root / "cases.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    def full(self: RunStore, record: Any) -> tuple[str | None, str | None]:
        raise StoreWriteError(f"{self.directory}: cannot write (No space left on device)")

    monkeypatch.setattr(RunStore, "append_case", full)
    with pytest.raises(StoreWriteError, match="No space left on device"):
        op.run(root, out=tmp_path / "run", progress=False, isolation="process", workers=2)
    assert (marks / "second-building").exists()
    # killed while its constructor slept: before, the stop waited for it to be built (and drop it), 4 s here
    assert sorted(os.listdir(marks)) == ["first-built", "second-building"]
