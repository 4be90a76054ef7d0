"""``isolation: process`` lets a worker still building its system at the end of the run release it too.

:meth:`~oloproof_nb._run.isolation.ProcessWorkers.finish` told only the idle workers to drop their system;
a worker still building one (the second of ``workers: 2`` when the first ran every case, or one rebuilding after
a failed case) was killed, so the working copy its desk had made stayed in the temporary folder, as when every
worker was killed at a run's end.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb._run.isolation import ProcessWorkers
from oloproof_nb._run.store import STARTED

from .test_isolation_finaliser import DESK
from .test_isolation_finaliser import _suite as _suite_u23

#: The second instance keeps building for 2 s after it made its copy; the first case waits until that copy
#: exists, so the run ends while the second worker is still building (the first worker runs both cases).
SLOW_SECOND = DESK.replace(
    "        weakref.finalize(self, _close, self.db, self.folder)\n",
    "        weakref.finalize(self, _close, self.db, self.folder)\n"
    "        if len(os.listdir(os.environ['U23_COPIES'])) > 1:\n"
    "            import time\n"
    "            time.sleep(2)\n",
).replace(
    "    def act(self, input, rec):\n",
    "    def act(self, input, rec):\n"
    "        import time\n"
    "        deadline = time.monotonic() + 20\n"
    "        copies = os.environ['U23_COPIES']\n"
    "        while input['id'] == 'n1' and len(os.listdir(copies)) < 2 and time.monotonic() < deadline:\n"
    "            time.sleep(0.02)\n",
)


def test_a_worker_still_building_at_the_end_releases_its_system(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    copies = tmp_path / "copies"
    copies.mkdir()
    monkeypatch.setenv("U23_COPIES", str(copies))
    root = tmp_path / "suite"
    root.mkdir()
    (root / "copy_desk.py").write_text(SLOW_SECOND, encoding="utf-8")
    (root / "oloproof.yaml").write_text(
        "name: copies\nsystem: copy_desk:CopyDesk\ncase_timeout_s: 30\n"
        "evaluators:\n  - {type: state_matches, mode: changes}\n", encoding="utf-8")
    lines = [{"id": f"n{i}", "input": {"id": f"n{i}"}, "initial_state": {"notes": {}},
              "expected": {"state": {"notes": {f"n{i}": "hi"}}}} for i in range(2)]
    (root / "cases.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    run = op.run(root, out=tmp_path / "run", progress=False, isolation="process", workers=2)
    assert list(run.verdicts["verdict"]) == ["pass", "pass"]
    assert sorted(p.name for p in copies.iterdir()) == []  # before: the second worker's copy was left


def _pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int = 1) -> ProcessWorkers:
    copies = tmp_path / "copies"
    copies.mkdir()
    monkeypatch.setenv("U23_COPIES", str(copies))
    root = tmp_path / "suite"
    root.mkdir()
    (root / "copy_desk.py").write_text(DESK, encoding="utf-8")
    (root / "oloproof.yaml").write_text(
        "name: copies\nsystem: copy_desk:CopyDesk\ncase_timeout_s: 30\nisolation: process\n"
        "evaluators:\n  - {type: state_matches, mode: changes}\n", encoding="utf-8")
    (root / "cases.jsonl").write_text(json.dumps({"id": "n0", "input": {"id": "n0"}, "initial_state": {"notes": {}},
                                                  "expected": {"state": {"notes": {"n0": "hi"}}}}) + "\n",
                                      encoding="utf-8")
    return ProcessWorkers(op.load_suite(root).with_user_code(), workers, cache=False)


def test_finish_passes_over_a_worker_that_died_before_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed from outside while idle: telling it to stop finds its pipe closed (BrokenPipeError), which
    must not stop a run whose every case is recorded (it would be an internal error); the worker is gone."""
    pool = _pool(tmp_path, monkeypatch)
    pool.start()
    worker = pool._workers[0]
    assert worker.state == "idle"
    worker.proc.send_signal(signal.SIGKILL)
    worker.proc.wait(timeout=30)
    pool.finish()
    assert pool._workers == [] and worker.state == "gone" and worker.proc.returncode == -signal.SIGKILL
    assert len(list((tmp_path / "copies").iterdir())) == 1  # its copy: a worker killed runs no finaliser (README)


