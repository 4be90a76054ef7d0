"""The standard streams of a process that runs the system, when their reader may leave (``oloproof run … | head``).

What the system prints goes to the command's standard error (``oloproof run`` points the run process's standard
output there too). A reader that has left (``2>&1 | head``, a hook runner that closed its pipe) is the harness's
business, not the system's: every ``print`` of the system raised ``BrokenPipeError`` inside its case, so a correct
system's cases were recorded ``error`` and the gate said BLOCK (or its constructor's greeting stopped the run).
:func:`shield_standard_streams` makes what is written after the reader left go nowhere instead; any other error
of a write (a full disk) is the one the system would get anywhere.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["SystemStream", "open_standard_descriptors", "shield_standard_streams", "to_devnull"]


def open_standard_descriptors() -> None:
    """Open ``/dev/null`` on each of the descriptors 0, 1 and 2 that is closed (``oloproof run … >&- 2>&-``).

    A command started with them closed gave their numbers to the first files and pipes it opened: the pipe on
    which ``oloproof run``'s run process reports took 1 and 2, so the system's prints were written into it among
    the run's messages, and with 0 and 1 closed the run process, pointing its descriptor 1 at stderr, cut its own
    end of that pipe. The Python streams of a closed descriptor stay ``None`` (what is written to them is lost, as
    before); only the numbers are held. For the command's process only: a library leaves its caller's alone.
    """
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        try:
            null = os.open(os.devnull, os.O_RDWR)
        except OSError:
            return
        if null != fd:  # never so (the lower numbers are open, and a new descriptor takes the lowest free one)
            os.dup2(null, fd)
            os.close(null)


def to_devnull(stream: Any) -> None:
    """Point the file descriptor of ``stream`` at ``/dev/null``: what is still buffered, later writes (the
    system's, the interpreter's last flush, a child process that inherits the descriptor) go there, never to an
    error (a flush that fails at exit turns any exit code into 120)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


class SystemStream:
    """A standard stream the system writes to: as ``stream``, except that once its reader has left
    (``BrokenPipeError``) what is written goes to ``/dev/null`` (:func:`to_devnull`), with no error.

    Parameters
    ----------
    stream
        The stream wrapped (``sys.stdout``, ``sys.stderr``); None (a stream closed before the process started)
        takes every write and keeps nothing.
    """

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.gone = stream is None

    def write(self, text: str) -> int:
        """Write ``text``; after the reader left, drop it. Returns ``len(text)``, as a text stream does."""
        if not self.gone:
            try:
                self._put(text)
            except BrokenPipeError:
                self._leave()
            except OSError as exc:
                self._failed(exc)
                raise
        return len(text)

    def writelines(self, lines: Any) -> None:
        """Write each of ``lines`` as :meth:`write` does (else ``writelines`` would reach the stream itself, and
        its ``BrokenPipeError`` the system)."""
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        """Flush the stream; after the reader left, nothing."""
        if not self.gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._leave()
            except OSError as exc:
                self._failed(exc)
                raise

    def _put(self, text: str) -> None:
        """Hand ``text`` to the stream (a subclass may write it otherwise)."""
        self._stream.write(text)

    def _failed(self, exc: OSError) -> None:
        """Another error of a write or a flush (a full disk): raised as it is, the one a writer gets anywhere; a
        subclass may raise another in its place."""

    def _leave(self) -> None:
        self.gone = True
        to_devnull(self._stream)
        try:  # what is still buffered goes to /dev/null now
            self._stream.flush()
        except (OSError, ValueError):
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def shield_standard_streams() -> None:
    """Wrap ``sys.stdout`` and ``sys.stderr`` of this process in :class:`SystemStream` (once): for the process
    that runs the system (``oloproof run``'s run process, an ``isolation: process`` worker), never the caller's."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if not isinstance(stream, SystemStream):
            setattr(sys, name, SystemStream(stream))
