"""A change at a model call hands the agent a copy of its result, as a change at a tool call does: an agent that
edits the output it was given leaves the change alone, so the next replay with it gets the result as written."""

from __future__ import annotations

from typing import Any

import oloproof_nb as op


class Annotates(op.RecordedAgent):
    """Marks every result it has read (``seen``), in the value it was handed."""

    def act(self, input: dict[str, Any], rec: op.Recorder) -> Any:
        plan = rec.model("plan", lambda prompt: {"steps": ["pay"]}, prompt=input["msg"])
        plan["seen"] = True
        paid = rec.tool("pay", lambda amount: {"ok": True}, amount=input["amount"])
        paid["seen"] = True
        return "paid" if paid.get("ok") else "not paid"


def _recorded() -> tuple[Annotates, op.Trajectory]:
    agent = Annotates()
    recorded = agent.run({"msg": "pay 5", "amount": 5})
    recorded.input = {"msg": "pay 5", "amount": 5}
    return agent, recorded


def test_an_agent_that_edits_a_changed_model_output_leaves_the_change_alone() -> None:
    agent, recorded = _recorded()
    change = op.Change(result={"steps": []})
    for _ in range(2):
        replayed = agent.replay(recorded, checkpoint=0, change=change)
        assert replayed.steps[0].content == {"steps": []}  # type: ignore[union-attr]
    assert change.result == {"steps": []}
