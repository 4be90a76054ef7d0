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
