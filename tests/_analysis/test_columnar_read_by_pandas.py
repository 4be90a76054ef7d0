"""The columnar copy read without oloproof_nb: ``pd.read_parquet`` of a frame file gives the frame's dtypes,
whatever the run held (the README's Dask recipe reads the same files)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

import oloproof_nb as op
from oloproof_nb._analysis.columns import FRAMES, JSON
from oloproof_nb.examples import init_example


def _cases(raising: bool) -> list[dict[str, object]]:
    cases: list[dict[str, object]] = [{"id": "c0", "input": {"answer": "ok"}, "initial_state": {},
                                       "expected": {"answer": "ok"}}]
    if raising:  # the scripted system deletes a key the state does not hold: the case ends with status error
        cases.append({"id": "c1", "input": {"answer": "ok", "deletes": [["gone"]]}, "initial_state": {},
                      "expected": {"answer": "ok"}})
    return cases


def _dtypes(frame: pd.DataFrame, name: str) -> dict[str, str]:
    """The dtypes of the columns a frame file holds as values (a JSON column is its text there)."""
    return {c.name: str(frame[c.name].dtype) for c in FRAMES[name].columns if c.dtype != JSON}


def test_a_count_read_by_pandas_is_the_frames_nullable_integer_with_or_without_a_missing_value(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """One run where every case finished and one where a case raised (no tool-call count): ``n_tool_calls`` came
    back ``int64`` from the first file and ``float64`` from the second, as Arrow converts a column with a null
    without the file saying its pandas dtype; both are the frame's ``Int64`` now."""
    read = {}
    for raising in (False, True):
        out = tmp_path / f"run-{raising}"
        run = op.run(op.load_suite(make_suite(_cases(raising))), out=out, progress=False)
        assert run.cases["n_tool_calls"].isna().any() == raising
        read[raising] = pd.read_parquet(out / "frames" / "cases.parquet")
        assert _dtypes(read[raising], "cases") == _dtypes(run.cases, "cases")
    assert str(read[True]["n_tool_calls"].dtype) == str(read[False]["n_tool_calls"].dtype) == "Int64"
    assert read[True]["n_tool_calls"].isna().tolist() == [False, True]


def test_every_frame_file_of_the_example_reads_with_its_frames_dtypes(tmp_path: Path) -> None:
    """The refund desk's replays and pairs: each file's columns come back with the frame's dtypes (nullable flags
    and counts were ``bool``/``int64`` from a file without a null, ``object``/``float64`` from one with)."""
    out = tmp_path / "run"
    run = op.run(init_example("stateful-agent", tmp_path / "suite"), out=out, progress=False)
    for name in FRAMES:
        path = out / "frames" / f"{name}.parquet"
        assert pq.read_schema(path).pandas_metadata is not None
        assert _dtypes(pd.read_parquet(path), name) == _dtypes(getattr(run, name), name), name
