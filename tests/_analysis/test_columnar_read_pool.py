"""The columnar copy's peak memory: frame files are read into :func:`columnar.read_pool`, not into the
process's default Arrow pool (see ``benchmarks/README.md`` section 4 for what that saves), and the frames read
so are the journal's."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from _frame_checks import NAMES, everything_suite, journal_frames

import oloproof_nb as op
from oloproof_nb._analysis import columnar
from oloproof_nb._analysis.columns import TEXT


def test_frames_are_read_into_the_read_pool_and_equal_the_journal(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader that ignored the pool (``pq.read_table``: the default pool) leaves the counting pool empty."""
    folder = everything_suite(tmp_path / "suite")
    op.run(folder, out=tmp_path / "run", progress=False)
    default = pa.default_memory_pool().backend_name
    counting = pa.proxy_memory_pool(pa.system_memory_pool())
    monkeypatch.setattr(columnar, "read_pool", lambda: counting)
    run = op.load_run(tmp_path / "run")
    assert counting.bytes_allocated() == 0  # nothing read yet
    expected = journal_frames(run)
    held = {name: getattr(run, name) for name in NAMES}
    assert counting.max_memory() > 0
    if TEXT == "str" and _strings_kept_by_pandas():  # the text columns are the Arrow buffers read, held in the pool
        text_bytes = sum(frame[c].array.__arrow_array__().nbytes for frame in held.values() for c in frame.columns
                         if str(frame[c].dtype) == TEXT)
        assert text_bytes > 0 and counting.bytes_allocated() >= text_bytes
    assert pa.default_memory_pool().backend_name == default  # the process's default pool is left as it was
    for name in NAMES:
        pd.testing.assert_frame_equal(held[name], expected[name], obj=f"run.{name}")
    assert len(held["replays"]) and len(held["pairs"]) and len(held["receipts"])



def _strings_kept_by_pandas() -> bool:
    """Whether pandas' ``str`` column holds the very Arrow buffers it is made from (pyarrow 26 with pandas 3: yes;
    pyarrow 16.1: no, ``to_pandas`` copies them into the default pool)."""
    column = pa.chunked_array([pa.array(["a", "b"], type=pa.large_string())])
    held = column.to_pandas().array.__arrow_array__()
    return bool(held.chunk(0).buffers()[2].address == column.chunk(0).buffers()[2].address)
