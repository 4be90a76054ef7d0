"""Matching the elements of a list by the rule of its path: which expected element meets which actual one.

A list is matched by its :class:`ListMatch`: ``ordered`` (position by position, the default), ``unordered``
(a maximum matching over whether two elements fit, :func:`bipartite`) or ``by_key`` (the n-th element with a
key value meets the n-th one with it; elements without the key field as ``unordered``, :func:`match_by_key`). What
a pairing means for a check (its rows, the diff of ``changes`` mode, removals) is
:mod:`~oloproof_nb._core.compare`'s, which imports this module (never the other way), with the helpers both
read: the absent marker (:func:`is_absent_marker`), a child by path key (:func:`child_at`), a key field
(:func:`key_field`), and the text a value is bucketed by (:func:`same_text`) or labelled with (:func:`key_text`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .canonical import canonical_json
from .paths import ABSENT, list_index

__all__ = [
    "is_absent_marker",
    "ListMatch",
]

Keys = tuple[str, ...]


def is_absent_marker(value: Any) -> bool:
    """True for :data:`~oloproof_nb.ABSENT` and for its JSON form ``{"$absent": true}``.

    Examples
    --------
    >>> is_absent_marker({"$absent": True}), is_absent_marker(ABSENT), is_absent_marker({"$absent": False})
    (True, True, False)
    """
    return value is ABSENT or (type(value) is dict and len(value) == 1 and value.get("$absent") is True)


@dataclass(frozen=True)
class ListMatch:
    """How the elements of a list are matched: ``ordered``, ``unordered`` or ``by_key`` (on field ``key``).

    Examples
    --------
    >>> ListMatch("by_key", "id")
    ListMatch(how='by_key', key='id')
    """

    how: Literal["ordered", "unordered", "by_key"] = "ordered"
    key: str | None = None


ORDERED = ListMatch()


def child_at(node: Any, key: str) -> Any:
    """``node[key]`` for a dict, ``node[int(key)]`` for a list and a digit key (path addressing), else ABSENT."""
    if isinstance(node, Mapping):
        return node.get(key, ABSENT)
    if isinstance(node, list) and (idx := list_index(key)) is not None:
        return node[idx] if idx < len(node) else ABSENT
    return ABSENT


def key_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is ABSENT:
        return "(none)"
    return json.dumps(_integral(value), ensure_ascii=False, sort_keys=True, default=str)  # 1.0 labeled as 1


def same_text(value: Any) -> str:
    """Canonical JSON of ``value`` with integral floats written as integers, so values the comparison finds
    equal (``1`` and ``1.0``) get one text; booleans stay apart (``true`` is not ``1``). What list rules
    bucket by: a ``by_key`` key value, an element of an ``unordered`` list in the diff of ``changes`` mode."""
    return canonical_json(_integral(value))


def _integral(value: Any) -> Any:
    if type(value) is float and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


def key_field(element: Any, key: str | None) -> Any:
    return element.get(key, ABSENT) if isinstance(element, Mapping) and key is not None else ABSENT


def _text(value: Any) -> str | None:
    """The text a list element is first matched by in :func:`bipartite` (:func:`same_text`); None for one
    that may not be: it holds an absent marker (which asks for a key to be gone, so an equal text does not
    fit), or is no JSON."""
    try:
        text = same_text(value)
    except (TypeError, ValueError, RecursionError):
        return None
    return None if '"$absent"' in text else text


#: ``hidden(j, path)``: whether ``fits`` leaves the leaf at ``path`` of actual element ``j`` uncompared.
Hidden = Callable[[int, Keys], bool]
#: Text leaves, and number leaves, of an expected element tried as its anchor; paths of text leaves, and of number
#: leaves, an :class:`_Anchors` indexes at most.
_ANCHOR_TRIES = 4
_ANCHOR_PATHS = 32


def _text_leaves(node: Any, numbers: bool = False, keys: Keys = ()) -> Iterator[tuple[Keys, bool, Any]]:
    """The ``str`` leaves of ``node`` reached through dicts only (no list: its rule may reorder it), as ``(path,
    True, text)``; with ``numbers``, its numbers, booleans and nulls too, as ``(path, False, value)`` (its
    :func:`same_text` is written by the reader, only for the leaves it tries: an element of a thousand number
    leaves and no text is walked to its end for a text, and writing each took 8 s for a list of 1,000)."""
    if type(node) is str:
        yield keys, True, node
    elif numbers and type(node) in _SCALARS:
        yield keys, False, node
    elif isinstance(node, Mapping) and not is_absent_marker(node):
        for key, value in node.items():
            yield from _text_leaves(value, numbers, (*keys, key))


#: The types of a leaf that anchors by its :func:`same_text` where no tolerance applies: two such values are equal
#: for ``values_equal`` exactly when their texts are (``1`` and ``1.0`` are both ``1``; ``true`` is no ``1``).
_SCALARS = frozenset({int, float, bool, type(None)})


class _Anchors:
    """The actual elements an expected element may fit, found by one of its text leaves (its anchor).

    Every rule compares a ``str`` leaf of an expected value by equality (no tolerance applies to text, and a
    ``str`` equals no other type), at the same dict path of the actual element. So an expected element
    whose leaf at ``path`` is the text ``t`` fits only actual elements whose value there is ``t``, or a
    ``str`` subclass (its ``==`` is its own), or where ``hidden`` says the leaf is not compared (an ignore
    pattern of ``whole`` mode). Without a tolerance (``numbers``) a number, boolean or null leaf anchors the
    same way, by its :func:`same_text`: it fits only an actual number, boolean or null of the same text there, or
    a subclass of ``int`` or ``float``, or a hidden leaf (before, elements that named only numbers, ``{"amount":
    5}`` expected in ``{"amount": 5, "ok": true}``, asked ``fits`` of every pair: 16 s for a list of 1,000 in
    ``subset`` mode). Each path's index is built on first use; of an element's first :data:`_ANCHOR_TRIES`
    text leaves and first :data:`_ANCHOR_TRIES` number leaves the one with the fewest candidates is used (counted
    together, four numbers that many elements share, ``{"qty": 1, "paid": true, ...}``, kept a text that tells the
    elements apart from being tried, and the check asked ``fits`` of nearly every pair).
    """

    def __init__(self, act: Sequence[Any], hidden: Hidden | None, numbers: bool = False) -> None:
        self._act = act
        self._hidden = hidden
        self._numbers = numbers
        self._index: dict[tuple[Keys, bool], tuple[dict[str, list[int]], list[int]]] = {}
        self._built = {True: 0, False: 0}  # paths indexed, of text leaves and of number leaves

    def _at(self, path: Keys, text: bool) -> tuple[dict[str, list[int]], list[int]] | None:
        found = self._index.get((path, text))
        if found is None and self._built[text] < _ANCHOR_PATHS:
            self._built[text] += 1
            exact: dict[str, list[int]] = {}
            loose: list[int] = []
            for j, element in enumerate(self._act):
                value = element
                for key in path:
                    value = child_at(value, key)
                if self._hidden is not None and self._hidden(j, path):
                    loose.append(j)
                elif text:
                    if type(value) is str:
                        exact.setdefault(value, []).append(j)
                    elif isinstance(value, str):
                        loose.append(j)
                elif type(value) in _SCALARS:
                    try:
                        exact.setdefault(same_text(value), []).append(j)
                    except ValueError:  # an int too long to write
                        loose.append(j)
                elif isinstance(value, (int, float)):
                    loose.append(j)
            found = self._index[path, text] = (exact, loose)
        return found

    def candidates(self, element: Any) -> list[int] | None:
        """The actual indexes ``element`` may fit, ascending; None when it has no leaf to go by."""
        best: list[int] | None = None
        tried = {True: 0, False: 0}  # texts and numbers counted apart: a text is never passed over for numbers
        for path, is_text, leaf in _text_leaves(element, self._numbers):
            if tried[is_text] == _ANCHOR_TRIES:
                if tried[not is_text] == _ANCHOR_TRIES or not self._numbers:
                    break
                continue
            try:
                text = leaf if is_text else same_text(leaf)
            except ValueError:  # an int too long to write: no anchor
                continue
            tried[is_text] += 1
            index = self._at(path, is_text)
            if index is None:
                continue
            exact, loose = index
            near = exact.get(text, [])
            if best is None or len(near) + len(loose) < len(best):  # an ignored leaf: every index, not built
                best = sorted(near + loose) if loose else near
        return best


def bipartite(exp: Sequence[Any], act: Sequence[Any], fits: Any, safe: bool, hidden: Hidden | None = None,
               ) -> dict[int, int]:
    """A maximum matching of ``exp``'s indexes to ``act``'s over ``fits(i, j)``.

    First each element meets the first free actual element of the same text (equal values always fit),
    in list order, as the diff of ``changes`` mode aligns a list; what is left is matched by Hopcroft–Karp
    (scipy's ``maximum_bipartite_matching``; Hopcroft & Karp 1973; no recursion, whatever the length). A
    1,000-element list of equal elements is matched without a million ``fits`` calls. When that leaves an
    element unmatched, and a first meeting may have taken the one partner another element needed, the whole
    lists are matched by Hopcroft–Karp instead, so the matching is always a maximum one. A first meeting can
    cost a match only where fitting is not transitive: an element that asks for a key (or an element of a
    ``by_key`` list inside it) to be gone, a tolerance, an ignore pattern or list rule naming an index (``safe``
    False). Otherwise (equal values, or a subset of a subset) whatever another element would have fitted
    through the actual element taken, it fits through the one left, and a failing case (one line of 1,200
    missing) costs no pass over every pair.

    Hopcroft–Karp calls ``fits`` only on the pairs :class:`_Anchors` leaves (``hidden`` says which leaves of
    an actual element ``fits`` does not compare): the same edges, so the same matching, without a call per
    pair when the elements carry a text field (1,000 elements, each with a text of its own: 0.03–0.08 s a
    check, against 7.4–16.0 s with a ``fits`` call per pair; ``python benchmarks/hostile.py``,
    benchmarks/README.md), or, when ``safe`` (no tolerance), a number.
    """
    numbers = safe  # a safe fitting has no tolerance (_Rules.transitive): its numbers anchor as its texts do
    out: dict[int, int] = {}
    free: dict[str, list[int]] = {}
    for j in reversed(range(len(act))):  # popped from the end: the first actual element of a text first
        text = _text(act[j])
        if text is not None:
            free.setdefault(text, []).append(j)
    left = []
    for i, element in enumerate(exp):
        text = _text(element)
        safe = safe and (text is not None or _absent_free(element))
        slots = free.get(text) if text is not None else None
        if slots:
            out[i] = slots.pop()
        else:
            left.append(i)
    if not left:
        return out
    used = set(out.values())
    anchors = _Anchors(act, hidden, numbers)

    def candidates(i: int) -> list[int] | None:
        return anchors.candidates(exp[i])

    out.update(_hopcroft_karp(left, [j for j in range(len(act)) if j not in used], fits, candidates))
    if len(out) < len(exp) and not safe:  # the first meetings may have cost a match: match everything at once
        whole = _hopcroft_karp(list(range(len(exp))), list(range(len(act))), fits, candidates)
        if len(whole) > len(out):
            return whole
    return out


def _absent_free(value: Any) -> bool:
    """Whether ``value`` holds no absent marker (a value that is no JSON may still hold one) and no ``"$absent"``
    key at all: a ``by_key`` removal ``{FIELD: value, "$absent": true}`` in a list inside an element asks for an
    element to be gone as a marker asks for a key, so such an element fits fewer actual elements than one of
    equal text, and a first meeting may take its only partner (before, only markers counted)."""
    if is_absent_marker(value):
        return False
    if isinstance(value, Mapping):
        return "$absent" not in value and all(_absent_free(v) for v in value.values())
    if isinstance(value, list):
        return all(_absent_free(v) for v in value)
    return True


def _hopcroft_karp(left: list[int], right: list[int], fits: Any,
                   candidates: Callable[[int], list[int] | None] = lambda i: None) -> dict[int, int]:
    """A maximum matching of the indexes ``left`` to ``right`` (both ascending) over ``fits(i, j)``, asked only
    of the ``j`` in ``candidates(i)`` (ascending; None: every one), which must hold every ``j`` that fits."""
    edges: list[tuple[int, int]] = []
    position = {j: b for b, j in enumerate(right)}
    for a, i in enumerate(left):
        near = candidates(i)
        if near is None:
            edges.extend((a, b) for b, j in enumerate(right) if fits(i, j))
        else:  # in the same order as above: the graph, and so the matching, is the same
            edges.extend((a, position[j]) for j in near if j in position and fits(i, j))
    if not edges:
        return {}
    import numpy as np  # first use: lists left over after the first meetings
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    rows, cols = np.array(edges, dtype=np.int64).T
    graph = csr_matrix((np.ones(len(edges), dtype=np.int8), (rows, cols)), shape=(len(left), len(right)))
    return {left[a]: right[b] for a, b in enumerate(maximum_bipartite_matching(graph, perm_type="column").tolist())
            if b >= 0}


def match_by_key(expected: Sequence[Any], actual: Sequence[Any], key: str | None, fits: Any = None, safe: bool = True,
            allowed: set[int] | None = None, hidden: Hidden | None = None, view: View | None = None,
            ) -> dict[int, int]:
    """Expected index -> actual index: the n-th element with a key value meets the n-th actual one with it.

    Elements without the key field (old entries from before the field existed, a scalar) are matched among
    themselves as an ``unordered`` list: by ``fits(i, j)`` (:func:`bipartite`), or by equal text when
    ``fits`` is None (how the diff aligns them, with ``view`` as :func:`align` takes it, by index in
    ``expected`` and ``actual``); ``allowed`` (None: all) limits the actual ones they may meet; ``hidden`` is
    that of :func:`bipartite`, by index in ``actual``.
    """
    free: dict[str, list[int]] = {}
    bare_act = []
    for j, element in enumerate(actual):
        value = key_field(element, key)
        if value is ABSENT:
            if allowed is None or j in allowed:
                bare_act.append(j)
        else:
            free.setdefault(same_text(value), []).append(j)
    out = {}
    bare_exp = []
    for i, element in enumerate(expected):
        value = key_field(element, key)
        if value is ABSENT:
            bare_exp.append(i)
            continue
        slots = free.get(same_text(value))
        if slots:
            out[i] = slots.pop(0)
    if bare_exp and bare_act:
        exp, act = [expected[i] for i in bare_exp], [actual[j] for j in bare_act]
        seen = None if view is None else (lambda side, k, e: view(side, (bare_exp, bare_act)[side][k], e))
        pairs = (align(exp, act, seen) if fits is None
                 else bipartite(exp, act, lambda a, b: fits(bare_exp[a], bare_act[b]), safe,
                                 None if hidden is None else lambda b, path: hidden(bare_act[b], path)))
        out.update({bare_exp[a]: bare_act[b] for a, b in pairs.items()})
    return out


#: ``view(side, index, element)``: what an element of ``before`` (side 0) or ``after`` (side 1) is aligned by when
#: it has no equal counterpart (see :func:`align`).
View = Callable[[int, int, Any], Any]


def align(before: Sequence[Any], after: Sequence[Any], view: View | None = None) -> dict[int, int]:
    """Index in ``before`` -> index in ``after`` of the elements an unordered list kept: the n-th element of
    a text (:func:`same_text`) before meets the n-th one of that text after (how the diff of ``changes``
    mode aligns an ``unordered`` list). Then, given ``view``, the elements left on both sides meet the same
    way by the text of their ``view`` (``changes`` mode's: the element without the leaves an ``ignore:``
    pattern hides, so an element whose ignored stamp alone changed is the element kept, as ``whole`` mode
    finds it).

    Examples
    --------
    >>> align(["a", "b", "a"], ["a", "a", "c"])
    {0: 0, 2: 1}
    >>> stampless = lambda side, k, e: {key: v for key, v in e.items() if key != "at"}
    >>> align([{"s": "x", "at": 1}], [{"s": "y", "at": 1}, {"s": "x", "at": 2}], stampless)
    {0: 1}
    """
    buckets: dict[str, list[int]] = {}
    for k, element in enumerate(after):
        buckets.setdefault(same_text(element), []).append(k)
    matched = {}
    for i, element in enumerate(before):
        slots = buckets.get(same_text(element))
        if slots:
            matched[i] = slots.pop(0)
    if view is None or len(matched) == len(before) or len(matched) == len(after):
        return matched
    used = set(matched.values())
    loose: dict[str, list[int]] = {}
    for k, element in enumerate(after):
        if k not in used:
            loose.setdefault(same_text(view(1, k, element)), []).append(k)
    for i, element in enumerate(before):
        if i not in matched:
            slots = loose.get(same_text(view(0, i, element)))
            if slots:
                matched[i] = slots.pop(0)
    return matched


def unmatched_key(element: Any, rule: ListMatch, i: int) -> str:
    """The path key of expected element ``i`` that met no element of an ``unordered`` or ``by_key`` list:
    ``<FIELD=VALUE>`` (``by_key``) or ``<unmatched i>`` (see the module's Paths of rows)."""
    return f"<{rule.key}={key_text(key_field(element, rule.key))}>" if rule.how == "by_key" else f"<unmatched {i}>"


def within(exp: Sequence[Any], act: Sequence[Any], fits: Any, safe: bool, allowed: set[int] | None,
            hidden: Hidden | None = None) -> dict[int, int]:
    """:func:`bipartite` of ``exp`` to the elements of ``act`` whose index is ``allowed`` (None: all);
    ``hidden`` as there, by index in ``act``."""
    if allowed is None:
        return bipartite(exp, act, fits, safe, hidden)
    index = sorted(allowed)
    pairs = bipartite(exp, [act[j] for j in index], lambda i, b: fits(i, index[b]), safe,
                       None if hidden is None else lambda b, path: hidden(index[b], path))
    return {i: index[b] for i, b in pairs.items()}


def kept_counterparts(before: Any, act: Sequence[Any], rule: ListMatch, view: View | None = None,
                      ) -> tuple[dict[int, Any], set[int] | None]:
    """In ``changes`` mode, for an ``unordered`` or ``by_key`` list: each actual element's counterpart in the
    initial list (by the diff's alignment), and the actual elements an expected element without identity
    (any element of an ``unordered`` list, an element without the key field of a ``by_key`` one) may meet:
    those the case added, not one equal to an element that was already there.

    Such a list cannot tell an element the case added from an equal one it started with, so an expected
    element satisfied by one already there would let a case that added nothing pass (a payment expected,
    none made, an equal one from last month in the list). ``view`` is :func:`align`'s (the diff's alignment).
    """
    if not isinstance(before, list):
        return {}, None
    if rule.how == "by_key":
        pairs = match_by_key(before, act, rule.key, view=view)
        kept = {j for i, j in pairs.items() if key_field(before[i], rule.key) is ABSENT}
    else:
        pairs = align(before, act, view)
        kept = set(pairs.values())
    return {j: before[i] for i, j in pairs.items()}, set(range(len(act))) - kept
