"""An executor's worker and the system's file. Kept across two runs, the system's file edited and the
suite loaded again between them: the worker loads the suite again, as the run's process did, and runs the second
run on the new code; before, it refused it, saying to load the suite again, which the user had done. The system's
file saved during a run of several batches: the worker's later batches run on the system that gave the run's
identity (the rule ``test_runner_identity.py`` pins); before, the next batch stopped the run. Module names are this
file's own (Python keeps one module of a name per process)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest
from _shared import outside_desk

import oloproof_nb as op

DESK = '''class Desk:
    version = "desk"

    def run(self, input):
        return {"steps": [], "answer": "ok", "status": "completed"}
'''


def _suite(make_suite: Callable[..., Path]) -> Path:
    """4 cases expecting the answer ``ok``, the desk in the suite folder's ``f51desk.py``."""
    cases = [{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(4)]
    return make_suite(cases, system="f51desk:Desk", system_code="", evaluators=[{"type": "answer_matches"}])


def test_a_worker_kept_across_an_edit_of_the_system_runs_the_new_code(make_suite: Callable[..., Path],
                                                                      tmp_path: Path) -> None:
    """The first run passes 4 of 4; the desk edited to answer ``no`` and the suite loaded again, the second run on
    the same worker process fails 4 of 4 (the edited code's answers, counted by hand) and records the edited
    code's fingerprint."""
    root = _suite(make_suite)
    desk = root / "f51desk.py"
    desk.write_text(DESK, encoding="utf-8")
    with ProcessPoolExecutor(1) as pool:
        first = op.run(op.load_suite(root), executor=pool, out=tmp_path / "first", progress=False)
        desk.write_text(DESK.replace('"ok"', '"no"'), encoding="utf-8")
        second = op.run(op.load_suite(root), executor=pool, out=tmp_path / "second", progress=False)
    assert list(first.verdicts["verdict"]) == ["pass"] * 4
    assert list(second.cases["answer"]) == ["no"] * 4
    assert list(second.verdicts["verdict"]) == ["fail"] * 4
    assert second.manifest.code_fingerprint != first.manifest.code_fingerprint


def test_a_worker_keeps_its_suite_while_the_system_is_unchanged(make_suite: Callable[..., Path],
                                                               tmp_path: Path) -> None:
    """Two batches of one suite in this process with no edit between: one suite held, the same object (loaded
    once), as before."""
    from oloproof_nb._run import remote

    root = _suite(make_suite)
    (root / "f51desk.py").write_text(DESK, encoding="utf-8")
    suite = op.load_suite(root)
    batch = list(enumerate(suite.kept_cases or ()))
    run = op.run(suite, out=tmp_path / "run", progress=False)
    try:
        remote._remote_batch(str(root), dict(suite.digests), batch, "r1", "desk", run.manifest.code_fingerprint)
        held = [v for k, v in remote._REMOTE_SUITES.items() if k[0] == str(root)]
        remote._remote_batch(str(root), dict(suite.digests), batch, "r2", "desk", run.manifest.code_fingerprint)
        again = [v for k, v in remote._REMOTE_SUITES.items() if k[0] == str(root)]
        assert len(held) == 1 and again[0] is held[0]
    finally:
        remote._release_here(str(root), None)


def test_a_worker_s_later_batches_run_on_when_the_system_s_file_outside_the_suite_was_saved(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The executor case of ``test_runner_identity_replacements.py`` with one case a batch: c00 saves the system's
    module (outside the suite folder), c01 raises. The worker's next batch refused the system its run was checked
    against ("… changed since this suite was loaded …"): the run stopped after 2 cases. Hand count: 3 of 4 complete; c01
    raised."""
    name = f"f51_outside_{uuid.uuid4().hex[:8]}"
    outside = tmp_path / "installed"
    outside.mkdir()
    (outside / f"{name}.py").write_text(outside_desk("ok"), encoding="utf-8")
    monkeypatch.syspath_prepend(str(outside))
    cases = [{"id": f"c{i}", "input": {"n": i, "save": i == 0, "raise": i == 1}, "expected": {"answer": "ok"}}
             for i in range(4)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system=f"{name}:Desk")
    with ThreadPoolExecutor(1) as executor:
        run = op.run(root, executor=executor, chunk_size=1, out=tmp_path / "run", progress=False)
    records = [json.loads(line) for line in (tmp_path / "run" / "cases.jsonl").read_text().splitlines()]
    assert run.finished and [r["status"] for r in records].count("completed") == 3
    assert (outside / f"{name}.py").read_text(encoding="utf-8").endswith("# saved\n")
