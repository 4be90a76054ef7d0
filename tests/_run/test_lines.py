"""The complete lines of a run journal: the SHA-256 a run keeps of what it wrote (oloproof_nb._run.lines)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from oloproof_nb._run.lines import journal_sha256


def test_the_journal_digest_is_of_the_complete_lines_across_reads(tmp_path: Path) -> None:
    """The file is read 1 MiB at a time: a line that runs across one read (or across two: a line of 2.5 MiB)
    is hashed whole, and only the torn last line is left out. Checked against hashlib over the file's bytes up to
    its last newline (the bytes carried from one read to the next could otherwise be dropped unseen)."""
    lines = [b'{"n":%d,"pad":"%s"}\n' % (i, b"x" * 700_000) for i in range(3)]  # lines across the 1 MiB reads
    lines.append(b'{"long":"' + b"y" * 2_600_000 + b'"}\n')  # one line over two whole reads
    data = b"".join(lines) + b'{"torn":'
    path = tmp_path / "cases.jsonl"
    path.write_bytes(data)
    complete = data[: data.rfind(b"\n") + 1]
    assert len(complete) > 4 << 20 and not complete.endswith(b'{"torn":')
    assert journal_sha256(path).hexdigest() == hashlib.sha256(complete).hexdigest()
    seeded = journal_sha256(path, hashlib.sha256(b"written before\n"))  # a resumed run's digest goes on from there
    assert seeded.hexdigest() == hashlib.sha256(b"written before\n" + complete).hexdigest()


def test_a_missing_journal_leaves_the_digest_it_was_given(tmp_path: Path) -> None:
    before = hashlib.sha256(b"written before\n")
    assert journal_sha256(tmp_path / "replays.jsonl", before).hexdigest() == \
        hashlib.sha256(b"written before\n").hexdigest()
    assert journal_sha256(tmp_path / "replays.jsonl").hexdigest() == hashlib.sha256(b"").hexdigest()


def test_the_complete_lines_of_a_journal_end_at_its_last_newline_within_a_size(tmp_path: Path) -> None:
    """Where the complete lines of the first ``size`` bytes end, counted by hand, including a last line
    longer than one 64 KiB read and a size past the file's end (a file cut since)."""
    from oloproof_nb._run.lines import complete_end

    path = tmp_path / "cases.jsonl"
    first, second = b'{"n":1}\n', b'{"pad":"' + b"x" * 200_000 + b'"}\n'
    path.write_bytes(first + second + b'{"torn":')
    whole = len(first) + len(second)
    assert complete_end(path, whole + 8) == whole  # the torn line's 8 bytes left out
    assert complete_end(path, whole) == whole
    assert complete_end(path, whole - 1) == len(first) == 8  # 200,011 bytes back to the first newline
    assert complete_end(path, 7) == 0
    assert complete_end(path, whole + 1000) == whole
    assert complete_end(tmp_path / "none.jsonl", 100) == 0
