"""The pure comparison rules of the state and answer checks.

``answers_equal`` is ``answer_matches``; ``compare_state`` is ``state_matches``
(whole / paths / subset / changes, numeric tolerance, list matching, ignored
paths); ``compare_unchanged`` is ``state_unchanged``. Each returns plain values,
so replays, pairs, panels and the evaluators judge with the same rules.

Expected values
---------------
``expected.state`` is compared leaf by leaf. A leaf ``{"$absent": true}`` (or
:data:`~oloproof_nb.ABSENT` in Python) means the key must not exist. A list is
matched by the rule of its path (:class:`~oloproof_nb._core.lists.ListMatch`):
``ordered`` (position by position, the default), ``unordered`` (as a multiset)
or ``by_key`` (elements whose key field agrees; elements without it are matched
among themselves as ``unordered``); in a ``by_key`` list an element ``{FIELD:
value, "$absent": true}`` means no element may have that key (a removal, which
``changes`` mode then expects). In ``changes`` mode an expected element without
identity (of an ``unordered`` list, or without the key field) meets only an
element the case added (:func:`~oloproof_nb._core.lists.kept_counterparts`). A list and a
dict keyed by index are different values.

Paths of rows
-------------
A row's path is where the value sits in the state the case left
(``transactions.5.amount`` for the element matched at index 5). An expected
element no element matched is reported at ``<list>.<FIELD=VALUE>``
(``by_key``, e.g. ``transactions.<reference=INV-7>``) or ``<list>.<unmatched N>``
(``unordered``, N its index in the expected list), with ``actual`` absent; an
element that left an ``unordered`` or ``by_key`` list in ``changes`` mode is
reported the same way with ``after`` absent. In ``changes`` mode an expected
element that fits only elements the list held before the case (see
:func:`~oloproof_nb._core.lists.kept_counterparts`) is reported at ``<list>.<not added N>``.
Such a path names no element of the state (``get_path`` finds it absent).
"""

from __future__ import annotations

import unicodedata
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .lists import (
    ORDERED,
    Keys,
    ListMatch,
    View,
    align,
    bipartite,
    child_at,
    is_absent_marker,
    kept_counterparts,
    key_field,
    key_text,
    match_by_key,
    same_text,
    unmatched_key,
    within,
)
from .paths import ABSENT, format_path, get_path, list_index, parse_path, parse_pattern, pattern_matches, values_equal

__all__ = [
    "answers_equal",
    "compare_state",
    "compare_changes",
    "compare_unchanged",
    "list_diff",
    "ordered_through",
    "positional_rules",
    "Row",
    "unheld_removals",
    "stray_absent",
    "shortened_lists",
    "NO_STATE",
    "MODES",
]

#: Reason of a state verdict when the system recorded no state.
NO_STATE = "no_state_recorded"
MODES: tuple[str, ...] = ("whole", "paths", "subset", "changes")

Row = tuple[str, Any, Any, bool]


def _norm(value: Any) -> Any:
    """A text without surrounding space, in the form of Unicode's canonical caseless match (NFD of the casefolded
    NFD): ``"Café"`` with a composed ``é`` and ``"cafe\u0301"`` (an ``e`` and a combining accent) read alike."""
    if not isinstance(value, str):
        return value
    if value.isascii():
        return value.strip().casefold()
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", value).casefold()).strip()


def answers_equal(expected: Any, actual: Any, normalize: bool = True) -> bool:
    """True when ``actual`` equals ``expected``; with ``normalize``, strings compared without case and surrounding
    space, and an accent composed or written as a combining mark alike (Unicode's canonical caseless match).

    Examples
    --------
    >>> answers_equal("Refunded", "  refunded\\n"), answers_equal("refunded", "refused")
    (True, False)
    >>> answers_equal("Annulé", "annule\u0301"), answers_equal("Annulé", "annule\u0301", normalize=False)
    (True, False)

    A structured answer (an object, a list) is compared as its JSON value, the texts inside it exactly:

    >>> answers_equal({"status": "Refunded"}, {"status": "refunded"}), answers_equal([1, "a"], [1.0, "a"])
    (False, True)
    """
    if normalize:
        expected, actual = _norm(expected), _norm(actual)
    return values_equal(expected, actual)


@dataclass
class _Rules:
    """The options of one comparison: list rules by path pattern (first match wins), ignored patterns, tolerance."""

    lists: Sequence[tuple[Keys, ListMatch]] = ()
    ignore: Sequence[Keys] = ()
    tolerance: float | None = None
    covered: set[Keys] = field(default_factory=set)
    removed: set[tuple[Keys, str]] = field(default_factory=set)  # (by_key list, key text) expected gone
    fits: int = 0  # pairs of list elements compared under these rules (see _Fitted)

    def list_rule(self, keys: Keys) -> ListMatch:
        for pattern, rule in self.lists:
            if pattern_matches(pattern, keys):
                return rule
        return ORDERED

    @property
    def transitive(self) -> bool:
        """Whether fitting list elements is transitive: no tolerance, and no pattern names a list index, ``1`` or
        as a wildcard of digits, ``1*`` (then whether an element fits depends on where it sits)."""
        return self.tolerance is None and not any(_names_indexes(key) for pattern, _ in self.lists for key in pattern) \
            and not any(_names_indexes(key) for pattern in self.ignore for key in pattern)

    def ignored(self, keys: Keys) -> bool:
        return any(pattern_matches(pattern, keys, within=True) for pattern in self.ignore)


def _names_indexes(key: str) -> bool:
    """Whether a pattern key matches some list indexes but not every one: ``1``, ``1*``, ``*0`` (``*`` matches
    every index, ``a*`` none)."""
    return key.replace("*", "").isdigit()


def _rules(lists: Mapping[str, ListMatch] | None, ignore: Sequence[str] | None, tolerance: float | None) -> _Rules:
    return _Rules(lists=[(parse_pattern(p), rule) for p, rule in (lists or {}).items()],
                  ignore=[parse_pattern(p) for p in (ignore or ())], tolerance=tolerance)


