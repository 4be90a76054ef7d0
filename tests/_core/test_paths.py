"""Path syntax: parsing edge cases, absent versus null, formatting round trip, flatten/diff, leaf equality."""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
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


BRACKET = "a bracket holds a quoted key or a list index"


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("", "is empty"),  # empty path
        (".", "has an empty key at position 0"),  # only a dot
        ("a..b", "has an empty key at position 2"),  # empty key in the middle
        (".a", "has an empty key at position 0"),  # empty leading key
        ("a.", "ends with '.'"),  # empty trailing key
        ("a[", "'[' at position 1 is never closed"),  # unclosed bracket
        ('a["b"', "'[' at position 1 is never closed"),  # unclosed bracket after a quoted key
        ('a["b]', "'[' at position 1 is never closed"),  # unclosed quote
        ("a[b]", BRACKET),  # bare word in brackets
        ('a["b"]c', "expected '.' or '[' after ']' at position 6"),  # junk after a bracket
        ('a["b"]x.c', "expected '.' or '[' after ']' at position 6"),
        ("a[1x]", BRACKET),
        ("a[-1]", BRACKET),
        ("a]", "unexpected ']' at position 1"),
        ("a'b", "unexpected \"'\" at position 1"),
        ('a"b', "unexpected '\"' at position 1"),
        ('a["b"c"]', "'[' at position 1 is never closed"),  # bad quoted key: its third quote opens a string to the end
    ],
)
def test_parse_path_rejects(path: str, words: str) -> None:
    """Each refusal is parse_path's own message, not any ValueError (say one raised by int() on the way)."""
    with pytest.raises(ValueError, match=f"^path {re.escape(repr(path))}.*{re.escape(words)}"):
        parse_path(path)


def test_parse_path_rejects_non_ascii_digit_index() -> None:
    # "²" and "١" satisfy str.isdigit() but are not list indices: refused by the bracket rule, not by int() (which
    # refuses "²" with its own ValueError and reads "١" as 1)
    for bad in ("a[²]", "a[١]"):
        with pytest.raises(ValueError, match=re.escape(BRACKET)):
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
        (math.inf, math.inf, 0.01, True),  # equal infinities with a tolerance: inf - inf is NaN, no distance
        (-math.inf, -math.inf, 0.0, True),
        (math.inf, -math.inf, 0.01, False),
        (math.inf, 1e308, 1e308, False),
        (math.inf, math.nan, 0.01, False),
        ("1", 1, None, False),
        (None, 0, None, False),
        ("a", "a", None, True),
        ({"x": [1, 2.0]}, {"x": [1.0, 2]}, None, True),
        ({"x": 1.0}, {"x": 1.05}, 0.1, True),  # tolerance reaches nested leaves
        ({"x": 1}, {"x": 1, "y": 2}, None, False),
        ([1, 2], [1, 2, 3], None, False),
        ("refunded", 1, 5, False),
        # an int was turned into a float before the distance was taken, so 2**53 + 1 was within
        # tolerance 0 of 2.0**53 (tolerance: 0 looser than no tolerance); the distance is now exact
        (2**53 + 1, 2.0**53, 0.0, False),
        (2**53 + 1, 2.0**53, None, False),
        (2**53 + 1, 2.0**53, 1.0, True),
        (10**20 + 1, 1e20, 0.5, False),  # 1e20 is exactly 10**20: the int is 1 away
        (10**20 + 1, 1e20, 1.0, True),
        (10**400, 10**400 + 1, 1.0, True),  # ints beyond any float
        (10**400, 90.0, 0.01, False),
        (3, math.inf, 1e308, False),
        (3, math.nan, 1.0, False),
        # 1 and 1.0 are judged alike below 2**53 (exact fractions there made 1 vs 0.3 within 0.7 fail
        # while 1.0 vs 0.3 passed: float arithmetic puts 1.0 - 0.3 at 0.7 exactly)
        (1, 0.3, 0.7, True),
        (1.0, 0.3, 0.7, True),
        (2**53, 2.0**53 + 2, 1.0, False),
    ],
)
def test_values_equal(a: object, b: object, tol: float | None, equal: bool) -> None:
    assert values_equal(a, b, tol) is equal
    assert values_equal(b, a, tol) is equal


