"""``SystemStream.writelines`` after the reader left (it reached the stream itself, whose
``BrokenPipeError`` the system got, though ``write`` was shielded)."""

from __future__ import annotations

import io
import os

from oloproof_nb._run.streams import SystemStream


def test_writelines_after_the_reader_left_raises_nothing() -> None:
    read, write = os.pipe()
    os.close(read)  # the reader left
    raw = io.TextIOWrapper(io.FileIO(write, "w"), encoding="utf-8", write_through=True)
    try:
        stream = SystemStream(raw)
        stream.writelines(["a\n", "b" * 100_000, "c\n"])
        stream.flush()
        assert stream.gone and os.readlink(f"/proc/self/fd/{write}") == os.devnull
    finally:
        raw.close()


def test_writelines_writes_every_line_in_order() -> None:
    raw = io.StringIO()
    SystemStream(raw).writelines(iter(["one\n", "two\n", "three"]))
    assert raw.getvalue() == "one\ntwo\nthree"