def _leaves(node: Any, keys: Keys) -> Iterator[tuple[Keys, Any]]:
    """Leaves of a value (an empty dict or list is a leaf; so is a scalar, at ``keys`` itself; an absent marker
    is the leaf ABSENT)."""
    if is_absent_marker(node):
        yield keys, ABSENT
    elif isinstance(node, Mapping) and node:
        for key, value in node.items():
            yield from _leaves(value, (*keys, str(key)))
    elif isinstance(node, list) and node:
        for idx, value in enumerate(node):
            yield from _leaves(value, (*keys, str(idx)))
    else:
        yield keys, node


def _leaf_like(value: Any) -> bool:
    return not (isinstance(value, (Mapping, list)) and value)


def _is_removal(element: Any, key: str | None) -> bool:
    """``{FIELD: value, "$absent": true}`` in a ``by_key`` list: the element with that key must be gone."""
    return (isinstance(element, Mapping) and len(element) == 2 and element.get("$absent") is True
            and key is not None and key in element)


def _removals(exp: Sequence[Any], act: Sequence[Any], key: str | None, keys: Keys, rules: _Rules,
              rows: list[Row]) -> list[Any]:
    """The elements of an expected ``by_key`` list that are not removals; one row per removal.

    A removal holds when no element of ``act`` has its key value; its row sits at ``<FIELD=VALUE>`` (where the
    diff of ``changes`` mode reports an element that left the list, which it then covers) or, when the
    element is still there, at that element's index.
    """
    kept = []
    for element in exp:
        if not _is_removal(element, key):
            kept.append(element)
            continue
        value = key_field(element, key)
        text = same_text(value)
        there = [j for j, a in enumerate(act)
                 if key_field(a, key) is not ABSENT and same_text(key_field(a, key)) == text]
        label = (*keys, f"<{key}={key_text(value)}>")
        rules.removed.add((keys, text))  # by the key's value: two keys may print alike ("1" and 1)
        if there:
            rows.append((format_path((*keys, str(there[0]))), ABSENT, act[there[0]], False))
        else:
            rows.append((format_path(label), ABSENT, ABSENT, True))
    return kept


class _Fitted:
    """The rows of the element pairs of one list found to fit, kept for the pair the matching then chooses.

    That pair was compared again for its rows, and so was each pair of a list inside it: once per fit and once
    more, so each level of nested ``unordered`` (or ``by_key``) lists doubled the work (a tree of one-element
    ``kids`` lists 16 levels deep, each node naming fewer fields than the state holds, took 100 s to judge:
    2**16 comparisons of its deepest node). Only a pair whose comparison matched a list inside it is kept: one
    without is compared again at the cost of its leaves, as before, and the rows of a long list of flat elements
    are not held twice. At most ``room`` pairs are kept (as many as the list has elements on both sides): where
    every element fits every other (300 elements each way, each holding a list of two, held 90,000 pairs' rows,
    190 MB, to choose 300 of them), a chosen pair past those is compared again, as before.
    """

    def __init__(self, room: int) -> None:
        self._kept: dict[tuple[int, int], tuple[list[Row], _Rules | None]] = {}
        self._room = room

    def keep(self, i: int, j: int, rows: list[Row], nested: bool, scratch: _Rules | None = None) -> bool:
        """Whether every row of pair ``(i, j)`` holds; if so, and its comparison matched a list inside it
        (``nested``), its rows are kept, with the ``scratch`` rules they were found with (their covered paths
        and removals are the comparison's once the pair is chosen)."""
        ok = all(ok for *_, ok in rows)
        if ok and nested and (len(self._kept) < self._room or (i, j) in self._kept):
            self._kept[i, j] = (rows, scratch)
        return ok

    def replay(self, i: int, j: int, rows: list[Row], rules: _Rules) -> bool:
        """Append the kept rows of pair ``(i, j)`` to ``rows`` (and what they covered to ``rules``): False when
        none are kept."""
        found = self._kept.get((i, j))
        if found is None:
            return False
        kept, scratch = found
        rows.extend(kept)
        if scratch is not None:
            rules.covered |= scratch.covered
            rules.removed |= scratch.removed
        return True


# -- subset: every expected leaf present and equal ---------------------------------------------------------

#: ``before`` of :func:`_subset` outside ``changes`` mode: no initial state is followed.
_UNTRACKED: Any = object()


def _subset(exp: Any, act: Any, keys: Keys, rules: _Rules, rows: list[Row], before: Any = _UNTRACKED) -> None:
    """Rows of ``exp`` against ``act`` (``subset`` mode; in ``changes`` mode ``before`` follows the initial
    state's value at ``keys``, see :func:`~oloproof_nb._core.lists.kept_counterparts`). A path under an
    ``ignore`` pattern is left out, as in ``whole`` mode: nobody pins it, not even ``expected.state``."""
    if keys and rules.ignored(keys):
        return
    if is_absent_marker(exp):
        rows.append((format_path(keys), ABSENT, act, act is ABSENT))
        rules.covered.add(keys)
        return
    track = before is not _UNTRACKED
    if isinstance(exp, Mapping) and exp:
        for key, value in exp.items():
            _subset(value, child_at(act, key), (*keys, key), rules, rows, child_at(before, key) if track else before)
        return
    if isinstance(exp, list) and exp and isinstance(act, list):
        rule = rules.list_rule(keys)
        if rule.how == "ordered":
            for i, element in enumerate(exp):
                _subset(element, act[i] if i < len(act) else ABSENT, (*keys, str(i)), rules, rows,
                        child_at(before, str(i)) if track else before)
            return
        was, allowed = kept_counterparts(before, act, rule, _unpinned(keys, rules)) if track else ({}, None)

        def then(j: int) -> Any:
            return was.get(j, ABSENT) if track else before

        if rule.how == "by_key":
            exp = _removals(exp, act, rule.key, keys, rules, rows)
        listed = exp

        fitted = _Fitted(len(listed) + len(act))

        def fits(i: int, j: int) -> bool:
            rules.fits += 1
            scratch = _Rules(rules.lists, rules.ignore, rules.tolerance)
            found: list[Row] = []
            _subset(listed[i], act[j], (*keys, str(j)), scratch, found, then(j))
            return fitted.keep(i, j, found, scratch.fits > 0, scratch)

        def hidden(j: int, path: Keys) -> bool:  # a leaf under an ignore pattern fits whatever it holds
            return rules.ignored((*keys, str(j), *path))

        unseen = hidden if rules.ignore else None
        if rule.how == "by_key":
            matched = match_by_key(exp, act, rule.key, fits, rules.transitive, allowed, hidden=unseen)
        else:
            matched = within(exp, act, fits, rules.transitive, allowed, unseen)
        for i, element in enumerate(exp):
            j = matched.get(i)
            if j is None:
                bare = rule.how != "by_key" or key_field(element, rule.key) is ABSENT
                if bare and allowed is not None and any(fits(i, k) for k in range(len(act)) if k not in allowed):
                    label = f"<not added {i}>"  # it fits only an element that was there before the case
                else:
                    label = unmatched_key(element, rule, i)
                rows.append((format_path((*keys, label)), element, ABSENT, False))
            elif not fitted.replay(i, j, rows, rules):
                _subset(element, act[j], (*keys, str(j)), rules, rows, then(j))
        return
    rows.append((format_path(keys), exp, act, values_equal(exp, act, rules.tolerance)))
    rules.covered.add(keys)


