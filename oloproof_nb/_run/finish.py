"""What the messages of a stopped run say about finishing it (a run stopped by the user, a bug, a lost batch)."""

from __future__ import annotations

from pathlib import Path

from .systems import GIVE_FINGERPRINT, NO_FINGERPRINT

__all__ = ["how_to_finish"]


def how_to_finish(directory: Path, fingerprint: str | None) -> str:
    """What a stopped run's messages say about finishing it: ``resume=True``, unless its system records no code
    fingerprint, which :func:`~.runner._check_resumable` refuses (the Ctrl-C note sent a notebook cell's run to a
    resume that was refused)."""
    if fingerprint is None:
        return (f"it cannot be resumed: {NO_FINGERPRINT}, so a resume could not "
                f"tell an edited cell; start a new run, or {GIVE_FINGERPRINT}")
    return f"finish it with op.run(suite, out={str(directory)!r}, resume=True)"
