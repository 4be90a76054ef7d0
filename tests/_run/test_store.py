"""The run directory: layout, record-by-record appends, torn lines, ABSENT encoding, and load_run round trips."""

from __future__ import annotations

import json
from datetime import datetime, timezone
import math
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import oloproof_nb as op
from oloproof_nb.errors import RunDirError
from oloproof_nb._core.paths import ABSENT
from oloproof_nb._core.records import Manifest
from oloproof_nb._run.store import RunStore, dumps, read_jsonl

MANIFEST = Manifest(suite="s", run_id="x", started_at="2026-01-01T00:00:00.000000Z", oloproof_nb="0", n_cases=0)

FRAMES = ["cases", "steps", "snapshots", "changes", "verdicts", "comparisons", "replays", "pairs", "receipts"]


def _assert_same_frames(a: op.Run, b: op.Run) -> None:
    for name in FRAMES:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), obj=f"run.{name}")


def _cases() -> list[dict[str, Any]]:
    return [
        {"id": "r1", "input": {"answer": "done", "writes": [{"path": ["o", "a.b"], "value": "é ☃"}]},
         "initial_state": {"o": {"x": 1, "gone": True}},
         "expected": {"answer": "done", "state": {"o": {"gone": True, "a.b": "é ☃", "x": 1}}},
         "metadata": {"kind": "unicode"}},
        {"id": "r2", "input": {"answer": "done", "deletes": [["o", "x"]]},
         "initial_state": {"o": {"x": 1}}, "expected": {"answer": "Done ", "state": {"o": {"x": 1, "y": None}}}},
        {"id": "r3", "input": {"answer": 3, "writes": [{"path": ["n"], "value": 0.1}]},
         "initial_state": {"n": 0.30000000000000004}, "expected": {"answer": 3.0, "state": {"n": 0.1}}},
    ]


EVALUATORS = [{"type": "answer_matches"}, {"type": "state_matches", "mode": "whole"},
              {"type": "state_unchanged", "criterion": "o_x_kept", "paths": ["o.x", "o.never"]}]