# -- whole: equal entirely (list rules and tolerance apply) ------------------------------------------------

def _whole(exp: Any, act: Any, keys: Keys, rules: _Rules, rows: list[Row]) -> None:
    if keys and rules.ignored(keys):
        return
    if is_absent_marker(exp):
        exp = ABSENT
    if exp is ABSENT or act is ABSENT:
        if exp is ABSENT and act is ABSENT:
            rows.append((format_path(keys), ABSENT, ABSENT, True))
            return
        present, side = (exp, "expected") if act is ABSENT else (act, "actual")
        for sub, value in _leaves(present, keys):
            if not rules.ignored(sub):
                rows.append((format_path(sub), value, ABSENT, value is ABSENT) if side == "expected"
                            else (format_path(sub), ABSENT, value, False))
        return
    if isinstance(exp, Mapping) and isinstance(act, Mapping) and (exp or act):
        for key, value in exp.items():
            _whole(value, act.get(key, ABSENT), (*keys, key), rules, rows)
        for key, value in act.items():
            if key not in exp:
                _whole(ABSENT, value, (*keys, key), rules, rows)
        return
    if isinstance(exp, list) and isinstance(act, list) and (exp or act):
        rule = rules.list_rule(keys)
        if rule.how == "ordered":
            for i in range(max(len(exp), len(act))):
                _whole(exp[i] if i < len(exp) else ABSENT, act[i] if i < len(act) else ABSENT, (*keys, str(i)),
                       rules, rows)
            return
        if rule.how == "by_key":
            exp = _removals(exp, act, rule.key, keys, rules, rows)
        listed = exp

        fitted = _Fitted(len(listed) + len(act))

        def fits(i: int, j: int) -> bool:
            rules.fits += 1
            asked = rules.fits
            found: list[Row] = []
            _equal(listed[i], act[j], (*keys, str(j)), rules, found)
            return fitted.keep(i, j, found, rules.fits > asked)

        def hidden(j: int, path: Keys) -> bool:
            return rules.ignored((*keys, str(j), *path))

        unseen = hidden if rules.ignore else None
        matched = (match_by_key(exp, act, rule.key, fits, rules.transitive, hidden=unseen) if rule.how == "by_key"
                   else bipartite(exp, act, fits, rules.transitive, unseen))
        used = set(matched.values())
        for i, element in enumerate(exp):
            j = matched.get(i)
            if j is None:
                rows.append((format_path((*keys, unmatched_key(element, rule, i))), element, ABSENT, False))
            elif not fitted.replay(i, j, rows, rules):
                _whole(element, act[j], (*keys, str(j)), rules, rows)
        for j, element in enumerate(act):
            if j not in used:
                _whole(ABSENT, element, (*keys, str(j)), rules, rows)
        return
    rows.append((format_path(keys), exp, act, values_equal(exp, act, rules.tolerance)))


def _equal(exp: Any, act: Any, keys: Keys, rules: _Rules, rows: list[Row] | None = None) -> bool:
    """Whether every row of ``whole`` mode holds; the rows are appended to ``rows`` when it is given."""
    found: list[Row] = [] if rows is None else rows
    _whole(exp, act, keys, rules, found)
    return all(ok for *_, ok in found)


# -- changes: what differs from the initial state, with lists aligned by their rule ------------------------

#: What a list element an ``ignore:`` pattern hides whole is read as when :func:`_unpinned` aligns it: the one list
#: no view holds (a view writes every list as a list of one dict or of one list), so no value of a state reads as it.
_HIDDEN: Any = ()


