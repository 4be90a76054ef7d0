"""The rows of a pooled run's receipts frame (``op.load_runs``: each carries its ``run_id``) read back as the same
frame. ``receipts_frame`` refused them (``receipts[0]: key 'run_id': unknown key``), and dropping the column
would merge the two runs' receipts of one case and epoch."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import oloproof_nb as op
from oloproof_nb.examples import init_example


def _row(run_id: object, status: str) -> dict[str, object]:
    return {"run_id": run_id, "case_id": "c1", "artifact_id": "a", "run_started_at": "2026-07-25T14:00:00Z",
            "status": status, "reason": f"{status}: …", "epoch": 1}


def test_a_pooled_frames_rows_keep_their_run() -> None:
    frame = op.receipts_frame([_row("run-a", "missing"), _row("run-b", "waiting")])
    assert frame.columns.tolist() == ["run_id", *op.receipts_frame([]).columns]
    assert frame[["run_id", "case_id", "status"]].to_dict("records") == [
        {"run_id": "run-a", "case_id": "c1", "status": "missing"},
        {"run_id": "run-b", "case_id": "c1", "status": "waiting"},
    ]
    pd.testing.assert_frame_equal(op.receipts_frame(frame.to_dict("records")), frame)


def test_receipts_without_a_run_have_no_run_column() -> None:
    row = _row(None, "missing")
    del row["run_id"]
    assert "run_id" not in op.receipts_frame([row]).columns


def test_a_run_id_that_is_not_text_is_named_by_its_key() -> None:
    with pytest.raises(ValueError, match=r"^receipts\[0\]: key 'run_id': must be the run's id \(text\), got 7$"):
        op.receipts_frame([_row(7, "missing")])


def test_a_pooled_runs_receipts_read_back_as_the_same_frame(tmp_path: Path) -> None:
    suite = op.load_suite(init_example("false-success", tmp_path / "fs"))
    for name in ("one", "two"):
        op.run(suite, out=tmp_path / name, progress=False)
    pooled = op.load_runs([tmp_path / "one", tmp_path / "two"])
    pd.testing.assert_frame_equal(op.receipts_frame(pooled.receipts.to_dict("records")), pooled.receipts)
