"""Path syntax: parsing edge cases, absent versus null, formatting round trip, flatten/diff, leaf equality."""

from __future__ import annotations

import copy
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oloproof_nb._core.paths import (
    ABSENT,
    Absent,
    find_paths,
    flatten,
    format_path,
    get_path,
    leaf_diff,
    parse_path,
    parse_pattern,
    pattern_matches,
    values_equal,
)

# -- parse_path ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "keys"),
    [
        ("orders.ord-999.status", ("orders", "ord-999", "status")),
        ("items.0.qty", ("items", "0", "qty")),
        ("items[0].qty", ("items", "0", "qty")),
        ('files["report.csv"].size', ("files", "report.csv", "size")),
        ('files["a.b.c"]', ("files", "a.b.c")),
        ('["top.level"]', ("top.level",)),
        ('a["x"]["y.z"]', ("a", "x", "y.z")),
        ('a["with \\"quote\\""].b', ("a", 'with "quote"', "b")),
        ('a["brackets ] [ inside"]', ("a", "brackets ] [ inside")),
        ("a[\"it's\"]", ("a", "it's")),
        ("commandes.réf-é.état", ("commandes", "réf-é", "état")),
        ("注文.一", ("注文", "一")),
        ('a["日本.語"].b', ("a", "日本.語", "b")),
        ("a b.c d", ("a b", "c d")),
        ("007", ("007",)),
        ('a[""]', ("a", "")),
    ],
)
def test_parse_path(path: str, keys: tuple[str, ...]) -> None:
    assert parse_path(path) == keys


@pytest.mark.parametrize(
    "path",
    [
        "",  # empty path
        ".",  # only a dot
        "a..b",  # empty key in the middle
        ".a",  # empty leading key
        "a.",  # empty trailing key
        "a[",  # unclosed bracket
        'a["b"',  # unclosed bracket after a quoted key
        'a["b]',  # unclosed quote
        "a[b]",  # bare word in brackets
        'a["b"]c',  # junk after a bracket
        'a["b"]x.c',
        "a[1x]",
        "a[-1]",
        "a]",
        "a'b",
        'a"b',
        'a["b"c"]',  # bad quoted key
    ],
)
def test_parse_path_rejects(path: str) -> None:
    with pytest.raises(ValueError):
        parse_path(path)


def test_parse_path_rejects_non_ascii_digit_index() -> None:
    # "²" and "١" satisfy str.isdigit() but are not list indices.
    for bad in ("a[²]", "a[١]"):
        with pytest.raises(ValueError):
            parse_path(bad)


# -- get_path: absent is not null -----------------------------------------------------------------


STATE = {
    "orders": {"ord-1": {"status": "delivered", "note": None}, "ord.2": {"status": "refunded"}},
    "items": [{"qty": 2}, {"qty": 0}],
    "files": {"report.csv": {"size": 120}},
    "empty": {},
    "zero": 0,
}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("orders.ord-1.status", "delivered"),
        ('orders["ord.2"].status', "refunded"),
        ("items.1.qty", 0),
        ("items[0].qty", 2),
        ('files["report.csv"].size', 120),
        ("empty", {}),
        ("zero", 0),
    ],
)
def test_get_path_present(path: str, value: object) -> None:
    got = get_path(STATE, path)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    "path",
    [
        "orders.ord-3",  # missing key
        "orders.ord-1.status.deeper",  # below a leaf
        "items.2",  # index past the end
        "items.-1",  # negative index is a dict-style key, not an index
        "items.x",  # non-numeric key into a list
        "files.report.csv.size",  # the dotted key must be bracketed
        "empty.anything",
        "zero.x",
        "items.²",  # a unicode digit is not an index (str.isdigit() is True for it)
        "items.١",  # Arabic-Indic one: not an index either
    ],
)
def test_get_path_absent(path: str) -> None:
    assert get_path(STATE, path) is ABSENT


