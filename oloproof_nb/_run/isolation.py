"""``isolation: process``: each worker is a process, killed and replaced when a call into the system overruns.

With threads (the default), a call that overruns ``case_timeout_s`` is
abandoned on its helper thread, and the run goes on; but a call that holds the
GIL (a pathological regular expression, a C extension) cannot be abandoned, and
a hung constructor or a leaked thread stays in the process. With process
isolation none of that can hang the run:

- each worker is a fresh interpreter (``python -c``, talking to this process
  over a pipe; your ``__main__`` is never imported again) that imports the
  suite's ``system``, builds one instance, and runs the cases it is sent (one
  at a time) with the same per-call timeout as a thread run;
- the worker tells this process when each call into the system starts and
  ends (the outermost: a timed call the user's code makes itself, ``op.observe_file`` in a check, is part of the
  call it is in; :func:`~.timeouts.set_call_watch`); a call still running ``case_timeout_s`` + 1 s after it
  started gets the worker killed (SIGKILL) and replaced, and its case recorded ``timeout`` (all
  its verdicts ``missing``);
- a worker that dies during a case (``os._exit``, a segfault) leaves that case
  ``error`` and is replaced; a worker whose call timed out in-process (its
  helper thread abandoned) is replaced after the case, so abandoned threads
  never pile up;
- a system that cannot be built twice in a row in a fresh worker stops the run
  (one line), rather than retrying forever.

It is no security boundary: a worker runs the checks of the cases it is sent and
sends back their verdicts, so a system that patches oloproof_nb in its worker
forges them as it could in a thread run.

Workers ignore SIGINT: the user's Ctrl-C reaches this process, which stops and
kills them. The frames of a process run equal a thread run's, except for a
case whose worker had to be killed (recorded as a whole ``timeout``, where a
thread run may keep the parts that finished).
"""

from __future__ import annotations

import errno
import multiprocessing.connection
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .._config.imports import CODE_KEY, import_system
from .._config.suite import Suite, changed_digests, load_user_code
from .._config.suite_config import SUITE_FILE, SuiteConfig
from .._core.canonical import utc_now
from .._core.case import Case
from .._core.records import CaseRecord, ReplayRecord
from ..errors import OloproofError, quote
from .case import died_reason, execute_case, failed_case
from .context import RunSettings, ShownArtifacts
from .disk import above_standard
from .in_flight import how_it_ended
from .observe import HeldBack, promised_artifacts, shared_files
from .replay_cache import REPLAY_CACHE_DIR, ReplayCache
from .sandbox import epoch_given
from .streams import shield_standard_streams
from .systems import (
    KnownCode,
    ReplayPrints,
    as_factory,
    build,
    build_checked,
    identity_of,
    other_identity,
    release,
    replay_fingerprint,
)
from .timeouts import set_call_watch, watched

__all__ = ["ProcessWorkers", "GRACE_S"]

#: Seconds past ``case_timeout_s`` before a worker whose call is still running is killed.
GRACE_S = 1.0
#: Failed starts in a row (a system that cannot be built in a fresh worker) before the run stops.
MAX_START_FAILURES = 2
_POLL_S = 0.05


#: Where a worker is: building its system (or rebuilding it after a case), waiting for a case, running one, or
#: killed (its process and pipe closed).
_State = Literal["starting", "idle", "busy", "gone"]


@dataclass
class _Worker:
    """One worker process as the run's process sees it: its process, the pipe to it, and the case it runs."""

    proc: subprocess.Popen[bytes]
    conn: multiprocessing.connection.Connection
    state: _State = "starting"
    #: ``(index, case)`` of the case sent to it and not yet recorded; None when it runs none.
    item: tuple[int, Case] | None = None
    #: When that case was sent (``utc_now()``) and ``time.perf_counter()`` then: a case the worker could not finish
    #: is recorded with them.
    started: Any = None
    t0: float = 0.0
    #: ``time.monotonic()`` (here) when the worker said a call into the system started; 0.0 when none runs.
    call_started: float = 0.0
    #: Its predecessors' failed starts in a row (:data:`MAX_START_FAILURES` of them stop the run).
    start_failures: int = 0
    #: Whether it has sent a message yet: its first says it starts importing the system (it has built nothing before).
    heard: bool = False


