"""The live columnar copy that turns each record into rows as it arrives (commit 24fe3b8).

A record the copy cannot read is now met when it is added, in the middle of the run, not when its chunk is
written: raised there, it reached the runner as an internal error and stopped the run at that case, its journal
unfinished. The copy is dropped instead, the run goes on to its end, and ``commit`` raises what the record raised
(as it did for a record of the last chunk). The mutants of the row path that the older tests let live are killed
here too.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _frame_checks import NAMES, copy_folders, example_run_records, journal_frames

import oloproof_nb as op
from oloproof_nb._analysis import columnar, frames, live_copy
from oloproof_nb._analysis.columns import CASES, FRAMES, SNAPSHOTS
from oloproof_nb._analysis.live_copy import LiveCopy
from oloproof_nb._core.paths import ABSENT
from oloproof_nb._core.trajectory import DEFAULT_TOOL_ERRORS
from oloproof_nb._run.runner import run_suite
from oloproof_nb._run.store import read_cases

SYSTEM = '''
class Echo:
    version = "echo-1"

    def __init__(self):
        self.state = {}

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        self.state["seen"] = input["answer"]
        return {"steps": [], "answer": input["answer"], "status": "completed"}
'''

BOOM = {"boom": 1}  # the answer the patched encoder cannot write






def _echo_suite(make_suite: Any) -> Path:
    """Six cases; the second one's answer is :data:`BOOM`."""
    cases = [{"id": f"c{i}", "input": {"answer": BOOM if i == 1 else {"n": i}}, "expected": {"answer": {"n": i}}}
             for i in range(6)]
    return make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Echo", system_code=SYSTEM)


@pytest.mark.parametrize("chunk", [256, 2])
def test_a_record_the_copy_cannot_read_drops_the_copy_and_the_run_goes_on(make_suite: Any, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch,
                                                                          chunk: int) -> None:
    """The second of six records cannot be turned into rows (the JSON encoder refuses its answer): before, it
    stopped the run at that case (``InternalError``, 2 of 6 records in the journal, no ``finished_at``); now all
    6 cases run, the run is stamped finished, ``commit`` raises the encoder's error, nothing of the copy is left
    in the run folder, and the run loads from a copy built from its journal (chunk 2: the record's chunk is
    written in the middle of the run; 256: at commit)."""
    monkeypatch.setattr(live_copy, "CHUNK", chunk)
    encode = columnar._encode

    def refusing(value: Any) -> str:
        if value == BOOM:
            raise TypeError("the copy cannot write this answer")
        return encode(value)

    out = tmp_path / "run"
    with monkeypatch.context() as patch:
        patch.setattr(columnar, "_encode", refusing)
        with pytest.raises(TypeError, match="the copy cannot write this answer"):
            op.run(_echo_suite(make_suite), out=out, progress=False)
    assert [rec["case"]["id"] for rec in read_cases(out)] == [f"c{i}" for i in range(6)]
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["finished_at"] is not None
    assert copy_folders(out) == [] and not (out / "internal-error.txt").exists()
    run = op.load_run(out)
    expected = journal_frames(run)
    for name in NAMES:
        pd.testing.assert_frame_equal(getattr(run, name), expected[name], obj=f"run.{name}")
    assert run.cases["answer"].tolist()[:2] == [{"n": 0}, BOOM]


