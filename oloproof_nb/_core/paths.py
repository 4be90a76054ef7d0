"""Path syntax for nested states: parse, format, get, flatten and diff (pure).

A path is a dot-separated list of keys into nested dicts and lists:
``orders.ord-999.status``, ``items.0.qty``. A key that contains a dot (or a
bracket or a quote) is written in brackets with JSON string quotes:
``files["report.csv"].size``. A path that does not exist in a state is
*absent*, a value of its own: :data:`ABSENT` is not ``None``.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any, Final

from ..errors import quote

__all__ = [
    "ABSENT",
    "Absent",
    "parse_path",
    "format_path",
    "get_path",
    "flatten",
    "leaf_keys",
    "leaf_diff",
    "values_equal",
    "MAX_DEPTH",
    "exceeds_depth",
    "parse_pattern",
    "pattern_matches",
    "outside_patterns",
    "find_paths",
    "list_index",
]


#: What the path functions read as a JSON array: a tuple is one, as every stored state holds it (``to_json``
#: writes a tuple as a list; before, ``(True,)`` equalled ``(1,)``, as Python compares tuples, and
#: ``leaf_diff`` read a tuple as one leaf against the list it becomes).
_ARRAYS: Final = (list, tuple)


class Absent:
    """The value of a path that does not exist (distinct from ``None``/JSON ``null``)."""

    _instance: Absent | None = None

    def __new__(cls) -> Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<absent>"

    def __reduce__(self) -> str:
        return "ABSENT"

    def __copy__(self) -> Absent:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Absent:
        return self


ABSENT: Final = Absent()

_PLAIN = re.compile(r"[^.\[\]\"']+")


def list_index(key: str) -> int | None:
    """The list index a path key names, or None: ``"0"``, ``"12"`` (ASCII digits, no leading zero), as a list's
    elements are named in every path the toolkit writes (``items.0``); ``"00"`` or ``"٣"`` is no index.

    Examples
    --------
    >>> list_index("0"), list_index("12"), list_index("00"), list_index("-1"), list_index("x")
    (0, 12, None, None, None)
    """
    if key.isascii() and key.isdigit() and (key == "0" or key[0] != "0"):
        return int(key)
    return None


def parse_path(path: str) -> tuple[str, ...]:
    """Split a path into its keys.

    Parameters
    ----------
    path : str
        ``a.b.0.c`` or with bracketed keys: ``files["report.csv"].size``;
        ``items[0]`` is accepted as ``items.0``.

    Returns
    -------
    tuple of str
        The keys in order. A key made of digits indexes a list when the
        container is a list, and is a dict key otherwise.

    Raises
    ------
    ValueError
        For an empty path, an empty key, or an unclosed bracket or quote.

    Examples
    --------
    >>> parse_path('files["report.csv"].size')
    ('files', 'report.csv', 'size')
    >>> parse_path("items.0.qty")
    ('items', '0', 'qty')
    """
    if not isinstance(path, str) or path == "":
        raise ValueError(f"path {quote(path)} is empty; write keys separated by dots, e.g. orders.ord-1.status")
    keys: list[str] = []
    i, n = 0, len(path)
    expect_key = True
    while i < n:
        ch = path[i]
        if ch == "[":
            close = _bracket_end(path, i)
            inner = path[i + 1 : close]
            if inner.startswith('"'):
                try:
                    key = json.loads(inner)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"path {quote(path)}: bad quoted key {inner}: {exc.msg}") from None
            elif list_index(inner) is not None:
                key = inner
            else:
                raise ValueError(
                    f"path {quote(path)}: a bracket holds a quoted key or a list index (no leading zero), "
                    f'e.g. files["report.csv"] or items[0]'
                )
            keys.append(key)
            i = close + 1
            expect_key = False
            if i < n and path[i] not in ".[":
                raise ValueError(f"path {quote(path)}: expected '.' or '[' after ']' at position {i}")
            if i < n and path[i] == ".":
                i += 1
                expect_key = True
                if i == n:
                    raise ValueError(f"path {quote(path)} ends with '.'")
        elif ch == ".":
            raise ValueError(f"path {quote(path)} has an empty key at position {i}")
        else:
            m = _PLAIN.match(path, i)
            if m is None:
                raise ValueError(f"path {quote(path)}: unexpected {ch!r} at position {i}; quote such keys in brackets")
            keys.append(m.group(0))
            i = m.end()
            expect_key = False
            if i < n and path[i] == ".":
                i += 1
                expect_key = True
                if i == n:
                    raise ValueError(f"path {quote(path)} ends with '.'")
    if expect_key and not keys:
        raise ValueError(f"path {quote(path)} has no keys")
    return tuple(keys)


def _bracket_end(path: str, start: int) -> int:
    i = start + 1
    in_str = False
    while i < len(path):
        ch = path[i]
        if in_str:
            if ch == "\\":
                i += 2
                continue
            if ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == "]":
            return i
        i += 1
    raise ValueError(f"path {quote(path)}: '[' at position {start} is never closed")


def format_path(keys: Sequence[str | int]) -> str:
    """Write keys as a path; keys with dots, brackets or quotes are bracketed.

    Examples
    --------
    >>> format_path(["files", "report.csv", "size"])
    'files["report.csv"].size'
    >>> format_path(["items", 0])
    'items.0'
    """
    out = ""
    for key in keys:
        text = str(key)
        if text and _PLAIN.fullmatch(text):
            out = f"{out}.{text}" if out else text
        else:
            out += "[" + json.dumps(text, ensure_ascii=False) + "]"
    return out


def get_path(state: Any, path: str | Sequence[str]) -> Any:
    """The value at ``path`` in ``state``, or :data:`ABSENT` when it does not exist.

    Parameters
    ----------
    state : Any
        A JSON-like value: mappings and lists, nested.
    path : str or sequence of str
        A dotted path as :func:`parse_path` reads it (``items.0.qty``, ``a["c.d"]``), or its keys already
        split. A key that is a non-negative integer indexes a list.

    Returns
    -------
    Any
        The value there (``None`` when the state holds ``null``), or :data:`ABSENT` when a key is missing, an
        index is out of range, or the path goes through a leaf.

    Examples
    --------
    >>> get_path({"a": {"b": None}}, "a.b") is None
    True
    >>> get_path({"a": {}}, "a.b")
    <absent>
    >>> get_path({"items": [{"qty": 2}]}, "items.0.qty")
    2
    """
    keys = parse_path(path) if isinstance(path, str) else tuple(path)
    node = state
    for key in keys:
        if isinstance(node, Mapping):
            if key not in node:
                return ABSENT
            node = node[key]
        elif isinstance(node, _ARRAYS) and (idx := list_index(key)) is not None:
            if idx >= len(node):
                return ABSENT
            node = node[idx]
        else:
            return ABSENT
    return node


def _walk(node: Any, prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    if isinstance(node, Mapping) and node:
        for key, value in node.items():
            yield from _walk(value, (*prefix, str(key)))
    elif isinstance(node, _ARRAYS) and node:
        for idx, value in enumerate(node):
            yield from _walk(value, (*prefix, str(idx)))
    else:
        yield prefix, node


def _walk_unequal(node: Any, other: Any, prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """:func:`_walk` of ``node``, skipping every child equal (:func:`values_equal`) to ``other``'s at the same key."""
    if prefix and _changed_container(node, other):  # a list became a dict (or back): the container changed
        yield prefix, node
    elif isinstance(node, Mapping) and node:
        peer = other if isinstance(other, Mapping) else {}
        for key, value in node.items():
            twin = peer.get(key, ABSENT)
            if twin is not ABSENT and values_equal(value, twin):
                continue
            yield from _walk_unequal(value, twin, (*prefix, str(key)))
    elif isinstance(node, _ARRAYS) and node:
        seq = other if isinstance(other, _ARRAYS) else ()
        for idx, value in enumerate(node):
            twin = seq[idx] if idx < len(seq) else ABSENT
            if twin is not ABSENT and values_equal(value, twin):
                continue
            yield from _walk_unequal(value, twin, (*prefix, str(idx)))
    else:
        yield prefix, node