def _unpinned(keys: Keys, rules: _Rules) -> View | None:
    """The :func:`~oloproof_nb._core.lists.align` view of the elements of the list at ``keys``: each element
    without what an ``ignore:`` pattern hides (a dict key under one is left out, and so is a list element under
    one: a list inside the element is read as ``[{index: element}]`` of the positions left, so one that gained or
    lost an ignored element is the same list, as ``whole`` mode compares it; one under an ``unordered`` or ``by_key``
    rule is read as ``[elements]`` in that rule's order, :func:`_rule_order`), :data:`_HIDDEN` for an element
    hidden whole, or None when ``rules`` ignore nothing and every list rule is ``ordered``.

    The diff of ``changes`` mode aligns an ``unordered`` list (and the elements without the key field of a
    ``by_key`` one) by equal text; an element whose ignored stamp alone changed has no equal one after the
    case, and was reported as an element removed and the unignored leaves of one added, though ``whole`` mode
    (which matches elements over the leaves it compares) passed the same state. A list read as
    its elements with a placeholder at each ignored position still did so for an ignored entry appended to a log
    inside the element; a placeholder text was also a value a state may hold. An element whose own
    ``unordered`` list came back in another order (``orders.*.tags``) had no equal text either, with or without an
    ``ignore:``, and ``changes`` mode found 4 unexpected changes in a state ``whole`` mode passed.
    """
    if not rules.ignore and all(rule.how == "ordered" for _, rule in rules.lists):
        return None

    def strip(node: Any, at: Keys) -> Any:
        if isinstance(node, Mapping):
            return {k: strip(v, (*at, str(k))) for k, v in node.items() if not rules.ignored((*at, str(k)))}
        if isinstance(node, (list, tuple)):
            kept = [(i, strip(v, (*at, str(i)))) for i, v in enumerate(node) if not rules.ignored((*at, str(i)))]
            rule = rules.list_rule(at)
            if rule.how == "ordered":
                return [dict((str(i), v) for i, v in kept)]
            # an element's own list under an unordered or by_key rule is read in its rule's order: the n-th element
            # of a key value stays the n-th (match_by_key), the elements without identity are sorted
            return [sorted((v for _, v in kept), key=lambda v: _rule_order(v, rule))]
        return node

    def view(side: int, index: int, element: Any) -> Any:
        at = (*keys, str(index))
        return _HIDDEN if rules.ignored(at) else strip(element, at)

    return view


def _rule_order(view: Any, rule: ListMatch) -> tuple[int, str, str]:
    """Where a viewed element of an ``unordered`` or ``by_key`` list sits in :func:`_unpinned`'s reading: a ``by_key``
    element by its key value (a stable sort keeps the n-th of one value the n-th), every other by its text."""
    value = key_field(view, rule.key) if rule.how == "by_key" else ABSENT
    return (0, same_text(value), "") if value is not ABSENT else (1, "", same_text(view))


def _diff(before: Any, after: Any, keys: Keys, rules: _Rules, out: list[tuple[Keys, Any, Any]]) -> None:
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        for key, value in before.items():
            twin = after.get(key, ABSENT)
            if twin is ABSENT:
                out.extend((sub, v, ABSENT) for sub, v in _leaves(value, (*keys, key)))
            elif not values_equal(value, twin):
                _diff(value, twin, (*keys, key), rules, out)
        for key, value in after.items():
            if key not in before:
                out.extend((sub, ABSENT, v) for sub, v in _leaves(value, (*keys, key)))
        return
    if isinstance(before, list) and isinstance(after, list):
        rule = rules.list_rule(keys)
        if rule.how == "ordered":
            for i in range(max(len(before), len(after))):
                b = before[i] if i < len(before) else ABSENT
                a = after[i] if i < len(after) else ABSENT
                if b is ABSENT:
                    out.extend((sub, ABSENT, v) for sub, v in _leaves(a, (*keys, str(i))))
                elif a is ABSENT:
                    out.extend((sub, v, ABSENT) for sub, v in _leaves(b, (*keys, str(i))))
                elif not values_equal(b, a):
                    _diff(b, a, (*keys, str(i)), rules, out)
            return
        view = _unpinned(keys, rules)
        matched = (match_by_key(before, after, rule.key, view=view) if rule.how == "by_key"
                   else align(before, after, view))
        for i, element in enumerate(before):
            j = matched.get(i)
            if j is None:
                out.append(((*keys, unmatched_key(element, rule, i)), element, ABSENT))
            elif not values_equal(element, after[j]):
                _diff(element, after[j], (*keys, str(j)), rules, out)
        used = set(matched.values())
        for k, element in enumerate(after):
            if k not in used:
                out.extend((sub, ABSENT, v) for sub, v in _leaves(element, (*keys, str(k))))
        return
    if values_equal(before, after):
        return
    # a changed leaf, or a list that became a dict (or back); an empty one is a leaf, so one filled as the other
    # kind ([] became {"k": "v"}) is a leaf replaced by a subtree, as null replaced by it is
    if _leaf_like(before) == _leaf_like(after):
        out.append((keys, before, after))
        return
    out.extend((sub, v, ABSENT) for sub, v in _leaves(before, keys))
    out.extend((sub, ABSENT, v) for sub, v in _leaves(after, keys))


def list_diff(before: Any, after: Any, lists: Mapping[str, ListMatch] | None = None,
              ignore: Sequence[str] | None = None) -> list[tuple[str, Any, Any]]:
    """Every leaf that differs between two states, lists aligned by ``lists`` as ``changes`` mode aligns them.

    :func:`~oloproof_nb._core.paths.leaf_diff` compares every list position by position; here a list an
    ``unordered`` or ``by_key`` rule matches is aligned by that rule, so two states whose such lists hold the
    same elements in another order do not differ. A control replay and a ``same_state`` pair also agree when they
    do so, by the rules every state check gives (``_config.shared_rules.shared_list_rules``): before, a system that
    returns a set-like list in any order had its fault replays ``missing`` (``control_replay_diverged``) and its
    pairs broken, though every state check passed it.

    Parameters
    ----------
    before, after : Any
        The two states.
    lists : mapping of str to ListMatch, optional
        List rules by path pattern (first match wins; default ``ordered``).
    ignore : sequence of str, optional
        Path patterns whose leaves an aligned list's elements are also met without, as ``changes`` mode meets
        them: an element whose ignored stamp alone changed is the element kept. Rows under them are still
        returned (the caller leaves them out, or keeps those another check judges).

    Returns
    -------
    list of (path, before, after)
        One row per differing leaf; an element of an ``unordered`` or ``by_key`` list that met no counterpart
        in ``after`` is one row at ``<list>.<unmatched i>`` (``<FIELD=VALUE>`` for ``by_key``), an element new
        in ``after`` its leaves at their positions there.

    Examples
    --------
    >>> list_diff({"tags": ["a", "b"]}, {"tags": ["b", "a"]}, {"tags": ListMatch("unordered")})
    []
    >>> list_diff({"tags": ["a", "b"]}, {"tags": ["b", "a"]})
    [('tags.0', 'a', 'b'), ('tags.1', 'b', 'a')]
    >>> list_diff({"tags": ["a"]}, {"tags": ["c"]}, {"tags": ListMatch("unordered")})
    [('tags.<unmatched 0>', 'a', <absent>), ('tags.0', <absent>, 'c')]
    >>> list_diff({"t": [{"s": "a", "at": 1}]}, {"t": [{"s": "a", "at": 2}]}, {"t": ListMatch("unordered")}, ["t.*.at"])
    [('t.0.at', 1, 2)]
    """
    out: list[tuple[Keys, Any, Any]] = []
    _diff(before, after, (), _rules(lists, ignore, None), out)
    return [(format_path(keys), b, a) for keys, b, a in out]


