"""Systems: trajectory types, fault results, the Recorder (record, replay, divergence) and RecordedAgent."""

from __future__ import annotations

import copy
import re
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

import pytest
from pydantic import BaseModel

import oloproof_nb as op
from oloproof_nb._core.jsonsafe import NotJSONError
from oloproof_nb._core.recorder import ReplayDiverged
from oloproof_nb._core.trajectory import FAULTS, MALFORMED_RESULT, fault_result, step_is_error


def test_trajectory_accepts_plain_dicts() -> None:
    traj = op.Trajectory.model_validate({
        "steps": [{"tool": "get_order", "args": {"order_id": "o1"}, "result": {"ok": True}},
                  {"role": "assistant", "content": "done"}],
        "answer": "refunded",
    })
    assert isinstance(traj.steps[0], op.ToolCall) and traj.steps[0].tool == "get_order"
    assert isinstance(traj.steps[1], op.Message) and traj.steps[1].content == "done"
    assert traj.status == "completed" and traj.input is None
    assert traj.tool_calls() == [(0, traj.steps[0])] and traj.first_call("get_order") == 0
    assert traj.first_call("issue_refund") is None
    with pytest.raises(ValueError, match=r"(?s)status.*'completed', 'failed' or 'waiting'"):
        op.Trajectory.model_validate({"status": "done"})  # completed | failed | waiting
    with pytest.raises(ValueError, match=r"(?s)argz.*Extra inputs are not permitted"):
        op.ToolCall(tool="x", argz={})  # type: ignore[call-arg]


def test_fault_results_are_the_documented_ones() -> None:
    assert FAULTS == ("error", "timeout", "malformed")
    assert fault_result("error", "issue_refund") == {"ok": False, "error": "error", "message": "issue_refund failed"}
    assert fault_result("timeout", "issue_refund") == {"ok": False, "error": "timeout",
                                                       "message": "issue_refund timed out"}
    assert fault_result("malformed", "issue_refund") == "<<malformed>>" == MALFORMED_RESULT
    with pytest.raises(ValueError, match="allowed: error, timeout, malformed"):
        fault_result("crash", "x")


def test_step_is_error() -> None:
    assert step_is_error(op.ToolCall(tool="t", result={"ok": False}))
    assert step_is_error(op.ToolCall(tool="t", result={"error": "x"}))
    assert step_is_error(op.ToolCall(tool="t", result=MALFORMED_RESULT))
    assert not step_is_error(op.ToolCall(tool="t", result={"ok": True}))
    assert not step_is_error(op.Message(content={"ok": False}))


def test_protocols_are_structural() -> None:
    class S:
        def reset(self, state: dict) -> None: ...
        def snapshot(self) -> dict: return {}
        def run(self, input: dict) -> dict: return {}

    assert isinstance(S(), op.Stateful) and not isinstance(S(), op.Replayable)
    assert isinstance(Agent(), op.Replayable) and isinstance(Agent(), op.Stateful)


# -- a small agent on the Recorder ------------------------------------------------------------------


class World:
    """A counter sandbox with call counts, so tests can see what re-executed."""

    def __init__(self) -> None:
        self.stock: dict[str, int] = {}
        self.calls: dict[str, int] = {"get": 0, "take": 0, "model": 0}

    def get(self, item: str) -> dict[str, Any]:
        self.calls["get"] += 1
        return {"ok": True, "stock": self.stock.get(item, 0)}

    def take(self, item: str, n: int) -> dict[str, Any]:
        self.calls["take"] += 1
        if self.stock.get(item, 0) < n:
            return {"ok": False, "error": "short"}
        self.stock[item] -= n
        return {"ok": True, "left": self.stock[item]}

    def model(self, prompt: str) -> str:
        self.calls["model"] += 1
        return "take" if "please" in prompt else "ask"