def test_finish_releases_an_idle_worker_s_system(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The idle worker is told to stop: it drops its system (the copy is removed) and exits with 0, not killed."""
    pool = _pool(tmp_path, monkeypatch)
    pool.start()
    worker = pool._workers[0]
    assert len(list((tmp_path / "copies").iterdir())) == 1
    pool.finish()
    assert worker.proc.returncode == 0 and list((tmp_path / "copies").iterdir()) == []


def test_finish_kills_a_worker_that_has_said_nothing_yet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker spawned a moment before the run ended (its Python still starting, none of the system's code run
    in it) is killed at once: told to stop, it would first import and build the system only to drop it, and every
    short run with ``workers`` > 1 would wait for that (0.25 s on the bundled example with 4 workers)."""
    pool = _pool(tmp_path, monkeypatch)
    worker = pool._spawn()
    pool._workers.append(worker)
    pool.finish()  # microseconds after the spawn: an interpreter takes far longer to start and say anything
    assert worker.state == "gone" and worker.proc.returncode == -signal.SIGKILL
    assert list((tmp_path / "copies").iterdir()) == []  # it built nothing


def test_a_process_run_notes_each_case_run_it_sends_as_a_worker_s(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``op.run`` itself binds the note marked ``worker`` (``RunStore.note_case(in_worker=True)``): a note without
    the mark would let an exit of the run's process be blamed on a case run a worker held (recorded ``error`` on
    resume, where it runs again). Read from ``started.jsonl`` while the run is going (its progress callback)."""
    copies = tmp_path / "copies"
    copies.mkdir()
    monkeypatch.setenv("U23_COPIES", str(copies))
    root = _suite_u23(tmp_path / "suite")
    out = tmp_path / "run"
    seen: list[dict[str, object]] = []

    def progress(finished: int, total: int) -> None:
        if finished == 2:
            text = (out / STARTED).read_text(encoding="utf-8")
            seen.extend(json.loads(line) for line in text.splitlines())

    op.run(root, out=out, progress=progress, isolation="process", workers=1)
    assert [(line["case"], line["epoch"], line.get("worker")) for line in seen] == [
        ("n0", 1, True), ("n1", 1, True)]  # one worker: the third is sent after the second's record is appended
    assert not (out / STARTED).exists()  # the finished run removed it


@pytest.mark.slow
def test_a_ctrl_c_while_a_worker_s_finaliser_runs_leaves_the_run_finished(tmp_path: Path) -> None:
    """Every case recorded, a worker's finaliser still running (it takes 3 s), the user's Ctrl-C: the run is
    stamped finished before the workers are told to stop, as a thread run is before it drops its instances
    (README, Reliability). Before, the run of 4 of 4 cases was left unfinished: ``oloproof gate`` refused it ("the
    run did not finish (4 of 4 cases recorded)") until a ``--resume`` that ran nothing."""
    import subprocess
    import time

    from _reliability_systems import cli_command, cli_env

    copies = tmp_path / "copies"
    copies.mkdir()
    root = _suite_u23(tmp_path / "suite")
    finalising = "    open(os.path.join(os.environ['U23_COPIES'], 'finalising'), 'w').close()\n"
    slow = DESK.replace("    db.close()\n", finalising + "    import time\n    time.sleep(3)\n    db.close()\n")
    (root / "copy_desk.py").write_text(slow, encoding="utf-8")
    out = tmp_path / "run"
    proc = subprocess.Popen(cli_command("run", str(root), "--out", str(out), "--isolation", "process", "--quiet"),
                            env=cli_env(U23_COPIES=str(copies)), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 60
        while not (copies / "finalising").exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert (copies / "finalising").exists(), proc.stderr.read() if proc.poll() is not None else "no finaliser"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["finished_at"] is not None, err
    assert len(op.load_run(out).cases) == 4
