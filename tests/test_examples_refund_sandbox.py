"""The refund desk's SQLite sandbox leaves nothing of one case for the next.

Its reset deleted and inserted rows on one connection kept for the desk's life, and a connection holds more than
its tables' rows. A TEMP trigger an agent's SQL created (it is in ``sqlite_temp_master``, which the README's
recipe of dropping the triggers of ``sqlite_master`` while loading never sees) fired on the next case's reset
inserts: a case whose agent did nothing found its expected change made before it started, and passed
``state_matches`` in ``changes`` mode, failing alone. A TEMP table of a table's name shadowed it, an ATTACHed
database stayed attached, and a write the agent never committed was read by ``snapshot()`` (the connection sees its
own uncommitted rows) as the world's. A column the state names that the table has not was left out silently.
"""

from __future__ import annotations

import gc
import json
import sqlite3
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._config.imports import import_system

ORDER = {"status": "delivered", "amount": 40.0, "days_since_delivery": 3, "payment": "card"}
STATE = {"orders": {"ord-001": dict(ORDER), "ord-002": dict(ORDER)}}


@pytest.fixture
def desk_module(example_suite: Path) -> ModuleType:
    cls = import_system(example_suite, "refund_desk:RefundDesk")
    return sys.modules[cls.__module__]


def test_what_a_case_left_on_the_connection_is_gone_after_the_next_reset(desk_module: ModuleType) -> None:
    sandbox = desk_module.Sandbox()
    sandbox.reset(STATE)
    with sandbox.db:  # what an agent running its own SQL may leave
        sandbox.db.execute("CREATE TEMP TRIGGER t AFTER INSERT ON main.orders WHEN NEW.order_id = 'ord-002' "
                           "BEGIN UPDATE orders SET status = 'refunded' WHERE order_id = NEW.order_id; END")
        sandbox.db.execute("CREATE TEMP TABLE escalations (order_id TEXT, status TEXT, reason TEXT)")
    sandbox.db.execute("ATTACH DATABASE ':memory:' AS aux")

    sandbox.reset(STATE)

    assert sandbox.snapshot() == STATE  # the trigger refunded ord-002 on the reset's insert
    assert sandbox.db.execute("SELECT count(*) FROM sqlite_temp_master").fetchone() == (0,)
    assert "aux" not in [row[1] for row in sandbox.db.execute("PRAGMA database_list")]


def test_a_reset_closes_the_connection_it_replaces(desk_module: ModuleType) -> None:
    sandbox = desk_module.Sandbox()
    first = sandbox.db
    sandbox.reset(STATE)
    with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
        first.execute("SELECT 1")
    current = sandbox.db
    del sandbox
    gc.collect()
    with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
        current.execute("SELECT 1")


def test_a_write_never_committed_is_no_state(desk_module: ModuleType) -> None:
    sandbox = desk_module.Sandbox()
    sandbox.reset(STATE)
    sandbox.db.execute("UPDATE orders SET status = 'refunded' WHERE order_id = 'ord-001'")  # no commit
    with pytest.raises(RuntimeError, match="never committed"):
        sandbox.snapshot()
    sandbox.db.commit()
    assert sandbox.snapshot()["orders"]["ord-001"]["status"] == "refunded"


def test_a_column_the_table_has_not_is_refused_not_left_out(desk_module: ModuleType) -> None:
    sandbox = desk_module.Sandbox()
    # the allowed names are the table's columns, in the schema's order (a mutant listing the tables' names passed)
    with pytest.raises(ValueError, match=r"^unknown columns in state orders\.ord-001: \['paymnet'\]; allowed: "
                                         r"\['status', 'amount', 'days_since_delivery', 'payment'\]$"):
        sandbox.reset({"orders": {"ord-001": {"status": "delivered", "amount": 40.0, "paymnet": "card_expired"}}})


