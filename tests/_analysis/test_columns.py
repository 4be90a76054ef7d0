"""The frame specs (``_analysis/columns.py``): the Arrow fields they give the columnar copy."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

from oloproof_nb._analysis import frames
from oloproof_nb._analysis.columns import CASES, RECEIPTS, REPLAYS, STEPS


def test_only_int64_and_bool_columns_are_declared_never_null() -> None:
    """Written out by hand from DESIGN's frames: a plain ``int64`` or ``bool`` column always holds a value (its
    Arrow field is not nullable); ``Int64``, ``boolean``, ``float64`` (NaN), text, time and JSON columns may
    miss one."""
    cases = CASES.arrow_schema()
    assert [cases.field(n).nullable for n in ("has_state", "epoch")] == [False, False]
    assert [cases.field(n).nullable for n in ("n_tool_calls", "duration_s", "error", "answer", "started_at")] == [
        True, True, True, True, True]
    steps = STEPS.arrow_schema()
    assert (steps.field("is_error").nullable, steps.field("step").nullable, steps.field("role").nullable) == (
        False, False, True)
    replays = REPLAYS.arrow_schema()
    assert (replays.field("recovered").nullable, replays.field("checkpoint").nullable) == (True, True)


def test_json_columns_are_large_text_marked_as_json() -> None:
    """A JSON value is stored as its JSON text: a ``large_string`` field whose metadata says ``json``; a text
    column is a ``large_string`` too, marked ``value``."""
    answer, case_id = CASES.arrow_schema().field("answer"), CASES.arrow_schema().field("case_id")
    assert answer.type == pa.large_string() and answer.metadata[b"oloproof.encoding"] == b"json"
    assert case_id.type == pa.large_string() and case_id.metadata[b"oloproof.encoding"] == b"value"
    assert answer.metadata[b"oloproof.dtype"] == b"json"
    code = RECEIPTS.arrow_schema().field("validator_exit_code")
    assert code.type == pa.int64() and code.nullable and code.metadata[b"oloproof.dtype"] == b"Int64"


def _record(**case: object) -> dict[str, object]:
    """A case record as a run before epochs wrote it (no ``epoch``, no ``metadata``), with one tool call."""
    return {"case": {"id": "c1", "source_id": "c1", "cluster": "c1", "digest": "d" * 64, **case},
            "status": "completed", "duration_s": 0.5, "started_at": "2026-07-25T14:00:00+00:00",
            "trajectory": {"answer": "done", "steps": [{"kind": "tool_call", "tool": "lookup", "args": {}},
                                                       {"kind": "message", "role": "assistant", "content": "ok"}]}}


def test_a_record_without_epoch_or_metadata_is_epoch_one_with_empty_metadata() -> None:
    """DESIGN: ``epoch`` is 1 in a run without epochs, and ``metadata`` a dict, empty when none."""
    frame = frames.cases_frame([_record()])
    assert frame.loc[0, "epoch"] == 1 and frame.loc[0, "metadata"] == {}
    assert (frame.loc[0, "n_tool_calls"], frame.loc[0, "trajectory_length"]) == (1, 2)  # counted by hand


def test_timestamps_with_and_without_microseconds_read_in_one_column() -> None:
    """``datetime.isoformat`` leaves out ``.000000``: a run's timestamps mix both forms, which must all read
    (inferring one format from the first value refused the others)."""
    records = [_record(), {**_record(), "started_at": "2026-07-25T14:00:00.123456Z"}]
    frame = frames.cases_frame(records)
    assert frame["started_at"].tolist() == [pd.Timestamp("2026-07-25T14:00:00", tz="UTC"),
                                            pd.Timestamp("2026-07-25T14:00:00.123456", tz="UTC")]


@pytest.mark.parametrize(("cluster", "words"), [(None, "null"), (7, r"a number \(7\)")])
def test_a_record_whose_cluster_is_not_text_is_refused(cluster: object, words: str) -> None:
    """oloproof writes every cluster as text: a record without one would put its verdicts in no cluster."""
    with pytest.raises(TypeError, match=f"its case's cluster is {words}, not text"):
        frames.cases_frame([_record(cluster=cluster)])


def test_list_answers_of_one_length_stay_one_cell_each() -> None:
    """Two answers that are both two-item lists: each row's cell holds its list (numpy made a 2 x 2 array of
    them and the column could not be built)."""
    records = [{**_record(), "trajectory": {"answer": ["refund", 7], "steps": []}} for _ in range(2)]
    assert frames.cases_frame(records)["answer"].tolist() == [["refund", 7], ["refund", 7]]
