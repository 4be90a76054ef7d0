"""``_analysis/run_copy``: a manifest rewritten as or after it is read, and records named by their line (five
mutants the other run_copy tests let live).

Each expectation is read from the run's files directly (the manifest in place, the line a record is on), never
from what the code under test gives.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _metamorphic_systems import all_valid, case, mm_suite, transform

import oloproof_nb as op
from oloproof_nb._analysis import run_copy
from oloproof_nb.errors import RunDirError

CASES = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(3)]


def _unfinished(make_suite: Callable[..., Path], tmp_path: Path) -> tuple[Path, str]:
    """A finished run's folder without its columnar copy, its manifest as the runner left it before the last stamp
    (``finished_at`` null, written compactly), and the finished manifest's text."""
    directory = op.run(make_suite(CASES), out=tmp_path / "run", progress=False).directory
    shutil.rmtree(directory / "frames")
    manifest = directory / "manifest.json"
    finished = manifest.read_text(encoding="utf-8")
    manifest.write_text(json.dumps({**json.loads(finished), "finished_at": None}), encoding="utf-8")
    return directory, finished


def _read_finished(run: op.Run, directory: Path) -> None:
    """The Run holds the finished manifest now in place, and reads a copy built from that very file."""
    assert json.loads((directory / "manifest.json").read_text(encoding="utf-8"))["finished_at"] is not None
    assert run.finished and run.manifest.finished_at is not None
    recorded = json.loads((directory / "frames" / "_source.json").read_text(encoding="utf-8"))["journal"]
    stat = (directory / "manifest.json").stat()
    assert recorded["manifest.json"] == [stat.st_size, stat.st_mtime_ns]
    assert sorted(run.cases["case_id"]) == ["c0", "c1", "c2"]


