"""The journal of a run directory read lazily, one case at a time (oloproof_nb._analysis.journal)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._analysis import journal as journal_module
from oloproof_nb._analysis.journal import Journal
from oloproof_nb._run.states import StateReader
from oloproof_nb._run.store import dumps
from oloproof_nb.errors import CopyChangedError


def _line(index: int, case_id: str) -> bytes:
    record = {"index": index, "case": {"id": case_id, "input": "q"}, "status": "ok", "trajectory": {"answer": "ok"}}
    return dumps(record).encode("utf-8") + b"\n"


def _journal(directory: Path, lines: list[bytes], guard: Any = None) -> Journal:
    (directory / "cases.jsonl").write_bytes(b"".join(lines))
    return Journal(directory, StateReader(directory), guard)


class _Copy:
    """A stand-in for the Run's check: the copy in place is replaced once ``replaced`` is set."""

    def __init__(self) -> None:
        self.replaced = False
        self.calls = 0

    def check(self) -> None:
        self.calls += 1
        if self.replaced:
            raise CopyChangedError("the copy was replaced")


def test_cases_indexed_again_keep_the_end_they_were_first_indexed_to(tmp_path: Path) -> None:
    """A journal indexed at 3 records (none pinned) whose lines moved under it (``record``
    finds another case where its line was, and indexes the file again) reads the 3 records of its moment, not
    the fourth appended since: the first index pins its end."""
    lines = [_line(i, f"case-{'x' * i}") for i in range(3)]  # lines of different lengths: a moved line is seen
    journal = _journal(tmp_path, lines)
    assert list(journal.case_index()) == [(f"case-{'x' * i}", 1) for i in range(3)]
    (tmp_path / "cases.jsonl").write_bytes(lines[1] + lines[0] + lines[2] + _line(3, "later"))
    assert journal.record("case-x")["case"]["id"] == "case-x"  # type: ignore[index]
    assert sorted(journal.case_index()) == sorted((f"case-{'x' * i}", 1) for i in range(3))
    assert journal.record("later") is None


def _replaced_during(monkeypatch: pytest.MonkeyPatch, name: str, copy: _Copy) -> None:
    """Journal's ``name`` (a reader) does its read, then the copy is replaced: only a check after it sees that."""
    original = getattr(journal_module, name)

    def read_then_replace(*args: Any) -> Any:
        result = original(*args)
        if isinstance(result, Iterator):
            result = list(result)
        copy.replaced = True
        return result
    monkeypatch.setattr(journal_module, name, read_then_replace)


@pytest.mark.parametrize("reader, read", [
    ("_complete_lines", lambda journal: journal.case_index()),
    ("_read_lines", lambda journal: journal.record("c1")),
    ("_read_lines", lambda journal: journal.stored_cases([("c0", 1), ("c1", 1)])),
    ("_read_lines", lambda journal: journal.records()),
    ("read_jsonl", lambda journal: journal.replay_flags()),
])
def test_a_copy_replaced_while_the_journal_is_read_is_caught_after_the_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: str, read: Any) -> None:
    """The journal is "checked before and after each read": a copy put in place while the
    lines were read (the check before passed) refuses what was read, for the index, a record, the stored cases,
    every record and the replay records."""
    copy = _Copy()
    journal = _journal(tmp_path, [_line(0, "c0"), _line(1, "c1")], copy.check)
    (tmp_path / "replays.jsonl").write_bytes(b"")
    if reader != "_complete_lines":
        journal.case_index()
    _replaced_during(monkeypatch, reader, copy)
    with pytest.raises(CopyChangedError, match="the copy was replaced"):
        read(journal)
    assert copy.calls >= 2


