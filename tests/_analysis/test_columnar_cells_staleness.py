"""The columnar copy: its JSON cells, case ids and when it is stale (edges the other tests leave unpinned), checked
against outside references (the journal read by hand with ``json``, the Parquet files read with pyarrow directly)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest
from _frame_checks import NAMES, journal_frames

import oloproof_nb as op
from oloproof_nb._analysis import columnar

TRICKY_ID = 'q"uo\\te-é'
BIG = 2**70 + 1  # no float holds it: read as a float, it would be 2**70


def _tricky_run(make_suite: Any) -> Path:
    """A run of two cases whose values JSON text can get wrong: an id with a quote, a backslash and a non-ASCII
    letter; a 71-bit odd integer answer; -0.0 and infinity written into the state; non-ASCII text (and U+2028)."""
    cases = [{"id": TRICKY_ID, "input": {"answer": BIG, "writes": [{"path": ["n"], "value": -0.0}]},
              "initial_state": {"n": 1}, "expected": {"answer": BIG}, "metadata": {"z": "漢字", "a": 1}},
             {"id": "plain", "input": {"answer": "ünï\u2028", "writes": [{"path": ["x"], "value": float("inf")}]},
              "initial_state": {}, "expected": {"answer": "ünï\u2028"}}]
    folder = make_suite(cases, evaluators=[{"type": "answer_matches"}, {"type": "state_matches", "mode": "subset"}])
    op.run(op.load_suite(folder), out=folder / "out", progress=False)
    return folder / "out"


def _by_hand(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (directory / "cases.jsonl").read_text(encoding="utf-8").split("\n") if line]


def _same(a: Any, b: Any) -> bool:
    """Equal, of the same type, and -0.0 apart from 0.0 (``==`` says ``-0.0 == 0.0``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return math.copysign(1.0, a) == math.copysign(1.0, b) and (a == b or (math.isnan(a) and math.isnan(b)))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def test_json_cells_equal_the_journal_read_by_hand(make_suite: Any) -> None:
    out = _tricky_run(make_suite)
    records = _by_hand(out)
    run = op.load_run(out)
    assert columnar.is_fresh(out)
    cases = run.cases.set_index("case_id")
    assert sorted(cases.index) == sorted(r["case"]["id"] for r in records) == sorted([TRICKY_ID, "plain"])
    for rec in records:
        row = cases.loc[rec["case"]["id"]]
        assert _same(row["answer"], rec["trajectory"]["answer"])
        assert _same(row["metadata"], rec["case"].get("metadata", {}))
    assert cases.loc[TRICKY_ID, "answer"] == BIG and type(cases.loc[TRICKY_ID, "answer"]) is int
    # the Parquet file read directly: the JSON text json.dumps writes (non-ASCII kept, no spaces)
    table = pq.read_table(columnar.frame_path(out, "cases"), columns=["case_id", "answer", "metadata"]).to_pylist()
    texts = {r["case_id"]: r for r in table}
    def dumps(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    for rec in records:
        cid = rec["case"]["id"]
        assert texts[cid]["answer"] == dumps(rec["trajectory"]["answer"])
        assert texts[cid]["metadata"] == dumps(rec["case"].get("metadata", {}))
    assert texts[TRICKY_ID]["metadata"] == '{"z":"漢字","a":1}'
    changes = run.changes.set_index("case_id")
    after = changes.loc[TRICKY_ID, "after"]
    assert after == 0.0 and math.copysign(1.0, after) == -1.0  # -0.0, not 0.0
    assert changes.loc["plain", "after"] == math.inf
    built = journal_frames(run)  # the frames built from the journal's records, no Parquet involved: dtypes too
    for name in NAMES:
        pd.testing.assert_frame_equal(getattr(run, name), built[name], obj=f"run.{name}")


def test_a_case_id_with_a_quote_and_a_backslash_is_found_by_its_id(make_suite: Any) -> None:
    """The journal index reads a line's case id from its first bytes: an id with escapes must be decoded as JSON
    (read verbatim, ``q\\"uo\\\\te-é`` was indexed and the case was never found)."""
    out = _tricky_run(make_suite)
    run = op.load_run(out)
    by_hand = next(r for r in _by_hand(out) if r["case"]["id"] == TRICKY_ID)
    record = run.record(TRICKY_ID)
    assert record["case"]["id"] == TRICKY_ID
    assert record["trajectory"]["answer"] == by_hand["trajectory"]["answer"] == BIG


def test_a_copy_is_stale_once_manifest_json_changes(tmp_path: Path) -> None:
    """The manifest is one of the journal files a copy is built from (``_source.json`` records its size and
    mtime): a manifest rewritten since (a run stamped finished, resumed) makes the copy older than the journal.
    Checked against the ``_source.json`` read by hand."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text("{}\n", encoding="utf-8")
    (run / "cases.jsonl").write_text('{"a":1}\n', encoding="utf-8")
    columnar.CopyWriter(run, columnar.journal_fingerprint(run)).commit()
    assert columnar.is_fresh(run)
    recorded = json.loads((run / "frames" / "_source.json").read_text(encoding="utf-8"))["journal"]
    st = (run / "manifest.json").stat()
    assert recorded["manifest.json"] == [st.st_size, st.st_mtime_ns]
    os.utime(run / "manifest.json", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # rewritten, same size
    assert not columnar.is_fresh(run)


def test_a_copy_recording_a_frame_file_as_missing_is_not_fresh(tmp_path: Path) -> None:
    """A copy is complete or not fresh: a ``_source.json`` that records a frame file as missing (null), with that
    file indeed missing, matches the folder but is no whole copy; ``op.load_run`` rebuilds it."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text("{}\n", encoding="utf-8")
    (run / "cases.jsonl").write_text('{"a":1}\n', encoding="utf-8")
    columnar.CopyWriter(run, columnar.journal_fingerprint(run)).commit()
    source = run / "frames" / "_source.json"
    data = json.loads(source.read_text(encoding="utf-8"))
    data["frames"]["steps"] = None
    source.write_text(json.dumps(data) + "\n", encoding="utf-8")
    (run / "frames" / "steps.parquet").unlink()
    assert not columnar.is_fresh(run)


def test_source_json_is_gone_while_a_new_copy_replaces_the_frame_files(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The module's protocol: ``_source.json`` is removed first and put back last, so a reader never takes a copy
    being replaced for the old one (an old record beside new frame files). Each ``os.replace`` of a frame file is
    watched: the folder then holds no ``_source.json``."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text("{}\n", encoding="utf-8")
    (run / "cases.jsonl").write_text('{"a":1}\n', encoding="utf-8")
    columnar.CopyWriter(run, columnar.journal_fingerprint(run)).commit()
    with (run / "cases.jsonl").open("a", encoding="utf-8") as handle:  # the journal grows: a new copy is due
        handle.write('{"a":2}\n')
    assert not columnar.is_fresh(run)
    real = os.replace
    seen: list[tuple[str, bool]] = []

    def watched(src: Any, dst: Any) -> None:
        seen.append((Path(dst).name, (run / "frames" / "_source.json").exists()))
        real(src, dst)

    monkeypatch.setattr(os, "replace", watched)  # the one columnar calls
    columnar.CopyWriter(run, columnar.journal_fingerprint(run)).commit()
    monkeypatch.setattr(os, "replace", real)
    frames_moved = [present for name, present in seen if name.endswith(".parquet")]
    assert len(frames_moved) == 9 and not any(frames_moved)
    assert seen[-1] == ("_source.json", False) and columnar.is_fresh(run)
