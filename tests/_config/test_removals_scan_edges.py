"""The removal scan (:mod:`oloproof_nb._config.removals`, :func:`~oloproof_nb._core.compare.unheld_removals`) at
its edges: each test kills a mutant the look-alike tests let live (named in its
docstring); expectations are hand counts, the idle desk's own verdict, or the standard library.

Two findings are fixed here: a ``by_key`` list holding one key value twice paired the second expected element with
the first held one (the check pairs the n-th with the n-th), and keys whose letter-case folding changes their length
(``"ß"`` folds to ``"ss"``) were dropped before the letter-case rule looked at them.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from _removal_suites import GONE, removal_suite, state_case

import oloproof_nb as op
from oloproof_nb._config.removals import _one_edit, look_alike
from oloproof_nb._core.compare import unheld_removals
from oloproof_nb._core.lists import ListMatch
from oloproof_nb.evaluators import StateMatches

BY_SKU = {"cart": ListMatch("by_key", "sku")}
CASE = "differs only in letter case from"
EDIT = "is one character apart from"


def _warnings(folder: Path) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        op.load_suite(folder)
    return [str(w.message) for w in caught if "removal(s)" in str(w.message)]


def _idle(check: StateMatches, initial: dict[str, Any], expected: dict[str, Any]) -> str:
    """The verdict of a desk that does nothing (it leaves ``initial``)."""
    return str(check.judge(expected, initial, "c1", initial=initial).verdicts[0]["verdict"])


# -- look_alike: which held key is named, and how --------------------------------------------------------------

def test_the_closest_look_alike_is_named_wherever_it_sits_and_the_first_of_equals() -> None:
    """Ranking mutants (ties: last wins; loosest wins; first found wins; an edit or letter case ranked otherwise).
    Hand ranks: number text 0, letter case 1, one edit 2."""
    assert look_alike("ord-7", ["ord-8", "ORD-7"]) == ("ORD-7", CASE)
    assert look_alike("ord-7", ["ORD-7", "ord-8"]) == ("ORD-7", CASE)
    assert look_alike("1007", ["1008", 1007]) == (1007, "is the text of the number")
    assert look_alike("ord-8", ["ord-7", "ord-9"]) == ("ord-7", EDIT)  # two at one edit: the first held
    assert look_alike(1007, ["1007"]) == ("1007", "is the number of the text")


def test_a_key_that_reads_as_a_held_one_is_refused_even_beside_a_closer_ranked_number() -> None:
    """Mutant: "reads as" ranked with the others instead of returned (a number-text match listed first won)."""
    assert look_alike("7", [7, "7 "]) == ("7 ", "reads as")
    assert look_alike(" B", ["B"]) == ("B", "reads as")  # a space before the key too (mutant: rstrip only)


def test_the_kind_of_edit_is_named_as_it_is() -> None:
    """Mutants: an insertion labelled a swap; one edit counted before letter case is folded."""
    assert look_alike("ord-79", ["ord-7"]) == ("ord-7", EDIT)  # one inserted
    assert look_alike("ord-7", ["ord-79"]) == ("ord-79", EDIT)  # one dropped
    assert look_alike("ORD-8", ["ord-7"]) == ("ord-7", EDIT)  # letter case and one replaced
    assert _one_edit("abc", "abc") == "" and _one_edit("", "") == ""  # equal: no edit (the docstring's promise)


def test_both_keys_need_three_characters_for_the_one_edit_rule() -> None:
    """Mutant: the longer of the two, not the shorter, had to be 3 characters long (``o7`` / ``o78``)."""
    assert look_alike("o78", ["o7"]) is None and look_alike("o7", ["o78"]) is None
    assert look_alike("o-78", ["o-7"]) == ("o-7", EDIT)


def test_a_key_value_that_is_no_string_is_read_as_its_json_with_sorted_keys_and_its_own_characters() -> None:
    """Mutants: ``ensure_ascii`` (``é`` written ``\\u00e9``, six characters) and unsorted keys. The texts, by
    :func:`json.dumps`: ``["é-1"]`` and ``["e-1"]`` one replaced; ``{"a": 1, "b": 2}`` and ``{"a": 1, "b": 1}``."""
    assert look_alike(["é-1"], [["e-1"]]) == (["e-1"], EDIT)
    assert look_alike({"b": 2, "a": 1}, [{"a": 1, "b": 1}]) == ({"a": 1, "b": 1}, EDIT)


def test_letter_case_is_found_where_folding_changes_the_length() -> None:
    """Fixed: ``"GROSSSTRASSE"`` (12 characters) and ``"Großstraße"`` (10) fold to one text (:meth:`str.casefold`),
    but the length look dropped the pair before the letter-case rule saw it."""
    assert "GROSSSTRASSE".casefold() == "Großstraße".casefold()
    assert look_alike("GROSSSTRASSE", ["Großstraße"]) == ("Großstraße", CASE)
    assert look_alike("ord-7", ["ord-789"]) is None  # two apart, all ASCII: still dropped at one look


# -- unheld_removals: what is walked ---------------------------------------------------------------------------

def test_findings_come_in_the_order_expected_state_is_written() -> None:
    """Mutant: the walk taken last-in first-out (refunds before orders)."""
    initial = {"orders": {"ord-7": {}}, "refunds": {"r-1": {}}}
    expected = {"orders": {"ord-8": GONE}, "refunds": {"r-2": GONE}}
    assert [f[0] for f in unheld_removals(initial, expected)] == [("orders", "ord-8"), ("refunds", "r-2")]


def test_a_removal_below_a_scalar_a_dict_read_as_a_list_or_past_a_list_s_end_is_no_finding() -> None:
    """Mutants: a removal under a held scalar (``for k in 5``: TypeError), an expected list over a held dict
    (``before[0]`` of a dict: KeyError), an expected list longer than the held one (IndexError)."""
    assert list(unheld_removals({"n": 5}, {"n": {"x": GONE}})) == []
    assert list(unheld_removals({"cart": {"a": 1}}, {"cart": [{"x": GONE}]})) == []
    assert list(unheld_removals({"cart": [{"a": 1}]}, {"cart": [{"a": 1}, {"x": GONE}]})) == []


def test_only_values_that_ask_for_nothing_but_removals_are_removals() -> None:
    """Mutants: an empty dict, or a dict of a value and a removal, counted as a removal. Both fail an idle desk
    (its verdicts below), so neither is vacuous."""
    initial = {"orders": {"ord-7": {}}, "log": {"e-1": 1}}
    for value in ({}, {"status": "open", "note": GONE}):
        expected = {"orders": {"ord-8": value}, "log": {"e-1": GONE}}
        assert _idle(StateMatches(type="state_matches"), initial, {"orders": {"ord-8": value}}) == "fail"
        assert list(unheld_removals(initial, expected)) == []
    assert list(unheld_removals(initial, {"orders": {"ord-8": {"note": GONE}}})) == \
        [(("orders", "ord-8"), None, "ord-8", ["ord-7"])]


def test_the_python_absent_marker_is_a_removal_too() -> None:
    """Mutant: :data:`~oloproof_nb.ABSENT` (``op.ABSENT``, the Python form) not seen as asking for a removal."""
    assert list(unheld_removals({"o": {"ord-7": {}}}, {"o": {"ord-8": op.ABSENT}})) == \
        [(("o", "ord-8"), None, "ord-8", ["ord-7"])]


def test_an_ignore_pattern_at_the_removal_or_over_a_by_key_list_leaves_it_out() -> None:
    """Mutants: the ignore look dropped where a removal is yielded, or where a value is followed (a ``by_key``
    removal below it was then found). In changes mode the idle desk passes even the right spelling there (the
    pattern hides it), so naming the typo would be noise."""
    initial = {"orders": {"ord-7": {"gift": 1}}}
    changes = StateMatches(type="state_matches", mode="changes", ignore=["**.gift"])
    assert _idle(changes, initial, {"orders": {"ord-7": {"gift": GONE}}}) == "pass"
    assert list(unheld_removals(initial, {"orders": {"ord-7": {"gfit": GONE}}}, ignore=["**.gfit"])) == []
    cart = {"cart": [{"sku": "B", "parts": [{"pid": "P-1"}]}]}
    rules = {"cart": ListMatch("by_key", "sku"), "cart.*.parts": ListMatch("by_key", "pid")}
    ignored = StateMatches(type="state_matches", mode="changes", ignore=["cart"], lists={"cart": {"by_key": "sku"}})
    assert _idle(ignored, cart, {"cart": [{"sku": "B", "$absent": True}]}) == "pass"
    assert list(unheld_removals(cart, {"cart": [{"sku": "B ", "$absent": True}]}, lists=BY_SKU,
                                ignore=["cart"])) == []
    assert list(unheld_removals(cart, {"cart": [{"sku": "B", "parts": [{"pid": "P-1 ", "$absent": True}]}]},
                                lists=rules, ignore=["cart.*"])) == []
    # the same removal outside the pattern is found (the walk reaches it)
    assert [f[0] for f in unheld_removals(cart, {"cart": [{"sku": "B", "parts": [{"pid": "P-1 ", "$absent": True}]}]},
                                          lists=rules)] == [("cart", "0", "parts", "<pid=P-1 >")]


def test_a_by_key_element_that_is_no_removal_is_no_finding() -> None:
    """Mutant: every expected element whose key value is not held taken for a removal (``SKU-C``, to be added,
    beside the held ``SKU-D``)."""
    initial = {"cart": [{"sku": "SKU-B"}, {"sku": "SKU-D"}]}
    expected = {"cart": [{"sku": "SKU-C", "qty": 1}, {"sku": "SKU-B", "$absent": True}]}
    assert list(unheld_removals(initial, expected, lists=BY_SKU)) == []


def test_a_by_key_value_is_held_as_the_comparison_reads_it_1_0_is_1() -> None:
    """Mutant: key values told apart by :func:`json.dumps` (``1.0`` is not ``1``); the check pairs them (its
    verdict on the right spelling below), so the typo inside is found."""
    initial = {"cart": [{"sku": 1, "opts": {"gift": 1}}]}
    check = StateMatches(type="state_matches", lists={"cart": {"by_key": "sku"}})
    assert _idle(check, initial, {"cart": [{"sku": 1.0, "opts": {"gift": GONE}}]}) == "fail"
    assert list(unheld_removals(initial, {"cart": [{"sku": 1.0, "opts": {"gfit": GONE}}]}, lists=BY_SKU)) == \
        [(("cart", "0", "opts", "gfit"), None, "gfit", ["gift"])]


def test_a_key_value_held_twice_is_followed_as_the_check_pairs_it_the_nth_with_the_nth() -> None:
    """Fixed: the second expected ``A`` was followed into the first held ``A``. The check pairs it with the second
    (its verdicts below: the right spelling fails at ``cart.1``), so ``wrpa`` is a typo of ``wrap`` there; and a
    removal of ``gfit`` that the second ``A`` holds is a real one, not a typo of the first's ``gift``."""
    initial = {"cart": [{"sku": "A", "opts": {"gift": 1}}, {"sku": "A", "opts": {"wrap": 1}}]}
    check = StateMatches(type="state_matches", lists={"cart": {"by_key": "sku"}})
    right = check.judge({"cart": [{"sku": "A"}, {"sku": "A", "opts": {"wrap": GONE}}]}, initial, "c1",
                        initial=initial).verdicts[0]
    assert right["verdict"] == "fail" and "cart.1.opts.wrap" in right["reason"]
    typo = {"cart": [{"sku": "A"}, {"sku": "A", "opts": {"wrpa": GONE}}]}
    assert _idle(check, initial, typo) == "pass"
    assert list(unheld_removals(initial, typo, lists=BY_SKU)) == [(("cart", "1", "opts", "wrpa"), None, "wrpa",
                                                                   ["wrap"])]
    assert list(unheld_removals(initial, {"cart": [{"sku": "A", "opts": {"gfit": GONE}}]}, lists=BY_SKU)) == \
        [(("cart", "0", "opts", "gfit"), None, "gfit", ["gift"])]  # the first meets the first
    three = {"cart": [{"sku": "A"}, {"sku": "A"}, {"sku": "A", "opts": {"wrpa": GONE}}]}  # a third meets none
    assert list(unheld_removals(initial, three, lists=BY_SKU)) == []
    held = {"cart": [{"sku": "A", "opts": {"gift": 1}}, {"sku": "A", "opts": {"gfit": 1}}]}
    assert list(unheld_removals(held, {"cart": [{"sku": "A"}, {"sku": "A", "opts": {"gfit": GONE}}]},
                                lists=BY_SKU)) == []


