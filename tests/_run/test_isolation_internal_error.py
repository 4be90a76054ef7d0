"""oloproof's own error in an ``isolation: process`` worker: the line that stops the run says what was raised, and
on which case (it said ``internal error: RuntimeError: a worker process failed:`` and nothing more; a thread run's
line says ``internal error: KeyError: …``). No process is started here: the worker is stood in for by a pipe."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from oloproof_nb._core.case import Case, case_digest
from oloproof_nb._run.isolation import ProcessWorkers, _Worker
from oloproof_nb.errors import describe_exception

#: The traceback a worker sends (``traceback.format_exc()`` there).
TRACE = ('Traceback (most recent call last):\n  File "case.py", line 7, in _record\n'
         "KeyError: 'stand-in for a bug'\n")


class _Alive:
    def poll(self) -> None:
        return None


def _pool(parent: object, state: str, item: tuple[int, Case] | None) -> tuple[ProcessWorkers, _Worker]:
    pool = ProcessWorkers.__new__(ProcessWorkers)
    worker = _Worker(proc=_Alive(), conn=parent, state=state, item=item)  # type: ignore[arg-type]
    pool._workers = [worker]
    pool._suite_file = Path("suite") / "oloproof.yaml"
    pool._timeout_s = 10.0
    return pool, worker


def test_a_bug_in_a_worker_running_a_case_names_the_case_and_the_error_in_its_first_line() -> None:
    raw = {"id": "c1", "input": {}}
    case = Case.model_validate({**raw, "cluster": "c1", "digest": case_digest(raw), "source_id": "c1", "epoch": 2})
    parent, child = multiprocessing.Pipe()
    try:
        pool, worker = _pool(parent, "busy", (0, case))
        child.send(("internal", TRACE))
        with pytest.raises(RuntimeError) as err:
            list(pool._poll_busy(worker))
    finally:
        parent.close()
        child.close()
    assert describe_exception(err.value) == ("RuntimeError: a worker process failed running case 'c1' (epoch 2): "
                                             "KeyError: 'stand-in for a bug'")
    assert str(err.value).endswith("\n" + TRACE)  # the worker's traceback kept (saved in internal-error.txt)


def test_a_bug_in_a_worker_building_the_system_says_so_in_its_first_line() -> None:
    parent, child = multiprocessing.Pipe()
    try:
        pool, worker = _pool(parent, "starting", None)
        child.send(("internal", TRACE))
        with pytest.raises(RuntimeError) as err:
            pool._poll_start(worker)
    finally:
        parent.close()
        child.close()
    assert describe_exception(err.value) == ("RuntimeError: a worker process failed building the system: "
                                             "KeyError: 'stand-in for a bug'")
