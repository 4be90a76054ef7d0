"""A Run's manifest is the one its columnar copy was built from.

A run that finishes between the moment a reader reads its manifest and the moment the reader opens the copy (a
copy another process put in place: the live run's own, or a faster reader's) gave a Run of 48 of 48 cases beside
the manifest read before, which calls the run unfinished: ``oloproof gate`` on a run that had just finished said
"unfinished: the run did not finish (48 of 48 cases recorded)" and BLOCKed, whatever its journal says.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._analysis import columnar, run_copy
from oloproof_nb.errors import CopyChangedError
from oloproof_nb.examples import init_example


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("r48")
    folder = init_example("stateful-agent", root / "suite")
    return op.run(folder, out=root / "run", progress=False).directory


def _unfinished_copy(finished_run: Path, tmp_path: Path) -> tuple[Path, str]:
    """A copy of the run without its columnar copy, its manifest as the runner left it before the last stamp
    (no ``finished_at``), and the finished manifest's text."""
    directory = tmp_path / "run"
    shutil.copytree(finished_run, directory, ignore=shutil.ignore_patterns("frames"))
    manifest = directory / "manifest.json"
    finished = manifest.read_text(encoding="utf-8")
    data = json.loads(finished)
    data["finished_at"] = None
    manifest.write_text(json.dumps(data), encoding="utf-8")
    return directory, finished


def _check_against_the_folder(run: op.Run, directory: Path) -> None:
    """The Run's manifest, cases and gate are those of the folder read by hand."""
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    lines = (directory / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    assert manifest["finished_at"] is not None
    assert run.finished
    assert run.manifest.finished_at is not None
    assert len(run.cases) == len(lines) == manifest["n_cases"] == 48
    assert sorted(run.cases.case_id) == sorted(json.loads(line)["case"]["id"] for line in lines)
    assert "unfinished" not in str(op.gate(run))
    recorded = json.loads((directory / "frames" / "_source.json").read_text(encoding="utf-8"))["journal"]
    stat = (directory / "manifest.json").stat()
    assert recorded["manifest.json"] == [stat.st_size, stat.st_mtime_ns]  # the copy is of the manifest read


def test_a_run_that_finishes_before_its_copy_is_opened_is_read_finished(finished_run: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifest is read (unfinished), then the run finishes and its copy is put in place, then the reader
    opens that fresh copy. Before: ``run.finished`` was False beside 48 cases, and the gate said "unfinished"."""
    directory, finished = _unfinished_copy(finished_run, tmp_path)
    real = run_copy.fresh_source
    done: list[bool] = []

    def finish_first(path: Path) -> str | None:
        if not done:
            done.append(True)
            (directory / "manifest.json").write_text(finished, encoding="utf-8")
            monkeypatch.setattr(run_copy, "fresh_source", real)
            op.load_run(directory)  # the live run's copy, put in place by another process
            monkeypatch.setattr(run_copy, "fresh_source", finish_first)
        return real(path)

    monkeypatch.setattr(run_copy, "fresh_source", finish_first)
    run = op.load_run(directory)
    assert done
    _check_against_the_folder(run, directory)


def test_a_faster_copy_of_the_finished_run_comes_with_its_manifest(finished_run: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader converts the unfinished run; before it puts its copy in place the run finishes and another
    process puts the finished run's copy there, so the reader drops its own and reads that one. Before: with
    the manifest the reader read first (unfinished)."""
    directory, finished = _unfinished_copy(finished_run, tmp_path)
    real = columnar.CopyWriter.commit
    done: list[bool] = []

    def finish_first(self: Any) -> None:
        if not done:
            done.append(True)
            (directory / "manifest.json").write_text(finished, encoding="utf-8")
            other = op.Run.unopened(directory)
            other.write_columnar()  # the faster process, with the finished manifest
            assert other.finished
        real(self)

    monkeypatch.setattr(columnar.CopyWriter, "commit", finish_first)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        run = op.load_run(directory)
    assert [str(w.message) for w in seen] == []
    assert done
    _check_against_the_folder(run, directory)


def test_write_columnar_while_another_copy_is_put_in_place_never_reads_unchecked(
        finished_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``run.write_columnar()`` whose copy was put in place while another process was removing ``_source.json`` to
    put its own there left the Run with no copy to check its reads against: every frame was then read from whatever
    files were in place. Here the run goes on after that and a newer copy is put in place: the Run read ``verdicts``
    of 48 cases beside its ``cases`` of 24, where a Run must stop with "load it again"."""
    directory, finished = _unfinished_copy(finished_run, tmp_path)
    lines = (directory / "cases.jsonl").read_bytes().splitlines(keepends=True)
    (directory / "cases.jsonl").write_bytes(b"".join(lines[:24]))  # the run halfway
    run = op.load_run(directory)
    real = run_copy.copy_source
    calls: list[Path] = []

    def being_replaced(path: Path) -> str | None:  # another process has just removed _source.json
        calls.append(path)
        return None if len(calls) == 1 else real(path)

    monkeypatch.setattr(run_copy, "copy_source", being_replaced)
    run.write_columnar()
    monkeypatch.setattr(run_copy, "copy_source", real)
    assert calls
    assert len(run.cases) == 24
    (directory / "cases.jsonl").write_bytes(b"".join(lines))  # the run goes on and finishes
    (directory / "manifest.json").write_text(finished, encoding="utf-8")
    assert len(op.load_run(directory).cases) == 48  # its newer copy, put in place
    with pytest.raises(CopyChangedError, match="load it again"):
        len(run.verdicts)
