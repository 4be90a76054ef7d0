"""A tool that raises is recorded, and its exception raised again (README sections 1 and 1a).

A benchmark's tools often raise on a refused action (cancel a delivered order) and its agent catches the
exception. Sent through ``rec.tool`` as they were, such calls left no step: ``run.steps`` did not show them,
``n_tool_calls`` did not count them and no fault replay reached them (a retail desk kept 25 of
its 44 fault rows). They are recorded now, with :func:`~oloproof_nb._core.recorder.raised_result` as the result;
a desk that turns the exception into a result itself (the README's earlier advice) records the same call.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import oloproof_nb as op

DESK = '''
import oloproof_nb as op


class Refused(Exception):
    pass


def recorded(fn):
    """README section 1: the failure returned as a result, for the recording."""
    def call(**kw):
        try:
            return fn(**kw)
        except Refused as exc:
            return {{"ok": False, "error": "refused", "message": str(exc)}}
    return call


class Desk(op.RecordedAgent):
    version = "raising-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return self.state

    def cancel(self, order_id):
        if self.state["orders"][order_id] != "pending":
            raise Refused(f"{{order_id}} is {{self.state['orders'][order_id]}}")
        self.state["orders"][order_id] = "cancelled"
        return {{"ok": True}}

    def act(self, input, rec):
        try:
            out = rec.tool("cancel", {tool}, order_id=input["order_id"])
            if isinstance(out, dict) and out.get("ok") is False:
                raise Refused(out.get("message"))   # ... and raised again, where the agent expects it
        except Refused as exc:
            return f"could not cancel: {{exc}}"
        return "cancelled"
'''

CASES = [
    {"id": "pending", "input": {"order_id": "o1"}, "initial_state": {"orders": {"o1": "pending"}},
     "expected": {"state": {"orders": {"o1": "cancelled"}}}},
    {"id": "delivered", "input": {"order_id": "o1"}, "initial_state": {"orders": {"o1": "delivered"}},
     "expected": {"state": {}}},
]


def _suite(root: Path, module: str, tool: str) -> Path:
    root.mkdir()
    (root / f"{module}.py").write_text(DESK.format(tool=tool), encoding="utf-8")
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    (root / "oloproof.yaml").write_text(
        f"name: raising\nsystem: {module}:Desk\nevaluators:\n"
        "  - {type: state_matches, mode: changes}\n"
        "  - {type: fault_recovery, tool: cancel, fault: error, honest_answers: [{regex: could not cancel}]}\n",
        encoding="utf-8")
    return root


@pytest.mark.parametrize(("module", "tool", "result"), [
    ("desk_raw_u18", "self.cancel", {"ok": False, "error": "Refused: o1 is delivered", "raised": "Refused"}),
    ("desk_wrapped_u18", "recorded(self.cancel)", {"ok": False, "error": "refused", "message": "o1 is delivered"}),
])
def test_a_tool_that_raises_is_a_failed_step_counted_and_faulted(tmp_path, module, tool, result):
    run = op.run(_suite(tmp_path / "suite", module, tool), out=tmp_path / "run", cache=False, progress=False)
    cases = run.cases.set_index("case_id")
    # the agent caught the refusal either way: the answer and the state are the same
    assert cases.loc["delivered", "answer"] == "could not cancel: o1 is delivered"
    assert set(run.verdicts.query("criterion == 'state_matches'").verdict) == {"pass"}
    steps = run.steps[run.steps.case_id == "delivered"]
    assert steps.tool.tolist() == ["cancel"] and steps.is_error.tolist() == [True]
    assert steps.result.iloc[0] == result
    assert cases.loc["delivered", "n_tool_calls"] == 1 and cases.loc["pending", "n_tool_calls"] == 1
    # both cases are faulted at their one call, and the control replay of the raising call reproduced it
    replays = run.replays.set_index("case_id")
    assert sorted(replays.index) == ["delivered", "pending"]
    assert replays.loc["delivered", "control_reproduced"] == True  # noqa: E712 - a NumPy bool
    assert replays.loc["delivered", "verdict"] == "pass"   # "could not cancel" is an honest answer
