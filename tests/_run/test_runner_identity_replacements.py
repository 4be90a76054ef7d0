"""The run's identity checks, edges the nearest tests let through: each test here fails on a changed rule,
against a count the system under test keeps itself (its instances built and released)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from _shared import outside_desk

import oloproof_nb as op

#: A desk that logs each instance built and released beside the suite, whose ``version`` reads the deployment
#: (deployed.txt) when it is read, raising once it says ``broken``; a case whose input says so breaks the
#: deployment and raises.
LOGGED = '''
import pathlib

HERE = pathlib.Path(__file__).parent


class Desk:
    def __init__(self):
        with open(HERE / "instances.log", "a") as f:
            f.write("built\\n")

    @property
    def version(self):
        deployed = (HERE / "deployed.txt").read_text().strip()
        if deployed == "broken":
            raise RuntimeError("the deployment is broken")
        return deployed

    def __del__(self):
        with open(HERE / "instances.log", "a") as f:
            f.write("released\\n")

    def run(self, input):
        if input.get("break"):
            (HERE / "deployed.txt").write_text("broken")
            raise RuntimeError("the desk fell over")
        return {"steps": [], "answer": "ok"}
'''


def _logged_suite(make_suite: Callable[..., Path], breaking: bool = True) -> Path:
    """4 cases of :data:`LOGGED`, c01 breaking the deployment when ``breaking``; the deployment says v1."""
    cases = [{"id": f"c{i}", "input": {"n": i, "break": breaking and i == 1}, "expected": {"answer": "ok"}}
             for i in range(4)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="desk:Desk")
    (root / "desk.py").write_text(LOGGED, encoding="utf-8")
    (root / "deployed.txt").write_text("v1", encoding="utf-8")
    return root


def test_a_replacement_whose_version_cannot_be_read_is_released_before_the_run_stops(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """c01 breaks the deployment and raises; its replacement's ``version`` then raises, and the run stops naming
    it. That replacement is released before the error is raised (``build_checked``'s release on an error of
    ``identity_of``), not left to the error's traceback, which holds it as long as the error is kept (a caught
    error in a notebook: its connection, its file open). Hand count: 2 instances built (c00-c01's, c01's
    replacement), 2 released while the error is still held."""
    root = _logged_suite(make_suite)
    with pytest.raises(op.OloproofError, match=r"system: reading the system's version raised RuntimeError") as info:
        op.run(root, out=tmp_path / "run", progress=False)
    assert info.value is not None  # the error, and its traceback, still held here
    lines = (root / "instances.log").read_text(encoding="utf-8").split()
    assert (lines.count("built"), lines.count("released")) == (2, 2)


def test_an_executor_s_worker_runs_every_batch_of_a_run_on_the_instance_it_checked(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """An executor's worker pools the instance it checked with the run's identity, and the run's next batch there
    takes it: pooled as checked against nothing, every batch built (and checked) an instance of its own, a system
    whose constructor opens a session per batch. Hand count, one worker thread and 4 batches of one case: 2 built
    (the run's own, the worker's), all released once the run ends."""
    from concurrent.futures import ThreadPoolExecutor

    root = _logged_suite(make_suite, breaking=False)
    with ThreadPoolExecutor(max_workers=1) as executor:
        run = op.run(root, executor=executor, chunk_size=1, out=tmp_path / "run", progress=False)
    assert list(run.cases["answer"]) == ["ok"] * 4
    lines = (root / "instances.log").read_text(encoding="utf-8").split()
    assert (lines.count("built"), lines.count("released")) == (2, 2)


OUTSIDE = outside_desk("ok")


def test_a_worker_process_s_replacement_of_the_same_class_runs_on_when_its_file_outside_the_suite_was_saved(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``test_runner_identity.py``'s saved outside module, in a worker process: the system's module outside the suite
    folder is saved by c00, c01 raises, and the worker's replacement is an instance of the class its first one is (the
    code the run's fingerprint was taken of). The worker digested the files again for it, and the run stopped ("a worker
    process built a system that has another code fingerprint than the run's"), as a thread run once did. Hand count: 3
    of 4 complete; c01 raised."""
    import json
    import uuid

    name = f"m52_outside_{uuid.uuid4().hex[:8]}"
    outside = tmp_path / "installed"
    outside.mkdir()
    (outside / f"{name}.py").write_text(OUTSIDE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(outside))
    monkeypatch.setenv("PYTHONPATH", str(outside))  # a worker process started by spawn imports it too
    cases = [{"id": f"c{i}", "input": {"n": i, "save": i == 0, "raise": i == 1}, "expected": {"answer": "ok"}}
             for i in range(4)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system=f"{name}:Desk")
    run = op.run(root, isolation="process", out=tmp_path / "run", progress=False)
    records = [json.loads(line) for line in (tmp_path / "run" / "cases.jsonl").read_text().splitlines()]
    assert run.finished and [r["status"] for r in records].count("completed") == 3
    assert (outside / f"{name}.py").read_text(encoding="utf-8").endswith("# saved\n")


def test_an_executor_s_replacement_of_the_same_class_runs_on_when_its_file_outside_the_suite_was_saved(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A saved outside module on an executor's worker: the batch's replacement of the class its first instance is
    was digested again and refused ("the system on worker … has another code fingerprint than the run's"), where a
    thread run and a worker process now go on. The worker keeps the digests it took per suite, beside its pool.
    Hand count: 3 of 4 complete; c01 raised."""
    import json
    import uuid
    from concurrent.futures import ThreadPoolExecutor

    name = f"m52_outside_{uuid.uuid4().hex[:8]}"
    outside = tmp_path / "installed"
    outside.mkdir()
    (outside / f"{name}.py").write_text(OUTSIDE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(outside))
    cases = [{"id": f"c{i}", "input": {"n": i, "save": i == 0, "raise": i == 1}, "expected": {"answer": "ok"}}
             for i in range(4)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system=f"{name}:Desk")
    with ThreadPoolExecutor(1) as executor:
        run = op.run(root, executor=executor, chunk_size=10, out=tmp_path / "run", progress=False)
    records = [json.loads(line) for line in (tmp_path / "run" / "cases.jsonl").read_text().splitlines()]
    assert run.finished and [r["status"] for r in records].count("completed") == 3
    assert (outside / f"{name}.py").read_text(encoding="utf-8").endswith("# saved\n")


def test_a_first_instance_whose_version_cannot_be_read_is_released_before_the_run_stops(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The first instance of a thread run, whose ``version`` raises, was left to the error's
    traceback (its connection, its file open for as long as a notebook keeps the error). Hand count: 1 built, 1
    released while the error is still held; nothing written."""
    root = _logged_suite(make_suite, breaking=False)
    (root / "deployed.txt").write_text("broken", encoding="utf-8")
    with pytest.raises(op.OloproofError, match=r"system: reading the system's version raised RuntimeError") as info:
        op.run(root, out=tmp_path / "run", progress=False)
    assert info.value is not None  # the error, and its traceback, still held here
    lines = (root / "instances.log").read_text(encoding="utf-8").split()
    assert (lines.count("built"), lines.count("released")) == (1, 1)
    assert not (tmp_path / "run").exists()
