"""The Run a notebook holds: what it reads stays the run it opened, whatever the notebook does meanwhile."""

from __future__ import annotations

import copy
import gc
import os
import pickle
import shutil
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import oloproof_nb as op
from oloproof_nb.errors import CopyChangedError, OloproofError, RunDirError


def _cases(n: int, failing: int) -> list[dict[str, object]]:
    """``n`` cases expecting "ok"; the first ``failing`` answer "bad"."""
    return [{"id": f"c{i:02d}", "input": {"answer": "bad" if i < failing else "ok", "n": i},
             "expected": {"answer": "ok"}} for i in range(n)]


@pytest.fixture
def two_runs(make_suite: Callable[..., Path], tmp_path: Path) -> tuple[Path, Path]:
    """Two runs of one suite, each in a folder named ``run`` (under ``a/`` and ``b/``): 8 of 30 cases fail in the
    first, none in the second."""
    evaluators = [{"type": "answer_matches"}]
    release = {"criteria": {"answer_matches": 0.9}}
    dirs = []
    for name, failing in (("a", 8), ("b", 0)):
        suite = op.load_suite(make_suite(_cases(30, failing), evaluators=evaluators, release=release))
        dirs.append(op.run(suite, out=tmp_path / name / "run", progress=False).directory)
    return dirs[0], dirs[1]


