"""``changes`` mode aligns an ``unordered`` list (and the
elements without the key field of a ``by_key`` one) over the leaves an ``ignore:`` pattern leaves compared.

Before, an element whose ignored stamp alone changed had no equal element after the case, so the diff reported it
as removed and its other leaves as added: a case that left the list as it found it (but for the stamp the suite
ignores) failed with ``2 unexpected changes``, while ``whole`` mode, which matches elements over the leaves it
compares, passed the same state. Each expected verdict below is a hand judgement of the world, not the code's own.
"""

from __future__ import annotations

from typing import Any

from oloproof_nb._core.compare import compare_changes, compare_state
from oloproof_nb._core.lists import ListMatch, align
from oloproof_nb._core.paths import ABSENT

UNORDERED = {"l": ListMatch("unordered")}
BY_ID = {"l": ListMatch("by_key", "id")}
STAMP = ["l.*.at"]
INITIAL = {"l": [{"s": "x", "at": 1}, {"s": "y", "at": 1}]}


def _passes(initial: Any, expected: Any, actual: Any, lists: Any, ignore: list[str] = STAMP) -> bool:
    unexpected, rows = compare_changes(initial, expected, actual, lists=lists, ignore=ignore)
    return not unexpected and all(ok for *_, ok in rows)


def test_an_element_whose_ignored_stamp_alone_changed_is_no_change() -> None:
    restamped = {"l": [{"s": "x", "at": 2}, {"s": "y", "at": 1}]}
    assert compare_changes(INITIAL, {}, restamped, lists=UNORDERED, ignore=STAMP) == ([], [])
    # the same state in whole mode, with the same rules, passed before and passes now: the two modes agree
    whole = compare_state(INITIAL, restamped, "whole", lists=UNORDERED, ignore=STAMP)
    assert all(ok for *_, ok in whole)


def test_reordered_and_restamped_elements_are_the_elements_kept() -> None:
    after = {"l": [{"s": "y", "at": 7}, {"s": "x", "at": 8}]}
    assert _passes(INITIAL, {}, after, UNORDERED)


def test_a_restamped_element_without_the_key_field_of_a_by_key_list_is_kept() -> None:
    initial = {"l": [{"s": "x", "at": 1}, {"id": 1, "s": "k", "at": 1}]}
    after = {"l": [{"id": 1, "s": "k", "at": 5}, {"s": "x", "at": 2}]}
    assert _passes(initial, {}, after, BY_ID)


def test_an_ignored_element_of_a_list_inside_an_element_is_read_as_a_placeholder() -> None:
    initial = {"l": [{"s": "x", "log": [1, 2]}]}
    assert _passes(initial, {}, {"l": [{"s": "x", "log": [1, 3]}]}, UNORDERED, ["l.*.log.1"])
    assert not _passes(initial, {}, {"l": [{"s": "x", "log": [4, 2]}]}, UNORDERED, ["l.*.log.1"])


def test_a_wrong_world_beside_a_restamp_still_fails() -> None:
    # a compared leaf edited: the element is another one (an unordered list has no identity for an edit)
    edited = {"l": [{"s": "x", "at": 2}, {"s": "z", "at": 3}]}
    unexpected, _ = compare_changes(INITIAL, {}, edited, lists=UNORDERED, ignore=STAMP)
    assert [path for path, *_ in unexpected] == ["l.<unmatched 1>", "l.1.s"]
    # an element removed
    unexpected, _ = compare_changes(INITIAL, {}, {"l": [{"s": "x", "at": 2}]}, lists=UNORDERED, ignore=STAMP)
    assert unexpected == [("l.<unmatched 1>", {"s": "y", "at": 1}, ABSENT, False)]
    # an equal element added beside a restamped one: one of the two is new
    initial = {"l": [{"s": "x", "at": 1}]}
    unexpected, _ = compare_changes(initial, {}, {"l": [{"s": "x", "at": 2}, {"s": "x", "at": 1}]},
                                    lists=UNORDERED, ignore=STAMP)
    assert [path for path, *_ in unexpected] == ["l.0.s"]


def test_an_expected_element_is_not_met_by_a_restamped_one_the_list_held_before() -> None:
    # the case expects an element {"s": "x"} added; the agent added nothing and the sandbox restamped the old one:
    # the restamped element is the one the list held (not one the case added), so the expected one is not added
    idle = {"l": [{"s": "x", "at": 2}, {"s": "y", "at": 2}]}
    unexpected, rows = compare_changes(INITIAL, {"l": [{"s": "x"}]}, idle, lists=UNORDERED, ignore=STAMP)
    assert unexpected == []
    assert rows == [("l.<not added 0>", {"s": "x"}, ABSENT, False)]
    # and one the agent did add meets it
    added = {"l": [*idle["l"], {"s": "x", "at": 3}]}
    assert _passes(INITIAL, {"l": [{"s": "x"}]}, added, UNORDERED)


def test_align_meets_equal_elements_first_then_by_the_view() -> None:
    def stampless(side: int, index: int, element: Any) -> Any:
        return {k: v for k, v in element.items() if k != "at"}

    before = [{"s": "x", "at": 1}, {"s": "x", "at": 2}]
    after = [{"s": "x", "at": 3}, {"s": "x", "at": 1}]
    # the equal element meets its twin (index 1 after), the restamped one what is left
    assert align(before, after, stampless) == {0: 1, 1: 0}
    assert align(before, after) == {0: 1}
