"""The one conversion of a system's values to JSON: every stored answer, tool call, result and state goes through it.

A system hands the harness live Python objects: a tool returns a pydantic model
that a later call mutates, a snapshot holds ``Decimal`` balances and ``datetime``
stamps. :func:`to_json` turns such a value into a fresh JSON value (dicts with
string keys, lists, strings, numbers, booleans, ``None``) **at the moment it is
called**, so nothing stored shares an object with the system, and refuses what
has no exact JSON form with an error naming where it is and how to fix it.

=========================================  =====================================================
Python value                               stored as
=========================================  =====================================================
``dict`` / any mapping with ``str`` keys   an object (every value converted)
``list``, ``tuple``                        an array
``str``, ``int``, ``float``, ``bool``,     themselves (subclasses of str/int/float become the
``None``                                   plain type; ``NaN`` and infinities are kept)
pydantic model                             ``model_dump(mode="json")`` (the model's own JSON form)
dataclass instance                         an object of its fields
``enum.Enum``                              its ``value``
``datetime``, ``date``, ``time``           ISO 8601 text as pydantic writes it
                                           (``"2026-07-25T14:00:00Z"``, ``"2026-07-25"``)
``timedelta``                              an ISO 8601 duration (``"PT1H30M"``)
``decimal.Decimal``                        its exact text, ``str(d)`` (``Decimal("10.50")`` →
                                           ``"10.50"``), as pydantic writes it: never a float
``uuid.UUID``                              its text
=========================================  =====================================================

Refused (:class:`NotJSONError`): ``bytes`` (decode or base64-encode them), sets
(no order: return a sorted list), mapping keys that are not strings, values
nested deeper than :data:`~oloproof_nb._core.paths.MAX_DEPTH`, values that refer to themselves (named with
the object they point back to), and every other type.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as _dt
import decimal
import enum
import uuid
from collections.abc import Mapping
from typing import Any, Final

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_jsonable_python

from .paths import MAX_DEPTH, format_path

__all__ = ["to_json", "NotJSONError", "copy_json"]

_ATOMS: Final = frozenset({str, int, float, bool, type(None)})
_PYDANTIC_TEXT: Final = (_dt.datetime, _dt.date, _dt.time, _dt.timedelta, decimal.Decimal, uuid.UUID)


def copy_json(value: Any) -> Any:
    """A deep copy of ``value``: JSON dicts and lists are copied directly, anything else by ``copy.deepcopy``.

    The same result as ``copy.deepcopy`` for JSON values (a case's input and
    ``initial_state``), three to six times faster; shared sub-objects become
    separate copies.

    Examples
    --------
    >>> state = {"orders": {"o1": {"status": "delivered", "tags": ["a"]}}}
    >>> twin = copy_json(state)
    >>> twin == state, twin["orders"]["o1"]["tags"] is state["orders"]["o1"]["tags"]
    (True, False)
    """
    cls = type(value)
    if cls is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                return copy.deepcopy(value)
            out[key] = item if type(item) in _ATOMS else copy_json(item)
        return out
    if cls is list:
        return [item if type(item) in _ATOMS else copy_json(item) for item in value]
    if cls in _ATOMS:
        return value
    return copy.deepcopy(value)


class NotJSONError(TypeError):
    """A value has no exact JSON form; the message names the value, where it is, and the fix.

    Attributes
    ----------
    path : str
        Where the value sits inside the converted one (``""``: the value itself).
    type_name : str
        The refused type.
    too_deep : bool
        Refused for its nesting (deeper than ``MAX_DEPTH``), not for its type. A value that refers to itself
        (a parent pointer) is not too deep: its message names the object it points back to.
    """

    def __init__(self, what: str, path: str, type_name: str, fix: str, too_deep: bool = False) -> None:
        shown = path if len(path) <= 120 else path[:119] + "…"
        article = "an" if type_name[:1].lower() in "aeiou" else "a"
        if path:
            where = f"{what} holds {article} {type_name} at {shown}"
        else:  # the value itself: a dict with a refused key holds it ("a tool's result is an int key" read wrong)
            where = f"{what} {'holds' if type_name.endswith(' key') else 'is'} {article} {type_name}"
        super().__init__(f"{where}, which has no exact JSON form: {fix}")
        self.path = path
        self.type_name = type_name
        self.too_deep = too_deep


class _Refused(Exception):
    """Raised inside the walk; the keys are collected while it unwinds (only on the error path)."""

    def __init__(self, type_name: str, fix: str, too_deep: bool = False) -> None:
        self.type_name, self.fix, self.too_deep = type_name, fix, too_deep
        self.keys: list[str] = []


_GENERIC_FIX = ("return dicts, lists, strings, numbers, booleans or None "
                "(pydantic models, dataclasses, datetimes, Decimals and enums are converted for you)")


def _fix_for(value: Any) -> tuple[str, str]:
    name = f"{type(value).__name__} value"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return name, "decode it to text (or base64-encode it) before returning it"
    if isinstance(value, (set, frozenset)):
        return name, "a set has no order; return a sorted list instead"
    if type(value).__module__ == "numpy":
        return name, "convert numpy values with .item() or .tolist()"
    return name, _GENERIC_FIX


def to_json(value: Any, *, what: str = "the value") -> Any:
    """A fresh JSON copy of ``value``, converted as the table above says.

    Parameters
    ----------
    value : Any
        What a system returned: an answer, a tool's arguments or result, a state.
    what : str
        Names the value in errors, e.g. ``"tool get_order's result"`` or ``"snapshot()"``.

    Returns
    -------
    Any
        Built only of dicts with ``str`` keys, lists, ``str``, ``int``, ``float``,
        ``bool`` and ``None``; it shares no object with ``value``.

    Raises
    ------
    NotJSONError
        For a value with no exact JSON form, naming ``what``, the path inside it
        (``accounts.a.tags``) and the fix.

    Examples
    --------
    >>> from decimal import Decimal
    >>> to_json({"balance": Decimal("10.50"), "tags": ("a", "b")})
    {'balance': '10.50', 'tags': ['a', 'b']}
    >>> try:
    ...     to_json({"tags": {"a"}}, what="snapshot()")
    ... except NotJSONError as exc:
    ...     print(exc)
    snapshot() holds a set value at tags, which has no exact JSON form: a set has no order; return a sorted list instead
    """
    try:
        return _convert(value, 0)
    except _Refused as exc:
        keys = exc.keys[::-1]
        cycle = _cycle_on(value, keys) if exc.too_deep else None
        if cycle is not None:
            first, again, type_name = cycle
            keys = keys[:again]
            where = f"the object at {format_path(keys[:first])}" if first else f"{what} itself"
            raise NotJSONError(what, format_path(keys), type_name,
                               f"it refers to itself (it is {where}), so it never ends; leave the back-reference "
                               "out of what you return (a parent pointer: keep it in an attribute you leave out, "
                               "or return the key it points to)") from None
        raise NotJSONError(what, format_path(keys), exc.type_name, exc.fix, exc.too_deep) from None


def _cycle_on(value: Any, keys: list[str]) -> tuple[int, int, str] | None:
    """Where the walk down ``keys`` meets an object it passed already: ``(first, again, type name)``.

    ``first`` and ``again`` count the keys taken to reach the object the first and the second time. ``None``
    when the path is only deep (or cannot be followed again). Called on the error path only.
    """
    seen: dict[int, int] = {}
    walked: list[Any] = []  # kept alive: a mapping that makes its values on access frees them, and ids are reused
    taken = 0
    while type(value) not in _ATOMS:
        if id(value) in seen:
            return seen[id(value)], taken, f"{type(value).__name__} value"
        seen[id(value)] = taken
        walked.append(value)
        if isinstance(value, enum.Enum):  # converted through its value, which takes no key
            value = value.value
            continue
        if taken == len(keys):
            return None
        key = keys[taken]
        try:
            if isinstance(value, Mapping):
                value = value[key]
            elif isinstance(value, (list, tuple)):
                value = value[int(key)]
            elif dataclasses.is_dataclass(value) and not isinstance(value, type):
                value = getattr(value, key)
            else:
                return None
        except (LookupError, ValueError, AttributeError, TypeError):
            return None
        taken += 1
    return None


def _convert(value: Any, depth: int) -> Any:
    cls = type(value)
    if cls in _ATOMS:
        return value
    if depth >= MAX_DEPTH:
        raise _Refused(f"{cls.__name__} value", f"it is nested deeper than {MAX_DEPTH} levels (or refers to itself)",
                       too_deep=True)
    if cls is dict or isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                if not isinstance(key, str):
                    raise _Refused(f"{type(key).__name__} key", f"key {key!r} is not a string; JSON object keys "
                                   "are strings: convert the keys (e.g. str(key)) before returning the value")
                key = str.__str__(key)
            try:
                out[key] = item if type(item) in _ATOMS else _convert(item, depth + 1)
            except _Refused as exc:
                exc.keys.append(key)
                raise
        return out
    if cls is list or isinstance(value, (list, tuple)):
        items = []
        for idx, item in enumerate(value):
            try:
                items.append(item if type(item) in _ATOMS else _convert(item, depth + 1))
            except _Refused as exc:
                exc.keys.append(str(idx))
                raise
        return items
    return _convert_object(value, depth)


def _convert_object(value: Any, depth: int) -> Any:
    if isinstance(value, enum.Enum):
        return _convert(value.value, depth + 1)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, BaseModel):
        try:
            dumped = value.model_dump(mode="json")
        except (PydanticSerializationError, ValueError, TypeError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise _Refused(f"{type(value).__name__} model", f"its model_dump(mode='json') failed ({first}); give the "
                           "field a JSON type or a field_serializer") from None
        return _convert(dumped, depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in dataclasses.fields(value):
            try:
                out[f.name] = _convert(getattr(value, f.name), depth + 1)
            except _Refused as exc:
                exc.keys.append(f.name)
                raise
        return out
    if isinstance(value, _PYDANTIC_TEXT):
        return to_jsonable_python(value)
    raise _Refused(*_fix_for(value))
