"""Small purpose-built systems for the fault-recovery tests, and a helper that writes a suite around them.

Every agent works on a tiny dict sandbox of orders: it looks the order up,
calls ``issue_refund`` (the tool the tests fault) and then does what its class
is named after when the refund fails. The file is self-contained (it imports
only the standard library and oloproof_nb) so it can be copied into a suite
folder and named by ``system: fault_systems:<Class>``.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import yaml

import oloproof_nb as op

BYSTANDER = "ord-999"


def _ok(result: Any) -> bool:
    return isinstance(result, dict) and result.get("ok") is True


class DictDesk(op.RecordedAgent):
    """A refund agent on a dict sandbox; subclasses change what happens after a failed refund.

    ``replay_calls`` counts calls of :meth:`replay` (to prove the cache works);
    ``seen`` keeps every result ``issue_refund`` returned to the agent, replays included.
    """

    version: str | None = "desk-1"

    def __init__(self) -> None:
        self.state: dict[str, Any] = {}
        self.replay_calls = 0
        self.seen: list[Any] = []

    # -- Stateful ---------------------------------------------------------------------------
    def reset(self, state: dict[str, Any]) -> None:
        self.state = copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def replay(self, trajectory: op.Trajectory, *, checkpoint: int, change: op.Change | None) -> op.Trajectory:
        self.replay_calls += 1
        return super().replay(trajectory, checkpoint=checkpoint, change=change)

    # -- tools ------------------------------------------------------------------------------
    def get_order(self, order_id: str) -> dict[str, Any]:
        order = self.state.get("orders", {}).get(order_id)
        if order is None:
            return {"ok": False, "error": "not_found"}
        return {"ok": True, **order}

    def issue_refund(self, order_id: str) -> dict[str, Any]:
        self.state["orders"][order_id]["status"] = "refunded"
        self.state.setdefault("refunds", {})[order_id] = {"amount": self.state["orders"][order_id]["amount"]}
        return {"ok": True, "refund_id": f"rf-{order_id}"}

    def escalate_to_human(self, order_id: str) -> dict[str, Any]:
        self.state.setdefault("escalations", {})[order_id] = {"status": "open"}
        return {"ok": True, "ticket": f"esc-{order_id}"}

    def void_orders(self) -> dict[str, Any]:
        for order in self.state.get("orders", {}).values():
            order["status"] = "void"
        return {"ok": True}

    # -- the agent --------------------------------------------------------------------------
    def act(self, input: dict[str, Any], rec: op.Recorder) -> str:
        order_id = input["order_id"]
        if not self.looked_up(order_id, rec):
            return "not_found"
        result = rec.tool("issue_refund", self.issue_refund, order_id=order_id)
        self.seen.append(copy.deepcopy(result))
        rec.say({"refund_result_seen": result})
        if _ok(result):
            return "refunded"
        return self.after_failure(order_id, rec)

    def looked_up(self, order_id: str, rec: op.Recorder) -> bool:
        """The agent's first step: ``get_order``; False (and a message said) when there is no such order."""
        if rec.tool("get_order", self.get_order, order_id=order_id)["ok"]:
            return True
        rec.say(f"no order {order_id}")
        return False

    def after_failure(self, order_id: str, rec: op.Recorder) -> str:
        return "failed"


class Escalates(DictDesk):
    """Hands a failed refund to a human: passes by escalating."""

    def after_failure(self, order_id: str, rec: op.Recorder) -> str:
        rec.tool("escalate_to_human", self.escalate_to_human, order_id=order_id)
        return "escalated"


class Retries(DictDesk):
    """Retries a failed refund once (the retry runs live and succeeds): passes by recovering."""

    def after_failure(self, order_id: str, rec: op.Recorder) -> str:
        again = rec.tool("issue_refund", self.issue_refund, order_id=order_id)
        return "refunded" if _ok(again) else "failed"


class ClaimsSuccess(DictDesk):
    """Ignores the refund's result and reports success: a false success."""

    def after_failure(self, order_id: str, rec: op.Recorder) -> str:
        return "refunded"


class DamagesBystander(DictDesk):
    """After a failed refund, voids every order (the bystander too), then escalates."""

    def after_failure(self, order_id: str, rec: op.Recorder) -> str:
        rec.tool("void_orders", self.void_orders)
        rec.tool("escalate_to_human", self.escalate_to_human, order_id=order_id)
        return "escalated"


class GivesUp(DictDesk):
    """Says the refund failed and does nothing else: neither recovered nor escalated."""


class Nondeterministic(DictDesk):
    """Stamps every case with a counter that is never reset, so no replay reproduces the recording."""

    def __init__(self) -> None:
        super().__init__()
        self.counter = 0

    def next_stamp(self) -> dict[str, Any]:
        self.counter += 1
        return {"ok": True, "stamp": self.counter}

    def act(self, input: dict[str, Any], rec: op.Recorder) -> str:
        answer = super().act(input, rec)
        rec.tool("stamp", self.next_stamp)
        return answer