class Agent(op.RecordedAgent):
    version = "agent-1"

    def __init__(self) -> None:
        self.world = World()

    def reset(self, state: dict[str, Any]) -> None:
        self.world.stock = dict(state.get("stock", {}))

    def snapshot(self) -> dict[str, Any]:
        return {"stock": dict(self.world.stock)}

    def act(self, input: dict[str, Any], rec: op.Recorder) -> str:
        plan = rec.model("plan", self.world.model, prompt=input["msg"])
        if plan != "take":
            rec.say("what do you need?")
            return "asked"
        seen = rec.tool("get", self.world.get, item=input["item"])
        if seen["stock"] < input["n"]:
            return "short"
        result = rec.tool("take", self.world.take, item=input["item"], n=input["n"])
        if not isinstance(result, dict) or not result.get("ok"):
            rec.tool("get", self.world.get, item=input["item"])
            return "failed"
        rec.say(f"took {input['n']}")
        return "taken"


INPUT = {"msg": "please take", "item": "apple", "n": 2}
STATE = {"stock": {"apple": 5}}


def _recorded() -> tuple[Agent, op.Trajectory]:
    agent = Agent()
    agent.reset(copy.deepcopy(STATE))
    traj = agent.run(INPUT).model_copy(update={"input": INPUT})
    return agent, traj


def test_recording_tool_and_model_calls() -> None:
    agent, traj = _recorded()
    assert traj.answer == "taken" and traj.status == "completed"
    kinds = [(type(s).__name__, getattr(s, "tool", None) or getattr(s, "name", None)) for s in traj.steps]
    assert kinds == [("Message", "plan"), ("ToolCall", "get"), ("ToolCall", "take"), ("Message", None)]
    assert traj.steps[0].content == "take" and traj.steps[0].args == {"prompt": "please take"}
    assert traj.steps[1].args == {"item": "apple"} and traj.steps[1].result == {"ok": True, "stock": 5}
    assert traj.steps[2].result == {"ok": True, "left": 3}
    assert agent.snapshot() == {"stock": {"apple": 3}}
    assert agent.world.calls == {"get": 1, "take": 1, "model": 1}


def test_control_replay_reproduces_the_recording() -> None:
    _, traj = _recorded()
    fresh = Agent()
    fresh.reset(copy.deepcopy(STATE))
    again = fresh.replay(traj, checkpoint=2, change=None)
    assert again.model_dump(exclude={"input"}) == traj.model_dump(exclude={"input"})
    assert fresh.snapshot() == {"stock": {"apple": 3}}


def test_replay_with_change_at_the_checkpoint() -> None:
    _, traj = _recorded()
    checkpoint = traj.first_call("take")
    assert checkpoint == 2
    fresh = Agent()
    fresh.reset(copy.deepcopy(STATE))
    fault = fault_result("error", "take")
    replayed = fresh.replay(traj, checkpoint=checkpoint, change=op.Change(result=fault))
    # the call at the checkpoint did not run: the stock is untouched, and the agent took its failure path live
    assert fresh.world.calls["take"] == 0
    assert fresh.snapshot() == {"stock": {"apple": 5}}
    assert replayed.answer == "failed"
    assert replayed.steps[2].result == fault and replayed.steps[2].tool == "take"
    assert [getattr(s, "tool", None) for s in replayed.steps] == [None, "get", "take", "get"]
    assert replayed.steps[3].result == {"ok": True, "stock": 5}  # live call after the checkpoint


def test_model_calls_before_the_checkpoint_are_not_called_again() -> None:
    _, traj = _recorded()
    fresh = Agent()
    fresh.reset(copy.deepcopy(STATE))
    fresh.replay(traj, checkpoint=2, change=op.Change(result={"ok": False, "error": "x"}))
    assert fresh.world.calls["model"] == 0  # the recorded plan was returned
    assert fresh.world.calls["get"] == 2  # tools before the checkpoint re-execute; one live get after it


def test_change_at_a_model_call() -> None:
    _, traj = _recorded()
    fresh = Agent()
    fresh.reset(copy.deepcopy(STATE))
    replayed = fresh.replay(traj, checkpoint=0, change=op.Change(result="ask"))
    assert replayed.answer == "asked" and fresh.world.calls["model"] == 0
    assert replayed.steps[0].content == "ask"