def ordered_through(lists: Mapping[str, ListMatch], paths: Iterable[str]) -> dict[str, ListMatch]:
    """``lists`` with each rule made ``ordered`` whose pattern matches a list one of ``paths`` reaches into (a
    strict prefix of the path: ``tags`` of ``tags.0``, ``notes`` of ``notes.1.text``): such a path names an element by
    its position, which an aligned list does not keep. A path that names the list itself leaves its rule.

    Read by a ``paths``-mode check (``_config.shared_rules.shared_list_rules``) and by a ``same_state`` pair's injected
    paths (``_core.pairs.compare_pair``).

    Examples
    --------
    >>> notes = {"notes": ListMatch("by_key", "id")}
    >>> ordered_through(notes, ["notes.1.text"]), ordered_through(notes, ["notes", "title"])
    ({'notes': ListMatch(how='ordered', key=None)}, {'notes': ListMatch(how='by_key', key='id')})
    """
    keys = [parse_path(path) for path in paths]
    out = dict(lists)
    for pattern, rule in lists.items():
        parsed = parse_pattern(pattern)
        if rule.how != "ordered" and any(pattern_matches(parsed, k[:i]) for k in keys for i in range(1, len(k))):
            out[pattern] = ORDERED
    return out


def positional_rules(lists: Mapping[str, ListMatch] | None, *expected: Any) -> dict[str, ListMatch]:
    """``lists`` with each pattern made ``ordered`` that matches a list an ``expected`` state reads by position:
    a dict keyed by a list index (``{"tags": {"0": "new"}}``), whose key a ``subset`` or ``changes`` check reads
    as the element at that position, whatever the list's rule (see :func:`list_diff`'s callers: a control
    replay or a pair whose list came back in another order is judged otherwise there, and must not pass as the
    same state).

    Examples
    --------
    >>> tags = {"tags": ListMatch("unordered")}
    >>> positional_rules(tags, {"tags": ["new"]}), positional_rules(tags, {"tags": {"0": "new"}})
    ({'tags': ListMatch(how='unordered', key=None)}, {'tags': ListMatch(how='ordered', key=None)})
    """
    out = dict(lists or {})
    spots: list[Keys] = []  # where an expected dict is keyed by a list index

    def walk(node: Any, keys: Keys) -> None:
        if isinstance(node, Mapping):
            if any(list_index(str(k)) is not None for k in node):
                spots.append(keys)
            for k, v in node.items():
                walk(v, (*keys, str(k)))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, (*keys, str(i)))

    for state in expected:
        walk(state, ())
    for pattern, rule in out.items():
        if rule.how != "ordered" and any(pattern_matches(parse_pattern(pattern), keys) for keys in spots):
            out[pattern] = ORDERED
    return out


def _expected_change(keys: Keys, before: Any, after: Any, actual: Mapping[str, Any], rules: _Rules) -> bool:
    """Whether a diff row is a change ``expected.state`` names (``rules`` as its comparison left them).

    It lies at or below a leaf the expectation compared; or it is an element that left a ``by_key`` list
    whose removal the expectation asks for (by the key's value); or it is a leaf that the state replaced by
    a subtree (a text that became a dict) under which the expectation compares a value that is there.
    """
    covered = rules.covered
    if any(keys[:i] in covered for i in range(len(keys) + 1)):
        return True
    if keys and keys[-1].startswith("<") and after is ABSENT:  # an element that left an unordered/by_key list
        rule = rules.list_rule(keys[:-1])
        value = key_field(before, rule.key) if rule.how == "by_key" else ABSENT
        if value is not ABSENT and (keys[:-1], same_text(value)) in rules.removed:
            return True
        # else on: a dict key may start with "<" too (the label of an element names nothing get_path finds)
    if after is ABSENT and _leaf_like(before):
        now = get_path(actual, keys)
        return (isinstance(now, (Mapping, list)) and bool(now)
                and any(c[: len(keys)] == keys and len(c) > len(keys) and get_path(actual, c) is not ABSENT
                        for c in covered))
    return False


def compare_changes(initial: Mapping[str, Any], expected: Mapping[str, Any], actual: Mapping[str, Any], *,
                    lists: Mapping[str, ListMatch] | None = None, ignore: Sequence[str] | None = None,
                    tolerance: float | None = None) -> tuple[list[Row], list[Row]]:
    """``state_matches`` in ``changes`` mode: this, and nothing else, changed.

    Parameters
    ----------
    initial, expected, actual : mapping
        The case's ``initial_state``, its ``expected.state`` and the state it left.
    lists : mapping of str to ListMatch, optional
        List rules by path pattern (first match wins; default ``ordered``).
    ignore : sequence of str, optional
        Path patterns whose changes nobody pins (free text, timestamps): not
        compared, expected leaves included.
    tolerance : float, optional
        Absolute tolerance for numeric expected leaves.

    Returns
    -------
    (unexpected, expected_rows)
        ``unexpected``: one row ``(path, before, after, False)`` per leaf that
        differs from ``initial`` where no expected leaf (nor an ancestor of it)
        is compared and no ``ignore`` pattern applies — the value it should
        have kept is in the ``expected`` column. ``expected_rows``: one row per
        leaf of ``expected`` (as in ``subset`` mode) but those under an
        ``ignore`` pattern, which are left out: every other expected change
        must have happened.

    Notes
    -----
    The diff aligns lists by the same rules as the comparison, so an element
    appended in another order (``by_key``, ``unordered``) is one new element,
    not every later position changed.

    Examples
    --------
    >>> initial = {"a": {"x": 1, "y": 1}, "log": []}
    >>> compare_changes(initial, {"a": {"x": 2}}, {"a": {"x": 2, "y": 5}, "log": []})
    ([('a.y', 1, 5, False)], [('a.x', 2, 2, True)])
    """
    rules = _rules(lists, ignore, tolerance)
    expected_rows: list[Row] = []
    for key, value in expected.items():
        _subset(value, child_at(actual, key), (key,), rules, expected_rows, child_at(initial, key))
    diff: list[tuple[Keys, Any, Any]] = []
    _diff(initial, actual, (), rules, diff)
    unexpected = [(format_path(keys), before, after, False) for keys, before, after in diff
                  if not _expected_change(keys, before, after, actual, rules) and not rules.ignored(keys)]
    return unexpected, expected_rows