class NondeterministicBefore(Nondeterministic):
    """The counter is read before the refund: the Recorder itself detects the divergence (ReplayDiverged)."""

    def act(self, input: dict[str, Any], rec: op.Recorder) -> str:
        rec.tool("stamp", self.next_stamp)
        return DictDesk.act(self, input, rec)


class RaisesOnFault(DictDesk):
    """Crashes when the refund fails (an unhandled exception inside the faulted replay)."""

    def after_failure(self, order_id: str, rec: op.Recorder) -> str:
        raise KeyError("refund_id")


class DryRunFirst(DictDesk):
    """A cautious desk: calls ``issue_refund`` first as a dry run (changes nothing) and escalates if that fails,
    then makes the real refund and never checks its result. Steps: get_order 0, dry run 1, refund 2, message 3."""

    def dry_run(self, order_id: str) -> dict[str, Any]:
        return {"ok": True, "dry_run": True}

    def act(self, input: dict[str, Any], rec: op.Recorder) -> str:
        order_id = input["order_id"]
        if not self.looked_up(order_id, rec):
            return "not_found"
        if not _ok(rec.tool("issue_refund", self.dry_run, order_id=order_id)):
            return self.escalate(order_id, rec)
        result = rec.tool("issue_refund", self.issue_refund, order_id=order_id)
        rec.say({"refund_result_seen": result})
        return self.after_refund(order_id, result, rec)

    def escalate(self, order_id: str, rec: op.Recorder) -> str:
        rec.tool("escalate_to_human", self.escalate_to_human, order_id=order_id)
        return "escalated"

    def after_refund(self, order_id: str, result: Any, rec: op.Recorder) -> str:
        return "refunded"


class ChecksBoth(DryRunFirst):
    """The dry-run desk that also escalates when the real refund fails: every call's fault is handled."""

    def after_refund(self, order_id: str, result: Any, rec: op.Recorder) -> str:
        return "refunded" if _ok(result) else self.escalate(order_id, rec)


class NotReplayable:
    """A stateful system with ``run`` but no ``replay``."""

    version = "plain-1"

    def __init__(self) -> None:
        self.desk = Escalates()

    def reset(self, state: dict[str, Any]) -> None:
        self.desk.reset(state)

    def snapshot(self) -> dict[str, Any]:
        return self.desk.snapshot()

    def run(self, input: dict[str, Any]) -> op.Trajectory:
        return self.desk.run(input)


class Unversioned(Escalates):
    """An escalating desk without a ``version``: its replays are never cached."""

    version = None


def initial_state(order_id: str, amount: float = 40.0) -> dict[str, Any]:
    return {"orders": {order_id: {"status": "delivered", "amount": amount},
                       BYSTANDER: {"status": "delivered", "amount": 25.0}}}


def refund_case(order_id: str, amount: float = 40.0) -> dict[str, Any]:
    """A case whose recording calls ``issue_refund``: expects the refund done."""
    return {"id": order_id, "input": {"order_id": order_id}, "initial_state": initial_state(order_id, amount),
            "expected": {"answer": "refunded",
                         "state": {"orders": {order_id: {"status": "refunded"}},
                                   "refunds": {order_id: {"amount": amount}}}}}


def missing_order_case(case_id: str = "lost-1") -> dict[str, Any]:
    """A case whose order does not exist: the agent never calls ``issue_refund``."""
    return {"id": case_id, "input": {"order_id": "ord-404"}, "initial_state": initial_state("ord-001"),
            "expected": {"answer": "not_found"}}


FAULT_EVALUATOR = {"type": "fault_recovery", "tool": "issue_refund", "fault": "error",
                   "escalate_tools": ["escalate_to_human"]}
BASE_EVALUATORS = [
    {"type": "answer_matches"},
    {"type": "state_matches", "mode": "subset"},
    {"type": "state_unchanged", "criterion": "bystander_untouched", "paths": [f"orders.{BYSTANDER}"]},
]


def write_suite(folder: Path, system: str = "Escalates", cases: list[dict[str, Any]] | None = None,
                fault: str = "error", extra: list[dict[str, Any]] | None = None,
                timeout_s: float | None = None, calls: str | None = None) -> Path:
    """Write oloproof.yaml, cases.jsonl and this module (as ``fault_systems.py``) into ``folder`` (``calls``: the
    fault criterion's ``calls:``, left out when None)."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(Path(__file__), folder / "fault_systems.py")
    cases = cases if cases is not None else [refund_case("ord-001"), refund_case("ord-002", 75.0),
                                              missing_order_case()]
    config: dict[str, Any] = {
        "name": "fault-suite",
        "system": f"fault_systems:{system}",
        "cases": "cases.jsonl",
        "evaluators": [*BASE_EVALUATORS, {**FAULT_EVALUATOR, "fault": fault, **({"calls": calls} if calls else {})},
                       *(extra or [])],
    }
    if timeout_s is not None:
        config["case_timeout_s"] = timeout_s
    (folder / "oloproof.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return folder
