"""The complete lines of an append-only JSONL file (every journal of a run directory is one)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

__all__ = ["complete_lines"]


def complete_lines(path: Path) -> Iterator[tuple[int, int, bytes]]:
    """``(line number, byte offset, line)`` of every complete line of ``path``.

    A torn last line (no newline: the process died mid-write) is ignored; a file that does not exist has
    no lines.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "j.jsonl"
    >>> _ = path.write_bytes(b'{"a":1}\\n{"b":2}\\n{"c"')
    >>> list(complete_lines(path))
    [(1, 0, b'{"a":1}\\n'), (2, 8, b'{"b":2}\\n')]
    """
    if not path.exists():
        return
    offset = 0
    with path.open("rb") as handle:
        for lineno, raw in enumerate(handle, start=1):
            if not raw.endswith(b"\n"):
                break
            yield lineno, offset, raw
            offset += len(raw)
