"""A system that replaces ``json.dumps`` or ``json.loads`` in its process changes its own JSON, not the run's.

With ``isolation: thread`` the system runs in the run's process: a ``run()`` that set ``json.dumps = ...`` (a
library's shim, a debugging patch) had every later record of ``cases.jsonl`` and the manifest written by it (the
folder read ``manifest.json: not valid JSON`` and could not be resumed), and one that replaced ``json.loads`` had
each later state stored as what it returned (``2 unexpected changes: n, patched`` for a desk whose world was right).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op

SYSTEM = '''
import json


class Desk:
    version = "d1"

    def reset(self, state):
        self.state = dict(state)

    def run(self, input):
        self.state["done"] = input["cid"]
        if input["cid"] == "c1":
            json.{name} = lambda *args, **kwargs: {value}
        return {{"steps": [], "answer": "ok", "status": "completed"}}

    def snapshot(self):
        return self.state
'''

CASES = [{"id": f"c{i}", "input": {"cid": f"c{i}"}, "initial_state": {"n": i},
          "expected": {"answer": "ok", "state": {"done": f"c{i}"}}} for i in range(4)]
EVALUATORS = [{"type": "answer_matches"}, {"type": "state_matches", "mode": "changes"}]


@pytest.mark.parametrize(("name", "value"), [("dumps", "'PATCHED'"), ("loads", "{'patched': True}")])
def test_a_system_replacing_json_leaves_the_run_and_its_folder_as_they_were(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
        value: str) -> None:
    monkeypatch.setattr(json, name, getattr(json, name))  # put back when the test ends, whatever the system did
    root = make_suite(CASES, evaluators=EVALUATORS, system="sysmod:Desk",
                      system_code=SYSTEM.format(name=name, value=value))
    run = op.run(op.load_suite(root), out=tmp_path / "run")
    assert getattr(json, name).__name__ == "<lambda>"  # the system's replacement was in place as the run went on
    monkeypatch.undo()
    again = op.load_run(tmp_path / "run")
    for loaded in (run, again):
        verdicts = loaded.verdicts
        assert len(verdicts) == 8
        assert set(verdicts["verdict"]) == {"pass"}, verdicts[["case_id", "criterion", "reason"]].to_string()
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["finished_at"] is not None


RECORDED = '''
import json

import oloproof_nb as op


class Desk(op.RecordedAgent):
    version = "d1"

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def lookup(self, key):
        return {"ok": True, "key": key}

    def act(self, input, rec):
        rec.tool("lookup", self.lookup, key=input["cid"])
        self.state["done"] = input["cid"]
        if input["cid"] == "c1":
            json.dumps = lambda *args, **kwargs: b"{}"  # a shim returning bytes, as orjson.dumps does
        return "ok"
'''


def test_a_system_whose_json_dumps_returns_bytes_leaves_the_replay_cache_and_the_next_run_as_they_were(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its cases' replays are stored in the suite's replay cache as JSON text (the next replay stored stopped the
    run: ``internal error: TypeError: write() argument must be str, not bytes``), and the next run of the process
    notes who holds its folder (it stopped as it started: ``AttributeError: 'bytes' object has no attribute
    'encode'``)."""
    monkeypatch.setattr(json, "dumps", json.dumps)  # put back when the test ends, whatever the system did
    root = make_suite(CASES, evaluators=[{"type": "answer_matches"},
                                         {"type": "fault_recovery", "tool": "lookup", "fault": "error"}],
                      system="sysmod:Desk", system_code=RECORDED)
    first = op.run(op.load_suite(root), out=tmp_path / "first", progress=False)
    assert json.dumps({}) == b"{}"  # the system's replacement is still in place for the next run
    again = op.run(op.load_suite(root), out=tmp_path / "again", progress=False)
    monkeypatch.undo()

    for run in (first, again):
        assert len(run.verdicts) == 8 and run.verdicts["verdict"].notna().all()
    assert list(first.replays["cached"]) == [False] * 4
    assert list(again.replays["cached"]) == [True] * 4  # each entry the first run stored reads back
    assert list(again.verdicts["verdict"]) == list(first.verdicts["verdict"])


def test_a_large_state_holding_a_tuple_is_stored_as_json_reads_it_whatever_json_loads_now_is(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A state of 1 kB or more that is not plain JSON (a tuple, a number as a key) is made JSON before it is cut
    into nodes; with ``json.loads`` replaced it was stored as what the replacement returned."""
    from oloproof_nb._run.states import NODE_BYTES, encode_state

    state = {"rows": [("o1", 45.0)] * 60, 7: "x" * NODE_BYTES}
    as_json = {"rows": [["o1", 45.0]] * 60, "7": "x" * NODE_BYTES}
    expected = encode_state(as_json)
    monkeypatch.setattr(json, "loads", lambda *args, **kwargs: {"patched": True})
    assert encode_state(state) == expected
