"""A control replay whose ``unordered`` list came back in another order, an element's log holding one more
entry under an ``ignore:`` pattern, reproduces the recording (a check reads no leaf that changed); it was
``control_replay_diverged``, the ignored entries being read as placeholders whose count differed."""

from __future__ import annotations

from oloproof_nb._core.faults import control_difference
from oloproof_nb._core.lists import ListMatch
from oloproof_nb._core.trajectory import ToolCall, Trajectory

TRAJECTORY = Trajectory(steps=[ToolCall(tool="t", result=1)], answer="ok")
UNORDERED = {"x": ListMatch("unordered")}
RECORDED = {"x": [{"s": 1, "log": ["a"]}, {"s": 2, "log": []}]}


def test_an_ignored_log_entry_in_a_moved_element_reproduces() -> None:
    replayed = {"x": [{"s": 2, "log": []}, {"s": 1, "log": ["a", "b"]}]}
    assert control_difference(TRAJECTORY, RECORDED, TRAJECTORY, replayed, ["x.*.log.*"], lists=UNORDERED) is None
