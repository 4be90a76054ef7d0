"""Frames read a whole row of an item in one call (``FrameSpec.row``) instead of one getter call per cell.

The items of ``steps``, ``verdicts`` and ``comparisons`` are now the frames' rows themselves, and ``cases`` has a
row function beside its per-column getters. Each is checked here against the definition it
replaces, written out as it stood before (the per-column getters over the old items), on every record of a run
with replays, pairs and receipts and on hand-made records for the rarer shapes: a column read from the wrong place,
a message's field on a tool row or a missing value made ``None`` instead of ``<NA>`` fails these tests. Also: the
tool-error rule's one tuple of no-error values, and the cached bytes of an empty frame file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _frame_checks import everything_suite

import oloproof_nb as op
from oloproof_nb._analysis import columnar, frames
from oloproof_nb._analysis.columns import CASES, COMPARISONS, FRAMES, STEPS, VERDICTS, FrameSpec
from oloproof_nb._core.paths import ABSENT
from oloproof_nb._core.trajectory import DEFAULT_TOOL_ERRORS, ToolErrorRule

# -- the definitions replaced, as they were (per-column getters over the old items) -------------------------------


def _old_steps(records: list[Any], rule: ToolErrorRule) -> pd.DataFrame:
    items = [(rec["case"]["id"], i, s, (tool := s.get("kind") == "tool_call") and rule.is_error(s.get("result")),
              int(rec["case"].get("epoch", 1)), tool)
             for rec in records if rec.get("trajectory") for i, s in enumerate(rec["trajectory"]["steps"])]
    getters = {
        "case_id": lambda t: t[0], "step": lambda t: t[1], "kind": lambda t: "tool_call" if t[5] else "message",
        "tool": lambda t: t[2]["tool"] if t[5] else t[2].get("name"), "args": lambda t: t[2].get("args"),
        "result": lambda t: t[2].get("result") if t[5] else None, "is_error": lambda t: t[3],
        "epoch": lambda t: t[4], "role": lambda t: None if t[5] else t[2].get("role"),
        "content": lambda t: None if t[5] else t[2].get("content"),
    }
    return _frame(STEPS, getters, items)


def _old_verdicts(records: list[Any], run_rows: list[Any], unscored: set[str]) -> pd.DataFrame:
    items = [(rec["case"]["id"], rec["case"]["cluster"], v, int(rec["case"].get("epoch", 1)))
             for rec in records if rec["case"]["id"] not in unscored for v in rec["verdicts"]]
    items += [(r["case_id"], r["cluster"], r, int(r.get("epoch", 1))) for r in run_rows]
    getters = {"case_id": lambda t: t[0], "cluster": lambda t: t[1], "criterion": lambda t: t[2]["criterion"],
               "evaluator": lambda t: t[2]["evaluator"], "verdict": lambda t: t[2]["verdict"],
               "reason": lambda t: t[2]["reason"], "epoch": lambda t: t[3]}
    return _frame(VERDICTS, getters, items)


def _old_comparisons(records: list[Any]) -> pd.DataFrame:
    items = [{**c, "expected": frames.decode_absent(c["expected"]), "actual": frames.decode_absent(c["actual"]),
              "epoch": int(rec["case"].get("epoch", 1))} for rec in records for c in rec["comparisons"]]
    getters: dict[str, Any] = {name: (lambda c, n=name: c[n]) for name in ("case_id", "criterion", "path", "expected",
                                                                           "actual")}
    getters |= {"ok": lambda c: bool(c["ok"]), "epoch": lambda c: c.get("epoch", 1)}
    return _frame(COMPARISONS, getters, items)


def _frame(spec: FrameSpec, getters: dict[str, Any], items: list[Any]) -> pd.DataFrame:
    assert list(getters) == spec.names
    return spec.from_columns({name: [get(item) for item in items] for name, get in getters.items()})


# -- records ------------------------------------------------------------------------------------------------------

_STATE = {"schema": "environment_state/v1", "captured_at": "2026-07-25T14:00:01+00:00", "state_digest": "s" * 64,
          "state": {"o": {"a": 1, "b": [True, 1.5]}}, "case_digest": "d" * 64, "run_id": "run-1"}


def _record(cid: str, **over: Any) -> dict[str, Any]:
    """A stored case record (shapes the example does not make: messages, failed calls, epochs, ABSENT values)."""
    record: dict[str, Any] = {
        "case": {"id": cid, "source_id": cid, "cluster": f"k-{cid}", "digest": "d" * 64,
                 "initial_state": {"o": {"a": 0}}},
        "status": "completed", "duration_s": 0.25, "started_at": "2026-07-25T14:00:00+00:00",
        "trajectory": {"answer": {"refund": 7}, "steps": [
            {"kind": "message", "role": "assistant", "content": [{"type": "text", "text": "hi"}], "name": "gen"},
            {"kind": "tool_call", "tool": "refund", "args": {"id": 1}, "result": {"ok": False, "error": "no"}},
            {"kind": "tool_call", "tool": "look", "args": None, "result": "<<malformed>>"},
            {"kind": "message", "role": "user", "content": None, "args": {"odd": True}},
        ]},
        "environment_state": {**_STATE, "case_id": cid},
        "verdicts": [{"criterion": "k1", "evaluator": "state_matches", "verdict": "fail", "reason": "r"},
                     {"criterion": "k2", "evaluator": "answer_matches", "verdict": "pass", "reason": ""}],
        "comparisons": [{"case_id": cid, "criterion": "k1", "path": "o.a", "expected": {"$absent": True},
                         "actual": 1, "ok": 0},
                        {"case_id": cid, "criterion": "k1", "path": "o.b", "expected": [1], "actual": {"$absent": True},
                         "ok": 1}],
    }
    for key, value in over.items():
        if key in ("epoch", "metadata", "transform", "cluster"):
            record["case"][key] = value
        else:
            record[key] = value
    return record


_HAND = [
    _record("a"),
    _record("b", epoch=2, metadata={"tier": "gold"}, transform="typo", environment_state=None),
    _record("c", trajectory=None, status="error", error="boom", comparisons=[], verdicts=[]),
    _record("d", trajectory={"answer": None, "steps": []}, epoch=3, metadata=None),
]


@pytest.fixture(scope="module")
def example_records(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], op.Run]:
    root: Path = tmp_path_factory.mktemp("rows")
    run = op.load_run(op.run(everything_suite(root / "suite"), out=root / "run", progress=False).directory)
    return run.records, run


def test_the_steps_rows_are_the_columns_the_old_getters_read(example_records: tuple[list[Any], op.Run]) -> None:
    records, run = example_records
    rule = ToolErrorRule(status_values=["error", "failed"])
    for recs, tool_errors in ((records, run.config.tool_errors), (_HAND, DEFAULT_TOOL_ERRORS), (_HAND, rule)):
        new = frames.steps_frame(recs, tool_errors)
        pd.testing.assert_frame_equal(new, _old_steps(recs, tool_errors))
    hand = frames.steps_frame(_HAND)  # by hand: the rarer shapes really are in the rows compared above
    assert hand["kind"].tolist()[:4] == ["message", "tool_call", "tool_call", "message"]
    assert hand["is_error"].tolist()[:4] == [False, True, True, False]
    assert hand["tool"].tolist()[:3] == ["gen", "refund", "look"] and pd.isna(hand["tool"][3])
    assert hand["args"].tolist()[:4] == [None, {"id": 1}, None, {"odd": True}]
    assert hand["content"][0] == [{"type": "text", "text": "hi"}] and hand["content"][1] is None
    assert hand["role"].tolist()[0] == "assistant" and pd.isna(hand["role"][1])
    assert hand["epoch"].tolist() == [1] * 4 + [2] * 4 + [3] * 0


def test_the_verdict_rows_are_the_columns_the_old_getters_read(example_records: tuple[list[Any], op.Run]) -> None:
    records, run = example_records
    rows, _ = frames.run_scope_rows(run.config, run.labels, records, run.manifest.n_cases)
    assert rows, "the suite judges pairs across cases: their rows are compared too"
    for unscored in (set(), {records[0]["case"]["id"]}):
        new = frames.verdicts_frame(records, rows, unscored)
        pd.testing.assert_frame_equal(new, _old_verdicts(records, rows, unscored))
    pd.testing.assert_frame_equal(frames.verdicts_frame(_HAND), _old_verdicts(_HAND, [], set()))
    assert frames.verdicts_frame(_HAND)["epoch"].tolist() == [1, 1, 2, 2, 3, 3]  # c has none


def test_the_comparison_rows_are_the_columns_the_old_getters_read(example_records: tuple[list[Any], op.Run]) -> None:
    records, _ = example_records
    for recs in (records, _HAND):
        pd.testing.assert_frame_equal(frames.comparisons_frame(recs), _old_comparisons(recs))
    hand = frames.comparisons_frame(_HAND)
    assert hand["expected"][0] is ABSENT and hand["actual"][1] is ABSENT and hand["ok"].tolist() == [False, True] * 3
    assert hand["epoch"].tolist() == [1, 1, 2, 2, 3, 3]  # c has none


def _same_cells(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Equal cell by cell, of one type each (``True`` is not ``1``; ``<NA>`` is only itself)."""
    return len(a) == len(b) and all(x is y or (type(x) is type(y) and x == y) for x, y in zip(a, b, strict=True))


