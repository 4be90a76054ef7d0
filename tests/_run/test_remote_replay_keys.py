"""A worker keys the replays of each instance it builds by that instance's own settings, not by its batch's first.

A batch whose case raised runs its next case on a fresh instance; a factory may build that one with other settings
(a setting read at each build). Keyed by the batch's first instance, the replays the fresh instance made were stored
under the first one's key, and a later run of instances built as the first one was took them from the cache.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import oloproof_nb as op

SYSTEM = '''
import os

import oloproof_nb as op


class Desk(op.RecordedAgent):
    version = "d1"

    def __init__(self, careful=False):
        self.careful = careful

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def lookup(self, key):
        return {"ok": True, "key": key}

    def act(self, input, rec):
        if input["cid"] == "c0":
            if "DESK_TURNS_CAREFUL" in os.environ:
                os.environ["DESK_CAREFUL"] = "1"  # every instance built from here on is careful
            raise RuntimeError("c0 fails")
        rec.tool("lookup", self.lookup, key=input["cid"])
        self.state["done"] = input["cid"]
        return "ok"


def make():
    return Desk(careful=os.environ.get("DESK_CAREFUL") == "1")
'''

CASES = [{"id": f"c{i}", "input": {"cid": f"c{i}"}, "initial_state": {}, "expected": {"answer": "ok"}}
         for i in range(4)]


def test_the_instance_a_batch_builds_after_a_failed_case_keys_its_replays_by_its_own_settings(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_suite(CASES, system="sysmod:make", system_code=SYSTEM,
                      evaluators=[{"type": "answer_matches"},
                                  {"type": "fault_recovery", "tool": "lookup", "fault": "error"}])
    monkeypatch.setenv("DESK_TURNS_CAREFUL", "1")
    monkeypatch.setenv("DESK_CAREFUL", "0")
    with ThreadPoolExecutor(1) as executor:  # one batch: c0 on a careless instance, c1 to c3 on a careful one
        mixed = op.run(op.load_suite(root), executor=executor, chunk_size=4, out=tmp_path / "mixed", progress=False)
    assert list(mixed.cases["status"]) == ["error", "completed", "completed", "completed"]
    assert list(mixed.replays["cached"]) == [False] * 3  # the fault replay of each of c1 to c3
    monkeypatch.delenv("DESK_TURNS_CAREFUL")
    monkeypatch.setenv("DESK_CAREFUL", "0")
    careless = op.run(op.load_suite(root), out=tmp_path / "careless", progress=False)
    assert list(careless.replays["cached"]) == [False] * 3  # none of them a careless instance's


LEDGER = '''
import oloproof_nb as op


class Desk(op.RecordedAgent):
    version = "d1"

    def __init__(self, ledger=None):
        self.ledger = dict(ledger or {})  # the desk's world, kept under its constructor's parameter's name

    def reset(self, state):
        self.ledger = dict(state)

    def snapshot(self):
        return dict(self.ledger)

    def lookup(self, key):
        return {"ok": True, "key": key}

    def act(self, input, rec):
        rec.tool("lookup", self.lookup, key=input["cid"])
        self.ledger["done"] = input["cid"]
        return "ok"
'''


def test_a_pooled_instance_keys_its_replays_in_a_later_batch_by_its_settings_as_built(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """An instance a worker pooled after one batch runs the next batch's cases: its replays are keyed by what it held
    when it was built, as a thread run keys them. Read again at each replay, its key was the world the case before
    left in ``ledger`` (a constructor's parameter): the replays of every batch after the first were stored under keys
    no instance is built with, and a run on threads replayed them live."""
    cases = [{"id": f"c{i}", "input": {"cid": f"c{i}"}, "initial_state": {}, "expected": {"answer": "ok"}}
             for i in range(3)]
    root = make_suite(cases, system="sysmod:Desk", system_code=LEDGER,
                      evaluators=[{"type": "answer_matches"},
                                  {"type": "fault_recovery", "tool": "lookup", "fault": "error"}])
    with ThreadPoolExecutor(1) as executor:  # one worker: c1 and c2 run on the instance c0's batch pooled
        pooled = op.run(op.load_suite(root), executor=executor, chunk_size=1, out=tmp_path / "pooled",
                        progress=False)
    assert list(pooled.replays["cached"]) == [False] * 3
    threads = op.run(op.load_suite(root), out=tmp_path / "threads", progress=False)
    assert list(threads.replays["cached"]) == [True] * 3  # was [True, False, False]
