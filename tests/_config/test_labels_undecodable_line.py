"""A label file's byte that is not UTF-8 is named with its line, and the lone-CR clause is added when that line, up
to the byte and with it, holds a carriage return with more after it: a CR on another line is no reason. The digest
read with the judgements is of the file's bytes, a byte-order mark and CR LF endings included."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from oloproof_nb._config.labels import read_labels
from oloproof_nb.errors import LabelFileError

HINT = "; its lines end with a lone CR"


def _error(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    with pytest.raises(LabelFileError) as caught:
        read_labels(path)
    return str(caught.value)


def test_a_byte_right_after_a_lone_cr_is_on_a_lone_cr_line(tmp_path: Path) -> None:
    # one LF-less line of two records: the CR ends the first, and the bad byte starts the second
    said = _error(tmp_path / "t.jsonl", b'{"case_id": "a~t", "valid": true}\r\xff{"case_id": "b~t", "valid": true}\r')
    assert ": line 1: not UTF-8 text (invalid start byte)" in said and HINT in said


def test_a_cr_on_an_earlier_line_is_no_reason(tmp_path: Path) -> None:
    # line 2 holds a CR as JSON blank space; the bad byte is on line 3, which has none
    said = _error(tmp_path / "t.jsonl", b'{"case_id": "a~t", "valid": true}\n{"case_id": "b~t",\r"valid": true}\n'
                                        b'{"case_id": "c\xff~t", "valid": true}\n')
    assert said.endswith(": line 3: not UTF-8 text (invalid start byte)")


def test_a_cr_on_a_later_line_is_no_reason(tmp_path: Path) -> None:
    said = _error(tmp_path / "t.jsonl", b'{"case_id": "\xff~t", "valid": true}\n{"case_id": "b~t",\r"valid": true}')
    assert said.endswith(": line 1: not UTF-8 text (invalid start byte)")


def test_the_digest_is_of_the_bytes_read(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"case_id": "a~t", "valid": true}\r\n')
    judgements, digest = read_labels(path)
    assert [j["case_id"] for j in judgements] == ["a~t"]
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
