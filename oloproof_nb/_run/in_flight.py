"""The case runs in flight when a run's process ended: what ``started.jsonl`` in the run folder says of them.

:class:`~oloproof_nb._run.store.RunStore` notes each case run in ``started.jsonl`` as it starts on a system in its
process (and a stop on a Ctrl-C); once that process is dead, ``oloproof run`` notes how it ended
(:func:`note_end`, :func:`note_stop`), and a resume reads what was in flight (:func:`read_in_flight`) before it runs
anything (see :mod:`oloproof_nb._run.store`).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..errors import RunDirError
from .disk import link_refused, open_in_place
from .lines import complete_lines
from .lock import RunLock
from .store import (
    STARTED,
    InFlight,
    dumps,
    parse_record,
    read_cases,
    record_key,
    stop_note,
    truncate_torn_tail,
)

__all__ = ["read_in_flight", "note_end", "note_stop", "ended_by_system", "how_it_ended", "stop_signal"]

_T = TypeVar("_T")


#: The signals a process gets for what it did itself (a bad memory access, ``abort()``, an illegal instruction, a
#: division by zero): the system ended the run's process, which oloproof ends only with ``os._exit(0)`` after its
#: last message. SIGKILL, SIGTERM, SIGINT and SIGHUP come from outside (or from the command's own Ctrl-C handling).
_FATAL_SIGNALS = frozenset(getattr(signal, name) for name in ("SIGSEGV", "SIGABRT", "SIGBUS", "SIGILL", "SIGFPE")
                           if hasattr(signal, name))


def how_it_ended(exitcode: int) -> str:
    """How a process ended, in a case's reason: ``exit code 3`` or ``killed by signal SIGSEGV``."""
    if exitcode >= 0:
        return f"exit code {exitcode}"
    try:
        return f"killed by signal {signal.Signals(-exitcode).name}"
    except ValueError:
        return f"killed by signal {-exitcode}"


#: The names a stop's ``signal`` may hold (``started.jsonl``): any other text there is not oloproof's and is not shown.
_SIGNAL_NAMES = frozenset(sig.name for sig in signal.Signals)


def stop_signal(exc: BaseException) -> str | None:
    """The signal a stop (a ``KeyboardInterrupt``) came by, when it names one: ``SIGTERM`` or ``SIGHUP`` turned into
    a stop by the command's handlers (``cli.process.Stopped("SIGTERM")``); None for Python's own Ctrl-C (a bare
    ``KeyboardInterrupt``, which a SIGINT from anywhere raises alike)."""
    name = exc.args[0] if exc.args else None
    return name if isinstance(name, str) and name in _SIGNAL_NAMES else None


def ended_by_system(exitcode: int) -> bool:
    """Whether the run's process, ended with ``exitcode`` before its last message, was ended by what it ran: an
    exit of any code (oloproof's child exits only after that message) or a signal of :data:`_FATAL_SIGNALS`."""
    return exitcode >= 0 or -exitcode in _FATAL_SIGNALS