def test_absent_is_not_null() -> None:
    assert get_path(STATE, "orders.ord-1.note") is None  # exists, is null
    assert get_path(STATE, "orders.ord-1.gone") is ABSENT  # does not exist
    assert ABSENT is not None and ABSENT != None  # noqa: E711
    assert not values_equal(None, ABSENT) and not values_equal(ABSENT, None)
    assert values_equal(ABSENT, ABSENT)
    assert repr(ABSENT) == "<absent>"
    # one sentinel, even through copies
    assert Absent() is ABSENT
    assert copy.deepcopy({"x": ABSENT})["x"] is ABSENT and copy.copy(ABSENT) is ABSENT


def test_get_path_takes_key_sequences() -> None:
    assert get_path(STATE, ("files", "report.csv", "size")) == 120
    assert get_path(STATE, ["orders", "ord.2", "status"]) == "refunded"


def test_get_path_does_not_mutate() -> None:
    before = copy.deepcopy(STATE)
    for path in ("orders.ord-1.status", "items.5", "new.key"):
        get_path(STATE, path)
    assert STATE == before


# -- format_path / round trip ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keys", "path"),
    [
        (["orders", "ord-999", "status"], "orders.ord-999.status"),
        (["files", "report.csv", "size"], 'files["report.csv"].size'),
        (["items", 0, "qty"], "items.0.qty"),
        (["a", 'q"t'], 'a["q\\"t"]'),
        (["a", ""], 'a[""]'),
        (["état"], "état"),
    ],
)
def test_format_path(keys: list[str | int], path: str) -> None:
    assert format_path(keys) == path


KEY = st.one_of(
    st.text(min_size=0, max_size=8),
    st.sampled_from(["a.b", '"', "'", "[", "]", "[0]", '["x"]', "0", "12", "é.ü", "日本", " ", "\\", ".", "..", ""]),
    st.from_regex(r"[0-9]{1,3}", fullmatch=True),
)


@given(st.lists(KEY, min_size=1, max_size=6))
def test_format_parse_round_trip(keys: list[str]) -> None:
    assert parse_path(format_path(keys)) == tuple(keys)


@given(st.lists(KEY, min_size=1, max_size=4), st.integers())
def test_get_path_finds_what_was_put(keys: list[str], value: int) -> None:
    state: dict = {}
    node = state
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    node[keys[-1]] = value
    assert get_path(state, format_path(keys)) == value
    assert get_path(state, tuple(keys)) == value
    assert flatten(state) == {format_path(keys): value}


# -- flatten and leaf_diff ---------------------------------------------------------------------------


def test_flatten_hand_example() -> None:
    state = {"a": {"b": 1, "c.d": [10, {"e": None}]}, "f": {}, "g": []}
    assert flatten(state) == {"a.b": 1, 'a["c.d"].0': 10, 'a["c.d"].1.e': None, "f": {}, "g": []}
    assert flatten({}) == {}


def test_leaf_diff_absent_both_ways() -> None:
    before = {"o": {"a": 1, "b": 2, "gone": "x"}}
    after = {"o": {"a": 1, "b": 3, "new": None}}
    assert leaf_diff(before, after) == [("o.b", 2, 3), ("o.gone", "x", ABSENT), ("o.new", ABSENT, None)]
    assert leaf_diff(before, copy.deepcopy(before)) == []