def _old_case_getters() -> dict[str, Any]:
    """The columns of ``cases`` as their per-column getters read them before ``FrameSpec.row`` (one call a cell)."""

    def cluster(r: Any) -> str:
        value = r["case"]["cluster"]
        if not isinstance(value, str):
            raise TypeError("its case's cluster is not text")
        return value

    def traj(r: Any) -> Any:
        return r.get("trajectory")

    return {
        "case_id": lambda r: r["case"]["id"], "source_id": lambda r: r["case"]["source_id"],
        "transform": lambda r: r["case"].get("transform"), "cluster": cluster, "digest": lambda r: r["case"]["digest"],
        "status": lambda r: r["status"], "answer": lambda r: traj(r).get("answer") if traj(r) else None,
        "n_tool_calls": lambda r: (sum(1 for s in traj(r)["steps"] if s.get("kind") == "tool_call") if traj(r)
                                   else pd.NA),
        "trajectory_length": lambda r: len(traj(r)["steps"]) if traj(r) else pd.NA,
        "duration_s": lambda r: r["duration_s"], "error": lambda r: r.get("error"),
        "has_state": lambda r: r.get("environment_state") is not None, "epoch": lambda r: r["case"].get("epoch", 1),
        "started_at": lambda r: r["started_at"], "metadata": lambda r: r["case"].get("metadata") or {},
    }