def test_a_deep_copied_journal_keeps_its_guard_on_the_copied_owner(tmp_path: Path) -> None:
    """A journal's guard is a weak reference, which ``copy.deepcopy`` (and ``pickle``) refused; the copy
    of a journal (with its owner, as in a deep-copied Run) is guarded by the owner's copy, held weakly again."""
    owner = _Copy()
    journal = _journal(tmp_path, [_line(0, "c0")], owner.check)
    owner2, journal2 = copy.deepcopy((owner, journal))
    assert journal2.guard is not None and journal2.guard.__self__ is owner2  # type: ignore[attr-defined]
    assert list(journal2.case_index()) == [("c0", 1)] and owner2.calls >= 2 and owner.calls == 0
    owner2.replaced = True
    with pytest.raises(CopyChangedError):
        journal2.record("c0")
    del owner2
    assert journal2.guard is None  # held weakly again


@pytest.mark.parametrize("indexed_first", [False, True])
def test_a_journal_cut_below_its_pinned_end_refuses_its_records(tmp_path: Path, indexed_first: bool) -> None:
    """A loaded Run's journal pinned to the lines its copy was built from and then cut (half of
    ``cases.jsonl`` left) indexed the lines left: 24 records beside the 48 rows of ``run.cases``, and
    ``run.record`` said a case of its frames was "no case … in run". It is refused now, in one line; a journal
    that only grew since (a record appended, a torn line) is read to its pin, as before."""
    lines = [_line(i, f"c{i}") for i in range(4)]
    journal = _journal(tmp_path, lines)
    journal.pin(len(b"".join(lines)))
    (tmp_path / "cases.jsonl").write_bytes(b"".join(lines) + _line(4, "c4") + b'{"torn')
    assert list(journal.case_index()) == [(f"c{i}", 1) for i in range(4)]
    if not indexed_first:
        journal._forget()
    (tmp_path / "cases.jsonl").write_bytes(lines[0] + lines[3] + lines[2])  # cut, and a line moved
    read = journal.case_index if not indexed_first else (lambda: journal.record("c1"))
    with pytest.raises(CopyChangedError, match=r"cases\.jsonl: its records end at byte \d+, not at byte \d+ as when "
                                               r"the run was loaded .*load it again") as caught:
        read()
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("size", [4096, 1])
def test_every_record_of_a_journal_cut_after_it_was_indexed_is_refused_saying_so(tmp_path: Path, size: int) -> None:
    """The README's claim ("once cases.jsonl is cut below those lines they stop too, saying so"): ``run.records``
    of a loaded Run, its journal indexed, whose ``cases.jsonl`` was then cut read the lines indexed past the file's
    end: 'line 3: a stored record is not valid JSON (Expecting value); the run directory is damaged', naming a line
    the file no longer has. It says what ``record`` says: cut since, load it again (by chunks of one too, where the
    first two chunks are still in the file)."""
    lines = [_line(i, f"c{i}") for i in range(4)]
    journal = _journal(tmp_path, lines)
    journal.pin(len(b"".join(lines)))
    assert len(journal.case_index()) == 4
    (tmp_path / "cases.jsonl").write_bytes(lines[0] + lines[1])  # half of it left
    with pytest.raises(CopyChangedError, match=r"cases\.jsonl: its records end at byte \d+, not at byte \d+ as when "
                                               r"the run was loaded .*load it again") as caught:
        [record for chunk, _, _ in journal.chunks(size) for record in chunk]
    assert "\n" not in str(caught.value)


def test_a_damaged_record_of_a_journal_not_cut_is_named_as_damage_not_left_out(tmp_path: Path) -> None:
    """A record whose first bytes index it but whose end is damaged (the file as long as when it
    was indexed: not cut) is refused as the damage it is, naming its line; its chunk was never left out."""
    from oloproof_nb.errors import RunDirError

    lines = [_line(i, f"c{i}") for i in range(4)]
    journal = _journal(tmp_path, lines)
    journal.pin(len(b"".join(lines)))
    assert len(journal.case_index()) == 4
    damaged = lines[1][:-2] + b"]\n"  # the same length, its last brace gone
    (tmp_path / "cases.jsonl").write_bytes(lines[0] + damaged + lines[2] + lines[3])
    with pytest.raises(RunDirError, match=r"cases\.jsonl: line 2: a stored record is not valid JSON .*damaged") as c:
        [record for chunk, _, _ in journal.chunks(1) for record in chunk]
    assert not isinstance(c.value, CopyChangedError)
