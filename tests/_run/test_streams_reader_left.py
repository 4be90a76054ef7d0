"""The standard streams of the processes that run the system (``oloproof_nb/_run/streams.py``)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from oloproof_nb._run.streams import SystemStream


def test_a_stream_whose_reader_left_takes_writes_and_points_its_descriptor_at_devnull() -> None:
    """The system's ``print`` after ``2>&1 | head``: no ``BrokenPipeError``, and the descriptor (which a subprocess of
    the system inherits) is /dev/null from then on. Unwrapped, the same write raises (the bug this catches)."""
    read, write = os.pipe()
    os.close(read)  # the reader left
    raw = io.TextIOWrapper(io.FileIO(write, "w"), encoding="utf-8")
    try:
        with pytest.raises(BrokenPipeError):  # what the system got before
            raw.write("x" * 100_000)
            raw.flush()
        stream = SystemStream(raw)
        assert stream.write("y" * 100_000) == 100_000
        stream.flush()
        assert stream.gone
        assert os.readlink(f"/proc/self/fd/{write}") == os.devnull
        assert stream.write("after\n") == 6  # later writes go nowhere, without an error
        os.write(write, b"raw")  # and so does the descriptor itself
    finally:
        raw.close()


def test_other_errors_of_a_stream_are_the_systems_as_anywhere() -> None:
    """Only a reader that left is taken care of: a stream the system closed itself raises as it would anywhere."""
    raw = io.StringIO()
    stream = SystemStream(raw)
    raw.close()
    with pytest.raises(ValueError):
        stream.write("late")
    assert not stream.gone


def test_a_stream_closed_before_the_process_started_takes_every_write() -> None:
    """``sys.stderr`` is None when descriptor 2 was closed at start: ``sys.stderr.write`` raised AttributeError."""
    stream = SystemStream(None)
    assert stream.write("lost") == 4
    stream.flush()


def test_closed_standard_descriptors_are_held_by_devnull(tmp_path: Path) -> None:
    """``open_standard_descriptors`` in a process started with 1 and 2 closed: the next pipe gets numbers above 2
    (before, 1 and 2: the run's pipe took the standard streams' numbers), and 1 and 2 are /dev/null."""
    out = tmp_path / "fds.txt"
    code = ("import os, sys; from oloproof_nb._run.streams import open_standard_descriptors; "
            "open_standard_descriptors(); r, w = os.pipe(); "
            "open(sys.argv[1], 'w').write(' '.join([str(r), str(w), os.readlink('/proc/self/fd/1'), "
            "os.readlink('/proc/self/fd/2')]))")
    done = subprocess.run(["sh", "-c", 'exec "$@" >&- 2>&-', "sh", sys.executable, "-c", code, str(out)], timeout=60)
    assert done.returncode == 0
    r, w, one, two = out.read_text(encoding="utf-8").split()
    assert int(r) > 2 and int(w) > 2
    assert one == two == os.devnull