# -- RemovalScan at load_suite ---------------------------------------------------------------------------------

def test_each_check_is_read_by_its_own_rules_and_a_removal_two_checks_find_is_counted_once(tmp_path: Path) -> None:
    """Mutants: one reading for every check (the first check's list rules read the second's cart); no
    per-case de-duplication (two readings of ``ord-8``: 2 removals); only the first check of a reading named."""
    cart = [state_case({"cart": [{"sku": "B"}]}, {"cart": [{"sku": "B ", "$absent": True}]})]
    with pytest.raises(op.CaseFileError, match="reads as 'B'"):
        op.load_suite(removal_suite(tmp_path / "a", cart, "{type: state_matches, criterion: plain}",
                                          "{type: state_matches, criterion: keyed, lists: {cart: {by_key: sku}}}",
                                          release=None))
    orders = [state_case({"orders": {"ord-7": {}}, "log": {}}, {"orders": {"ord-8": GONE}})]
    checks = ["{type: state_matches, criterion: one}",
              "{type: state_matches, criterion: two, mode: changes, ignore: [log]}",
              "{type: state_matches, criterion: three}"]
    [message] = _warnings(removal_suite(tmp_path / "b", orders, *checks, release=None))
    assert "1 removal(s)" in message and "passes such a removal in one, three, two" in message


