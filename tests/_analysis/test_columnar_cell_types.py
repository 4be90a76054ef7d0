"""Cells of a type other than their column's (a number in a text column, which a journal edited by hand or a
system's own record can hold): ``to_arrow`` stores what the frame built in memory shows, checked against values
written by hand and pyarrow's own read of the table."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from oloproof_nb._analysis import columnar
from oloproof_nb._analysis.columns import RECEIPTS, STEPS, TEXT
from oloproof_nb._analysis.frames import as_is


def _step(tool: Any, cell: Any) -> tuple[Any, ...]:
    return ("c1", 0, "tool_call", tool, cell({"q": 1}), cell(None), False, 1, None, cell(None))


def test_a_number_in_a_text_column_is_stored_as_its_text() -> None:
    items = [_step(7, columnar.json_text), _step("lookup", columnar.json_text)]
    table = columnar.to_arrow(STEPS, items)
    assert table.schema.field("tool").type == pa.large_string()
    assert table.column("tool").to_pylist() == ["7", "lookup"]  # pyarrow's own read: the number's text
    frame = columnar.from_arrow(STEPS, table)
    assert list(frame["tool"]) == ["7", "lookup"]
    in_memory = STEPS.build([_step(7, as_is), _step("lookup", as_is)])
    assert frame["tool"].dtype == in_memory["tool"].dtype
    if TEXT == "str":  # pandas 3's text dtype makes the number its text in memory too (pandas 2's object keeps 7)
        assert list(in_memory["tool"]) == list(frame["tool"])


def test_a_text_column_s_nulls_stay_nulls_beside_a_number() -> None:
    items = [_step(7, columnar.json_text), _step(None, columnar.json_text), _step(float("nan"), columnar.json_text)]
    assert columnar.to_arrow(STEPS, items).column("tool").to_pylist() == ["7", None, None]


def _receipt(case_id: str, exit_code: int | None) -> dict[str, Any]:
    return {"case_id": case_id, "artifact_id": "report", "run_started_at": "2026-12-06T23:00:00Z",
            "validator": "v" if exit_code is not None else None, "validator_exit_code": exit_code,
            "status": "verified", "reason": "validator"}


def test_a_whole_number_past_two_to_the_53_beside_a_null_keeps_every_digit() -> None:
    """A nullable integer column holding a null and 2**53 + 1 (no float holds it: read through float64, it would
    be 2**53): the copy's frame holds the number itself, as the in-memory frame and pyarrow's read do."""
    big = 2**53 + 1
    items = [_receipt("a", None), _receipt("b", big), _receipt("c", 0)]
    table = columnar.to_arrow(RECEIPTS, items)
    assert table.column("validator_exit_code").to_pylist() == [None, big, 0]  # pyarrow's own read
    frame = columnar.from_arrow(RECEIPTS, table)
    codes = frame["validator_exit_code"]
    assert str(codes.dtype) == "Int64" and codes.isna().tolist() == [True, False, False]
    assert [int(codes[1]), int(codes[2])] == [big, 0]
    assert int(RECEIPTS.build(items)["validator_exit_code"][1]) == big
