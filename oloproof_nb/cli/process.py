"""The run in a child process (``oloproof run``), and SIGTERM and SIGHUP stopping this one as a Ctrl-C does.

``oloproof run`` never imports the system: a child process loads the suite and runs it into the run directory,
and this process (which decides the exit code) loads the finished run from disk."""

from __future__ import annotations

import argparse
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._run.locate import shell_word
from .._run.streams import shield_standard_streams
from ..errors import InternalError, OloproofError, RunDirError, StoreWriteError, describe_exception
from .output import WARNING_KINDS, os_error_line

# -- oloproof run: the suite runs in a child process; this one decides the exit code ------------------------

#: Seconds the child gets to stop cleanly after a Ctrl-C before it is killed.
_STOP_GRACE_S = 5.0

#: Seconds after a stop this process got before it passes the stop on to the child (a Ctrl-C at the terminal
#: reached the child too: the whole process group gets it).
_PASS_ON_S = 1.0

#: The signals that stop a run: held back (blocked, not ignored) while the run's process is started, until each
#: process has its handlers (:func:`_hold_stops`).
_STOPS = frozenset(sig for sig in (getattr(signal, name, None) for name in ("SIGINT", "SIGTERM", "SIGHUP"))
                   if sig is not None)


def _hold_stops() -> frozenset[int]:
    """Block :data:`_STOPS` in this thread; returns those it blocked (not blocked before), for
    :func:`_release_stops`. A stop that comes while they are held waits, and is handled when they are released,
    in the run's process (a fork has this thread alone; a spawn's threads start held). In this process a stop waits
    only when no other thread takes it: one that does not block it (a Python thread of the caller's, which makes
    the run's process a spawn; OpenBLAS's pool until the fork's own handlers stop it) has the handler run here at
    once, and the command stops before its run (exit 2, ``oloproof: interrupted by SIGTERM``, no run folder).

    The run's process starts with them held (a fork, and the exec of a spawn, keep the mask): a stop that reached
    it in its first moments, before ``_child_run`` was ready for it (a Ctrl-C or a SIGTERM to the process group as
    the run started), was a Python traceback on stderr (``Process oloproof-run: … Stopped: SIGTERM``), or was lost
    in the fork's own hooks (``Exception ignored in: … Random.seed``) and the run went on to its gate."""
    if not hasattr(signal, "pthread_sigmask"):
        return frozenset()
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    return frozenset(int(sig) for sig in _STOPS - set(before))


def _release_stops(held: frozenset[int]) -> None:
    """Unblock the signals :func:`_hold_stops` blocked: one that came meanwhile is handled now."""
    if held:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)