def _changed_container(node: Any, other: Any) -> bool:
    """True when one of two values is a dict and the other a list (an index-keyed dict is not a list)."""
    return (isinstance(node, Mapping) and isinstance(other, _ARRAYS)) or (
        isinstance(node, _ARRAYS) and isinstance(other, Mapping))


def leaf_keys(state: Any) -> Iterator[tuple[str, ...]]:
    """The keys of every leaf path of ``state``, as :func:`flatten` finds them (unformatted, depth first).

    Examples
    --------
    >>> list(leaf_keys({"a": {"b": 1, "c": [1]}, "e": {}}))
    [('a', 'b'), ('a', 'c', '0'), ('e',)]
    """
    return (keys for keys, _ in _walk(state, ()) if keys)


def flatten(state: Any) -> dict[str, Any]:
    """Map every leaf path of ``state`` to its value.

    Leaves are values that are neither dicts nor lists, plus empty dicts and
    lists (so ``{}`` and ``[]`` stay visible). The root itself is never a leaf
    unless it is empty, in which case the result is empty.

    Parameters
    ----------
    state : Any
        A JSON-like value: mappings and lists, nested.

    Returns
    -------
    dict of str to Any
        Each leaf's path (as :func:`parse_path` reads it back: a key holding a dot is quoted, a list index
        is its number) mapped to its value, in the order of ``state``.

    Examples
    --------
    >>> flatten({"a": {"b": 1, "c.d": [1, 2]}, "e": {}})
    {'a.b': 1, 'a["c.d"].0': 1, 'a["c.d"].1': 2, 'e': {}}
    >>> flatten({}), flatten(5)
    ({}, {})
    """
    return {format_path(keys): value for keys, value in _walk(state, ()) if keys}


