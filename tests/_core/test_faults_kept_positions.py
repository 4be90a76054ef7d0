"""A kept path is spread to every position only in a list the rules align: in a list kept in its order, the
element at a kept position is the one a check reads, and an ignored stamp at another position stays ignored."""

from __future__ import annotations

import pytest

from oloproof_nb._core.faults import control_difference
from oloproof_nb._core.lists import ListMatch
from oloproof_nb._core.trajectory import Trajectory

T = Trajectory(steps=[], answer="ok")
RECORDED = {"tags": ["a", "b"], "log": [{"at": 1}, {"at": 1}]}
# the unordered tags came back swapped (so the lists are aligned); the second log entry's stamp differs
REPLAYED = {"tags": ["b", "a"], "log": [{"at": 1}, {"at": 2}]}


@pytest.mark.parametrize("rules", [
    {"tags": ListMatch("unordered"), "log": ListMatch("ordered")},  # the log is kept in its order
    {"tags": ListMatch("unordered")},  # no rule for the log: ordered too
])
def test_a_kept_position_of_an_ordered_list_is_not_spread(rules: dict[str, ListMatch]) -> None:
    # log.0.at is judged and reproduced; log.1.at is ignored and judged by no check: the control reproduces
    assert control_difference(T, RECORDED, T, REPLAYED, ["**.at"], ["log.0.at"], rules) is None
    # the judged stamp itself differs: a divergence
    moved = {"tags": ["b", "a"], "log": [{"at": 2}, {"at": 1}]}
    said = control_difference(T, RECORDED, T, moved, ["**.at"], ["log.0.at"], rules)
    assert said is not None and said.startswith("state differs")


def test_a_kept_position_of_an_aligned_list_is_kept_at_every_position() -> None:
    # the same stamps in an unordered list: its elements may have moved, so every position's stamp is kept
    rules = {"tags": ListMatch("unordered"), "log": ListMatch("unordered")}
    said = control_difference(T, RECORDED, T, REPLAYED, ["**.at"], ["log.0.at"], rules)
    assert said is not None and said.startswith("state differs")


def test_a_kept_key_that_is_no_position_names_no_element() -> None:
    # "log.at" reads a field of the list itself, which a list does not have: it keeps no element's stamp
    rules = {"tags": ListMatch("unordered"), "log": ListMatch("unordered")}
    recorded, replayed = {"tags": ["a", "b"], "log": [{"at": 1}]}, {"tags": ["b", "a"], "log": [{"at": 2}]}
    assert control_difference(T, recorded, T, replayed, ["**.at"], ["log.at"], rules) is None
    said = control_difference(T, recorded, T, replayed, ["**.at"], ["log.0.at"], rules)
    assert said is not None and said.startswith("state differs")
