"""Where a command finds a run: a run directory as given, or the latest run of a suite folder."""

from __future__ import annotations

import shlex
from datetime import datetime, timezone
from pathlib import Path

from .._config.files import folder_problem
from .._config.suite import SUITE_FILE
from ..errors import RunDirError
from .store import MANIFEST, read_manifest

__all__ = ["is_suite_folder", "latest_run_dir", "latest_hint", "runs_hint"]


def is_suite_folder(path: str | Path) -> bool:
    """Whether ``path`` is a suite folder (holds oloproof.yaml) rather than a run directory (holds manifest.json)."""
    folder = Path(path)
    try:
        return (folder / SUITE_FILE).is_file() and not (folder / MANIFEST).is_file()
    except OSError:  # a folder that cannot be read: not a suite folder; loading it as a run says why, naming it
        return False


def latest_run_dir(suite_folder: str | Path) -> Path:
    """The run of ``suite_folder/runs/`` that started last (by its manifest's ``started_at``, then its name).

    Raises
    ------
    RunDirError
        The suite folder holds no run yet, or a run folder's manifest cannot be read and that run may be the
        latest (its start time is in the manifest): gating the latest readable run instead would give a
        release decision about an older run — a PASS where the latest run would be refused. So does a folder
        there that cannot be read at all (it may hold such a run). A folder whose name is a run id
        (:func:`~.store.new_run_id`) dated before the latest readable run's start is passed over.
    """
    runs = Path(suite_folder) / "runs"
    latest = _newest(runs, suite_folder)
    if latest is None:
        raise RunDirError(f"{suite_folder}: a suite folder with no run in {runs} yet; run it first "
                          f"(oloproof run {suite_folder}) or give a run directory")
    return latest


def _newest(runs: Path, named: str | Path) -> Path | None:
    """The run of the folder ``runs`` that started last, or None when it holds none (see :func:`latest_run_dir`;
    its error names ``named``, the folder the user gave)."""
    found: list[tuple[str, str, Path]] = []
    unreadable: list[tuple[Path, RunDirError]] = []
    for child in sorted(runs.iterdir()) if runs.is_dir() else []:
        locked = folder_problem(child)  # else (child / MANIFEST).is_file() raised PermissionError, whatever its name
        if locked is not None:
            unreadable.append((child, RunDirError(f"{child}: {locked}")))
        elif (child / MANIFEST).is_file():
            try:
                started = read_manifest(child).started_at
            except RunDirError as problem:
                unreadable.append((child, problem))
                continue
            found.append((str(started), child.name, child))
    latest = _time(max(found)[0]) if found else None
    for child, unread in unreadable:  # one that may be the latest refuses; one whose run id dates it before not
        named_time = _run_id_time(child.name)
        if named_time is None or latest is None or named_time >= latest.replace(microsecond=0):
            raise RunDirError(f"{named}: cannot tell which run is the latest, as one run folder cannot "
                              f"be read ({unread}); give the run directory instead") from unread
    return max(found)[2] if found else None


def runs_hint(folder: str | Path, within: str = "runs") -> str:
    """What to give instead of ``folder``, a folder without ``manifest.json`` given where a run directory is
    wanted: ``; it is a suite folder: give one of its 2 runs in demo/runs, the latest is '…'`` for a suite
    folder (``op.load_run("demo")`` after ``oloproof run demo``) or a folder of runs (``demo/runs``), or empty
    for any other folder.

    The latest is named, not taken: a notebook that loaded "the latest run" would read another run after
    the next ``oloproof run``, and nothing in it would say which run its numbers came from.

    ``within`` is the suite folder's folder of the runs wanted: ``baselines`` where a do-nothing baseline is
    wanted (``oloproof gate RUN --baseline demo``), whose hint names the suite's baselines, not its runs (the
    agent's runs, which the baseline check then refuses).
    """
    folder = Path(folder)
    suite = is_suite_folder(folder)
    runs = folder / within if suite else folder
    noun = "run" if within == "runs" else "baseline"
    try:
        count = sum(1 for child in runs.iterdir() if (child / MANIFEST).is_file()) if runs.is_dir() else 0
        latest = _newest(runs, folder) if count else None
    except RunDirError:
        return f"; it holds {count} run {'directory' if count == 1 else 'directories'} in {runs}: give one of them"
    except OSError:  # a folder that cannot be listed: the error already names it
        return ""
    if latest is None:
        if not suite:
            return ""
        return f"; it is a suite folder with no run in {runs} yet: run it first" if noun == "run" else \
            f"; it is a suite folder with no baseline in {runs} yet: make one (oloproof run --baseline)"
    if count == 1:
        return f"; it {'is a suite folder' if suite else 'holds one run'}: give its {noun}, {str(latest)!r}"
    held = f"is a suite folder: give one of its {count} {noun}s in {runs}" if suite else \
        f"holds {count} runs: give one of them"
    return f"; it {held}, the latest is {str(latest)!r}"


def _time(text: str) -> datetime | None:
    """A manifest's ``started_at`` (ISO 8601, ``Z`` for UTC) as a datetime, or None."""
    try:
        found = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return found if found.tzinfo is not None else None


def _run_id_time(name: str) -> datetime | None:
    """The start time a run id (``20261201T213110Z-f15712``, :func:`~.store.new_run_id`) names, to the second."""
    try:
        return datetime.strptime(name[:16], "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def latest_hint(suite_folder: str | Path, flag: bool = False) -> str:
    """``; the suite's latest run is out='…' (unfinished)`` (``flag``: ``--out …``, for the command line) for an
    error that wants the run to resume (after a Ctrl-C it is that one), or empty when the suite has no readable
    run."""
    try:
        latest = latest_run_dir(suite_folder)
        finished = read_manifest(latest).finished_at is not None
    except (RunDirError, OSError, ValueError):
        return ""
    given = f"--out {shlex.quote(str(latest))}" if flag else f"out={str(latest)!r}"
    return f"; the suite's latest run is {given} ({'finished' if finished else 'unfinished'})"
