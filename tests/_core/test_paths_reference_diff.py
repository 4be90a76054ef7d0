"""Paths and leaf diffs (``_core/paths.py``) against references written here.

:func:`leaf_diff` takes a one-pass walk for plain JSON states, whose equality is its own (``_same``: a bool is
no number, NaN equals NaN, ``1`` equals ``1.0``); the reference below is a short recursive definition from the
docstring (empty containers are leaves, a list that became a dict one row holding both), compared as a set of
rows on random states built to hit those cases, for the one-pass walk and for the general definition it falls
back to (a tuple, a Mapping that is no dict, a key that is no ``str``).
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from oloproof_nb._core.paths import (  # _leaf_diff_general: the definition the one-pass walk must agree with
    ABSENT,
    _leaf_diff_general,
    find_paths,
    flatten,
    format_path,
    get_path,
    leaf_diff,
    list_index,
    parse_path,
    parse_pattern,
    pattern_matches,
    values_equal,
)

LEAVES: list[Any] = [0, 1, 1.0, -0.0, True, False, None, "a", "1", "", math.nan, {}, []]
KEYS = ["a", "b", "0", "x.y", 'q"']


def same(x: Any, y: Any) -> bool:
    """JSON equality (README): 1 is 1.0, a bool no number, NaN is NaN, a list no dict."""
    if x is ABSENT or y is ABSENT:
        return x is y
    if isinstance(x, bool) or isinstance(y, bool):
        return type(x) is type(y) and x == y
    if isinstance(x, (int, float)) and isinstance(y, (int, float)):
        return x == y or (x != x and y != y)
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(same(a, b) for a, b in zip(x, y, strict=True))
    return type(x) is type(y) and x == y


def leaves(node: Any, keys: tuple[str, ...]) -> dict[tuple[str, ...], Any]:
    if isinstance(node, dict) and node:
        return {k: v for key, value in node.items() for k, v in leaves(value, (*keys, key)).items()}
    if isinstance(node, list) and node:
        return {k: v for i, value in enumerate(node) for k, v in leaves(value, (*keys, str(i))).items()}
    return {keys: node}


def reference(b: Any, a: Any, keys: tuple[str, ...] = ()) -> dict[tuple[str, ...], tuple[Any, Any]]:
    """The rows of the docstring, by key tuple."""
    if keys and isinstance(b, (dict, list)) and isinstance(a, (dict, list)) and type(b) is not type(a):
        return {keys: (b, a)}  # a list became a dict (or back): one row holding both
    if type(b) is type(a) and isinstance(b, (dict, list)) and b and a:
        names = (list(b) + [k for k in a if k not in b]) if isinstance(b, dict) else [
            str(i) for i in range(max(len(b), len(a)))]
        out: dict[tuple[str, ...], tuple[Any, Any]] = {}
        for k in names:
            out.update(reference(get_one(b, k), get_one(a, k), (*keys, k)))
        return out
    old = leaves(b, keys) if b is not ABSENT else {}
    new = leaves(a, keys) if a is not ABSENT else {}
    return {k: (old.get(k, ABSENT), new.get(k, ABSENT)) for k in {**old, **new}
            if k and not same(old.get(k, ABSENT), new.get(k, ABSENT))}


def get_one(node: Any, key: str) -> Any:
    if isinstance(node, dict):
        return node.get(key, ABSENT)
    i = int(key)
    return node[i] if i < len(node) else ABSENT


def state(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth >= 3 or roll < 0.45:
        return rng.choice(LEAVES)
    if roll < 0.75:
        return {k: state(rng, depth + 1) for k in rng.sample(KEYS, rng.randint(1, 3))}
    return [state(rng, depth + 1) for _ in range(rng.randint(1, 3))]


def mutate(rng: random.Random, node: Any) -> Any:
    """A near copy: most subtrees kept, a few leaves or containers swapped, keys added or dropped."""
    if rng.random() < 0.15:
        return state(rng, 2)
    if isinstance(node, dict):
        out = {k: mutate(rng, v) for k, v in node.items() if rng.random() > 0.1}
        if rng.random() < 0.2:
            out[rng.choice(KEYS)] = state(rng, 2)
        return out
    if isinstance(node, list) and node:
        out_list = [mutate(rng, v) for v in node]
        return out_list + [state(rng, 2)] if rng.random() < 0.2 else out_list[: rng.randint(1, len(out_list))]
    return node


def test_leaf_diff_agrees_with_a_reference_definition() -> None:
    """5,000 random pairs of states (with True against 1, NaN against NaN, -0.0 against 0, {} against [], keys
    holding a dot or a quote, lists of other lengths). Each row's path parses back to the place the reference
    names, and holds the same two values. (Mutants: a bool counted as a number in the one-pass walk, so
    ``True`` against ``1`` gave no row; NaN against NaN a row; a list turned into a dict walked by key.)"""
    rng = random.Random(53)
    for _ in range(5000):
        before = {k: state(rng, 1) for k in rng.sample(KEYS, rng.randint(0, 3))}
        after = mutate(rng, before) if rng.random() < 0.9 else {"a": state(rng, 1)}
        want = reference(before, after)
        for rows in (leaf_diff(before, after), _leaf_diff_general(before, after)):
            got = {parse_path(path): (b, a) for path, b, a in rows}
            assert len(got) == len(rows), rows  # one row per path
            assert got.keys() == want.keys(), (before, after, rows)
            for k, (b, a) in want.items():
                assert same(got[k][0], b) and same(got[k][1], a), (before, after, k)


@pytest.mark.parametrize(("before", "after", "rows"), [
    ({"a": True}, {"a": 1}, [("a", True, 1)]),                  # a bool is no number
    ({"a": [False]}, {"a": [0]}, [("a.0", False, 0)]),
    ({"a": {"x": 1}}, {"a": {"x": 1.0}}, []),                   # 1 is 1.0
    ({"a": [math.inf, -0.0]}, {"a": [math.inf, 0]}, []),
    ({"a": []}, {"a": {"k": 1}}, [("a", [], {"k": 1})]),        # a list became a dict: one row
    ({"a": None}, {}, [("a", None, ABSENT)]),                   # null is not absent
])
def test_leaf_diff_hand_worked(before: Any, after: Any, rows: list[tuple[str, Any, Any]]) -> None:
    assert leaf_diff(before, after) == rows


def test_a_path_holding_a_dot_a_bracket_or_a_quote_round_trips() -> None:
    for keys in [("a", "x.y"), ("a", "x]y", "b"), ("q\"", "0"), ("", "a"), ("a", "[0]"), ("é", "*")]:
        assert parse_path(format_path(keys)) == keys, keys
    assert parse_path('a["x\\"]y"].b') == ("a", 'x"]y', "b")  # an escaped quote does not end the key
    assert get_path({"x.y": {"z": 1}, "x": {"y": {"z": 2}}}, 'x.y.z') == 2
    assert get_path({"x.y": {"z": 1}, "x": {"y": {"z": 2}}}, '["x.y"].z') == 1


@pytest.mark.parametrize("path", ["a[00]", "a[-1]", "a[x]", "a['x']", "a.", ".a", "a..b", 'a["x"]b', "a[0"])
def test_a_malformed_path_is_refused(path: str) -> None:
    with pytest.raises(ValueError, match="path"):
        parse_path(path)


def test_a_list_index_is_ascii_digits_without_a_leading_zero() -> None:
    """README: ``items.0.qty`` names the first element; ``00``, ``٣`` (an Arabic-Indic three) and ``-1`` name a
    dict key only, so against a list they are absent."""
    items = [10, 11, 12, 13]
    assert [get_path({"t": items}, ["t", k]) for k in ["0", "3", "4", "00", "03", "٣", "-1"]] == [
        10, 13, ABSENT, ABSENT, ABSENT, ABSENT, ABSENT]
    assert get_path({"t": {"03": "k"}}, "t.03") == "k"
    assert [list_index(k) for k in ["0", "10", "01", "٣", "1 "]] == [0, 10, None, None, None]


def test_a_binary_distance_equal_to_the_tolerance_is_within_it() -> None:
    """The docstring: equal when ``|expected - actual| <= tolerance`` as binary floats *or* as written. 0.3 - 0.1
    is 0.19999999999999998 in binary (Python's own subtraction, the outside reference here); with exactly that
    tolerance the boundary is included, though as written the two are 0.2 apart. (Mutant: ``<`` for ``<=`` sent
    the boundary to the as-written test alone, which refused it.)"""
    tolerance = 0.3 - 0.1
    assert tolerance == 0.19999999999999998
    assert values_equal(0.3, 0.1, tolerance=tolerance) and values_equal(0.1, 0.3, tolerance=tolerance)
    assert not values_equal(0.3, 0.1, tolerance=0.19999999999999996)
    assert values_equal(40.0, 39.9, tolerance=0.1) and values_equal(1, 3, tolerance=2)
    assert not values_equal(True, 1, tolerance=5) and not values_equal(1, 3, tolerance=1.9999999999999998)


def test_flatten_keeps_empty_containers_as_leaves() -> None:
    """Docstring: empty dicts and lists are leaves (so ``{}`` and ``[]`` stay visible); the root never is."""
    assert flatten({"a": {}, "b": [], "c": [{}], "d": {"x.y": []}}) == {"a": {}, "b": [], "c.0": {}, 'd["x.y"]': []}
    assert flatten({}) == {} and flatten([]) == {}


def test_missing_none_and_absent_are_apart() -> None:
    assert get_path({"a": None}, "a") is None
    assert get_path({"a": None}, "a.b") is ABSENT
    assert get_path({"a": {}}, "a.b") is ABSENT
    assert get_path({"a": "text"}, "a.0") is ABSENT


def test_a_wildcard_matches_within_a_key_and_a_dot_in_it_is_literal() -> None:
    """``files["*.txt"]``: the dot is a character, not any character (a regex would take ``aXtxt``)."""
    pattern = parse_pattern('files["*.txt"]')
    assert pattern_matches(pattern, ("files", "a.txt"))
    assert not pattern_matches(pattern, ("files", "aXtxt"))
    assert find_paths({"files": {"a.txt": 1, "aXtxt": 2, "b.csv": 3}}, pattern) == [("files", "a.txt")]
    assert pattern_matches(parse_pattern("**.at"), ("at",)) and not pattern_matches(parse_pattern("*.at"), ("at",))