def test_a_temp_table_or_view_of_a_tables_name_is_not_the_world(desk_module: ModuleType) -> None:
    sandbox = desk_module.Sandbox()
    sandbox.reset(STATE)
    with sandbox.db:  # in the case itself: an unqualified name reads the TEMP one first
        sandbox.db.execute("CREATE TEMP VIEW orders AS SELECT order_id, 'refunded' AS status, amount, "
                           "days_since_delivery, payment FROM main.orders")
        sandbox.db.execute("CREATE TEMP TABLE refunds AS SELECT 'ord-001' AS order_id, 40.0 AS amount")
    # it read every order refunded and a refund of ord-001, and a subset check of both passed; no row changed
    assert sandbox.snapshot() == STATE


def test_nan_in_a_column_is_refused_not_stored_as_null(desk_module: ModuleType) -> None:
    sandbox = desk_module.Sandbox()
    # SQLite stored it as NULL, which the snapshot leaves out: an agent that did nothing showed 1 unexpected change
    state = {"orders": {"ord-001": {**ORDER, "days_since_delivery": float("nan")}}}
    with pytest.raises(ValueError, match=r"^state orders\.ord-001: NaN in \['days_since_delivery'\], which SQLite "
                                         r"stores as NULL; leave the column out for NULL$"):
        sandbox.reset(state)


@pytest.mark.parametrize(("state", "message"), [
    # the row's text was read as its columns: "unknown columns in state orders.ord-001: ['d', 'e', 'i', 'l', ...]"
    ({"orders": {"ord-001": "delivered"}}, r"state orders\.ord-001: expected an object of columns, got str"),
    # "AttributeError: 'list' object has no attribute 'items'", naming no table
    ({"orders": ["ord-001"]}, r"state orders: expected an object of rows keyed by order_id, got list"),
])
def test_a_table_or_row_that_is_no_object_is_refused_by_name(desk_module: ModuleType, state: dict[str, Any],
                                                             message: str) -> None:
    sandbox = desk_module.Sandbox()
    with pytest.raises(ValueError, match=f"^{message}$"):
        sandbox.reset(state)

DESK = '''
from refund_desk import RefundDesk


class SqlDesk(RefundDesk):
    """The refund desk with a tool that runs the SQL its request carries (an agent writing its own queries)."""

    def run_sql(self, statement):
        with self.sandbox.db:
            self.sandbox.db.execute(statement)
        return {"ok": True}

    def act(self, input, rec):
        if "sql" in input:
            rec.tool("run_sql", self.run_sql, statement=input["sql"])
            return "done"
        return "refunded"  # claims the refund, makes none
'''


def test_a_case_that_did_nothing_does_not_pass_on_what_the_case_before_left(example_suite: Path,
                                                                            tmp_path: Path) -> None:
    (example_suite / "sql_desk.py").write_text(DESK, encoding="utf-8")
    (example_suite / "release.yaml").unlink()  # its criteria are the example's
    (example_suite / "oloproof.yaml").write_text(
        "name: sql-desk\nsystem: sql_desk:SqlDesk\ncases: r62.jsonl\n"
        "evaluators:\n  - {type: state_matches, mode: changes}\n", encoding="utf-8")
    trigger = ("CREATE TEMP TRIGGER t AFTER INSERT ON main.orders WHEN NEW.order_id = 'ord-002' "
               "BEGIN UPDATE orders SET status = 'refunded' WHERE order_id = NEW.order_id; END")
    lines: list[dict[str, Any]] = [
        {"id": "a1", "input": {"message": "noted", "sql": trigger}, "initial_state": STATE,
         "expected": {"state": {}}},
        {"id": "a2", "input": {"message": "Please refund ord-002."}, "initial_state": STATE,
         "expected": {"state": {"orders": {"ord-002": {"status": "refunded"}}}}},
    ]
    (example_suite / "r62.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    run = op.run(op.load_suite(example_suite), out=tmp_path / "run", progress=False)

    verdicts = run.verdicts.set_index("case_id")["verdict"]
    assert verdicts.to_dict() == {"a1": "pass", "a2": "fail"}  # a2 alone fails: its agent refunded nothing
