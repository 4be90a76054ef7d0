"""``_analysis/run_copy``: opening a copy others replace, runs held in memory and conversion errors (edges the
columnar-copy tests leave unpinned).

Each expectation is a hand count (the attempts another process spoils) or read from the run's files directly.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import oloproof_nb as op
from oloproof_nb._analysis import columnar, run_copy
from oloproof_nb._analysis.columns import FRAMES
from oloproof_nb._analysis.run import Run
from oloproof_nb._run.runner import run_suite

CASES = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}} for i in range(3)]


def _spoiled(monkeypatch: pytest.MonkeyPatch, times: int) -> None:
    """Another process takes the copy away at each of the first ``times`` looks: no fresh copy is found, and the
    one just written is gone again when looked for."""
    for name in ("fresh_source", "copy_source"):
        real: Callable[..., Any] = getattr(run_copy, name)
        left = [times]

        def look(directory: Path, real: Callable[..., Any] = real, left: list[int] = left) -> Any:
            if left[0] > 0:
                left[0] -= 1
                return None
            return real(directory)

        monkeypatch.setattr(run_copy, name, look)


def test_opening_a_copy_tries_five_times_while_others_replace_it(make_suite: Callable[..., Path], tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose columnar copy another process spoils at four looks in a row opens at the
    fifth (by hand: four attempts lost, one left), with the cases of its journal (3); spoiled at every look it is
    one error naming the loop, never frames read from whatever is in place."""
    op.run(make_suite(CASES), out=tmp_path / "run", progress=False)
    _spoiled(monkeypatch, 4)
    assert list(op.load_run(tmp_path / "run").cases["case_id"]) == ["c0", "c1", "c2"]
    monkeypatch.undo()
    _spoiled(monkeypatch, 5)
    with pytest.raises(op.RunDirError, match="its columnar copy kept being replaced while it was opened"):
        len(op.load_run(tmp_path / "run").cases)


def test_a_run_held_in_memory_writes_no_copy(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """``write_columnar`` on a Run held in memory (an Inspect AI log read as a run) writes
    nothing where its source lies (the folder stays empty, listed directly) and keeps the frames it holds
    (``pandas.testing`` against the run they were taken from); it never reads that folder as a run directory."""
    run = op.run(make_suite(CASES), out=tmp_path / "run", progress=False)
    source = tmp_path / "logs"
    source.mkdir()
    held = Run.held(source, run.manifest, run.config, run._journal, {name: getattr(run, name) for name in FRAMES})
    held.write_columnar()
    assert list(source.iterdir()) == []
    pd.testing.assert_frame_equal(held.cases, run.cases)


def test_frames_kept_in_memory_give_way_to_the_copy_written_later(make_suite: Callable[..., Path], tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A Run whose folder could not be written kept its frames in memory (5 cases); the run
    resumed to its end (8 records in ``cases.jsonl``, counted directly) and the folder writable again,
    ``write_columnar`` builds the copy and every frame comes from it: 8 cases, never the 5 held before."""
    suite = op.load_suite(make_suite([{"id": f"c{i}", "input": {"answer": "ok", "n": i}} for i in range(8)]))

    def stop_after_five(done: int, total: int) -> None:
        if done == 5:
            raise KeyboardInterrupt  # the user's Ctrl-C: an unfinished run of 5 records

    with pytest.raises(KeyboardInterrupt):
        op.run(suite, out=tmp_path / "run", progress=stop_after_five)

    def read_only(self: Any, directory: Path, fingerprint: Any) -> None:
        raise PermissionError(13, "Permission denied", str(directory))

    monkeypatch.setattr(columnar.CopyWriter, "__init__", read_only)
    with pytest.warns(run_copy.ColumnarCopyWarning):
        run = op.load_run(tmp_path / "run")
        assert len(run.cases) == 5
    monkeypatch.undo()
    run_suite(suite, out=tmp_path / "run", resume=True)  # the runner alone: it writes no columnar copy
    assert len((tmp_path / "run" / "cases.jsonl").read_text(encoding="utf-8").splitlines()) == 8
    run.write_columnar()
    assert sorted(run.cases["case_id"]) == [f"c{i}" for i in range(8)]


def test_a_conversion_error_no_record_explains_is_raised_never_a_short_copy(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A conversion that fails on a whole chunk while each of its 3 records converts alone (not
    the journal's fault: here Arrow refusing chunks of more than one item) is raised as it is, and no copy is put
    in place: ``frames/`` is absent, listed directly, never a copy missing the frames after the failure."""
    op.run(make_suite(CASES), out=tmp_path / "run", progress=False)
    shutil.rmtree(tmp_path / "run" / "frames")
    real = run_copy.to_arrow

    def chunks_refused(spec: Any, items: list[Any], refs: Any) -> Any:
        if len(items) > 1:
            raise ValueError("Arrow refused the chunk")
        return real(spec, items, refs)

    monkeypatch.setattr(run_copy, "to_arrow", chunks_refused)
    with pytest.raises(ValueError, match="^Arrow refused the chunk$"):
        len(op.load_run(tmp_path / "run").cases)
    assert not (tmp_path / "run" / "frames").exists()