def test_a_run_opened_by_a_relative_path_stays_that_run_after_chdir(two_runs: tuple[Path, Path],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``op.load_run("run")`` kept the relative path and read frames and records lazily, so after a
    notebook's ``os.chdir`` (or ``%cd``) to a folder holding another ``run`` it silently read that run's records,
    and elsewhere raised a false "the run changed after it was loaded"."""
    first, second = two_runs
    monkeypatch.chdir(first.parent)
    run = op.load_run("run")
    assert run.directory == first
    monkeypatch.chdir(second.parent)  # another run of the same suite, also named "run"
    assert run.record("c00")["trajectory"]["answer"] == "bad"  # the first run's (the second's answers "ok")
    assert int((run.verdicts["verdict"] == "fail").sum()) == 8  # frames read for the first time only now
    assert op.gate(run).table.loc[0, "passed"] == 22
    monkeypatch.chdir(first.parent.parent)  # a folder with no "run" in it
    assert len(op.load_run(first).cases) == len(run.cases) == 30


def test_where_a_run_was_read_from_and_made_cannot_be_set(two_runs: tuple[Path, Path]) -> None:
    """``run.directory`` and ``run.suite_root`` are facts of the run, as ``run.manifest`` is: set to the other run's
    folder, the next frame read was refused as "the folder was replaced", and the suite folder the gate compares
    with the run's files was another's. Each is refused in one line and the run reads on as it was: 8 of 30 fail."""
    first, second = two_runs
    run = op.load_run(first)
    made_in = run.suite_root
    assert made_in is not None and made_in != op.load_run(second).suite_root
    with pytest.raises(OloproofError, match=r"^run\.directory is the run directory the run was read from; load "):
        run.directory = second
    with pytest.raises(OloproofError, match=r"^run\.suite_root is the suite folder the run was made from"):
        run.suite_root = op.load_run(second).suite_root
    assert run.directory == first and run.suite_root == made_in
    verdicts = run.verdicts
    assert (verdicts["verdict"] == "pass").sum() == 22 and len(verdicts) == 30


@pytest.mark.filterwarnings("ignore:The inplace keyword")  # pandas 3.1 deprecates it; notebooks still do it
@pytest.mark.parametrize("edit", ["drop in place", "loc assignment", "column overwritten"])
def test_editing_a_frame_the_run_returned_does_not_change_what_it_computes(two_runs: tuple[Path, Path],
                                                                         edit: str) -> None:
    """Frames were cached and handed out by reference. Dropping the failures from ``run.verdicts`` to
    look at the rest turned the gate's answer_matches from FAIL (22 of 30) into a criterion without failures;
    overwriting ``run.cases.n_tool_calls`` moved every case into one slice bin."""
    run = op.load_run(two_runs[0])
    before_gate = op.gate(run).table
    before_slices = op.slice_table(run, "tool_calls:1,2")
    verdicts, cases = run.verdicts, run.cases
    failing = verdicts["verdict"] == "fail"
    if edit == "drop in place":
        verdicts.drop(verdicts[failing].index, inplace=True)
        cases.drop(cases.index[:8], inplace=True)
    elif edit == "loc assignment":
        verdicts.loc[failing, "verdict"] = "pass"
        cases.loc[:, "n_tool_calls"] = 5
    else:
        verdicts["verdict"] = "pass"
        cases["n_tool_calls"] = 0
    assert (before_gate.loc[0, "passed"], before_gate.loc[0, "verdict"]) == (22, "FAIL")
    pd.testing.assert_frame_equal(op.gate(run).table, before_gate)
    pd.testing.assert_frame_equal(op.slice_table(run, "tool_calls:1,2"), before_slices)
    assert int((run.verdicts["verdict"] == "fail").sum()) == 8 and len(run.cases) == 30
    pd.testing.assert_frame_equal(run.verdicts, op.load_run(two_runs[0]).verdicts)


def test_a_copied_run_folder_reads_as_the_folder_it_is_in(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    """The path is made absolute, not resolved through the copy: a copy of a run folder is read from the copy."""
    copy = shutil.copytree(two_runs[0], tmp_path / "copy")
    run = op.load_run(copy)
    assert run.directory == copy and len(run.cases) == 30


def test_a_wrong_argument_type_is_one_line_naming_the_call(two_runs: tuple[Path, Path]) -> None:
    """A frame or a path where a Run is wanted, a Run where a frame or a suite is wanted, a list as
    release= raised AttributeError or TypeError from pandas or pathlib, several frames deep."""
    run = op.load_run(two_runs[0])
    calls = {
        "gate: run must be a Run (op.run, op.load_run) or a run directory, got DataFrame; give the Run itself, "
        "not one of its frames": lambda: op.gate(run.verdicts),
        "slice_table: run must be a Run": lambda: op.slice_table(run.verdicts, "tool_calls:1,2"),
        "validity: run must be a Run": lambda: op.validity(run.pairs),
        "reduce_epochs: run must be a Run": lambda: op.reduce_epochs(run.verdicts),
        "gate: run must be a Run (op.run, op.load_run) or a run directory, got int": lambda: op.gate(5),
        "outcome_summary: frame must be the receipts frame (run.receipts), got Run": lambda: op.outcome_summary(run),
        "baseline: suite must be a Suite (op.load_suite) or a suite folder, got Run": lambda: op.baseline(run),
        "load_runs: item 0: a run directory must be a path (str or pathlib.Path), got Run":
            lambda: op.load_runs([run, two_runs[1]]),
        "load_run: a run directory must be a path (str or pathlib.Path), got NoneType": lambda: op.load_run(None),
        "release must be a ReleaseConfig, a dict or the path of a release.yaml, got list":
            lambda: op.gate(run, release=[("answer_matches", 0.5)]),
    }
    for message, call in calls.items():
        with pytest.raises(op.OloproofError) as info:
            call()
        assert str(info.value).startswith(message), (message, str(info.value))
        assert "\n" not in str(info.value)
    # a run directory is as good as the Run, as op.compare takes it
    pd.testing.assert_frame_equal(op.gate(str(two_runs[0])).table, op.gate(run).table)


def test_showing_a_run_counts_its_replays_without_keeping_them(example_suite: Path, tmp_path: Path) -> None:
    """``repr(run)`` and its HTML counted cached replays over ``run.replay_records``: every replay
    record with its trajectory and states was read and kept on the Run (11 MB for a 960-case run). The counts
    come from a scan that keeps nothing and reads no state; they equal a count over the records."""
    from oloproof_nb._run.states import StateReader

    op.run(op.load_suite(example_suite), out=tmp_path / "first", progress=False)  # fills the replay cache
    run = op.load_run(op.run(op.load_suite(example_suite), out=tmp_path / "second", progress=False).directory)
    reads = []
    original = StateReader.many

    def counting(self: StateReader, refs: list[str]) -> list[object]:
        reads.append(len(refs))
        return original(self, refs)

    StateReader.many = counting  # type: ignore[method-assign]
    try:
        text, html = repr(run), run._repr_html_()
    finally:
        StateReader.many = original  # type: ignore[method-assign]
    assert "replay_records" not in run.__dict__ and reads == []
    flags = [bool(rec.get("cached")) for rec in run.replay_records]  # now read, the long way
    live, cached = len(flags) - sum(flags), sum(flags)
    assert cached > 0 and (live, cached) == run.replay_counts()
    assert f"replay runs: {live} live, {cached} from the cache" in text and f"{cached} from the cache" in html


def test_load_runs_takes_any_iterable_of_paths_and_a_frame_can_be_replaced(two_runs: tuple[Path, Path]) -> None:
    """The argument check took only lists and tuples (a Path.glob generator, a pandas Series, a set
    worked before); and ``run.verdicts = filtered`` raised once the frames became copies (it replaces the frame,
    as before)."""
    first, second = two_runs
    for given in ((p for p in (first, second)), pd.Series([str(first), str(second)]), {first, second},
                  map(str, (first, second))):
        assert len(op.load_runs(given).cases) == 60
    # one system made both: the pooled run names its version once, not once per run
    version = op.load_run(first).system_version
    assert version and op.load_run(second).system_version == version
    assert op.load_runs([first, second]).system_version == version
    with pytest.raises(op.OloproofError, match="load_runs takes a list of run directories, got int"):
        op.load_runs(5)
    run = op.load_run(first)
    v = run.verdicts
    marked = v.assign(verdict=["missing", "missing", *v["verdict"].iloc[2:]])
    run.verdicts = marked  # 30 rows, 2 of them now missing: n counts them
    summary = run.summary().iloc[0]
    assert (summary["n"], summary["missing"], summary["passed"] + summary["failed"]) == (30, 2, 28)
    run.verdicts = v[v["verdict"] == "pass"].reset_index(drop=True)
    assert (op.gate(run).table.loc[0, "n"], op.gate(run).table.loc[0, "passed"]) == (22, 22)


def test_a_case_in_several_pooled_runs_is_picked_by_the_panels_run_id(two_runs: tuple[Path, Path]) -> None:
    """README §9 shows a pooled run's case with ``run.panel(case_id, run_id=...)``; ``run.panel(case_id)``
    without it pointed only at ``run.runs[i].record(...)``, not at the argument of the call just made."""
    both = op.load_runs(list(two_runs))
    first, second = (r.run_id for r in both.runs)
    with pytest.raises(op.OloproofError) as info:
        both.panel("c00")
    assert str(info.value) == (f"case 'c00' is in {first}, {second}; pick one run: run.panel('c00', run_id=...) or "
                               "run.runs[i].record('c00')")
    assert both.panel("c00", run_id=second).record["trajectory"]["answer"] == "ok"  # the second run: none fails
    assert both.panel("c00", run_id=first).record["trajectory"]["answer"] == "bad"


def test_a_frame_set_on_the_run_is_copied_and_checked(two_runs: tuple[Path, Path]) -> None:
    """``run.verdicts = frame`` stored the caller's object, so its later in-place edits reached the gate,
    and anything was taken (``None`` read the frame from disk again; a frame without ``verdict`` failed in the
    gate with a KeyError)."""
    run = op.load_run(two_runs[0])
    mine = run.verdicts
    run.verdicts = mine
    mine.loc[mine["verdict"] == "fail", "verdict"] = "pass"  # after setting: not the run's
    assert int((run.verdicts["verdict"] == "fail").sum()) == 8
    for bad, message in ((None, "must be a pandas DataFrame"), (mine.drop(columns=["verdict"]),
                                                                r"lacks the column\(s\) verdict of run\.verdicts")):
        with pytest.raises(op.OloproofError, match=message):
            run.verdicts = bad


def test_two_runs_labels_differ_by_the_majority_of_each_pair() -> None:
    """Pairs are compared by their labels (the majority of their judgements, a tie invalid), so runs pool unless
    a pair's label differs; the difference named is the first case id in order, of a transform either run holds.
    ``label_difference`` reads each run's pair labels (``stored_pair_labels``, worked out once a Run)."""
    from oloproof_nb._analysis.run_checks import label_difference
    from oloproof_nb._core.labels import Label, pair_labels

    def said(case_id: str, *votes: bool) -> list[dict[str, object]]:
        return [{"case_id": case_id, "valid": v} for v in votes]

    def differ(a: dict[str, list[dict[str, object]]], b: dict[str, list[dict[str, object]]]) -> str:
        def pairs(x: dict[str, list[dict[str, object]]]) -> dict[str, dict[str, Label]]:
            return {t: pair_labels(js) for t, js in x.items()}
        return label_difference(pairs(a), pairs(b))

    # b~t: valid 2 to 1 in one run, valid by its two votes in the other (the last judgement differs, not the label)
    assert differ({"t": said("b~t", True, True, False)}, {"t": said("b~t", True, True)}) == ""
    a = {"t": said("a~t", True) + said("b~t", True) + said("c~t", True)}
    b = {"t": said("a~t", True) + said("b~t", False) + said("c~t", False)}
    assert differ(a, b) == "transform t: b~t is labeled otherwise"  # b~t and c~t differ: b~t first
    # judged on one side only: no label changed, one was given (or taken out), and the words say which side
    assert differ({}, {"u": said("a~u", True)}) == ("transform u: a~u is not labeled in one and labeled valid in the "
                                                    "other")
    assert differ({"u": said("a~u", False)}, {}) == ("transform u: a~u is labeled invalid in one and not labeled in "
                                                     "the other")


def test_runs_whose_suites_check_the_same_labels_against_another_minimum_are_not_pooled(example_suite: Path,
                                                                                       tmp_path: Path) -> None:
    """Found through the baseline check: the same labels, 23 of 24 valid, checked at 0.85 in
    run a (ord-018~injected left out) and at 0.99 in run b (not checked: nothing left out). They pooled silently:
    47 + 48 = 95 answer_matches rows, and b's rows of ord-018~injected (one per criterion) counted for a copy the
    pooled run says it leaves out. Refused, naming the transform and both minimums."""
    a = op.run(op.load_suite(example_suite), out=tmp_path / "a", progress=False)
    config = example_suite / "oloproof.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("minimum_validity: 0.85", "minimum_validity: 0.99"),
                      encoding="utf-8")
    b = op.run(op.load_suite(example_suite), out=tmp_path / "b", progress=False)
    assert (sorted(a.unscored_ids), sorted(b.unscored_ids)) == (["ord-018~injected"], [])
    message = (rf"runs {a.run_id} and {b.run_id} leave out other copies labeled invalid \(transform injected: "
               r"minimum_validity 0.99, not 0.85: 1 scored in one of the two only, first 'ord-018~injected'\)")
    with pytest.raises(op.OloproofError, match=message):
        op.load_runs([a.directory, b.directory])


