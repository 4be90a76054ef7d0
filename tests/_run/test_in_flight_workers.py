"""Case runs sent to ``isolation: process`` workers are in flight too.

A process-isolated run killed from outside ran the case runs its workers held again on resume with no word: the
run's process noted no start (``started.jsonl`` named only case runs of its own threads), so the manifest kept no
``abrupt_ends`` and the gate printed no "resumed after … abrupt end" line, which README's Reliability section
promises for a kill. Now each is noted as it is sent to a worker, marked ``worker``: a resume runs it again and
says so. An end of the run's process is never blamed on such a case run's system (it ran in another process): an
exit or a fatal signal of the run's process runs them again, noted, where on threads they are recorded ``error``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _reliability_systems import (
    cli_command,
    cli_env,
    kill_after_records,
    main_in_process,
    read_log,
    runs_of,
    standard_cases,
    write_suite,
)

import oloproof_nb as op
from oloproof_nb._core.records import Manifest
from oloproof_nb._run.in_flight import note_end, read_in_flight
from oloproof_nb._run.store import STARTED, RunStore

MANIFEST = Manifest(suite="s", run_id="x", started_at="2026-01-01T00:00:00.000000Z", oloproof_nb="0", n_cases=0)


@pytest.mark.parametrize(("in_worker", "by_system"), [(False, True), (True, False)])
def test_an_exit_of_the_run_s_process_is_not_blamed_on_a_case_run_a_worker_held(tmp_path: Path, in_worker: bool,
                                                                                by_system: bool) -> None:
    """The same end (exit code 3 before the run's last message): on a thread of the run's process the case run's
    system may have called it (recorded ``error`` on resume); in a worker it cannot have (run again, noted)."""
    store = RunStore.create(tmp_path / "run", MANIFEST)
    store.note_case("a", 1, in_worker=in_worker)
    store._run_lock.release()  # type: ignore[union-attr]  # as the process's death releases it
    line = json.loads((tmp_path / "run" / STARTED).read_text(encoding="utf-8").splitlines()[0])
    assert line.get("worker", False) is in_worker
    ended = note_end(tmp_path / "run", 3)
    assert ended is not None
    seen = read_in_flight(tmp_path / "run")
    assert seen is not None and list(seen.started) == [("a", 1)]
    assert (seen.how, seen.by_system) == ("exit code 3", by_system)


@pytest.mark.slow
def test_a_process_isolated_run_killed_from_outside_says_on_resume_which_case_ran_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof run`` of a suite with ``isolation: process`` and one worker, SIGKILLed from outside after 3
    records: the resume runs the case the worker held and the rest, and the manifest and the gate say the case in
    flight ran again (before: ``abrupt_ends`` absent, no line)."""
    n = 8
    ids = [f"c{i}" for i in range(n)]
    root = write_suite(tmp_path / "suite", standard_cases(n), isolation="process")
    out = tmp_path / "run"
    kill_after_records(cli_command("run", str(root), "--out", str(out), "--quiet"), cli_env(RELSYS_SLEEP="0.3"), out)
    finished_before = list(op.load_run(out).cases["case_id"])
    assert 3 <= len(finished_before) < n and finished_before == ids[:len(finished_before)]
    log = tmp_path / "resume.log"
    monkeypatch.setenv("RELSYS_LOG", str(log))
    done = main_in_process(capsys, "run", str(root), "--out", str(out), "--resume", "--quiet")
    assert done.returncode in (0, 1), done.stderr
    assert runs_of(read_log(log)) == ids[len(finished_before):]
    victim = ids[len(finished_before)]  # one worker: the case it held when the command and its child were killed
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest.get("abrupt_ends") == [{"how": None, "rerun": [[victim, 1]]}]
    assert not (out / STARTED).exists()
    assert list(op.load_run(out).cases["case_id"]) == ids
    assert (f"resumed after 1 abrupt end of the run's process (not seen by oloproof run); the 1 case run in flight "
            f"was run again: case '{victim}'") in " ".join(done.stdout.split())


def test_a_ctrl_c_just_after_a_case_is_sent_to_its_worker_leaves_it_noted(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C that lands right after the run's process sent a case to its worker (the worker has begun it): the
    case run is noted in flight, with the stop after it, so the resume runs it again and says so (it was
    noted after the send, so at that moment nothing was noted and the resume ran it again without a word)."""
    import multiprocessing.connection

    root = write_suite(tmp_path / "suite", standard_cases(2), isolation="process")
    send = multiprocessing.connection.Connection.send

    def send_then_interrupt(self: multiprocessing.connection.Connection, obj: object) -> None:
        send(self, obj)
        if isinstance(obj, tuple) and isinstance(obj[0], int):  # a case, sent (not the spec, not the stop)
            raise KeyboardInterrupt

    monkeypatch.setattr(multiprocessing.connection.Connection, "send", send_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        op.run(root, out=tmp_path / "run", progress=False)
    seen = read_in_flight(tmp_path / "run")
    assert seen is not None and list(seen.started) == [("c0", 1)] and seen.stopped  # before: None (no note)
