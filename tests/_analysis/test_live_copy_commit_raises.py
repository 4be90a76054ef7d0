"""The live columnar copy: a ``commit`` that raises (not a disk error: a record the copy cannot read,
Ctrl-C) still removes the copy's temporary folder; a disk error is still dropped without raising."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _frame_checks import NAMES, copy_folders, example_run_records, journal_frames

import oloproof_nb as op
from oloproof_nb._analysis import columnar
from oloproof_nb._analysis.live_copy import LiveCopy


def test_a_commit_that_raises_leaves_no_temporary_folder(tmp_path: Path) -> None:
    """A record of the last chunk the copy cannot read (a verdict word no run writes) raises from ``commit`` as
    before, and the copy's temporary folder is removed (before: ``frames.tmp-…`` stayed in the run folder for as
    long as the process lived); the run then loads from a copy built from the journal."""
    directory, seen = example_run_records(tmp_path)
    copy = LiveCopy()
    copy.start(directory)
    for record, ref in seen[:-1]:
        copy.add(record, ref)
    record, ref = seen[-1]
    copy.add({**record, "verdicts": [{**v, "verdict": "FAIL"} for v in record["verdicts"]]}, ref)
    with pytest.raises(ValueError, match="verdict 'FAIL' is not one of the words allowed"):
        copy.commit()
    assert copy_folders(directory) == [] and not copy.usable
    assert copy.commit() is False  # dropped: a second commit writes nothing


@pytest.mark.parametrize("where", ["the last chunk", "putting the copy in place"])
def test_ctrl_c_in_commit_leaves_no_temporary_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     where: str) -> None:
    """Ctrl-C while ``op.run`` finishes the copy: KeyboardInterrupt reaches the user, nothing of the copy is left
    in the run folder, and loading the run builds its frames from the journal."""
    directory, seen = example_run_records(tmp_path)
    original_write, original_commit = columnar.CopyWriter.write, columnar.CopyWriter.commit

    def interrupted_write(self: Any, name: str, table: Any) -> None:
        if name == "steps":
            raise KeyboardInterrupt
        original_write(self, name, table)

    def interrupted_commit(self: Any) -> None:
        raise KeyboardInterrupt

    copy = LiveCopy()
    copy.start(directory)
    for record, ref in seen:
        copy.add(record, ref)  # 48 records: the last chunk is made at commit
    if where == "the last chunk":
        monkeypatch.setattr(columnar.CopyWriter, "write", interrupted_write)
    else:
        monkeypatch.setattr(columnar.CopyWriter, "commit", interrupted_commit)
    with pytest.raises(KeyboardInterrupt):
        copy.commit()
    assert copy_folders(directory) == []
    monkeypatch.setattr(columnar.CopyWriter, "write", original_write)
    monkeypatch.setattr(columnar.CopyWriter, "commit", original_commit)
    run = op.load_run(directory)
    expected = journal_frames(run)
    for name in NAMES:
        pd.testing.assert_frame_equal(getattr(run, name), expected[name], obj=f"run.{name}")


def test_a_disk_error_putting_the_copy_in_place_drops_it_without_raising(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk error while the copy is put in place is still no error of the run: the copy is dropped,
    ``commit`` says it was not written, nothing is left in the run folder, and the run loads from a copy built from
    its journal (a mutant it kills: the disk-error branch dropped, every error raised)."""
    directory, seen = example_run_records(tmp_path)
    copy = LiveCopy()
    copy.start(directory)
    for record, ref in seen:
        copy.add(record, ref)
    original = columnar.CopyWriter.commit

    def full_disk(self: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(columnar.CopyWriter, "commit", full_disk)
    assert copy.commit() is False  # a disk error: dropped, not raised (op.run returns the run)
    assert not copy.usable
    assert copy_folders(directory) == []
    monkeypatch.setattr(columnar.CopyWriter, "commit", original)
    run = op.load_run(directory)
    assert len(seen) == 48 and len(run.cases) == 48  # the example's 48 case runs, as the runner appended them
    expected = journal_frames(run)
    for name in NAMES:
        pd.testing.assert_frame_equal(getattr(run, name), expected[name], obj=f"run.{name}")
