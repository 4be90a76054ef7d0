"""A case run whose system's ``reset()`` (or ``snapshot()``) overran ``case_timeout_s`` names that method.

The reason of an exception raised in ``reset()`` says so (``reset() raised ConnectionRefusedError: …``: no
agent ran); a ``reset()`` that hangs (a database that does not answer) still read ``timeout: exceeded
case_timeout_s=…``, as if the agent had been too slow. What ``run()`` overran keeps its reason as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._core.case import Case, case_digest
from oloproof_nb._run import sandbox
from oloproof_nb._run.timeouts import CaseTimeout

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


def test_a_reset_that_overran_is_named_though_its_call_moved_on_to_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reset() was running when the time was up; its abandoned call finished and entered run() before the
    timeout was handled (a reset a few ms past the deadline on a busy machine: 5 of 40 tries). The step read then
    was the one the call had reached: run()'s (the agent's ``timeout: exceeded case_timeout_s=…``) or, here,
    ``timeout: snapshot() exceeded …``."""
    release, in_run = threading.Event(), threading.Event()

    class Desk:
        def reset(self, state: object) -> None:
            release.wait(30)  # past the 0.05 s timeout, until the timeout is being handled

        def run(self, input: object) -> dict[str, object]:
            in_run.set()
            return {"steps": [], "answer": "ok", "status": "completed"}

        def snapshot(self) -> dict[str, object]:
            return {}

    real = sandbox.call_with_timeout

    def moved_on(fn: Any, timeout_s: float | None) -> Any:
        try:
            return real(fn, timeout_s)
        except CaseTimeout:
            release.set()  # the abandoned reset() returns, and its call goes on into run()
            assert in_run.wait(30)
            raise

    monkeypatch.setattr(sandbox, "call_with_timeout", moved_on)
    raw = {"id": "c0", "input": {"n": 0}, "initial_state": {"rows": {}}}
    case = Case.model_validate({**raw, "cluster": "c0", "digest": case_digest(raw), "source_id": "c0"})
    with pytest.raises(CaseTimeout, match=r"^timeout: reset\(\) exceeded case_timeout_s=0\.05$"):
        sandbox.run_case(Desk(), case, run_id="r", system_version=None, timeout_s=0.05)


def test_a_whole_number_of_seconds_is_written_as_run_s_timeout_writes_it(make_suite: Callable[..., Path],
                                                                         tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """``case_timeout_s: 1`` reads ``case_timeout_s=1`` in a hung reset()'s reason, as in run()'s own
    (``timeout: exceeded case_timeout_s=1``), not ``=1.0`` (the 0.5 above reads the same either way)."""
    cases = [{"id": "c0", "input": {"n": 0}, "initial_state": {"rows": {}}, "expected": {"answer": "ok"}}]
    root = make_suite(cases, system="l4sandbox:Desk", system_code="", evaluators=[{"type": "answer_matches"}],
                      case_timeout_s=1)
    (root / "l4sandbox.py").write_text(HANGING, encoding="utf-8")
    monkeypatch.setenv("L4_HANG", "reset")
    run = op.run(root, out=tmp_path / "run", progress=False)
    assert list(run.cases["error"]) == ["timeout: reset() exceeded case_timeout_s=1"]
