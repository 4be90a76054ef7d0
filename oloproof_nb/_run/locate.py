"""Where a command finds a run: a run directory as given, or the latest run of a suite folder."""

from __future__ import annotations

import shlex
from datetime import datetime, timezone
from pathlib import Path

from .._config.suite import SUITE_FILE
from ..errors import RunDirError
from .store import MANIFEST, read_manifest

__all__ = ["is_suite_folder", "latest_run_dir", "latest_hint"]


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
        release decision about an older run — a PASS where the latest run would be refused. A folder whose
        name is a run id (:func:`~.store.new_run_id`) dated before the latest readable run's start is passed
        over.
    """
    runs = Path(suite_folder) / "runs"
    found: list[tuple[str, str, Path]] = []
    unreadable: list[tuple[Path, RunDirError]] = []
    for child in sorted(runs.iterdir()) if runs.is_dir() else []:
        if (child / MANIFEST).is_file():
            try:
                started = read_manifest(child).started_at
            except RunDirError as problem:
                unreadable.append((child, problem))
                continue
            found.append((str(started), child.name, child))
    latest = _time(max(found)[0]) if found else None
    for child, unread in unreadable:  # one that may be the latest refuses; one whose run id dates it before not
        named = _run_id_time(child.name)
        if named is None or latest is None or named >= latest.replace(microsecond=0):
            raise RunDirError(f"{suite_folder}: cannot tell which run is the latest, as one run folder cannot "
                              f"be read ({unread}); give the run directory instead") from unread
    if not found:
        raise RunDirError(f"{suite_folder}: a suite folder with no run in {runs} yet; run it first "
                          f"(oloproof run {suite_folder}) or give a run directory")
    return max(found)[2]


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
