"""README section 1a's claim: ``pydantic_core.to_jsonable_python`` writes a case file's state as the conversion
table does (:func:`to_json`), for every kind of value the table accepts.

Why: a benchmark whose database is a dataclass of ``Decimal`` balances and ``date`` stamps needs its
``initial_state`` written as ``snapshot()`` gives it; ``to_json`` is not public, and the README names pydantic's
converter for it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import uuid
from decimal import Decimal

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from oloproof_nb._core.jsonsafe import to_json


class Status(enum.Enum):
    ACTIVE = "active"


class Card(BaseModel):
    status: Status
    limit: Decimal


@dataclasses.dataclass
class Transfer:
    amount: Decimal
    created: dt.date
    at: dt.datetime
    hold: dt.timedelta
    ref: uuid.UUID
    legs: tuple[str, ...]


def test_pydantic_converts_every_kind_of_value_the_table_accepts_as_to_json_does() -> None:
    world = {"accounts": {"A1": {"balance": Decimal("450.0"), "frozen": False, "n": 3, "rate": 0.5, "note": None}},
             "cards": {"C1": Card(status=Status.ACTIVE, limit=Decimal("10.50"))},
             "transfers": [Transfer(Decimal("50"), dt.date(2026, 1, 15),
                                    dt.datetime(2026, 1, 15, 14, 0, tzinfo=dt.timezone.utc),
                                    dt.timedelta(hours=1, minutes=30), uuid.UUID(int=7), ("A1", "A2"))],
             "opened": dt.time(9, 30), "state": Status.ACTIVE}
    assert to_jsonable_python(world) == to_json(world)
    assert to_json(world)["transfers"][0]["amount"] == "50"  # text, as written: not "50.0"
