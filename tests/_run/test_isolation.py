"""``isolation: process``: no case can hang the run (issue 14, "Hangs the thread timeout cannot stop").

Each worker is a process the run kills and replaces when a call into the system overruns
``case_timeout_s``; these tests use the calls a helper thread cannot stop: a regular expression that
holds the GIL for minutes, a constructor that hangs, a process that ends itself. Every process start
costs an interpreter start-up (about a second), so the runs here are small.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _epoch_systems import SEEDED
from _processes import gone_within, running
from _reliability_systems import (
    EVALUATORS,
    FAULT_EVALUATOR,
    assert_same_frames,
    cli_env,
    make_case,
    read_log,
    run_cli,
    standard_cases,
    write_suite,
)
from _stopped_runs import finish_note, stopped_run_note

import oloproof_nb as op
from oloproof_nb._config.suite import Suite
from oloproof_nb.errors import ConfigError, OloproofError


@pytest.fixture
def released(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A side-channel log, and a release file that ends every hang when the test is over."""
    log, release = tmp_path / "system.log", tmp_path / "release-hangs"
    monkeypatch.setenv("RELSYS_LOG", str(log))
    monkeypatch.setenv("RELSYS_RELEASE", str(release))
    yield log
    release.write_text("done", encoding="utf-8")


def _worker_pids(log: Path, event: str = "init", case: str | None = None) -> set[int]:
    """The processes that built a system instance (``init`` events of the side-channel log), or ran a case (of
    id ``case``, or any)."""
    return {int(e[2].split("-")[0]) for e in read_log(log) if e[0] == event and case in (None, e[1])}


def test_process_isolation_gives_the_frames_of_a_thread_run(tmp_path: Path, released: Path) -> None:
    root = write_suite(tmp_path / "suite", standard_cases(8), evaluators=[*EVALUATORS, FAULT_EVALUATOR])
    threads = op.run(root, out=tmp_path / "threads", progress=False)
    processes = op.run(root, out=tmp_path / "processes", progress=False, isolation="process", workers=2)
    assert_same_frames(processes, threads)
    assert processes.manifest.code_fingerprint == threads.manifest.code_fingerprint

    def replays(run: op.Run) -> list[tuple[str, str, str, int]]:  # replays.jsonl: a record per replay made
        lines = (run.directory / "replays.jsonl").read_text(encoding="utf-8").splitlines()
        return sorted((r["case_id"], r["criterion"], r["kind"], r["checkpoint"]) for r in map(json.loads, lines))

    assert replays(processes) == replays(threads) and len(replays(threads)) >= 2  # made in workers, kept here
    pids = _worker_pids(released, "run")
    assert os.getpid() in pids and len(pids - {os.getpid()}) >= 1  # the process run's cases ran elsewhere


def test_a_call_holding_the_gil_is_killed_and_the_run_goes_on(tmp_path: Path, released: Path) -> None:
    """A catastrophic regular expression (minutes, GIL held): a thread run waits it out; a process run does not."""
    cases = [make_case(f"c{i}", op="gil_hog" if i == 1 else "ok") for i in range(4)]
    root = write_suite(tmp_path / "suite", cases, case_timeout_s=1, isolation="process")  # from oloproof.yaml
    t0 = time.monotonic()
    run = op.run(root, out=tmp_path / "run", progress=False)
    elapsed = time.monotonic() - t0
    assert elapsed < 30, elapsed  # 1 s timeout + 1 s grace + two interpreter start-ups; the regex takes minutes
    assert list(run.cases["status"]) == ["completed", "timeout", "completed", "completed"]
    assert run.cases.set_index("case_id").loc["c1", "error"] == ("timeout: exceeded case_timeout_s=1 (the worker "
                                                                "process was killed)")
    assert set(run.verdicts[run.verdicts["case_id"] == "c1"]["verdict"]) == {"missing"}
    assert run.cases.set_index("case_id").loc["c1", "duration_s"] >= 2.0  # killed 1 s past its 1 s, not 0 s
    [hog] = _worker_pids(released, "run", "c1")
    assert not running(hog)  # killed: not left running its regular expression for minutes


