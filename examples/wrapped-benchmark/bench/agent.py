"""The benchmark's baseline agent: regular expressions over the instruction stand in for a model.

It has two defects, planted for the wrapper to find:

1. an order named by recency ("my most recent order") is taken to be the *first* one listed, the oldest;
2. a refund the shop refuses is reported as done.
"""

from __future__ import annotations

import re
from typing import Any

from .env import ToolError


class ScriptedAgent:
    """Serves one customer: ``solve(env, instruction)`` calls ``env.step(tool, **kwargs)`` and returns its reply."""

    def __init__(self, customer_id: str) -> None:
        self.customer_id = customer_id

    def latest(self, env: Any, status: str) -> str | None:
        """The customer's most recent order with ``status``, or None."""
        orders = env.step("list_orders", customer_id=self.customer_id)  # oldest first
        found = [order["order_id"] for order in orders if order["status"] == status]
        return found[0] if found else None  # defect 1: the first one listed is the oldest, not the latest

    def solve(self, env: Any, instruction: str) -> str:
        text = instruction.lower()
        named = re.search(r"#(w\d+)", text)  # an order id, as in "#W1002"
        try:
            if "cancel" in text:
                order_id = named.group(1).upper() if named else self.latest(env, "pending")
                if order_id is None:
                    return "You have no pending order to cancel."
                env.step("cancel_order", order_id=order_id)
                return f"Order {order_id} is cancelled."
            if "refund" in text:
                asked = re.search(r"\$(\d+(?:\.\d+)?)", text)  # an amount, as in "$40"
                if asked is None:
                    return "How much should I refund?"
                amount = float(asked.group(1))
                order_id = named.group(1).upper() if named else self.latest(env, "delivered")
                if order_id is None:
                    return "You have no delivered order to refund."
                try:
                    env.step("refund", order_id=order_id, amount=amount)
                except ToolError:
                    pass  # defect 2: a refund the shop refused is reported as done
                return f"Refunded ${amount:.2f} on order {order_id} as store credit."
            if named is None:
                return "Which order do you mean?"
            order = env.step("get_order", order_id=named.group(1).upper())
            return f"Order {order['order_id']} is {order['status']}."
        except ToolError as exc:
            return f"Sorry, I couldn't do that: {exc}"
