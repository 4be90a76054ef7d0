"""List rules (``_core/lists.py``) against references written here, not the code's own output.

An ``unordered`` list is a multiset: a brute force over every injective assignment of expected elements to
actual ones, with a ``fits`` written from README's rules (``subset``: every expected leaf present and equal, a
``{"$absent": true}`` key gone; ``whole``: equal entirely), is the reference for the maximum matching of
:func:`~oloproof_nb._core.lists.bipartite` (its first meetings by text, and the rematch when one of them may
have cost a match). A ``by_key`` list pairs the n-th element of a key value with the n-th one of it.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import random
from collections import Counter
from typing import Any

import pytest

from oloproof_nb._core.compare import compare_state, list_diff, positional_rules
from oloproof_nb._core.lists import ListMatch
from oloproof_nb._core.paths import ABSENT

UNORDERED = {"t": ListMatch("unordered")}
BY_ID = {"t": ListMatch("by_key", "id")}
MISSING = object()
MARKER = {"$absent": True}
SCALARS: list[Any] = [0, 1, 1.0, 0.5, 1.5, True, False, None, "a", "1", math.nan]


def same(x: Any, y: Any, tolerance: float | None = None) -> bool:
    """JSON equality as README states it: ``1`` equals ``1.0``, a bool no number, NaN equals NaN; with
    ``tolerance`` two numbers (no bool) within it, the boundary included."""
    if isinstance(x, bool) or isinstance(y, bool):
        return type(x) is type(y) and x == y
    if isinstance(x, (int, float)) and isinstance(y, (int, float)):
        if x != x and y != y:
            return True
        return x == y or (tolerance is not None and abs(x - y) <= tolerance)
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(same(x[k], y[k], tolerance) for k in x)
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(same(a, b, tolerance) for a, b in zip(x, y, strict=True))
    return type(x) is type(y) and x == y


def subset_fits(e: Any, a: Any, tolerance: float | None = None) -> bool:
    """``subset`` mode: each key of a non-empty expected dict there and fitting (a marker: the key gone); an
    empty dict or a scalar equal."""
    if isinstance(e, dict) and e:
        here = a if isinstance(a, dict) else {}
        return all(k not in here if v == MARKER else k in here and subset_fits(v, here[k], tolerance)
                   for k, v in e.items())
    return same(e, a, tolerance)


def whole_fits(e: Any, a: Any, tolerance: float | None = None) -> bool:
    """``whole`` mode: equal entirely, a marker key gone."""
    if isinstance(e, dict) and isinstance(a, dict):
        kept = {k: v for k, v in e.items() if v != MARKER}
        return kept.keys() == a.keys() and all(whole_fits(v, a[k], tolerance) for k, v in kept.items())
    return same(e, a, tolerance)


def assignable(exp: list[Any], act: list[Any], fits: Any) -> bool:
    """Whether every expected element meets an actual one of its own (brute force over injections)."""
    return any(all(fits(e, act[j]) for e, j in zip(exp, perm, strict=True))
               for perm in itertools.permutations(range(len(act)), len(exp)))


def element(rng: random.Random, markers: bool) -> Any:
    if rng.random() < 0.4:
        return rng.choice(SCALARS)
    out: dict[str, Any] = {}
    for key in rng.sample(["k", "v"], rng.randint(0, 2)):
        out[key] = MARKER if markers and rng.random() < 0.25 else rng.choice(SCALARS)
    return out


def verdict(rows: list[Any]) -> bool:
    return all(ok for *_, ok in rows)


@pytest.mark.parametrize("tolerance", [None, 0.5])
def test_unordered_subset_is_a_maximum_matching_by_brute_force(tolerance: float | None) -> None:
    """3,000 random lists of up to 4 scalars and small dicts (absent markers, 1 and 1.0, True, NaN, numbers 0.5
    apart so that a tolerance of 0.5 fits 0 to 0.5 and 0.5 to 1 but not 0 to 1: fitting not transitive)."""
    rng = random.Random(53)
    for _ in range(3000):
        exp = [element(rng, True) for _ in range(rng.randint(1, 4))]
        act = [element(rng, False) for _ in range(rng.randint(0, 4))]
        want = assignable(exp, act, lambda e, a: subset_fits(e, a, tolerance))
        got = verdict(compare_state({"t": exp}, {"t": act}, "subset", tolerance=tolerance, lists=UNORDERED))
        assert got == want, (exp, act, tolerance)


@pytest.mark.parametrize("tolerance", [None, 0.5])
def test_unordered_whole_is_a_perfect_matching_by_brute_force(tolerance: float | None) -> None:
    rng = random.Random(530)
    for _ in range(3000):
        exp = [element(rng, True) for _ in range(rng.randint(0, 4))]
        act = [element(rng, False) for _ in range(rng.randint(0, 4))]
        want = len(exp) == len(act) and assignable(exp, act, lambda e, a: whole_fits(e, a, tolerance))
        got = verdict(compare_state({"t": exp}, {"t": act}, "whole", tolerance=tolerance, lists=UNORDERED))
        assert got == want, (exp, act, tolerance)


NESTED = {"t": ListMatch("unordered"), "t.*.items": ListMatch("by_key", "id")}


def key_text(value: Any) -> str:
    return json.dumps(int(value) if type(value) is float and value.is_integer() else value)


def items_fit(exp: list[Any], act: list[Any]) -> bool:
    """A ``by_key`` list in ``subset`` mode (README): ``{"id": v, "$absent": true}`` holds when no element has id
    ``v``; the n-th expected element of an id meets the n-th actual one of it; elements without ``id`` meet the
    actual ones without it as an ``unordered`` list; a non-empty expected list names elements, [] demands []."""
    if not exp:
        return not act
    keyed = [e for e in exp if "id" in e and not (len(e) == 2 and e.get("$absent") is True)]
    gone = [e["id"] for e in exp if "id" in e and len(e) == 2 and e.get("$absent") is True]
    if any(key_text(a["id"]) == key_text(v) for v in gone for a in act if "id" in a):
        return False
    seen: Counter[str] = Counter()
    for e in keyed:
        n = seen[key_text(e["id"])]
        seen[key_text(e["id"])] += 1
        mates = [a for a in act if "id" in a and key_text(a["id"]) == key_text(e["id"])]
        if n >= len(mates) or not subset_fits(e, mates[n]):
            return False
    return assignable([e for e in exp if "id" not in e], [a for a in act if "id" not in a], subset_fits)


def nested_fits(e: Any, a: Any) -> bool:
    """``subset_fits`` with the ``items`` list of an element matched ``by_key`` on ``id``."""
    if not (isinstance(e, dict) and "items" in e):
        return subset_fits(e, a)
    if not (isinstance(a, dict) and isinstance(a.get("items"), list)):
        return False
    rest = {k: v for k, v in e.items() if k != "items"}
    return items_fit(e["items"], a["items"]) and all(k in a and same(v, a[k]) for k, v in rest.items())


def nested(rng: random.Random, removals: bool) -> dict[str, Any]:
    items: list[Any] = []
    for _ in range(rng.randint(0, 2)):
        roll = rng.random()
        if removals and roll < 0.3:
            items.append({"id": rng.choice([1, 2, 2.0]), "$absent": True})
        elif roll < 0.85:
            items.append({"id": rng.choice([1, 2, 2.0])} | ({"q": rng.choice([0, 1])} if rng.random() < 0.4 else {}))
        else:
            items.append({"q": rng.choice([0, 1])})
    return {"n": "a", "items": items} if rng.random() < 0.8 else {"items": items}


def test_unordered_elements_holding_a_by_key_removal_by_brute_force() -> None:
    """Elements of an ``unordered`` list whose ``items`` are matched ``by_key`` and may ask an item gone: 2,000
    random lists against the brute force above, expected elements often a copy of an actual one, actual ones
    often a copy of another with an item more. (Bug found here, 2 lists of the 2,000: such an element was taken
    for one whose equal text fits wherever it does, so a first meeting by text could take the only partner
    of an element asking an item gone, and the case failed though a full matching existed; hand-worked below.)"""
    rng = random.Random(5300)
    for _ in range(2000):
        act = [nested(rng, False)]
        for _ in range(rng.randint(0, 2)):  # an element, or a copy of one with an item more (it fits more)
            grown = copy.deepcopy(rng.choice(act)) if rng.random() < 0.5 else None
            if grown is not None:
                grown.setdefault("items", []).append({"id": rng.choice([1, 2])})
            act.append(grown if grown is not None else nested(rng, False))
        rng.shuffle(act)
        exp = [copy.deepcopy(rng.choice(act)) if rng.random() < 0.4 else nested(rng, True)  # equal texts too
               for _ in range(rng.randint(1, 3))]
        want = assignable(exp, act, nested_fits)
        got = verdict(compare_state({"t": exp}, {"t": act}, "subset", lists=NESTED))
        assert got == want, (exp, act)


def test_an_element_asking_an_item_gone_is_not_robbed_by_a_first_meeting() -> None:
    """Hand-worked: ``{"n": "a", "items": [{"id": 2}]}`` fits both actual elements (the second
    holds id 2 and more), the removal of id 1 only the first, so the one full matching pairs 0->1 and 1->0 and
    the case passes; before, the first expected element met its equal text at 0 and the second was unmatched."""
    exp = [{"n": "a", "items": [{"id": 2}]}, {"n": "a", "items": [{"id": 1, "$absent": True}]}]
    act = [{"n": "a", "items": [{"id": 2}]}, {"n": "a", "items": [{"id": 2}, {"id": 1}]}]
    rows = compare_state({"t": exp}, {"t": act}, "subset", lists=NESTED)
    assert rows == [("t.1.n", "a", "a", True), ("t.1.items.0.id", 2, 2, True),
                    ("t.0.n", "a", "a", True), ("t.0.items.<id=1>", ABSENT, ABSENT, True)]
    whole = compare_state({"t": exp}, {"t": act}, "whole", lists=NESTED)  # exp 0 equals act 0 only: no pairing
    assert not verdict(whole)


def test_a_first_meeting_by_text_gives_way_to_an_element_that_asks_a_key_gone() -> None:
    """Hand-worked: ``{"a": 1}`` fits both actual elements (subset), ``{"a": 1, "b": gone}`` only the first, so
    the only full matching pairs 0->1 and 1->0; meeting ``{"a": 1}`` with its equal text first would leave the
    second unmatched. (Mutant: the absent marker no longer made the lists unsafe, and this case failed.)"""
    exp = [{"a": 1}, {"a": 1, "b": MARKER}]
    act = [{"a": 1}, {"a": 1, "b": 2}]
    rows = compare_state({"t": exp}, {"t": act}, "subset", lists=UNORDERED)
    assert rows == [("t.1.a", 1, 1, True), ("t.0.a", 1, 1, True), ("t.0.b", ABSENT, ABSENT, True)]


def canon(value: Any) -> str:
    """Canonical JSON with integral floats as integers (1.0 is 1), bools kept apart (JSON ``true``)."""
    def norm(v: Any) -> Any:
        if type(v) is float and v.is_integer():
            return int(v)
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, list):
            return [norm(x) for x in v]
        return v
    return json.dumps(norm(value), sort_keys=True)


def test_list_diff_of_an_unordered_list_is_the_multiset_difference() -> None:
    """``list_diff`` of an ``unordered`` list finds no row exactly when the two lists are equal multisets
    (``Counter`` of canonical JSON: 1 and 1.0 alike, also inside a dict or a list element; True apart), and
    reports one ``<unmatched i>`` row per element of ``before`` the multiset difference holds. (Mutant: the
    text an element is aligned by kept ``1.0`` inside a dict, so ``{"a": 1}`` and ``{"a": 1.0}`` differed.)"""
    rng = random.Random(5353)
    pool: list[Any] = [1, 1.0, True, "1", None, {"a": 1}, {"a": 1.0}, {"a": True}, [1, 2.0], [1.0, 2], [2, 1], {}]
    for _ in range(2000):
        before = [rng.choice(pool) for _ in range(rng.randint(0, 4))]
        after = [rng.choice(pool) for _ in range(rng.randint(0, 4))]
        rows = list_diff({"t": before}, {"t": after}, UNORDERED)
        gone = Counter(map(canon, before)) - Counter(map(canon, after))
        unmatched = Counter(canon(b) for path, b, a in rows if path.startswith("t.<unmatched "))
        assert unmatched == gone, (before, after, rows)
        assert (rows == []) == (Counter(map(canon, before)) == Counter(map(canon, after))), (before, after)


def test_by_key_pairs_the_nth_element_of_a_key_with_the_nth() -> None:
    """Hand-worked: two elements share id 1; the first expected meets the first actual, the second the second,
    so both pass and the rows sit at 0 and 1. (Mutant: the last free actual one was taken, crossing the pairs
    and failing both.)"""
    exp = [{"id": 1, "v": "a"}, {"id": 1, "v": "b"}]
    act = [{"id": 1.0, "v": "a"}, {"id": 1, "v": "b"}]
    rows = compare_state({"t": exp}, {"t": act}, "subset", lists=BY_ID)
    assert rows == [("t.0.id", 1, 1.0, True), ("t.0.v", "a", "a", True),
                    ("t.1.id", 1, 1, True), ("t.1.v", "b", "b", True)]


def test_by_key_tells_a_bool_key_and_a_text_key_from_a_number() -> None:
    """``True``, ``"1"`` and ``1`` are three key values (README: values compared as JSON values; a bool is no
    number, text no number), ``1.0`` is ``1``."""
    act = [{"id": 1, "v": 0}]
    for key, ok in [(True, False), ("1", False), (1.0, True), (1, True)]:
        assert verdict(compare_state({"t": [{"id": key, "v": 0}]}, {"t": act}, lists=BY_ID)) is ok, key


def test_an_element_meets_the_first_free_equal_element() -> None:
    """``bipartite``'s docstring: each element first meets the *first* free actual element of its text, as the
    diff aligns the list; so in ``whole`` mode the surplus copy is the later one, ``t.1``, and ``list_diff``
    (the n-th of a text before meets the n-th after) reports the appended copy at ``t.1``, not ``t.0``.
    (Mutants: the last free element taken, which put the surplus row at ``t.0``.)"""
    rows = compare_state({"t": ["x"]}, {"t": ["x", "x"]}, "whole", lists=UNORDERED)
    assert rows == [("t.0", "x", "x", True), ("t.1", ABSENT, "x", False)]
    assert list_diff({"t": ["x"]}, {"t": ["x", "x"]}, UNORDERED) == [("t.1", ABSENT, "x")]


class Loose(str):
    """A text whose ``==`` ignores case (a ``str`` subclass, as a Python caller may pass in ``expected``)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and self.lower() == other.lower()

    __hash__ = str.__hash__


