"""The live columnar copy: a copy that fails as it is put in place leaves nothing behind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _frame_checks import NAMES, journal_frames

import oloproof_nb as op
from oloproof_nb._analysis import columnar


def test_a_live_copy_failing_at_commit_leaves_no_temporary_folder(make_suite: Any, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills as the live copy is put in place (``CopyWriter.commit`` raises OSError): the copy is dropped,
    its temporary folder ``frames.tmp-…`` removed (before: left in the run folder for good, the process being
    alive), and the run loads from a copy built from the journal."""
    cases = [{"id": f"c{i}", "input": {"answer": i, "writes": [{"path": ["n"], "value": i + 1}]},
              "initial_state": {"n": 0}, "expected": {"answer": i}} for i in range(5)]
    folder = make_suite(cases)
    original = columnar.CopyWriter.commit
    calls: list[Path] = []

    def full_disk_once(self: Any) -> None:
        calls.append(self.tmp)
        if len(calls) == 1:  # the live copy's; the copy load_run builds from the journal then goes through
            assert self.tmp.is_dir()
            raise OSError(28, "No space left on device")
        original(self)

    monkeypatch.setattr(columnar.CopyWriter, "commit", full_disk_once)
    out = tmp_path / "run"
    run = op.run(op.load_suite(folder), out=out, progress=False)
    assert len(calls) == 2  # the live copy failed, so the journal was converted
    assert sorted(p.name for p in out.iterdir() if p.name.startswith("frames")) == ["frames"]
    assert not calls[0].exists()
    assert columnar.is_fresh(out)
    expected = journal_frames(run)
    for name in NAMES:
        pd.testing.assert_frame_equal(getattr(run, name), expected[name], obj=f"run.{name}")
