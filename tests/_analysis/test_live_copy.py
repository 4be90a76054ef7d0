"""The columnar copy built while a run goes (``_analysis/live_copy.py``): never the journal read back, always
equal to the copy built from the journal, dropped whenever it could differ from it."""

from __future__ import annotations

import gc
import os
import random
import shutil
import weakref
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _frame_checks import NAMES, appended_records, copy_folders, everything_suite, example_run_records, journal_frames

import oloproof_nb as op
from oloproof_nb._analysis import columnar, live_copy
from oloproof_nb._analysis import run as run_module
from oloproof_nb._analysis.live_copy import LiveCopy
from oloproof_nb._run.runner import run_suite
from oloproof_nb._run.store import read_cases
from oloproof_nb.examples import init_example


def _no_journal_conversion(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: Any) -> None:
        raise AssertionError("the columnar copy was built from the journal")

    monkeypatch.setattr(run_module.Run, "_write_copy", refuse)  # what loading a run without a copy calls


def _assert_equals_journal(directory: Path) -> op.Run:
    run = op.load_run(directory)
    expected = journal_frames(run)
    for name in NAMES:
        pd.testing.assert_frame_equal(getattr(run, name), expected[name], obj=f"run.{name}")
    return run




@pytest.mark.parametrize("workers", [1, 3])
def test_op_run_writes_the_copy_without_reading_the_journal_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  workers: int) -> None:
    """Replays, pairs and receipts, several chunks, records finishing out of case order (workers=3)."""
    folder = everything_suite(tmp_path / "suite")
    monkeypatch.setattr(live_copy, "CHUNK", 7)  # 48 cases: 7 chunks, the last one short
    with monkeypatch.context() as patch:
        _no_journal_conversion(patch)
        run = op.run(folder, out=tmp_path / "run", workers=workers, progress=False)
        assert columnar.is_fresh(run.directory)
        live = {name: getattr(run, name) for name in NAMES}
    assert len(live["replays"]) and len(live["pairs"]) == 24 and len(live["receipts"]) == 48
    assert copy_folders(run.directory) == ["frames"]
    expected = journal_frames(run)
    for name in NAMES:
        pd.testing.assert_frame_equal(live[name], expected[name], obj=name)
    shutil.rmtree(run.directory / "frames")  # and equal to the copy built from the journal, file for file
    rebuilt = op.load_run(run.directory)
    for name in NAMES:
        pd.testing.assert_frame_equal(getattr(rebuilt, name), live[name], obj=name)




def test_records_in_any_order_give_the_journal_frames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory, seen = example_run_records(tmp_path)
    assert [rec["index"] for rec, _ in seen] == list(range(48))
    shuffled = seen[:]
    random.Random(3).shuffle(shuffled)
    monkeypatch.setattr(live_copy, "CHUNK", 5)
    copy = LiveCopy()
    copy.start(directory)
    for record, ref in shuffled:
        copy.add(record, ref)
    assert copy.commit()
    _no_journal_conversion(monkeypatch)
    _assert_equals_journal(directory)


@pytest.mark.parametrize("fault", ["twice", "missing", "aborted"])
def test_a_copy_that_could_differ_from_the_journal_is_dropped(tmp_path: Path, fault: str) -> None:
    directory, seen = example_run_records(tmp_path)
    copy = LiveCopy()
    copy.start(directory)
    for record, ref in seen[:-1]:
        copy.add(record, ref)
    if fault == "twice":
        copy.add(*seen[10])
        copy.add(*seen[-1])
    elif fault == "aborted":
        copy.abort()
    assert copy.commit() is False
    assert copy_folders(directory) == []  # nothing written, no temporary folder left
    assert not columnar.is_fresh(directory)
    run = _assert_equals_journal(directory)  # load_run builds the copy from the journal instead
    assert len(run.cases) == 48 and columnar.is_fresh(directory)


