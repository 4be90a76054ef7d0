"""A control replay whose ``unordered`` list came back in another order, each element with a new stamp
under an ``ignore:`` pattern, reproduces the recording (before, it was ``control_replay_diverged``: position by
position the elements differ, and aligned they had no equal counterpart, the stamp being part of the text)."""

from __future__ import annotations

from oloproof_nb._core.faults import control_difference
from oloproof_nb._core.lists import ListMatch
from oloproof_nb._core.trajectory import ToolCall, Trajectory

TRAJECTORY = Trajectory(steps=[ToolCall(tool="t", result=1)], answer="ok")
UNORDERED = {"x": ListMatch("unordered")}
RECORDED = {"x": [{"s": 1, "at": 1}, {"s": 2, "at": 1}]}


def test_a_reordered_and_restamped_list_reproduces() -> None:
    replayed = {"x": [{"s": 2, "at": 5}, {"s": 1, "at": 6}]}
    assert control_difference(TRAJECTORY, RECORDED, TRAJECTORY, replayed, ["x.*.at"], lists=UNORDERED) is None


def test_a_reordered_list_with_an_element_changed_still_diverges() -> None:
    replayed = {"x": [{"s": 2, "at": 5}, {"s": 3, "at": 6}]}
    assert control_difference(TRAJECTORY, RECORDED, TRAJECTORY, replayed, ["x.*.at"], lists=UNORDERED) \
        == "state differs at x.0.s"


def test_a_stamp_another_check_judges_must_still_reproduce() -> None:
    replayed = {"x": [{"s": 2, "at": 5}, {"s": 1, "at": 6}]}
    assert control_difference(TRAJECTORY, RECORDED, TRAJECTORY, replayed, ["x.*.at"], keep=["x.0.at"],
                              lists=UNORDERED) is not None