def test_a_paths_entry_below_the_removal_is_read_as_asking_for_it(tmp_path: Path) -> None:
    """Mutant: only a path equal to the removal read. ``paths: [orders.ord-8.status]`` is absent when ``ord-8``
    is: the idle desk passes (its verdict), so the typo is named."""
    initial, expected = {"orders": {"ord-7": {"status": "open"}}}, {"orders": {"ord-8": GONE}}
    check = StateMatches(type="state_matches", mode="paths", paths=["orders.ord-8.status"])
    assert _idle(check, initial, expected) == "pass"
    held = state_case({"orders": {"ord-8": {"status": "open"}}}, {"orders": {"ord-8": GONE}})
    [message] = _warnings(removal_suite(tmp_path / "s", [state_case(initial, expected), held],
                                        "{type: state_matches, mode: paths, paths: [orders.ord-8.status]}"))
    assert "1 removal(s)" in message and "line 1, case 'c1': orders.ord-8 (its key 'ord-8'" in message


def test_five_findings_are_all_shown_with_no_more_to_count(tmp_path: Path) -> None:
    """Mutant: "; and 0 more" when every finding is shown (5 of 5, a hand count)."""
    cases = [state_case({"orders": {f"ord-{i}7": {}}}, {"orders": {f"ord-{i}8": GONE}}) for i in range(5)]
    [message] = _warnings(removal_suite(tmp_path / "s", cases))
    assert "5 removal(s)" in message and message.count("line ") == 5 and "more" not in message.split(". An")[0]