#: Every int up to this size is exactly a float; beyond it, values_equal measures distances with fractions.
_EXACT_FLOAT_INTS: Final = 2**53


def values_equal(expected: Any, actual: Any, tolerance: float | None = None) -> bool:
    """Compare two leaves the way every state check does.

    Booleans never equal numbers (``True`` is not ``1``), ``NaN`` equals
    ``NaN``, :data:`ABSENT` equals only itself, a tuple is a list (a JSON array, as a
    stored state holds it), and with ``tolerance`` two
    numbers are also equal when ``|expected - actual| <= tolerance`` (equal
    infinities are equal, though their difference is NaN), as binary floats
    or as the numbers are written (a float's shortest decimal form, what a
    state file and the panel show): ``39.9`` is within ``0.1`` of ``40.0``,
    though the floats are 0.10000000000000142 apart.

    Examples
    --------
    >>> values_equal(1, 1.0), values_equal(True, 1), values_equal(0.5, 0.51, tolerance=0.02)
    (True, False, True)
    >>> values_equal(40.0, 39.9, tolerance=0.1), values_equal(40.0, 39.89, tolerance=0.1)
    (True, False)
    >>> values_equal(float("inf"), float("inf"), tolerance=0.01), values_equal(float("inf"), 1e308, tolerance=1e308)
    (True, False)
    >>> values_equal(90.0, 10**400, tolerance=0.01)   # no float holds the distance: not equal (it raised)
    False
    """
    cls = type(expected)
    if cls is type(actual):  # fast paths for the common exact types; the same answers as the rules below
        if cls is str or expected is None or (cls is int and tolerance is None):
            return bool(expected == actual)
        if cls is dict:
            return expected.keys() == actual.keys() and all(
                values_equal(expected[k], actual[k], tolerance) for k in expected
            )
    if expected is ABSENT or actual is ABSENT:
        return expected is actual
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        if isinstance(expected, float) and isinstance(actual, float) and math.isnan(expected) and math.isnan(actual):
            return True
        if tolerance is not None and expected != actual:  # equal infinities: inf - inf is NaN, no distance
            if any(type(x) is int and abs(x) > _EXACT_FLOAT_INTS for x in (expected, actual)) and not any(
                    type(x) is float and not math.isfinite(x) for x in (expected, actual)):
                # exactly: an int beyond 2**53 turned into a float loses its last digits (2**53 + 1 was within
                # tolerance 0 of 2.0**53, so tolerance: 0 was looser than no tolerance); below, float arithmetic
                # as for two floats, so 1 and 1.0 are judged alike
                return abs(Fraction(expected) - Fraction(actual)) <= Fraction(tolerance)
            try:
                distance = abs(expected - actual)
            except OverflowError:  # an int beyond float range against a float: farther apart than any tolerance
                return False
            if distance <= tolerance:
                return True
            # at the boundary (past it by the rounding of floats at most), measured as written: 39.9 and 40.0 are
            # 0.1 apart, as tolerance 0.1 says, while their floats are 0.10000000000000142 apart
            slack = 1e-15 * (abs(expected) + abs(actual) + tolerance)  # more than the floats and their difference round
            return bool(math.isfinite(distance) and distance <= tolerance + slack  # a NumPy float's <: numpy.bool
                        and abs(_as_written(expected) - _as_written(actual)) <= _as_written(tolerance))
        return bool(expected == actual)  # numpy.float64 is a float, and its == gives numpy.True_
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        return expected.keys() == actual.keys() and all(
            values_equal(expected[k], actual[k], tolerance) for k in expected
        )
    if isinstance(expected, _ARRAYS) and isinstance(actual, _ARRAYS):
        return len(expected) == len(actual) and all(
            values_equal(e, a, tolerance) for e, a in zip(expected, actual, strict=True)
        )
    if type(expected) is not type(actual) and not (isinstance(expected, str) and isinstance(actual, str)):
        return False
    return bool(expected == actual)