def test_run_directory_layout(make_suite) -> None:
    folder = make_suite(_cases(), evaluators=EVALUATORS)
    out = folder / "out"
    run = op.run(op.load_suite(folder), out=out)
    assert {p.name for p in out.iterdir()} >= {"manifest.json", "cases.jsonl"}
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["suite"] == "tiny" and manifest["run_id"] == run.run_id
    assert manifest["system_version"] == "scripted-1"
    assert "started_at" in manifest and "finished_at" in manifest and run.finished
    assert set(manifest["digests"]) >= {"oloproof.yaml", "cases.jsonl"}
    lines = (out / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and [json.loads(line)["case"]["id"] for line in lines] == ["r1", "r2", "r3"]


def test_load_run_round_trips_every_frame(make_suite, tmp_path: Path) -> None:
    folder = make_suite(_cases(), evaluators=EVALUATORS)
    out = tmp_path / "runs" / "x"
    run = op.run(op.load_suite(folder), out=out)
    _assert_same_frames(run, op.load_run(out))
    # the run directory alone is enough: moved elsewhere, with the suite folder gone
    moved = tmp_path / "moved"
    shutil.copytree(out, moved)
    shutil.rmtree(folder)
    again = op.load_run(moved)
    _assert_same_frames(run, again)
    assert again.criteria == ["answer_matches", "state_matches", "o_x_kept"]


def test_stored_values_survive(make_suite) -> None:
    folder = make_suite(_cases(), evaluators=EVALUATORS)
    run = op.load_run(op.run(op.load_suite(folder), out=folder / "out").directory)
    snaps = run.snapshots.set_index("case_id")["state"]
    assert snaps["r1"] == {"o": {"x": 1, "gone": True, "a.b": "é ☃"}}
    assert snaps["r3"] == {"n": 0.1}
    assert run.cases.set_index("case_id").loc["r1", "metadata"] == {"kind": "unicode"}
    comp = run.comparisons
    # absent is stored as {"$absent": true} and read back as the ABSENT sentinel, distinct from null
    row = comp[(comp.case_id == "r2") & (comp.path == "o.y")].iloc[0]
    assert row.expected is None and row.actual is ABSENT and not row.ok
    row = comp[(comp.case_id == "r2") & (comp.criterion == "o_x_kept") & (comp.path == "o.x")].iloc[0]
    assert row.expected == 1 and row.actual is ABSENT and not row.ok
    row = comp[(comp.case_id == "r1") & (comp.criterion == "o_x_kept") & (comp.path == "o.never")].iloc[0]
    assert row.expected is ABSENT and row.actual is ABSENT and row.ok
    changes = run.changes[run.changes.case_id == "r1"]
    assert list(changes[["path", "before", "after"]].itertuples(index=False, name=None)) == [
        ('o["a.b"]', ABSENT, "é ☃")]
    # hand count of verdicts: r1 passes all; r2 answer passes (normalised), whole-state fails, o.x deleted;
    # r3: 3 == 3.0, state n == 0.1, o.x absent before and after
    table = run.verdicts.pivot(index="case_id", columns="criterion", values="verdict")
    assert table.to_dict("index") == {
        "r1": {"answer_matches": "pass", "state_matches": "pass", "o_x_kept": "pass"},
        "r2": {"answer_matches": "pass", "state_matches": "fail", "o_x_kept": "fail"},
        "r3": {"answer_matches": "pass", "state_matches": "pass", "o_x_kept": "pass"},
    }


def test_example_round_trip_without_the_suite(example_suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "example-run"
    run = op.run(op.load_suite(example_suite), out=out)
    shutil.rmtree(example_suite)
    _assert_same_frames(run, op.load_run(out))


# -- the store itself ----------------------------------------------------------------------------------


def test_create_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(RunDirError, match="not empty"):
        RunStore.create(busy, MANIFEST)
    assert [p.name for p in busy.iterdir()] == ["keep.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    RunStore.create(empty, MANIFEST).close()
    assert json.loads((empty / "manifest.json").read_text(encoding="utf-8"))["run_id"] == "x"


def test_records_are_flushed_one_at_a_time(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path / "r", MANIFEST)
    store.append_case({"case": {"id": "a"}, "n": 1})  # type: ignore[typeddict-item]
    # readable from disk before the store is closed
    assert list(read_jsonl(tmp_path / "r" / "cases.jsonl")) == [{"case": {"id": "a"}, "n": 1}]
    store.append_case({"case": {"id": "b"}, "n": 2})
    assert len(list(read_jsonl(tmp_path / "r" / "cases.jsonl"))) == 2
    store.finish(finished_at=datetime(2026, 1, 1, tzinfo=timezone.utc))
    assert json.loads((tmp_path / "r" / "manifest.json").read_text())["finished_at"] == "2026-01-01T00:00:00.000000Z"


def test_torn_last_line_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}\n{"a": 3, "b": [1, 2', encoding="utf-8")
    assert list(read_jsonl(path)) == [{"a": 1}, {"a": 2}]
    path.write_bytes('{"a": 1}\n{"a": "é'.encode()[:-1])  # cut inside a multi-byte character
    assert list(read_jsonl(path)) == [{"a": 1}]
    assert list(read_jsonl(tmp_path / "nope.jsonl")) == []


def test_load_run_ignores_a_torn_case_record(make_suite) -> None:
    folder = make_suite(_cases(), evaluators=EVALUATORS)
    out = folder / "out"
    op.run(op.load_suite(folder), out=out)
    with (out / "cases.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"index": 3, "case": {"id": "r4"')
    run = op.load_run(out)
    assert list(run.cases["case_id"]) == ["r1", "r2", "r3"]


def test_dumps_encodes_absent_and_keeps_nan() -> None:
    line = dumps({"v": ABSENT, "n": math.nan, "s": "é"})
    assert line == '{"v":{"$absent":true},"n":NaN,"s":"é"}'
    back = json.loads(line)
    assert back["v"] == {"$absent": True} and math.isnan(back["n"])


def test_load_run_errors(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match="no such run directory"):
        op.load_run(tmp_path / "nope")
    (tmp_path / "plain").mkdir()
    with pytest.raises(RunDirError, match="manifest.json"):
        op.load_run(tmp_path / "plain")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "manifest.json").write_text("{oops", encoding="utf-8")
    with pytest.raises(RunDirError, match="not valid JSON"):
        op.load_run(tmp_path / "bad")