def test_a_chunk_the_copy_cannot_write_mid_run_drops_it_and_commit_raises(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A verdict word no run writes in the first chunk of 5 (of 48 records): the chunk is refused when it is
    written, on the fifth ``add``; nothing is raised there (the run goes on), no later record is taken, and
    ``commit`` raises the refusal once, then says the copy was not written."""
    directory, seen = example_run_records(tmp_path)
    monkeypatch.setattr(live_copy, "CHUNK", 5)
    copy = LiveCopy()
    copy.start(directory)
    for i, (record, ref) in enumerate(seen):
        if i == 3:
            record = {**record, "verdicts": [{**v, "verdict": "FAIL"} for v in record["verdicts"]]}
        copy.add(record, ref)
    assert not copy.usable and copy_folders(directory) == []
    with pytest.raises(ValueError, match="verdict 'FAIL' is not one of the words allowed"):
        copy.commit()
    assert copy.commit() is False
    assert len(op.load_run(directory).cases) == 48


def test_a_record_added_is_read_then_and_not_when_its_chunk_is_written(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """What a chunk writes is what each record held when it was added (the journal line written just before):
    a record changed in place after ``add`` does not change the copy."""
    directory, seen = example_run_records(tmp_path)
    monkeypatch.setattr(live_copy, "CHUNK", 7)
    copy = LiveCopy()
    copy.start(directory)
    for record, ref in seen:
        copy.add(record, ref)
        record["case"]["metadata"] = {"changed": "after add"}
        if record.get("trajectory"):
            record["trajectory"]["answer"] = "changed after add"
    assert copy.commit()
    run = op.load_run(directory)
    expected = journal_frames(run)
    for name in NAMES:
        pd.testing.assert_frame_equal(getattr(run, name), expected[name], obj=f"run.{name}")


def _record(**changes: Any) -> dict[str, Any]:
    """One case record with a trajectory of a tool call and a message, a state, and a comparison."""
    rec: dict[str, Any] = {
        "index": 0, "status": "completed", "duration_s": 0.5, "started_at": "2026-01-01T00:00:00Z",
        "case": {"id": "c", "source_id": "c", "cluster": "c", "digest": "d", "initial_state": {"a": 1, "b": 2},
                 "metadata": {"ß": "é"}},
        "trajectory": {"answer": {"x": "日本"}, "steps": [
            {"kind": "tool_call", "tool": "t", "args": {"q": "ü"}, "result": {"error": "boom"}},
            {"kind": "message", "role": "assistant", "name": "n", "content": "ok", "args": None}]},
        "environment_state": {"case_id": "c", "schema": "environment_state/v1", "captured_at": "2026-01-01T00:00:01Z",
                              "state_digest": "s", "state": {"a": 1, "c": math.inf}, "case_digest": "d",
                              "run_id": "r"},
        "verdicts": [{"criterion": "k", "evaluator": "answer_matches", "verdict": "pass", "reason": ""}],
        "comparisons": [{"case_id": "c", "criterion": "k", "path": "b", "expected": {"$absent": True},
                         "actual": 2, "ok": False}],
    }
    rec.update(changes)
    return rec


def test_the_copys_rows_are_the_json_text_of_the_rows_made_in_memory() -> None:
    """Every per-case frame: the copy's item is the in-memory item with each JSON cell (and only those) as its
    JSON text, a state stored by address a null; text, numbers, booleans and missing values the same objects.
    Counted by hand: 1 case, 2 steps, 1 snapshot, 2 changes (b gone, c appeared), 1 verdict, 1 comparison."""
    rec = _record()
    text = frames.ChunkItems(DEFAULT_TOOL_ERRORS)
    text.add(rec, "ref-1")
    value = frames.ChunkItems(DEFAULT_TOOL_ERRORS, cell=frames.as_is)
    value.add(rec, None)
    counts = {name: len(items) for name, items in text.items.items()}
    assert counts == {"cases": 1, "steps": 2, "snapshots": 1, "changes": 2, "verdicts": 1, "comparisons": 1,
                      "replays": 0, "receipts": 0}
    assert text.state_refs == ["ref-1"] and value.state_refs == [None]
    for name in frames.PER_CASE:
        spec = FRAMES[name]
        as_text, as_value = spec.values(text.items[name]), spec.values(value.items[name])
        for col, got, was in zip(spec.columns, as_text, as_value, strict=True):
            if col.is_json:
                if name == "snapshots":
                    was = [ABSENT]  # stored by address: its state is read from states.jsonl
                assert list(got) == [columnar.json_text(v) for v in was], (name, col.name)
            else:
                assert list(got) == list(was), (name, col.name)
    assert text.items["snapshots"][0]["state"] is None and value.items["snapshots"][0]["state"] == {"a": 1,
                                                                                                      "c": math.inf}
    assert text.items["cases"][0][6] == '{"x":"日本"}' and text.items["cases"][0][14] == '{"ß":"é"}'
    assert text.items["comparisons"][0][3] is None  # ABSENT expected: a null


def test_a_state_not_stored_by_address_is_its_text_and_in_memory_the_record_itself() -> None:
    """A run written before states.jsonl (every ref None): the copy's snapshot holds the state's text; in memory
    the item is the record's own ``environment_state`` (no copy of it made)."""
    env = _record()["environment_state"]
    assert frames.snapshot_item(env, None) is env
    assert frames.snapshot_item(env, None, columnar.json_text)["state"] == '{"a":1,"c":Infinity}'
    assert frames.snapshot_item(env, "ref", columnar.json_text)["state"] is None
    assert SNAPSHOTS.build([frames.snapshot_item(env, None)])["state"].tolist() == [{"a": 1, "c": math.inf}]


def test_a_case_without_a_trajectory_has_a_null_answer_and_no_counts() -> None:
    """``answer`` null (JSON ``null`` text in the copy), the counts missing, ``metadata`` an empty dict."""
    rec = _record(trajectory=None)
    rec["case"] = {**rec["case"], "metadata": None}
    row = frames.case_row(rec, columnar.json_text)
    assert row[6] == "null" and row[7] is pd.NA and row[8] is pd.NA and row[14] == "{}"
    built = CASES.build([frames.case_row(rec)])
    assert built["answer"].tolist() == [None] and built["metadata"].tolist() == [{}]


def test_the_copy_is_written_chunk_by_chunk_of_chunk_records(make_suite: Any, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """10 records, CHUNK 4: the cases frame is written as 4, 4 and 2 rows (the last at commit), each record once;
    the states are read back by address, one per case."""
    cases = [{"id": f"c{i}", "input": {"answer": {"n": i}}, "expected": {"answer": {"n": i}}} for i in range(10)]
    folder = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Echo", system_code=SYSTEM)
    monkeypatch.setattr(live_copy, "CHUNK", 4)
    written: list[int] = []
    write = columnar.CopyWriter.write

    def counted(self: Any, name: str, table: Any) -> None:
        if name == "cases":
            written.append(table.num_rows)
        write(self, name, table)

    monkeypatch.setattr(columnar.CopyWriter, "write", counted)
    copy = LiveCopy()
    directory = run_suite(op.load_suite(folder), out=tmp_path / "run", sink=copy)
    assert written == [4, 4]  # the last two wait for commit
    assert copy.commit()
    assert written == [4, 4, 2]
    run = op.load_run(directory)
    assert run.cases["case_id"].tolist() == [f"c{i}" for i in range(10)]
    assert run.snapshots["state"].tolist() == [{"seen": {"n": i}} for i in range(10)]
