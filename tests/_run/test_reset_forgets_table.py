"""A ``reset`` that leaves a table out (README section 1).

The do-nothing baseline does not find it when no ``initial_state`` holds rows of that table (its cases write
nothing for the next case to find); the run does, as unexpected changes naming the rows an earlier case wrote.
"""

from __future__ import annotations

import json
from pathlib import Path

import oloproof_nb as op

DESK = '''
import oloproof_nb as op


class ForgetfulDesk(op.RecordedAgent):
    version = "forgetful-1"

    def __init__(self):
        self.state = {"orders": {}, "notes": {}}

    def reset(self, state):
        self.state["orders"] = dict(state["orders"])   # "notes" is left as the case before left it

    def snapshot(self):
        return {"orders": dict(self.state["orders"]), "notes": dict(self.state["notes"])}

    def note(self, order_id):
        self.state["notes"][order_id] = "seen"
        return {"ok": True}

    def act(self, input, rec):
        rec.tool("note", self.note, order_id=input["order_id"])
        return "noted"
'''


def test_a_forgotten_table_shows_in_the_run_not_in_the_baseline(tmp_path: Path) -> None:
    root = tmp_path / "suite"
    root.mkdir()
    (root / "forgetful_desk.py").write_text(DESK, encoding="utf-8")
    (root / "oloproof.yaml").write_text("name: forgetful\nsystem: forgetful_desk:ForgetfulDesk\n"
                                        "evaluators:\n  - {type: state_matches, mode: changes}\n", encoding="utf-8")
    lines = [{"id": f"o{i}", "input": {"order_id": f"o{i}"},
              "initial_state": {"orders": {f"o{i}": {"status": "open"}}, "notes": {}},
              "expected": {"answer": "noted", "state": {"notes": {f"o{i}": "seen"}}}} for i in range(3)]
    (root / "cases.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    suite = op.load_suite(root)

    assert op.baseline(suite).run.changes.empty  # the baseline's cases leave nothing behind

    run = op.run(suite, out=tmp_path / "run", progress=False)
    verdicts = run.verdicts.set_index("case_id")
    assert list(verdicts["verdict"]) == ["pass", "fail", "fail"]
    assert verdicts.loc["o1", "reason"] == "1 unexpected change: notes.o0"  # the row case o0 wrote


def test_a_forgotten_table_shows_in_the_baseline_where_an_initial_state_holds_its_rows(tmp_path: Path) -> None:
    """Section 1: the baseline finds a ``reset`` that leaves a table out only where an ``initial_state`` holds rows
    of that table (the test above has the other half: none, and the baseline is empty).
    By hand: case o1's ``notes.old`` is never loaded, so its snapshot lacks it; o0 holds no notes."""
    root = tmp_path / "suite"
    root.mkdir()
    (root / "forgetful_desk.py").write_text(DESK, encoding="utf-8")
    (root / "oloproof.yaml").write_text("name: forgetful\nsystem: forgetful_desk:ForgetfulDesk\n"
                                        "evaluators:\n  - {type: state_matches, mode: changes}\n", encoding="utf-8")
    notes: list[dict[str, str]] = [{}, {"old": "seen"}]
    lines = [{"id": f"o{i}", "input": {"order_id": f"o{i}"},
              "initial_state": {"orders": {f"o{i}": {"status": "open"}}, "notes": notes[i]},
              "expected": {"answer": "noted", "state": {"notes": {f"o{i}": "seen"}}}} for i in range(2)]
    (root / "cases.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    changes = op.baseline(op.load_suite(root)).run.changes
    assert set(changes["case_id"]) == {"o1"}  # o0, holding no notes, shows nothing
    assert "notes.old" in set(changes["path"])  # (beside the row leaf_diff gives for the table left empty)
