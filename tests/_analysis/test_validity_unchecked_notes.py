"""The note under a gate's table that names a transform's label file to fill (``validity.unchecked_notes``).

It is meant for a transform a relation of the table is judged on: a second transform no relation of the table
uses (no relation at all, or none the gate's table shows) is not what holds a row back, and its note said "its
relations are judged once every pair is labeled" of a transform with none.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import oloproof_nb as op
from oloproof_nb._analysis.validity import unchecked_notes
from oloproof_nb.cli import main

T = {"name": "t", "field": "message", "template": "{value} OVERRIDE", "validity_labels": "labels/t.jsonl",
     "minimum_validity": 0.85}
U = {"name": "u", "field": "message", "template": "PLEASE {value}", "validity_labels": "labels/u.jsonl",
     "minimum_validity": 0.85}


def _cases(n: int = 4) -> list[dict[str, Any]]:
    return [{"id": f"c{i}", "input": {"message": f"stock {i}", "answer": "ok",
                                     "writes": [{"path": ["stock", f"s{i}"], "value": i}]},
             "initial_state": {"stock": {}}, "expected": {"answer": "ok", "state": {"stock": {f"s{i}": i}}}}
            for i in range(n)]


def _run(make_suite: Callable[..., Path], relations: list[str]) -> op.Run:
    evaluators = [{"type": "answer_matches"},
                  *({"type": "metamorphic_relation", "relation": "same_state", "transform": t} for t in relations)]
    folder = make_suite(_cases(), evaluators=evaluators, metamorphic={"transforms": [T, U]})
    (folder / "labels").mkdir()
    for name in ("t", "u"):
        (folder / "labels" / f"{name}.jsonl").write_text("", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return op.run(op.load_suite(folder), progress=False)


def test_a_transform_no_relation_of_the_table_uses_gets_no_note(make_suite: Callable[..., Path]) -> None:
    run = _run(make_suite, ["t"])  # u is declared, its copies run, but no relation is judged on it
    notes = unchecked_notes(run, run.criteria)
    assert [note.split(":")[0] for note in notes] == ["transform t is not checked"]
    assert "4 of its 4 pairs have no label (c0~t, c1~t, c2~t …)" in notes[0]  # a hand count: 4 cases, none labeled


def test_a_relation_left_out_of_the_table_leaves_its_transform_unnamed(make_suite: Callable[..., Path]) -> None:
    run = _run(make_suite, ["t", "u"])
    shown = [c for c in run.criteria if c != "same_state_under_u"]
    assert [note.split(":")[0] for note in unchecked_notes(run, shown)] == ["transform t is not checked"]
    both = unchecked_notes(run, pd.Series(run.criteria))  # the gate's table column, as the CLI passes it
    assert [note.split(":")[0] for note in both] == ["transform t is not checked", "transform u is not checked"]
    assert unchecked_notes(run, ["answer_matches"]) == ()


def test_a_suite_moved_with_its_run_is_told_to_fill_the_file_where_it_is_now(make_suite: Callable[..., Path],
                                                                              tmp_path: Path) -> None:
    """A suite folder moved with its runs (another checkout, a CI job's workspace) is told to fill its label file
    where the gate compares the labels (``gate_drift.suite_folder``: where the run sits), not where the run was made,
    where nothing is now."""
    import shutil

    run = _run(make_suite, ["t"])
    made = run.suite_root
    assert made is not None and run.directory.parent.parent.resolve() == made.resolve()
    moved = tmp_path / "moved"
    shutil.move(str(made), moved)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = op.load_run(moved / "runs" / run.directory.name)
    (note,) = unchecked_notes(again, again.criteria)
    assert f" in {moved / 'labels' / 't.jsonl'} and " in note, note
    assert str(made) not in note


def test_a_label_file_filled_since_the_run_is_said_so_in_its_note(make_suite: Callable[..., Path],
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """README's first hour: run with an empty label file, label every pair, gate the run again. The run keeps the
    labels it started with, so its relation stays ``transform_not_checked``, and the line under the table told the
    user to label every pair in the file that now labels every pair. It now says that file changed since the run,
    and to run the suite again; a file as the run read it gets the line as before."""
    run = _run(make_suite, ["t"])
    assert _changed_clause(run) == ""
    folder = run.suite_root
    assert folder is not None
    (folder / "labels" / "t.jsonl").write_text("".join(
        json.dumps({"case_id": f"c{i}~t", "valid": True}) + "\n" for i in range(4)), encoding="utf-8")
    (note,) = unchecked_notes(run, run.criteria)
    assert note.endswith(f"(see op.validity(run)); that file has changed since run {run.run_id} was made, which "
                         "keeps the labels it started with: run the suite again to judge by the file as it is now")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["gate", str(run.directory)]) == 1  # no release.yaml: nothing gated
    out = " ".join(capsys.readouterr().out.split())
    assert f"that file has changed since run {run.run_id} was made" in out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["run", str(folder), "--quiet"]) == 1
    assert "is not checked" not in capsys.readouterr().out  # labeled when it started: checked


def _changed_clause(run: op.Run) -> str:
    """The clause a note gets for a label file changed since ``run``, or "" when its note has none."""
    (note,) = unchecked_notes(run, run.criteria)
    return note[note.index("; that file"):] if "; that file" in note else ""


def test_only_the_note_of_the_transform_whose_file_changed_says_so(make_suite: Callable[..., Path]) -> None:
    """Two transforms not checked, and one label file filled since the run: the other transform's file is as the
    run read it, so its note says nothing of a change."""
    run = _run(make_suite, ["t", "u"])
    folder = run.suite_root
    assert folder is not None
    (folder / "labels" / "t.jsonl").write_text("".join(
        json.dumps({"case_id": f"c{i}~t", "valid": True}) + "\n" for i in range(4)), encoding="utf-8")
    notes = unchecked_notes(run, run.criteria)
    assert [note.split(":")[0] for note in notes] == ["transform t is not checked", "transform u is not checked"]
    assert ["; that file has changed since run" in note for note in notes] == [True, False]
