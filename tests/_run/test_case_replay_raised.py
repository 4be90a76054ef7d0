"""A case whose replay raised hands the next case a fresh system instance, as a case that raised does.

What a raise leaves on an instance outlives the sandbox's reset. An agent that holds its own connection to the
sandbox's SQLite file and opens a transaction there before a tool call raised on the fault result
(``KeyError: 'refund_id'``) with the transaction still open: the next case's reset, on the same instance, met
``database is locked`` and that case, whose agent never ran, was an ``error``. A case whose own run raised the same
way was followed by a fresh instance, and its next case passed.
"""

from __future__ import annotations

import json
from pathlib import Path

import oloproof_nb as op

DESK = '''
import os, shutil, sqlite3, tempfile, weakref

import oloproof_nb as op


def _close(held):
    for db in held[:2]:
        db.close()
    shutil.rmtree(held[2], ignore_errors=True)


class HeldDesk(op.RecordedAgent):
    """A sandbox's connection to a file, and one the agent holds across cases to the same file."""

    version = "held-1"

    def __init__(self):
        folder = tempfile.mkdtemp()
        path = os.path.join(folder, "shop.db")
        # a short busy timeout: a lock never released fails the reset at once rather than after 5 s
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=0.05)
        db.execute("CREATE TABLE refunds (order_id TEXT PRIMARY KEY, amount REAL NOT NULL)")
        agent_db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=0.05)
        self.held = [db, agent_db, folder]
        weakref.finalize(self, _close, self.held)

    def reset(self, state):
        db = self.held[0]
        db.execute("BEGIN IMMEDIATE")
        db.execute("DELETE FROM refunds")
        db.executemany("INSERT INTO refunds VALUES (?, ?)",
                       [(key, row["amount"]) for key, row in state.get("refunds", {}).items()])
        db.execute("COMMIT")

    def snapshot(self):
        return {"refunds": {key: {"amount": amount}
                            for key, amount in self.held[0].execute("SELECT order_id, amount FROM refunds")}}

    def issue_refund(self, order_id, amount):
        self.held[1].execute("INSERT INTO refunds VALUES (?, ?)", (order_id, amount))
        return {"ok": True, "refund_id": "rf-" + order_id}

    def act(self, input, rec):
        self.held[1].execute("BEGIN IMMEDIATE")  # the refund in a transaction of the agent's own
        out = rec.tool("issue_refund", self.issue_refund, order_id=input["order_id"], amount=input["amount"])
        refund_id = out["refund_id"]  # a failed refund has none: KeyError, the transaction left open
        self.held[1].execute("COMMIT")
        return "refunded " + refund_id
'''


def _suite(root: Path) -> Path:
    root.mkdir()
    (root / "held_desk.py").write_text(DESK, encoding="utf-8")
    cases = [{"id": f"o{i}", "input": {"order_id": f"o{i}", "amount": 10.0 * i}, "initial_state": {"refunds": {}},
              "expected": {"state": {"refunds": {f"o{i}": {"amount": 10.0 * i}}}}} for i in (1, 2, 3)]
    (root / "cases.jsonl").write_text("".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")
    (root / "oloproof.yaml").write_text(
        "name: held\nsystem: held_desk:HeldDesk\ncases: cases.jsonl\ncase_timeout_s: 30\nevaluators:\n"
        "  - {type: state_matches, mode: changes}\n  - {type: fault_recovery, tool: issue_refund, fault: error}\n",
        encoding="utf-8")
    return root


def test_the_case_after_a_replay_that_raised_runs_on_a_fresh_instance(tmp_path: Path) -> None:
    run = op.run(_suite(tmp_path / "suite"), out=tmp_path / "run", progress=False)

    assert list(run.cases["status"]) == ["completed"] * 3  # o2 was an error: reset() raised ... database is locked
    verdicts = run.verdicts.set_index(["case_id", "criterion"])["verdict"]
    assert [verdicts[(f"o{i}", "state_matches")] for i in (1, 2, 3)] == ["pass"] * 3
    reasons = run.verdicts[run.verdicts["criterion"] == "recovers_from_error_at_issue_refund"]["reason"]
    assert list(reasons.str.startswith("replay_raised: KeyError: 'refund_id'")) == [True] * 3
