"""The benchmark's environment: a shop database in SQLite and the four tools an agent may call.

A tool that refuses an action raises :class:`ToolError`, as many benchmarks' tools do.
"""

from __future__ import annotations

import sqlite3
from typing import Any

SCHEMA = """
CREATE TABLE customers (customer_id TEXT PRIMARY KEY, credit REAL NOT NULL);
CREATE TABLE orders (order_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL, item TEXT NOT NULL,
                     status TEXT NOT NULL, total REAL NOT NULL, refunded REAL NOT NULL, placed TEXT NOT NULL);
"""
KEYS = {"customers": "customer_id", "orders": "order_id"}  # each table's primary key


class ToolError(Exception):
    """An action the shop refuses (an unknown order, cancelling a delivered one, refunding too much)."""


class ShopEnv:
    """The shop: ``load(data)`` fills the database (``{"customers": [row, ...], "orders": [row, ...]}``),
    ``dump()`` reads it back in the same form, ``step(name, **kwargs)`` calls a tool."""

    def __init__(self, data: dict[str, list[dict[str, Any]]]) -> None:
        # a harness may call the tools from another thread than the one that made the env
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.db.executescript(SCHEMA)
        self.load(data)

    def load(self, data: dict[str, list[dict[str, Any]]]) -> None:
        with self.db:
            for table in KEYS:
                self.db.execute(f"DELETE FROM {table}")
                for row in data.get(table, []):
                    self.db.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                                    list(row.values()))

    def dump(self) -> dict[str, list[dict[str, Any]]]:
        return {table: [dict(row) for row in self.db.execute(f"SELECT * FROM {table} ORDER BY {key}")]
                for table, key in KEYS.items()}

    def step(self, name: str, **kwargs: Any) -> Any:
        if name not in ("get_order", "list_orders", "cancel_order", "refund"):
            raise ToolError(f"unknown tool {name}")
        return getattr(self, name)(**kwargs)

    # -- tools -----------------------------------------------------------------------------------
    def get_order(self, order_id: str) -> dict[str, Any]:
        row = self.db.execute("SELECT * FROM orders WHERE order_id = ?", (order_id,)).fetchone()
        if row is None:
            raise ToolError(f"no order {order_id}")
        return dict(row)

    def list_orders(self, customer_id: str) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT * FROM orders WHERE customer_id = ? ORDER BY order_id", (customer_id,))
        return [dict(row) for row in rows]

    def cancel_order(self, order_id: str) -> dict[str, Any]:
        order = self.get_order(order_id)
        if order["status"] != "pending":
            raise ToolError(f"order {order_id} is {order['status']}; only a pending order can be cancelled")
        with self.db:
            self.db.execute("UPDATE orders SET status = 'cancelled' WHERE order_id = ?", (order_id,))
        return {"order_id": order_id, "status": "cancelled"}

    def refund(self, order_id: str, amount: float) -> dict[str, Any]:
        """Pay ``amount`` of a delivered order back as store credit."""
        order = self.get_order(order_id)
        if order["status"] != "delivered":
            raise ToolError(f"order {order_id} is {order['status']}; only a delivered order can be refunded")
        if not 0 < amount <= order["total"] - order["refunded"]:
            raise ToolError(f"cannot refund {amount:.2f} on {order_id}: {order['total'] - order['refunded']:.2f} "
                            "is left to refund")
        with self.db:
            self.db.execute("UPDATE orders SET refunded = refunded + ? WHERE order_id = ?", (amount, order_id))
            self.db.execute("UPDATE customers SET credit = credit + ? WHERE customer_id = ?",
                            (amount, order["customer_id"]))
        return {"order_id": order_id, "refunded": order["refunded"] + amount}