def test_the_case_row_reads_what_the_columns_getters_read(example_records: tuple[list[Any], op.Run]) -> None:
    records, _ = example_records
    spec, items = CASES, [*records, *_HAND]
    getters = _old_case_getters()
    assert len(items) > len(_HAND) and list(getters) == spec.names
    for item in items:
        assert _same_cells(frames.case_row(item), tuple(get(item) for get in getters.values())), item
    pd.testing.assert_frame_equal(frames.cases_frame(items), _frame(spec, getters, items))


def test_a_case_row_refuses_a_cluster_that_is_not_text_as_the_column_does() -> None:
    with pytest.raises(TypeError, match="its case's cluster is null, not text"):
        frames.cases_frame([_record("x", cluster=None)])

    class Text(str):
        pass

    assert frames.cases_frame([_record("x", cluster=Text("k"))])["cluster"].tolist() == ["k"]


@pytest.mark.parametrize("result", [{"error": v} for v in (None, False, "", [], {}, 0, 0.0, [0], {"a": 1}, "x", 7)]
                         + [{"isError": True}, {"ok": False}, {"ok": 0}, {"status": "ERROR"}, {"status": 3}])
def test_the_tool_error_rule_reads_no_error_values_as_it_did(result: dict[str, Any]) -> None:
    """``_NO_ERROR``, one module tuple for the values of an error key that report no error, against the tuple
    written in the condition as it was."""
    rule = DEFAULT_TOOL_ERRORS
    before = (result.get("ok", True) is False or any(result.get(k) not in (None, False, "", [], {})
                                                      for k in rule.error_keys)
              or (isinstance(result.get("status"), str) and result["status"].casefold() == "error"))
    assert rule.is_error(result) is before


def test_an_empty_frame_file_is_the_file_its_writer_writes(tmp_path: Path) -> None:
    """The bytes of a frame without rows are made once per schema and reused: they must be those Arrow's writer
    gives that empty table (a cache keyed by ``pa.Schema`` would take two schemas differing only in their
    metadata, the dtypes ``from_arrow`` reads, for one)."""
    writer = columnar.CopyWriter(tmp_path, {})
    writer.write("snapshots", columnar.to_arrow(FRAMES["snapshots"], [], []))  # with its state_ref column
    writer.commit()
    for name, spec in FRAMES.items():
        table = columnar.to_arrow(spec, [], [] if name == "snapshots" else None)
        sink = pa.BufferOutputStream()
        with pq.ParquetWriter(sink, table.schema, **columnar.SMALL_FILE) as fresh:
            fresh.write_table(table, row_group_size=1)
        written = columnar.frame_path(tmp_path, name).read_bytes()
        assert written == sink.getvalue().to_pybytes(), name
        assert pq.read_schema(columnar.frame_path(tmp_path, name)).equals(table.schema, check_metadata=True)
        pd.testing.assert_frame_equal(columnar.read_frame(tmp_path, name, states=lambda refs: []), spec.empty())
    a = pa.schema([pa.field("x", pa.int64(), metadata={"oloproof.dtype": "int64"})])
    b = pa.schema([pa.field("x", pa.int64(), metadata={"oloproof.dtype": "Int64"})])
    assert a == b  # why the cache is keyed by the serialized schema
    files = [columnar._empty_file(s.serialize().to_pybytes()) for s in (a, b)]
    assert [pq.read_schema(pa.BufferReader(f)).field("x").metadata[b"oloproof.dtype"] for f in files] == [
        b"int64", b"Int64"]
