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
        The suite folder holds no run yet, or a run folder's manifest cannot be read: that run may be the
        latest (its start time is in the manifest), and gating the latest readable run instead would give a
        release decision about an older run — a PASS where the latest run would be refused.
    """
    runs = Path(suite_folder) / "runs"
    found = []
    for child in sorted(runs.iterdir()) if runs.is_dir() else []:
        if (child / MANIFEST).is_file():
            try:
                started = read_manifest(child).started_at
            except RunDirError as exc:
                raise RunDirError(f"{suite_folder}: cannot tell which run is the latest, as one run folder cannot "
                                  f"be read ({exc}); give the run directory instead") from exc
            found.append((str(started), child.name, child))
    if not found:
        raise RunDirError(f"{suite_folder}: a suite folder with no run in {runs} yet; run it first "
                          f"(oloproof run {suite_folder}) or give a run directory")
    return max(found)[2]
