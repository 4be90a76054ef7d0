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