def compare_state(expected: Mapping[str, Any], actual: Mapping[str, Any], mode: str = "subset",
                  paths: Sequence[str] | None = None, tolerance: float | None = None, *,
                  lists: Mapping[str, ListMatch] | None = None, ignore: Sequence[str] | None = None,
                  initial: Mapping[str, Any] | None = None) -> list[Row]:
    """Compare a recorded state with an expected one, leaf by leaf.

    Parameters
    ----------
    expected, actual : mapping
        ``expected.state`` of the case and the state the case left.
    mode : {"whole", "paths", "subset", "changes"}
        ``whole``: every leaf of either state must be equal (absent on one side
        fails); ``paths``: only the declared ``paths``, each compared whole
        (absent must stay absent); ``subset``: every leaf of ``expected`` must
        be present and equal; ``changes``: ``subset``, and every leaf that
        differs from ``initial`` must be one ``expected`` compares (see
        :func:`compare_changes`; its unexpected changes come first).
    paths : sequence of str, optional
        The paths ``paths`` mode compares, in order (one row each, under the path as given); ignored by the
        other modes.
    tolerance : float, optional
        Absolute tolerance for numeric leaves.
    lists : mapping of str to ListMatch, optional
        List rules by path pattern, first match wins (default ``ordered``).
    ignore : sequence of str, optional
        Path patterns left out (``whole`` and ``changes`` modes).
    initial : mapping, optional
        The case's ``initial_state`` (``changes`` mode).

    Returns
    -------
    list of (path, expected, actual, ok)
        One row per compared path, :data:`~oloproof_nb.ABSENT` where a path
        does not exist.

    Examples
    --------
    >>> compare_state({"o": {"s": "refunded"}}, {"o": {"s": "refunded", "n": 1}})
    [('o.s', 'refunded', 'refunded', True)]
    >>> compare_state({"o": {"gone": {"$absent": True}}}, {"o": {}})
    [('o.gone', <absent>, <absent>, True)]
    >>> compare_state({"t": [{"id": 2, "v": "b"}]}, {"t": [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]},
    ...               lists={"t": ListMatch("by_key", "id")})
    [('t.1.id', 2, 2, True), ('t.1.v', 'b', 'b', True)]
    """
    if mode == "changes":
        unexpected, rows = compare_changes(initial or {}, expected, actual, lists=lists, ignore=ignore,
                                           tolerance=tolerance)
        return unexpected + rows
    rules = _rules(lists, ignore if mode == "whole" else None, tolerance)
    rows = []
    if mode == "paths":
        for path in paths or []:
            keys = parse_path(path)
            e, a = get_path(expected, keys), get_path(actual, keys)
            e = ABSENT if is_absent_marker(e) else e
            rows.append((path, e, a, _equal(e, a, keys, rules)))
        return rows
    if mode == "whole":
        _whole(expected, actual, (), rules, rows)
        return rows if (expected or actual) else []
    if mode != "subset":
        raise ValueError(f"mode={mode!r}; allowed: {', '.join(MODES)}")
    for key, value in expected.items():
        _subset(value, child_at(actual, key), (key,), rules, rows)
    return rows


def compare_unchanged(initial: dict[str, Any], actual: dict[str, Any], paths: list[str]) -> list[Row]:
    """For each path, compare its value in ``initial`` with its value after the case.

    A path absent before must stay absent; a subtree must stay equal as a whole.

    Examples
    --------
    >>> compare_unchanged({"o": {"x": 1}}, {"o": {"x": 1, "y": 2}}, ["o.x", "o.y"])
    [('o.x', 1, 1, True), ('o.y', <absent>, 2, False)]
    """
    rows = []
    for path in paths:
        before, after = get_path(initial, path), get_path(actual, path)
        rows.append((path, before, after, values_equal(before, after)))
    return rows


# -- removals of what the initial state never held ---------------------------------------------------------