def _as_written(number: float) -> Fraction:
    """An int exactly; a float as its shortest decimal form (``float.__repr__``: 0.1 is 1/10, not the binary
    0.1000000000000000055…), the number a JSON file or a panel writes."""
    return Fraction(number) if isinstance(number, int) else Fraction(float.__repr__(number))


def leaf_diff(before: Any, after: Any) -> list[tuple[str, Any, Any]]:
    """Leaves whose value differs between two states, as ``(path, before, after)``.

    A leaf present on one side only has :data:`ABSENT` on the other. A
    container whose type changed (a list became a dict keyed by index, or back)
    is one row holding both containers: ``[1]`` and ``{"0": 1}`` are different
    values. Paths come in the order they appear in ``before``, then new ones in
    the order of ``after``.

    Parameters
    ----------
    before, after : Any
        Two states (nested dicts and lists of JSON values, as a rule).

    Returns
    -------
    list of (str, Any, Any)
        One row per differing leaf; leaves are compared with :func:`values_equal`.

    Notes
    -----
    Two states of plain ``dict``/``list``/``str``/``int``/``float``/``bool``/``None``
    values with ``str`` keys (every state read back from JSON) take one pass
    that skips equal subtrees and formats only the paths it returns; anything
    else (another Mapping, a tuple, a non-``str`` key, a dict root against a
    list root) takes the general two-walk definition. Both give the same rows. A tuple is
    read as the list a stored state holds instead (``op.get_path`` and ``op.flatten`` read it so too).

    Examples
    --------
    >>> leaf_diff({"o": {"a": 1, "b": 2}}, {"o": {"a": 1, "b": 3, "c": 4}})
    [('o.b', 2, 3), ('o.c', <absent>, 4)]
    >>> leaf_diff({"t": [1]}, {"t": {"0": 1}})
    [('t', [1], {'0': 1})]
    >>> leaf_diff({"o": {"x": {"a": 1}, "y": {"a": 1}}}, {"o": {"y": {"a": 1, "b": 2}, "x": {"a": 1, "b": 3}}})
    [('o.y.b', <absent>, 2), ('o.x.b', <absent>, 3)]

    An empty container is a leaf, so one that gains its first entry is a leaf gone beside the new ones (and
    one emptied a leaf new): ``after`` is ABSENT there although the key stays.

    >>> leaf_diff({"loans": {}}, {"loans": {"b0": "m0"}}), leaf_diff({"loans": {"b0": "m0"}}, {"loans": {}})
    ([('loans', {}, <absent>), ('loans.b0', <absent>, 'm0')], [('loans.b0', 'm0', <absent>), ('loans', <absent>, {})])
    """
    rows: list[tuple[str, Any, Any]] = []
    try:
        if type(before) is dict and type(after) is dict:
            # nothing changed (900 of the benchmark desk's 2,000 states): answered without a walk that finds nothing
            if not _differ(before, after) and _same(before, after):
                return rows
            new = _diff_dicts(before, after, "", rows)
        elif type(before) is list and type(after) is list:
            new = _diff_lists(before, after, "", rows)
        else:
            return _leaf_diff_general(before, after)
    except _Unusual:
        return _leaf_diff_general(before, after)
    if new:
        rows += new
    return rows