def test_mismatch_before_the_checkpoint_raises() -> None:
    _, traj = _recorded()
    # the sandbox holds another stock: the re-executed get returns another result than recorded
    other = Agent()
    other.reset({"stock": {"apple": 4}})
    with pytest.raises(ReplayDiverged, match="step 1"):
        other.replay(traj, checkpoint=2, change=op.Change(result={"ok": False}))
    # other arguments before the checkpoint
    moved = traj.model_copy(update={"input": {**INPUT, "item": "pear"}})
    agent = Agent()
    agent.reset({"stock": {"pear": 5}})
    with pytest.raises(ReplayDiverged,
                       match=r"step 1: the replay called get\(\{'item': 'pear'\}\) where the recording has .*'apple'"):
        agent.replay(moved, checkpoint=2, change=op.Change(result={"ok": False}))
    # the recording has another tool at the checkpoint than the replay calls
    other_tool = traj.model_copy(update={"steps": [traj.steps[0], op.ToolCall(tool="other", args={}, result=1)]})
    agent = Agent()
    agent.reset(copy.deepcopy(STATE))
    with pytest.raises(ReplayDiverged, match="step 1"):
        agent.replay(other_tool, checkpoint=1, change=op.Change(result=1))
    # a model call with other arguments before the checkpoint
    other_prompt = traj.model_copy(update={"input": {**INPUT, "msg": "please take now"}})
    agent = Agent()
    agent.reset(copy.deepcopy(STATE))
    with pytest.raises(ReplayDiverged, match="step 0"):
        agent.replay(other_prompt, checkpoint=2, change=op.Change(result={"ok": False}))


def test_replay_past_the_recording_raises() -> None:
    rec = op.Recorder()
    rec.tool("add", lambda a, b: a + b, a=1, b=2)
    short = rec.trajectory(3)
    again = op.Recorder.replaying(short, checkpoint=5, change=op.Change(result=0))
    again.tool("add", lambda a, b: a + b, a=1, b=2)
    with pytest.raises(ReplayDiverged, match=r"step 1: the replay made a call the recording does not have \(add\)"):
        again.tool("add", lambda a, b: a + b, a=3, b=4)


def test_recorder_docstring_example_and_status() -> None:
    rec = op.Recorder()
    assert rec.tool("add", lambda a, b: a + b, a=1, b=2) == 3
    rec.wait()
    traj = rec.trajectory("3")
    assert traj.status == "waiting"
    again = op.Recorder.replaying(traj, checkpoint=0, change=op.Change(result=5))
    assert again.is_replaying and again.tool("add", lambda a, b: a + b, a=1, b=2) == 5
    failed = op.Recorder()
    failed.fail()
    assert failed.trajectory().status == "failed"


def test_change_result_is_copied() -> None:
    _, traj = _recorded()
    change = op.Change(result={"ok": False, "error": "error", "nested": {"k": 1}})
    for _ in range(2):
        agent = Agent()
        agent.reset(copy.deepcopy(STATE))
        out = agent.replay(traj, checkpoint=2, change=change)
        out.steps[2].result["nested"]["k"] = 99  # mutate what the replay returned
    assert change.result["nested"]["k"] == 1


def test_replay_needs_the_input() -> None:
    agent, traj = _recorded()
    with pytest.raises(ValueError, match="trajectory.input"):
        agent.replay(traj.model_copy(update={"input": None}), checkpoint=0, change=None)


def test_replay_that_ends_before_the_checkpoint_diverged() -> None:
    _, traj = _recorded()

    class Moody(Agent):
        """Decides from something it never recorded: the replay takes another road before the checkpoint."""

        def act(self, input: dict[str, Any], rec: op.Recorder) -> str:
            rec.model("plan", self.world.model, prompt=input["msg"])
            return "gave up"

    agent = Moody()
    agent.reset(copy.deepcopy(STATE))
    with pytest.raises(ReplayDiverged, match="before the checkpoint"):
        agent.replay(traj, checkpoint=2, change=op.Change(result={"ok": False}))
    with pytest.raises(ReplayDiverged, match="before the checkpoint"):
        agent.replay(traj, checkpoint=2, change=None)


# -- JSON copies at call time ------------------------------------------------------------------------------


def test_a_live_result_mutated_later_does_not_rewrite_the_recording() -> None:
    # the repro: the stored step showed {'a': 2}, a value that did not exist when the call returned
    rec = op.Recorder()
    box = [{"a": 1}]
    returned = rec.tool("get", lambda: box[0])
    box[0]["a"] = 2
    assert rec.trajectory().steps[0].result == {"a": 1}
    assert returned is box[0]  # the agent itself still gets the tool's own object


