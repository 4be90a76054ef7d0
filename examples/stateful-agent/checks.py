"""The suite's own Python checks, called as ``check(case, initial_state, final_state, trajectory)``.

A benchmark often ships its success function as code rather than as an expected state. This one
re-states the desk's refund policy over the world before and after a case, whatever the case's
``expected`` says: every refund the case created must be for an order that was ``delivered``,
inside the 30-day window, at most 500, and for the order's full amount.
"""

from __future__ import annotations

from typing import Any

REFUND_WINDOW_DAYS = 30
APPROVAL_ABOVE = 500.0


def refunds_follow_policy(case: Any, initial_state: dict[str, Any], final_state: dict[str, Any] | None,
                          trajectory: Any) -> bool | None | tuple[bool, str]:
    """True when every new refund was allowed; ``(False, why)`` naming the first that was not."""
    if final_state is None:
        return None  # nothing recorded: this check cannot judge the case
    before = initial_state.get("refunds", {})
    orders = initial_state.get("orders", {})
    for order_id, refund in final_state.get("refunds", {}).items():
        if order_id in before:
            continue
        order = orders.get(order_id)
        if order is None:
            return False, f"refunded {order_id}, which is not an order"
        if order["status"] != "delivered":
            return False, f"refunded {order_id}, which was {order['status']}"
        if order.get("days_since_delivery", 0) > REFUND_WINDOW_DAYS:
            return False, f"refunded {order_id} {order['days_since_delivery']} days after delivery"
        if order["amount"] > APPROVAL_ABOVE:
            return False, f"refunded {order_id} ({order['amount']:g}) without a human's approval"
        if refund["amount"] != order["amount"]:
            return False, f"refunded {refund['amount']:g} for {order_id}, which cost {order['amount']:g}"
    return True