@dataclass
class _Spec:
    """What a worker needs to build systems and run cases (sent once, pickled)."""

    root: str
    config: SuiteConfig
    cache: bool
    #: The digests of the suite's checks and validators when it loaded (``code:`` keys of ``Suite.digests``).
    code: dict[str, str]


def _orphan_guard(parent_pid: int) -> None:  # pragma: no cover - runs in the worker process
    """End this worker when the run's process is gone (even killed): never outlive the run."""
    while os.getppid() == parent_pid:
        time.sleep(0.5)
    os._exit(1)


def _die_with_parent() -> None:  # pragma: no cover - runs in the worker process
    """On Linux, have the kernel kill this worker (SIGKILL) when the run's process ends: the orphan guard is a
    thread, which cannot run while the system holds the GIL (a worker killed from outside during a pathological
    regular expression ran on for as long as the expression did, minutes to years, with nobody recording).

    The kernel's "parent" is the thread that started the worker (``prctl(2)``, ``PR_SET_PDEATHSIG``): the thread
    that calls :meth:`ProcessWorkers.start` and runs the whole run, so it ends only after the workers are stopped."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # no prctl: the orphan guard alone


def _worker_entry(fd: int, parent_pid: int) -> None:  # pragma: no cover - runs in the worker process
    """``python -c`` entry of a worker: the pipe to the run's process (``parent_pid``) is file descriptor ``fd``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the user's Ctrl-C is for the run's process
    _die_with_parent()
    # parent_pid from the run's process, not os.getppid() here: one killed while this interpreter started is seen
    threading.Thread(target=_orphan_guard, args=(parent_pid,), daemon=True, name="oloproof-orphan").start()
    shield_standard_streams()  # a reader of the stderr it inherits that left fails no print of the system
    conn = multiprocessing.connection.Connection(fd)
    try:
        _worker_main(conn, conn.recv())
    except (EOFError, OSError):
        pass
    finally:
        try:
            conn.close()
        finally:
            os._exit(0)  # threads the system left behind never keep a worker alive


def _worker_main(conn: multiprocessing.connection.Connection, spec: _Spec) -> None:  # pragma: no cover
    """A worker process: build the system, then run the cases it is sent until told to stop."""

    def watch(on: bool) -> None:
        conn.send(("call", on))

    set_call_watch(watch)
    root = Path(spec.root)
    config = spec.config
    timeout_s = config.case_timeout_s
    try:
        with watched():  # importing the system's module counts as a call: it may hang too
            target = import_system(root, config.system, root / SUITE_FILE)
            code = load_user_code(root, config, root / SUITE_FILE)
        changed = changed_digests(spec.code, code.digests)
        if changed:  # not the system's fault: the run's process says so without blaming the system
            conn.send(("refused", f"{', '.join(changed)} changed since the suite was loaded; load the suite again"))
            return
        factory = as_factory(target)[0]
        system = build(factory, timeout_s)
        known: KnownCode = {}  # a replacement of the first one's classes runs its code: a file saved since is not it
        version, fingerprint = identity_of(system, target, root=root, spec=config.system, timeout_s=timeout_s,
                                           known=known)
        replay_print = replay_fingerprint(system, target, fingerprint)  # how it was set up keys the cache too
        prints = ReplayPrints(target, fingerprint)  # and each instance built later is keyed by its own
        prints.note(system)
    except OloproofError as exc:
        conn.send(("failed", str(exc)))
        return
    except BaseException:  # noqa: BLE001 - oloproof's own error: reported to the run's process
        conn.send(("internal", traceback.format_exc()))
        return
    conn.send(("ready", version, fingerprint, epoch_given(system), replay_print))
    cache = ReplayCache(root / REPLAY_CACHE_DIR) if spec.cache else None
    shown = ShownArtifacts()  # every case this worker runs: an earlier case's artifact is stale in the next
    replaced: list[Any] = []  # those a replay of a case raised on, replaced during it (released after the case)

    def renew() -> Any:  # a replay raised on system: the case's later replays run on a fresh instance, checked
        nonlocal system
        fresh = prints.note(build_checked(factory, target, (version, fingerprint), root=root, spec=config.system,
                                          timeout_s=timeout_s, known=known))
        replaced.append(system)
        system = fresh
        return fresh

    while True:
        message = conn.recv()
        if message is None:  # the run is over: drop the system here, so its finaliser (a connection, a copy) runs
            old, system = [system], None
            try:
                release(old, timeout_s)
            except OloproofError:
                pass  # a finaliser that overran: the run's process kills this worker (finish)
            return
        index, case, run_id, seen = message
        shown.seed(seen)  # what other workers' cases of this artifact were shown
        replays: list[ReplayRecord] = []
        settings = RunSettings.of(config, run_id=run_id, system_version=version, suite_root=root,
                                  validators=code.validators, checks=code.checks, append_replay=replays.append,
                                  cache=cache, code_fingerprint=replay_print, replay_prints=prints, shown=shown)
        try:
            outcome = execute_case(case, index, system, settings, renew=renew)
        except BaseException:  # noqa: BLE001 - oloproof's own error: reported to the run's process
            conn.send(("internal", traceback.format_exc()))
            return
        # the run's process waits for "ready" after a case that replaced its instance, as after one that left it stale
        renewed = bool(replaced)
        conn.send(("done", outcome.record, replays, outcome.abandoned_call, outcome.needs_fresh_system or renewed))
        if outcome.abandoned_call:
            return  # a helper thread still runs the timed-out call: the run's process replaces this one
        if outcome.needs_fresh_system or renewed:
            try:
                release(replaced, timeout_s)
                if outcome.needs_fresh_system:
                    old, system = [system], None
                    release(old, timeout_s)  # a __del__ that blocks is a call that overran: this worker is replaced
                    system = build(factory, timeout_s)
                # checked by the run's process as the first was: its fingerprint() too, not the first one's again
                identity = identity_of(system, target, root=root, spec=config.system, timeout_s=timeout_s,
                                       known=known)
                prints.note(system)
            except OloproofError as exc:
                conn.send(("failed", str(exc)))
                return
            conn.send(("ready", *identity, epoch_given(system), replay_print))


