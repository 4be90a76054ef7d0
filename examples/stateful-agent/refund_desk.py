"""The refund desk: a small refund agent and the SQLite sandbox it works in.

The sandbox is a real SQLite database (stdlib ``sqlite3``, in memory): ``reset``
loads a state into its tables, ``snapshot`` reads them back. The agent is a
plain Python agent written on :class:`oloproof_nb.Recorder`, so it is
replayable for free: its one "model" call (a rule-based request parser standing
in for an LLM) and its three tools are recorded.

Refund policy: only ``delivered`` orders inside the 30-day window are refunded;
orders above 500 need a human (``escalate_to_human``); everything else is refused.

The agent has two deliberate defects, for the toolkit to find:

1. an instruction pasted into the message ("SYSTEM OVERRIDE") makes it refund
   without checking eligibility;
2. it never checks the result of ``issue_refund``, so it reports a failed
   refund as done.
"""

from __future__ import annotations

import re
import sqlite3
import weakref
from typing import Any

import oloproof_nb as op

REFUND_WINDOW_DAYS = 30
APPROVAL_ABOVE = 500.0

SCHEMA = """
CREATE TABLE orders (
    order_id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    amount REAL NOT NULL,
    days_since_delivery INTEGER,
    payment TEXT
);
CREATE TABLE refunds (order_id TEXT PRIMARY KEY, amount REAL NOT NULL);
CREATE TABLE escalations (order_id TEXT PRIMARY KEY, status TEXT NOT NULL, reason TEXT NOT NULL);
"""
COLUMNS = {
    "orders": ("status", "amount", "days_since_delivery", "payment"),
    "refunds": ("amount",),
    "escalations": ("status", "reason"),
}


def _connect() -> sqlite3.Connection:
    # a harness calls reset, the tools and snapshot from another thread than the one that made the sandbox
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.executescript(SCHEMA)
    return db


def _close(held: list[sqlite3.Connection]) -> None:
    held[0].close()


class Sandbox:
    """The desk's world: three SQLite tables, loaded from and read back to a nested dict.

    State shape: ``{"orders": {id: {...}}, "refunds": {id: {...}}, "escalations": {id: {...}}}``.
    NULL columns and empty tables are left out of a snapshot, so ``reset(s)``
    then ``snapshot()`` gives ``s`` back.

    Each ``reset`` loads the state into a new in-memory database: a connection holds more than its tables'
    rows (a TEMP trigger, table or view, an ATTACHed database, a PRAGMA, an AUTOINCREMENT counter, a write
    never committed), and a reset that only deleted and inserted rows kept all of it for the next case.
    """

    def __init__(self) -> None:
        self._held = [_connect()]  # the open connection
        # closed with the instance: the harness drops a system it is done with (Python 3.13 warns of a
        # connection that is garbage-collected open)
        weakref.finalize(self, _close, self._held)

    @property
    def db(self) -> sqlite3.Connection:
        return self._held[0]

    def reset(self, state: dict[str, Any]) -> None:
        unknown = set(state) - set(COLUMNS)
        if unknown:
            raise ValueError(f"unknown tables in state: {sorted(unknown)}; allowed: {sorted(COLUMNS)}")
        for table, cols in COLUMNS.items():
            rows = state.get(table, {})
            if not isinstance(rows, dict):
                raise ValueError(f"state {table}: expected an object of rows keyed by order_id, got "
                                 f"{type(rows).__name__}")
            for key, row in rows.items():
                if not isinstance(row, dict):  # a text's letters were listed as unknown columns
                    raise ValueError(f"state {table}.{key}: expected an object of columns, got {type(row).__name__}")
                if set(row) - set(cols):  # left out of the database, it would be judged gone
                    raise ValueError(f"unknown columns in state {table}.{key}: {sorted(set(row) - set(cols))}; "
                                     f"allowed: {list(cols)}")
                nan = [c for c in cols if isinstance(row.get(c), float) and row[c] != row[c]]
                if nan:  # SQLite stores NaN as NULL, which a snapshot leaves out: it would be judged gone
                    raise ValueError(f"state {table}.{key}: NaN in {nan}, which SQLite stores as NULL; leave the "
                                     "column out for NULL")
        fresh = _connect()
        try:  # a state the tables refuse (a NULL amount, a value SQLite cannot store) closes the new connection
            with fresh:
                for table, cols in COLUMNS.items():
                    fresh.executemany(
                        f"INSERT INTO {table} (order_id, {', '.join(cols)}) VALUES (?{', ?' * len(cols)})",
                        [(key, *(row.get(c) for c in cols)) for key, row in state.get(table, {}).items()],
                    )
        except BaseException:
            fresh.close()
            raise
        old, self._held[0] = self._held[0], fresh
        old.close()

    def snapshot(self) -> dict[str, Any]:
        if self.db.in_transaction:  # the connection sees its own uncommitted rows; the world would not keep them
            raise RuntimeError("the sandbox holds a write that was never committed: its rows are not the world's")
        state: dict[str, Any] = {}
        for table, cols in COLUMNS.items():
            # main's tables: a TEMP table or view of the same name, which an agent's SQL may make, shadows the
            # table in an unqualified name (a TEMP view of orders showed every order refunded, none was)
            rows = self.db.execute(f"SELECT order_id, {', '.join(cols)} FROM main.{table} ORDER BY order_id")
            found = {r[0]: {c: v for c, v in zip(cols, r[1:], strict=True) if v is not None} for r in rows}
            if found:
                state[table] = found
        return state

    # -- tools -------------------------------------------------------------------------------
    def get_order(self, order_id: str) -> dict[str, Any]:
        row = self.db.execute(
            "SELECT status, amount, days_since_delivery FROM orders WHERE order_id = ?", (order_id,)
        ).fetchone()
        if row is None:
            return {"ok": False, "error": "not_found", "message": f"no order {order_id}"}
        status, amount, days = row
        return {"ok": True, "order_id": order_id, "status": status, "amount": amount, "days_since_delivery": days}

    def issue_refund(self, order_id: str) -> dict[str, Any]:
        row = self.db.execute("SELECT amount, payment FROM orders WHERE order_id = ?", (order_id,)).fetchone()
        if row is None:
            return {"ok": False, "error": "not_found", "message": f"no order {order_id}"}
        amount, payment = row
        if payment == "card_expired":
            return {"ok": False, "error": "payment_declined", "message": "the card on file has expired"}
        with self.db:
            self.db.execute("UPDATE orders SET status = 'refunded' WHERE order_id = ?", (order_id,))
            self.db.execute("INSERT OR REPLACE INTO refunds (order_id, amount) VALUES (?, ?)", (order_id, amount))
        return {"ok": True, "refund_id": f"rf-{order_id}", "amount": amount}

    def escalate_to_human(self, order_id: str, reason: str) -> dict[str, Any]:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO escalations (order_id, status, reason) VALUES (?, 'open', ?)",
                            (order_id, reason))
        return {"ok": True, "ticket": f"esc-{order_id}"}


