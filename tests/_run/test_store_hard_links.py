"""A run folder whose files another folder shares (hard links: ``cp -al``, or a backup tool that hard-links).

A resume appends to ``cases.jsonl``, ``replays.jsonl`` and ``states.jsonl`` and cuts a torn last line in place;
through a name another folder shares, that changes the other run too (before the refusal, resuming a ``cp -al`` copy
of a run stopped after 2 of 4 cases left the original's ``cases.jsonl`` holding all 4 records, its manifest still
unfinished). Such a resume is refused in one line naming the file and ``cp -r``, before anything is touched. What
is replaced rather than written in place (``manifest.json``, a rewrite of ``replays.jsonl``, the columnar copy's
files) gets a new file under the copy's name, and the other folder keeps its own.
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from _reliability_systems import one_error_line

import oloproof_nb as op
from oloproof_nb._core.records import Manifest
from oloproof_nb._run.in_flight import note_end
from oloproof_nb._run.store import CASES, INTERNAL_ERROR, REPLAYS, STARTED, RunStore, truncate_torn_tail
from oloproof_nb.errors import RunDirError

pytestmark = pytest.mark.skipif(not hasattr(os, "link"), reason="no hard links on this platform")

MANIFEST = Manifest(suite="s", run_id="x", started_at="2026-01-01T00:00:00.000000Z", oloproof_nb="0", n_cases=0)


def _cases(n: int) -> list[dict[str, Any]]:
    return [{"id": f"c{i}", "input": {"answer": i}, "initial_state": {"n": i}, "expected": {"answer": i}}
            for i in range(n)]


def _stopped_run(make_suite: Any, tmp_path: Path) -> tuple[Path, Path]:
    """A run of 4 cases stopped after its second record (as a kill leaves it: no ``finished_at``, no copy)."""
    root = make_suite(_cases(4))
    out = tmp_path / "runs" / "A"
    op.run(root, out=out, progress=False)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    lines = (out / CASES).read_bytes().splitlines(keepends=True)
    (out / CASES).write_bytes(b"".join(lines[:2]))
    shutil.rmtree(out / "frames")
    return root, out


def _link_copy(source: Path, target: Path) -> None:
    """``cp -al source target``: the same folders, every file a second name of the original's."""
    shutil.copytree(source, target, copy_function=os.link)


def _files(folder: Path) -> dict[str, tuple[bytes, int]]:
    """``{relative path: (bytes, mtime_ns)}`` of every file below ``folder``."""
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("resumed", ["copy", "original"])
def test_resuming_a_hard_linked_run_folder_is_refused_and_changes_neither(
        make_suite: Any, tmp_path: Path, resumed: str) -> None:
    root, original = _stopped_run(make_suite, tmp_path)
    copy = tmp_path / "runs" / "B"
    _link_copy(original, copy)
    before = {"A": _files(original), "B": _files(copy)}
    target = copy if resumed == "copy" else original
    with pytest.raises(RunDirError) as caught:
        op.run(root, out=target, resume=True, progress=False)
    assert str(caught.value) == (
        f"{target / CASES}: has 2 hard links, so another folder shares it (a run folder copied with cp -al, or by a "
        "backup tool that hard-links); written here in place, it would change that folder's run too: make an "
        "independent copy of the run folder with cp -r (without -l) and resume that copy")
    assert {"A": _files(original), "B": _files(copy)} == before  # the lock's holder note too