def _leaf_diff_general(before: Any, after: Any) -> list[tuple[str, Any, Any]]:
    """:func:`leaf_diff` for any values: flatten the unequal parts of both states, then pair the paths."""
    # subtrees equal on both sides (same keys, values_equal) hold no differing leaf: they are never flattened
    old = {format_path(keys): value for keys, value in _walk_unequal(before, after, ()) if keys}
    new = {format_path(keys): value for keys, value in _walk_unequal(after, before, ()) if keys}
    rows = [(p, v, new.get(p, ABSENT)) for p, v in old.items() if not values_equal(v, new.get(p, ABSENT))]
    rows += [(p, ABSENT, v) for p, v in new.items() if p not in old]
    return rows


# -- the one-pass leaf_diff for plain JSON values ------------------------------------------------------------------
# Paths of str keys format one to one (parse_path gives the keys back), so a path names one place: the general
# definition pairs leaves by path, the pass below pairs them by place. A leaf found on both sides differs (its parents
# compared unequal, and two leaves at one place are compared once). Equality is values_equal restricted to plain JSON
# types: any other value (a Mapping that is not a dict, a tuple, ABSENT stored in a state, ...) or a non-str key on
# an emitted path raises _Unusual, and leaf_diff answers with the general definition instead.


class _Unusual(Exception):
    """A value the one-pass diff leaves to the general definition."""


_MISSING: Final = object()
_NONE: Final = type(None)
_JSON_SCALARS: Final = frozenset({str, int, float, bool, _NONE})
_JSON_TYPES: Final = _JSON_SCALARS | {dict, list}
_NUMBERS: Final = frozenset({int, float})
_STR_ONLY: Final = frozenset({str})
_NOT_PLAIN: Final = frozenset(".[]\"'")
#: Two dicts (or lists) longer than this under one key are walked at once, not first compared: a comparison stops at
#: the first difference, and the walk would compare that part again. Shorter ones are walked at once too when
#: Python's own ``!=`` (in C, many times faster) finds them different (:func:`_differ`); only those it finds
#: equal are compared with :func:`_same`, which tells a bool from a number as ``!=`` does not.
_WALK_AT_ONCE: Final = 8
_Row = tuple[str, Any, Any]


def _child_path(prefix: str, key: str | int) -> str:
    """``format_path((*keys, key))`` given ``prefix == format_path(keys)``; an int key is a list index."""
    if isinstance(key, int):
        return f"{prefix}.{key}" if prefix else str(key)
    # a plain key (_PLAIN.fullmatch): not empty and none of . [ ] " ' (an identifier never holds them)
    if key.isidentifier() or (key and _NOT_PLAIN.isdisjoint(key)):
        return f"{prefix}.{key}" if prefix else key
    return prefix + "[" + json.dumps(key, ensure_ascii=False) + "]"


def _same(x: Any, y: Any) -> bool:
    """:func:`values_equal` (no tolerance) for plain JSON values; raises :class:`_Unusual` on any other type."""
    t = type(x)
    if t is not type(y):
        if t in _NUMBERS and type(y) in _NUMBERS:
            return bool(x == y)  # 1 == 1.0; a bool is neither
        if t in _JSON_TYPES and type(y) in _JSON_TYPES:
            return False
        raise _Unusual
    if t is dict:
        if len(x) != len(y):  # with every key of x in y: the same keys
            return False
        get = y.get
        for k, v in x.items():
            w = get(k, _MISSING)
            tv = type(v)
            if tv is type(w):
                if tv is str or tv is int or tv is bool or tv is _NONE:
                    if v != w:
                        return False
                    continue
            elif w is _MISSING:
                return False
            if not _same(v, w):
                return False
        return True
    if t is list:
        if len(x) != len(y):
            return False
        for v, w in zip(x, y, strict=True):
            tv = type(v)
            if tv is type(w) and (tv is str or tv is int or tv is bool or tv is _NONE):
                if v != w:
                    return False
            elif not _same(v, w):
                return False
        return True
    if t is str or t is int or t is bool or t is _NONE:
        return bool(x == y)
    if t is float:
        return bool(x == y or (x != x and y != y))  # NaN equals NaN
    raise _Unusual