def test_arguments_mutated_later_do_not_rewrite_the_recording() -> None:
    rec = op.Recorder()
    payload = {"items": [1, 2]}
    rec.tool("put", lambda body: None, body=payload)
    payload["items"].append(3)
    rec.say(payload)
    payload["items"].append(4)
    steps = rec.trajectory().steps
    assert steps[0].args == {"body": {"items": [1, 2]}} and steps[1].content == {"items": [1, 2, 3]}


class Balance(BaseModel):
    iban: str
    amount: Decimal
    at: datetime


def test_live_models_are_recorded_through_the_one_conversion() -> None:
    account = Balance(iban="ME-1", amount=Decimal("10.50"), at=datetime(2026, 1, 1, tzinfo=timezone.utc))
    rec = op.Recorder()
    got = rec.tool("get_account", lambda iban: account, iban="ME-1")
    account.amount -= Decimal("5")  # a later transfer changes the live model
    out = rec.model("summarise", lambda acct: {"seen": acct}, acct=got)
    traj = rec.trajectory(Decimal("5.50"))
    assert traj.steps[0].result == {"iban": "ME-1", "amount": "10.50", "at": "2026-01-01T00:00:00Z"}
    assert traj.steps[1].args == {"acct": {"iban": "ME-1", "amount": "5.50", "at": "2026-01-01T00:00:00Z"}}
    assert traj.steps[1].content == {"seen": {"iban": "ME-1", "amount": "5.50", "at": "2026-01-01T00:00:00Z"}}
    assert out["seen"] is account and traj.answer == "5.50"


def test_a_control_replay_of_a_live_object_reproduces_the_recording() -> None:
    """A tool hands out the sandbox's own list; a later call appends to it. Recorded by reference, the control
    replay would see a shorter list than the recording and diverge."""

    class Ledger(op.RecordedAgent):
        def reset(self, state: dict[str, Any]) -> None:
            self.entries = list(state["entries"])

        def act(self, input: dict[str, Any], rec: op.Recorder) -> str:
            seen = rec.tool("list", lambda: self.entries)
            rec.tool("append", lambda value: self.entries.append(value), value=len(seen))
            return "ok"

    agent = Ledger()
    agent.reset({"entries": [0]})
    traj = agent.run({}).model_copy(update={"input": {}})
    assert traj.steps[0].result == [0]
    again = Ledger()
    again.reset({"entries": [0]})
    replayed = again.replay(traj, checkpoint=1, change=None)
    assert replayed.steps[0].result == [0] and again.entries == [0, 1]


@pytest.mark.parametrize(("value", "where"), [({"tags": {"a"}}, "tool get's result holds a set value at tags"),
                                              (b"raw", "tool get's result is a bytes value")])
def test_a_result_with_no_json_form_is_refused_naming_the_call(value: Any, where: str) -> None:
    rec = op.Recorder()
    with pytest.raises(NotJSONError, match=where):
        rec.tool("get", lambda: value)
    with pytest.raises(NotJSONError, match="tool put's arguments holds a set value at ids"):
        rec.tool("put", lambda ids: None, ids={1})


# -- effect: applied ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("effect", "takes", "stock"), [("skipped", 0, 5), ("applied", 1, 3)])
def test_an_applied_change_runs_the_call_then_replaces_its_result(effect: str, takes: int, stock: int) -> None:
    _, traj = _recorded()
    fresh = Agent()
    fresh.reset(copy.deepcopy(STATE))
    fault = fault_result("timeout", "take")
    replayed = fresh.replay(traj, checkpoint=2, change=op.Change(result=fault, effect=effect))  # type: ignore[arg-type]
    assert fresh.world.calls["take"] == takes
    assert fresh.snapshot() == {"stock": {"apple": stock}}  # applied: the take went through
    assert replayed.steps[2].result == fault and replayed.answer == "failed"  # the agent saw the fault either way


def test_an_applied_change_at_a_model_call_calls_the_model() -> None:
    _, traj = _recorded()
    fresh = Agent()
    fresh.reset(copy.deepcopy(STATE))
    replayed = fresh.replay(traj, checkpoint=0, change=op.Change(result="ask", effect="applied"))
    assert fresh.world.calls["model"] == 1 and replayed.steps[0].content == "ask"