def unheld_removals(initial: Mapping[str, Any], expected: Mapping[str, Any], *,
                    lists: Mapping[str, ListMatch] | None = None, ignore: Sequence[str] | None = None,
                    ) -> Iterator[tuple[Keys, str | None, Any, list[Any]]]:
    """The removals ``expected`` asks for of something ``initial`` does not hold where it holds the place around it.

    A removal is a key of an expected dict whose value is ``{"$absent": true}`` (or a dict of nothing but such
    keys, at any depth), or an element ``{FIELD: value, "$absent": true}`` of a ``by_key`` list. Expected dicts
    are followed into the initial state as ``subset`` and ``changes`` modes read them (a digit key indexes a
    list), lists by their rule (``lists``: an ``ordered`` one by position, a ``by_key`` one into the element
    with the same key value; an ``unordered`` one and elements without the key field have no identity, and are
    not followed); a path under an ``ignore`` pattern is left out.

    Parameters
    ----------
    initial, expected : mapping
        The case's ``initial_state`` and ``expected.state``.
    lists : mapping of str to ListMatch, optional
        List rules by path pattern, first match wins (default ``ordered``).
    ignore : sequence of str, optional
        Path patterns left out (``changes`` mode's).

    Yields
    ------
    (keys, field, missing, others)
        ``keys``: where the removal sits (a ``by_key`` element as ``<FIELD=VALUE>``, as rows name it);
        ``field``: the ``by_key`` list's key field (None for a dict key); ``missing``: the dict key, or the
        element's key value, ``initial`` does not hold; ``others``: the keys (or key values) ``initial`` holds
        there that ``expected`` does not name.

    Examples
    --------
    >>> list(unheld_removals({"o": {"ord-7": {}}}, {"o": {"ord-8": {"$absent": True}}}))
    [(('o', 'ord-8'), None, 'ord-8', ['ord-7'])]
    >>> list(unheld_removals({"cart": [{"sku": "B"}]}, {"cart": [{"sku": "B ", "$absent": True}]},
    ...                      lists={"cart": ListMatch("by_key", "sku")}))
    [(('cart', '<sku=B >'), 'sku', 'B ', ['B'])]
    """
    if not _asks_removal(expected):
        return
    rules = _rules(lists, ignore, None)
    ignoring = bool(rules.ignore)
    stack: deque[tuple[Any, Any, Keys]] = deque([(expected, initial, ())])  # in the order expected.state is written
    while stack:  # walked for every case of a suite at load: scalars and held removals cost one look-up each
        exp, before, keys = stack.popleft()
        if type(exp) is dict or isinstance(exp, Mapping):
            for key, value in exp.items():
                held = before.get(key, ABSENT) if type(before) is dict else child_at(before, key)
                if held is ABSENT:
                    if isinstance(before, Mapping) and _removes_only(value) \
                            and not (ignoring and rules.ignored((*keys, key))):
                        yield (*keys, key), None, key, [k for k in before if k not in exp]
                elif isinstance(value, (Mapping, list)) and value and not is_absent_marker(value) \
                        and not (ignoring and rules.ignored((*keys, key))):
                    stack.append((value, held, (*keys, key)))
        elif isinstance(exp, list) and isinstance(before, list) and _asks_removal(exp):
            rule = rules.list_rule(keys)
            if rule.how == "ordered":
                stack.extend((element, before[i], (*keys, str(i))) for i, element in enumerate(exp[:len(before)]))
            elif rule.how == "by_key":
                follow, found = _by_key_removals(exp, before, rule.key, keys)
                stack.extend(f for f in follow if not (ignoring and rules.ignored(f[2])))
                yield from found


def _by_key_removals(exp: Sequence[Any], before: Sequence[Any], key: str | None, keys: Keys,
                     ) -> tuple[list[tuple[Any, Any, Keys]], list[tuple[Keys, str | None, Any, list[Any]]]]:
    """:func:`unheld_removals` in a ``by_key`` list: ``(element, initial element, keys)`` of each expected element
    that is no removal and meets one ``before`` holds, paired as the check pairs them
    (:func:`~oloproof_nb._core.lists.match_by_key`: the n-th with a key value meets the n-th held one with it), to
    follow; and the removals of a key value ``before`` does not hold."""
    def field(element: Any) -> Any:  # key_field, at one look for a dict (each element of the list, every case)
        return element.get(key, ABSENT) if type(element) is dict else key_field(element, key)

    held: dict[str, int] = {}
    for j, element in enumerate(before):
        value = field(element)
        if value is not ABSENT:
            held.setdefault(same_text(value), j)
    named = {same_text(v) for element in exp if (v := field(element)) is not ABSENT}
    pairs = match_by_key(exp, before, key)
    follow: list[tuple[Any, Any, Keys]] = []
    found: list[tuple[Keys, str | None, Any, list[Any]]] = []
    for i, element in enumerate(exp):
        value = field(element)
        if value is ABSENT:
            continue
        if _is_removal(element, key):
            if same_text(value) not in held:
                others = [field(before[j]) for text, j in held.items() if text not in named]
                found.append(((*keys, f"<{key}={key_text(value)}>"), key, value, others))
        elif i in pairs and _asks_removal(element):
            follow.append((element, before[pairs[i]], (*keys, str(pairs[i]))))
    return follow, found


def _asks_removal(value: Any) -> bool:
    """Whether ``value`` holds an absent marker, or a ``"$absent"`` key of a ``by_key`` removal, at any depth."""
    if isinstance(value, dict):
        return "$absent" in value or any(_asks_removal(v) for v in value.values())
    if isinstance(value, list):
        return any(_asks_removal(v) for v in value)
    return value is ABSENT


def shortened_lists(initial: Mapping[str, Any], expected: Mapping[str, Any], *,
                    lists: Mapping[str, ListMatch] | None = None, ignore: Sequence[str] | None = None,
                    ) -> Iterator[tuple[Keys, int, int]]:
    """The ``ordered`` lists of ``expected`` that ask for no change, read as ``changes`` mode reads them, where
    ``initial`` holds a longer list: each element already holds at its position, and the elements past them are
    named by nothing.

    In ``changes`` mode an expected list names positions, not the whole list: ``{"cart": ["A"]}`` on an
    ``initial_state`` of ``["A", "B"]`` asks that position 0 be ``"A"``, as it is. An agent that does nothing passes
    it, and one that leaves ``["A"]``, as the line reads, fails (``cart.1`` is an unexpected change); the removal is
    written ``{"cart": {"1": {"$absent": true}}}``. Expected dicts are followed into ``initial`` as the comparison
    reads them (a digit key indexes a list), ``ordered`` lists by position; a path under an ``ignore`` pattern is
    left out, and so is a list whose elements past the expected ones all are (``ignore: ["cart.1"]``: leaving
    ``["A"]`` passes too).

    Yields
    ------
    (keys, named, held)
        Where the list sits, how many elements ``expected`` names and how many ``initial`` holds.

    Examples
    --------
    >>> list(shortened_lists({"cart": ["A", "B"]}, {"cart": ["A"]}))
    [(('cart',), 1, 2)]
    >>> list(shortened_lists({"cart": ["A", "B"]}, {"cart": ["C"]})), list(shortened_lists({"c": ["A"]}, {"c": []}))
    ([], [])
    """
    if not _names_list(expected):  # walked for every case of a suite at load: most name no list
        return
    rules = _rules(lists, ignore, None)
    stack: list[tuple[Any, Any, Keys]] = [(expected, initial, ())]
    while stack:
        exp, before, keys = stack.pop()
        if isinstance(exp, Mapping):  # only the keys that lead to a list are followed
            stack.extend((value, child_at(before, str(key)), (*keys, str(key))) for key, value in exp.items()
                         if _names_list(value))
            continue
        if rules.ignore and rules.ignored(keys) or not isinstance(before, list) \
                or rules.list_rule(keys).how != "ordered":
            continue
        if len(before) > len(exp) and all(_holds(value, before[i], (*keys, str(i)), rules)
                                          for i, value in enumerate(exp)):
            # elements past it that an ignore pattern hides are no change either way: the line asks for none
            if not rules.ignore or not all(rules.ignored((*keys, str(i))) for i in range(len(exp), len(before))):
                yield keys, len(exp), len(before)
            continue
        stack.extend((value, before[i] if i < len(before) else ABSENT, (*keys, str(i)))
                     for i, value in enumerate(exp) if _names_list(value))