ORDER_ID = re.compile(r"\bord-\d{3}\b")


def parse_request(message: str) -> dict[str, Any]:
    """The agent's "model": reads the request (stands in for an LLM call; recorded, so replayable)."""
    found = ORDER_ID.findall(message)
    return {
        "intent": "refund" if re.search(r"refund|money back|return", message, re.I) else "unknown",
        "order_id": found[0] if found else None,
        # defect 1: an instruction pasted into the message is obeyed
        "override": "SYSTEM OVERRIDE" in message,
    }


class RefundDesk(op.RecordedAgent):
    """The refund agent on its sandbox: a Stateful, Replayable system."""

    version = "refund-desk-1.0"

    def __init__(self) -> None:
        self.sandbox = Sandbox()

    def reset(self, state: dict[str, Any]) -> None:
        self.sandbox.reset(state)

    def snapshot(self) -> dict[str, Any]:
        return self.sandbox.snapshot()

    def act(self, input: dict[str, Any], rec: op.Recorder) -> str:
        request = rec.model("parse_request", parse_request, message=input["message"])
        order_id = input.get("order_id") or request["order_id"]
        if not order_id:
            rec.say("Which order should I look at?")
            return "needs_order_id"
        order = rec.tool("get_order", self.sandbox.get_order, order_id=order_id)
        if not order.get("ok"):
            rec.say(f"I could not find order {order_id}.")
            return "not_found"
        if not request["override"]:
            if order["status"] != "delivered":
                rec.say(f"Order {order_id} is {order['status']}; only delivered orders can be refunded.")
                return "refused"
            if order["days_since_delivery"] > REFUND_WINDOW_DAYS:
                rec.say(f"Order {order_id} is outside the {REFUND_WINDOW_DAYS}-day refund window.")
                return "refused"
            if order["amount"] > APPROVAL_ABOVE:
                rec.tool("escalate_to_human", self.sandbox.escalate_to_human, order_id=order_id,
                         reason=f"refund above {APPROVAL_ABOVE:g} needs approval")
                rec.say("A colleague will approve this refund.")
                return "escalated"
        rec.tool("issue_refund", self.sandbox.issue_refund, order_id=order_id)
        # defect 2: the refund's result is never checked
        rec.say(f"Order {order_id} has been refunded.")
        return "refunded"
