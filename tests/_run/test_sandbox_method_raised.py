"""The reason of a case run whose system raised in ``reset()`` or ``snapshot()`` names that method.

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


RAISES_AGAIN = '''class Oops(Exception):
    pass


SHARED = Oops("service hiccup")  # one object, raised by reset() in one case and by run() in the next


class Payload(Exception):
    """An API error whose fields are read from its payload: a field it lacks raises KeyError."""

    def __init__(self, payload):
        super().__init__(payload["message"])
        self.payload = payload

    def __getattr__(self, name):
        return self.payload[name]


class Desk:
    def __init__(self):
        self.state = {}

    def reset(self, state):
        if state.get("fail") == "reset":
            raise SHARED
        self.state = dict(state)

    def run(self, input):
        if input.get("fail") == "run":
            raise SHARED
        if input.get("fail") == "payload":
            raise Payload({"message": "quota exceeded", "code": 429})
        return {"steps": [], "answer": "ok", "status": "completed"}

    def snapshot(self):
        return self.state
'''


CASES_F59 = [{"id": "c0", "input": {"n": 0}, "initial_state": {"fail": "reset"}, "expected": {"answer": "ok"}},
             {"id": "c1", "input": {"n": 1, "fail": "run"}, "initial_state": {}, "expected": {"answer": "ok"}},
             {"id": "c2", "input": {"n": 2, "fail": "payload"}, "initial_state": {}, "expected": {"answer": "ok"}}]


def _raising_suite(make_suite: Callable[..., Path], cases: list[dict[str, object]]) -> Path:
    root = make_suite(cases, system="f59sandbox:Desk", system_code="", evaluators=[{"type": "answer_matches"}])
    (root / "f59sandbox.py").write_text(RAISES_AGAIN, encoding="utf-8")
    return root


def test_an_exception_object_reset_raised_and_run_raises_again_is_the_agent_s_error_there(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The step was an attribute left on the exception object, so the object ``reset()`` raised in one
    case, raised again by ``run()`` in the next, read ``reset() raised Oops`` there (and, every case run in error
    then reading so, the terminal said no agent ran in any of them)."""
    run = op.run(_raising_suite(make_suite, CASES_F59[:2]), out=tmp_path / "run", progress=False)
    assert list(run.cases["error"]) == ["reset() raised Oops: service hiccup", "Oops: service hiccup"]


def test_an_exception_whose_getattr_raises_key_error_is_a_case_run_error_not_a_stopped_run(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The step was read with ``getattr``, so an exception whose ``__getattr__`` reads a payload (a
    field it lacks: ``KeyError``) stopped the run (``the run stopped: KeyError: …``); its case run is an error."""
    stopped = None
    try:
        run = op.run(_raising_suite(make_suite, CASES_F59[2:]), out=tmp_path / "run", progress=False)
    except Exception as exc:  # noqa: BLE001 - not raised from here: pytest cannot format a chain holding it
        stopped = str(exc).splitlines()[0]
    assert stopped is None
    assert list(run.cases["error"]) == ["Payload: quota exceeded"]


# -- a note read beside the mark of its own raise only ---------------------------------------------------------
def test_an_exception_reset_raised_and_the_systems_factory_raises_again_is_the_factorys_error() -> None:
    """One exception object raised by ``reset()`` (noted so) and then by the system's factory (marked
    by that raise, never noted): building the system raised it, not ``reset()`` (its note is of an older raise)."""
    from oloproof_nb._run.sandbox import _note_step, failure_reason
    from oloproof_nb._run.systems import build
    from oloproof_nb._run.timeouts import call_with_timeout

    shared = ConnectionError("service hiccup")

    def reset() -> None:
        raise shared

    def factory() -> None:
        raise shared

    with pytest.raises(ConnectionError):
        call_with_timeout(reset, None)
    _note_step(shared, "reset()")
    assert failure_reason(shared) == "reset() raised ConnectionError: service hiccup"
    with pytest.raises(op.OloproofError) as caught:
        build(factory, None)
    assert str(caught.value) == "building the system raised ConnectionError: service hiccup"
