"""Where a command finds a run: a run directory as given, or the latest run of a suite folder."""

from __future__ import annotations

from pathlib import Path

from .._config.suite import SUITE_FILE
from ..errors import RunDirError
from .store import MANIFEST, read_manifest

__all__ = ["is_suite_folder", "latest_run_dir"]


def is_suite_folder(path: str | Path) -> bool:
    """Whether ``path`` is a suite folder (holds oloproof.yaml) rather than a run directory (holds manifest.json)."""
    folder = Path(path)
    return (folder / SUITE_FILE).is_file() and not (folder / MANIFEST).is_file()


def latest_run_dir(suite_folder: str | Path) -> Path:
    """The run of ``suite_folder/runs/`` that started last (by its manifest's ``started_at``, then its name).

    Raises
    ------
    RunDirError
        The suite folder holds no run yet.
    """
    runs = Path(suite_folder) / "runs"
    found = []
    for child in sorted(runs.iterdir()) if runs.is_dir() else []:
        if (child / MANIFEST).is_file():
            try:
                started = read_manifest(child).started_at
            except RunDirError:
                continue  # not a readable run: never the one to gate
            found.append((str(started), child.name, child))
    if not found:
        raise RunDirError(f"{suite_folder}: a suite folder with no run in {runs} yet; run it first "
                          f"(oloproof run {suite_folder}) or give a run directory")
    return max(found)[2]
