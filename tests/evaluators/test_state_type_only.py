"""A state check that fails on values differing in JSON type only says so, and what to write.

An example: a banking benchmark's tasks hold float balances (``"balance": 0.0``) and its sandbox keeps them as
``Decimal``, which a snapshot stores as text (``"0.0"``). With ``initial_state`` copied from the tasks, every case
failed ``state_matches`` with ``7 unexpected changes: accounts.A1.account_id, accounts.A2.account_id,
accounts.A3.balance and 4 more``, and ``run.comparisons`` showed ``0.0`` expected and ``0.0`` actual: nothing
pointed at the round trip README section 1 asks for.
"""

from __future__ import annotations

from typing import Any

import pytest

from oloproof_nb.evaluators import StateMatches

HINT = "write initial_state and expected.state as snapshot() gives them (README section 1)"


def _reason(mode: str, expected: dict[str, Any], state: dict[str, Any], initial: dict[str, Any]) -> str:
    ev = StateMatches(type="state_matches", mode=mode)  # type: ignore[arg-type]
    verdict = ev.judge(expected, state, "0", initial=initial).verdicts[0]
    assert verdict["verdict"] == "fail"
    return str(verdict["reason"])


def test_changes_mode_names_a_number_that_came_back_as_text() -> None:
    initial = {"accounts": {"A1": {"balance": 500.0}, "A3": {"balance": 0.0}}}
    state = {"accounts": {"A1": {"balance": "450.0"}, "A3": {"balance": "0.0"}}}
    assert _reason("changes", {"accounts": {"A1": {"balance": 450.0}}}, state, initial) == (
        "1 unexpected change: accounts.A3.balance; 1 of 1 expected paths differ: accounts.A1.balance; 2 of them "
        "differ in type only (accounts.A3.balance: the number 0.0 in the case file, the text '0.0' in the state): "
        + HINT)


@pytest.mark.parametrize(("want", "got", "shown"), [
    (20000, "20000", "the number 20000 in the case file, the text '20000' in the state"),
    (False, 0, "the boolean false in the case file, the number 0 in the state"),
    ("7", 7, "the text '7' in the case file, the number 7 in the state"),
    (False, 0.0, "the boolean false in the case file, the number 0.0 in the state"),  # 0.0 is 0
])
def test_subset_mode_names_each_kind_of_type_only_difference(want: Any, got: Any, shown: str) -> None:
    assert _reason("subset", {"n": want}, {"n": got}, {}) == (
        f"1 of 1 paths differ: n; 1 of them differ in type only (n: {shown}): " + HINT)


@pytest.mark.parametrize(("want", "got"), [(0.0, "0.5"), (True, 2), ("x", "y"), (1, "one"),
                                           (True, "1")])  # a boolean is no number: "1" is not its text
def test_a_real_difference_gets_no_note(want: Any, got: Any) -> None:
    assert _reason("subset", {"n": want}, {"n": got}, {}) == "1 of 1 paths differ: n"


@pytest.mark.parametrize(("want", "got"), [(1000, "1_000"), ("1_000", 1000), (1000, " 1000"), (7, "7\n"),
                                           (1000, "\u0661\u0660\u0660\u0660")])
def test_a_text_that_float_reads_but_no_snapshot_writes_for_the_number_gets_no_note(want: Any, got: Any) -> None:
    """``float()`` reads "1_000" (PEP 515), text with spaces around it and the digits of other scripts as the
    number; none of them is how a snapshot writes a number as text, so the two differ in more than their type."""
    assert _reason("subset", {"n": want}, {"n": got}, {}) == "1 of 1 paths differ: n"


def test_the_note_counts_the_differing_values_that_differ_in_type_only() -> None:
    """Of two paths that differ, ``a`` in type only (1 and "1") and ``b`` in value (2 and 3):
    1 of them, by hand, not 2."""
    assert _reason("subset", {"a": 1, "b": 2}, {"a": "1", "b": 3}, {}) == (
        "2 of 2 paths differ: a, b; 1 of them differ in type only (a: the number 1 in the case file, the text '1' "
        "in the state): " + HINT)
