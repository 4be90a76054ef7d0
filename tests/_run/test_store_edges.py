"""Edges the other tests did not pin (found by mutation testing) for the JSONL journal reader and the torn-tail cut
of oloproof_nb._run.store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof_nb._run.store import _truncate_torn_tail, read_jsonl
from oloproof_nb.errors import RunDirError


def test_a_damaged_line_after_the_first_batch_is_named_by_its_own_line_number(tmp_path: Path) -> None:
    # 600 good records, then a damaged one: it is line 601 of the file (counted by hand), past the first batch of 512
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps({"i": i}) + "\n" for i in range(600)) + "{not json\n", encoding="utf-8")
    with pytest.raises(RunDirError, match=r"line 601: a stored record is not valid JSON"):
        list(read_jsonl(path))


def test_one_line_holding_two_objects_is_damage_not_two_records(tmp_path: Path) -> None:
    # line 2 is '{"b":2},{"c":3}': no JSON object, though the batch read as one array would take it for two
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2},{"c":3}\n{"d":4}\n')
    with pytest.raises(RunDirError, match=r"line 2: a stored record is not valid JSON"):
        list(read_jsonl(path))


@pytest.mark.parametrize("line", [b"[1, 2]", b"3", b'"text"', b"null"])
def test_a_line_that_is_json_but_no_object_is_damage(tmp_path: Path, line: bytes) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"a":1}\n' + line + b"\n")
    with pytest.raises(RunDirError, match=r"line 2: a stored record is not a JSON object"):
        list(read_jsonl(path))


def test_a_journal_that_is_only_a_torn_line_is_cut_to_nothing(tmp_path: Path) -> None:
    # the process died while writing the very first record: no newline anywhere, so nothing of it is kept, and a
    # record appended on resume starts a line of its own
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"case": {"id": "c1", "ep')
    _truncate_torn_tail(path)
    assert path.read_bytes() == b""
    with path.open("ab") as handle:
        handle.write(b'{"a":1}\n')
    assert list(read_jsonl(path)) == [{"a": 1}]
