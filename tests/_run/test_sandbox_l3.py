"""Review L3: the reason of a case run whose system raised in ``reset()`` or ``snapshot()`` names that method.

A system whose service is down raises in ``reset()``, before the agent runs; its case runs were recorded
``ConnectionRefusedError: …`` as if the agent had raised, and nothing on the terminal told the two apart. What
``run()`` raised keeps its reason as before (the exception alone: the agent's doing).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op

FAILING = '''import os


class Refuser(Exception):
    """Refuses every attribute set on it after it was made (oloproof wraps such an exception)."""

    def __setattr__(self, name, value):
        raise AttributeError(name)


class Desk:
    version = "l3-desk"

    def __init__(self):
        self.state = {}

    def _maybe(self, method):
        if os.environ.get("L3_FAIL") == method:
            raise ConnectionRefusedError(111, "Connection refused")
        if os.environ.get("L3_FAIL") == method + "-refuser":
            raise Refuser("no attributes")

    def reset(self, state):
        self._maybe("reset")
        self.state = state

    def run(self, input):
        self._maybe("run")
        return {"steps": [], "answer": "ok", "status": "completed"}

    def snapshot(self):
        self._maybe("snapshot")
        return self.state
'''


@pytest.mark.parametrize(("method", "error"), [
    ("reset", "reset() raised ConnectionRefusedError: [Errno 111] Connection refused"),
    ("snapshot", "snapshot() raised ConnectionRefusedError: [Errno 111] Connection refused"),
    ("run", "ConnectionRefusedError: [Errno 111] Connection refused"),  # as before: the agent's
    ("reset-refuser", "reset() raised Refuser: no attributes"),  # wrapped (SystemRaised), still named
])
def test_the_error_of_a_case_run_names_the_system_s_method_that_raised(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str,
        error: str) -> None:
    cases = [{"id": "c0", "input": {"n": 0}, "initial_state": {"rows": {}}, "expected": {"answer": "ok"}}]
    root = make_suite(cases, system="l3sandbox:Desk", system_code="", evaluators=[{"type": "answer_matches"}])
    (root / "l3sandbox.py").write_text(FAILING, encoding="utf-8")
    monkeypatch.setenv("L3_FAIL", method)
    run = op.run(root, out=tmp_path / "run", progress=False)
    assert list(run.cases["status"]) == ["error"]
    assert list(run.cases["error"]) == [error]
    assert list(run.verdicts["reason"]) == [error]  # the verdict's reason is the case run's error