def _pipe() -> tuple[multiprocessing.connection.Connection, multiprocessing.connection.Connection]:
    """A pipe to a worker, both ends on descriptors above 2.

    A process whose descriptors 0–2 are closed (started with ``>&- 2>&-``, a daemon, a system run on threads
    that closed them) gave those numbers to the pipe: the worker's end became its standard error (or output), so
    whatever the system printed there was read as a message, and the run waited for good on a message that never
    ended; the run's end took what its own ``print`` writes. Raises :class:`OSError` (no descriptor left)."""
    ends = list(multiprocessing.Pipe())
    try:
        for i, end in enumerate(ends):
            if end.fileno() <= 2:
                moved = multiprocessing.connection.Connection(above_standard(os.dup(end.fileno())))
                end.close()
                ends[i] = moved
    except OSError:
        for end in ends:
            if not end.closed:
                end.close()
        raise
    return ends[0], ends[1]


def _worker_failed(text: str, case: Case | None) -> RuntimeError:
    """oloproof's own error in a worker (``text``: its traceback there), to stop the run with: its first line names
    the case the worker ran (or the system's build) and what was raised, as a thread run's error says it (it said
    ``a worker process failed:`` and nothing more, all of it in the traceback below)."""
    lines = text.strip().splitlines()
    where = "building the system" if case is None else f"running case {quote(case.id)} (epoch {case.epoch})"
    return RuntimeError(f"a worker process failed {where}: {lines[-1] if lines else 'no traceback'}\n{text}")