@pytest.mark.parametrize(("a", "b", "tol", "equal"), [
    ("f1", 1.0, None, True), ("f1", "f2", None, False), ("f1", 1, 0.1, True), ("f1", 5.0, 0.1, False),
    ("f1", 1.0000000000000002, 0.0, False), ("f40", 39.9, 0.1, True), ("f40", 39.89, 0.1, False),
    ("fnan", math.nan, None, True), ("i1", "i1", None, True), ("b1", "b1", None, True), ("s", "a", None, True),
])
def test_values_equal_of_numpy_scalars_is_a_bool(a: object, b: object, tol: float | None, equal: bool) -> None:
    """A state read through NumPy (a pandas cell) holds numpy.float64, a float whose ``==`` and ``<=`` give
    numpy.bool, not bool: ``values_equal`` gave numpy.True_ (``is True`` false) for two equal floats. By hand, as
    the plain numbers compare."""
    import numpy as np

    scalars = {"f1": np.float64(1.0), "f2": np.float64(2.0), "f40": np.float64(40.0), "fnan": np.float64("nan"),
               "i1": np.int64(1), "b1": np.bool_(True), "s": np.str_("a")}
    a, b = (scalars.get(x, x) if isinstance(x, str) else x for x in (a, b))
    for first, second in ((a, b), (b, a)):
        said = values_equal(first, second, tol)
        assert type(said) is bool and said is equal


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


# -- leaf_diff against the two-walk implementation it replaced -------------------------------------------------------
# _reference_leaf_diff is leaf_diff as it was before the one-pass version (with the helpers it used, frozen here):
# the new one must give the same rows, in the same order, with the same values (1, 1.0 and True told apart). Both
# read a tuple as the list a stored state holds (_REF_ARRAYS; before, a tuple was one leaf).

_REF_PLAIN = re.compile(r"[^.\[\]\"']+")
_REF_ARRAYS = (list, tuple)


def _ref_format_path(keys: Sequence[str | int]) -> str:
    out = ""
    for key in keys:
        text = str(key)
        if text and _REF_PLAIN.fullmatch(text):
            out = f"{out}.{text}" if out else text
        else:
            out += "[" + json.dumps(text, ensure_ascii=False) + "]"
    return out


def _ref_values_equal(expected: Any, actual: Any) -> bool:
    if expected is ABSENT or actual is ABSENT:
        return expected is actual
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        if isinstance(expected, float) and isinstance(actual, float) and math.isnan(expected) and math.isnan(actual):
            return True
        return expected == actual
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        return expected.keys() == actual.keys() and all(_ref_values_equal(expected[k], actual[k]) for k in expected)
    if isinstance(expected, _REF_ARRAYS) and isinstance(actual, _REF_ARRAYS):
        return len(expected) == len(actual) and all(
            _ref_values_equal(e, a) for e, a in zip(expected, actual, strict=True))
    if type(expected) is not type(actual) and not (isinstance(expected, str) and isinstance(actual, str)):
        return False
    return bool(expected == actual)


def _ref_changed_container(node: Any, other: Any) -> bool:
    return (isinstance(node, Mapping) and isinstance(other, _REF_ARRAYS)) or (
        isinstance(node, _REF_ARRAYS) and isinstance(other, Mapping))