def read_in_flight(directory: Path) -> InFlight | None:
    """The case runs in flight when the run's process last ended (started, never recorded), and how it ended;
    None when ``started.jsonl`` names none (it is absent after a clean stop, a finish or a settled resume).

    How it ended is the first end noted after the last case run started: that end cut them short. A later one is
    of a process that started none (a resume killed before it settled them), and an end before a case run's
    start is of an earlier process (were the last end read taken, a resume killed from outside while it built
    the system would turn the system's own crash into a kill, and the case that crashed would run again). An end
    that names its process is not of the case runs another process noted last (:attr:`InFlight.earlier`)."""
    if (directory / STARTED).is_symlink():
        raise RunDirError(link_refused(directory / STARTED))
    started: dict[tuple[str, int], float] = {}
    finished: dict[tuple[str, int], None] = {}
    in_worker: set[tuple[str, int]] = set()  # sent to an isolation: process worker: its system never ends this one
    how, by_system, ended_at, stopped, stop_by = None, False, None, False, None
    pid: int | None = None  # the process that noted the last case run
    noted_by: dict[tuple[str, int], int] = {}  # the process that noted each case run last, where the note says
    end_pid: int | None = None  # the process whose end is noted after them, where the note says
    for lineno, _, raw in complete_lines(directory / STARTED):
        try:
            line = parse_record(directory / STARTED, lineno, raw)
            if isinstance(line.get("case"), str):
                key = (line["case"], int(line.get("epoch") or 1))
                if line.get("finished"):
                    finished[key] = None
                else:
                    started.setdefault(key, float(line.get("at") or 0.0))
                    if line.get("worker") is True:
                        in_worker.add(key)
                pid = _pid(line)
                if pid is None:
                    noted_by.pop(key, None)
                else:
                    noted_by[key] = pid
                # a process ran after any end before
                how, by_system, ended_at, stopped, stop_by, end_pid = None, False, None, False, None, None
            elif isinstance(line.get("ended"), str) and how is None:
                how, by_system, ended_at = line["ended"], bool(line.get("by_system")), float(line.get("at") or 0.0)
                end_pid = _pid(line)
            elif line.get("stopped") is True and not stopped:  # the first stop after them, as the first end
                # (a later one is of a resume that started none: its SIGTERM did not cut short a Ctrl-C's case runs)
                stopped = True
                named = line.get("signal")
                stop_by = named if isinstance(named, str) and named in _SIGNAL_NAMES else None
        except (RunDirError, TypeError, ValueError):  # not a line oloproof wrote (a power loss's zeros): it names
            continue  # no case run; a note is never a reason to refuse the resume, as a damaged journal is
    if not started:
        return None
    for record in read_cases(directory):
        started.pop(record_key(record), None)
        finished.pop(record_key(record), None)
    lost = [key for key in finished if started.pop(key, None) is not None]
    # case runs a worker process ran: their system could not end the run's process, so its end is never theirs
    # (a crash of the run's process itself, an exit before its last message: they run again, noted)
    earlier = _noted_by_others(started, noted_by, end_pid) if how is not None else []
    started = {key: at for key, at in started.items() if key not in earlier}
    by_system = by_system and not (started and in_worker.issuperset(started))
    return InFlight(started, how, by_system, ended_at, lost, stopped, stop_by, pid,
                    {key: p for key, p in noted_by.items() if key in started}, earlier) \
        if started or lost or earlier else None


def _pid(line: dict[str, Any]) -> int | None:
    """The process a line of ``started.jsonl`` names (``pid``), or None."""
    pid = line.get("pid")
    return pid if isinstance(pid, int) and not isinstance(pid, bool) else None


def _noted_by_others(started: dict[tuple[str, int], float], noted_by: dict[tuple[str, int], int],
                     pid: int | None) -> list[tuple[str, int]]:
    """The case runs of ``started`` another process than ``pid`` (the one whose end is noted) noted last; none when
    ``pid`` is not known."""
    return [] if pid is None else [key for key in started if noted_by.get(key, pid) != pid]


