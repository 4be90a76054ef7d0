"""The complete lines of an append-only JSONL file (every journal of a run directory is one)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from .._config.files import UnreadableFile, open_regular
from ..errors import RunDirError

__all__ = ["complete_lines", "complete_end", "open_journal", "journal_sha256", "UNREADABLE_HINT"]


#: What to do about a file of a run folder that is there but may not be read (a CI artifact copied with another
#: user's modes), after ``cannot read: Permission denied``.
UNREADABLE_HINT = ("this user may not read the run folder's files: one another user wrote under umask 077 is theirs "
                   "alone; have its owner make it readable (chmod -R a+rX), or unpack its archive as this user")

_ONLY_OURS = "a run directory holds only the files oloproof wrote there"


def open_journal(path: Path) -> BinaryIO | None:
    """Open a journal file of a run directory (``cases.jsonl``, ``states.jsonl``, ...) for reading; None
    when it does not exist.

    Anything but a regular file (a named pipe, a device, a directory put there) is refused at once with a
    :class:`~oloproof_nb.errors.RunDirError` naming it: the file is opened without blocking
    (:func:`~oloproof_nb._config.files.open_regular`), so a named pipe nobody writes to never hangs a load.
    """
    try:
        handle, _ = open_regular(path)
    except UnreadableFile as exc:
        if exc.missing:
            return None
        raise RunDirError(f"{path}: {exc}; {UNREADABLE_HINT if exc.denied else _ONLY_OURS}") from None
    return handle


def journal_sha256(path: Path, digest: hashlib._Hash | None = None) -> hashlib._Hash:
    """``digest`` (a new SHA-256 when None) updated with the complete lines of journal ``path`` (none when it
    does not exist): a torn last line is left out, as loading ignores it. A named pipe or a device there is a
    :class:`~oloproof_nb.errors.RunDirError` (:func:`open_journal`).
    """
    digest = hashlib.sha256() if digest is None else digest
    handle = open_journal(path)
    if handle is None:
        return digest
    with handle:
        # the bytes after the last newline read so far, in the pieces read: a line of many chunks (a case record
        # holding a 100 MiB answer) is not copied again with each chunk (``pending += chunk`` copied it whole each
        # time: quadratic in the line's length)
        pending: list[bytes] = []
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            cut = chunk.rfind(b"\n") + 1
            if cut:
                for piece in pending:
                    digest.update(piece)
                digest.update(chunk[:cut])
                pending = [chunk[cut:]]
            else:
                pending.append(chunk)
    return digest


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
    handle = open_journal(path)
    if handle is None:
        return
    offset = 0
    with handle:
        for lineno, raw in enumerate(handle, start=1):
            if not raw.endswith(b"\n"):
                break
            yield lineno, offset, raw
            offset += len(raw)


def complete_end(path: Path, size: int) -> int:
    """The byte where the complete lines of the first ``size`` bytes of ``path`` end (0: none, or no file).

    What a reader of the file when it was ``size`` bytes long took: its lines, not a torn last line's bytes,
    which a resume cuts and writes other lines over (so a line ending within ``size`` may be newer).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "j.jsonl"
    >>> _ = path.write_bytes(b'{"a":1}\\n{"b":2}\\n{"c"')
    >>> complete_end(path, 20), complete_end(path, 16), complete_end(path, 7)
    (16, 16, 0)
    """
    handle = open_journal(path)
    if handle is None:
        return 0
    with handle:
        end = size
        while end > 0:
            start = max(0, end - (1 << 16))
            handle.seek(start)
            cut = handle.read(end - start).rfind(b"\n")
            if cut >= 0:
                return start + cut + 1
            end = start
    return 0
