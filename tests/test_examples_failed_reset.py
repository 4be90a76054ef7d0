"""The example desks close the connection a reset opened when the state cannot be loaded into it.

``ShopEnv(as_rows(state))`` raising in ``ShopDesk.reset`` (a value SQLite cannot store) left the connection its
constructor opened to the garbage collector, as the refund desk's ``reset`` left its new connection when an insert
failed (Python 3.13 warns of a connection collected open). Each desk keeps the connection it held before.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._config.imports import import_system
from oloproof_nb.examples import init_example

#: A value no SQLite column can hold: binding it raises sqlite3.ProgrammingError (InterfaceError before Python 3.11).
UNSTORABLE = {"not": "a column value"}
#: What binding :data:`UNSTORABLE` raises, by Python version.
UNBINDABLE = (sqlite3.ProgrammingError, sqlite3.InterfaceError)


def _opened(monkeypatch: pytest.MonkeyPatch) -> list[sqlite3.Connection]:
    """Every connection ``sqlite3.connect`` opens from now on."""
    opened: list[sqlite3.Connection] = []
    real: Callable[..., sqlite3.Connection] = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        opened.append(real(*args, **kwargs))
        return opened[-1]

    monkeypatch.setattr(sqlite3, "connect", connect)
    return opened


def _is_open(db: sqlite3.Connection) -> bool:
    try:
        db.execute("SELECT 1")
    except sqlite3.ProgrammingError:
        return False
    return True


@pytest.mark.parametrize(("example", "system", "state", "held"), [
    ("wrapped-benchmark", "shop_desk:ShopDesk", {"customers": {"C01": {"credit": UNSTORABLE}}},
     lambda desk: desk.env.db),
    ("stateful-agent", "refund_desk:RefundDesk",
     {"orders": {"o1": {"status": "delivered", "amount": UNSTORABLE, "days_since_delivery": 1, "payment": "card"}}},
     lambda desk: desk.sandbox.db),
])
def test_a_reset_that_cannot_load_the_state_closes_the_connection_it_opened(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, example: str, system: str, state: dict[str, Any],
        held: Callable[[Any], sqlite3.Connection]) -> None:
    desk = import_system(init_example(example, tmp_path / example), system)()
    before = held(desk)
    opened = _opened(monkeypatch)
    with pytest.raises(UNBINDABLE):
        desk.reset(state)
    assert len(opened) == 1 and not _is_open(opened[0])  # the new connection: closed, not left to the collector
    assert held(desk) is before and _is_open(before)  # the desk keeps the one it held
