"""List matching asks ``fits`` only of the pairs an expected element's text leaves allow (lists._Anchors).

That must leave every result as it was: the reference below is the matching as it stood before, which asked
``fits`` of every pair (Hopcroft–Karp over the whole graph); hypothesis compares every row of every mode on
lists whose elements share or differ in text leaves, with tolerances, ignore patterns (wildcards that match
some indexes only), nested lists, ``str`` subclasses and absent markers.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import oloproof_nb._core.compare as compare
import oloproof_nb._core.lists as matching
from oloproof_nb._core.compare import compare_state
from oloproof_nb._core.lists import ListMatch
from oloproof_nb._core.paths import ABSENT


def reference_hopcroft_karp(left: list[int], right: list[int], fits: Any, candidates: Any = None) -> dict[int, int]:
    """The matching before the anchors (``candidates`` ignored): ``fits`` asked of every pair."""
    edges = [(a, b) for a, i in enumerate(left) for b, j in enumerate(right) if fits(i, j)]
    if not edges:
        return {}
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    rows, cols = np.array(edges, dtype=np.int64).T
    graph = csr_matrix((np.ones(len(edges), dtype=np.int8), (rows, cols)), shape=(len(left), len(right)))
    return {left[a]: right[b] for a, b in enumerate(maximum_bipartite_matching(graph, perm_type="column").tolist())
            if b >= 0}


class Loose(str):
    """A text whose ``==`` ignores case: a ``str`` subclass the anchors may not index by its value."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and self.lower() == other.lower()

    __hash__ = str.__hash__


texts = st.sampled_from(["a", "b", "A", "x"]) | st.builds(Loose, st.sampled_from(["a", "B"]))
scalars = st.one_of(texts, st.integers(0, 3), st.sampled_from([0.5, 1.0, 1.04, True, None]))
leaves = st.one_of(scalars, st.just({"$absent": True}))
elements = st.recursive(
    leaves,
    lambda inner: st.one_of(st.dictionaries(st.sampled_from(["id", "k", "v", "at"]), inner, max_size=3),
                            st.lists(inner, max_size=2)),
    max_leaves=6)
lists = st.lists(elements, max_size=6)
rules = st.sampled_from([ListMatch("unordered"), ListMatch("by_key", "id"), ListMatch("by_key", "k")])
ignores = st.lists(st.sampled_from(["t.*.at", "t.1*", "t.*.k.*", "**.v", "t.0", "t"]), max_size=2)


def both(fn: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    asked = fn()
    with monkeypatch.context() as m:
        m.setattr(matching, "_hopcroft_karp", reference_hopcroft_karp)
        reference = fn()
    return asked, reference


def test_the_reference_matching_is_the_one_the_comparison_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """``both`` swaps ``_hopcroft_karp`` where ``bipartite`` looks it up (``_core/lists.py``): swapped anywhere
    else, every property below would compare the anchored matching with itself and pass. Hand count: the two
    elements differ as text (1.0 and 1.01), so no first meeting pairs them and Hopcroft–Karp is asked once, with
    the one leftover expected element; within the tolerance they fit."""
    calls: list[tuple[list[int], list[int]]] = []
    real = reference_hopcroft_karp

    def recorded(left: list[int], right: list[int], fits: Any, candidates: Any = None) -> dict[int, int]:
        calls.append((list(left), list(right)))
        return real(left, right, fits, candidates)

    monkeypatch.setitem(globals(), "reference_hopcroft_karp", recorded)

    def run() -> Any:
        return compare_state({"t": [{"k": "a", "n": 1.0}]}, {"t": [{"k": "a", "n": 1.01}]}, "whole", tolerance=0.05,
                             lists={"t": ListMatch("unordered")})

    rows, reference = both(run, monkeypatch)
    assert calls == [([0], [0])]
    assert rows == reference == [("t.0.k", "a", "a", True), ("t.0.n", 1.0, 1.01, True)]


def same(rows: Any, reference: Any) -> bool:
    return repr(rows) == repr(reference)  # NaN-free; ABSENT prints as <absent>; types kept (1 vs 1.0 vs True)


#: Examples per property (ANCHOR_EXAMPLES=20000 for a long run; the suite keeps each test under 2 s).
EXAMPLES = int(os.environ.get("ANCHOR_EXAMPLES", 150))
FIXTURE = [HealthCheck.function_scoped_fixture]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=FIXTURE)
@given(exp=lists, act=lists, before=lists, rule=rules, mode=st.sampled_from(["whole", "subset", "changes"]),
       tolerance=st.sampled_from([None, 0.05]), ignore=ignores, nested=st.booleans())