def _ref_walk_unequal(node: Any, other: Any, prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    if prefix and _ref_changed_container(node, other):
        yield prefix, node
    elif isinstance(node, Mapping) and node:
        peer = other if isinstance(other, Mapping) else {}
        for key, value in node.items():
            twin = peer.get(key, ABSENT)
            if twin is not ABSENT and _ref_values_equal(value, twin):
                continue
            yield from _ref_walk_unequal(value, twin, (*prefix, str(key)))
    elif isinstance(node, _REF_ARRAYS) and node:
        seq = other if isinstance(other, _REF_ARRAYS) else ()
        for idx, value in enumerate(node):
            twin = seq[idx] if idx < len(seq) else ABSENT
            if twin is not ABSENT and _ref_values_equal(value, twin):
                continue
            yield from _ref_walk_unequal(value, twin, (*prefix, str(idx)))
    else:
        yield prefix, node


def _reference_leaf_diff(before: Any, after: Any) -> list[tuple[str, Any, Any]]:
    old = {_ref_format_path(keys): value for keys, value in _ref_walk_unequal(before, after, ()) if keys}
    new = {_ref_format_path(keys): value for keys, value in _ref_walk_unequal(after, before, ()) if keys}
    rows = [(p, v, new.get(p, ABSENT)) for p, v in old.items() if not _ref_values_equal(v, new.get(p, ABSENT))]
    rows += [(p, ABSENT, v) for p, v in new.items() if p not in old]
    return rows


def _identical(x: Any, y: Any) -> bool:
    """The same value down to types and key order; NaN matches NaN."""
    if type(x) is not type(y):
        return False
    if isinstance(x, float):
        return (math.isnan(x) and math.isnan(y)) or x == y
    if isinstance(x, Mapping):
        return list(x) == list(y) and all(
            type(k) is type(j) and _identical(x[k], y[j]) for k, j in zip(x, y, strict=True))
    if isinstance(x, (list, tuple)):
        return len(x) == len(y) and all(_identical(v, w) for v, w in zip(x, y, strict=True))
    return bool(x is y or x == y)


def _assert_same_rows(before: Any, after: Any) -> None:
    got, want = leaf_diff(before, after), _reference_leaf_diff(before, after)
    assert [p for p, _, _ in got] == [p for p, _, _ in want]
    for (p, b, a), (_, rb, ra) in zip(got, want, strict=True):
        assert _identical(b, rb) and _identical(a, ra), (p, b, a, rb, ra)
        assert b is rb and a is ra, p  # the very objects of the states, as before


DIFF_KEY = st.one_of(
    st.sampled_from(["a", "b", "status", "0", "1", "10", "a.b", "x[0]", '["q"]', "", " ", "'", 'q"', "é", "]"]),
    st.text(max_size=3),
)
DIFF_LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(-1, 2), st.sampled_from([0.0, 1.0, -0.0, 2.5, math.inf]),
    st.just(math.nan), st.floats(width=16), st.sampled_from(["", "a", "delivered", "True", "1"]),
)
DIFF_TREE = st.recursive(
    DIFF_LEAF, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(DIFF_KEY, kids, max_size=4), max_leaves=16)
DIFF_STATE = st.dictionaries(DIFF_KEY, DIFF_TREE, max_size=5)


def _shuffled(value: Any, rnd: Any) -> Any:
    """``value`` with every dict's keys in a random order (a fresh copy)."""
    if isinstance(value, dict):
        keys = list(value)
        rnd.shuffle(keys)
        return {k: _shuffled(value[k], rnd) for k in keys}
    if isinstance(value, list):
        return [_shuffled(v, rnd) for v in value]
    return value


def _mutate(value: Any, draw: Any) -> Any:
    """``value`` with one small edit somewhere: a leaf changed, a key added or removed, a list grown or shrunk,
    a dict turned into a list (or back), a number turned into a bool."""
    container = isinstance(value, (dict, list)) and value
    if container and draw(st.integers(0, 3)) > 0:  # go down into one child
        key = draw(st.sampled_from(list(value) if isinstance(value, dict) else range(len(value))))
        value[key] = _mutate(value[key], draw)
        return value
    edit = draw(st.sampled_from(["replace", "grow", "shrink", "swap", "bool"]))
    if edit == "grow" and isinstance(value, dict):
        value[draw(DIFF_KEY)] = draw(DIFF_TREE)
    elif edit == "grow" and isinstance(value, list):
        value.append(draw(DIFF_TREE))
    elif edit == "shrink" and isinstance(value, dict) and value:
        del value[draw(st.sampled_from(list(value)))]
    elif edit == "shrink" and isinstance(value, list) and value:
        value.pop(draw(st.integers(0, len(value) - 1)))
    elif edit == "swap" and isinstance(value, dict):
        return list(value.values())
    elif edit == "swap" and isinstance(value, list):
        return {str(i): v for i, v in enumerate(value)}
    elif edit == "bool" and type(value) in (int, float):
        return value == 1
    elif edit == "bool" and type(value) is bool:
        return int(value)
    else:
        return draw(DIFF_TREE)
    return value


@settings(max_examples=200, deadline=None)
@given(DIFF_TREE, DIFF_TREE)
def test_leaf_diff_same_rows_as_before_on_any_two_values(before: Any, after: Any) -> None:
    _assert_same_rows(before, after)
    _assert_same_rows(after, before)


