"""The benchmark workload: a trivial in-memory refund desk, written out as a suite folder.

``write_suite(folder, n_cases)`` writes ``oloproof.yaml``, ``release.yaml``, ``cases.jsonl`` and ``desk.py``.
The desk's logic (:func:`handle` in ``desk.py``) is the same code every harness calls: oloproof_nb through the
suite's ``system: desk:Desk``, Inspect AI through a solver that imports ``desk.py`` from the same folder.

The desk looks the order up and refunds it when it was delivered; it refuses shipped or already refunded
orders. One deliberate defect: a ``lost`` order is answered "refunded" without any refund (a false success),
so 5% of the cases fail ``answer_matches`` (their state stays as expected) and the gate has something to count.

``desk:SlowDesk`` is the same desk waiting ``DELAY_S`` (20 ms) per case, like an agent waiting on a model;
``python benchmarks/parallel.py`` runs it with several workers.
"""

from __future__ import annotations

import compileall
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["DESK_SOURCE", "STATUSES", "make_cases", "write_suite", "load_desk", "answer_ok", "state_ok", "child_env",
           "compile_caches", "PYCACHE"]

#: Where the benchmarks' fresh processes keep their compiled bytecode (``PYTHONPYCACHEPREFIX``), so none of them
#: compiles a module from its source inside a timed call.
PYCACHE = Path(tempfile.gettempdir()) / "oloproof-bench-pycache"


def child_env(checkout: Path) -> dict[str, str]:
    """The environment of a timed fresh process: ``checkout`` first on ``PYTHONPATH``, and its modules read from
    compiled bytecode, as an installed package's are.

    pip compiles an installed package's modules when it installs them (Inspect AI's, pandas'); a checkout's are
    compiled by the first process that imports them and written next to them, unless ``PYTHONDONTWRITEBYTECODE``
    is set (as on the machine of benchmarks/README.md), in which case every process compiled the 45 modules of
    oloproof_nb a run imports from source inside the timed calls (0.24 s of a 1.1 s run, cProfile's
    ``builtins.compile``). The processes here read and write their bytecode under :data:`PYCACHE` instead, made
    beforehand by :func:`compile_caches`; the checkout stays as it is.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(checkout), os.environ.get("PYTHONPATH")]))
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    return env


def compile_caches(python: str, *folders: Path) -> None:
    """Compile every module under ``folders`` into :data:`PYCACHE` with ``python`` (its version's bytecode), before
    any timed process starts."""
    if not folders:
        return
    if python == sys.executable and sys.pycache_prefix == str(PYCACHE):
        for folder in folders:
            compileall.compile_dir(str(folder), quiet=1)
        return
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(PYCACHE)}
    subprocess.run([python, "-m", "compileall", "-q", *map(str, folders)], check=True, env=env,
                   stdout=subprocess.DEVNULL)

DESK_SOURCE = '''"""A trivial in-memory refund desk (benchmark workload; no model, no I/O)."""

import copy
import time

DELAY_S = 0.02


def handle(orders, order_id):
    """Serve one request on ``orders`` (changed in place); return (steps, answer)."""
    order = orders.get(order_id)
    found = {"ok": True, "status": order["status"]} if order else {"ok": False, "error": "not_found"}
    steps = [{"kind": "tool_call", "tool": "lookup_order", "args": {"order_id": order_id}, "result": found}]
    if order is not None and order["status"] == "delivered":
        order["status"] = "refunded"
        steps.append({"kind": "tool_call", "tool": "issue_refund", "args": {"order_id": order_id},
                      "result": {"ok": True}})
        return steps, "refunded"
    if order is not None and order["status"] == "lost":  # the defect: claims a refund it never made
        return steps, "refunded"
    return steps, "refused"


class Desk:
    """The sandbox: a dict of orders, reset per case."""

    version = "desk-1"

    def __init__(self):
        self.state = {"orders": {}}

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return copy.deepcopy(self.state)

    def run(self, input):
        steps, answer = handle(self.state["orders"], input["order_id"])
        return {"steps": steps, "answer": answer, "status": "completed"}


class SlowDesk(Desk):
    """The same desk, waiting DELAY_S per case (an agent waiting on its model)."""

    def run(self, input):
        time.sleep(DELAY_S)
        return super().run(input)
'''

STATUSES = ("delivered", "delivered", "shipped", "refunded", "delivered", "shipped", "delivered", "refunded",
            "delivered", "delivered", "shipped", "delivered", "delivered", "refunded", "delivered", "shipped",
            "delivered", "delivered", "shipped", "lost")


def make_cases(n_cases: int) -> list[dict[str, Any]]:
    """``n_cases`` refund requests, each with its own order and a bystander order ``ord-x``."""
    cases = []
    for i in range(n_cases):
        oid = f"ord-{i:06d}"
        status = STATUSES[i % len(STATUSES)]
        after = "refunded" if status == "delivered" else status
        answer = "refunded" if status == "delivered" else "refused"
        cases.append({
            "id": oid,
            "input": {"order_id": oid, "message": f"Please refund order {oid}."},
            "initial_state": {"orders": {oid: {"status": status, "amount": 10 + i % 90},
                                         "ord-x": {"status": "delivered", "amount": 5}}},
            "expected": {"answer": answer, "state": {"orders": {oid: {"status": after}}}},
        })
    return cases


def write_suite(folder: str | Path, n_cases: int, system: str = "desk:Desk", case_timeout_s: float = 300) -> Path:
    """Write the workload suite into ``folder`` (created) and return it."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "desk.py").write_text(DESK_SOURCE, encoding="utf-8")
    (folder / "oloproof.yaml").write_text(
        f"name: refund-bench\nsystem: {system}\ncases: cases.jsonl\ncase_timeout_s: {case_timeout_s}\n"
        "evaluators:\n  - {type: answer_matches}\n  - {type: state_matches, mode: subset}\n", encoding="utf-8")
    (folder / "release.yaml").write_text(
        "confidence: 0.95\nunclustered_method: clopper_pearson\n"
        "criteria: {answer_matches: 0.9, state_matches: 0.9}\n", encoding="utf-8")
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as handle:
        for case in make_cases(n_cases):
            handle.write(json.dumps(case) + "\n")
    return folder


def load_desk(folder: str | Path) -> ModuleType:
    """Import ``desk.py`` of a suite folder (for harnesses other than oloproof_nb)."""
    path = Path(folder) / "desk.py"
    spec = importlib.util.spec_from_file_location(f"_bench_desk_{abs(hash(str(path)))}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def answer_ok(expected: Any, actual: Any) -> bool:
    """``answer_matches`` with ``normalize: true``: strings equal up to case and surrounding space."""
    def norm(value: Any) -> Any:
        return value.strip().casefold() if isinstance(value, str) else value

    return norm(expected) == norm(actual)


def state_ok(expected: dict[str, Any], actual: dict[str, Any]) -> bool:
    """``state_matches`` with ``mode: subset``: every leaf of ``expected`` is present and equal in ``actual``."""
    for key, value in expected.items():
        if not isinstance(actual, dict) or key not in actual:
            return False
        if isinstance(value, dict) and value:
            if not state_ok(value, actual[key]):
                return False
        elif actual[key] != value:
            return False
    return True
