"""What lifts the ``recovery_unobserved`` rule of fault replays, as the README says (section 3).

The rule makes a fault replay whose answer alone shows a recovery ``missing`` where an ``outcome_contract`` check
judges the case and the case expects no state. Any ``expected.state`` lifts it, whether or not the promised write
shows in it: a case expecting only an audit flag, whose replays wrote no report, is ``recovered`` on its answer
(3 of 3 here, by hand: no replay calls ``write_report`` successfully). The README now says so.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import yaml

import oloproof_nb as op

WRITER = '''
from pathlib import Path

import oloproof_nb as op

OUT = Path(__file__).resolve().parent / "out"


class Writer(op.RecordedAgent):
    version = "writer-f52"

    def reset(self, state):
        OUT.mkdir(exist_ok=True)
        for f in OUT.iterdir():
            f.unlink()

    def snapshot(self):
        return {"files": {f.name: f.read_text() for f in sorted(OUT.iterdir())}, "audit": {"logged": True}}

    def write_report(self, name):
        (OUT / name).write_text("total,3\\n")
        return {"ok": True}

    def act(self, input, rec):
        rec.tool("write_report", self.write_report, name=input["name"])
        return "done"
'''


def _run(root: Path, state: Callable[[int], dict[str, object]]) -> op.Run:
    root.mkdir()
    (root / "writer.py").write_text(WRITER, encoding="utf-8")
    digest = hashlib.sha256(b"total,3\n").hexdigest()
    cases = [{"id": f"r{n}", "input": {"name": f"r{n}.csv"}, "expected": {"answer": "done", "state": state(n)},
              "outcome": {"artifact_id": f"report-{n}", "locator": f"out/r{n}.csv", "expected_sha256": digest}}
             for n in range(3)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    evaluators = [{"type": "answer_matches"}, {"type": "state_matches"},
                  {"type": "fault_recovery", "tool": "write_report", "fault": "error"}, {"type": "outcome_contract"}]
    config = {"name": "f52", "system": "writer:Writer", "cases": "cases.jsonl", "evaluators": evaluators}
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return op.run(op.load_suite(root), out=root / "run", cache=False, progress=False)


def test_an_expected_state_the_write_does_not_show_in_lets_the_answer_recover_the_replay(tmp_path: Path) -> None:
    run = _run(tmp_path / "audit", lambda n: {"audit": {"logged": True}})
    assert run.receipts["status"].tolist() == ["verified"] * 3  # the case runs wrote their reports
    replays = run.replays
    assert list(zip(replays["verdict"], replays["reason"], strict=True)) == [("pass", "recovered")] * 3
    assert replays["recovered"].tolist() == [True] * 3


def test_one_the_write_shows_in_makes_the_claim_a_false_success(tmp_path: Path) -> None:
    run = _run(tmp_path / "files", lambda n: {"files": {f"r{n}.csv": "total,3\n"}})
    replays = run.replays
    assert list(zip(replays["verdict"], replays["reason"], strict=True)) == [("fail", "false_success")] * 3