def _child_run(conn: Any, params: dict[str, Any], held: frozenset[int] = frozenset(),
               ) -> None:  # pragma: no cover - runs in the child process
    """The child: load the suite, run it into the run directory, report through ``conn``, exit at once.

    Messages: ``("directory", path)``, ``("progress", done, total)``, ``("warning", category name, text)`` (a
    warning is printed by the parent, which prints each line once: ``load_suite``'s vacuous-check warning and
    the gate's finding of the same check are one line), then one of
    ``("done", path, baseline path or None)``, ``("error", message, resumable)``,
    ``("internal", message, resumable)``, ``("interrupted",)``.
    The child ends with ``os._exit`` so threads the system left behind cannot keep it alive. It starts with the
    signals ``held`` blocked (:func:`_hold_stops`), and releases them once a stop is handled as one.
    """
    started = False
    sending = threading.Lock()  # warnings come from any thread (workers, the system's own): one message at a time

    def send(*message: Any) -> None:
        with sending:
            try:
                conn.send(message)
            except (OSError, ValueError):
                pass

    def progress(done: int, total: int) -> None:
        nonlocal started
        started = True  # the run directory is open: an error from now on leaves a resumable run
        if params["progress"]:
            send("progress", done, total)

    def forward(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
        send("warning", category.__name__, str(message))

    warnings.showwarning = forward
    try:  # what the system prints goes to stderr: the command's stdout is the gate's table and its last line
        sys.stdout.flush()
        os.dup2(2, 1)  # the descriptor too: worker processes inherit it, and a closed stdout (| head) breaks none
    except (OSError, ValueError, AttributeError):
        pass
    shield_standard_streams()  # a reader of stderr that left (`2>&1 | head`) fails no print of the system
    parent = multiprocessing.parent_process()
    if parent is not None:  # the run dies with the process that decides the exit code (it was killed)
        threading.Thread(target=_die_with, args=(parent, signal.SIGKILL), daemon=True, name="oloproof-orphan").start()
    # a SIGTERM or SIGHUP stops the run as a Ctrl-C does, in a spawned process as in a forked one (which has the
    # command's handlers): the command passes its own stop on as it came; the process ends with os._exit below
    StopOnSignals().__enter__()
    try:
        _release_stops(held)  # a stop that came since the start is handled here, as the run's stop
        from .._analysis.live_copy import LiveCopy
        from .._config.suite import load_suite
        from .._run.runner import run_suite
        from .._run.store import new_run_id

        suite = load_suite(params["suite"])
        run_id = None if params["out"] is not None else new_run_id()
        out = Path(params["out"]) if params["out"] is not None else suite.root / "runs" / str(run_id)
        send("directory", str(out))
        copy = None if params["resume"] else LiveCopy()  # the columnar copy, built as the records are appended
        try:
            # --out as given: run_suite refuses a first part "~" as Python's out= would, and a Path drops the "./" of
            # "./~/r1" (a folder named '~', which the command line's parser let through on purpose)
            given = params["out"] if params["out"] is not None else out
            directory = run_suite(suite, workers=params["workers"], out=given, resume=params["resume"],
                                  progress=progress, cache=params["cache"], isolation=params["isolation"],
                                  fsync=params["fsync"], run_id=run_id, epochs=params["epochs"], sink=copy)
        except BaseException:
            if copy is not None:
                copy.abort()
            raise
        if copy is not None:
            copy.commit()
        idle = None
        if params.get("baseline"):
            from .._run.baseline import run_baseline

            try:
                idle = str(run_baseline(suite, workers=params["workers"], epochs=params["epochs"], finish=_anew))
            except (OloproofError, InternalError) as exc:  # the run finished: its baseline is run anew (resume_hint)
                send("internal" if isinstance(exc, InternalError) else "error",
                     f"the do-nothing baseline stopped: {exc}", True)
                return
        send("done", str(directory), idle)
    except KeyboardInterrupt as exc:
        from .._run.timeouts import system_traceback

        if system_traceback(exc) is None:  # the user's Ctrl-C (the system's own is marked as the system's)
            send("interrupted")
        else:
            send("error", f"the system raised {describe_exception(exc)} outside a case", started)
    except InternalError as exc:
        send("internal", str(exc), True)
    except StoreWriteError as exc:
        send("error", str(exc), True)
    except RunDirError as exc:
        send("error", str(exc), False)
    except OloproofError as exc:
        send("error", str(exc), started)
    except OSError as exc:
        send("error", os_error_line(exc), started)
    except BaseException as exc:  # noqa: BLE001 - SystemExit or any other exception escaping: never a PASS
        send("error", f"the run stopped: {describe_exception(exc)}", started)
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            conn.close()
        finally:
            os._exit(0)


def _die_with(parent: Any, how: int) -> None:  # pragma: no cover - runs in the child process
    """Wait for ``parent`` to end, then end this process with signal ``how`` (as if killed with it)."""
    parent.join()
    os.kill(os.getpid(), how)


def _start_method() -> str:
    """``fork`` on Linux when this process runs one Python thread (the child starts at once, with what is loaded
    here); ``spawn`` otherwise. A fork copies only the thread that calls it, so a lock another Python thread held
    (a logging handler's, an import's, a queue's) stays held in the child forever: ``main`` called in a process
    with threads of its own (a notebook, a test run, a service) spawns. Native thread pools, such as the one
    OpenBLAS starts when numpy is imported, are not counted: they register their own fork handlers."""
    return "fork" if sys.platform.startswith("linux") and threading.active_count() == 1 else "spawn"


def _anew(directory: Path, fingerprint: str | None) -> str:
    """What the messages of a do-nothing baseline that ``oloproof run --baseline`` stopped say of finishing it
    (:func:`resume_hint` gives the command)."""
    return "a baseline is run anew, never resumed"


def resume_hint(args: argparse.Namespace, directory: Path | None) -> str:
    """How to finish the run in ``directory`` (empty when none was started): ``--resume``, and with ``--baseline``
    that too, as a resume without it makes none; a run that finished (its do-nothing baseline stopped) is left as it
    is and a new baseline made."""
    if directory is None or not (directory / "manifest.json").is_file():
        return ""
    baseline = bool(getattr(args, "baseline", False))
    command = (f"oloproof run {shell_word(args.suite)} --out {shell_word(directory)} --resume"
               + (" --baseline" if baseline else ""))
    if baseline and run_finished(directory):
        return f"; the run finished in {directory} — run its do-nothing baseline anew with: {command}"
    return f"; the run is in {directory} — finish it with: {command}"


def run_finished(directory: Path | None) -> bool:
    """Whether the manifest of the run in ``directory`` says it finished (False when it cannot be read)."""
    from .._run.store import read_manifest

    if directory is None:
        return False
    try:
        return read_manifest(directory).finished_at is not None
    except (OloproofError, OSError, ValueError):
        return False


def ended_how(exitcode: int | None) -> str:
    """``exited with code 3``, ``was killed by signal SIGSEGV`` (:func:`~oloproof_nb._run.in_flight.how_it_ended`)."""
    from .._run.in_flight import how_it_ended

    if exitcode is None:
        return "did not stop"
    return f"exited with code {exitcode}" if exitcode >= 0 else f"was {how_it_ended(exitcode)}"


def in_flight(directory: Path | None, exitcode: int, how: str | None = None, pid: int | None = None) -> str:
    """Note in the run folder how its process ended (``started.jsonl``: the child is dead, its lock released), and
    say what a resume does with the case runs that were in flight: ``error`` when the system ended the process
    (an exit, a fatal signal), run again otherwise (a kill from outside; ``how``: an end the exit code does not
    tell, :func:`~oloproof_nb._run.in_flight.note_end`; ``pid``: the process that ended); nothing when none was."""
    from .._analysis.gate_reasons import case_runs
    from .._run.in_flight import note_end

    ended = None if directory is None else note_end(directory, exitcode, how, pid)
    if ended is None or not ended.started:
        return ""
    keys = list(ended.started)
    runs = case_runs(keys)
    if ended.by_system:
        return (f" while running {runs}, which --resume records as error (all verdicts missing), as isolation: "
                "process records a case whose process died")
    return (f" while running {runs}, which --resume runs again: an end by this signal may come from outside, so "
            "it is not blamed on the system (the gate notes it)")


#: How the run's process ended when it stopped as on a Ctrl-C that this command neither got nor sent: a SIGINT,
#: SIGTERM or SIGHUP (each stops it: :class:`StopOnSignals`) sent to that process alone (by the system: a shell
#: tool's ``kill $PPID``; or from outside).
_STOPPED_ALONE = "stopped by a SIGINT, SIGTERM or SIGHUP sent to it alone"


def run_in_child(args: argparse.Namespace, params: dict[str, Any],
                  on_progress: Callable[[int, int], None] | None,
                  ) -> tuple[tuple[Any, ...] | None, Path | None, int, int | None]:
    """Run the suite in a child process; ``(final message or None, run directory, child's exit code, its pid)``.

    The final message is the child's, but for a stop: ``("interrupted",)`` after the user's Ctrl-C,
    ``("stopped", "SIGTERM")`` after a SIGTERM or SIGHUP this process got (:class:`Stopped`: it stops the run as a
    Ctrl-C does, and the command names the signal), ``("interrupted", how)`` after a stop this process never got.
    """
    ctx: Any = multiprocessing.get_context(_start_method())
    receive, send = ctx.Pipe(duplex=False)
    held = _hold_stops()  # until each process handles a stop as one: here, in the loop below
    proc = ctx.Process(target=_child_run, args=(send, params, held), name="oloproof-run")
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns of any fork of a process with more than one OS thread, numpy's native pool
            # included; this one forks only a process of one Python thread (_start_method)
            warnings.filterwarnings("ignore", message=r"This process \(pid=\d+\) is multi-threaded, use of fork\(\)",
                                    category=DeprecationWarning)
            proc.start()
    except BaseException:
        _release_stops(held)
        raise
    send.close()
    directory: Path | None = None
    final: tuple[Any, ...] | None = None
    interrupted_at: float | None = None
    signal_name: str | None = None  # the SIGTERM or SIGHUP that stopped this process (None: a Ctrl-C)
    forwarded = False
    while final is None:
        try:
            if held:  # a stop that came while the run's process started raises here, and stops the run
                held, released = frozenset(), held
                _release_stops(released)
            if interrupted_at is not None:
                waited = time.monotonic() - interrupted_at
                if waited > _PASS_ON_S and not forwarded and proc.is_alive():
                    # the stop may have reached only this process: passed on as it came, a SIGTERM as a SIGTERM (a
                    # run's process started with SIGINT ignored, a background job of a script, ignored a SIGINT:
                    # it ran on until killed at the grace's end, and a short run reported its gate, exit 0)
                    os.kill(proc.pid, getattr(signal, signal_name) if signal_name else signal.SIGINT)
                    forwarded = True
                if waited > _STOP_GRACE_S and proc.is_alive():
                    proc.kill()
            multiprocessing.connection.wait([receive, proc.sentinel], timeout=0.2)
            if receive.poll():
                try:
                    message = receive.recv()
                except (EOFError, OSError):
                    break
                except Exception:  # noqa: BLE001 - a garbled message: stop the child, never leave it running
                    proc.kill()
                    proc.join()
                    raise
                if message[0] == "directory":
                    directory = Path(message[1])
                elif message[0] == "progress":
                    if on_progress is not None:
                        on_progress(message[1], message[2])
                elif message[0] == "warning":  # printed here, where each line is printed once
                    category = WARNING_KINDS.get(str(message[1])) or type(str(message[1]), (UserWarning,), {})
                    warnings.showwarning(str(message[2]), category, "", 0)
                else:
                    final = message
            elif not proc.is_alive():
                break
        except KeyboardInterrupt as exc:
            if interrupted_at is not None:  # a second Ctrl-C: stop the child now
                proc.kill()
            else:
                signal_name = exc.args[0] if isinstance(exc, Stopped) and exc.args else None
            interrupted_at = interrupted_at or time.monotonic()
    deadline = time.monotonic() + _STOP_GRACE_S
    while proc.exitcode is None and time.monotonic() < deadline:  # its own exit (waitpid), not the end of its
        time.sleep(0.01)  # sentinel pipe, which a process the system forked and left running holds open (5 s more)
    if proc.exitcode is None:  # it reported, but something of the system's keeps it from exiting
        proc.kill()
        proc.join()
    receive.close()
    if final is None and interrupted_at is not None:
        final = ("interrupted",)
        if directory is not None:  # ended before it noted the stop (a second Ctrl-C killed it): the user's stop
            from .._run.in_flight import note_stop

            note_stop(directory, signal_name, proc.pid)  # the SIGTERM the command names too
    elif final == ("interrupted",) and interrupted_at is None:  # the child stopped on a signal this process never got
        final = ("interrupted", _STOPPED_ALONE)
    if final == ("interrupted",) and signal_name is not None:  # stopped as on a Ctrl-C, by this signal: say which
        final = ("stopped", signal_name)
    return final, directory, proc.exitcode if proc.exitcode is not None else -9, proc.pid


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP reached the command (``args[0]``: the signal's name): stopped as a Ctrl-C stops it,
    exit 2, never death by the signal (143, 129); a run says how to resume. In ``oloproof receipt``, any signal of
    :func:`hook_stops` (SIGQUIT, SIGUSR1, SIGALRM, ...) too."""


#: Signals a hook does not stop on: the default of each is no end of the process (ignored, a stop, a continue), or
#: it cannot be caught, or it is raised by a fault of the process's own (a handler for a real SIGSEGV, SIGBUS, SIGFPE
#: or SIGILL returns to the faulting instruction, which faults again: the hook would hang instead of dying). The
#: console script's module keeps the same list (``_oloproof_nb_entry._NOT_STOPPING``; a test holds them equal).
#: SIGIO ends a process on Linux (signal(7)) but is discarded by default on macOS and the BSDs (sigaction(2)), as
#: SIGURG is: there it is left alone too.
NOT_HOOK_STOPS = frozenset({"SIGKILL", "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGCONT", "SIGCHLD", "SIGURG",
                            "SIGWINCH", "SIGINFO", "SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL"}
                           | ({"SIGIO"} if sys.platform.startswith(("darwin", "freebsd", "openbsd", "netbsd"))
                              else set()))


def signal_name(signum: int) -> str:
    """``SIGUSR1``; a real-time signal without a name of its own ``SIGRTMIN+3``."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        low = getattr(signal, "SIGRTMIN", None)
        return f"SIGRTMIN+{signum - int(low)}" if low is not None and signum > low else f"signal {signum}"


def hook_stops() -> frozenset[int]:
    """Every signal that ends the process by default and can be handled: SIGINT, SIGTERM, SIGHUP, and SIGQUIT
    (Ctrl-\\), SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU, SIGVTALRM, SIGPROF, SIGABRT, the real-time signals, ... (all but
    :data:`NOT_HOOK_STOPS`). ``oloproof receipt`` is a completion hook, and a hook runner blocks on exit 2 only: left
    to its default, each ended the hook 128 + N, "not blocking", and the validator it started (a session of its own)
    ran on."""
    return frozenset(int(sig) for sig in signal.valid_signals() if signal_name(sig) not in NOT_HOOK_STOPS)


class StopOnSignals:
    """While inside, SIGTERM and SIGHUP raise :class:`Stopped` (so a running validator's process group is
    killed on the way out, as on Ctrl-C); the handlers before are put back after. Only in the main thread. A
    signal the process was started ignoring (``nohup``, ``trap '' HUP``) stays ignored: that was asked for.
    ``interrupt``: Ctrl-C too (``Stopped("SIGINT")``, where Python's own handler is set). ``every``: every other
    signal of :func:`hook_stops` too (``oloproof receipt``), where it is left to its default (or to the console
    script's exit 2): a handler of the caller's own (a test's SIGALRM) is kept. While a command
    validator is being started, the stop waits until its process group can be killed with it
    (:func:`~oloproof_nb._run.observe.defer_stop`)."""

    def __init__(self, interrupt: bool = False, every: bool = False) -> None:
        self._names = ("SIGTERM", "SIGHUP", "SIGINT") if interrupt else ("SIGTERM", "SIGHUP")
        self._every = every

    def __enter__(self) -> None:
        from .._run.observe import defer_stop

        self._before: dict[int, Any] = {}
        if threading.current_thread() is not threading.main_thread():
            return

        def stop(signum: int, frame: Any) -> None:
            stopped = Stopped(signal_name(signum))
            if not defer_stop(stopped):
                raise stopped

        for name in self._names:
            sig = getattr(signal, name, None)
            before = None if sig is None else signal.getsignal(sig)
            if sig is not None and before is not signal.SIG_IGN and (
                    name != "SIGINT" or before is signal.default_int_handler):
                self._before[sig] = signal.signal(sig, stop)
        if self._every:
            for sig in sorted(hook_stops() - set(self._before)):
                if signal_name(sig) in self._names:  # taken as said above (SIGINT from Python's own handler only)
                    continue
                before = signal.getsignal(sig)
                if before is signal.SIG_DFL or getattr(before, "__module__", None) == "_oloproof_nb_entry":
                    try:
                        self._before[sig] = signal.signal(sig, stop)
                    except (OSError, ValueError):  # one the platform keeps for itself
                        pass

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._before.items():
            signal.signal(sig, handler)
