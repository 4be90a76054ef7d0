"""Review L4: a case run whose system's ``reset()`` (or ``snapshot()``) overran ``case_timeout_s`` names that method.

L3 made the reason of an exception raised in ``reset()`` say so (``reset() raised ConnectionRefusedError: …``: no
agent ran); a ``reset()`` that hangs (a database that does not answer) still read ``timeout: exceeded
case_timeout_s=…``, as if the agent had been too slow. What ``run()`` overran keeps its reason as before.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op

#: The method named in ``L4_HANG`` sleeps for 5 s, far past the suite's 0.5 s timeout (abandoned on its thread).
HANGING = '''import os
import time


class Desk:
    version = "l4-desk"

    def __init__(self):
        self.state = {}

    def _maybe(self, method):
        if os.environ.get("L4_HANG") == method:
            time.sleep(5)

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
    ("reset", "timeout: reset() exceeded case_timeout_s=0.5"),
    ("snapshot", "timeout: snapshot() exceeded case_timeout_s=0.5"),
    ("run", "timeout: exceeded case_timeout_s=0.5"),  # as before: the agent's
])
def test_the_timeout_of_a_case_run_names_the_system_s_method_that_overran(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str,
        error: str) -> None:
    cases = [{"id": "c0", "input": {"n": 0}, "initial_state": {"rows": {}}, "expected": {"answer": "ok"}}]
    root = make_suite(cases, system="l4sandbox:Desk", system_code="", evaluators=[{"type": "answer_matches"}],
                      case_timeout_s=0.5)
    (root / "l4sandbox.py").write_text(HANGING, encoding="utf-8")
    monkeypatch.setenv("L4_HANG", method)
    run = op.run(root, out=tmp_path / "run", progress=False)
    assert list(run.cases["status"]) == ["timeout"]
    assert list(run.cases["error"]) == [error]
    assert list(run.verdicts["reason"]) == [error]  # the verdict's reason is the case run's error
