"""What a run stopped by an OloproofError says beside its one line: the note naming the run folder and how to finish
it, which Python 3.11+ attaches to the exception (``add_note``) and 3.10 cannot."""

from __future__ import annotations

import sys
from pathlib import Path


def finish_note(exc: BaseException) -> list[str]:
    """The notes attached to ``exc`` (none on Python 3.10, which has no ``add_note``)."""
    return list(getattr(exc, "__notes__", []))


def stopped_run_note(run: Path) -> list[str]:
    """The note a stopped run of a system with a code fingerprint gets, as :func:`finish_note` reads it."""
    if sys.version_info < (3, 11):
        return []
    return [f"the run is in {run}; finish it with op.run(suite, out={str(run)!r}, resume=True)"]
