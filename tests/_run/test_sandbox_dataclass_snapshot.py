"""A snapshot that is the sandbox's own database object: stored as an object of its fields.

A τ-bench-style banking benchmark keeps its world in a dataclass (``Database`` of ``Account``
dataclasses with ``Decimal`` balances, ``Transfer`` rows with a ``date``). The README's conversion table says every
stored value, the snapshot included, turns a dataclass into an object of its fields, but ``snapshot()`` returning
``self.env.db`` made every case an ``error`` (``snapshot() returned Database; expected a dict``), 84 of 84 case
runs, and the message did not say what would do.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from pydantic import BaseModel

from oloproof_nb._core.case import Case, case_digest
from oloproof_nb._core.trajectory import Trajectory
from oloproof_nb._run.sandbox import SystemContractError, failure_reason, run_case


@dataclasses.dataclass
class Account:
    owner: str
    balance: Decimal


@dataclasses.dataclass
class Transfer:
    transfer_id: str
    amount: Decimal
    created: dt.date


@dataclasses.dataclass
class Database:
    accounts: dict[str, Account]
    transfers: list[Transfer]


class Ledger(BaseModel):
    balance: Decimal


def _case() -> Case:
    raw = {"id": "0", "input": {"q": "x"}, "initial_state": {"accounts": {}}}
    return Case.model_validate({**raw, "cluster": "0", "digest": case_digest(raw), "source_id": "0"})


class _Bank:
    def __init__(self, world: Any) -> None:
        self.world = world

    def reset(self, state: dict[str, Any]) -> None:
        pass

    def snapshot(self) -> Any:
        return self.world

    def run(self, given: dict[str, Any]) -> Trajectory:
        return Trajectory(answer="ok")


def test_a_dataclass_snapshot_is_stored_as_an_object_of_its_fields() -> None:
    db = Database(accounts={"A1": Account("alice", Decimal("450.0"))},
                  transfers=[Transfer("T0002", Decimal("50.0"), dt.date(2026, 1, 15))])
    out = run_case(_Bank(db), _case(), run_id="r", system_version=None, timeout_s=None)
    assert out.env is not None
    assert out.env["state"] == {"accounts": {"A1": {"balance": "450.0", "owner": "alice"}},
                                "transfers": [{"amount": "50.0", "created": "2026-01-15", "transfer_id": "T0002"}]}


def test_a_pydantic_snapshot_is_stored_as_its_json_dump() -> None:
    out = run_case(_Bank(Ledger(balance=Decimal("10.50"))), _case(), run_id="r", system_version=None, timeout_s=None)
    assert out.env is not None and out.env["state"] == {"balance": "10.50"}


@pytest.mark.parametrize(("world", "name"), [([{"a": 1}], "list"), ("A1", "str"), (Decimal("1"), "Decimal")])
def test_a_snapshot_that_converts_to_no_object_says_what_would_do(world: Any, name: str) -> None:
    with pytest.raises(SystemContractError) as err:
        run_case(_Bank(world), _case(), run_id="r", system_version=None, timeout_s=None)
    assert failure_reason(err.value) == (
        f"snapshot() returned {name}; expected a dict (or a dataclass or pydantic model, stored as an object of "
        "its fields) whose keys name the world's parts, e.g. {'accounts': ..., 'transfers': ...}")