def test_run_scope_over_many_chunks_is_judged_by_the_live_copy(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Pairs across many chunks: the live copy keeps each record packed (its final state by address, read
    back from the run's state store when a pair is judged) and never falls back to the journal."""
    folder = init_example("stateful-agent", tmp_path / "suite")
    monkeypatch.setattr(live_copy, "CHUNK", 5)
    calls: list[int] = []
    original = run_module.Run._write_copy

    def counted(self: Any) -> None:
        calls.append(1)
        original(self)

    monkeypatch.setattr(run_module.Run, "_write_copy", counted)
    run = op.run(folder, out=tmp_path / "run", progress=False)
    assert calls == [] and copy_folders(run.directory) == ["frames"]
    pairs = _assert_equals_journal(run.directory).pairs
    assert len(pairs) == 24 and set(pairs["holds"]) == {True, False}


def test_the_live_copy_keeps_each_case_for_its_pairs_as_one_untracked_tuple(tmp_path: Path) -> None:
    """What a live run holds of every case until its pairs are judged: a packed view whose states (the
    initial one included) are addresses, never a state or any other container the collector walks."""
    copy = LiveCopy()
    directory = run_suite(op.load_suite(init_example("stateful-agent", tmp_path / "suite")), out=tmp_path / "run",
                          sink=copy)
    assert copy.commit()
    kept = list(copy._kept)
    gc.collect()
    assert len(kept) == 48 and [p for p in kept if gc.is_tracked(p)] == []
    assert all(p[5] is not None and p[7] is not None for p in kept)  # both states by address
    _assert_equals_journal(directory)


def test_a_run_stopped_by_the_user_leaves_no_partial_copy(make_suite, tmp_path: Path) -> None:
    """Ctrl-C in the middle of a run: the live copy's temporary folder goes; the resumed run's copy is right."""
    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(6)]
    folder = make_suite(cases, evaluators=[{"type": "answer_matches"}])
    out = tmp_path / "run"

    def ctrl_c_after_three(done: int, total: int) -> None:
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        op.run(folder, out=out, progress=ctrl_c_after_three)
    assert len(list(read_cases(out))) == 3 and copy_folders(out) == []
    run = op.run(folder, out=out, resume=True, progress=False)  # no live copy on resume: built from the journal
    assert list(run.cases["case_id"]) == [f"c{i}" for i in range(6)]
    _assert_equals_journal(out)


def test_oloproof_run_writes_the_copy_in_its_run_process(tmp_path: Path) -> None:
    """The command line: the child that runs the suite builds the copy; the parent that gates never converts
    (a ``sitecustomize`` makes any conversion from the journal fail in both processes)."""
    from _reliability_systems import cli_env, run_cli

    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "from oloproof_nb._analysis import run as _run\n"
        "def _refuse(self):\n"
        "    raise SystemExit('the columnar copy was built from the journal')\n"
        "_run.Run._write_copy = _refuse\n", encoding="utf-8")
    folder = everything_suite(tmp_path / "suite")
    env = cli_env()
    env["PYTHONPATH"] = os.pathsep.join([str(hook), *filter(None, [env.get("PYTHONPATH")])])
    proc = run_cli("run", str(folder), "--out", str(tmp_path / "run"), "--quiet", env=env)
    assert proc.returncode in (0, 1), proc.stderr
    assert "built from the journal" not in proc.stderr
    assert columnar.is_fresh(tmp_path / "run") and copy_folders(tmp_path / "run") == ["frames"]
    _assert_equals_journal(tmp_path / "run")


class _Tracked(dict):  # type: ignore[type-arg]
    """A state the test can watch through a weak reference (a plain dict cannot be weakly referenced)."""


def test_a_chunk_written_lets_its_records_go(make_suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each record is turned into rows as it arrives and let go (a chunk's rows keep cells, a state's JSON as
    text): a run's records and states are never held (nor, through a diff memo, its states), so memory stays flat
    and the garbage collector has nothing of them to walk (holding a chunk's records, 2,000 desk cases made 71
    young and middle collections and, every other run, a full one)."""
    cases = [{"id": f"c{i}", "input": {"writes": [{"path": ["n"], "value": i}], "answer": "ok"},
              "initial_state": {"n": -1}, "expected": {"answer": "ok"}} for i in range(12)]
    folder = make_suite(cases, evaluators=[{"type": "answer_matches"}, {"type": "state_matches"}])
    directory, seen = appended_records(folder, tmp_path / "run")
    monkeypatch.setattr(live_copy, "CHUNK", 5)
    copy = LiveCopy()
    copy.start(directory)
    watched = []
    for record, ref in seen:
        state = _Tracked(record["environment_state"]["state"])
        watched.append(weakref.ref(state))
        copy.add({**record, "environment_state": {**record["environment_state"], "state": state}}, ref)
        del state, record
    seen.clear()
    gc.collect()
    alive = [i for i, ref in enumerate(watched) if ref() is not None]
    assert alive == []  # not even the last two cases, whose rows wait for the next chunk of 5
    assert copy.commit()
    gc.collect()
    assert all(ref() is None for ref in watched)
    _assert_equals_journal(directory)




def test_a_run_of_several_epochs_is_copied_live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """24 source cases + 24 derived, 2 epochs: 96 case records (counted by hand), each epoch a record of its own;
    the copy holds them all and is committed (not dropped as "a record missing"), equal to the journal's."""
    directory, seen = appended_records(init_example("stateful-agent", tmp_path / "suite"), tmp_path / "run", epochs=2)
    assert len(seen) == 96 and [rec["index"] for rec, _ in seen] == list(range(96))
    copy = LiveCopy()
    copy.start(directory)
    for record, ref in seen:
        copy.add(record, ref)
    assert copy.commit()
    _no_journal_conversion(monkeypatch)
    run = _assert_equals_journal(directory)
    assert sorted(set(run.cases["epoch"])) == [1, 2]


def test_a_write_error_drops_the_copy_and_the_journal_is_read_instead(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills while a chunk is written: the copy could lack that chunk's rows, so it is dropped (nothing
    left in the run directory) and ``load_run`` builds it from the journal."""
    directory, seen = example_run_records(tmp_path)
    monkeypatch.setattr(live_copy, "CHUNK", 5)
    written: list[str] = []
    original = columnar.CopyWriter.write

    def full_disk(self: Any, name: str, table: Any) -> None:
        written.append(name)
        if len(written) == 3:
            raise OSError(28, "No space left on device")
        original(self, name, table)

    monkeypatch.setattr(columnar.CopyWriter, "write", full_disk)
    copy = LiveCopy()
    copy.start(directory)
    for record, ref in seen:
        copy.add(record, ref)
    assert copy.commit() is False and not copy.usable
    assert copy_folders(directory) == [] and not columnar.is_fresh(directory)
    monkeypatch.setattr(columnar.CopyWriter, "write", original)
    assert len(_assert_equals_journal(directory).cases) == 48