@settings(max_examples=300, deadline=None)
@given(DIFF_STATE, st.data(), st.sampled_from(["copy", "shuffled", "json"]), st.randoms(use_true_random=False))
def test_leaf_diff_same_rows_as_before_on_small_edits(before: dict[str, Any], data: st.DataObject, form: str,
                                                      rnd: Any) -> None:
    after = copy.deepcopy(before)
    for _ in range(data.draw(st.integers(0, 3))):
        after = _mutate(after, data.draw)
    if form == "shuffled":
        after = _shuffled(after, rnd)
    elif form == "json":  # as the run store gives it back: keys sorted, new objects (a NaN is another NaN)
        after = json.loads(json.dumps(after, sort_keys=True))
    _assert_same_rows(before, after)
    _assert_same_rows(after, before)


UNUSUAL = st.recursive(
    DIFF_LEAF | st.tuples(DIFF_LEAF),
    lambda kids: (st.lists(kids, max_size=3) | st.dictionaries(DIFF_KEY | st.integers(0, 2), kids, max_size=3)
                  | st.dictionaries(DIFF_KEY, kids, max_size=2).map(MappingProxyType)),
    max_leaves=10)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(DIFF_KEY | st.integers(0, 2), UNUSUAL, max_size=4), st.data())
def test_leaf_diff_same_rows_as_before_with_unusual_values(before: dict[Any, Any], data: st.DataObject) -> None:
    # tuples, int keys (colliding with their text), Mappings that are not dicts: the general path, same rows
    after = data.draw(st.dictionaries(DIFF_KEY | st.integers(0, 2), UNUSUAL, max_size=4)) if data.draw(
        st.booleans()) else {**before, **data.draw(st.dictionaries(DIFF_KEY | st.integers(0, 2), UNUSUAL, max_size=2))}
    _assert_same_rows(before, after)
    _assert_same_rows(after, before)


class _OddKey(str):
    """A str key that prints as another."""

    def __str__(self) -> str:
        return "odd"


@pytest.mark.parametrize(("before", "after", "rows"), [
    # the example: after came back from JSON with sorted keys
    ({"orders": {"ord-000123": {"status": "delivered", "amount": 42}, "ord-x": {"status": "delivered", "amount": 5}}},
     {"orders": {"ord-000123": {"amount": 42, "status": "refunded"}, "ord-x": {"amount": 5, "status": "delivered"}}},
     [("orders.ord-000123.status", "delivered", "refunded")]),
    ({"a": 1, "b": True, "c": 1.0, "d": math.nan}, {"a": 1.0, "b": 1, "c": True, "d": math.nan},
     [("b", True, 1), ("c", 1.0, True)]),  # 1 == 1.0, a bool is not a number, NaN equals NaN
    # a dict that became a leaf: its leaves go, the leaf comes (after the rows of before)
    ({"o": {"x": 1, "y": 2}, "z": 0}, {"o": 5, "z": 1}, [("o.x", 1, ABSENT), ("o.y", 2, ABSENT), ("z", 0, 1),
                                                          ("o", ABSENT, 5)]),
    ({"o": {"x": 1}}, {"o": {}}, [("o.x", 1, ABSENT), ("o", ABSENT, {})]),
    ({"o": []}, {"o": [1, [2]]}, [("o", [], ABSENT), ("o.0", ABSENT, 1), ("o.1.0", ABSENT, 2)]),
    ({"o": "x"}, {"o": []}, [("o", "x", [])]),
    ({"o": {}}, {"o": []}, [("o", {}, [])]),
    # new rows follow after's order, across keys of both sides and keys only after has
    ({"p": {"k": 1}, "q": {"k": 1}}, {"n": {"m": 0}, "q": {"k": 1, "j": 2}, "p": {"k": 1, "j": 3}},
     [("n.m", ABSENT, 0), ("q.j", ABSENT, 2), ("p.j", ABSENT, 3)]),
    # keys that need brackets, and list indices
    ({"a.b": {"": [1, 2]}}, {"a.b": {"": [1]}}, [('["a.b"][""].1', 2, ABSENT)]),
    ([{"x": 1}, 2], [{"x": 2}], [("0.x", 1, 2), ("1", 2, ABSENT)]),
    # a long dict walked at once (more than 8 keys) with a change at its end
    ({"t": {str(i): i for i in range(12)}}, {"t": {**{str(i): i for i in range(11)}, "11": "x", "12": 0}},
     [("t.11", 11, "x"), ("t.12", ABSENT, 0)]),
    # the general definition: a dict root against a list root pairs index paths (no row here) ...
    ({"0": {"x": [1]}}, [{"x": {"0": 1}}], []),
    # ... and non-str keys print as text (the later value wins a shared path)
    ({1: "a", "1": "b"}, {}, [("1", "b", ABSENT)]),
    ({"k": MappingProxyType({"a": 1})}, {"k": {"a": 2}}, [("k.a", 1, 2)]),
    ({"k": (1, 2)}, {"k": [1, 2]}, []),  # a tuple: the list it is stored as (before, a leaf)
    ({"k": {"a": 1}}, {_OddKey("k"): {"a": 2}}, [("k.a", 1, ABSENT), ("odd.a", ABSENT, 2)]),
    ({"t": {str(i): i for i in range(10)}}, {_OddKey("t"): {**{str(i): i for i in range(10)}, "3": 4}},
     [("t.3", 3, ABSENT), ("odd.3", ABSENT, 4)]),
    # small dicts that Python's own != finds different, but values_equal equal (two NaN objects): no row ...
    ({"o": {"x": math.nan, "y": [1, math.nan]}}, {"o": {"y": [1, float("nan")], "x": float("nan")}}, []),
    ({"o": {1: {"x": math.nan}, "k": 0}}, {"o": {1: {"x": float("nan")}, "k": 0}}, []),  # under a key not a str
    # ... and small ones it finds equal that values_equal does not (a bool is not a number)
    ({"o": {"f": True, "n": [0, 1.0]}, "p": [{"g": 1}]}, {"o": {"n": [False, 1], "f": 1}, "p": [{"g": True}]},
     [("o.f", True, 1), ("o.n.0", 0, False), ("p.0.g", 1, True)]),
])
def test_leaf_diff_pinned(before: Any, after: Any, rows: list[tuple[str, Any, Any]]) -> None:
    got = leaf_diff(before, after)
    assert len(got) == len(rows)
    for (p, b, a), (q, c, d) in zip(got, rows, strict=True):
        assert p == q and _identical(b, c) and _identical(a, d), (got, rows)
    _assert_same_rows(before, after)