def test_a_skipped_change_serialises_as_before_and_an_applied_one_says_so() -> None:
    # replay-cache keys of existing (skipped) changes do not move
    assert op.Change(result={"ok": False}).model_dump(mode="json") == {"result": {"ok": False}}
    assert op.Change(result=1, effect="applied").model_dump(mode="json") == {"result": 1, "effect": "applied"}
    with pytest.raises(ValueError, match=r"(?s)effect.*'skipped' or 'applied'"):
        op.Change(result=1, effect="half")  # type: ignore[arg-type]


# -- the call at the checkpoint, and what a replay hands back ---------------------------------------------------


def _two_steps() -> op.Trajectory:
    rec = op.Recorder()
    rec.tool("look", lambda: 1)
    rec.tool("pay", lambda amount: {"ok": True}, amount=5)
    return rec.trajectory("paid")


def test_a_control_replay_checks_the_call_at_its_checkpoint() -> None:
    # the control (change=None) must reproduce the recording: the call at the checkpoint runs live, and a
    # result or a tool other than the recorded one is a divergence, as it is before the checkpoint
    traj = _two_steps()
    same = op.Recorder.replaying(traj, checkpoint=1, change=None)
    same.tool("look", lambda: 1)
    assert same.tool("pay", lambda amount: {"ok": True}, amount=5) == {"ok": True}
    other_result = op.Recorder.replaying(traj, checkpoint=1, change=None)
    other_result.tool("look", lambda: 1)
    with pytest.raises(ReplayDiverged, match="step 1: pay returned"):
        other_result.tool("pay", lambda amount: {"ok": False}, amount=5)
    other_tool = op.Recorder.replaying(traj, checkpoint=1, change=None)
    other_tool.tool("look", lambda: 1)
    with pytest.raises(ReplayDiverged, match="step 1"):
        other_tool.tool("refund", lambda amount: {"ok": True}, amount=5)


def test_a_replay_that_stops_just_short_of_its_checkpoint_diverged() -> None:
    # checkpoint 1 is the second call: a replay of one call (index 0) never reached it
    traj = _two_steps()
    short = op.Recorder.replaying(traj, checkpoint=1, change=op.Change(result={"ok": False}))
    short.tool("look", lambda: 1)
    with pytest.raises(ReplayDiverged, match="ended after 1 steps, before the checkpoint"):
        short.trajectory("gave up")


def test_the_agent_gets_its_own_copy_of_the_change_result() -> None:
    # one Change serves every epoch and replay: an agent that edits the result it got must not edit the change
    change = op.Change(result={"ok": False, "detail": {"code": 1}})
    again = op.Recorder.replaying(_two_steps(), checkpoint=1, change=change)
    again.tool("look", lambda: 1)
    got = again.tool("pay", lambda amount: {"ok": True}, amount=5)
    got["detail"]["code"] = 99
    assert change.result == {"ok": False, "detail": {"code": 1}}


def test_a_trajectory_taken_is_not_changed_by_later_calls() -> None:
    rec = op.Recorder()
    rec.tool("look", lambda: 1)
    first = rec.trajectory("one")
    rec.tool("look", lambda: 2)
    assert len(first.steps) == 1 and len(rec.trajectory("two").steps) == 2


def test_a_replayed_model_call_must_be_the_recorded_model() -> None:
    rec = op.Recorder()
    rec.model("planner", lambda prompt: "go", prompt="p")
    rec.tool("look", lambda: 1)
    traj = rec.trajectory("done")
    again = op.Recorder.replaying(traj, checkpoint=1, change=op.Change(result=0))
    with pytest.raises(ReplayDiverged, match="step 0"):
        again.model("critic", lambda prompt: "go", prompt="p")  # same arguments, another model



def _flaky_tool(rec: op.Recorder, swallow: bool) -> Any:
    """A tool that records its own random draw through the recorder (the nested call a user writes first)."""
    def update() -> str:
        try:
            draw = rec.model("flake", lambda: 0.1)
        except Exception as e:  # noqa: BLE001 - a tau-bench style tool turns every exception into text
            if swallow:
                return f"Error: {e}"
            raise
        return "Error: timed out" if draw < 0.25 else "ok"
    return rec.tool("update", update)