def test_a_manifest_rewritten_after_the_copy_was_found_fresh_is_read_again(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run finishes between the moment its copy is found fresh and the moment the copy's
    manifest is checked. The copy is then of an older manifest and must be looked for again; kept, the Run held
    the manifest it read first (unfinished) beside a folder whose manifest says the run finished."""
    directory, finished = _unfinished(make_suite, tmp_path)
    assert not op.load_run(directory).finished  # its copy, of the unfinished manifest, now in place
    real = run_copy.copied_unchanged

    def finishes_first(folder: Path, source: str, name: str) -> bool:
        monkeypatch.setattr(run_copy, "copied_unchanged", real)
        (directory / "manifest.json").write_text(finished, encoding="utf-8")  # the runner's last stamp
        return real(folder, source, name)

    monkeypatch.setattr(run_copy, "copied_unchanged", finishes_first)
    run = op.load_run(directory)
    assert run_copy.copied_unchanged is real  # the stamp fell where meant
    _read_finished(run, directory)


def test_a_manifest_rewritten_while_it_is_read_is_not_taken(make_suite: Callable[..., Path], tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The Run read manifest A; another process put in place a copy of manifest B (both
    unfinished, written otherwise); the Run reads B to take it, and the run finishes while it does. What was read
    is no longer the file the copy was built from: the copy is looked for again. Taken, the Run held B (unfinished)
    beside a folder whose manifest says the run finished."""
    directory, finished = _unfinished(make_suite, tmp_path)
    manifest = directory / "manifest.json"
    other = json.dumps(json.loads(manifest.read_text(encoding="utf-8")), indent=1)  # B: A written otherwise
    fresh_source, read_manifest = run_copy.fresh_source, run_copy.read_manifest

    def finishes_while_read(folder: Path) -> Any:
        monkeypatch.setattr(run_copy, "read_manifest", read_manifest)
        read = read_manifest(folder)
        manifest.write_text(finished, encoding="utf-8")  # the runner's last stamp, just after B was read
        return read

    def copy_of_b_put_in_place(folder: Path) -> str | None:
        monkeypatch.setattr(run_copy, "fresh_source", fresh_source)
        manifest.write_text(other, encoding="utf-8")
        op.load_run(directory)  # another process: the copy of B
        monkeypatch.setattr(run_copy, "read_manifest", finishes_while_read)
        return fresh_source(folder)

    monkeypatch.setattr(run_copy, "fresh_source", copy_of_b_put_in_place)
    run = op.load_run(directory)
    assert (run_copy.fresh_source, run_copy.read_manifest) == (fresh_source, read_manifest)  # both fell as meant
    _read_finished(run, directory)


def test_a_run_that_finished_since_it_was_read_is_not_edited_once_its_copy_is_written_again(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """``write_columnar`` takes the manifest the folder holds now (the run finished since it was read),
    and with it what tells an edit in place: its ``finished_at`` is the file's, no edit (kept from the first read,
    it was called edited, and the gate of the finished run had no release decision)."""
    directory, finished = _unfinished(make_suite, tmp_path)
    run = op.load_run(directory)
    assert not run.finished and run.manifest_edits == ()
    (directory / "manifest.json").write_text(finished, encoding="utf-8")  # the runner's last stamp
    run.write_columnar()
    _read_finished(run, directory)
    assert run.manifest_edits == ()
    assert op.gate(run).reason == op.gate(op.load_run(directory)).reason


@pytest.fixture
def metamorphic_run(make_suite: Callable[..., Path], tmp_path: Path) -> Path:
    """A finished run of 3 source cases and their copies under transform ``t`` (judged ``same_output``), in case
    order ``c1, c1~t, c2, c2~t, c3, c3~t``; its columnar copy removed."""
    ids = ["c1", "c2", "c3"]
    root = mm_suite(make_suite, [case(i) for i in ids], [transform("t")],
                    [{"type": "metamorphic_relation", "relation": "same_output", "transform": "t"}],
                    {"t": all_valid(ids, "t")})
    directory = op.run(op.load_suite(root), out=tmp_path / "run", progress=False).directory
    shutil.rmtree(directory / "frames")
    return directory


def _damage_line(journal: Path, lineno: int, damage: Callable[[dict[str, Any]], None]) -> str:
    """Damage the record on line ``lineno`` of ``journal`` (1-based) in place; its case id."""
    lines = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[lineno - 1])
    damage(record)
    lines[lineno - 1] = json.dumps(record) + "\n"
    journal.write_text("".join(lines), encoding="utf-8")
    return str(record["case"]["id"])


def test_a_record_whose_pair_view_cannot_be_made_is_named_by_its_line(metamorphic_run: Path) -> None:
    """A trajectory that is an empty list makes every per-case frame row (no steps, no
    answer) and fails only where the record's pair view is packed. The record is looked for by packing its view
    too: without that it was the raw AttributeError, an internal error on the command line."""
    journal = metamorphic_run / "cases.jsonl"
    assert _damage_line(journal, 4, lambda record: record.__setitem__("trajectory", [])) == "c2~t"
    with pytest.raises(RunDirError) as caught:
        op.load_run(metamorphic_run)
    assert str(caught.value) == (f"{journal}: line 4: not a case record as oloproof_nb writes it (AttributeError: "
                                 "'list' object has no attribute 'get'); the run directory is damaged")


@pytest.mark.parametrize("source_id", [["c2"], {"id": "c2"}])
def test_a_derived_record_whose_source_id_is_a_list_or_a_dict_is_named_by_its_line(metamorphic_run: Path,
                                                                                   source_id: Any) -> None:
    """A bug: a copy whose ``source_id`` is a list makes its frame rows and its pair view,
    and stops the pairing after the last chunk ("unhashable type: 'list'"), when every record was converted: the
    damaged record lies before the first record not converted, and is found only by looking there too. Before:
    ``oloproof gate`` said "internal error: TypeError: unhashable type: 'list' (a bug in oloproof_nb ...)" for a
    damaged journal; now its line, as for any other damage, the journal untouched."""
    journal = metamorphic_run / "cases.jsonl"
    assert _damage_line(journal, 4, lambda record: record["case"].__setitem__("source_id", source_id)) == "c2~t"
    before = journal.read_bytes()
    with pytest.raises(RunDirError) as caught:
        op.load_run(metamorphic_run)
    # a recent pyarrow takes a list for a text column in the cases frame, and the pairing finds it; the oldest
    # pyarrow this project allows (16) refuses it there already (ArrowTypeError: Expected bytes, got a 'list' object)
    said = str(caught.value)
    assert said.startswith(f"{journal}: line 4: not a case record as oloproof_nb writes it (") and \
        said.endswith("); the run directory is damaged"), said
    # a dict (unhashable as a list is) is named too, not only a list
    kind = type(source_id).__name__
    assert f"TypeError: source_id {source_id!r} is not text" in said or f"got a '{kind}' object" in said, said
    assert journal.read_bytes() == before


@pytest.mark.parametrize("system", ["sysmod:Stateless", "sysmod:Scripted"])
def test_a_journal_of_a_version_before_records_named_their_run_loads(make_suite: Callable[..., Path], tmp_path: Path,
                                                                     system: str) -> None:
    """A version before this one wrote no ``run_id`` in a case record; such a journal
    (here: this run's with every record's ``run_id`` taken out) loads, its records being of the run whose state
    names it, or whose state names none (a system without ``snapshot()``). Read as naming run None, it was refused
    as another run's ("written by run None")."""
    directory = op.run(make_suite(CASES, evaluators=[{"type": "answer_matches"}], system=system),
                       out=tmp_path / "run", progress=False).directory
    shutil.rmtree(directory / "frames")
    journal = directory / "cases.jsonl"
    records = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    for record in records:
        del record["run_id"]
    journal.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    run = op.load_run(directory)
    assert sorted(run.cases["case_id"]) == ["c0", "c1", "c2"]
    assert [record["environment_state"] is None for record in records] == [system == "sysmod:Stateless"] * 3
    assert len(run.verdicts) == sum(len(record["verdicts"]) for record in records) == 3