def _differ(x: Any, y: Any) -> bool:
    """Whether ``x != y`` in Python's own comparison. True: the walk below finds a row, or only NaN objects
    (``!=`` there, equal for :func:`values_equal`, so the walk finds none); False: equal but for a bool against
    a number (``True == 1``), which :func:`_same` tells apart. A comparison that raises (a value of another
    type) leaves the diff to the general definition, as :func:`_same` does."""
    try:
        return bool(x != y)
    except Exception:
        raise _Unusual from None


def _flatten_into(node: Any, path: str, out: list[_Row], old: bool) -> None:
    """Append every leaf of a subtree found on one side only: ``(path, leaf, ABSENT)`` or ``(path, ABSENT, leaf)``."""
    t = type(node)
    if t is dict and node:
        for k, v in node.items():
            if type(k) is not str:
                raise _Unusual
            _flatten_into(v, _child_path(path, k), out, old)
    elif t is list and node:
        for i, v in enumerate(node):
            _flatten_into(v, f"{path}.{i}", out, old)
    elif t in _JSON_TYPES:
        out.append((path, node, ABSENT) if old else (path, ABSENT, node))
    else:
        raise _Unusual


def _diff_pair(b: Any, a: Any, path: str, rows: list[_Row]) -> list[_Row] | None:
    """Rows at or below ``path`` for two unequal values there.

    The rows in ``before``'s order are appended to ``rows``; the rows only ``after`` has are returned.
    """
    tb, ta = type(b), type(a)
    new: list[_Row] = []
    if tb is dict or tb is list:
        if ta is dict or ta is list:
            if b and a and ta is tb:
                return _diff_dicts(b, a, path, rows) if tb is dict else _diff_lists(b, a, path, rows)
            if ta is not tb:  # a list became a dict (or back): one row holding both
                rows.append((path, b, a))
                return None
            if not a:  # b is not empty: its leaves against one empty leaf
                _flatten_into(b, path, rows, True)
                return [(path, ABSENT, a)]
            rows.append((path, b, ABSENT))  # b is empty, a is not
            _flatten_into(a, path, new, False)
            return new
        if ta not in _JSON_SCALARS:
            raise _Unusual
        if b:
            _flatten_into(b, path, rows, True)
            return [(path, ABSENT, a)]
    elif tb not in _JSON_SCALARS:
        raise _Unusual
    elif ta is dict or ta is list:
        if a:
            rows.append((path, b, ABSENT))
            _flatten_into(a, path, new, False)
            return new
    elif ta not in _JSON_SCALARS:
        raise _Unusual
    rows.append((path, b, a))  # two leaves
    return None


def _diff_dicts(b: dict[Any, Any], a: dict[Any, Any], path: str, rows: list[_Row]) -> list[_Row] | None:
    """Rows below two dicts (non-empty unless at the root): see :func:`_diff_pair`; equal values are skipped."""
    pending: dict[str, list[_Row]] | None = None  # rows only in after, per key of both, until after's order is known
    touched = False  # a row was found under a key of both sides
    get = a.get
    for k, bv in b.items():
        av = get(k, _MISSING)
        tv = type(bv)
        if tv is type(av):
            if tv is str or tv is int or tv is bool or tv is _NONE:
                if bv == av:
                    continue
            elif (tv is dict or tv is list) and bv and av and (
                    len(bv) > _WALK_AT_ONCE or (type(k) is str and _differ(bv, av))):
                if type(k) is not str:
                    raise _Unusual
                n_rows = len(rows)
                new = (_diff_dicts if tv is dict else _diff_lists)(bv, av, _child_path(path, k), rows)
                if new:
                    if pending is None:
                        pending = {}
                    pending[k] = new
                touched = touched or bool(new) or len(rows) != n_rows
                continue
            elif _same(bv, av):
                continue
        elif av is _MISSING:
            if type(k) is not str:
                raise _Unusual
            _flatten_into(bv, _child_path(path, k), rows, True)
            continue
        elif _same(bv, av):
            continue
        if type(k) is not str:
            raise _Unusual
        touched = True
        new = _diff_pair(bv, av, _child_path(path, k), rows)
        if new:
            if pending is None:
                pending = {}
            pending[k] = new
    only_after = not (a.keys() <= b.keys())
    if (touched or only_after) and not _STR_ONLY.issuperset(map(type, a)):  # after's keys name rows too
        raise _Unusual
    if not only_after:
        if pending is None:
            return None
        if len(pending) == 1:
            return next(iter(pending.values()))
    out: list[_Row] = []
    for k, av in a.items():
        if pending is not None and k in pending:
            out += pending[k]
        elif k not in b:
            _flatten_into(av, _child_path(path, k), out, False)
    return out


