"""Frames built after an edit in place of ``run.manifest`` are of the folder's manifest, not the edit.

``write_columnar`` reads the folder's manifest.json, builds the frames, then takes that manifest (so the edit is gone
and :attr:`~oloproof_nb._analysis.run.Run.manifest_edits` is empty); the frames were built from the Run's own,
edited manifest (its ``n_cases`` decides whether a transform's labels are checked, so which copies are scored).
Every run here: 40 source cases and their 40 copies under transform ``t``; the copies of c00..c07 answer wrong
(``answer_matches`` 72 of 80, BLOCK at 0.85); 35 of the 40 copies are labeled, c00..c07's invalid, so the labels are
not checked (35 of 40 pairs) and every copy is scored. ``run.manifest.n_cases = 70`` makes 35 pairs a transform:
checked, the 8 failing copies left out, 72 of 72, PASS (the exact 95% lower bound 0.025^(1/72) = 0.950 by hand).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import oloproof_nb as op
from oloproof_nb._analysis import columnar, run_copy
from oloproof_nb._run.runner import run_suite


def _suite(make_suite: Callable[..., Path], relation: bool = False) -> op.Suite:
    """The suite of every test here; ``relation``: a ``same_output`` relation under ``t`` too (not gated)."""
    from _metamorphic_systems import case, mm_suite, transform

    ids = [f"c{i:02d}" for i in range(40)]
    # "!answe" + the transform's "r": the copy asks for a wrong answer, its source does not
    cases = [case(cid, message="please mark it !answe" if n < 8 else "please mark it") for n, cid in enumerate(ids)]
    labels = [{"case_id": f"{cid}~t", "valid": n >= 8, "labeler": "t"} for n, cid in enumerate(ids[:35])]
    spec = {**transform("t"), "template": "{value}r"}
    checks = [{"type": "answer_matches"}]
    checks += [{"type": "metamorphic_relation", "relation": "same_output", "transform": "t"}] if relation else []
    return op.load_suite(mm_suite(make_suite, cases, [spec], checks, labels={"t": labels},
                                  release={"allow_approximate_methods": True, "criteria": {"answer_matches": 0.85}}))


def _scored(run: op.Run) -> tuple[str, int, int]:
    g = op.gate(run)
    return g.verdict, int(g.table.loc[0, "n"]), int(g.table.loc[0, "passed"])


def test_a_copy_written_after_an_edit_of_n_cases_is_of_the_folders_manifest(make_suite: Callable[..., Path],
                                                                           tmp_path: Path) -> None:
    """A run stopped after 60 of its 80 records, loaded in a notebook, ``n_cases`` edited there, the run resumed
    (the runner alone writes no columnar copy), then ``write_columnar`` to see it finished: the copy was built with
    the edited ``n_cases`` and put in the folder, so the Run and ``oloproof gate`` of the folder PASSed 72 of 72."""
    suite = _suite(make_suite)

    def stop(done: int, total: int) -> None:
        if done == 60:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        op.run(suite, out=tmp_path / "run", progress=stop)
    run = op.load_run(tmp_path / "run")
    run.manifest.n_cases = 70
    run_suite(suite, out=tmp_path / "run", resume=True)
    run.write_columnar()
    assert run.manifest_edits == () and run.manifest.n_cases == 80
    assert _scored(run) == ("BLOCK", 80, 72)
    assert _scored(op.load_run(tmp_path / "run")) == ("BLOCK", 80, 72)


def _write_to_a_read_only_folder(run: op.Run, monkeypatch: pytest.MonkeyPatch) -> None:
    """``run.write_columnar()`` where the folder cannot be written: the frames are kept in memory, as warned."""
    def read_only(self: Any, directory: Path, fingerprint: Any) -> None:
        raise PermissionError(13, "Permission denied", str(directory))

    monkeypatch.setattr(columnar.CopyWriter, "__init__", read_only)
    with pytest.warns(run_copy.ColumnarCopyWarning, match="kept in memory"):
        run.write_columnar()


def test_frames_kept_in_memory_after_an_edit_of_n_cases_are_of_the_folders_manifest(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder this user cannot write (another user's CI artifact): ``write_columnar`` keeps the frames in memory,
    built with the edited ``n_cases``, and the edit forgotten: PASS 72 of 72 with no ``edited_frames``."""
    run = op.load_run(op.run(_suite(make_suite), out=tmp_path / "run", progress=False).directory)
    run.manifest.n_cases = 70
    _write_to_a_read_only_folder(run, monkeypatch)
    assert run.manifest_edits == ()
    assert _scored(run) == ("BLOCK", 80, 72)


def test_the_relation_judged_in_frames_built_after_an_edit_of_n_cases_is_the_folders(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The relation is judged as the frames are built, over the pairs the manifest's ``n_cases`` gives: with the
    edited 70, its rows were of a checked transform (the 8 pairs labeled invalid and the 5 unlabeled left out: 27
    rows, all pass), where the folder's run has 40 (8 fail), and ``run.verdicts`` was no longer the folder's."""
    directory = op.run(_suite(make_suite, relation=True), out=tmp_path / "run", progress=False).directory
    own = op.load_run(directory).verdicts
    relation = own[own["criterion"] == "same_output_under_t"]
    assert (len(own), len(relation), int((relation["verdict"] == "fail").sum())) == (120, 40, 8)
    run = op.load_run(directory)
    run.manifest.n_cases = 70
    _write_to_a_read_only_folder(run, monkeypatch)
    pd.testing.assert_frame_equal(run.verdicts, own)


def test_the_copies_left_out_are_of_the_folders_n_cases_after_an_edit_put_back(make_suite: Callable[..., Path],
                                                                              tmp_path: Path) -> None:
    """``Run.unscored_ids`` (a cached property) worked out while ``n_cases`` was edited in place, the value then put
    back (no edit left): the gate said 8 copies were scored by no criterion, beside its table scoring all 80 rows."""
    run = op.load_run(op.run(_suite(make_suite), out=tmp_path / "run", progress=False).directory)
    run.manifest.n_cases = 70
    assert op.gate(run).reason.startswith("edited_frames: run.manifest.n_cases")
    run.manifest.n_cases = 80
    g = op.gate(run)
    assert run.manifest_edits == () and run.unscored_ids == frozenset()
    assert (g.verdict, g.table.loc[0, "n"]) == ("BLOCK", 80) and "scored by no criterion" not in str(g)


def test_a_copy_written_after_an_edit_of_epochs_is_of_the_folders_manifest(make_suite: Callable[..., Path],
                                                                         tmp_path: Path) -> None:
    """The epochs the journal's records are checked against are the folder's manifest's too, as
    its ``n_cases`` is. A two-epoch run of 4 cases (8 records), ``run.manifest.epochs = 1`` edited in place, then
    ``write_columnar``: built by the edit, every epoch-2 record was refused as damage (a RunDirError); built by the
    folder's manifest, the frames hold the 8 case runs and the edit is gone."""
    root = make_suite([{"id": f"c{i}", "input": {"answer": "yes", "i": i}, "initial_state": {},
                        "expected": {"answer": "yes"}} for i in range(4)], evaluators=[{"type": "answer_matches"}])
    run = op.load_run(op.run(op.load_suite(root), out=tmp_path / "run", progress=False, epochs=2).directory)
    run.manifest.epochs = 1
    run.write_columnar()
    assert run.manifest_edits == () and run.manifest.epochs == 2
    assert sorted(run.cases["epoch"].tolist()) == [1, 1, 1, 1, 2, 2, 2, 2]