def note_end(directory: Path, exitcode: int, how: str | None = None, pid: int | None = None) -> InFlight | None:
    """Append to ``started.jsonl`` how the run's process ended (``oloproof run`` calls it once that process is
    dead, before any resume); what was in flight then. Nothing is written when no case run was in flight, when an
    end is already noted after them (this process started none: :func:`read_in_flight`), or when the folder is
    held by another process or cannot be written (a resume then runs those case runs again). ``how``: an end
    :func:`how_it_ended` cannot tell from ``exitcode``, not blamed on the system (a stop that reached the run's
    process alone), which alone replaces a stop noted after the case runs in flight. ``pid``: the process that ended;
    nothing is written either when the case runs in flight were noted by another (a run killed where nothing saw it,
    such as ``op.run`` in a notebook, then a resume that ended while it built the system: its end is not theirs);
    noted, the end names ``pid`` and is not of the case runs in flight another process noted last (one a resume
    had not started again: :attr:`InFlight.earlier`)."""
    def ended(in_flight: InFlight | None) -> tuple[dict[str, Any], InFlight] | None:
        if in_flight is None or in_flight.how is not None or (in_flight.stopped and how is None) \
                or _noted_by_another(in_flight, pid):
            return None  # no case run in flight, or an end (or a stop) noted after them: this process started none
        earlier = _noted_by_others(in_flight.started, in_flight.noted_by, pid)
        end = InFlight({key: at for key, at in in_flight.started.items() if key not in earlier},
                       how or how_it_ended(exitcode), how is None and ended_by_system(exitcode), time.time(),
                       in_flight.lost, earlier=earlier)
        return {"ended": end.how, "by_system": end.by_system, "at": end.ended_at,
                **({} if pid is None else {"pid": pid})}, end

    return _note_in_flight(directory, ended)


def note_stop(directory: Path, signal_name: str | None = None, pid: int | None = None) -> None:
    """Append a stop to ``started.jsonl``, as :meth:`RunStore.close` does on a Ctrl-C, for a run's process that
    ended after the user's stop before it noted it (``oloproof run`` kills it on a second Ctrl-C, or when it does
    not stop within the grace time): a resume runs the case runs in flight again with no note (not as an end
    that ``oloproof run`` did not see). ``signal_name``: the SIGTERM or SIGHUP the command was stopped by, kept as
    the run's process keeps it (before, after a SIGTERM and a Ctrl-C, the command said ``interrupted by
    SIGTERM`` and the resume ``stopped by a Ctrl-C or a signal``). Nothing is written when none was in flight, when
    an end or a stop is noted after them, or when the folder is held by another process or cannot be written (as
    :func:`note_end`; ``pid`` too)."""
    def stop(in_flight: InFlight | None) -> tuple[dict[str, Any], bool] | None:
        if in_flight is None or in_flight.how is not None or in_flight.stopped or _noted_by_another(in_flight, pid):
            return None
        return stop_note(signal_name), True

    _note_in_flight(directory, stop)


def _noted_by_another(in_flight: InFlight, pid: int | None) -> bool:
    """Whether the case runs in flight were noted by another process than ``pid`` (the one whose end is noted); False
    when either is not known (``pid`` None, or notes written before they named their process)."""
    return pid is not None and in_flight.pid is not None and in_flight.pid != pid


def _note_in_flight(directory: Path, note_of: Callable[[InFlight | None], tuple[dict[str, Any], _T] | None]
                    ) -> _T | None:
    """Under the folder's lock, append to ``started.jsonl`` the note ``note_of`` makes of what it says is in flight
    (:func:`read_in_flight`; the run's process is dead), and return what came with it. Nothing is written, and None
    returned, when it makes none, when ``started.jsonl`` is absent (no case run started, nor a folder made,
    perhaps), or when the folder is held by another process or cannot be written (``started.jsonl`` shared with
    another folder, copied with ``cp -al``, is not written into: :func:`~.disk.open_in_place`)."""
    if not (directory / STARTED).is_file():
        return None
    try:
        lock = RunLock.acquire(directory)
    except RunDirError:
        return None
    try:
        made = note_of(read_in_flight(directory))
        if made is None:
            return None
        note, result = made
        truncate_torn_tail(directory / STARTED)  # a line the kill cut would swallow this one
        # never into a file another folder shares (cp -al): refused (RunDirError), so nothing is noted
        fd = open_in_place(directory / STARTED, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0))
        try:
            os.write(fd, (dumps(note) + "\n").encode("utf-8"))
        finally:
            os.close(fd)
        return result
    except (OSError, RunDirError):
        return None
    finally:
        lock.release()