def _holds(exp: Any, before: Any, keys: Keys, rules: _Rules) -> bool:
    """Whether ``before``, an element of an ``ordered`` list, already is as ``exp`` asks (``changes`` mode): one
    element at a time, so a list that asks for a change is told from its first changed element, not its whole
    comparison (a load walked every element of every such list)."""
    rows: list[Row] = []
    _subset(exp, before, keys, rules, rows, before)
    return all(ok for *_, ok in rows)


def _names_list(value: Any) -> bool:
    """Whether ``value`` is or holds a non-empty list, at any depth."""
    if isinstance(value, Mapping):
        return any(_names_list(v) for v in value.values())
    return isinstance(value, list) and bool(value)


def stray_absent(expected: Any, *, lists: Mapping[str, ListMatch] | None = None, initial: Any = None,
                 ) -> tuple[Keys, ListMatch | None] | None:
    """The first object of ``expected`` holding a ``"$absent"`` key that no check reads as a removal, or None.

    ``{"$absent": true}`` asks for a removal alone as a key's value (or as an element of an ``ordered`` list: no
    element at that position), and ``{FIELD: value, "$absent": true}`` as an element of a list matched ``by_key``
    FIELD (``lists``). Anywhere else (beside other keys, in a list matched ``ordered`` or ``unordered``, or as
    ``"$absent": false``) it is compared as a key named ``"$absent"``, which no state holds: the case fails
    whatever the agent does, and the removal it meant is never asked; alone as an element of an ``unordered`` or
    ``by_key`` list it is an element no state holds, and fails as surely. Where ``initial`` (the case's
    ``initial_state``) holds a key named ``"$absent"`` there (in that object, or in an element of that list),
    the key is the state's own and is compared as such.

    Parameters
    ----------
    expected : object
        A case's ``expected.state``.
    lists : mapping of str to ListMatch, optional
        The check's list rules by path pattern, first match wins (default ``ordered``).
    initial : object, optional
        The case's ``initial_state``.

    Returns
    -------
    (keys, rule) or None
        Where the object sits, and the rule of the list it is an element of (None outside a list).

    Examples
    --------
    >>> stray_absent({"o": {"gone": {"$absent": True}}, "cart": [{"sku": "B", "$absent": True}]},
    ...              lists={"cart": ListMatch("by_key", "sku")}) is None
    True
    >>> stray_absent({"cart": [{"sku": "B", "$absent": True}]})
    (('cart', '0'), ListMatch(how='ordered', key=None))
    >>> stray_absent({"o": {"k": {"$absent": True, "status": "x"}}})
    (('o', 'k'), None)
    >>> stray_absent({"o": {"k": {"$absent": 5}}}, initial={"o": {"k": {"$absent": 5}}}) is None
    True
    >>> stray_absent({"cart": [{"$absent": True}]}, lists={"cart": ListMatch("unordered")})
    (('cart', '0'), ListMatch(how='unordered', key=None))
    """
    if not _asks_removal(expected):
        return None
    rules = _rules(lists, None, None)
    stack: list[tuple[Any, Keys, ListMatch | None]] = [(expected, (), None)]
    while stack:
        node, keys, rule = stack.pop()
        if isinstance(node, Mapping):
            if _stray(node, rule) and not _holds_absent_key(initial, keys, rule):
                return keys, rule
            stack.extend((v, (*keys, str(k)), None) for k, v in reversed(list(node.items())) if _asks_removal(v))
        elif isinstance(node, list):
            here = rules.list_rule(keys)
            stack.extend((v, (*keys, str(i)), here) for i, v in reversed(list(enumerate(node))) if _asks_removal(v))
    return None


def _stray(node: Mapping[str, Any], rule: ListMatch | None) -> bool:
    """Whether ``node`` (an element of a list matched by ``rule``, or not in a list: None) holds a ``"$absent"``
    key no comparison reads as a removal (see :func:`stray_absent`)."""
    if "$absent" not in node:
        return False
    if is_absent_marker(node):  # alone: a removal of a key, or of an ordered list's position
        return rule is not None and rule.how != "ordered"
    return not (rule is not None and rule.how == "by_key" and _is_removal(node, rule.key))


def _holds_absent_key(initial: Any, keys: Keys, rule: ListMatch | None) -> bool:
    """Whether ``initial`` holds a key named ``"$absent"`` in the object at ``keys`` (in an element of the list
    that holds it, for a list matched ``unordered`` or ``by_key``, whose elements are not matched by position)."""
    if initial is None:
        return False
    if rule is None or rule.how == "ordered":
        held = get_path(initial, keys)
        return isinstance(held, Mapping) and "$absent" in held
    around = get_path(initial, keys[:-1])
    return isinstance(around, list) and any(isinstance(e, Mapping) and "$absent" in e for e in around)


def _removes_only(value: Any) -> bool:
    """Whether ``value`` asks for nothing but removals: an absent marker, or a non-empty dict of such values."""
    if is_absent_marker(value):
        return True
    return isinstance(value, Mapping) and bool(value) and all(_removes_only(v) for v in value.values())
