"""A ``same_state`` pair whose two cases left an ``unordered`` list in other orders, each element with
its own stamp under an ``ignore:`` pattern, holds (before, the stamp kept the aligned elements apart: it broke)."""

from __future__ import annotations

from typing import Any

from oloproof_nb._core.lists import ListMatch
from oloproof_nb._core.pairs import compare_pair

INITIAL = {"notes": []}


def _record(cid: str, final: dict[str, Any], transform: str | None = None) -> dict[str, Any]:
    return {"case": {"id": cid, "source_id": "c1", "transform": transform, "initial_state": INITIAL},
            "status": "completed", "trajectory": {"steps": [], "answer": "done"},
            "environment_state": {"state": final}}


def _pair(source_final: dict[str, Any], copy_final: dict[str, Any]) -> tuple[bool | None, str]:
    return compare_pair("same_state", _record("c1", source_final), _record("c1~inj", copy_final, "inj"),
                        ignore=["notes.*.at"], lists={"notes": ListMatch("unordered")})


def test_lists_in_other_orders_with_other_stamps_hold_the_pair() -> None:
    source = {"notes": [{"text": "a", "at": 1}, {"text": "b", "at": 2}]}
    copy = {"notes": [{"text": "b", "at": 7}, {"text": "a", "at": 8}]}
    assert _pair(source, copy) == (True, "")


def test_an_element_the_copy_wrote_otherwise_breaks_the_pair() -> None:
    source = {"notes": [{"text": "a", "at": 1}, {"text": "b", "at": 2}]}
    copy = {"notes": [{"text": "b", "at": 7}, {"text": "PAID", "at": 8}]}
    assert _pair(source, copy)[0] is False
