"""Dropping a system instance is a call into the system: its ``__del__`` runs on the helper thread, under the timeout.

A ``__del__`` (a finaliser, a connection closed with the instance) used to run on
the run's main thread when the runner replaced an instance after a failed case
and at the end of the run: a ``__del__`` that sleeps 60 s held a 5-case run for
180 s, whatever ``case_timeout_s`` said.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml
from _stopped_runs import finish_note, stopped_run_note

import oloproof_nb as op
from oloproof_nb.errors import OloproofError

SYSTEM = '''
import os, threading, time

class Desk:
    version = "1"

    def __init__(self):
        self.state = {}

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def run(self, data):
        if data["op"] == "raise":
            raise RuntimeError("boom")
        return {"answer": "ok", "steps": []}

    def __del__(self):
        with open(os.environ["DESK_LOG"], "a", encoding="utf-8") as fh:
            fh.write(threading.current_thread().name + "\\n")
        if os.environ["DESK_DEL"] == "sleep":
            time.sleep(3)
        elif os.environ["DESK_DEL"] == "raise":
            raise RuntimeError("closing the ledger failed")
'''


def _suite(root: Path, ops: list[str]) -> op.Suite:
    root.mkdir()
    (root / "desk.py").write_text(SYSTEM, encoding="utf-8")
    (root / "cases.jsonl").write_text("".join(
        json.dumps({"id": f"c{i}", "input": {"op": o, "n": i}, "initial_state": {"a": 1}, "expected": {"answer": "ok"}})
        + "\n" for i, o in enumerate(ops)), encoding="utf-8")
    (root / "oloproof.yaml").write_text(yaml.safe_dump({
        "name": "release", "system": "desk:Desk", "cases": "cases.jsonl", "case_timeout_s": 0.3,
        "evaluators": [{"type": "answer_matches"}]}), encoding="utf-8")
    return op.load_suite(root)


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "del.log"
    monkeypatch.setenv("DESK_LOG", str(path))
    return path


def test_instances_are_released_on_the_helper_thread(tmp_path: Path, log: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESK_DEL", "log")
    suite = _suite(tmp_path / "suite", ["ok", "raise", "ok", "raise", "ok"])
    op.run(suite, out=tmp_path / "run")
    # three instances (the first, one after each raising case), each finalised when the run let it go
    assert log.read_text(encoding="utf-8").splitlines() == ["oloproof-call"] * 3


def test_a_del_that_blocks_after_a_failed_case_stops_the_run_in_one_line(tmp_path: Path, log: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESK_DEL", "sleep")
    suite = _suite(tmp_path / "suite", ["ok", "raise", "ok"])
    started = time.monotonic()
    with pytest.raises(OloproofError) as stopped:
        op.run(suite, out=tmp_path / "run")
    assert time.monotonic() - started < 2  # not the 3 s the __del__ sleeps
    assert str(stopped.value) == ("releasing a system instance (its __del__ or a finaliser) took longer than "
                                  "case_timeout_s=0.3")
    assert finish_note(stopped.value) == stopped_run_note(tmp_path / "run")  # where the run stopped
    recorded = [json.loads(line)["case"]["id"] for line in (tmp_path / "run" / "cases.jsonl").open()]
    assert recorded == ["c0", "c1"]  # the cases before it are kept: the run is resumable


def test_a_del_that_blocks_at_the_end_is_reported_once_the_run_is_finished(tmp_path: Path, log: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESK_DEL", "sleep")
    suite = _suite(tmp_path / "suite", ["ok", "ok"])
    started = time.monotonic()
    with pytest.raises(OloproofError, match=r"case_timeout_s=0\.3$"):
        op.run(suite, out=tmp_path / "run")
    assert time.monotonic() - started < 2
    run = op.load_run(tmp_path / "run")
    assert list(run.cases["status"]) == ["completed", "completed"]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["finished_at"] is not None  # a resume has nothing left to do


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # what the __del__ raises
def test_a_del_that_raises_leaves_the_run_as_it_was(tmp_path: Path, log: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DESK_DEL", "raise")
    suite = _suite(tmp_path / "suite", ["ok", "raise", "ok"])
    run = op.run(suite, out=tmp_path / "run")  # Python ignores what __del__ raises (printed to stderr)
    assert list(run.cases["status"]) == ["completed", "error", "completed"]
    assert len(log.read_text(encoding="utf-8").splitlines()) == 2
