"""A scripted system whose epochs take different paths, for tests of reductions over epochs."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

import oloproof_nb as op

#: Epoch e of a case makes ``calls[e-1]`` tool calls and answers right when ``plan[e-1]``.
SCRIPTED = '''
class Scripted:
    version = "scripted-1"

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def run(self, input, epoch):
        ok, calls = input["plan"][epoch - 1], input["calls"][epoch - 1]
        steps = [{"kind": "tool_call", "tool": "t", "args": {"i": i}, "result": {"ok": True}} for i in range(calls)]
        return {"steps": steps, "answer": "yes" if ok else "no", "status": "completed"}
'''


def flaky_run(tmp_path: Path, flaky: int = 4) -> op.Run:
    """20 cases right in all 3 epochs with 1 call; ``flaky`` (4) wrong in epoch 2, which takes a second call."""
    root = tmp_path / "suite"
    root.mkdir()
    (root / "sysmod.py").write_text(SCRIPTED, encoding="utf-8")
    cases = [{"id": f"ok{i:02d}", "input": {"plan": [True] * 3, "calls": [1, 1, 1]}, "expected": {"answer": "yes"}}
             for i in range(20)]
    cases += [{"id": f"flaky{i}", "input": {"plan": [True, False, True], "calls": [1, 2, 1]},
               "expected": {"answer": "yes"}} for i in range(flaky)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (root / "oloproof.yaml").write_text(yaml.safe_dump({
        "name": "flaky", "system": "sysmod:Scripted", "epochs": 3, "evaluators": [{"type": "answer_matches"}],
        "slices": ["tool_calls:2"]}), encoding="utf-8")
    (root / "release.yaml").write_text(yaml.safe_dump(
        {"criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^3"}}}), encoding="utf-8")
    return op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