def _diff_lists(b: list[Any], a: list[Any], path: str, rows: list[_Row]) -> list[_Row] | None:
    """Rows below two lists (non-empty unless at the root): see :func:`_diff_dicts`."""
    out: list[_Row] | None = None
    n_a = len(a)
    for i, bv in enumerate(b):
        if i >= n_a:
            _flatten_into(bv, _child_path(path, i), rows, True)
            continue
        av = a[i]
        tv = type(bv)
        if tv is type(av):
            if tv is str or tv is int or tv is bool or tv is _NONE:
                if bv == av:
                    continue
            elif (tv is dict or tv is list) and bv and av and (len(bv) > _WALK_AT_ONCE or _differ(bv, av)):
                new = (_diff_dicts if tv is dict else _diff_lists)(bv, av, _child_path(path, i), rows)
                if new:
                    if out is None:
                        out = new
                    else:
                        out += new
                continue
            elif _same(bv, av):
                continue
        elif _same(bv, av):
            continue
        new = _diff_pair(bv, av, _child_path(path, i), rows)
        if new:
            if out is None:
                out = new
            else:
                out += new
    for i in range(len(b), n_a):
        if out is None:
            out = []
        _flatten_into(a[i], _child_path(path, i), out, False)
    return out


def parse_pattern(pattern: str) -> tuple[str, ...]:
    """Split a path pattern into its keys: a path whose keys may hold wildcards.

    ``*`` inside a key matches any characters of one key (``ord-*``, ``*``),
    and a key that is exactly ``**`` matches any number of keys (none
    included). Bracketed keys may hold wildcards too: ``files["*.txt"]``.
    A run of ``**`` keys matches what one does, and is read as one (each more
    multiplied the ways a path was tried: ``**.**.**.**.**.**.z`` took seconds
    against one path of 40 keys).

    Examples
    --------
    >>> parse_pattern("accounts.*.balance"), parse_pattern('**.updated_at')
    (('accounts', '*', 'balance'), ('**', 'updated_at'))
    >>> parse_pattern("a.**.**.b.**")
    ('a', '**', 'b', '**')

    There is no escape: a key named ``*`` is matched by every key beside it, bracketed or not.

    >>> [pattern_matches(parse_pattern('grants["*"]'), ("grants", key)) for key in ("*", "alice")]
    [True, True]
    """
    keys = parse_path(pattern)
    return tuple(key for i, key in enumerate(keys) if not (key == "**" and i and keys[i - 1] == "**"))


@functools.lru_cache(maxsize=512)
def _wildcard(key: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(piece) for piece in key.split("*")), re.DOTALL)


def _key_matches(pattern_key: str, key: str) -> bool:
    if "*" not in pattern_key:
        return pattern_key == key
    return _wildcard(pattern_key).fullmatch(key) is not None


def pattern_matches(pattern: Sequence[str], keys: Sequence[str], *, within: bool = False) -> bool:
    """True when the pattern's keys match ``keys`` (see :func:`parse_pattern`).

    Parameters
    ----------
    pattern, keys : sequence of str
        Keys of a pattern and of a path.
    within : bool
        Also True when the pattern matches a prefix of ``keys`` (the path lies
        inside a matched subtree).

    Examples
    --------
    >>> pattern_matches(("orders", "*", "note"), ("orders", "o1", "note"))
    True
    >>> pattern_matches(("orders", "*"), ("orders", "o1", "note")), pattern_matches(("orders", "*"),
    ...                                                                           ("orders", "o1", "note"), within=True)
    (False, True)
    >>> pattern_matches(("**", "at"), ("a", "b", "at")), pattern_matches(("**", "at"), ("at",))
    (True, True)
    """
    n_pat, n_keys = len(pattern), len(keys)
    tried: set[tuple[int, int]] = set()  # (p, k) found not to match: each is tried once, however many ``**`` lead to it

    def match(p: int, k: int) -> bool:
        if p == n_pat:
            return within or k == n_keys
        if (p, k) in tried:
            return False
        if pattern[p] == "**":
            found = any(match(p + 1, j) for j in range(k, n_keys + 1))
        else:
            found = k < n_keys and _key_matches(pattern[p], keys[k]) and match(p + 1, k + 1)
        if not found:
            tried.add((p, k))
        return found

    return match(0, 0)