def test_a_hanging_replacement_constructor_is_killed_and_replaced(tmp_path: Path, released: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """After c1 raises, its worker builds a replacement that hangs: that worker goes, a fresh one carries on."""
    monkeypatch.setenv("RELSYS_INIT", "hang_after:1")  # in each process, every instance after the first hangs
    cases = [make_case("c0"), make_case("c1", op="raise"), make_case("c2"), make_case("c3")]
    root = write_suite(tmp_path / "suite", cases, case_timeout_s=1)
    t0 = time.monotonic()
    run = op.run(root, out=tmp_path / "run", progress=False, isolation="process")
    assert time.monotonic() - t0 < 30
    assert run.finished
    assert list(run.cases["status"]) == ["completed", "error", "completed", "completed"]


@pytest.mark.parametrize("init", ["hang_after:0", "gil_hog"])  # the worker gives up; the run's process kills it
def test_a_system_that_can_never_be_built_stops_the_run_in_bounded_time(tmp_path: Path, released: Path,
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        init: str) -> None:
    monkeypatch.setenv("RELSYS_INIT", init)
    root = write_suite(tmp_path / "suite", [make_case("c0")], case_timeout_s=0.5)
    t0 = time.monotonic()
    with pytest.raises(OloproofError, match=r"oloproof\.yaml: system: building the system took longer than "
                                            r"case_timeout_s=0\.5"):
        op.run(root, out=tmp_path / "run", progress=False, isolation="process")
    assert time.monotonic() - t0 < 40  # never the minute of the hang (a loaded CI host: start-ups of many seconds)
    assert not (tmp_path / "run").exists()  # stopped before the run directory was created
    [worker] = _worker_pids(released)
    assert not running(worker)  # ended with the run, not left building for minutes (or an hour)


def test_a_system_module_that_hangs_at_import_in_a_worker_stops_the_run(tmp_path: Path, released: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Importing the system's module is a call under case_timeout_s in a worker too: a module that blocks when
    imported (a lock, a network mount) stops the run in one line, in bounded time, instead of hanging it."""
    root = write_suite(tmp_path / "suite", [make_case("c0")], case_timeout_s=0.5)
    suite = op.load_suite(root, import_system_now=False)  # this process never imports it: only the worker does
    monkeypatch.setenv("RELSYS_IMPORT", "hang")  # a minute (until the release file)
    t0 = time.monotonic()
    with pytest.raises(OloproofError, match=r"oloproof\.yaml: system: building the system took longer than "
                                            r"case_timeout_s=0\.5"):
        op.run(suite, out=tmp_path / "run", progress=False, isolation="process")
    assert time.monotonic() - t0 < 40
    assert not (tmp_path / "run").exists()


def test_a_ctrl_c_while_the_first_worker_builds_the_system_ends_that_worker(tmp_path: Path, released: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C while the first worker built the system reached the run's process while it
    waited for that worker, and the worker was left building (a hung constructor: for good). A notebook's kernel
    lives on after a Ctrl-C: the worker stayed, holding whatever the system holds, until the kernel ended."""
    import _thread

    monkeypatch.setenv("RELSYS_INIT", "hang_after:0")  # the worker's constructor hangs (until the test ends)
    root = write_suite(tmp_path / "suite", [make_case("c0")], case_timeout_s=600)

    def ctrl_c_once_building() -> None:
        deadline = time.monotonic() + 60
        while not _worker_pids(released) and time.monotonic() < deadline:
            time.sleep(0.05)
        _thread.interrupt_main()

    # a test run started in the background of a shell inherits SIGINT ignored, and interrupt_main then does nothing
    # (the run waited for good): Python's own handler, as a terminal or a notebook kernel has it
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=ctrl_c_once_building, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            op.run(root, out=tmp_path / "run", progress=False, isolation="process")
    finally:
        signal.signal(signal.SIGINT, handler)
    [worker] = _worker_pids(released)
    assert gone_within(worker, 10)


def test_a_worker_never_outlives_a_run_killed_from_outside(tmp_path: Path, released: Path) -> None:
    """A run's process killed with SIGKILL (the OOM killer, a cancelled CI job) cannot stop its workers: each
    worker ends itself once its parent is gone, rather than running the system on with nobody recording."""
    root = write_suite(tmp_path / "suite", [make_case("c0", op="hang")], case_timeout_s=600)
    script = (f"import oloproof_nb as op; op.run({str(root)!r}, out={str(tmp_path / 'run')!r}, progress=False, "
              "isolation='process')")
    proc = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 60
    while not _worker_pids(released, "run"):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    [worker] = _worker_pids(released, "run")
    assert worker != proc.pid and running(worker)  # c0 hangs (an hour) in a worker process
    proc.kill()
    proc.wait(timeout=30)
    assert gone_within(worker, 10)


def test_workers_1_is_one_worker_process(tmp_path: Path, released: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """workers=1 runs the cases in one process, one at a time: a system that holds a port, a lock or a GPU is
    built once (and workers=2, at most twice)."""
    monkeypatch.setenv("RELSYS_SLEEP", "0.4")  # 3 s of cases: time enough for a second worker to start
    root = write_suite(tmp_path / "suite", [make_case(f"c{i}") for i in range(8)])
    run = op.run(root, out=tmp_path / "run", progress=False, isolation="process", workers=1)
    assert run.finished and len(_worker_pids(released)) == 1 and len(read_log(released)) == 1 + 8


def test_a_system_each_worker_builds_once_never_stops_the_run(tmp_path: Path, released: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Each process builds the system once; a second build raises. c1 raises, its worker's rebuild fails, a
    fresh worker builds it; c3 raises and that worker's rebuild fails in turn: one failed build, then a good one,
    every time. The fresh worker's good build ends its run of failures, so the run never stops."""
    monkeypatch.setenv("RELSYS_INIT", "raise_after:1")
    ops = ["ok", "raise", "ok", "raise", "ok"]
    root = write_suite(tmp_path / "suite", [make_case(f"c{i}", op=o) for i, o in enumerate(ops)])
    run = op.run(root, out=tmp_path / "run", progress=False, isolation="process")
    assert run.finished and list(run.cases["status"]) == ["completed", "error", "completed", "error", "completed"]
    builds = [event[2] for event in read_log(released) if event[0] == "init"]
    assert len(builds) == 5 and len({b.split("-")[0] for b in builds}) == 3  # 3 processes, 2 failed rebuilds


def test_a_system_no_fresh_worker_can_build_any_more_stops_the_run(tmp_path: Path, released: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The system built for c0; then its constructor starts failing (a licence server went away). The worker
    rebuilding it after c1 raised fails, a fresh worker fails too: the run stops after those 2 failed builds in a
    row, naming the last, rather than starting worker after worker forever."""
    broken = tmp_path / "licence-gone"
    monkeypatch.setenv("RELSYS_INIT", f"raise_if:{broken}")
    root = write_suite(tmp_path / "suite", [make_case("c0"), make_case("c1", op="raise"), make_case("c2")])
    done = threading.Event()
    # bounded if it retries forever: the constructor works again after 30 s, and the run then finishes
    threading.Thread(target=lambda: done.wait(30) or broken.unlink(missing_ok=True), daemon=True).start()

    def break_after_c0(finished: int, total: int) -> None:
        if finished == 1:
            broken.write_text("", encoding="utf-8")

    try:
        with pytest.raises(OloproofError) as stopped:
            op.run(root, out=tmp_path / "run", progress=break_after_c0, isolation="process")
    finally:
        done.set()
    assert str(stopped.value) == (f"{root / 'oloproof.yaml'}: system: a fresh worker process could not build the "
                                  "system 2 times in a row (last: building the system raised RuntimeError: the "
                                  "constructor failed: licence-gone)")
    assert finish_note(stopped.value) == stopped_run_note(tmp_path / "run")  # where the run stopped
    builds = [event[2] for event in read_log(released) if event[0] == "init"]
    assert len(builds) == 3 and len({b.split("-")[0] for b in builds}) == 2  # c0's worker twice, one fresh
    assert list(op.load_run(tmp_path / "run").cases["status"]) == ["completed", "error"]  # resumable


def test_a_system_edited_while_workers_start_stops_the_run(tmp_path: Path, released: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker started after the system's file was edited builds other code than the run records (its code
    fingerprint): the run stops, rather than judge some cases by the old code and some by the new."""
    monkeypatch.setenv("RELSYS_SLEEP", "0.5")  # 5 s of cases: the second worker is up long before they are done
    root = write_suite(tmp_path / "suite", [make_case(f"c{i}") for i in range(10)])

    def edit_the_system(finished: int, total: int) -> None:
        if finished == 0:  # the first worker is up; the second starts after this
            with (root / "relsys.py").open("a", encoding="utf-8") as fh:
                fh.write("\n# edited during the run\n")

    with pytest.raises(OloproofError, match=rf"^{root / 'oloproof.yaml'}: system: a worker process built a system "
                                            r"that has another code fingerprint than the run's \('[0-9a-f]{64}' vs "
                                            r"'[0-9a-f]{64}'\)"):
        op.run(root, out=tmp_path / "run", progress=edit_the_system, isolation="process", workers=2)


def test_a_worker_that_ends_itself_fails_only_its_case(tmp_path: Path, released: Path) -> None:
    cases = [make_case(f"c{i}", op="os_exit" if i == 1 else "ok") for i in range(3)]
    root = write_suite(tmp_path / "suite", cases)
    run = op.run(root, out=tmp_path / "run", progress=False, isolation="process")
    assert run.finished and list(run.cases["status"]) == ["completed", "error", "completed"]
    assert run.cases.set_index("case_id").loc["c1", "error"] == ("the worker process died while running the case "
                                                                "(exit code 0)")


def test_a_worker_that_dies_leaving_a_helper_process_fails_its_case_at_once(tmp_path: Path, released: Path) -> None:
    """A worker that forked a helper and then died was seen dead only at the end of its pipe,
    which the helper held open: the case was recorded ``timeout`` after case_timeout_s (300 s by default), not
    ``error`` with the worker's exit code. The worker's own exit is checked too now."""
    cases = [make_case(f"c{i}", op="fork_exit" if i == 1 else "ok") for i in range(3)]
    root = write_suite(tmp_path / "suite", cases, case_timeout_s=60)
    t0 = time.monotonic()
    run = op.run(root, out=tmp_path / "run", progress=False, isolation="process")
    assert time.monotonic() - t0 < 30  # interpreter start-ups; never the minute of the timeout
    assert list(run.cases["status"]) == ["completed", "error", "completed"]
    assert run.cases.set_index("case_id").loc["c1", "error"] == ("the worker process died while running the case "
                                                                "(exit code 7)")


def test_the_cli_with_process_isolation_exits_promptly_whatever_the_system_leaves(tmp_path: Path) -> None:
    cases = [make_case("c0", op="leak_thread"), make_case("c1", op="sleep_forever"), make_case("c2", op="keyboard"),
             make_case("c3")]
    root = write_suite(tmp_path / "suite", cases, case_timeout_s=0.5,
                       release={"criteria": {"answer_matches": 0.5}})
    t0 = time.monotonic()
    proc = run_cli("run", str(root), "--out", str(tmp_path / "run"), "--quiet", "--isolation", "process",
                   env=cli_env(), timeout=90)
    assert time.monotonic() - t0 < 60
    assert proc.returncode == 1 and "gate: BLOCK" in proc.stdout, proc.stderr  # 2 of 4 cannot clear 0.5
    run = op.load_run(tmp_path / "run")
    assert list(run.cases["status"]) == ["completed", "timeout", "error", "completed"]


def test_process_isolation_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "suite", [make_case("c0")])
    with pytest.raises(OloproofError, match="isolation='process' builds systems"):
        op.run(root, out=tmp_path / "a", progress=False, isolation="process", system=object())
    with pytest.raises(OloproofError, match="isolation="):
        op.run(root, out=tmp_path / "b", progress=False, isolation="fork")  # type: ignore[arg-type]
    bad = write_suite(tmp_path / "bad", [make_case("c0")], isolation="fibres")
    with pytest.raises(ConfigError, match=r"oloproof\.yaml: isolation"):
        op.load_suite(bad)


def test_why_it_exists_a_thread_timeout_cannot_stop_a_call_holding_the_gil() -> None:
    """The limitation process isolation removes: the waiting thread gets the GIL back only when the regex ends."""
    import re

    from oloproof_nb._run.timeouts import CaseTimeout, call_with_timeout

    t0 = time.perf_counter()
    finished = time.perf_counter
    ends: list[float] = []
    with pytest.raises(CaseTimeout):
        call_with_timeout(lambda: (re.match(r"(a+)+$", "a" * 22 + "b"), ends.append(finished())), 0.02)
    waited = time.perf_counter() - t0
    deadline = time.monotonic() + 30
    while not ends and time.monotonic() < deadline:  # the helper records the end right after the caller resumed
        time.sleep(0.01)
    assert ends and ends[0] - t0 > 0.1  # the expression ran five times the timeout and more…
    assert waited > 0.1 and waited >= 0.8 * (ends[0] - t0)  # …and the 0.02 s timeout fired only when it was done


def test_a_worker_refuses_check_code_edited_after_the_suite_loaded(make_suite, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker process imports the suite's checks again: edited since load_suite, it would judge by code the
    run's digests do not describe. It refuses, as it refuses a system whose code changed."""
    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}} for i in range(3)]
    root = make_suite(cases, evaluators=[{"type": "python", "check": "checks:done"}])
    (root / "checks.py").write_text("def done(case, initial_state, final_state, trajectory):\n    return False\n",
                                    encoding="utf-8")
    suite = op.load_suite(root)
    run = op.run(suite, out=tmp_path / "same", progress=False, isolation="process")
    assert list(run.verdicts["verdict"]) == ["fail"] * 3  # unedited: the worker judges by the loaded check
    (root / "checks.py").write_text("def done(case, initial_state, final_state, trajectory):\n    return True\n",
                                    encoding="utf-8")
    with pytest.raises(OloproofError, match=r"checks\.py changed since this suite was loaded"):
        op.run(suite, out=tmp_path / "early", progress=False, isolation="process")  # before it writes
    assert not (tmp_path / "early").exists()
    # an edit the run's own check does not see (made once it has passed it): the worker refuses it as before
    with monkeypatch.context() as patch, pytest.raises(OloproofError, match=rf"^{root}: the code of checks:done "
                                                                            r"changed since the suite was loaded; "
                                                                            r"load the suite again$"):
        patch.setattr(Suite, "_refuse_edited_code", lambda self: None)
        op.run(suite, out=tmp_path / "run", progress=False, isolation="process")


#: A system that does nothing asked, and at import makes every answer check agree (README, "What your system can
#: reach"): it patches oloproof_nb in the process that imports it, but for the one ``CHEAT_SPARE_PID`` names.
_PATCHING_SYSTEM = '''
import os

import oloproof_nb.evaluators.answer as answer

if str(os.getpid()) != os.environ.get("CHEAT_SPARE_PID"):
    answer.answers_equal = lambda expected, actual, normalize=True: True


class Cheat:
    version = "cheat-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        return {"steps": [], "answer": f"sorry {os.getpid()}", "status": "completed"}
'''


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_isolation_is_no_security_boundary_a_system_patching_its_checks_forges_them(
        make_suite, isolation: str, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """A limitation pinned, not a fix (README, "What your system can reach"): every answer is wrong, yet each
    verdict is ``pass`` and the gate PASS, and the journal check agrees (the run wrote those verdicts itself).
    With ``isolation: process`` the system spares the harness's process and patches only its worker, which
    judges the cases it runs: the same forged verdicts."""
    import oloproof_nb.evaluators.answer as answer

    honest = answer.answers_equal
    if isolation == "process":
        monkeypatch.setenv("CHEAT_SPARE_PID", str(os.getpid()))
    cases = [{"id": f"c{i}", "input": {"n": i}, "initial_state": {}, "expected": {"answer": "done"}}
             for i in range(10)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="cheatmod:Cheat",
                      release={"criteria": {"answer_matches": 0.5}}, isolation=isolation)
    (root / "cheatmod.py").write_text(_PATCHING_SYSTEM, encoding="utf-8")
    try:
        run = op.run(root, progress=False)
        patched_here = answer.answers_equal is not honest
    finally:
        answer.answers_equal = honest  # a thread run patched this very process
    ran_here = {int(a.split()[1]) for a in run.cases["answer"]} == {os.getpid()}
    assert ran_here == patched_here == (isolation == "thread")
    assert list(run.verdicts["verdict"]) == ["pass"] * 10 and op.gate(run).verdict == "PASS"
    assert run.manifest.journal_changed is None


@pytest.mark.parametrize("spawned_before", [0, 1])
def test_a_worker_the_open_file_limit_refuses_stops_the_run_in_one_line_not_as_a_bug(
        tmp_path: Path, released: Path, monkeypatch: pytest.MonkeyPatch, spawned_before: int) -> None:
    """Under a low ``ulimit -n`` (16 here, 4 workers) starting a worker process failed with EMFILE: the
    first worker gave a bare ``oloproof: error: Too many open files``, a later one ``internal error: OSError … (a
    bug in oloproof_nb, not in your system)``. Either is one line naming the limit and what to do now (simulated:
    ``Popen`` refuses the first or the second worker), and the run started is kept for a resume."""
    from oloproof_nb._run import isolation

    real, calls = subprocess.Popen, []

    def popen(*args: object, **kwargs: object) -> object:
        calls.append(args)
        if len(calls) > spawned_before:
            raise OSError(24, "Too many open files")
        return real(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(isolation.subprocess, "Popen", popen)
    root = write_suite(tmp_path / "suite", [make_case("c0"), make_case("c1")])
    with pytest.raises(OloproofError) as stopped:
        op.run(root, out=tmp_path / "run", progress=False, isolation="process", workers=2)
    assert str(stopped.value) == ("cannot start a worker process for isolation: process (Too many open files); raise "
                                  "the limit on open files (ulimit -n) or run fewer workers")
    assert (tmp_path / "run" / "manifest.json").is_file() == bool(spawned_before)
    # a run folder made is named with the way to finish it; none is named before one exists
    assert finish_note(stopped.value) == (stopped_run_note(tmp_path / "run") if spawned_before else [])


@pytest.mark.parametrize(("where", "code", "why", "limit"), [
    ("Popen", 23, "Too many open files in system", "raise the limit on open files (ulimit -n) or run fewer workers"),
    ("Popen", 11, "Resource temporarily unavailable",
     "free memory or processes (ulimit -u, ulimit -v) or run fewer workers"),
    ("Popen", 12, "Cannot allocate memory", "free memory or processes (ulimit -u, ulimit -v) or run fewer workers"),
    ("Pipe", 24, "Too many open files", "raise the limit on open files (ulimit -n) or run fewer workers"),
])
def test_each_limit_that_refuses_a_worker_is_named_and_its_pipe_closed(
        tmp_path: Path, released: Path, monkeypatch: pytest.MonkeyPatch, where: str, code: int, why: str,
        limit: str) -> None:
    """The system's table of open files (ENFILE, 23) is an open-file limit like EMFILE; fork
    refused for processes (EAGAIN, 11) or memory (ENOMEM, 12) names those limits; the pipe to the worker failing
    to open is the same one line. Both ends of a pipe opened for a worker that could not start are closed (each
    an open file, under the very limit that refused it)."""
    import errno
    import multiprocessing

    from oloproof_nb._run import isolation

    assert (errno.ENFILE, errno.EAGAIN, errno.ENOMEM, errno.EMFILE) == (23, 11, 12, 24)  # Linux's numbers
    opened: list[Any] = []
    real_pipe = multiprocessing.Pipe

    def refuse(*args: object, **kwargs: object) -> object:
        raise OSError(code, why)

    def pipe(*args: Any, **kwargs: Any) -> Any:
        ends = real_pipe(*args, **kwargs)
        opened.extend(ends)
        return ends

    if where == "Popen":
        monkeypatch.setattr(isolation.subprocess, "Popen", refuse)
        monkeypatch.setattr(isolation.multiprocessing, "Pipe", pipe)
    else:
        monkeypatch.setattr(isolation.multiprocessing, "Pipe", refuse)
    root = write_suite(tmp_path / "suite", [make_case("c0")])
    with pytest.raises(OloproofError) as err:
        op.run(root, out=tmp_path / "run", progress=False, isolation="process", workers=1)
    assert str(err.value) == f"cannot start a worker process for isolation: process ({why}); {limit}"
    assert len(opened) == (2 if where == "Popen" else 0) and all(end.closed for end in opened)


def test_a_run_folder_refused_stops_the_worker_processes(tmp_path: Path, released: Path) -> None:
    """The workers start before the run folder is made: one refused (here, a folder that is not empty) stops them.
    The error is kept, as a notebook keeps the last traceback (``sys.last_traceback``), whose frames hold the pool:
    a run with no stop there would pass every other test, as the pool, let go, closed its pipes and the worker
    ended; held, the worker ran on with the system it built."""
    root = write_suite(tmp_path / "suite", [make_case("c0")], isolation="process")
    out = tmp_path / "taken"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(op.RunDirError, match="already exists and is not empty") as refused:
        op.run(root, out=out, progress=False)
    (pid,) = _worker_pids(released)
    assert not running(pid) and refused.tb is not None  # stopped while the traceback still holds the pool


def test_a_ctrl_c_right_after_the_run_folder_is_locked_stops_the_worker_processes(
        tmp_path: Path, released: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stretch between locking the run folder and the run's own ``try``, with worker processes: a
    Ctrl-C there releases the folder and stops the workers while the traceback still holds the pool (without
    that stop every other test passes; see the test above)."""
    from oloproof_nb._run import runner

    root = write_suite(tmp_path / "suite", [make_case("c0")], isolation="process")

    def interrupted(*args: object, **kwargs: object) -> object:
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(runner.RunSettings, "of", interrupted)  # the run's settings, built after the folder is locked
        with pytest.raises(KeyboardInterrupt) as stopped:
            op.run(root, out=tmp_path / "run", progress=False)
    (pid,) = _worker_pids(released)
    assert not running(pid) and stopped.tb is not None


def test_a_process_run_records_the_methods_given_the_epoch_and_the_settings_as_a_thread_run_does(
        tmp_path: Path) -> None:
    """The manifest's ``epoch_given`` tells a pool which runs' (case, epoch) are the same tries, and its
    ``settings_fingerprint`` what the system was built with (``careful``), which a resume and a pooled gate compare.
    In a process run the system is built in the workers, which report both with the version and fingerprint."""
    root = tmp_path / "suite"
    root.mkdir()
    (root / "seeded.py").write_text(SEEDED, encoding="utf-8")
    (root / "cases.jsonl").write_text(json.dumps({"id": "a", "input": {}, "initial_state": {},
                                                  "expected": {"answer": "ok"}}) + "\n", encoding="utf-8")
    (root / "oloproof.yaml").write_text("name: seeded\nsystem: seeded:Seeded\nevaluators:\n"
                                        "  - type: answer_matches\n", encoding="utf-8")
    threads = op.run(root, out=tmp_path / "threads", progress=False)
    processes = op.run(root, out=tmp_path / "processes", progress=False, isolation="process")
    manifests = [json.loads((run.directory / "manifest.json").read_text()) for run in (threads, processes)]
    assert [m["epoch_given"] for m in manifests] == [["run"], ["run"]]
    assert manifests[0]["settings_fingerprint"] == manifests[1]["settings_fingerprint"]
    assert len(manifests[0]["settings_fingerprint"]) == 64
    assert manifests[0]["settings_fingerprint"] != manifests[0]["code_fingerprint"]
