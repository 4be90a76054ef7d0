"""``effect: applied`` is the system's to honour in a hand-written ``replay()``, and nothing checks it.

README section 3 says so: a replay that skips the call records the same steps as one that runs it, so its ending
is judged as if the call had run. The numbers it gives are these: a desk that retries a failed refund once,
three cases each expecting one refund (``state_matches`` in ``whole`` mode). Counted by hand: running the call
and then the retry refunds twice, a ``false_success`` in each case; skipping it leaves the retry the only refund.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import oloproof_nb as op


class RetryingDesk:
    """A hand-written Replayable that retries a failed refund once; its ``replay()`` ignores ``change.effect``."""

    version = "hand-r37"
    honours_effect = False

    def reset(self, state: dict[str, Any]) -> None:
        self.state = copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def refund(self, order_id: str) -> dict[str, Any]:
        self.state["refunds"].append(order_id)
        return {"ok": True}

    def _act(self, input: dict[str, Any], change: op.Change | None = None) -> op.Trajectory:
        order_id = input["order_id"]
        if change is None:
            result = self.refund(order_id)
        else:  # the first call is the only checkpoint here
            if change.effect == "applied" and self.honours_effect:
                self.refund(order_id)
            result = change.result
        steps = [op.ToolCall(tool="refund", args={"order_id": order_id}, result=result)]
        if not result.get("ok"):
            steps.append(op.ToolCall(tool="refund", args={"order_id": order_id}, result=self.refund(order_id)))
        return op.Trajectory(steps=steps, answer="refunded")

    def run(self, input: dict[str, Any]) -> op.Trajectory:
        return self._act(input)

    def replay(self, trajectory: op.Trajectory, *, checkpoint: int, change: op.Change | None) -> op.Trajectory:
        assert trajectory.input is not None and checkpoint == 0
        return self._act(trajectory.input, change)


class HonouringDesk(RetryingDesk):
    """The same desk, whose replay runs the call when ``change.effect`` is ``applied``."""

    honours_effect = True


def _suite(root: Path) -> Path:
    root.mkdir()
    # the suite's own system (never run here: each run is given its desk)
    (root / "placeholder_r37.py").write_text("class Desk:\n    def run(self, input):\n        return {}\n",
                                             encoding="utf-8")
    cases = [{"id": f"c{i}", "input": {"order_id": f"o{i}"}, "initial_state": {"refunds": []},
              "expected": {"answer": "refunded", "state": {"refunds": [f"o{i}"]}}} for i in range(3)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (root / "oloproof.yaml").write_text(
        "name: applied\nsystem: placeholder_r37:Desk\nevaluators:\n  - {type: answer_matches}\n"
        "  - {type: state_matches, mode: whole}\n"
        "  - {type: fault_recovery, tool: refund, fault: timeout, effect: applied}\n", encoding="utf-8")
    return root


def test_a_replay_that_ignores_an_applied_effect_is_judged_as_if_the_call_ran(tmp_path: Path) -> None:
    root = _suite(tmp_path / "suite")

    def rows(system: type) -> list[tuple[str, str]]:
        run = op.run(root, system=system, out=tmp_path / system.__name__, cache=False, progress=False)
        return [(r.verdict, r.reason) for r in run.replays.itertuples()]

    assert rows(HonouringDesk) == [("fail", "false_success")] * 3
    assert rows(RetryingDesk) == [("pass", "recovered")] * 3  # the limit README states: not seen