def outside_patterns(paths: Iterable[str], patterns: Sequence[str], keep: Sequence[str] = ()) -> list[str]:
    """The ``paths`` under none of the path ``patterns`` (a path inside a matched subtree is under it), and those
    at, inside or above one of the ``keep`` paths whatever the patterns (a path another check judges).

    Examples
    --------
    >>> outside_patterns(["refunds.21.at", "refunds.21.amount", "log.1.at"], ["refunds.*.at", "log"])
    ['refunds.21.amount']
    >>> outside_patterns(["refunds.21.at", "refunds.7.at"], ["refunds.*.at"], keep=["refunds.7"])
    ['refunds.7.at']
    """
    parsed = [parse_pattern(p) for p in patterns]
    kept = {parse_path(k) for k in keep}
    above = {k[:i] for k in kept for i in range(len(k))}  # the paths a kept path lies inside

    def judged(keys: tuple[str, ...]) -> bool:
        return keys in above or any(keys[:i] in kept for i in range(len(keys) + 1))

    out = []
    for path in paths:
        keys = parse_path(path)
        if not any(pattern_matches(p, keys, within=True) for p in parsed) or (kept and judged(keys)):
            out.append(path)
    return out


def _children(node: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield str(key), value
    elif isinstance(node, _ARRAYS):
        for idx, value in enumerate(node):
            yield str(idx), value


def find_paths(state: Any, pattern: Sequence[str]) -> list[tuple[str, ...]]:
    """Every path of ``state`` the pattern matches, as key tuples, in the order the state holds them.

    Examples
    --------
    >>> find_paths({"files": {"a.txt": "x", "b.csv": "y"}}, parse_pattern('files["*.txt"]'))
    [('files', 'a.txt')]
    >>> find_paths({"t": [{"s": "a"}, {"s": "b"}]}, ("t", "*", "s"))
    [('t', '0', 's'), ('t', '1', 's')]
    """
    found: dict[tuple[str, ...], None] = {}
    walked: set[tuple[int, tuple[str, ...]]] = set()  # a ``**`` reaches a path many ways: each is walked once

    def walk(node: Any, p: int, prefix: tuple[str, ...]) -> None:
        if p == len(pattern):
            found[prefix] = None
            return
        if (p, prefix) in walked:
            return
        walked.add((p, prefix))
        key = pattern[p]
        if key == "**":
            walk(node, p + 1, prefix)
            for child_key, child in _children(node):
                walk(child, p, (*prefix, child_key))
            return
        for child_key, child in _children(node):
            if _key_matches(key, child_key):
                walk(child, p + 1, (*prefix, child_key))

    walk(state, 0, ())
    return [keys for keys in found if keys]


#: How deeply a case line, a state or a trajectory may nest dicts and lists. Every
#: check recurses into states, so deeper values are refused up front with a clear
#: error instead of failing later with a RecursionError.
MAX_DEPTH: Final = 200


def exceeds_depth(value: Any, limit: int = MAX_DEPTH) -> bool:
    """True when ``value`` nests dicts and lists more than ``limit`` levels deep.

    Iterative (no recursion), so it is safe on any value ``json.loads`` returns.

    Examples
    --------
    >>> exceeds_depth({"a": [1]}, limit=2), exceeds_depth({"a": [[1]]}, limit=2)
    (False, True)
    """
    # level by level, keeping only containers; scalars are skipped by an exact-type test (no ABC check)
    level = [] if type(value) in _SCALARS or not isinstance(value, _CONTAINERS) else [value]
    depth = 1
    while level:
        if depth > limit:
            return True
        below: list[Any] = []
        for node in level:
            for child in node.values() if isinstance(node, Mapping) else node:
                if type(child) not in _SCALARS and isinstance(child, _CONTAINERS):
                    below.append(child)
        level = below
        depth += 1
    return False


_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
_CONTAINERS: Final = (Mapping, list, tuple)