# -- values_equal ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "tol", "equal"),
    [
        (1, 1.0, None, True),
        (True, 1, None, False),
        (1, True, None, False),
        (False, 0, None, False),
        (True, 1.0, 0.5, False),  # booleans never equal numbers, whatever the tolerance
        (True, True, None, True),
        (0.5, 0.51, 0.02, True),  # |0.5 - 0.51| = 0.01 <= 0.02
        (0.5, 0.53, 0.02, False),  # 0.03 > 0.02
        (10, 12, 2, True),  # boundary is inclusive
        (10, 12.5, 2, False),
        (0.1 + 0.2, 0.3, None, False),  # exact without a tolerance
        (0.1 + 0.2, 0.3, 1e-12, True),
        (math.nan, math.nan, None, True),
        (math.nan, 1.0, 10.0, False),
        ("1", 1, None, False),
        (None, 0, None, False),
        ("a", "a", None, True),
        ({"x": [1, 2.0]}, {"x": [1.0, 2]}, None, True),
        ({"x": 1.0}, {"x": 1.05}, 0.1, True),  # tolerance reaches nested leaves
        ({"x": 1}, {"x": 1, "y": 2}, None, False),
        ([1, 2], [1, 2, 3], None, False),
        ("refunded", 1, 5, False),
    ],
)
def test_values_equal(a: object, b: object, tol: float | None, equal: bool) -> None:
    assert values_equal(a, b, tol) is equal
    assert values_equal(b, a, tol) is equal


# -- a list is not a dict keyed by index ---------------------------------------------------------------------


@pytest.mark.parametrize(("before", "after", "rows"), [
    ({"t": [1]}, {"t": {"0": 1}}, [("t", [1], {"0": 1})]),  # the example: [] before the fix
    ({"t": {"0": 1}}, {"t": [1]}, [("t", {"0": 1}, [1])]),
    ({"t": []}, {"t": {}}, [("t", [], {})]),
    ({"a": {"t": [{"x": 1}]}}, {"a": {"t": {"0": {"x": 1}}}}, [("a.t", [{"x": 1}], {"0": {"x": 1}})]),
    ({"t": [[1]]}, {"t": [{"0": 1}]}, [("t.0", [1], {"0": 1})]),
])
def test_a_changed_container_type_is_a_change(before: object, after: object, rows: list[tuple]) -> None:
    assert leaf_diff(before, after) == rows
    assert not values_equal(before, after)


# -- path patterns -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("pattern", "keys", "whole", "within"), [
    ("orders.*.status", ("orders", "o1", "status"), True, True),
    ("orders.*.status", ("orders", "o1"), False, False),
    ("orders.*", ("orders", "o1", "status"), False, True),
    ("orders.ord-*", ("orders", "ord-7"), True, True),
    ("orders.ord-*", ("orders", "x-ord-7"), False, False),
    ("**.updated_at", ("updated_at",), True, True),
    ("**.updated_at", ("a", "0", "updated_at"), True, True),
    ("**.updated_at", ("a", "updated_at", "x"), False, True),
    ('files["*.txt"]', ("files", "bill.txt"), True, True),
    ('files["*.txt"]', ("files", "bill.txt.gz"), False, False),
    ("t.*.s", ("t", "12", "s"), True, True),  # list indices are keys too
    ("a.b", ("a",), False, False),
    ("x?", ("xy",), False, False),  # only * is a wildcard
])
def test_pattern_matches(pattern: str, keys: tuple[str, ...], whole: bool, within: bool) -> None:
    assert pattern_matches(parse_pattern(pattern), keys) is whole
    assert pattern_matches(parse_pattern(pattern), keys, within=True) is within


def test_find_paths_in_state_order_and_only_existing_paths() -> None:
    state = {"files": {"a.txt": "x", "b.csv": "y", "c.txt": "z"}, "t": [{"s": "1"}, {"s": "2"}, {"n": 3}]}
    assert find_paths(state, parse_pattern('files["*.txt"]')) == [("files", "a.txt"), ("files", "c.txt")]
    assert find_paths(state, parse_pattern("t.*.s")) == [("t", "0", "s"), ("t", "1", "s")]
    assert find_paths(state, parse_pattern("**.s")) == [("t", "0", "s"), ("t", "1", "s")]
    assert find_paths(state, parse_pattern("files.missing")) == []
    assert find_paths(state, parse_pattern("t.5")) == []
