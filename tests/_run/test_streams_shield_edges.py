"""``oloproof_nb/_run/streams.py``: edges ``test_streams_reader_left.py`` leaves open."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._run.streams import SystemStream, shield_standard_streams


def test_all_three_closed_descriptors_are_devnull_and_stdin_reads_as_empty(tmp_path: Path) -> None:
    """Started with 0, 1 and 2 closed (``<&- >&- 2>&-``): each is /dev/null afterwards, descriptor 0 reads as an
    empty file (b"", not EBADF: it is opened for reading too) and 1 takes a write. Catches a loop that skips 0 (the
    run's pipe took 0) and a /dev/null opened write-only (a system's ``input()`` got ``OSError: Bad file
    descriptor`` instead of EOF)."""
    out = tmp_path / "fds.txt"
    code = ("import os, sys; from oloproof_nb._run.streams import open_standard_descriptors; "
            "open_standard_descriptors(); links = [os.readlink(f'/proc/self/fd/{fd}') for fd in (0, 1, 2)]; "
            "read = os.read(0, 10); wrote = os.write(1, b'abc'); "
            "open(sys.argv[1], 'w').write(repr((links, read, wrote)))")
    done = subprocess.run(["sh", "-c", 'exec "$@" <&- >&- 2>&-', "sh", sys.executable, "-c", code, str(out)],
                          timeout=60)
    assert done.returncode == 0
    assert out.read_text(encoding="utf-8") == repr(([os.devnull] * 3, b"", 3))


class _FullDisk(io.TextIOBase):
    """A text stream whose every write fails as a full disk does."""

    def write(self, text: str) -> int:
        raise OSError(28, "No space left on device")


def test_a_full_disk_is_the_systems_error_as_anywhere() -> None:
    """Only ``BrokenPipeError`` (a reader that left) is swallowed: ENOSPC reaches the system (module docstring:
    "any other error of a write (a full disk) is the one the system would get anywhere")."""
    stream = SystemStream(_FullDisk())
    with pytest.raises(OSError) as err:
        stream.write("x")
    assert err.value.errno == 28 and not isinstance(err.value, BrokenPipeError)
    assert not stream.gone


def test_a_reader_that_left_found_by_flush_is_no_error() -> None:
    """A short print sits in the buffer; the broken pipe shows at ``flush`` (``print(..., flush=True)``), which
    must not raise either, and the descriptor is /dev/null from then on."""
    read, write = os.pipe()
    os.close(read)
    raw = io.TextIOWrapper(io.FileIO(write, "w"), encoding="utf-8")
    try:
        stream = SystemStream(raw)
        assert stream.write("short\n") == 6  # buffered: nothing reached the pipe yet
        assert not stream.gone
        stream.flush()
        assert stream.gone
        assert os.readlink(f"/proc/self/fd/{write}") == os.devnull
        stream.flush()  # and again: nothing
    finally:
        raw.close()


def test_shielding_twice_wraps_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The docstring's "(once)": a second call (a worker started in a run process) leaves the wrapper as it is."""
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    shield_standard_streams()
    first: Any = sys.stdout, sys.stderr
    shield_standard_streams()
    assert (sys.stdout, sys.stderr) == first
    assert isinstance(sys.stdout, SystemStream) and isinstance(sys.stderr, SystemStream)
    print("seen")
    assert out.getvalue() == "seen\n"
