"""The desk the vacuous-check tests share: four orders, a lookup tool, answer ``done``, and a
``state_unchanged`` path no case's state holds (``ord-99`` beside ``ord-999``)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

SYSTEM = '''
from oloproof_nb import RecordedAgent

class Desk(RecordedAgent):
    def __init__(self):
        super().__init__()
        self.state = {}
    def reset(self, state):
        self.state = {k: dict(v) for k, v in state.items()}
    def snapshot(self):
        return {k: dict(v) for k, v in self.state.items()}
    def lookup(self, order_id):
        return {"ok": True}
    def act(self, input, rec):
        rec.tool("lookup", self.lookup, order_id=input["order_id"])
        return "done"
'''


def suite(tmp: Path, evaluators: list[dict]) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "desk.py").write_text(SYSTEM)
    cases = [{"id": f"ord-{i:03d}", "input": {"order_id": f"ord-{i:03d}"}, "expected": {"answer": "done"},
              "initial_state": {"orders": {f"ord-{i:03d}": {"status": "open"}, "ord-999": {"status": "open"}}}}
             for i in range(4)]
    (tmp / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp / "oloproof.yaml").write_text(yaml.safe_dump({"name": "v", "system": "desk:Desk", "evaluators": evaluators}))
    crit = {"answer_matches": 0.1} if any(e["type"] == "answer_matches" for e in evaluators) else {}
    (tmp / "release.yaml").write_text(yaml.safe_dump({"criteria": crit}))
    return tmp


#: A state_unchanged path no case's state holds (``load_suite`` names it vacuous: ord-99 is never there).
TYPO = {"type": "state_unchanged", "criterion": "other_order_untouched", "paths": ["orders.ord-99"]}
