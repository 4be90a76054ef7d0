"""``isolation: process`` lets its idle workers release their systems when an error stops the run.

A run that went through (and a resume of a finished one) tells each worker to drop its system, so the system's
finaliser runs (a desk's working copy of its database is removed); a run an error stopped (a
store write error, a system that could not be rebuilt, a resume refused) still killed every worker, leaving each
copy behind. Now an error ends the workers as a run's end does (``ProcessWorkers.finish``): an idle worker drops
its system; a busy one is killed, its case run cut short (README, section 1a's SQL bullet).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._run.isolation import ProcessWorkers
from oloproof_nb._run.store import RunStore
from oloproof_nb.errors import InternalError, StoreWriteError

from .test_isolation_finaliser import DESK
from .test_isolation_finaliser import _suite as _suite_u23

#: n1 sleeps in its case (so its worker is busy when the run stops); n0 returns once n1 has begun.
BUSY_N1 = DESK.replace(
    "    def act(self, input, rec):\n",
    "    def act(self, input, rec):\n"
    "        import time\n"
    "        marker = os.path.join(os.environ['U23_MARKS'], 'n1-began')\n"
    "        if input['id'] == 'n1':\n"
    "            open(marker, 'w').close()\n"
    "            time.sleep(60)\n"
    "        deadline = time.monotonic() + 30\n"
    "        while input['id'] == 'n0' and not os.path.exists(marker) and time.monotonic() < deadline:\n"
    "            time.sleep(0.02)\n",
)


def _watched_copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder the test desk makes its working copy in (``U23_COPIES``): empty once every system was dropped."""
    copies = tmp_path / "copies"
    copies.mkdir()
    monkeypatch.setenv("U23_COPIES", str(copies))
    return copies


def _fail_on_first_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's first append fails, as on a full disk (:class:`~oloproof_nb.errors.StoreWriteError`)."""

    def full(self: RunStore, record: Any) -> tuple[str | None, str | None]:
        raise StoreWriteError(f"{self.directory}: cannot write (No space left on device)")

    monkeypatch.setattr(RunStore, "append_case", full)