@pytest.mark.parametrize("swallow", [False, True])
def test_a_replay_meeting_a_call_inside_another_names_both_and_the_fix(swallow: bool) -> None:
    # recorded as before (model step 0, then the tool that made it, step 1); before, the replay said
    # "step 0: the replay called update({}) where the recording has kind='message' ...", which sent the
    # user looking at the agent; a tool that turns exceptions into text must not hide the reason
    rec = op.Recorder()
    assert _flaky_tool(rec, swallow) == "Error: timed out"
    traj = rec.trajectory("done")
    assert [getattr(step, "tool", None) or step.name for step in traj.steps] == ["flake", "update"]
    control = op.Recorder.replaying(traj, checkpoint=1, change=None)
    refused = r"^model call flake was called while tool update was running: .*make it before tool update"
    with pytest.raises(ReplayDiverged, match=refused):
        _flaky_tool(control, swallow)


def test_faults_at_the_tools_before_a_call_inside_another_replay_as_usual() -> None:
    # README 1a: "faults at the tools before it replay as usual" (after their checkpoint every call runs live, the
    # nested draw too); the fault at the tool holding the draw, or a later one, is the refused one
    def agent(rec: op.Recorder) -> Any:
        rec.tool("lookup", lambda: {"ok": True})
        return _flaky_tool(rec, swallow=False), rec.tool("notify", lambda: "sent")

    rec = op.Recorder()
    assert agent(rec) == ("Error: timed out", "sent")
    traj = rec.trajectory("done")
    assert [getattr(step, "tool", None) or step.name for step in traj.steps] == ["lookup", "flake", "update", "notify"]
    for change in (None, op.Change(result=fault_result("error", "lookup"), effect="skipped")):
        again = op.Recorder.replaying(traj, checkpoint=0, change=change)
        assert agent(again) == ("Error: timed out", "sent")
        assert [getattr(step, "tool", None) or step.name for step in again.steps] == [
            "lookup", "flake", "update", "notify"]
    for checkpoint in (2, 3):  # the tool holding the draw, and the one after it
        with pytest.raises(ReplayDiverged, match=r"^model call flake was called while tool update was running: "):
            agent(op.Recorder.replaying(traj, checkpoint=checkpoint, change=None))


def test_a_draw_seeded_by_case_and_number_reproduces_in_a_control_replay_and_a_shared_generator_does_not() -> None:
    # README 1a (pinned in the docs only before): a replay returns the draws before its checkpoint from the
    # recording without calling the generator and makes the later ones live, so a generator kept by the env is at
    # another place by then and the control diverges at the first draw after the checkpoint; a draw from a
    # generator seeded by the case and the draw's number makes the same value again
    import random

    from oloproof_nb._core.faults import control_difference

    shared = random.Random(7)

    def kept(rec: op.Recorder, n: int) -> Any:
        return rec.model("flake", shared.random)

    def seeded(rec: op.Recorder, n: int) -> Any:
        return rec.model("flake", lambda key: random.Random(key).random(), key=f"ord-001#{n}")

    def agent(rec: op.Recorder, draw: Any) -> str:
        for n in range(3):  # a draw, then the flaky call it decides
            rec.tool("check_stock", lambda flaky: "Error: timed out" if flaky < 0.2 else "ok", flaky=draw(rec, n))
        return "done"

    for draw, reproduced in ((seeded, None), (kept, r"^step 4 differs: recorded model call flake -> 0\.\d+…?; "
                                                     r"replayed model call flake -> 0\.\d+")):
        rec = op.Recorder()
        traj = rec.trajectory(agent(rec, draw))
        control = op.Recorder.replaying(traj, checkpoint=3, change=None)  # the second check_stock
        again = control.trajectory(agent(control, draw))
        why = control_difference(traj, None, again, None)
        assert why is None if reproduced is None else re.match(reproduced, str(why)), why


def _flaky_tool_on_a_thread(rec: op.Recorder) -> Any:
    """The flaky tool, its draw recorded from a worker thread the tool waits for (not the tool's own thread)."""
    def update() -> str:
        with ThreadPoolExecutor(max_workers=1) as pool:
            draw = pool.submit(rec.model, "flake", lambda: 0.1).result()
        return "Error: timed out" if draw < 0.25 else "ok"
    return rec.tool("update", update)


