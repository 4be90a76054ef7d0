"""The journal's digest over lines longer than the chunk it reads (1 MiB): the SHA-256 of every complete line,
a torn last line left out, whatever the layout, checked against ``hashlib`` over the file's bytes up to its last
newline. A line of many chunks was kept as ``pending += chunk`` (each chunk copied the whole line again: quadratic in
the line's length); kept as pieces now, the digest must stay the same."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from oloproof_nb._run.lines import journal_sha256

MIB = 1 << 20


def _reference(data: bytes) -> str:
    return hashlib.sha256(data[: data.rfind(b"\n") + 1]).hexdigest()


@pytest.mark.parametrize("layout", [
    [3 * MIB + 5],                       # one line of four chunks, complete
    [10, 3 * MIB + 5, 7],                # a long line between short ones
    [MIB - 1, MIB, MIB + 1],             # lines ending one byte before, at and after a chunk's end
    [2 * MIB, None],                     # a long line, then a torn line of its own length
    [5, None],                           # a torn line of several chunks after a short line
    [None],                              # no complete line at all
])
def test_the_digest_of_long_lines_is_that_of_the_complete_lines(tmp_path: Path, layout: list[int | None]) -> None:
    """``None``: a torn last line of 2.5 MiB (no newline). Each complete line of ``n`` bytes ends in its newline."""
    data = b"".join(b"t" * (5 * MIB // 2) if n is None else bytes([97 + i % 26]) * (n - 1) + b"\n"
                    for i, n in enumerate(layout))
    path = tmp_path / "cases.jsonl"
    path.write_bytes(data)
    assert journal_sha256(path).hexdigest() == _reference(data)


def test_the_digest_given_is_the_one_updated(tmp_path: Path) -> None:
    """A resume passes the run's running digest and reads it afterwards, not the return value: it is updated in place
    with the complete lines only (its first bytes given before, as the run's digest holds the lines written)."""
    data = b"x" * (2 * MIB) + b"\n" + b"y" * (MIB + 3)
    path = tmp_path / "cases.jsonl"
    path.write_bytes(data)
    digest = hashlib.sha256(b"before\n")
    journal_sha256(path, digest)
    assert digest.hexdigest() == hashlib.sha256(b"before\n" + data[: 2 * MIB + 1]).hexdigest()


def test_no_file_leaves_the_digest_as_it_was(tmp_path: Path) -> None:
    assert journal_sha256(tmp_path / "missing.jsonl").hexdigest() == hashlib.sha256().hexdigest()
