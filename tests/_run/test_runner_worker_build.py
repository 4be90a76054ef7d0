"""An executor's worker loading the suite again, and the hint on how a factory is built: edges the other worker
tests (``test_runner_worker_reload.py``) leave open. Module names are this file's own (Python keeps one module of a
name per process)."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from _shared import outside_desk

import oloproof_nb as op
from oloproof_nb._run import remote
from oloproof_nb._run.systems import build
from oloproof_nb.errors import OloproofError

DESK = '''class Desk:
    version = "desk"

    def run(self, input):
        return {"steps": [], "answer": "ok", "status": "completed"}
'''


def _suite(make_suite: Callable[..., Path], module: str) -> Path:
    """4 cases expecting the answer ``ok``, the desk in the suite folder's ``<module>.py`` (answers ``ok``)."""
    cases = [{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(4)]
    root = make_suite(cases, system=f"{module}:Desk", system_code="", evaluators=[{"type": "answer_matches"}])
    (root / f"{module}.py").write_text(DESK, encoding="utf-8")
    return root


def test_a_worker_refused_a_system_loads_it_again_once_the_file_holds_the_run_s_code(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The run's code is the desk answering ``ok``; the worker first loads the suite while the file holds one
    answering ``no`` (another code fingerprint: refused), then the file holds the run's code again. The next batch
    loads the suite again and runs its 4 cases (hand count: 4 completed). Kills ``held.checked.add`` before the
    check: the refused identity counted as checked, the worker kept the ``no`` desk and refused every later batch
    of that run though the file held its code."""
    root = _suite(make_suite, "m55desk_a")
    desk = root / "m55desk_a.py"
    suite = op.load_suite(root)
    fingerprint = op.run(suite, out=tmp_path / "run", progress=False).manifest.code_fingerprint
    batch = list(enumerate(suite.kept_cases or ()))
    try:
        desk.write_text(DESK.replace('"ok"', '"no"'), encoding="utf-8")
        with pytest.raises(OloproofError, match="has another code fingerprint than the run's"):
            remote._remote_batch(str(root), dict(suite.digests), batch, "r1", "desk", fingerprint)
        desk.write_text(DESK, encoding="utf-8")
        records, _ = remote._remote_batch(str(root), dict(suite.digests), batch, "r2", "desk", fingerprint)
        assert [r["status"] for r in records] == ["completed"] * 4
    finally:
        remote._release_here(str(root), None)


def test_a_worker_keeps_its_suite_for_a_run_of_another_identity_when_the_system_is_unchanged(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """A suite held since a batch of one identity, asked for by a run of another (a version read elsewhere) with
    the system's files unchanged: the same object is kept (loaded once; its pool and instances with it). Kills the
    reload on ``wanted not in held.checked`` alone (the suite loaded again for every new identity)."""
    root = _suite(make_suite, "m55desk_b")
    suite = op.load_suite(root)
    fingerprint = op.run(suite, out=tmp_path / "run", progress=False).manifest.code_fingerprint
    batch = list(enumerate(suite.kept_cases or ()))
    try:
        remote._remote_batch(str(root), dict(suite.digests), batch, "r1", "desk", fingerprint)
        held = [v for k, v in remote._REMOTE_SUITES.items() if k[0] == str(root)]
        again = remote._remote_suite(str(root), dict(suite.digests), ("desk-2", fingerprint))
        assert len(held) == 1 and again is held[0]
    finally:
        remote._release_here(str(root), None)


def test_a_worker_s_system_from_outside_the_suite_edited_since_says_restart(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The system's module is installed outside the suite folder; a worker holds the suite since a batch, the
    module is edited, and a run of another code fingerprint (its process restarted) sends a batch. Python keeps the
    worker's import, so loading the suite again there cannot take the edit: the line names the worker and says to
    restart the workers (exact text; it gave the load's refusal, "restart the process (in a notebook: the
    kernel)", which the run's process had just done). Pins ``Suite.system_edited`` against ``stale_function`` (only
    the suite folder's files read: the suite kept, and the line said "load the suite again")."""
    name = f"m55_outside_{uuid.uuid4().hex[:8]}"
    outside = tmp_path / "installed"
    outside.mkdir()
    module = outside / f"{name}.py"
    module.write_text(outside_desk("ok"), encoding="utf-8")
    monkeypatch.syspath_prepend(str(outside))
    cases = [{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(2)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system=f"{name}:Desk")
    suite = op.load_suite(root)
    fingerprint = op.run(suite, out=tmp_path / "run", progress=False).manifest.code_fingerprint
    batch = list(enumerate(suite.kept_cases or ()))
    try:
        records, _ = remote._remote_batch(str(root), dict(suite.digests), batch, "r1", "desk-1", fingerprint)
        assert [r["status"] for r in records] == ["completed"] * 2
        module.write_text(outside_desk("no"), encoding="utf-8")
        with pytest.raises(OloproofError) as caught:
            remote._remote_batch(str(root), dict(suite.digests), batch, "r2", "desk-1", "another")
        assert str(caught.value) == (  # the worker's words, not the run's process's
            f"{root}: on worker {socket.gethostname()}, {module} changed since the worker imported the system's code "
            "from it, and Python keeps that import; restart the workers after changing the system's code "
            "(client.restart())")
    finally:
        remote._release_here(str(root), None)


class _NoSignature:
    """A factory whose signature cannot be read (``inspect.signature`` raises TypeError) and that fails itself."""

    __signature__ = "not a signature"

    def __call__(self) -> object:
        raise RuntimeError("deployment down")


def test_a_factory_without_a_signature_to_read_gets_no_arguments_hint() -> None:
    """The hint that the runner builds with no arguments is for a factory whose signature needs some; one whose
    signature cannot be read is not known to, and its error is given as it is (exact line). Kills
    ``_needs_arguments`` answering True when it cannot read the signature."""
    with pytest.raises(OloproofError) as caught:
        build(_NoSignature(), None)
    assert str(caught.value) == "building the system raised RuntimeError: deployment down"