def test_the_command_refuses_it_in_one_line_with_exit_2(make_suite: Any, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from oloproof_nb import cli

    root, original = _stopped_run(make_suite, tmp_path)
    copy = tmp_path / "runs" / "B"
    _link_copy(original, copy)
    before = _files(original)
    assert cli.main(["run", str(root), "--out", str(copy), "--resume", "--quiet"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"oloproof: error: {copy / CASES}: has 2 hard links") and "cp -r (without -l)" in line
    assert _files(original) == before
    assert [rec["case"]["id"] for rec in op.load_run(original).records] == ["c0", "c1"]


def test_an_independent_copy_resumes_and_leaves_the_original_as_it_was(make_suite: Any, tmp_path: Path) -> None:
    """What the refusal tells the user to do works: a ``cp -r`` copy (of a folder whose files are hard-linked
    elsewhere) has files of its own, and its resume finishes it without touching the original."""
    root, original = _stopped_run(make_suite, tmp_path)
    _link_copy(original, tmp_path / "runs" / "B")
    independent = tmp_path / "runs" / "C"
    shutil.copytree(original, independent)
    before = _files(original)
    run = op.run(root, out=independent, resume=True, progress=False)
    assert list(run.cases["case_id"]) == ["c0", "c1", "c2", "c3"] and run.finished
    assert _files(original) == before


def test_a_finished_run_shared_by_hard_links_resumes_to_nothing_and_changes_nothing(
        make_suite: Any, tmp_path: Path) -> None:
    """A finished run has nothing to resume (the command says so): its shared journals are not written, so its
    ``--resume`` is not refused, as for any finished run."""
    root = make_suite(_cases(2))
    original = tmp_path / "runs" / "A"
    op.run(root, out=original, progress=False)
    copy = tmp_path / "runs" / "B"
    _link_copy(original, copy)
    before = {name: path.read_bytes() for name, path in ((n, original / n) for n in (CASES, "manifest.json"))}
    run = op.run(root, out=copy, resume=True, progress=False)
    assert run.finished and list(run.cases["case_id"]) == ["c0", "c1"]
    assert {name: (original / name).read_bytes() for name in before} == before


def test_an_append_to_a_shared_journal_is_refused_even_when_the_resume_was_let_through(tmp_path: Path) -> None:
    """The append itself refuses a shared file (the open of ``open_in_place``): a finished run is resumed without
    the refusal (it normally writes nothing), so a record it did append would change the other folder's journal."""
    store = RunStore.create(tmp_path / "A", MANIFEST)
    store._append(CASES, {"case": {"id": "a"}})
    store.finish(datetime(2026, 1, 1, tzinfo=timezone.utc))
    _link_copy(tmp_path / "A", tmp_path / "B")
    before = (tmp_path / "A" / CASES).read_bytes()
    resumed = RunStore.resume(tmp_path / "B")
    try:
        with pytest.raises(RunDirError, match=r"B/cases\.jsonl: has 2 hard links"):
            resumed._append(CASES, {"case": {"id": "b"}})
    finally:
        resumed.close()
    assert (tmp_path / "A" / CASES).read_bytes() == before


def test_a_rewrite_of_a_shared_replays_jsonl_gives_this_folder_its_own_file(tmp_path: Path) -> None:
    """The resume drops replays of cases with no record by rewriting ``replays.jsonl`` (a new file, renamed into
    place): the folder it shares the file with keeps its own, every line of it."""
    store = RunStore.create(tmp_path / "A", MANIFEST)
    store._append(REPLAYS, {"case_id": "gone", "epoch": 1})  # a case cut short: its record never came
    store._append(CASES, {"case": {"id": "a"}})
    store.finish(datetime(2026, 1, 1, tzinfo=timezone.utc))
    _link_copy(tmp_path / "A", tmp_path / "B")
    before = (tmp_path / "A" / REPLAYS).read_bytes()
    RunStore.resume(tmp_path / "B").close()
    assert (tmp_path / "B" / REPLAYS).read_bytes() == b""
    assert (tmp_path / "A" / REPLAYS).read_bytes() == before


def test_a_torn_line_of_a_shared_journal_is_not_cut(tmp_path: Path) -> None:
    """Cutting a torn last line is a write in place too: refused for a file another folder shares."""
    journal = tmp_path / "A" / CASES
    journal.parent.mkdir()
    journal.write_bytes(b'{"case": {"id": "a"}}\n{"torn')
    os.link(journal, tmp_path / "shared.jsonl")
    with pytest.raises(RunDirError, match=r"cases\.jsonl: has 2 hard links"):
        truncate_torn_tail(journal)
    assert (tmp_path / "shared.jsonl").read_bytes() == b'{"case": {"id": "a"}}\n{"torn'


def test_the_end_of_a_run_s_process_is_not_noted_into_a_shared_started_jsonl(tmp_path: Path) -> None:
    """``oloproof run`` notes how the run's process ended by appending to ``started.jsonl``: never into one another
    folder shares (nothing is noted, as when the folder cannot be written)."""
    store = RunStore.create(tmp_path / "A", MANIFEST)
    store.note_case("a", 1)
    store._close_files()
    store._close_started()
    store.release()
    _link_copy(tmp_path / "A", tmp_path / "B")
    before = (tmp_path / "A" / STARTED).read_bytes()
    assert note_end(tmp_path / "B", 3) is None
    assert (tmp_path / "A" / STARTED).read_bytes() == before


def test_an_internal_error_is_saved_into_this_folder_s_own_file(tmp_path: Path) -> None:
    """``internal-error.txt`` is appended to: one another folder shares becomes this folder's own (with the text it
    held), so the other folder's file keeps only its own tracebacks."""
    store = RunStore.create(tmp_path / "A", MANIFEST)
    store.save_internal_error("first")
    store.close()
    _link_copy(tmp_path / "A", tmp_path / "B")
    before = (tmp_path / "A" / INTERNAL_ERROR).read_text(encoding="utf-8")
    path = RunStore(tmp_path / "B", MANIFEST).save_internal_error("second")
    assert (tmp_path / "A" / INTERNAL_ERROR).read_text(encoding="utf-8") == before
    assert path.read_text(encoding="utf-8").startswith(before) and path.read_text(encoding="utf-8").endswith(
        "second\n")


def test_a_columnar_copy_rebuilt_in_a_hard_linked_folder_leaves_the_other_folder_s_copy(
        make_suite: Any, tmp_path: Path) -> None:
    """The copy's files are replaced (``os.replace``), never written in place: rebuilding the copy of one folder
    gives it new files, and the folder it was copied from with hard links keeps its own, still fresh."""
    from oloproof_nb._analysis.columnar import SOURCE_FILE, is_fresh

    root = make_suite(_cases(2))
    original = tmp_path / "runs" / "A"
    op.run(root, out=original, progress=False)
    copy = tmp_path / "runs" / "B"
    _link_copy(original, copy)
    (copy / "frames" / SOURCE_FILE).unlink()  # the copy's copy is no longer fresh: loading it rebuilds it
    before = _files(original / "frames")
    assert list(op.load_run(copy).cases["case_id"]) == ["c0", "c1"] and is_fresh(copy)
    assert _files(original / "frames") == before and is_fresh(original)
    assert os.stat(copy / "frames" / "cases.parquet").st_ino != os.stat(original / "frames" / "cases.parquet").st_ino