def test_an_error_lets_an_idle_worker_release_its_system(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copies = _watched_copies(tmp_path, monkeypatch)
    root = _suite_u23(tmp_path / "suite")
    _fail_on_first_record(monkeypatch)
    with pytest.raises(StoreWriteError, match="No space left on device"):
        op.run(root, out=tmp_path / "run", progress=False, isolation="process", workers=1)
    assert sorted(p.name for p in copies.iterdir()) == []  # before: killed, its copy was left


def test_an_error_kills_a_busy_worker_and_lets_the_idle_one_release(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker running n1 (asleep for 60 s of its 120 s timeout) is killed, not waited for: its copy stays, as
    after any kill (README); the worker that finished n0 drops its system. The run stops at once either way."""
    copies, marks = tmp_path / "copies", tmp_path / "marks"
    copies.mkdir()
    marks.mkdir()
    monkeypatch.setenv("U23_COPIES", str(copies))
    monkeypatch.setenv("U23_MARKS", str(marks))
    root = tmp_path / "suite"
    root.mkdir()
    (root / "copy_desk.py").write_text(BUSY_N1, encoding="utf-8")
    (root / "oloproof.yaml").write_text(
        "name: copies\nsystem: copy_desk:CopyDesk\ncase_timeout_s: 120\n"
        "evaluators:\n  - {type: state_matches, mode: changes}\n", encoding="utf-8")
    lines = [{"id": f"n{i}", "input": {"id": f"n{i}"}, "initial_state": {"notes": {}},
              "expected": {"state": {"notes": {f"n{i}": "hi"}}}} for i in range(2)]
    (root / "cases.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    _fail_on_first_record(monkeypatch)
    with pytest.raises(StoreWriteError):
        op.run(root, out=tmp_path / "run", progress=False, isolation="process", workers=2)
    assert (marks / "n1-began").exists()
    assert len(list(copies.iterdir())) == 1  # n1's worker, killed; before, n0's copy was left beside it


def test_a_refused_resume_lets_its_worker_release_its_system(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A process-isolated resume builds the system in its first worker before it reads the run's manifest; a
    resume refused there (a suite file changed) killed that worker, and each refusal left a copy behind."""
    copies = _watched_copies(tmp_path, monkeypatch)
    root = _suite_u23(tmp_path / "suite")
    op.run(root, out=tmp_path / "run", progress=False, isolation="process")
    with (root / "cases.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps({"id": "n9", "input": {"id": "n9"}, "initial_state": {"notes": {}}}) + "\n")
    with pytest.raises(op.RunDirError, match="cases.jsonl changed since this run started"):
        op.run(root, out=tmp_path / "run", progress=False, isolation="process", resume=True)
    assert sorted(p.name for p in copies.iterdir()) == []


def test_an_internal_error_lets_an_idle_worker_release_its_system(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in oloproof (an ``Exception`` that is not an ``OloproofError``) stops the run as
    any error does: the idle worker drops its system (os.listdir of the copies: none left)."""
    copies = _watched_copies(tmp_path, monkeypatch)
    root = _suite_u23(tmp_path / "suite")

    def broken(self: RunStore, record: Any) -> tuple[str | None, str | None]:
        raise RuntimeError("a bug")

    monkeypatch.setattr(RunStore, "append_case", broken)
    with pytest.raises(InternalError, match="internal error: RuntimeError: a bug"):
        op.run(root, out=tmp_path / "run", progress=False, isolation="process", workers=1)
    assert os.listdir(copies) == []


def test_a_run_that_cannot_be_stamped_finished_lets_its_workers_release(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every case run recorded, then the store cannot write the run's end (a full disk): the
    workers, all idle, drop their systems as at a finished run's end (os.listdir of the copies: none left)."""
    copies = _watched_copies(tmp_path, monkeypatch)
    root = _suite_u23(tmp_path / "suite")

    def full(self: RunStore, finished_at: Any) -> list[Path]:
        raise StoreWriteError(f"{self.directory}: cannot write (No space left on device)")

    monkeypatch.setattr(RunStore, "finish", full)
    with pytest.raises(StoreWriteError, match="No space left on device"):
        op.run(root, out=tmp_path / "run", progress=False, isolation="process", workers=2)
    assert os.listdir(copies) == []


def test_an_error_before_the_first_case_lets_its_worker_release_its_system(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """An error once the run folder is open and before a case is sent (here the resume's
    look at the case runs in flight) ends the worker as a refused resume does: its copy is removed."""
    import oloproof_nb._run.runner as runner

    copies = _watched_copies(tmp_path, monkeypatch)
    root = _suite_u23(tmp_path / "suite")
    op.run(root, out=tmp_path / "run", progress=False, isolation="process")

    def unreadable(*args: Any) -> None:
        raise op.RunDirError(f"{tmp_path / 'run'}: cases.jsonl cannot be read")

    monkeypatch.setattr(runner, "_settle_in_flight", unreadable)
    with pytest.raises(op.RunDirError, match="cannot be read"):
        op.run(root, out=tmp_path / "run", progress=False, isolation="process", resume=True)
    assert os.listdir(copies) == []


def test_a_ctrl_c_kills_the_workers_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On the user's Ctrl-C the workers are stopped, not told to finish (``_end_workers``:
    the user asked to stop now)."""
    ended: list[str] = []
    finish, stop = ProcessWorkers.finish, ProcessWorkers.stop

    def finishing(self: ProcessWorkers) -> None:
        ended.append("finish")
        finish(self)

    def stopping(self: ProcessWorkers) -> None:
        ended.append("stop")
        stop(self)

    def interrupted(self: RunStore, record: Any) -> tuple[str | None, str | None]:
        raise KeyboardInterrupt

    monkeypatch.setenv("U23_COPIES", str(tmp_path))
    monkeypatch.setattr(ProcessWorkers, "finish", finishing)
    monkeypatch.setattr(ProcessWorkers, "stop", stopping)
    monkeypatch.setattr(RunStore, "append_case", interrupted)
    with pytest.raises(KeyboardInterrupt):
        op.run(_suite_u23(tmp_path / "suite"), out=tmp_path / "run", progress=False, isolation="process")
    assert ended[0] == "stop" and "finish" not in ended