def test_a_call_inside_a_tool_made_on_a_thread_it_waits_for_is_named_too() -> None:
    # the thread is not the tool's, so the call is not seen inside it while it runs; before, the replay said
    # "step 0: the replay called update({}) where the recording has kind='message' ...", blaming the agent
    rec = op.Recorder()
    assert _flaky_tool_on_a_thread(rec) == "Error: timed out"
    control = op.Recorder.replaying(rec.trajectory("done"), checkpoint=1, change=None)
    refused = (r"^model call flake was called while tool update was running \(on another thread\): "
               r".*make it before tool update and pass its result in$")
    with pytest.raises(ReplayDiverged, match=refused):
        _flaky_tool_on_a_thread(control)
    with pytest.raises(ReplayDiverged, match=refused):  # a later call is refused too, as for a call on the same thread
        control.tool("other", lambda: 1)


def test_a_tool_called_inside_a_model_call_is_refused_at_the_checkpoint() -> None:
    # the other way round from a draw inside a tool, a model call whose function searches
    # through rec.tool; recorded as before (the tool, step 0, then the model call), refused when the control
    # replay meets it at its checkpoint (the model call runs live there)
    def agent(rec: op.Recorder) -> Any:
        return rec.model("planner", lambda: f"plan from {rec.tool('search', lambda q: ['doc'], q='x')}")

    rec = op.Recorder()
    assert agent(rec) == "plan from ['doc']"
    traj = rec.trajectory("done")
    assert [step.tool if isinstance(step, op.ToolCall) else step.name for step in traj.steps] == ["search", "planner"]
    control = op.Recorder.replaying(traj, checkpoint=0, change=None)
    with pytest.raises(ReplayDiverged, match=r"^tool search was called while model call planner was running: "):
        agent(control)


@pytest.mark.parametrize("outer", ["tool", "model"])
def test_a_call_inside_the_applied_change_is_refused_naming_both(outer: str) -> None:
    # an applied change runs the call at the checkpoint; a recorder call made inside it there
    # (a draw the recorded call did not make) is refused naming both calls, never taken for the checkpoint's own
    # call (step 0 of the recording), even when the call turns every exception into text
    def agent(rec: op.Recorder, draw: bool) -> Any:
        def inner() -> str:
            if not draw:
                return "ok"
            try:
                return "ok" if rec.model("flake", lambda: 0.9) > 0.25 else "Error: timed out"
            except Exception as e:  # noqa: BLE001 - a tau-bench style tool turns every exception into text
                return f"Error: {e}"
        return rec.tool("update", inner) if outer == "tool" else rec.model("update", inner)

    rec = op.Recorder()
    assert agent(rec, draw=False) == "ok"
    faulted = op.Recorder.replaying(rec.trajectory("done"), checkpoint=0,
                                    change=op.Change(result="Error: lost", effect="applied"))
    what = "tool update" if outer == "tool" else "model call update"
    with pytest.raises(ReplayDiverged, match=rf"^model call flake was called while {what} was running: "):
        agent(faulted, draw=True)


def test_calls_made_at_the_same_time_from_two_threads_are_not_inside_each_other() -> None:
    # the Recorder's class notes: an agent's own threads call the recorder at the same time; two pings, each
    # on its own thread, both running at once (a barrier holds each until the other has started), are recorded
    # and replayed as two steps, never refused as one inside the other
    import threading

    def agent(rec: op.Recorder) -> list[Any]:
        both = threading.Barrier(2, timeout=5)
        out: list[Any] = []

        def ping() -> None:
            try:
                out.append(rec.tool("ping", lambda: both.wait() * 0 + 1))
            except Exception as e:  # noqa: BLE001 - shown by the assertion below, not lost in the thread
                out.append(e)
        threads = [threading.Thread(target=ping) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        return out

    rec = op.Recorder()
    assert agent(rec) == [1, 1]
    traj = rec.trajectory("done")
    control = op.Recorder.replaying(traj, checkpoint=1, change=None)
    assert agent(control) == [1, 1]
    assert control.trajectory("done").steps == traj.steps == [op.ToolCall(tool="ping", args={}, result=1)] * 2