def test_the_anchored_matching_gives_the_rows_of_the_matching_over_every_pair(
        monkeypatch: pytest.MonkeyPatch, exp: list[Any], act: list[Any], before: list[Any], rule: ListMatch,
        mode: str, tolerance: float | None, ignore: list[str], nested: bool) -> None:
    lists_ = {"t": rule, "t.*.v": ListMatch("unordered")} if nested else {"t": rule}

    def run() -> Any:
        return compare_state({"t": exp}, {"t": act}, mode, tolerance=tolerance, lists=lists_, ignore=ignore,
                             initial={"t": before})

    rows, reference = both(run, monkeypatch)
    assert same(rows, reference)


@settings(max_examples=max(1, EXAMPLES // 3), deadline=None, suppress_health_check=FIXTURE)
@given(base=st.lists(st.fixed_dictionaries({"memo": st.sampled_from(["m1", "m2", "m3"]),
                                            "amount": st.sampled_from([1.0, 1.01, 2.0]),
                                            "at": st.sampled_from(["t1", "t2"])}), max_size=8),
       data=st.data())
def test_shuffled_and_edited_rows_match_as_before(monkeypatch: pytest.MonkeyPatch, base: list[dict[str, Any]],
                                                 data: st.DataObject) -> None:
    """The lists the anchors are for: equal text fields, numbers within a tolerance, an ignored field."""
    act = data.draw(st.permutations(base))
    exp = [dict(e, at="t0") if data.draw(st.booleans()) else e for e in base]
    tolerance = data.draw(st.sampled_from([None, 0.02]))

    def run() -> Any:
        return compare_state({"t": exp}, {"t": act}, "whole", tolerance=tolerance,
                             lists={"t": ListMatch("unordered")}, ignore=["t.*.at"])

    rows, reference = both(run, monkeypatch)
    assert same(rows, reference)


def test_a_failing_check_on_a_long_list_asks_fits_once_per_element_not_per_pair(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """1,000 elements with a tolerance, one amount off: the first meetings leave it unmatched, and the rematch
    of the whole lists asked ``fits`` of all 1,000,000 pairs (13 s)."""
    act = [{"memo": f"m{i}", "amount": i + 0.5} for i in range(1000)]
    exp = [dict(e) for e in reversed(act)]
    exp[0]["amount"] = -1
    calls = []
    real = compare._equal

    def counted(*args: Any) -> bool:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(compare, "_equal", counted)
    rows = compare_state({"t": exp}, {"t": act}, "whole", tolerance=0.01, lists={"t": ListMatch("unordered")})
    failing = [row[:3] for row in rows if not row[3]]
    # hand count: the edited element meets nothing (it is reported whole, by its index in the expected list), the
    # element it was made from is left over (its two leaves unexpected); the other 999 elements hold, two rows
    # each. fits is asked of the edited element against its one partner by text (memo m999) in the leftover
    # matching, then once per element in the rematch: 1 + 1,000, where every pair would be 1 + 1,000,000
    assert failing == [("t.<unmatched 0>", exp[0], ABSENT), ("t.999.memo", ABSENT, "m999"),
                       ("t.999.amount", ABSENT, 999.5)]
    assert len(rows) == 1 + 2 + 2 * 999
    assert len(calls) == 1001


def test_a_text_subclass_is_a_candidate_whatever_its_value() -> None:
    """``Loose("ABC")`` equals ``"abc"`` by its own ``==``: indexed by its value it was no candidate for an
    expected ``"abc"`` and the element went unmatched."""
    rows = compare_state({"t": [{"k": "abc", "n": 1}]}, {"t": [{"k": Loose("ABC"), "n": 1}]}, "whole",
                         lists={"t": ListMatch("unordered")})
    assert rows == [("t.0.k", "abc", "ABC", True), ("t.0.n", 1, 1, True)]


def test_elements_that_name_only_numbers_are_anchored_by_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """300 expected elements ``{"amount": i}`` in ``subset`` mode, each inside an actual ``{"amount": i, "ok":
    true}`` in reverse order: no text is equal and no element holds a text leaf, so ``fits`` was asked of all
    90,000 pairs (1,000 elements: 16 s)."""
    act = [{"amount": i, "ok": True} for i in reversed(range(300))]
    exp = [{"amount": i} for i in range(300)]
    calls = []
    real = compare._subset

    def counted(*args: Any) -> None:
        calls.append(1)
        real(*args)

    monkeypatch.setattr(compare, "_subset", counted)
    rows = compare_state({"t": exp}, {"t": act}, "subset", lists={"t": ListMatch("unordered")})
    assert rows == [(f"t.{299 - i}.amount", i, i, True) for i in range(300)]
    # hand count: one call for the list; each element fits its one candidate by its amount (a call for the
    # element, one for its leaf), and is compared once more for its rows: 1 + 300 * 2 + 300 * 2, where every
    # pair would be 1 + 90,000 * 2 + 300 * 2
    assert len(calls) == 1201


def test_a_number_anchors_only_where_no_tolerance_applies() -> None:
    """With a tolerance, 1.004 fits 1.0 though their texts differ; ``true`` never fits ``1``; ``1.0`` fits ``1``."""
    unordered = {"t": ListMatch("unordered")}
    rows = compare_state({"t": [{"n": 1.0, "x": 1}]}, {"t": [{"n": 1.004, "x": 1, "y": 0}]}, "subset",
                         tolerance=0.01, lists=unordered)
    assert rows == [("t.0.n", 1.0, 1.004, True), ("t.0.x", 1, 1, True)]
    rows = compare_state({"t": [{"n": 1, "x": 1}]}, {"t": [{"n": True, "x": 1, "y": 0}, {"n": 1.0, "x": 1, "y": 0}]},
                         "subset", lists=unordered)
    assert rows == [("t.1.n", 1, 1.0, True), ("t.1.x", 1, 1, True)]


def test_a_text_leaf_after_four_number_leaves_still_anchors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Orders that share their first four leaves (``qty``, ``paid``, ``note``, ``ref``) and differ by ``id``:
    counted with the numbers, the first four leaves tried were the shared ones, each leaving every element a
    candidate, so ``fits`` was asked of nearly every pair (1,000 orders: 26 s, against 0.4 s when only texts
    anchored)."""
    act = [{"qty": 1, "paid": True, "note": None, "ref": None, "id": f"o{i}", "at": i} for i in reversed(range(300))]
    exp = [{"qty": 1, "paid": True, "note": None, "ref": None, "id": f"o{i}"} for i in range(300)]
    calls = []
    real = compare._subset

    def counted(*args: Any) -> None:
        calls.append(1)
        real(*args)

    monkeypatch.setattr(compare, "_subset", counted)
    rows = compare_state({"t": exp}, {"t": act}, "subset", lists={"t": ListMatch("unordered")})
    assert len(rows) == 300 * 5 and all(row[3] for row in rows)
    # hand count: one call for the list; each element fits its one candidate by its id (a call for the element,
    # one for each of its five leaves), and is compared once more for its rows: 1 + 300 * 6 + 300 * 6
    assert len(calls) == 3601


def test_number_paths_leave_room_for_the_text_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """32 elements each named by a number under a key of its own, then 300 orders named by ``id``: the 32 number
    paths took every index an :class:`_Anchors` builds, ``id`` got none, and each order was asked ``fits`` of every
    order left (210,185 calls for 40 such elements, 28,481 when only texts anchored)."""
    exp = [{f"m{k}": 1} for k in range(32)] + [{"id": f"o{i}"} for i in range(300)]
    act = [{f"m{k}": 1, "x": 0} for k in range(32)] + [{"id": f"o{i}", "at": i} for i in reversed(range(300))]
    calls = []
    real = compare._subset

    def counted(*args: Any) -> None:
        calls.append(1)
        real(*args)

    monkeypatch.setattr(compare, "_subset", counted)
    rows = compare_state({"t": exp}, {"t": act}, "subset", lists={"t": ListMatch("unordered")})
    assert len(rows) == 332 and all(row[3] for row in rows)
    # hand count: one call for the list; each of the 332 elements fits its one candidate (a call for the element,
    # one for its leaf) and is compared once more for its rows: 1 + 332 * 2 + 332 * 2
    assert len(calls) == 1329


def test_number_leaves_past_the_tries_are_not_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """An element of many number leaves and no text is walked to its end for a text to try, but only the numbers
    tried are written (:func:`same_text`): each was, and a list of 1,000 elements of 1,000 such leaves took 8 s
    in the anchors alone."""
    act = [{"id": i, "scores": {f"k{k}": k for k in range(200)}, "x": 0} for i in reversed(range(50))]
    exp = [{"id": i, "scores": {f"k{k}": k for k in range(200)}} for i in range(50)]
    written = []
    real = matching.same_text

    def counted(value: Any) -> str:
        written.append(value)
        return real(value)

    monkeypatch.setattr(matching, "same_text", counted)
    anchors = matching._Anchors(act, None, numbers=True)
    assert [anchors.candidates(element) for element in exp] == [[49 - i] for i in range(50)]
    # hand count: four number paths tried (id, scores.k0, scores.k1, scores.k2), each indexed over the 50 actual
    # elements once, and each of the 50 expected elements writes its four leaves tried: 4 * 50 + 50 * 4
    assert len(written) == 400


def test_a_number_subclass_in_the_state_is_a_candidate_whatever_its_text() -> None:
    """A state built with NumPy or an ``IntEnum`` holds numbers of a subclass, which the comparison finds equal
    to the plain number (``values_equal(2.5, numpy.float64(2.5))``): an element anchored by its number still
    fits them, as an element anchored by its text fits a ``str`` subclass."""
    import enum

    import numpy as np

    class Code(enum.IntEnum):
        OK = 5

    unordered = {"t": ListMatch("unordered")}
    rows = compare_state({"t": [{"amount": 2.5}]}, {"t": [{"amount": np.float64(2.5), "ok": True}]}, "subset",
                         lists=unordered)
    assert [(path, want, float(got), bool(ok)) for path, want, got, ok in rows] == [("t.0.amount", 2.5, 2.5, True)]
    rows = compare_state({"t": [{"code": 5}]}, {"t": [{"code": Code.OK, "ok": True}]}, "subset", lists=unordered)
    assert rows == [("t.0.code", 5, Code.OK, True)]


def test_a_path_holding_a_text_in_one_element_and_a_number_in_another_anchors_each_by_its_own_kind() -> None:
    """Hand count: ``{"v": "x"}`` sits in the second actual element and ``{"v": 5}`` in the first; the number 5 is
    no text ``"5"``, and the text ``"x"`` no number, so each kind of leaf at ``v`` has an index of its own."""
    rows = compare_state({"t": [{"v": "x"}, {"v": 5}]}, {"t": [{"v": 5, "w": 1}, {"v": "x", "w": 2}]}, "subset",
                         lists={"t": ListMatch("unordered")})
    assert rows == [("t.1.v", "x", "x", True), ("t.0.v", 5, 5, True)]
    rows = compare_state({"t": [{"v": "5"}, {"v": 5}]}, {"t": [{"v": 5, "w": 1}, {"v": "5", "w": 2}]}, "subset",
                         lists={"t": ListMatch("unordered")})
    assert rows == [("t.1.v", "5", "5", True), ("t.0.v", 5, 5, True)]
