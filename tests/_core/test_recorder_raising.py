"""The Recorder and a tool that raises: the call is a step with :func:`raised_result` as its result,
the agent gets the exception itself, and a replay must raise an exception of the same class again."""

from __future__ import annotations

from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._core.jsonsafe import NotJSONError
from oloproof_nb._core.recorder import Recorder, ReplayDiverged, raised_result
from oloproof_nb._core.trajectory import ToolErrorRule


class Refused(Exception):
    pass


class Other(Exception):
    pass


def _cancel(orders: dict[str, str]) -> Any:
    def cancel(order_id: str) -> dict[str, bool]:
        if orders[order_id] != "pending":
            raise Refused(f"{order_id} is {orders[order_id]}")
        orders[order_id] = "cancelled"
        return {"ok": True}
    return cancel


def _act(rec: Recorder, orders: dict[str, str]) -> list[Any]:
    """An agent that cancels o1 then o2, catching a refusal: what each call gave it (a result, or the exception)."""
    seen: list[Any] = []
    for order in ("o1", "o2"):
        try:
            seen.append(rec.tool("cancel", _cancel(orders), order_id=order))
        except Refused as exc:
            seen.append(exc)
    return seen


def _recorded(orders: dict[str, str]) -> tuple[op.Trajectory, list[Any]]:
    rec = Recorder()
    seen = _act(rec, dict(orders))
    return rec.trajectory("done"), seen


def test_a_raising_call_is_recorded_and_its_exception_raised_again() -> None:
    traj, seen = _recorded({"o1": "delivered", "o2": "pending"})
    assert isinstance(seen[0], Refused) and str(seen[0]) == "o1 is delivered" and seen[1] == {"ok": True}
    assert [s.result for s in traj.steps] == [
        {"ok": False, "error": "Refused: o1 is delivered", "raised": "Refused"}, {"ok": True}]
    assert ToolErrorRule().is_error(traj.steps[0].result) and not ToolErrorRule().is_error(traj.steps[1].result)


def test_the_exception_the_agent_gets_is_the_tools_own_object() -> None:
    error = Refused("kept")
    rec = Recorder()

    def refuse() -> None:
        raise error

    with pytest.raises(Refused) as caught:
        rec.tool("refuse", refuse)
    assert caught.value is error and len(rec.steps) == 1


def test_raised_result_names_the_class_and_the_first_line() -> None:
    assert raised_result(KeyError("ord-9")) == {"ok": False, "error": "KeyError: 'ord-9'", "raised": "KeyError"}
    assert raised_result(Refused("one\ntwo")) == {"ok": False, "error": "Refused: one", "raised": "Refused"}
    assert raised_result(Other()) == {"ok": False, "error": "Other", "raised": "Other"}


@pytest.mark.parametrize("checkpoint", [0, 1])
def test_a_control_replay_raises_again_and_reproduces_the_recording(checkpoint: int) -> None:
    state = {"o1": "delivered", "o2": "pending"}
    traj, _ = _recorded(state)
    rec = Recorder.replaying(traj, checkpoint=checkpoint, change=None)
    seen = _act(rec, dict(state))
    assert isinstance(seen[0], Refused) and seen[1] == {"ok": True}
    assert rec.steps == traj.steps


def test_the_text_of_a_raise_is_not_compared_replaying() -> None:
    calls = iter(["at 10:00:01", "at 10:00:02"])

    def busy() -> None:
        raise Refused(f"busy {next(calls)}")

    rec = Recorder()
    with pytest.raises(Refused):
        rec.tool("busy", busy)
    again = Recorder.replaying(rec.trajectory(None), checkpoint=0, change=None)
    with pytest.raises(Refused, match="10:00:02"):
        again.tool("busy", busy)
    assert again.steps[0].result["error"] == "Refused: busy at 10:00:02"


