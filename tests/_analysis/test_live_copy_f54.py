"""Review F54 on P6's ``LiveCopy.commit``: a disk error while the copy is put in place is still no error of the run
(the copy is dropped, ``commit`` says it was not written, nothing is left in the run folder, and the run loads from
a copy built from its journal), while anything else is raised."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _frame_checks import NAMES, journal_frames

import oloproof_nb as op
from oloproof_nb._analysis import columnar
from oloproof_nb._analysis.live_copy import LiveCopy
from oloproof_nb._run.runner import run_suite
from oloproof_nb.examples import init_example


def test_a_disk_error_putting_the_copy_in_place_drops_it_without_raising(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[Any, str | None]] = []

    class Spy:
        def start(self, directory: Path) -> None:
            pass

        def add(self, record: Any, state_ref: str | None, initial_ref: str | None = None) -> None:
            seen.append((record, state_ref))

    directory = run_suite(op.load_suite(init_example("stateful-agent", tmp_path / "suite")), out=tmp_path / "run",
                          sink=Spy())
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
    assert sorted(p.name for p in directory.iterdir() if p.name.startswith("frames")) == []
    monkeypatch.setattr(columnar.CopyWriter, "commit", original)
    run = op.load_run(directory)
    assert len(seen) == 48 and len(run.cases) == 48  # the example's 48 case runs, as the runner appended them
    expected = journal_frames(run)
    for name in NAMES:
        pd.testing.assert_frame_equal(getattr(run, name), expected[name], obj=f"run.{name}")
