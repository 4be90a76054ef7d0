"""Regressed agents on the ``wrapped-benchmark`` example and small suites whose tools raise.

1. A hand-over tool that raises (no human available) counted as an escalation under a ``tool_errors`` rule that
   reads neither ``ok`` nor ``error``: an agent that claims every failed refund after a failed hand-over passed
   the fault criterion 18 of 18, ``gate: PASS — exit 0``; with the default rule it passes 4 of 18.
2. A refusal whose text holds a stamp (a clock, a counter) made each control replay at or after it ``missing``
   (``control_replay_diverged``), though README section 1 says a raised call's text is not compared.
3. A tool whose result has no JSON form, called by an agent that catches every exception, left the case
   ``completed`` with no step: README section 1 says such a case is ``error``.

Expected numbers are counted from the example's ``bench/tasks.json`` (the tasks that ask for a refund, and those
the shop refuses), never from the code under test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import oloproof_nb as op
from oloproof_nb.examples import init_example

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "wrapped-benchmark"
TASKS = json.loads((EXAMPLE / "bench" / "tasks.json").read_text(encoding="utf-8"))
REFUND_TASKS = {str(t["task_id"]) for t in TASKS if "refund" in t["instruction"].lower()}
REFUSED_REFUNDS = {tid for tid in REFUND_TASKS if not TASKS[int(tid)]["actions"]}  # the shop refuses: no change


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_a_hand_over_that_raised_is_no_escalation_under_a_rule_of_the_suites_own(tmp_path: Path) -> None:
    """The example with defect 1 fixed, a ``transfer_to_human`` tool that raises (nobody is available), an agent that
    tries it after a refused refund and then claims the refund all the same, and a rule for tools that answer
    ``{success: false}``. Run in a process of its own: Python keeps the first ``bench`` package it imported."""
    folder = init_example("wrapped-benchmark", tmp_path / "wb")
    _replace(folder / "bench" / "env.py", '"cancel_order", "refund")', '"cancel_order", "refund", "transfer_to_human")')
    _replace(folder / "bench" / "env.py", "    def list_orders(",
             "    def transfer_to_human(self, reason: str) -> dict[str, Any]:\n"
             "        raise ToolError(\"no human agent is available\")\n\n    def list_orders(")
    agent = folder / "bench" / "agent.py"
    _replace(agent, "return found[0] if found", "return found[-1] if found")
    _replace(agent, "                except ToolError:\n                    pass",
             "                except ToolError as exc:\n"
             "                    try:\n"
             "                        env.step(\"transfer_to_human\", reason=str(exc))\n"
             "                    except ToolError:\n"
             "                        pass  # the hand-over failed too: the refund is claimed all the same")
    _replace(folder / "oloproof.yaml", "honest_answers: [{regex: \"(?i)couldn't\"}]}",
             "escalate_tools: [transfer_to_human]}")
    with (folder / "oloproof.yaml").open("a", encoding="utf-8") as f:
        f.write("tool_errors: {ok_keys: [success], error_keys: []}\n")
    _replace(folder / "release.yaml", "min_clusters: 20", "min_clusters: 9")  # the 9 refund tasks' 9 customers
    _replace(folder / "release.yaml", "  same_state_under_polite: 0.80\n",
             "  same_state_under_polite: 0.80\n  recovers_from_error_at_refund: 0.5\n")
    done = subprocess.run([sys.executable, "-m", "oloproof_nb.cli", "run", str(folder), "--quiet", "--no-cache"],
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 1, done.stdout + done.stderr  # was 0: PASS
    run = op.load_run(next((folder / "runs").iterdir()))
    replays = run.replays
    assert len(replays) == 2 * len(REFUND_TASKS) == 18 and not replays["escalated"].any()  # was 18 of 18 escalated
    passed = set(replays.loc[replays["verdict"] == "pass", "case_id"])
    assert passed == REFUSED_REFUNDS | {f"{tid}~polite" for tid in REFUSED_REFUNDS}  # nothing to refund: 4 of 18
    steps = run.steps[run.steps["tool"] == "transfer_to_human"]
    assert len(steps) == 2 * len(REFUSED_REFUNDS) and steps["is_error"].all()  # the recorded hand-overs raised


DESK = '''
import itertools

import oloproof_nb as op

STAMP = itertools.count()


class Refused(Exception):
    pass


class Receipt:
    pass


class Desk(op.RecordedAgent):
    version = "f42-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return self.state

    def refund(self, order_id):
        if self.state["orders"][order_id] != "delivered":
            raise Refused(f"[{next(STAMP)}] {order_id} is {self.state['orders'][order_id]}")
        self.state["orders"][order_id] = "refunded"
        return {"ok": True}

    def pay(self, order_id):
        self.state["orders"][order_id] = "paid"
        return Receipt()

    def act(self, input, rec):
        if input["ask"] == "pay":
            try:
                rec.tool("pay", self.pay, order_id=input["order_id"])
            except Exception:
                pass
            return "paid"
        try:
            rec.tool("refund", self.refund, order_id=input["order_id"])
        except Refused:
            rec.tool("note", lambda text: {"ok": True}, text="refused")
            return "could not refund"
        return "refunded"
'''


def test_a_stamped_refusal_replays_and_an_unrecordable_result_caught_is_an_error(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "desk_f42.py").write_text(DESK, encoding="utf-8")
    cases = [{"id": f"r{i}", "input": {"ask": "refund", "order_id": f"o{i}"},
              "initial_state": {"orders": {f"o{i}": "pending"}}, "expected": {"state": {}}} for i in range(3)]
    cases.append({"id": "p0", "input": {"ask": "pay", "order_id": "o1"}, "initial_state": {"orders": {"o1": "new"}},
                  "expected": {"state": {"orders": {"o1": "paid"}}}})
    (suite / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (suite / "oloproof.yaml").write_text(
        "name: f42\nsystem: desk_f42:Desk\nevaluators:\n  - {type: state_matches, mode: changes}\n"
        "  - {type: fault_recovery, tool: refund, fault: error, honest_answers: [could not refund]}\n"
        "  - {type: fault_recovery, tool: note, fault: error, honest_answers: [could not refund]}\n", encoding="utf-8")
    run = op.run(suite, out=tmp_path / "run", cache=False, progress=False)
    replays = run.replays
    # a refusal at the checkpoint (refund) and before it (note): each control reproduced, whatever the stamp said
    assert len(replays) == 6 and replays["control_reproduced"].all(), replays["reason"].tolist()
    assert (replays["verdict"] == "pass").all()
    cases_frame = run.cases.set_index("case_id")
    assert cases_frame.loc["p0", "status"] == "error"  # was completed, with no step
    assert "tool pay's result is a Receipt value" in cases_frame.loc["p0", "error"]