def test_loading_a_suite_folder_or_its_runs_names_the_run_directory_to_give(make_suite: Callable[..., Path],
                                                                           tmp_path: Path) -> None:
    """A new user's first hour: after ``oloproof run demo`` a user tries ``op.load_run("demo")``, and
    the error said only "not a run directory (no manifest.json)". It names the run to give now, in one line,
    and loads none: a notebook that took "the latest" would read another run after the next ``oloproof run``."""
    suite = make_suite(_cases(3, 0), evaluators=[{"type": "answer_matches"}])
    with pytest.raises(op.RunDirError) as caught:
        op.load_run(suite)
    assert str(caught.value) == (f"{suite}: not a run directory (no manifest.json); it is a suite folder with no "
                                 f"run in {suite / 'runs'} yet: run it first")
    first = op.run(op.load_suite(suite), progress=False).directory
    with pytest.raises(op.RunDirError) as caught:
        op.load_run(suite)
    assert str(caught.value) == (f"{suite}: not a run directory (no manifest.json); it is a suite folder: give its "
                                 f"run, {str(first)!r}")
    second = op.run(op.load_suite(suite), progress=False).directory
    for given, hint in ((suite, f"it is a suite folder: give one of its 2 runs in {suite / 'runs'}"),
                        (suite / "runs", "it holds 2 runs: give one of them")):
        for load in (op.load_run, lambda d: op.load_runs([d]), op.gate):
            with pytest.raises(op.RunDirError) as caught:
                load(given)
            assert str(caught.value) == (f"{given}: not a run directory (no manifest.json); {hint}, "
                                         f"the latest is {str(second)!r}")
    assert op.load_run(second).run_id == second.name