def test_an_expected_text_subclass_is_no_anchor() -> None:
    """A leaf is compared with its own ``==`` (``Loose("a") == "A"``), so a ``str`` subclass in an expected
    element may fit an actual text of another value and must not narrow the candidates to that value.
    (Mutant: ``_text_leaves`` took any ``str`` instance as an anchor, and the element went unmatched.)"""
    assert Loose("a") == "A"
    rows = compare_state({"t": [{"k": Loose("a")}]}, {"t": [{"k": "b"}, {"k": "A"}]}, lists=UNORDERED)
    assert rows == [("t.1.k", "a", "A", True)]


def test_only_a_list_index_key_makes_a_rule_positional() -> None:
    """``{"tags": {"0": "new"}}`` reads the first element (README), so the rule turns ``ordered``; ``"00"`` and
    ``"٣"`` are no list index (ASCII digits, no leading zero), read no element (the subset row is absent), and
    leave the rule alone. (Mutant: any ``isdigit`` key made the rule ``ordered``.)"""
    assert positional_rules(UNORDERED, {"t": {"0": "y"}}) == {"t": ListMatch("ordered")}
    for key in ["00", "٣", "01"]:
        assert positional_rules(UNORDERED, {"t": {key: "y"}}) == UNORDERED, key
        assert compare_state({"t": {key: "y"}}, {"t": ["y", "y"]}) == [(f"t.{key}", "y", ABSENT, False)], key
