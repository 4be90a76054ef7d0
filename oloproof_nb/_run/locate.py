"""Where a command finds a run: a run directory as given, or the latest run of a suite folder."""

from __future__ import annotations

import os
import shlex
from datetime import datetime, timezone
from pathlib import Path

from .._config.files import folder_problem, not_home, read_yaml
from .._config.suite_config import SUITE_FILE
from ..errors import OloproofError, RunDirError, quote
from .store import MANIFEST, read_manifest

__all__ = ["follows", "is_suite_folder", "latest_run_dir", "latest_hint", "runs_hint", "shell_word"]


def shell_word(path: str | Path) -> str:
    """``path`` as one word of a command the user is told to run (in this module's hints as in the commands' lines):
    quoted for a POSIX shell (a space, a ``$``), and a relative path that starts with '-' written ``./-x`` (as
    given, ``oloproof run -x`` read it as an option: "the following arguments are required: suite"), one whose first
    part is a folder named ``~`` ``./~/x`` (:func:`~.._config.files.not_home`: ``'~/x'`` is refused as the home
    folder's).

    Examples
    --------
    >>> shell_word("my suite"), shell_word("-x"), shell_word("/tmp/-x"), shell_word(Path("./~/runs"))
    ("'my suite'", './-x', '/tmp/-x', "'./~/runs'")
    """
    text = not_home(path)
    return shlex.quote("./" + text if text.startswith("-") else text)


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
        (:func:`~.store.new_run_id`) dated before the latest readable run's start is passed over. So does a
        latest run of another suite (a link or a copy put in ``runs/``: its manifest names another suite than
        the folder's oloproof.yaml, and another folder it was made in that still holds a suite), as a resume refuses
        one: it is no run of this suite to gate.

    Notes
    -----
    A run created while the folder held a run that started later by its manifest (the clock was set back
    between the two, an NTP correction, or that run was copied from a machine whose clock ran ahead) records
    that it follows it (:func:`follows`), and is the later of the two: ``oloproof gate SUITE`` after such a
    run gates it, never the older run.
    """
    runs = Path(suite_folder) / "runs"
    latest = _newest(runs, suite_folder)
    if latest is None:
        raise RunDirError(f"{suite_folder}: a suite folder with no run in {runs} yet; run it first "
                          f"(oloproof run {shell_word(suite_folder)}) or give a run directory")
    suite_file = Path(suite_folder) / SUITE_FILE
    try:
        name, manifest = read_yaml(suite_file).get("name"), read_manifest(latest)
        made = manifest.suite_config.root
        # another suite's only while the folder it was made in holds a suite and is not this one; else this suite
        # renamed (and perhaps moved) since, which the gate's drift says (as the gate's suite_folder decides it)
        other = made is None or (Path(made).resolve() != Path(suite_folder).resolve()
                                 and (Path(made) / SUITE_FILE).is_file())
    except (OloproofError, OSError, RuntimeError):  # a suite file being edited, a loop of links: nothing to compare
        return latest
    if isinstance(name, str) and manifest.suite != name and other:
        raise RunDirError(f"{latest}: the latest run in {runs} is a run of suite {quote(manifest.suite)}, not of "
                          f"this suite {quote(name)} ({suite_file}); give the run directory you mean, or take that "
                          f"one out of {runs}")
    return latest


def _newest(runs: Path, named: str | Path) -> Path | None:
    """The run of the folder ``runs`` that started last, or None when it holds none (see :func:`latest_run_dir`;
    its error names ``named``, the folder the user gave)."""
    found, unreadable = _scan(runs)
    pick = _pick(found)
    latest = _time(pick[0]) if pick else None
    for child, unread in unreadable:  # one that may be the latest refuses; one whose run id dates it before not
        named_time = _run_id_time(child.name)
        if named_time is None or latest is None or named_time >= latest.replace(microsecond=0):
            raise RunDirError(f"{named}: cannot tell which run is the latest, as one run folder cannot "
                              f"be read ({unread}); give the run directory instead") from unread
    return pick[2] if pick else None


#: A readable run of a folder of runs: its manifest's ``started_at``, its folder's name, the folder, its run id
#: and the run id it ``follows`` (:attr:`~oloproof_nb._core.records.Manifest.follows`).
_Found = tuple[str, str, Path, str, str | None]


def _scan(runs: Path) -> tuple[list[_Found], list[tuple[Path, RunDirError]]]:
    """The readable runs of the folder ``runs``, and the folders there that may hold a run but cannot be read."""
    found: list[_Found] = []
    unreadable: list[tuple[Path, RunDirError]] = []
    for child in sorted(runs.iterdir()) if runs.is_dir() else []:
        locked = folder_problem(child)  # else (child / MANIFEST).is_file() raised PermissionError, whatever its name
        if locked is not None:
            unreadable.append((child, RunDirError(f"{child}: {locked}")))
        elif os.path.lexists(child / MANIFEST):  # one that is a folder, a pipe, a device or a dangling link is
            # unreadable too (``is_file()`` passed such a run over: the run before it was gated)
            try:
                manifest = read_manifest(child)
            except RunDirError as problem:
                unreadable.append((child, problem))
                continue
            found.append((str(manifest.started_at), child.name, child, manifest.run_id, manifest.follows))
    return found, unreadable


def _pick(found: list[_Found]) -> _Found | None:
    """The run of ``found`` that started last by its start time, then its name — unless a run records that it
    :attr:`~oloproof_nb._core.records.Manifest.follows` that one (it was created after it, by a clock that read an
    earlier time): then the run that follows it, and so on."""
    if not found:
        return None
    pick, seen = max(found), set()
    while pick[3] not in seen:
        seen.add(pick[3])
        later = [entry for entry in found if entry[4] == pick[3] and entry[3] not in seen]
        pick = max(later) if later else pick
    return pick


def follows(runs: Path, started: datetime) -> str | None:
    """The run id a run created in the folder ``runs`` at ``started`` records that it
    :attr:`~oloproof_nb._core.records.Manifest.follows`: the folder's latest run, when a run of the folder started
    at ``started`` or later by its manifest (the clock was set back since, or that run came from a machine whose
    clock ran ahead), so that the new run would not be taken as the latest by its start time; else None (and when
    the folder or a start time cannot be read: nothing is taken as later than the new run then)."""
    try:
        found, _ = _scan(runs)
    except OSError:
        return None
    pick = _pick(found)
    ahead = [when for when in (_time(entry[0]) for entry in found) if when is not None and when >= started]
    return pick[3] if pick is not None and ahead else None


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
        return (f"; it holds {count} run {'directory' if count == 1 else 'directories'} in {not_home(runs)}: give "
                "one of them")
    except OSError:  # a folder that cannot be listed: the error already names it
        return ""
    if latest is None:
        if not suite:
            return ""
        return f"; it is a suite folder with no run in {not_home(runs)} yet: run it first" if noun == "run" else \
            f"; it is a suite folder with no baseline in {not_home(runs)} yet: make one (oloproof run --baseline " \
            f"{shell_word(folder)})"
    if count == 1:
        return f"; it {'is a suite folder' if suite else 'holds one run'}: give its {noun}, {not_home(latest)!r}"
    held = f"is a suite folder: give one of its {count} {noun}s in {not_home(runs)}" if suite else \
        f"holds {count} runs: give one of them"
    return f"; it {held}, the latest is {not_home(latest)!r}"


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
    given = f"--out {shell_word(latest)}" if flag else f"out={str(latest)!r}"
    return f"; the suite's latest run is {given} ({'finished' if finished else 'unfinished'})"