class ProcessWorkers:
    """A pool of worker processes for one run (see the module docstring)."""

    def __init__(self, suite: Suite, workers: int, *, cache: bool) -> None:
        self._spec = _Spec(root=str(suite.root), config=suite.config, cache=cache,
                           code={k: v for k, v in suite.digests.items() if k.startswith(CODE_KEY)})
        self._suite_file = suite.root / SUITE_FILE
        self._n = workers
        self._timeout_s = suite.config.case_timeout_s
        self._evaluators = list(suite.config.evaluators)
        self._root = suite.root
        #: The artifact versions the workers' cases were shown (from their receipts), handed to the worker that
        #: runs the next case of the artifact: an epoch that wrote nothing on another worker is stale too.
        self.shown = ShownArtifacts()
        self._workers: list[_Worker] = []
        self._identity: tuple[str | None, str | None] | None = None
        #: The methods of the workers' system given the case's epoch (:func:`~.sandbox.epoch_given`), and what
        #: keys its replays (:func:`~.systems.replay_fingerprint`: its code and the settings it was built with).
        self.epoch_given: list[str] | None = None
        self.replay_fingerprint: str | None = None
        self._run_id = ""
        self._append_replay: Callable[[ReplayRecord], None] = lambda record: None
        self._note_case: Callable[[str, int, bool], None] = lambda case_id, epoch, finished: None

    # -- lifecycle ---------------------------------------------------------------------------------------
    def _spawn(self, failures: int = 0) -> _Worker:
        """Start a worker process. The machine's limits (open files, processes, memory) refusing one are no bug
        of oloproof_nb and no failure of the system: :class:`OloproofError`, one line saying which limit."""
        try:
            parent, child = _pipe()
        except OSError as exc:
            raise self._cannot_start(exc) from None
        package_dir = str(Path(__file__).resolve().parents[2])  # the folder holding oloproof_nb/
        code = (f"import sys; sys.path.insert(0, {package_dir!r}); from oloproof_nb._run.isolation import "
                f"_worker_entry; _worker_entry({child.fileno()}, {os.getpid()})")
        try:
            proc = subprocess.Popen([sys.executable, "-c", code], pass_fds=(child.fileno(),),
                                    stdin=subprocess.DEVNULL)
        except OSError as exc:
            parent.close()
            child.close()
            raise self._cannot_start(exc) from None
        child.close()
        parent.send(self._spec)
        return _Worker(proc=proc, conn=parent, start_failures=failures)

    def _named(self, problem: str) -> str:
        """Why the system could not start, naming the suite file once: a worker's import of the system or of the
        suite's checks says ``oloproof.yaml: system: importing …`` itself (it was named twice)."""
        return problem if problem.startswith(f"{self._suite_file}: ") else f"{self._suite_file}: system: {problem}"

    def _unnamed(self, problem: str) -> str:
        """``problem`` without the suite file's ``system:`` prefix (in a line that names them already)."""
        prefix = f"{self._suite_file}: system: "
        return problem[len(prefix):] if problem.startswith(prefix) else problem

    def _cannot_start(self, exc: OSError) -> OloproofError:
        limit = ("raise the limit on open files (ulimit -n) or run fewer workers"
                 if exc.errno in (errno.EMFILE, errno.ENFILE) else
                 "free memory or processes (ulimit -u, ulimit -v) or run fewer workers")
        return OloproofError(f"cannot start a worker process for isolation: process "
                             f"({exc.strerror or type(exc).__name__}); {limit}")

    def start(self) -> tuple[str | None, str | None]:
        """Start the first worker and return the system's ``(version, code fingerprint)`` it reports."""
        worker = self._spawn()
        self._workers.append(worker)
        while worker.state == "starting":
            try:  # a Ctrl-C while the worker builds the system (it is most likely waiting) ends the worker too
                self._wait([worker])
                problem = self._poll_start(worker)
            except BaseException:
                self.stop()
                raise
            if problem is not None:
                self.stop()
                raise OloproofError(self._named(problem))
        assert self._identity is not None
        return self._identity

    def bind(self, run_id: str, append_replay: Callable[[ReplayRecord], None],
             note_case: Callable[[str, int, bool], None] | None = None) -> None:
        """The run's id (stored in every state record), where replay records go, and what notes a case run sent to
        a worker as in flight (:meth:`~.store.RunStore.note_case`: a kill of the run's process from outside runs it
        again on resume, and the manifest's ``abrupt_ends`` says so, as on threads)."""
        self._run_id, self._append_replay = run_id, append_replay
        if note_case is not None:
            self._note_case = note_case

    def finish(self, stopped: bool = False) -> None:
        """End a run that went through, or one an error stopped (``stopped``): each idle worker drops its system
        and exits, then :meth:`stop` (which kills a busy worker: its case run is cut short).

        A worker told to stop releases its instance under ``case_timeout_s`` (as a thread run does at its
        end), so a ``weakref.finalize`` or ``__del__`` of the system runs: before, every worker was killed at
        once, and a desk's working copy of its database (``work.db`` and its ``-wal``, in a temporary folder its
        finaliser removes) stayed behind after each process-isolated run. A worker still building
        its system (the second of two that the first outran, one rebuilding after a failed case) is told too: it
        reads the message once built, and was killed with its copy left; one that has said nothing
        yet (Python still starting: none of the system's code has run in it) is killed at once, as waiting for it
        to start would slow every short run. A worker still there ``case_timeout_s`` + 1 s later is killed.

        A run an error stopped (``stopped``) kills a worker still building its system at once, as a busy one: the
        system's own code runs in it, and the stop waited for it up to ``case_timeout_s`` (its copy stays, as a
        busy worker's does). Its idle workers still drop their systems.
        """
        deadline = time.monotonic() + self._timeout_s + GRACE_S
        try:
            asked = []
            for worker in self._workers:
                if worker.state == "starting" and (stopped or not self._heard(worker)):
                    self._retire(worker)
                    continue
                if worker.state not in ("idle", "starting"):
                    continue
                try:
                    worker.conn.send(None)
                except OSError:
                    continue
                asked.append(worker)
            for worker in asked:
                try:
                    worker.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass
        finally:  # a Ctrl-C while a finaliser runs: no worker outlives the run
            self.stop()

    @staticmethod
    def _heard(worker: _Worker) -> bool:
        """Whether ``worker`` has said anything (read or waiting in the pipe): the first thing it says is that it
        starts importing the system."""
        try:
            return worker.heard or worker.conn.poll()
        except OSError:
            return True  # its end is closed: asking it fails at once

    def stop(self) -> None:
        """Kill every worker (a worker never holds anything the run needs once its case is recorded)."""
        for worker in self._workers:
            self._retire(worker)
        self._workers.clear()

    def _retire(self, worker: _Worker) -> None:
        if worker.state == "gone":
            return
        worker.state = "gone"
        try:
            worker.conn.close()
        except OSError:
            pass
        if worker.proc.poll() is None:
            worker.proc.kill()
        try:
            worker.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def _replace(self, worker: _Worker, failed_start: str | None = None) -> None:
        """Kill ``worker`` and start another in its place; too many failed starts in a row stop the run."""
        failures = worker.start_failures + 1 if failed_start is not None else 0
        self._retire(worker)
        self._workers.remove(worker)
        if failures >= MAX_START_FAILURES:
            raise OloproofError(f"{self._suite_file}: system: a fresh worker process could not build the system "
                                f"{failures} times in a row (last: {self._unnamed(str(failed_start))})")
        self._workers.append(self._spawn(failures))

    # -- the loop -----------------------------------------------------------------------------------------
    def _wait(self, workers: list[_Worker]) -> None:
        handles = [w.conn for w in workers if w.state != "gone"]
        if handles:
            multiprocessing.connection.wait(handles, timeout=_POLL_S)

    def _overran(self, worker: _Worker) -> bool:
        limit = self._timeout_s
        return (worker.call_started > 0.0 and limit < float("inf")
                and time.monotonic() - worker.call_started > limit + GRACE_S)

    @staticmethod
    def _how(proc: subprocess.Popen[bytes]) -> str:
        try:
            return how_it_ended(proc.wait(timeout=5))
        except subprocess.TimeoutExpired:
            return "it stopped answering"

    def _recv(self, worker: _Worker) -> Any:
        """The worker's next message other than a call notice; None when there is none yet, ``("dead",)`` at EOF."""
        while True:
            try:
                if not worker.conn.poll():
                    if worker.proc.poll() is None:
                        return None
                    if not worker.conn.poll():  # it ended and said nothing more: dead, even while a process it
                        return ("dead",)        # started holds its end of the pipe open (no end of file comes)
                message = worker.conn.recv()
            except (EOFError, OSError):
                return ("dead",)
            worker.heard = True
            if message[0] != "call":
                return message
            worker.call_started = time.monotonic() if message[1] else 0.0

    def _poll_start(self, worker: _Worker) -> str | None:
        """Advance a starting worker; a problem (why it could not start) or None."""
        message = self._recv(worker)
        if message is None:
            if self._overran(worker):
                return f"building the system took longer than case_timeout_s={self._timeout_s:g}"
            return None
        kind = message[0]
        if kind == "ready":
            identity = (message[1], message[2])
            if self._identity is None:
                self._identity, self.epoch_given, self.replay_fingerprint = identity, message[3], message[4]
            elif identity != self._identity:
                raise OloproofError(f"{self._suite_file}: system: a worker process built a system that "
                                    f"{other_identity(identity, self._identity)}: every instance must give the run's "
                                    "(one whose version or fingerprint() differs per instance is refused too); do not "
                                    "edit the system's code during a run")
            worker.state, worker.start_failures = "idle", 0
            return None
        if kind == "failed":
            return str(message[1])
        if kind == "refused":  # the suite's files changed since it was loaded: no system to blame, no retry
            raise OloproofError(f"{self._suite_file.parent}: {message[1]}")
        if kind == "internal":
            raise _worker_failed(str(message[1]), None)
        return f"the worker process ended while it was starting ({self._how(worker.proc)})"

    def run(self, pending: Iterable[tuple[int, Case]], workers: int | None = None) -> Iterator[CaseRecord]:
        """Run ``pending`` cases on the workers; yield each case's record (its replays already appended).

        ``workers`` caps the pool's size for this run (a resume with fewer case runs left than workers: no more
        processes are started than cases can use); the first worker, started already, is kept.
        """
        if workers is not None:
            self._n = max(1, min(self._n, workers))
        while len(self._workers) < self._n:
            self._workers.append(self._spawn())
        held: tuple[int, Case] | None = None  # a case whose worker was gone before it could be sent
        # cases that observe a file a running case observes too (shared_files) wait for it, in order
        waiting = HeldBack(pending, lambda item: self._keys(item[1]))
        while True:
            for worker in list(self._workers):
                if worker.state != "idle":
                    continue
                item: tuple[int, Case] | None
                if held is not None:
                    item, held = held, None
                else:
                    free = waiting.next_free(self._running_keys().__contains__)
                    item = None if free is None else free[0]
                if item is None:  # none can start now
                    break
                # in flight from here: a kill of this process from outside ran it again with no note;
                # noted before it is sent, as a thread run notes a case before its system runs it (noted after, a
                # Ctrl-C or a kill just after the send left a case run its worker had begun unnoted)
                self._note_case(item[1].id, item[1].epoch, False)
                try:
                    worker.conn.send((item[0], item[1], self._run_id, self._shown_for(item[1])))
                except OSError:  # the idle worker died (killed from outside): the case goes to its replacement
                    held = item
                    self._replace(worker)
                    continue
                worker.item, worker.started, worker.t0 = item, utc_now(), time.perf_counter()
                worker.state = "busy"
            if waiting.done and held is None and not any(w.state == "busy" for w in self._workers):
                return
            self._wait(self._workers)
            for worker in list(self._workers):
                if worker.state == "starting":
                    problem = self._poll_start(worker)
                    if problem is not None:
                        self._replace(worker, failed_start=problem)
                elif worker.state == "busy":
                    yield from self._poll_busy(worker)

    def _shown_for(self, case: Case) -> list[Any]:
        return self.shown.entries(promised_artifacts([case]))

    def _keys(self, case: Case) -> frozenset[str]:
        return shared_files(case, self._evaluators, self._root)

    def _running_keys(self) -> set[str]:
        """The keys (:func:`shared_files`) of the cases the workers are running."""
        return {k for w in self._workers if w.state == "busy" and w.item is not None for k in self._keys(w.item[1])}

    def _poll_busy(self, worker: _Worker) -> Iterator[CaseRecord]:
        assert worker.item is not None
        index, case = worker.item
        message = self._recv(worker)
        if message is None:
            if not self._overran(worker):
                return
            self._retire(worker)
            reason = f"timeout: exceeded case_timeout_s={self._timeout_s:g} (the worker process was killed)"
            yield self._failed(worker, "timeout", reason)
            self._replace(worker)
            return
        kind = message[0]
        if kind == "done":
            _, record, replays, retire, rebuild = message
            self.shown.note_receipts(record.get("receipts") or [])
            for replay in replays:
                self._append_replay(replay)
            worker.item = None
            worker.state = "starting" if rebuild else "idle"  # a rebuilt system reports "ready" again
            yield record
            if retire:
                self._replace(worker)
            return
        if kind == "internal":
            raise _worker_failed(str(message[1]), case)
        # the worker died during the case (os._exit, a segfault, killed from outside)
        self._retire(worker)
        yield self._failed(worker, "error", died_reason("worker process", self._how(worker.proc)))
        self._replace(worker)

    def _failed(self, worker: _Worker, status: str, reason: str) -> CaseRecord:
        assert worker.item is not None
        index, case = worker.item
        settings = RunSettings(run_id=self._run_id, system_version=None, timeout_s=self._timeout_s,
                               suite_root=None, evaluators=self._evaluators)
        record = failed_case(case, index, status, reason, settings, worker.started, time.perf_counter() - worker.t0)
        worker.item = None
        return record