def test_leaf_diff_compares_only_what_python_finds_equal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A leaf changed three dicts down: Python's own ``!=`` (in C) sends the walk into the dicts that differ; only
    the sibling it finds equal is compared value by value (``_same``: a bool against a number). Comparing every
    parent first, as before, compared the changed branch again at each level (4 calls here): about a tenth of the
    diff's time on the benchmark desk's states (benchmarks/README.md section 1)."""
    from oloproof_nb._core import paths

    calls: list[tuple[Any, Any]] = []
    same = paths._same
    monkeypatch.setattr(paths, "_same", lambda x, y: calls.append((x, y)) or same(x, y))
    before = {"orders": {"o-1": {"status": "delivered", "amount": 10}, "o-x": {"status": "delivered", "amount": 5}}}
    after = {"orders": {"o-1": {"amount": 10, "status": "refunded"}, "o-x": {"amount": 5, "status": "delivered"}}}
    assert leaf_diff(before, after) == [("orders.o-1.status", "delivered", "refunded")]
    assert calls == [(before["orders"]["o-x"], after["orders"]["o-x"])]


def test_a_key_with_a_leading_zero_is_no_list_index() -> None:
    """Path keys address list elements as the toolkit writes them (items.0); "00" read as index 0 when comparing,
    while the diff of `changes` mode named the element items.0, so one leaf came out confirmed and unexpected."""
    from oloproof_nb._core.compare import compare_changes, compare_state
    from oloproof_nb._core.paths import get_path, list_index

    state = {"items": [{"qty": 5}, {"qty": 2}]}
    assert get_path(state, "items.0.qty") == 5 and get_path(state, "items.00.qty") is ABSENT
    assert [list_index(k) for k in ("0", "7", "10", "00", "07", "")] == [0, 7, 10, None, None, None]
    assert [list_index(k) for k in ("+1", " 1", "1 ", "1_0", "-0", "\u0663", "1.0")] == [None] * 7  # int() takes most
    with pytest.raises(ValueError, match=r"a bracket holds a quoted key or a list index \(no leading zero\)"):
        parse_path("items[00].qty")
    rows = compare_state({"items": {"00": {"qty": 5}}}, state, "subset")
    assert [(r[0], r[-1]) for r in rows] == [("items.00.qty", False)]  # no such element: not a match
    initial = {"items": [{"qty": 1}, {"qty": 2}]}
    expected = {"items": {"00": {"qty": 5}}}
    unexpected, named = compare_changes(initial, expected, state)
    assert [r[0] for r in unexpected] == ["items.0.qty"] and [(r[0], r[-1]) for r in named] == [("items.00.qty", False)]


# -- gaps found by mutation testing --------------------------------------------------------------------------


def test_an_int_beyond_float_range_is_never_within_tolerance_of_an_infinity() -> None:
    """10**400 is finite: no tolerance reaches an infinity from it (the distance overflows a float)."""
    assert values_equal(10**400, math.inf, 1.0) is False
    assert values_equal(-math.inf, -(10**400), 1e308) is False


def test_the_largest_exact_int_is_judged_like_its_float() -> None:
    """Ints up to 2**53 are exactly floats and take float arithmetic, so 2**53 and 2.0**53 get one answer (as 1
    and 1.0 do). In floats 2.0**53 + 0.1 rounds to 2.0**53 (the spacing there is 2): within 2.0**53."""
    assert values_equal(2.0**53, -0.1, 2.0**53) is True
    assert values_equal(2**53, -0.1, 2.0**53) is True


def test_a_distance_equal_to_the_tolerance_as_the_numbers_are_written_is_within_it() -> None:
    """The boundary is inclusive, but as binary floats 39.9 is 0.10000000000000142 from 40.0, so a
    refund of 39.9 against 40.0 failed tolerance 0.1 while 10.4 against 10.3 passed (63,601 of 100,000 pairs of
    amounts written 0.1 apart failed, 18,448 of 100,000 a cent apart at tolerance 0.01). The numbers as written
    (a float's shortest decimal form, what the state file and the panel show) are measured too."""
    assert values_equal(40.0, 39.9, 0.1) and values_equal(0.3, 0.4, 0.1) and values_equal(1, 1.1, 0.1)
    cents = [float(f"{c / 100:.2f}") for c in range(20_001)]
    assert all(values_equal(a, b, 0.01) and values_equal(b, a, 0.01) for a, b in zip(cents, cents[1:], strict=False))
    assert all(values_equal(a, b, 0.1) for a, b in zip(cents, cents[10:], strict=False))
    assert values_equal(1e9, 1000000000.01, 0.01) and values_equal(-2.5, -2.4, 0.1)
    # just past it, as written, is still outside
    assert not values_equal(0.3, 0.4000000000000001, 0.1) and not values_equal(40.0, 39.89, 0.1)
    assert not values_equal(1e9, 1000000000.0100001, 0.01) and not values_equal(0.3, 0.4, 0.0)
    assert not values_equal(1.0, 1.0000000000000002, 0.0)


# -- gaps a mutant showed -----------------------------------------------------------------------------------


def test_leaf_diff_sees_a_nan_that_became_a_number_and_back() -> None:
    """NaN equals only NaN: a NaN leaf that became 1.0 (or back) is one changed leaf, also in a short dict the
    one-pass diff compares before walking it."""
    nan = float("nan")
    (row,) = leaf_diff({"x": nan}, {"x": 1.0})
    assert row[0] == "x" and math.isnan(row[1]) and row[2] == 1.0
    (row,) = leaf_diff({"o": {"x": 1.0, "y": 2}}, {"o": {"x": nan, "y": 2}})
    assert row[0] == "o.x" and row[1] == 1.0 and math.isnan(row[2])
    assert leaf_diff({"o": {"x": nan}}, {"o": {"x": nan}}) == []


def test_find_paths_never_returns_the_root() -> None:
    """``**`` matches any number of keys, none included, but the root is no path of the state: for a state of
    two text leaves the paths are those two."""
    assert find_paths({"a": "x", "b": "y"}, ("**",)) == [("a",), ("b",)]
    assert find_paths({"a": {"b": "y"}}, ("**", "b")) == [("a", "b")]


# -- more gaps a mutant showed ------------------------------------------------------------------------------


def test_a_trailing_double_star_matches_no_key_too() -> None:
    """``**`` matches any number of keys, none included: ``notes.**`` matches ``notes`` itself, alone and
    as a prefix."""
    pattern = parse_pattern("notes.**")
    assert pattern_matches(pattern, ("notes",)) and pattern_matches(pattern, ("notes",), within=True)
    assert pattern_matches(pattern, ("notes", "n1", "at")) and not pattern_matches(pattern, ("note",))


def test_leaf_diff_below_a_non_text_key_compares_the_values() -> None:
    """A dict with an int key takes the general definition; the changed text below it is a row (written by
    hand), not skipped because both sides are dicts of one size."""
    assert leaf_diff({1: {"a": "x"}}, {1: {"a": "y"}}) == [("1.a", "x", "y")]
    assert leaf_diff({"o": {1: {"a": "x", "n": True}}}, {"o": {1: {"a": "x", "n": False}}}) == [("o.1.n", True, False)]


def test_outside_patterns_keeps_the_paths_another_check_judges() -> None:
    """Under ``refunds.*.at`` only the stamps of rows no check pins are left out: a path at, inside or above a kept
    path stays (written by hand). Before, the pin dropped the pattern whole (``evaluators.state.ignored_paths``), and
    the new row's stamp ``refunds.21.at`` was compared too."""
    from oloproof_nb._core.paths import outside_patterns

    paths = ["refunds.21.at", "refunds.21.amount", "refunds.7.at", "refunds", "log.1.at"]
    assert outside_patterns(paths, ["refunds.*.at", "log"], keep=["refunds.7"]) == [
        "refunds.21.amount", "refunds.7.at", "refunds"]
    assert outside_patterns(paths, ["refunds.*.at", "log"], keep=["refunds.7.at.x"]) == [
        "refunds.21.amount", "refunds.7.at", "refunds"]  # a kept path below the leaf: the leaf is judged
    assert outside_patterns(paths, ["refunds.*.at", "log"]) == ["refunds.21.amount", "refunds"]


def test_outside_patterns_keeps_a_kept_leaf_itself_and_not_a_row_whose_key_only_starts_like_it() -> None:
    """A kept path is compared at itself, and its rows are matched key by key, not as text: ``refunds.7`` keeps
    ``refunds.7.at`` but not ``refunds.70.at`` or ``refunds.7x.at``, stamps of other rows the pattern still leaves
    out (written by hand)."""
    from oloproof_nb._core.paths import outside_patterns

    paths = ["refunds.7.at", "refunds.70.at", "refunds.7x.at"]
    assert outside_patterns(paths, ["refunds.*.at"], keep=["refunds.7.at"]) == ["refunds.7.at"]
    assert outside_patterns(paths, ["refunds.*.at"], keep=["refunds.7"]) == ["refunds.7.at"]
    assert outside_patterns(paths, ["refunds.*.at"], keep=["refunds.70.at.x"]) == ["refunds.70.at"]


def test_the_tolerance_is_measured_as_written_too_whichever_way_its_float_rounds() -> None:
    """Every pair of tenths from -10 to 10 at tolerances whose floats lie above their decimal
    (0.1, 0.7) and below it (0.3, 1.1), against Decimal arithmetic on the numbers as written (brute force). A
    tolerance read as its binary float (0.3 is 0.29999999999999998889…) left 0.1 and 0.4 outside 0.3."""
    from decimal import Decimal
    from fractions import Fraction

    tenths = [k / 10 for k in range(-100, 101)]
    for tol in (0.1, 0.3, 0.7, 1.1):
        wrong = [(a, b) for a in tenths for b in tenths
                 if values_equal(a, b, tol) != (abs(Decimal(repr(a)) - Decimal(repr(b))) <= Decimal(repr(tol)))]
        assert wrong == [], (tol, wrong[:5])
    assert values_equal(0.1, 0.4, 0.3) and Fraction(0.3) < Fraction(3, 10) < Fraction(abs(0.1 - 0.4))


def test_state_values_are_json_values_and_text_is_compared_by_code_points() -> None:
    """The README's sentence (section 2, state checks): 1 equals 1.0 and -0.0 equals 0.0, but the NFC and NFD forms
    of one accented text are two values in a state; ``answer_matches`` with ``normalize`` reads them alike."""
    import unicodedata

    from oloproof_nb._core.compare import answers_equal

    composed, decomposed = unicodedata.normalize("NFC", "José"), unicodedata.normalize("NFD", "José")
    assert (len(composed), len(decomposed)) == (4, 5)  # the premise: two texts
    assert values_equal({"n": 1, "z": -0.0}, {"n": 1.0, "z": 0.0})
    assert not values_equal({"name": composed}, {"name": decomposed})
    assert answers_equal(composed, decomposed, True) and not answers_equal(composed, decomposed, False)