def test_the_summary_lists_criteria_in_the_suites_order(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """Criteria declared zeta, then alpha: the summary keeps that order (not the alphabet), with the counts of each
    (3 cases, 1 answering "bad": 2 passed, 1 failed)."""
    evaluators = [{"type": "answer_matches", "criterion": "zeta"}, {"type": "answer_matches", "criterion": "alpha"}]
    run = op.run(op.load_suite(make_suite(_cases(3, 1), evaluators=evaluators)), out=tmp_path / "run",
                 progress=False)
    summary = run.summary()
    assert summary[["criterion", "n", "passed", "failed", "missing"]].to_dict("records") == [
        {"criterion": "zeta", "n": 3, "passed": 2, "failed": 1, "missing": 0},
        {"criterion": "alpha", "n": 3, "passed": 2, "failed": 1, "missing": 0}]


def test_the_summary_of_a_run_without_verdict_rows_has_the_dtypes_of_one_with_rows(two_runs: tuple[Path, Path]
                                                                                   ) -> None:
    """Every verdict row dropped (or a run whose evaluators judged nothing): the summary is empty with the
    columns and dtypes of a summary with rows, not six object columns (counts that summed as text)."""
    run = op.load_run(two_runs[0])
    with_rows = run.summary()
    run.verdicts = run.verdicts.iloc[0:0]
    empty = run.summary()
    assert len(with_rows) > 0 and len(empty) == 0
    assert empty.dtypes.to_dict() == with_rows.dtypes.to_dict()
    assert list(empty.columns) == ["criterion", "evaluator", "n", "passed", "failed", "missing"]


def test_the_validity_check_difference_names_the_transform_whose_minimum_differs() -> None:
    """Two transforms in both suites, only the second's minimum_validity changed: the difference names that one,
    not the first the suites share unchanged."""
    from types import SimpleNamespace as NS

    from oloproof_nb._analysis.run_checks import validity_check_difference

    def run(*minimums: tuple[str, float]) -> Any:
        transforms = [NS(name=name, minimum_validity=value) for name, value in minimums]
        return NS(config=NS(metamorphic=NS(transforms=transforms)))

    a, b = run(("kept", 0.5), ("moved", 0.85)), run(("kept", 0.5), ("moved", 0.99))
    assert validity_check_difference(a, b) == "transform moved: minimum_validity 0.99, not 0.85"
    assert validity_check_difference(a, a) == "other transforms or another case file"


def test_a_run_that_finishes_while_it_is_loaded_is_not_called_finished_with_its_earlier_records(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifest was read again after the columnar copy was built, so a run whose last records and
    ``finished_at`` were written while ``op.load_run`` (or ``oloproof gate``) read its journal was loaded as
    finished with the records of a moment before (reproduced 6 times in 6 with a second process loading a run
    as it finished): ``run.finished`` was True beside 5 of 8 cases, and the gate blamed a truncated copy of the
    folder ("incomplete: … records are missing") instead of saying the run had not finished when it was read."""
    from oloproof_nb._analysis import columnar
    from oloproof_nb._run.runner import run_suite

    suite = op.load_suite(make_suite(_cases(8, 0), evaluators=[{"type": "answer_matches"}],
                                     release={"criteria": {"answer_matches": 0.5}}))
    out = tmp_path / "run"

    def stop_after_five(done: int, total: int) -> None:
        if done == 5:
            raise KeyboardInterrupt  # the user's Ctrl-C: an unfinished run of 5 records
    with pytest.raises(KeyboardInterrupt):
        op.run(suite, out=out, progress=stop_after_five)
    commit = columnar.CopyWriter.commit
    finished: list[bool] = []

    def commit_then_the_run_finishes(writer: columnar.CopyWriter) -> None:
        commit(writer)
        if not finished:  # the other process appends the last 3 records and stamps the run finished now
            run_suite(suite, out=out, resume=True)
            finished.append(True)
    monkeypatch.setattr(columnar.CopyWriter, "commit", commit_then_the_run_finishes)
    run = op.load_run(out)
    assert finished and len(run.cases) == 5
    assert not run.finished  # as the journal it read: unfinished
    assert op.gate(run).reason.startswith("unfinished: the run did not finish (5 of 8 cases recorded)")
    monkeypatch.undo()
    again = op.load_run(out)
    assert again.finished and len(again.cases) == 8 and op.gate(again).verdict == "PASS"


def _read_only(self: Any, directory: Path, fingerprint: Any) -> None:
    """``CopyWriter.__init__`` of a folder that cannot be written in (as root, modes do not stop a write)."""
    raise PermissionError(13, "Permission denied", str(directory))


def _stopped_after_five(make_suite: Callable[..., Path], out: Path) -> op.Suite:
    """A suite of 8 cases (all pass) whose run in ``out`` was stopped by the user after 5 records."""
    suite = op.load_suite(make_suite(_cases(8, 0), evaluators=[{"type": "answer_matches"}],
                                     release={"criteria": {"answer_matches": 0.5}}))

    def stop_after_five(done: int, total: int) -> None:
        if done == 5:
            raise KeyboardInterrupt  # the user's Ctrl-C: an unfinished run of 5 records
    with pytest.raises(KeyboardInterrupt):
        op.run(suite, out=out, progress=stop_after_five)
    return suite


def test_a_run_that_finishes_while_its_frames_are_kept_in_memory_is_not_called_finished(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder that cannot be written in: the frames built in memory take the
    manifest read before the journal, as the columnar copy does. Read after the journal, a run whose last 3 records
    and ``finished_at`` were written while its first 5 were read was called finished with 5 of 8 cases."""
    from oloproof_nb._analysis import columnar, run_copy
    from oloproof_nb._analysis import run as run_module
    from oloproof_nb._run.runner import run_suite

    out = tmp_path / "run"
    suite = _stopped_after_five(make_suite, out)
    tables, finished = run_module.Run._journal_tables, list[bool]()

    def read_then_the_run_finishes(self: op.Run, manifest: Any) -> Any:
        yield from tables(self, manifest)
        if not finished:  # the other process appends the last 3 records and stamps the run finished now
            finished.append(True)
            run_suite(suite, out=out, resume=True)
    monkeypatch.setattr(columnar.CopyWriter, "__init__", _read_only)
    monkeypatch.setattr(run_module.Run, "_journal_tables", read_then_the_run_finishes)
    with pytest.warns(run_copy.ColumnarCopyWarning, match="cannot write the columnar copy"):
        run = op.load_run(out)
    assert finished and len(run.cases) == 5
    assert not run.finished  # as the journal it read: unfinished
    assert op.gate(run).reason.startswith("unfinished: the run did not finish (5 of 8 cases recorded)")


@pytest.mark.parametrize("copy", ["written", "in memory"])
def test_write_columnar_after_the_run_finished_reads_the_finished_run(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, copy: str) -> None:
    """``run.write_columnar()`` on a Run opened while its run was unfinished (5 of 8 records
    read: its cases, records and manifest), called after the run was resumed and finished, reads the finished run:
    its manifest (finished), 8 cases, 8 records, PASS (8 of 8 answers match, by hand); whether the copy is written
    or, in a folder that cannot be written in, kept in memory. Each frame, record list and the manifest read
    before is dropped, never kept beside the new journal."""
    from oloproof_nb._analysis import columnar, run_copy
    from oloproof_nb._run.runner import run_suite

    out = tmp_path / "run"
    suite = _stopped_after_five(make_suite, out)
    run = op.load_run(out)
    assert (run.finished, len(run.cases), len(run.records)) == (False, 5, 5)
    run_suite(suite, out=out, resume=True)
    if copy == "in memory":
        monkeypatch.setattr(columnar.CopyWriter, "__init__", _read_only)
        with pytest.warns(run_copy.ColumnarCopyWarning, match="cannot write the columnar copy"):
            run.write_columnar()
    else:
        run.write_columnar()
    assert (run.finished, len(run.cases), len(run.records)) == (True, 8, 8)
    assert op.gate(run).verdict == "PASS"


def test_a_pooled_run_refreshed_after_its_first_run_finished_takes_that_runs_manifest(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """A pooled run (``op.load_runs``) is the manifest of its first run. Refreshed
    (``write_columnar``) after that run, unfinished when pooled, was resumed and finished, its manifest is the first
    run's new one (finished, its run id), not the one read before nor the second run's; 16 cases (8 + 8)."""
    from oloproof_nb._run.runner import run_suite

    first, second = tmp_path / "first", tmp_path / "second"
    suite = _stopped_after_five(make_suite, first)
    op.run(suite, out=second, progress=False)
    pooled = op.load_runs([first, second])
    assert (pooled.finished, len(pooled.cases)) == (False, 13)
    run_suite(suite, out=first, resume=True)
    pooled.write_columnar()
    assert pooled.manifest.run_id == op.load_run(first).run_id != op.load_run(second).run_id
    assert pooled.manifest.finished_at is not None and pooled.finished and len(pooled.cases) == 16


# -- a Run held while another process changes its folder --------------------------------------------

def _resumed_by_another_process(suite: op.Suite, out: Path, *, copy_rebuilt: bool) -> None:
    """The other process: resumes the run in ``out`` to its end (8 records) and, where ``copy_rebuilt``, loads it,
    which puts the copy of 8 records in place; else the copy stays the one of 5 records (as in a frames/ that
    process may not write in)."""
    from oloproof_nb._run.runner import run_suite

    run_suite(suite, out=out, resume=True)  # the runner alone: it writes no columnar copy
    if copy_rebuilt:
        op.load_run(out)


def test_a_run_resumed_after_it_was_loaded_gives_the_records_of_its_frames(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """A Run loaded from a fresh copy read its journal (``records``, ``record``, the case panel) as it was
    when first asked, not as the copy was. Loaded at 5 of 8 records and read after another process resumed the run
    (its copy left as it was: a frames/ that process could not write), ``run.cases`` had 5 rows and ``run.records``
    8; ``run.record("c06")`` gave a case the run's frames, and gate, do not hold."""
    out = tmp_path / "run"
    suite = _stopped_after_five(make_suite, out)
    op.load_run(out)  # another notebook opened it first: this one finds a fresh copy
    run = op.load_run(out)
    _resumed_by_another_process(suite, out, copy_rebuilt=False)
    assert len(run.cases) == 5 and len(run.verdicts) == 5  # the copy loaded, as before
    assert [r["case"]["id"] for r in run.records] == [f"c{i:02d}" for i in range(5)]  # 8 before
    with pytest.raises(op.OloproofError, match="no case 'c06' in run"):
        run.record("c06")
    assert run.record("c04")["trajectory"]["answer"] == "ok"
    assert len(op.load_run(out).records) == 8  # loaded again: the run as it is now
    held = weakref.ref(run)
    gc.disable()  # the journal's check holds the Run weakly: no cycle keeps a dropped Run's frames alive
    try:
        del run
        assert held() is None
    finally:
        gc.enable()


def test_a_run_whose_copy_was_replaced_after_it_was_loaded_reads_no_record(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The frames not read yet of a Run whose copy was replaced (the run resumed) were refused, its
    records were not: ``run.records`` gave 8 records beside ``run.cases``' 5. Both are refused now, in one line."""
    out = tmp_path / "run"
    suite = _stopped_after_five(make_suite, out)
    op.load_run(out)
    run = op.load_run(out)
    assert len(run.cases) == 5
    _resumed_by_another_process(suite, out, copy_rebuilt=True)
    for read in (lambda: run.records, lambda: run.record("c00"), lambda: run.panel("c00"), run.replay_tally):
        with pytest.raises(CopyChangedError, match=r"changed after it was loaded.*load it again") as caught:
            read()
        assert str(out) in str(caught.value) and "\n" not in str(caught.value)


def test_a_run_folder_replaced_by_another_run_says_so(two_runs: tuple[Path, Path]) -> None:
    """A run folder deleted and run again into (``out=`` the same folder) by another process. The Run
    held gave the new run's records as its own — ``run.record("c00")`` answered "ok" where the run loaded, whose
    verdicts and gate (22 of 30) it still showed, answered "bad" — and refused a frame not read yet saying the run
    "went on, or was resumed". Now every read names the run the folder holds instead."""
    first, second = two_runs
    run = op.load_run(first)
    loaded = run.run_id
    assert len(run.cases) == 30 and run.record("c01")["trajectory"]["answer"] == "bad"
    shutil.rmtree(first)
    shutil.copytree(second, first)  # another run (every answer "ok") now in the folder
    replaced = op.load_run(first).run_id
    assert replaced != loaded
    for read in (lambda: run.verdicts, lambda: run.record("c00"), lambda: run.records, lambda: op.gate(run)):
        with pytest.raises(CopyChangedError) as caught:
            read()
        message = str(caught.value)
        assert message.startswith(f"{first}: now holds run {replaced}, not run {loaded} that was loaded")
        assert "load it again" in message and "\n" not in message


def test_a_run_folder_holding_another_runs_journal_has_no_verdicts(two_runs: tuple[Path, Path],
                                                                   tmp_path: Path) -> None:
    """A folder whose manifest is one run's and whose journal (``cases.jsonl``, ``states.jsonl``)
    another's — two runs' files merged into one folder, as two CI jobs' artifacts downloaded to one path — was
    gated on the other run's records under the first run's name: run ``a`` (22 of 30) with run ``b``'s journal
    (30 of 30) gated PASS at 0.85 (``oloproof gate``: exit 0). Every case record's state names the run that wrote
    it; one that names another run is refused, naming both."""
    first, second = two_runs
    mixed = shutil.copytree(first, tmp_path / "mixed")
    shutil.rmtree(mixed / "frames")
    for name in ("cases.jsonl", "states.jsonl"):
        shutil.copy2(second / name, mixed / name)
    own, other = op.load_run(first).run_id, op.load_run(second).run_id
    with pytest.raises(RunDirError) as caught:
        op.gate(op.load_run(mixed), criteria={"answer_matches": 0.85})
    message = str(caught.value)
    assert message.startswith(f"{mixed / 'cases.jsonl'}: the record of case 'c00' was written by run {other}, "
                               f"not run {own} that manifest.json names")
    assert "\n" not in message


def test_a_stateless_systems_run_folder_holding_another_runs_journal_has_no_verdicts(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """A system without ``snapshot()`` records no state, so its records named no run and a
    folder holding run ``a``'s manifest (22 of 30) with run ``b``'s journal (30 of 30) gated PASS at 0.85. Every
    record now names the run that wrote it."""
    runs = []
    for name, failing in (("a", 8), ("b", 0)):
        suite = op.load_suite(make_suite(_cases(30, failing), evaluators=[{"type": "answer_matches"}],
                                         system="sysmod:Stateless"))
        runs.append(op.run(suite, out=tmp_path / name / "run", progress=False))
    first, second = runs
    assert first.record("c00")["environment_state"] is None  # no state names the run
    assert op.gate(first, criteria={"answer_matches": 0.85}).verdict == "BLOCK"
    mixed = shutil.copytree(first.directory, tmp_path / "mixed")
    shutil.rmtree(mixed / "frames")
    shutil.copy2(second.directory / "cases.jsonl", mixed / "cases.jsonl")
    with pytest.raises(RunDirError) as caught:
        op.gate(op.load_run(mixed), criteria={"answer_matches": 0.85})
    assert str(caught.value).startswith(f"{mixed / 'cases.jsonl'}: the record of case 'c00' was written by run "
                                        f"{second.run_id}, not run {first.run_id} that manifest.json names")


def test_one_record_of_another_run_anywhere_in_the_journal_is_refused(two_runs: tuple[Path, Path], tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The check that a journal is its manifest's run: every case record is checked, in every chunk, not the first of
    each: run ``a``'s journal with only its last record's state marked as run ``b``'s is refused, naming that case,
    with the journal read 4 records at a time (8 chunks, the forged record in the last)."""
    import json

    from oloproof_nb._analysis import run_copy

    first, second = two_runs
    forged = shutil.copytree(first, tmp_path / "forged")
    shutil.rmtree(forged / "frames")
    journal = forged / "cases.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[-1])
    own, other = op.load_run(first).run_id, op.load_run(second).run_id
    assert (len(lines), record["environment_state"]["run_id"]) == (30, own)
    record["environment_state"]["run_id"] = other
    lines[-1] = json.dumps(record, ensure_ascii=False) + "\n"
    journal.write_text("".join(lines), encoding="utf-8")
    monkeypatch.setattr(run_copy, "CHUNK", 4)
    with pytest.raises(RunDirError) as caught:
        op.gate(op.load_run(forged), criteria={"answer_matches": 0.5})
    assert str(caught.value).startswith(f"{journal}: the record of case {record['case']['id']!r} was written by run "
                                        f"{other}, not run {own} that manifest.json names")


def test_a_record_naming_another_run_is_refused_though_its_state_names_this_one(two_runs: tuple[Path, Path],
                                                                                 tmp_path: Path) -> None:
    """A record names its writer itself (``run_id``); its state naming the manifest's run does
    not make up for that (either naming another run is refused). The record's own ``run_id`` was passed over
    whenever the record held a state."""
    import json

    first, second = two_runs
    forged = shutil.copytree(first, tmp_path / "forged")
    shutil.rmtree(forged / "frames")
    journal = forged / "cases.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[3])
    own, other = op.load_run(first).run_id, op.load_run(second).run_id
    assert record["run_id"] == record["environment_state"]["run_id"] == own
    record["run_id"] = other
    lines[3] = json.dumps(record, ensure_ascii=False) + "\n"
    journal.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(RunDirError) as caught:
        op.gate(op.load_run(forged), criteria={"answer_matches": 0.5})
    assert str(caught.value).startswith(f"{journal}: the record of case {record['case']['id']!r} was written by run "
                                        f"{other}, not run {own} that manifest.json names")


def test_a_record_of_an_epoch_the_run_does_not_have_is_refused(make_suite: Callable[..., Path],
                                                                tmp_path: Path) -> None:
    """The completeness check counts records, so a run of 30 cases × 3 epochs whose 3 failing epoch-2
    records were replaced by their cases' passing epoch-1 records marked epoch 4 still held 90 records, and pass^3
    read 30 of 30 (``oloproof gate``: PASS, exit 0) where the run gives 27 of 30 (BLOCK). A record of an epoch
    outside 1..epochs (the manifest's) is refused as damage, naming the case, its epoch and the run's epochs."""
    import json

    from _epoch_systems import SCRIPTED

    cases = [{"id": f"c{i:02d}", "input": {"plan": [True, i >= 3, True], "calls": [1, 1, 1], "n": i},
              "expected": {"answer": "yes"}} for i in range(30)]
    release = {"criteria": {"answer_matches": {"threshold": 0.8, "reduce": "pass^3"}}}
    suite = op.load_suite(make_suite(cases, evaluators=[{"type": "answer_matches"}], system_code=SCRIPTED,
                                     release=release, epochs=3))
    run = op.run(suite, out=tmp_path / "run", progress=False)
    assert op.gate(run).table.loc[0, ["n", "passed"]].tolist() == [30, 27]
    forged = shutil.copytree(run.directory, tmp_path / "forged")
    shutil.rmtree(forged / "frames")
    journal = forged / "cases.jsonl"
    records = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    lines = []
    for record in records:
        case = record["case"]
        if case["id"] < "c03" and case.get("epoch") == 2:  # the failing try, replaced by epoch 1's as "epoch 4"
            record = next(r for r in records if r["case"]["id"] == case["id"] and "epoch" not in r["case"])
            record = {**record, "index": record["index"] + 90,
                      "case": {"id": case["id"], "epoch": 4, **{k: v for k, v in record["case"].items() if k != "id"}}}
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    journal.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(RunDirError) as caught:
        op.gate(op.load_run(forged))
    assert str(caught.value) == (f"{journal}: the record of case 'c00' is of epoch 4, but run {run.run_id} has "
                                 "epochs 1 to 3 (manifest.json); the run directory is damaged")


@pytest.mark.parametrize("duplicate", [lambda run: pickle.loads(pickle.dumps(run)), copy.deepcopy],
                         ids=["pickle", "deepcopy"])
def test_a_pickled_or_deep_copied_run_reads_and_is_checked_as_the_run(two_runs: tuple[Path, Path],
                                                                      duplicate: Callable[[Any], Any]) -> None:
    """The journal's check, held by a weak reference, made ``pickle.dumps(run)`` and
    ``copy.deepcopy(run)`` raise ``TypeError: cannot pickle 'WeakMethod' object`` (both worked before that check). The
    duplicate reads the run's records and refuses them, as the run does, once the folder holds another run."""
    first, second = two_runs
    run = duplicate(op.load_run(first))
    assert len(run.cases) == len(run.records) == 30 and run.record("c01")["trajectory"]["answer"] == "bad"
    shutil.rmtree(first)
    shutil.copytree(second, first)
    with pytest.raises(CopyChangedError, match=rf"^{first}: now holds run "):
        run.record("c00")


def test_a_run_folder_moved_after_it_was_loaded_says_it_is_gone(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    """A frame not read yet of a run whose folder was moved said the run "went on, or was resumed" and to
    load it again from where it no longer is."""
    first = two_runs[0]
    run = op.load_run(first)
    _ = run.cases
    first.rename(tmp_path / "moved")
    for read in (lambda: run.verdicts, lambda: run.record("c00")):
        with pytest.raises(CopyChangedError, match=rf"^{first}: the run folder is gone since the run was loaded "
                                                   r"\(moved, renamed or deleted\)"):
            read()
    assert len(op.load_run(tmp_path / "moved").verdicts) == 30


def test_a_pooled_run_gives_the_records_of_its_runs_copies(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """``op.load_runs``: each pooled run's records are those of its copy (5 + 8 = 13, as ``cases``), not
    of its journal grown since (16), and once a run's copy was replaced no record is looked for in it."""
    first, second = tmp_path / "first", tmp_path / "second"
    suite = _stopped_after_five(make_suite, first)
    op.run(suite, out=second, progress=False)
    op.load_run(first)
    pooled = op.load_runs([first, second])
    _resumed_by_another_process(suite, first, copy_rebuilt=False)
    assert len(pooled.cases) == len(pooled.records) == 13
    op.load_run(first)  # another notebook: the copy of the resumed run put in place
    with pytest.raises(CopyChangedError, match=rf"^{first}: the run changed after it was loaded"):
        pooled.record("c06")  # in the second run only, when pooled


def test_a_run_whose_copy_lost_to_a_faster_process_gives_the_records_of_that_copy(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Run that builds its copy while another process resumes the run and puts the fresh copy
    of 8 records in place drops its own copy of 5 and reads its frames from that one; its records stayed those of
    the 5 lines it had read: ``run.cases`` had 8 rows, ``run.records`` 5, and ``run.record("c07")`` said there is no
    case c07 in the run."""
    from oloproof_nb._analysis import run as run_module
    from oloproof_nb._run.runner import run_suite

    out = tmp_path / "run"
    suite = _stopped_after_five(make_suite, out)
    tables, done = run_module.Run._journal_tables, list[bool]()

    def read_then_another_process_finishes(self: op.Run, manifest: Any) -> Any:
        yield from tables(self, manifest)
        if not done:  # this Run has read 5 records; the other process resumes the run and loads it
            done.append(True)
            run_suite(suite, out=out, resume=True)
            op.load_run(out)
    monkeypatch.setattr(run_module.Run, "_journal_tables", read_then_another_process_finishes)
    run = op.load_run(out)
    assert done and len(run.cases) == 8
    assert [r["case"]["id"] for r in run.records] == [f"c{i:02d}" for i in range(8)]  # 5 before
    assert run.record("c07")["case"]["id"] == "c07"


def test_a_run_loaded_beside_a_torn_line_gives_no_record_a_resume_wrote_over_it(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """A copy built while ``cases.jsonl`` ended in a torn line (the process died writing a
    record) records the file's size with the torn bytes; a Run that loaded that copy read every complete line ending
    within that size. A resume cuts the torn line and writes the rest of the run over its bytes: the Run held gave 8
    records (c05, c06, c07 of the resume, about 1,200 bytes each, within the torn line's 4,040 bytes) beside 5
    ``cases``."""
    from oloproof_nb._run.runner import run_suite

    out = tmp_path / "run"
    suite = _stopped_after_five(make_suite, out)
    with (out / "cases.jsonl").open("ab") as journal:  # the record of c05 as far as it was written
        journal.write(b'{"index":5,"case":{"id":"c05","input":"' + b"x" * 4000)
    op.load_run(out)  # another notebook opened it first: this one finds a fresh copy
    run = op.load_run(out)
    assert len(run.cases) == 5
    run_suite(suite, out=out, resume=True)  # the runner alone: the copy stays the one of 5 records
    assert [r["case"]["id"] for r in run.records] == [f"c{i:02d}" for i in range(5)]
    with pytest.raises(op.OloproofError, match="no case 'c05' in run"):
        run.record("c05")


# -- the Run's records of one moment, whoever wrote its copy ---------------------------------------------------------

def test_a_failed_write_columnar_keeps_the_records_of_the_frames(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``run.write_columnar()`` stopped (Ctrl-C while the copy was written) keeps the frames
    read before, so it keeps their records: the 5 of the copy loaded, not the 8 of the journal it was reading."""
    from oloproof_nb._analysis import columnar
    from oloproof_nb._run.runner import run_suite

    out = tmp_path / "run"
    suite = _stopped_after_five(make_suite, out)
    op.load_run(out)
    run = op.load_run(out)
    assert len(run.cases) == 5
    run_suite(suite, out=out, resume=True)

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt
    monkeypatch.setattr(columnar.CopyWriter, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run.write_columnar()
    assert len(run.cases) == 5 and len(run.records) == 5


def test_a_run_that_wrote_its_own_copy_reads_no_record_once_it_was_replaced(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The check around each record read holds for a Run that built its copy itself (the first
    to load the run), not only for one that found a fresh copy: once the run was resumed and its new copy put in
    place, a record is refused as a frame not read yet is."""
    out = tmp_path / "run"
    suite = _stopped_after_five(make_suite, out)
    run = op.load_run(out)  # no copy yet: this Run writes it
    assert len(run.cases) == 5
    _resumed_by_another_process(suite, out, copy_rebuilt=True)
    for read in (lambda: run.records, lambda: run.record("c00"), lambda: run.verdicts):
        with pytest.raises(CopyChangedError, match=rf"^{out}: the run changed after it was loaded"):
            read()


def test_a_run_resumed_just_after_its_fresh_copy_was_found_gives_the_records_of_that_copy(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Run that finds a fresh copy pins its records to where ``cases.jsonl`` ended
    when that copy was built (``copied_size`` of the copy's ``_source.json``), not where the file ends when the pin
    is set: another process that resumes the run between the two (the copy left as it was) appends 3 records the
    copy's 5 frames rows do not hold. Pinned to the file's size then (or not pinned), ``run.records`` gave 8 records
    beside 5 ``cases`` and ``run.record("c07")`` a case of no frame. The manifest is put back as it was (its bytes and
    mtime): the other process has appended its records and not stamped the manifest yet. A manifest rewritten since
    the copy makes the Run open the run again (the Run takes the manifest its copy was built from)."""
    from oloproof_nb._analysis import run_copy

    out = tmp_path / "run"
    suite = _stopped_after_five(make_suite, out)
    op.load_run(out)  # another notebook opened it first: the copy of 5 records is fresh
    found, resumed = run_copy.fresh_source, list[bool]()

    def found_then_another_process_resumes(directory: Path) -> str | None:
        source = found(directory)
        if source is not None and not resumed:
            resumed.append(True)
            manifest = out / "manifest.json"
            text, stamp = manifest.read_bytes(), manifest.stat().st_mtime_ns
            _resumed_by_another_process(suite, out, copy_rebuilt=False)  # 8 records; the copy still the one of 5
            manifest.write_bytes(text)
            os.utime(manifest, ns=(stamp, stamp))
        return source
    monkeypatch.setattr(run_copy, "fresh_source", found_then_another_process_resumes)
    run = op.load_run(out)
    assert resumed
    assert len([line for line in (out / "cases.jsonl").read_bytes().splitlines() if line]) == 8
    assert run.cases["case_id"].tolist() == [f"c{i:02d}" for i in range(5)]
    assert [r["case"]["id"] for r in run.records] == [f"c{i:02d}" for i in range(5)]
    with pytest.raises(op.OloproofError, match="no case 'c07' in run"):
        run.record("c07")


def test_frames_kept_in_memory_are_checked_against_no_copy(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Run whose ``write_columnar`` could not write (its frames and records now both of the
    journal it read into memory) is not refused when another process puts a copy in place: the copy it was loaded
    with is not what it reads any more."""
    from oloproof_nb._analysis import columnar, run_copy

    out = tmp_path / "run"
    suite = _stopped_after_five(make_suite, out)
    run = op.load_run(out)  # a copy of 5 records
    _resumed_by_another_process(suite, out, copy_rebuilt=False)
    with monkeypatch.context() as patched:
        patched.setattr(columnar.CopyWriter, "__init__", _read_only)
        with pytest.warns(run_copy.ColumnarCopyWarning, match="cannot write the columnar copy"):
            run.write_columnar()  # 8 records, in memory
    op.load_run(out)  # another notebook: the copy of 8 records put in place
    assert len(run.cases) == len(run.records) == 8
    assert run.record("c07")["case"]["id"] == "c07"


def test_an_unopened_run_reads_its_records_from_the_journal(two_runs: tuple[Path, Path]) -> None:
    """A Run opened without its copy (``Run.unopened``) pins nothing, so nothing refuses its
    records: 30 of them, c01 answering "bad" as the fixture wrote it."""
    run = op.Run.unopened(two_runs[0])
    assert len(run.records) == 30 and run.record("c01")["trajectory"]["answer"] == "bad"


@pytest.mark.parametrize("now", ["a file", "an empty folder", "a damaged manifest"])
def test_a_run_folder_replaced_by_no_run_says_which(two_runs: tuple[Path, Path], tmp_path: Path,
                                                         now: str) -> None:
    """The lines a run folder changed under a Run gives: a run folder replaced by a file is gone; replaced by a
    folder holding no readable run (a new run being created there: no manifest yet, or one cut short) it "no
    longer holds a readable run" — neither is a run that "went on, or was resumed"."""
    first = two_runs[0]
    run = op.load_run(first)
    loaded = run.run_id
    _ = run.cases
    first.rename(tmp_path / "moved")
    if now == "a file":
        first.write_text("not a run\n", encoding="utf-8")
        expected = rf"^{first}: the run folder is gone since the run was loaded \(moved, renamed or deleted\)"
    else:
        first.mkdir()
        if now == "a damaged manifest":
            (first / "manifest.json").write_text('{"run_id": ', encoding="utf-8")
        expected = rf"^{first}: no longer holds a readable run, not run {loaded} that was loaded"
    for read in (lambda: run.verdicts, lambda: run.record("c00"), lambda: run.records):
        with pytest.raises(CopyChangedError, match=expected):
            read()


_VARIANT_DESK = '''
import os

from fault_systems import DryRunFirst, _ok


class Variant(DryRunFirst):
    """The dry-run desk that checks the real refund, but for one draw of a stochastic agent (F25_CARELESS=1,
    read as it acts, as a model's answer would be): then it never checks the real refund."""

    def act(self, input, rec):
        order_id = input["order_id"]
        rec.tool("get_order", self.get_order, order_id=order_id)
        if not _ok(rec.tool("issue_refund", self.dry_run, order_id=order_id)):
            return self.escalate(order_id, rec)
        result = rec.tool("issue_refund", self.issue_refund, order_id=order_id)
        careless = os.environ.get("F25_CARELESS") == "1"
        return "refunded" if careless or _ok(result) else self.escalate(order_id, rec)
'''


def test_a_pooled_row_of_calls_every_with_a_replay_of_its_own_is_a_try(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A row of ``calls: every`` is one verdict over each call's replay. Run a (2 epochs of 6 cases)
    recovers at both calls; the cache loses the second call's entries; run b (the agent's careless draw) takes
    the first call's replays from the cache and makes the second call's itself, which fail. The row was left out
    of the pooled pass^2 as a repeat of run a's, so the pool held only a's passes: rate 1, gate PASS. By hand,
    each case holds 2 passes and 2 fails: pass^2 = C(2,2)/C(4,2) = 1/6."""
    from _fault_systems import refund_case, write_suite

    folder = write_suite(tmp_path / "suite", cases=[refund_case(f"ord-{i:03d}", 10.0 + i) for i in range(6)],
                         calls="every")
    (folder / "variant_desk.py").write_text(_VARIANT_DESK, encoding="utf-8")
    config = folder / "oloproof.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("fault_systems:Escalates", "variant_desk:Variant"),
                      encoding="utf-8")
    suite = op.load_suite(folder)
    first = op.run(suite, out=tmp_path / "a", epochs=2, progress=False)
    assert list(first.replays["verdict"]) == ["pass"] * 24 and not first.replays["cached"].any()
    for entry in (folder / ".oloproof" / "replays").glob("*.json"):  # the second call's entries lost
        if '"checkpoint":2' in entry.read_text(encoding="utf-8"):
            entry.unlink()
    monkeypatch.setenv("F25_CARELESS", "1")
    second = op.run(suite, out=tmp_path / "b", epochs=2, progress=False)
    by_call = second.replays.groupby("checkpoint")[["verdict", "cached"]].agg(lambda s: sorted(set(s)))
    assert by_call.to_dict("index") == {1: {"verdict": ["pass"], "cached": [True]},
                                        2: {"verdict": ["fail"], "cached": [False]}}
    pooled = op.load_runs([tmp_path / "a", tmp_path / "b"])
    assert pooled.repeated_replays() == set()  # was every row of run b
    criterion = "recovers_from_error_at_issue_refund"
    release = {"allow_approximate_methods": True, "min_clusters": 2,
               "criteria": {criterion: {"threshold": 0.5, "reduce": "pass^2"}}}
    row = op.gate(pooled, release=release).table.set_index("criterion").loc[criterion]
    assert (row["n"], row["passed"], row["rate"]) == (6, 0, pytest.approx(1 / 6))  # was (6, 6, 1.0), PASS
    assert row["verdict"] != "PASS" and "repeat" not in row["reason"]


@pytest.mark.parametrize(("epoch", "of"), [(0, 2), (-1, 2), (3, 2), (2.0, 2), ("2", 2), (True, 1)],
                         ids=["0", "-1", "3", "2.0", "text-2", "true"])
def test_a_record_whose_epoch_is_not_an_integer_from_1_to_the_runs_epochs_is_refused(
        make_suite: Callable[..., Path], tmp_path: Path, epoch: object, of: int) -> None:
    """The record's epoch is read as written: 0, a negative, one past the run's epochs, ``2.0``, ``"2"`` and
    ``true`` (JSON's bool, which ``1 <= True <= 2`` takes for 1) are no epoch of a 2-epoch run. The record of case
    c00 epoch ``of`` forged to hold one is refused as damage, naming the value as the journal holds it (``true``
    is forged on the epoch-1 record, which writes no epoch: on the epoch-2 one it would be a second record of
    epoch 1, which the journal keeps once, and the run is incomplete)."""
    import json

    suite = op.load_suite(make_suite(_cases(3, 1), evaluators=[{"type": "answer_matches"}], epochs=2))
    run = op.run(suite, out=tmp_path / "run", progress=False)
    forged = shutil.copytree(run.directory, tmp_path / "forged")
    shutil.rmtree(forged / "frames")
    journal = forged / "cases.jsonl"
    records = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    assert sorted((r["case"]["id"], r["case"].get("epoch", 1)) for r in records) == [
        (f"c{i:02d}", e) for i in range(3) for e in (1, 2)]  # 3 cases × 2 epochs, by hand
    for record in records:
        if record["case"]["id"] == "c00" and record["case"].get("epoch", 1) == of:
            record["case"]["epoch"] = epoch
    journal.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with pytest.raises(RunDirError) as caught:
        op.gate(op.load_run(forged))
    assert str(caught.value) == (f"{journal}: the record of case 'c00' is of epoch {epoch!r}, but run {run.run_id} "
                                 "has epochs 1 to 2 (manifest.json); the run directory is damaged")
