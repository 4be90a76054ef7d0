""":func:`unheld_removals` finds each removal ``expected.state`` asks for of something ``initial_state``
does not hold, following dicts and lists as ``subset`` and ``changes`` modes read them."""

from __future__ import annotations

from oloproof_nb._core.compare import unheld_removals
from oloproof_nb._core.lists import ListMatch

GONE = {"$absent": True}
BY_SKU = {"cart": ListMatch("by_key", "sku")}


def test_a_dict_key_the_state_never_held_is_found_with_the_keys_held_there_the_case_does_not_name() -> None:
    initial = {"orders": {"ord-7": {"s": "open"}, "ord-9": {}, "ord-5": {}}}
    expected = {"orders": {"ord-8": GONE, "ord-9": {"s": "open"}}}
    assert list(unheld_removals(initial, expected)) == [(("orders", "ord-8"), None, "ord-8", ["ord-7", "ord-5"])]


def test_a_key_the_state_holds_or_a_place_it_does_not_hold_is_not_a_finding() -> None:
    initial = {"orders": {"ord-7": {}}}
    assert list(unheld_removals(initial, {"orders": {"ord-7": GONE}})) == []  # held: a real removal
    assert list(unheld_removals(initial, {"refunds": {"r-1": GONE}})) == [(("refunds",), None, "refunds", ["orders"])]
    assert list(unheld_removals({}, {"refunds": {"r-1": GONE}})) == [(("refunds",), None, "refunds", [])]
    # a value asked at a key the state never held is no removal: an idle agent fails it
    assert list(unheld_removals(initial, {"orders": {"ord-8": {"s": "open"}}})) == []


def test_a_by_key_removal_is_found_by_its_key_value_and_an_element_is_followed_into_its_counterpart() -> None:
    initial = {"cart": [{"sku": "A", "opts": {"gift": True}}, {"sku": "B"}, {"sku": "C"}]}
    expected = {"cart": [{"sku": "B ", "$absent": True}, {"sku": "C"}, {"sku": "A", "opts": {"gfit": GONE}}]}
    found = sorted(unheld_removals(initial, expected, lists=BY_SKU))
    # the counterpart of A sits at index 0 of the initial list; B and A are held and unnamed by a removal
    assert found == [(("cart", "0", "opts", "gfit"), None, "gfit", ["gift"]),
                     (("cart", "<sku=B >"), "sku", "B ", ["B"])]


def test_an_ordered_list_is_followed_by_position_and_an_unordered_one_not_at_all() -> None:
    initial = {"cart": [{"sku": "A", "opts": {"gift": 1}}]}
    expected = {"cart": [{"sku": "A", "opts": {"gfit": GONE}}]}
    assert [f[0] for f in unheld_removals(initial, expected)] == [("cart", "0", "opts", "gfit")]
    assert list(unheld_removals(initial, expected, lists={"cart": ListMatch("unordered")})) == []
    # a digit key of an expected dict indexes a list, as subset mode reads it
    assert [f[0] for f in unheld_removals(initial, {"cart": {"0": {"opts": {"gfit": GONE}}}})] == \
        [("cart", "0", "opts", "gfit")]


def test_an_ignored_path_is_left_out_as_changes_mode_leaves_it_out() -> None:
    initial = {"orders": {"ord-7": {}}, "log": {"e-1": 1}}
    expected = {"orders": {"ord-8": GONE}, "log": {"e-2": GONE}}
    assert [f[0] for f in unheld_removals(initial, expected, ignore=["log"])] == [("orders", "ord-8")]
