"""The one conversion of system values to JSON: what is converted (and to exactly what), what is refused, and where."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import uuid
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from pydantic import BaseModel

from oloproof_nb._core.jsonsafe import NotJSONError, copy_json, to_json
from oloproof_nb._core.paths import MAX_DEPTH


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Txn(BaseModel):
    amount: Decimal
    at: dt.datetime
    tags: list[str]


class Account(BaseModel):
    iban: str
    history: list[Txn]


@dataclasses.dataclass
class Point:
    x: int
    when: dt.date
    colour: Colour


UTC = dt.timezone.utc


@pytest.mark.parametrize(("value", "expected"), [
    (Decimal("10.50"), "10.50"),  # exact text, trailing zero kept; never the float 10.5
    (Decimal("0.1"), "0.1"),
    (Decimal("1E+3"), "1E+3"),
    (dt.datetime(2026, 7, 25, 14, 0, tzinfo=UTC), "2026-07-25T14:00:00Z"),
    (dt.datetime(2026, 7, 25, 14, 0, 0, 5), "2026-07-25T14:00:00.000005"),  # naive stays naive: no local-time guess
    (dt.datetime(2026, 7, 25, 14, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))), "2026-07-25T14:00:00+02:00"),
    (dt.date(2026, 1, 2), "2026-01-02"),
    (dt.time(1, 2, 3), "01:02:03"),
    (dt.timedelta(hours=1, minutes=30), "PT1H30M"),
    (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
    (Colour.RED, "red"),
    (Level.HIGH, 3),
    ((1, "a"), [1, "a"]),
    (OrderedDict(b=1, a=2), {"b": 1, "a": 2}),
    (np.float64(0.25), 0.25),  # a float subclass is a float
])
def test_scalar_conversions_are_the_documented_ones(value: Any, expected: Any) -> None:
    out = to_json(value)
    assert out == expected and type(out) is type(expected)


def test_pydantic_scalars_are_written_as_pydantic_writes_them() -> None:
    # the same value, top level or inside a model, has one stored form
    txn = Txn(amount=Decimal("12.30"), at=dt.datetime(2026, 1, 1, tzinfo=UTC), tags=["x"])
    assert to_json(txn) == txn.model_dump(mode="json") == {"amount": "12.30", "at": "2026-01-01T00:00:00Z",
                                                            "tags": ["x"]}
    assert to_json({"amount": txn.amount, "at": txn.at}) == {"amount": "12.30", "at": "2026-01-01T00:00:00Z"}


def test_nested_models_and_dataclasses_become_plain_json() -> None:
    account = Account(iban="ME-1", history=[Txn(amount=Decimal("5"), at=dt.datetime(2026, 1, 1, tzinfo=UTC),
                                                tags=[])])
    out = to_json({"acct": account, "p": Point(1, dt.date(2026, 2, 3), Colour.RED)})
    assert out == {"acct": {"iban": "ME-1", "history": [{"amount": "5", "at": "2026-01-01T00:00:00Z", "tags": []}]},
                   "p": {"x": 1, "when": "2026-02-03", "colour": "red"}}
    assert json.loads(json.dumps(out)) == out  # plain JSON all the way down


def test_the_copy_shares_nothing_with_the_value() -> None:
    inner = {"a": [1, {"b": 2}]}
    value = {"x": inner, "y": inner}
    out = to_json(value)
    inner["a"][1]["b"] = 99  # a later mutation of the live object
    assert out == {"x": {"a": [1, {"b": 2}]}, "y": {"a": [1, {"b": 2}]}}
    assert out["x"] is not out["y"]


@pytest.mark.parametrize(("value", "path", "type_name", "fix"), [
    ({"a": {"b": b"\x00"}}, "a.b", "bytes value", "decode it"),
    ({"tags": {"x", "y"}}, "tags", "set value", "sorted list"),
    ({"t": [1, frozenset()]}, "t.1", "frozenset value", "sorted list"),
    ({"n": np.int64(3)}, "n", "int64 value", ".item()"),
    ({"o": object()}, "o", "object value", "pydantic models"),
    ({"files": {"r.csv": {1: "a"}}}, 'files["r.csv"]', "int key", "string"),
    ({"p": Point(1, dt.date(2026, 1, 1), Colour.RED), "q": [Point(2, b"x", Colour.RED)]},  # type: ignore[arg-type]
     "q.0.when", "bytes value", "decode it"),
])
def test_refusals_name_the_path_the_type_and_the_fix(value: Any, path: str, type_name: str, fix: str) -> None:
    with pytest.raises(NotJSONError) as info:
        to_json(value, what="snapshot()")
    exc = info.value
    assert exc.path == path and exc.type_name == type_name
    text = str(exc)
    assert text.startswith(f"snapshot() holds a {type_name} at {path}" if not type_name.startswith(("i", "o"))
                           else f"snapshot() holds an {type_name} at {path}")
    assert fix in text


def test_a_refused_value_at_the_root_is_named_without_a_path() -> None:
    with pytest.raises(NotJSONError, match=r"^the answer is a bytes value, which has no exact JSON form"):
        to_json(b"ab", what="the answer")


def test_a_refused_key_at_the_root_is_held_by_the_value() -> None:
    """A tool that returns its rows keyed by an int id: the result is a dict holding an int key, which the message
    said it was (``tool list_orders's result is an int key``)."""
    with pytest.raises(NotJSONError, match=r"^tool list_orders's result holds an int key, which has no exact JSON "
                       r"form: key 17 is not a string"):
        to_json({17: {"status": "pending"}}, what="tool list_orders's result")


def test_cycles_and_deep_values_are_refused_not_recursed_forever() -> None:
    loop: dict[str, Any] = {}
    loop["me"] = loop
    with pytest.raises(NotJSONError, match=r"holds a dict value at me, .*it refers to itself \(it is the value "
                       r"itself\)") as info:
        to_json(loop)
    assert not info.value.too_deep
    deep: Any = 1
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(NotJSONError, match="nested deeper than"):
        to_json(deep)
    ok: Any = 1
    for _ in range(MAX_DEPTH - 1):  # at the limit: accepted
        ok = [ok]
    assert to_json(ok) == ok


def test_a_model_that_cannot_dump_itself_is_refused_with_the_field_fix() -> None:
    class Opaque(BaseModel, arbitrary_types_allowed=True):
        handle: object

    with pytest.raises(NotJSONError, match=r"holds an Opaque model at h.*model_dump"):
        to_json({"h": Opaque(handle=object())}, what="the state")


def test_a_back_reference_is_named_with_the_object_it_points_to() -> None:
    """Objects holding a pointer to their parent (a tree of dataclasses, as a file system keeps it) are refused
    at the pointer, naming the object it points back to, through lists, tuples and dataclasses alike;
    before, the message was a path of 200 keys cut at 120 characters and "nested deeper than 200 levels (or
    refers to itself)"."""
    @dataclasses.dataclass
    class Node:
        name: str
        up: Any = None
        kids: list[Any] = dataclasses.field(default_factory=list)

    root = Node("/")
    child = Node("a", up=("parent", root))
    root.kids.append(child)
    with pytest.raises(NotJSONError) as info:
        to_json({"fs": {"root": root}}, what="the state")
    assert str(info.value).startswith("the state holds a Node value at fs.root.kids.0.up.1, which has no exact JSON "
                                      "form: it refers to itself (it is the object at fs.root)")
    assert info.value.path == "fs.root.kids.0.up.1" and info.value.type_name == "Node value"
    assert not info.value.too_deep


def test_nan_and_infinities_are_kept() -> None:
    out = to_json({"a": float("nan"), "b": float("inf")})
    assert out["a"] != out["a"] and out["b"] == float("inf")


@pytest.mark.parametrize("container", ["list", "dict"])
def test_the_depth_limit_is_the_one_of_exceeds_depth(container: str) -> None:
    # MAX_DEPTH levels of lists or objects pass, one more is refused: the limit exceeds_depth (the case file's
    # and the sandbox's) draws, so a state to_json stores is one a case file may hold
    from oloproof_nb._core.paths import exceeds_depth

    def nest(levels: int) -> Any:
        value: Any = 1
        for _ in range(levels):
            value = [value] if container == "list" else {"k": value}
        return value

    at_limit, over = nest(MAX_DEPTH), nest(MAX_DEPTH + 1)
    assert not exceeds_depth(at_limit) and exceeds_depth(over)
    assert to_json(at_limit) == at_limit
    with pytest.raises(NotJSONError, match="nested deeper than") as info:
        to_json(over)
    assert info.value.too_deep


def test_a_path_longer_than_120_characters_is_cut_in_the_message_only() -> None:
    for length, shown in ((120, "A" * 120 + ","), (121, "A" * 119 + "…,")):
        with pytest.raises(NotJSONError) as info:
            to_json({"A" * length: b"x"}, what="the state")
        assert info.value.path == "A" * length  # the attribute keeps the whole path
        assert f"holds a bytes value at {shown} which" in str(info.value)


def test_subclasses_of_str_and_int_become_the_plain_types_keys_too() -> None:
    class Name(str):
        pass

    class Cents(int):
        pass

    class Key(str, enum.Enum):  # enum.StrEnum is 3.11+
        A = "a"

    out = to_json({Key.A: Name("x"), "n": [Cents(5)], Name("k"): 1})
    assert out == {"a": "x", "n": [5], "k": 1}
    assert [type(k) for k in out] == [str, str, str]
    assert type(out["a"]) is str and type(out["n"][0]) is int
    assert json.dumps(out) == '{"a": "x", "n": [5], "k": 1}'


def test_a_dataclass_class_is_refused_as_a_type_not_read_as_an_instance() -> None:
    with pytest.raises(NotJSONError) as info:
        to_json({"k": Point}, what="the answer")
    assert info.value.path == "k" and info.value.type_name == "type value"


def test_a_model_whose_model_dump_takes_no_mode_is_refused_naming_model_dump() -> None:
    class Legacy(BaseModel):
        a: int

        def model_dump(self) -> dict[str, Any]:  # type: ignore[override]  # no mode=: a TypeError when called so
            return {"a": self.a}

    with pytest.raises(NotJSONError, match=r"holds a Legacy model at m.*model_dump\(mode='json'\) failed"):
        to_json({"m": Legacy(a=1)}, what="the state")


def test_the_article_follows_the_type_names_first_letter() -> None:
    class Upload:
        pass

    class Blob:
        pass

    with pytest.raises(NotJSONError, match=r"^the answer is an Upload value,"):
        to_json(Upload(), what="the answer")
    with pytest.raises(NotJSONError, match=r"^the answer is a Blob value,"):
        to_json(Blob(), what="the answer")


def test_copy_json_copies_the_dicts_inside_a_list_too() -> None:
    """The reset gets a copy of ``initial_state`` the system may change in place: a transaction dict inside a list
    changed through the copy leaves the case's own state as it was (else the next epoch starts from a world
    the last one changed)."""
    state = {"tx": [{"id": 1, "amt": 5, "tags": ["a"]}], "rows": [[1, 2]]}
    twin = copy_json(state)
    twin["tx"][0]["amt"] = 500
    twin["tx"][0]["tags"].append("b")
    twin["rows"][0].append(3)
    assert state == {"tx": [{"id": 1, "amt": 5, "tags": ["a"]}], "rows": [[1, 2]]}


def test_a_deep_value_made_on_access_is_not_called_a_back_reference() -> None:
    """A mapping that wraps each value when it is read (a read-only view of nested dicts) made a
    new object at each step of the walk looking for the back-reference; a step's object, freed, gave its id to the
    next, and 250 levels with no cycle at all were refused as "it refers to itself (it is the object at d)"."""
    class View(Mapping[str, Any]):
        def __init__(self, data: dict[str, Any]) -> None:
            self._data = data

        def __getitem__(self, key: str) -> Any:
            item = self._data[key]
            return View(item) if isinstance(item, dict) else item

        def __iter__(self) -> Iterator[str]:
            return iter(self._data)

        def __len__(self) -> int:
            return len(self._data)

    deep: dict[str, Any] = {"leaf": 1}
    for _ in range(MAX_DEPTH + 50):
        deep = {"d": deep}
    with pytest.raises(NotJSONError, match="nested deeper than") as info:
        to_json(View(deep))
    assert info.value.too_deep and "refers to itself (it is" not in str(info.value)


def test_a_back_reference_through_an_enum_member_is_named_too() -> None:
    """An enum member is converted through its value, which takes no key, so the walk back
    down the path steps through it too: the member whose value holds the member itself is named at ``x.self``,
    pointing back to the object at ``x`` (hand count: the member is reached after 1 key and again after 2)."""
    class Box(enum.Enum):
        A = {}  # noqa: RUF012 - the member's value is filled in below

    Box.A.value["self"] = Box.A
    with pytest.raises(NotJSONError) as info:
        to_json({"x": Box.A}, what="the state")
    assert str(info.value).startswith("the state holds a Box value at x.self, which has no exact JSON form: it "
                                      "refers to itself (it is the object at x)")
    assert not info.value.too_deep


def test_a_back_reference_through_a_mapping_that_is_no_dict_is_named_too() -> None:
    """The walk back down the path follows any Mapping, as the conversion does: a
    ``UserDict`` holding itself is named at ``u.me``, pointing back to the object at ``u``."""
    from collections import UserDict

    box: UserDict[str, Any] = UserDict()
    box["me"] = box
    with pytest.raises(NotJSONError) as info:
        to_json({"u": box}, what="the state")
    assert "UserDict value at u.me, which has no exact JSON form: it refers to itself (it is the object at u)" in \
        str(info.value)