@pytest.mark.parametrize(("recorded_state", "replayed_state", "said"), [
    ({"o1": "delivered"}, {"o1": "pending"}, r"step 0: cancel returned \{'ok': True\}, recorded \{'ok': False"),
    ({"o1": "pending"}, {"o1": "delivered"}, r"step 0: cancel raised 'Refused: o1 is delivered', recorded "
                                             r"\{'ok': True\}"),
])
def test_a_replay_that_raises_where_the_recording_returned_or_back_diverges(recorded_state: dict[str, str],
                                                                          replayed_state: dict[str, str],
                                                                          said: str) -> None:
    rec = Recorder()
    try:
        rec.tool("cancel", _cancel(dict(recorded_state)), order_id="o1")
    except Refused:
        pass
    again = Recorder.replaying(rec.trajectory(None), checkpoint=0, change=None)
    with pytest.raises(ReplayDiverged, match=said):
        again.tool("cancel", _cancel(dict(replayed_state)), order_id="o1")


def test_another_exception_class_diverges() -> None:
    rec = Recorder()
    with pytest.raises(Refused):
        rec.tool("t", lambda: (_ for _ in ()).throw(Refused("x")))
    again = Recorder.replaying(rec.trajectory(None), checkpoint=0, change=None)
    with pytest.raises(ReplayDiverged, match="raised 'Other: x'"):
        again.tool("t", lambda: (_ for _ in ()).throw(Other("x")))


def test_a_returned_dict_that_looks_like_a_raise_is_not_one() -> None:
    """A tool that returned ``raised_result``'s shape did not raise: replaying, raising there diverges."""
    rec = Recorder()
    rec.tool("t", lambda: {"ok": False, "error": "Refused: x", "raised": "Refused"})
    again = Recorder.replaying(rec.trajectory(None), checkpoint=0, change=None)
    assert again.tool("t", lambda: {"ok": False, "error": "Refused: x", "raised": "Refused"})["raised"] == "Refused"
    third = Recorder.replaying(rec.trajectory(None), checkpoint=0, change=None)
    with pytest.raises(Refused):  # same class as the recorded dict names: read as the same raise
        third.tool("t", lambda: (_ for _ in ()).throw(Refused("x")))


def test_a_fault_at_a_raising_call_hands_the_agent_the_change() -> None:
    state = {"o1": "delivered", "o2": "pending"}
    traj, _ = _recorded(state)
    rec = Recorder.replaying(traj, checkpoint=0, change=op.Change(result={"ok": False, "error": "timeout"}))
    seen = _act(rec, dict(state))
    assert seen == [{"ok": False, "error": "timeout"}, {"ok": True}]
    assert rec.steps[0].result == {"ok": False, "error": "timeout"}


def test_an_applied_change_runs_the_call_and_drops_what_it_raised() -> None:
    ran: list[str] = []

    def refuse(order_id: str) -> None:
        ran.append(order_id)
        raise Refused(order_id)

    rec = Recorder()
    with pytest.raises(Refused):
        rec.tool("cancel", refuse, order_id="o1")
    again = Recorder.replaying(rec.trajectory(None), checkpoint=0,
                               change=op.Change(result={"ok": True}, effect="applied"))
    assert again.tool("cancel", refuse, order_id="o1") == {"ok": True}
    assert ran == ["o1", "o1"]


@pytest.mark.parametrize("error", [ReplayDiverged("inner"), NotJSONError("a result", "x", "set", "use a list"),
                                   op.OloproofError("own"), KeyboardInterrupt(), SystemExit(3)])
def test_the_recorders_own_errors_and_base_exceptions_pass_unrecorded(error: BaseException) -> None:
    rec = Recorder()

    def raise_it() -> None:
        raise error

    with pytest.raises(type(error)):
        rec.tool("t", raise_it)
    assert rec.steps == []


def test_a_refusal_inside_a_tool_turned_into_its_own_exception_is_still_a_divergence() -> None:
    """Replaying, a call made inside a tool is refused; a tool that catches the refusal and raises its own
    exception must not be recorded as a tool that raised."""
    def outer_tool(rec: Recorder) -> Any:
        def run() -> Any:
            try:
                return rec.model("draw", lambda: 4)
            except ReplayDiverged as exc:
                raise Other("wrapped") from exc
        return run

    rec = Recorder()
    rec.tool("outer", outer_tool(rec))
    again = Recorder.replaying(rec.trajectory(None), checkpoint=1, change=None)
    with pytest.raises(ReplayDiverged, match="model call draw was called while tool outer was running"):
        again.tool("outer", outer_tool(again))
