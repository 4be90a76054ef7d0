"""The runner: reset(deepcopy) → run → snapshot per case, isolation, missing state, failures, workers, progress."""

from __future__ import annotations

import copy
import hashlib
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import oloproof_nb as op
from oloproof_nb._core.case import case_digest
from oloproof_nb._run.runner import run_suite

# -- purpose-built systems ---------------------------------------------------------------------------


class Leaky:
    """A sandbox that keeps the very dict it was given and appends to it.

    If the runner skipped ``reset`` the log would grow from case to case; if it
    passed ``initial_state`` itself (no deep copy) the case's own dict would be
    changed in place, nested levels included.
    """

    version = "leaky-1"

    def __init__(self) -> None:
        self.state: dict[str, Any] = {"log": ["left over from construction"]}

    def reset(self, state: dict[str, Any]) -> None:
        self.state = state

    def snapshot(self) -> dict[str, Any]:
        return self.state

    def run(self, input: dict[str, Any]) -> dict[str, Any]:
        self.state.setdefault("log", []).append(input["item"])
        shared = self.state.setdefault("shared", {})
        shared["visits"] = shared.get("visits", 0) + 1
        input["item"] = "mutated input"  # the system also mutates its input
        return {"answer": len(self.state["log"]), "steps": [{"tool": "append", "args": {}, "result": {"ok": True}}]}


class Stateless:
    """Only ``run``: no sandbox, so no state is ever recorded."""

    def run(self, input: dict[str, Any]) -> dict[str, Any]:
        return {"answer": input.get("answer"), "steps": []}


class Noop:
    """A sandbox that does nothing: the state after each case is its initial_state."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = {}

    def reset(self, state: dict[str, Any]) -> None:
        self.state = state

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def run(self, input: dict[str, Any]) -> op.Trajectory:
        return op.Trajectory(answer=input.get("answer"))


def leaky_cases(n: int) -> list[dict[str, Any]]:
    return [{"id": f"c{i}", "input": {"item": f"item-{i}", "message": f"m{i}"},
             "initial_state": {"log": [f"seed-{i}"] * (i % 3), "shared": {"visits": 10 * i}},
             "expected": {"answer": i % 3 + 1}} for i in range(n)]


def test_leaky_system_really_leaks_without_reset() -> None:
    sys_ = Leaky()
    sys_.reset({"log": []})
    sys_.run({"item": "a"})
    assert sys_.run({"item": "b"})["answer"] == 2  # the test system is leaky: only reset isolates cases


@pytest.mark.parametrize("workers", [1, 3])
def test_isolation_every_snapshot_follows_its_own_initial_state(make_suite, workers: int) -> None:
    folder = make_suite(leaky_cases(9), evaluators=[{"type": "answer_matches"}])
    suite = op.load_suite(folder)
    pristine = [copy.deepcopy(c.initial_state) for c in suite.cases]
    run = op.run(suite, system=Leaky, workers=workers, out=folder / "out")
    snaps = run.snapshots.set_index("case_id")["state"]
    for i, case in enumerate(suite.cases):
        expected_state = {"log": [f"seed-{i}"] * (i % 3) + [f"item-{i}"], "shared": {"visits": 10 * i + 1}}
        assert snaps[case.id] == expected_state
    assert (run.verdicts["verdict"] == "pass").all() and len(run.verdicts) == 9
    # the system mutated the dicts it was given; the cases are untouched
    assert [c.initial_state for c in suite.cases] == pristine
    assert [c.input["item"] for c in suite.cases] == [f"item-{i}" for i in range(9)]
    # the stored trajectory input is the case's input, not the system's mutated copy
    assert [rec["trajectory"]["input"]["item"] for rec in run.records] == [f"item-{i}" for i in range(9)]


def test_isolation_with_one_shared_instance(make_suite) -> None:
    folder = make_suite(leaky_cases(6), evaluators=[{"type": "answer_matches"}])
    instance = Leaky()
    run = op.run(op.load_suite(folder), system=instance, out=folder / "out")
    assert list(run.cases["answer"]) == [i % 3 + 1 for i in range(6)]


def test_derived_cases_share_nothing_with_their_source(make_suite) -> None:
    folder = make_suite(
        leaky_cases(3), evaluators=[{"type": "answer_matches"}],
        metamorphic={"transforms": [{"name": "polite", "field": "message", "template": "{value}, please",
                                     "validity_labels": "labels/polite.jsonl", "minimum_validity": 0.5}]})
    (folder / "labels").mkdir()
    (folder / "labels" / "polite.jsonl").write_text(
        "".join(json.dumps({"case_id": f"c{i}~polite", "valid": True}) + "\n" for i in range(3)), encoding="utf-8")
    suite = op.load_suite(folder)
    assert [c.id for c in suite.cases] == ["c0", "c0~polite", "c1", "c1~polite", "c2", "c2~polite"]
    run = op.run(suite, system=Leaky, out=folder / "out")
    snaps = run.snapshots.set_index("case_id")["state"]
    for i in range(3):
        for cid in (f"c{i}", f"c{i}~polite"):
            # source and copy both start from the source's initial_state, one append each
            assert snaps[cid] == {"log": [f"seed-{i}"] * (i % 3) + [f"item-{i}"], "shared": {"visits": 10 * i + 1}}


# -- no recorded state -------------------------------------------------------------------------------


def test_stateless_system_is_missing_for_every_state_evaluator(make_suite) -> None:
    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "initial_state": {"a": 1},
              "expected": {"answer": "ok", "state": {"a": 1}}} for i in range(4)]
    folder = make_suite(cases, evaluators=[
        {"type": "answer_matches"}, {"type": "state_matches", "mode": "whole"},
        {"type": "state_matches", "criterion": "sub", "mode": "subset"},
        {"type": "state_matches", "criterion": "by_path", "mode": "paths", "paths": ["a"]},
        {"type": "state_unchanged", "paths": ["a"]}])
    run = op.run(op.load_suite(folder), system=Stateless, out=folder / "out")
    assert not run.cases["has_state"].any()
    assert run.snapshots.empty and run.changes.empty
    state_rows = run.verdicts[run.verdicts["evaluator"].isin(["state_matches", "state_unchanged"])]
    assert len(state_rows) == 4 * 4
    assert set(state_rows["verdict"]) == {"missing"} and set(state_rows["reason"]) == {"no_state_recorded"}
    answers = run.verdicts[run.verdicts["criterion"] == "answer_matches"]
    assert list(answers["verdict"]) == ["pass"] * 4
    counts = run.summary().set_index("criterion")
    assert counts.loc["state_matches", "passed"] == 0 and counts.loc["state_matches", "missing"] == 4
    assert run.comparisons["criterion"].eq("answer_matches").all()


# -- the record: environment_state/v1, trajectory.input, digests -------------------------------------


CASE_LINE = {"id": "k1", "input": {"answer": "done"}, "initial_state": {"box": {"n": 1}},
             "expected": {"answer": "done"}}
# canonical JSON of CASE_LINE by hand (sorted keys, no spaces)
CASE_CANONICAL = '{"expected":{"answer":"done"},"id":"k1","initial_state":{"box":{"n":1}},"input":{"answer":"done"}}'


def test_environment_state_record(make_suite) -> None:
    line = {**CASE_LINE, "input": {"answer": "done", "writes": [{"path": ["box", "n"], "value": 2}]}}
    folder = make_suite([line])
    run = op.run(op.load_suite(folder), out=folder / "out")
    (rec,) = run.records
    env = rec["environment_state"]
    assert set(env) == {"schema", "run_id", "case_id", "case_digest", "system_version", "captured_at", "state",
                        "state_digest"}
    assert env["schema"] == "environment_state/v1" and env["case_id"] == "k1"
    assert env["run_id"] == run.run_id == run.manifest.run_id
    assert env["system_version"] == "scripted-1" == run.system_version
    assert env["state"] == {"box": {"n": 2}}
    assert env["state_digest"] == hashlib.sha256(b'{"box":{"n":2}}').hexdigest()
    assert env["case_digest"] == case_digest(line) == rec["case"]["digest"]
    assert pd.Timestamp(env["captured_at"]) >= pd.Timestamp(rec["started_at"])
    assert rec["trajectory"]["input"] == line["input"]
    assert list(run.changes[["path", "before", "after"]].itertuples(index=False, name=None)) == [("box.n", 1, 2)]


def test_case_digest_never_depends_on_the_state_after(make_suite) -> None:
    changing = {**CASE_LINE, "input": {"answer": "done", "writes": [{"path": ["box", "n"], "value": 99}]}}
    folder = make_suite([CASE_LINE])
    folder2 = make_suite([changing])
    pinned = hashlib.sha256(CASE_CANONICAL.encode("utf-8")).hexdigest()
    a = op.run(op.load_suite(folder), system=Noop, out=folder / "a")
    b = op.run(op.load_suite(folder), out=folder / "b")  # Scripted: same case line, so no writes either
    b_state = op.run(op.load_suite(folder), system=_Writer, out=folder / "c")  # leaves another end state
    assert a.cases["digest"].tolist() == b.cases["digest"].tolist() == b_state.cases["digest"].tolist() == [pinned]
    assert a.snapshots["state"][0] == {"box": {"n": 1}} and b_state.snapshots["state"][0] == {"box": {"n": 7}}
    assert a.snapshots["state_digest"][0] != b_state.snapshots["state_digest"][0]
    assert b_state.snapshots["case_digest"][0] == pinned
    # a different input is a different case (digest changes), whatever the state
    c = op.run(op.load_suite(folder2), out=folder2 / "out")
    assert c.cases["digest"][0] == case_digest(changing) != pinned


class _Writer(Noop):
    def run(self, input: dict[str, Any]) -> op.Trajectory:
        self.state["box"]["n"] = 7
        return op.Trajectory(answer=input.get("answer"))


# -- failures: error and timeout, then a fresh instance ------------------------------------------------


class Flaky:
    built = 0
    release = threading.Event()

    def __init__(self) -> None:
        type(self).built += 1
        self.broken = False
        self.state: dict[str, Any] = {}

    def reset(self, state: dict[str, Any]) -> None:
        if self.broken:
            raise RuntimeError("used after a failure")
        self.state = state

    def snapshot(self) -> dict[str, Any]:
        return self.state

    def run(self, input: dict[str, Any]) -> dict[str, Any]:
        if input.get("do") == "raise":
            self.broken = True
            raise KeyError("no such order")
        if input.get("do") == "hang":
            self.broken = True
            type(self).release.wait(30)
        if input.get("do") == "garbage":
            self.broken = True
            return "not a trajectory"  # type: ignore[return-value]
        return {"answer": "ok"}


@pytest.mark.parametrize("workers", [1, 2])
def test_error_and_timeout_leave_missing_verdicts_and_a_fresh_system(make_suite, workers: int) -> None:
    cases = [{"id": f"c{i}", "input": {"do": do, "n": i}, "expected": {"answer": "ok", "state": {}}}
             for i, do in enumerate(["ok", "raise", "ok", "hang", "ok", "garbage", "ok"])]
    folder = make_suite(cases, case_timeout_s=0.5)
    Flaky.built = 0
    Flaky.release.clear()
    try:
        run = op.run(op.load_suite(folder), system=Flaky, workers=workers, out=folder / "out")
    finally:
        Flaky.release.set()
    status = dict(zip(run.cases["case_id"], run.cases["status"], strict=True))
    assert status == {"c0": "completed", "c1": "error", "c2": "completed", "c3": "timeout", "c4": "completed",
                      "c5": "error", "c6": "completed"}
    errors = dict(zip(run.cases["case_id"], run.cases["error"], strict=True))
    assert "KeyError" in errors["c1"] and "no such order" in errors["c1"]
    assert "timeout" in errors["c3"] and "run() returned str" in errors["c5"]
    bad = run.verdicts[run.verdicts["case_id"].isin(["c1", "c3", "c5"])]
    assert len(bad) == 6 and set(bad["verdict"]) == {"missing"}
    assert all(r.reason == errors[r.case_id] for r in bad.itertuples())
    good = run.verdicts[run.verdicts["case_id"].isin(["c0", "c2", "c4", "c6"])]
    assert set(good["verdict"]) == {"pass"}
    assert Flaky.built == workers + 3  # the first instances + one fresh instance after each of the 3 failures
    assert not run.cases.set_index("case_id").loc[["c1", "c3", "c5"], "has_state"].any()


# -- workers and progress --------------------------------------------------------------------------------

TIMING = {"cases": ["duration_s", "started_at"], "snapshots": ["captured_at", "run_id"]}
FRAMES = ["cases", "steps", "snapshots", "changes", "verdicts", "comparisons", "replays", "pairs", "receipts"]


def _scripted_cases(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        good = i % 4 != 3
        out.append({"id": f"w{i:02d}", "input": {"answer": "done" if good else "nope",
                                                 "writes": [{"path": ["acct", f"a{i}"], "value": i * 1.5}]},
                    "initial_state": {"acct": {f"a{i}": 0.0, "other": i}},
                    "expected": {"answer": "done", "state": {"acct": {f"a{i}": i * 1.5}}}})
    return out


def _frames_equal(a: op.Run, b: op.Run) -> None:
    for name in FRAMES:
        left, right = getattr(a, name), getattr(b, name)
        drop = TIMING.get(name, [])
        pd.testing.assert_frame_equal(left.drop(columns=drop), right.drop(columns=drop), obj=f"run.{name}")


def test_workers_give_the_same_frames_as_serial(make_suite) -> None:
    evaluators = [{"type": "answer_matches"}, {"type": "state_matches"},
                  {"type": "state_unchanged", "paths": ["acct.other"]}]
    folder = make_suite(_scripted_cases(16), evaluators=evaluators)
    suite = op.load_suite(folder)
    serial = op.run(suite, out=folder / "serial")
    parallel = op.run(suite, workers=2, out=folder / "parallel")
    parallel4 = op.run(suite, workers=4, out=folder / "parallel4")
    _frames_equal(serial, parallel)
    _frames_equal(serial, parallel4)
    # hand count: cases 3, 7, 11, 15 answer "nope"
    counts = serial.summary().set_index("criterion")
    assert counts.loc["answer_matches", ["passed", "failed", "missing"]].tolist() == [12, 4, 0]
    assert counts.loc["state_matches", "passed"] == 16 and counts.loc["state_unchanged", "passed"] == 16


def test_workers_need_a_factory(make_suite) -> None:
    folder = make_suite(_scripted_cases(2))
    with pytest.raises(op.OloproofError, match="factory"):
        op.run(op.load_suite(folder), system=Noop(), workers=2, out=folder / "o")
    with pytest.raises(op.OloproofError, match="workers"):
        op.run(op.load_suite(folder), workers=0, out=folder / "o2")


@pytest.mark.parametrize("chunk_size", [0, 2.5, "8", None, True])
def test_a_chunk_size_that_is_no_positive_integer_is_refused_before_the_run(make_suite, chunk_size: Any) -> None:
    """2.5 stopped a run it had begun with an "internal error … a bug in oloproof_nb", "8" and None with a bare
    TypeError, and True ran as 1."""
    folder = make_suite(_scripted_cases(2))
    with ThreadPoolExecutor(1) as pool, pytest.raises(op.OloproofError, match=r"chunk_size=.*integer of at least 1"):
        op.run(op.load_suite(folder), executor=pool, chunk_size=chunk_size, out=folder / "o", progress=False)
    assert not (folder / "o").exists()


def test_a_numpy_integer_chunk_size_runs_as_before(make_suite) -> None:
    """Refusing a chunk_size that is no ``int`` before the run also refused ``numpy.int64(2)``
    (a size computed from an array), a chunk size that ran before. Four cases in chunks of two: the
    four records, as a serial run's."""
    import numpy as np

    folder = make_suite(_scripted_cases(4))
    with ThreadPoolExecutor(2) as pool:
        run = op.run(op.load_suite(folder), executor=pool, chunk_size=np.int64(2), out=folder / "o", progress=False)
    assert run.finished and sorted(run.cases["case_id"]) == sorted(c["id"] for c in _scripted_cases(4))


def test_numpy_integer_workers_and_epochs_run_as_their_python_integers(make_suite) -> None:
    """``workers=np.int64(2)`` and ``epochs=np.int64(2)`` (counts computed from an array) were refused as "must be
    an integer" while ``chunk_size`` took them; bools and floats stay refused. Three cases twice each: six records,
    two workers' threads."""
    import numpy as np

    folder = make_suite(_scripted_cases(3))
    run = op.run(op.load_suite(folder), workers=np.int64(2), epochs=np.int64(2), out=folder / "o", progress=False)
    assert run.finished and len(run.cases) == 6
    assert sorted(run.cases["epoch"].unique().tolist()) == [1, 2]
    for bad in ({"workers": True}, {"workers": 2.0}, {"epochs": np.bool_(True)}, {"epochs": 2.0}):
        with pytest.raises(op.OloproofError, match=rf"{next(iter(bad))}=.*integer"):
            op.run(op.load_suite(folder), out=folder / "bad", progress=False, **bad)
        assert not (folder / "bad").exists()


class _ClientLike:
    """The shape of a Dask ``Client``: ``submit`` returns futures that are not concurrent.futures ones."""

    def submit(self, fn: Any, *args: Any) -> object:
        return object()

    def get_executor(self) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(1)


@pytest.mark.parametrize("executor", [_ClientLike(), 4])
def test_an_executor_that_is_no_executor_is_refused_before_the_run(make_suite, executor: Any) -> None:
    """A Dask Client given as ``executor=`` (not ``client.get_executor()``), or 4, stopped a run it had begun with
    an "internal error … a bug in oloproof_nb"."""
    folder = make_suite(_scripted_cases(2))
    hint = r"; for Dask, give client\.get_executor\(\)" if isinstance(executor, _ClientLike) else r"\)$"
    with pytest.raises(op.OloproofError, match=r"^executor=.*must be a concurrent\.futures\.Executor.*" + hint):
        op.run(op.load_suite(folder), executor=executor, out=folder / "o", progress=False)
    assert not (folder / "o").exists()


@pytest.mark.parametrize("executor", [4, "dask", ThreadPoolExecutor])
def test_an_executor_without_get_executor_is_given_no_dask_hint(make_suite, executor: Any) -> None:
    """The test above ends 4's message at ``)``, which the Dask hint (``client.get_executor()``)
    ends with too: a hint given to every refused executor passed it. 4, a string, or the executor class itself
    (not an instance) have no ``get_executor``: the line names the type wanted and nothing of Dask."""
    folder = make_suite(_scripted_cases(2))
    with pytest.raises(op.OloproofError) as refused:
        op.run(op.load_suite(folder), executor=executor, out=folder / "o", progress=False)
    message = str(refused.value)
    assert message.endswith("must be a concurrent.futures.Executor (a ProcessPoolExecutor, say)"), message
    assert "Dask" not in message and "get_executor" not in message
    assert not (folder / "o").exists()


@pytest.mark.parametrize("workers", [2, 8])
def test_workers_beside_an_executor_are_refused_before_the_run(make_suite, workers: int) -> None:
    """workers=8 beside executor= was dropped without a word (the executor sizes itself):
    the run would not be what was asked. workers=1, the default, is the executor's own size and runs."""
    folder = make_suite(_scripted_cases(2))
    with ThreadPoolExecutor(1) as pool:
        with pytest.raises(op.OloproofError, match=rf"^workers={workers} and executor= together: .*give one of"):
            op.run(op.load_suite(folder), executor=pool, workers=workers, out=folder / "o", progress=False)
        assert not (folder / "o").exists()
        assert op.run(op.load_suite(folder), executor=pool, workers=1, out=folder / "o", progress=False).finished


def test_the_readme_says_which_workers_beside_an_executor_are_refused() -> None:
    """README §9 said "`workers=` beside it is refused", but workers=1 (the default, and a value written out) runs
    beside an executor, as the test above shows: the sentence names the values refused."""
    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8").split())
    said = readme.split("The executor decides how many batches run at once: ", 1)[1].split(".")[0]
    assert said == "`workers=` other than 1 (the default) beside it is refused rather than dropped"


@pytest.mark.parametrize("progress", [True, None, False])
def test_progress_bar_does_not_break_non_tty_runs(make_suite, capsys: pytest.CaptureFixture[str],
                                                  progress: bool | None) -> None:
    folder = make_suite(_scripted_cases(5))
    suite = op.load_suite(folder)
    run = op.run(suite, out=folder / "out", progress=progress)
    captured = capsys.readouterr()
    assert captured.out == ""
    if progress is not True:
        assert captured.err == ""  # stderr is not a terminal: no bar by default
    assert len(run.cases) == 5 and run.finished
    _frames_equal(run, op.run(suite, out=folder / "again", progress=False))


def test_default_run_directory_is_in_the_suite_folder(make_suite) -> None:
    folder = make_suite(_scripted_cases(1))
    run = op.run(op.load_suite(folder))
    assert run.directory.parent == (folder / "runs").resolve() or run.directory.parent == folder / "runs"
    assert run.directory.name == run.run_id


def test_run_accepts_a_folder_path(make_suite) -> None:
    folder = make_suite(_scripted_cases(2))
    run = op.run(str(folder), out=folder / "o")
    assert list(run.cases["case_id"]) == ["w00", "w01"]


def test_suite_files_are_never_modified(make_suite) -> None:
    folder = make_suite(_scripted_cases(3), release={"criteria": {"answer_matches": 0.5}})
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    op.run(op.load_suite(folder), out=folder / "o", workers=2)
    after = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    assert after == before


def test_runs_without_any_stderr(make_suite, monkeypatch: pytest.MonkeyPatch) -> None:
    # pythonw, some services and daemons run with sys.stderr = None
    folder = make_suite(_scripted_cases(2))
    suite = op.load_suite(folder)
    monkeypatch.setattr("sys.stderr", None)
    run = op.run(suite, out=folder / "out")
    assert len(run.cases) == 2


# -- big case files are streamed (issue 14) ----------------------------------------------------------------------


def test_cases_are_streamed_to_the_runner_in_bounded_memory(tmp_path: Path) -> None:
    """A 10 MB case file: loading and running it never holds the cases (it used to hold all of them, ~48 MB)."""
    import json
    import tracemalloc

    from _reliability_systems import ECHO_SOURCE

    from oloproof_nb._run.runner import run_suite

    root = tmp_path / "big"
    root.mkdir()
    (root / "echo.py").write_text(ECHO_SOURCE, encoding="utf-8")
    (root / "oloproof.yaml").write_text("name: big\nsystem: echo:Echo\nevaluators:\n  - {type: answer_matches}\n",
                                       encoding="utf-8")
    # a 33 KB initial_state per case, in a few values: held whole, the cases would be ~10 MB of strings, and
    # tracemalloc, which slows every allocation, has few to trace (1,000 keys a case took 40 s)
    blob = {f"k{j}": chr(97 + j) * 3300 for j in range(10)}
    with (root / "cases.jsonl").open("w", encoding="utf-8") as handle:
        for i in range(300):
            handle.write(json.dumps({"id": f"c{i}", "input": {"answer": "a", "n": i}, "initial_state": {"blob": blob},
                                     "expected": {"answer": "a"}}) + "\n")
    size = (root / "cases.jsonl").stat().st_size
    assert size > 9_000_000
    tracemalloc.start()
    try:
        suite = op.load_suite(root)
        run_suite(suite, out=tmp_path / "run", progress=None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < size / 3, (peak, size)  # measured: 2.2 MB for this 9.9 MB file (held whole: 13.2 MB)
    assert suite.n_cases == 300 and len(op.load_run(tmp_path / "run").records) == 300


CHDIR_SYSTEM = '''
import os


class Wanderer:
    """Answers, and changes the process's working directory on the way (as some tools do)."""

    def __init__(self):
        self.state = {}

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        os.chdir(input["to"])
        return {"steps": [], "answer": "ok", "status": "completed"}
'''


def test_a_system_that_changes_directory_leaves_a_relative_out_alone(make_suite, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The run folder was kept as given (relative) and its files opened again by that path on every write:
    after the system's os.chdir the run stopped with "states.jsonl: cannot write ... free space", and a
    resume failed the same way. The folder is now made absolute when the run starts."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cases = [{"id": f"c{i}", "input": {"to": str(elsewhere)}, "initial_state": {"n": i},
              "expected": {"answer": "ok"}} for i in range(4)]
    suite = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Wanderer",
                       system_code=CHDIR_SYSTEM)
    monkeypatch.chdir(tmp_path)
    run = op.run(op.load_suite(suite), out="run", progress=False)
    assert run.finished and len(run.cases) == 4 and run.directory == tmp_path / "run"
    assert not (elsewhere / "run").exists()


# -- the code of the suite's python checks: what a run judges by, and what it records ---------------------------

STRICT_CHECK = "def done(case, initial_state, final_state, trajectory):\n    return trajectory.answer == 'ok'\n"
LOOSE_CHECK = "def done(case, initial_state, final_state, trajectory):\n    return True\n"
ANSWERS = [{"id": f"c{i}", "input": {"answer": "ok" if i % 2 else "no", "n": i}} for i in range(6)]


def _check_suite(make_suite, code: str, **config: Any) -> Path:
    root = make_suite(ANSWERS, evaluators=[{"type": "python", "check": "checks:done"}], **config)
    (root / "checks.py").write_text(code, encoding="utf-8")
    return root


def _digest_of(code: str) -> str:
    """function_digest by hand: sha256 of the sorted file digests (one file here: checks.py)."""
    return hashlib.sha256(hashlib.sha256(code.encode()).hexdigest().encode()).hexdigest()


def test_a_run_judges_by_the_check_it_loaded_and_records_its_code(make_suite, tmp_path: Path) -> None:
    """checks.py edited after load_suite (a notebook re-running a cell later): the run used to import the
    edited file on its first case, so its verdicts came from code no digest described. Then it judged with the
    check as loaded, which the user had just changed: now the run is refused, and a suite loaded
    again runs the edited check and records its code."""
    root = _check_suite(make_suite, STRICT_CHECK)
    suite = op.load_suite(root)
    assert suite.digests["code:checks:done"] == _digest_of(STRICT_CHECK)
    assert list(op.run(suite, out=tmp_path / "first", progress=False).verdicts["verdict"]) == ["fail", "pass"] * 3
    (root / "checks.py").write_text(LOOSE_CHECK, encoding="utf-8")
    with pytest.raises(op.OloproofError, match=r"checks\.py changed since this suite was loaded"):
        op.run(suite, out=tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()
    run = op.run(op.load_suite(root), out=tmp_path / "again", progress=False)
    assert run.manifest.digests["code:checks:done"] == _digest_of(LOOSE_CHECK)


def _finished_then_reopened(root: Path, out: Path) -> dict[str, Any]:
    op.run(root, out=out, progress=False)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]  # as if killed after the last record
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return manifest


def test_resume_refuses_a_run_whose_check_code_changed(make_suite, tmp_path: Path) -> None:
    """Resuming after checks.py changed would mix verdicts of two checks in one run; the suite's digests
    covered oloproof.yaml, the cases and the labels, not the check's code."""
    root = _check_suite(make_suite, STRICT_CHECK)
    out = tmp_path / "run"
    _finished_then_reopened(root, out)
    op.run(root, out=out, resume=True, progress=False)  # the same code: resumes
    _finished_then_reopened(root, out := tmp_path / "run2")
    (root / "checks.py").write_text(LOOSE_CHECK, encoding="utf-8")
    before = (out / "manifest.json").read_bytes()
    with pytest.raises(op.RunDirError, match=r"the code of checks:done changed since this run started"):
        op.run(root, out=out, resume=True, progress=False)
    assert (out / "manifest.json").read_bytes() == before


def test_resume_of_a_run_that_recorded_no_code_says_so(make_suite, tmp_path: Path) -> None:
    root = _check_suite(make_suite, STRICT_CHECK)
    out = tmp_path / "run"
    manifest = _finished_then_reopened(root, out)
    manifest["digests"] = {k: v for k, v in manifest["digests"].items() if not k.startswith("code:")}
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(op.RunDirError, match=r"was started before runs recorded their checks' code, so a resume "
                                             r"cannot tell whether the code of checks:done changed"):
        op.run(root, out=out, resume=True, progress=False)


def test_a_suite_loaded_without_its_code_records_it_and_resume_refuses_an_edit(make_suite, tmp_path: Path) -> None:
    """load_suite(import_system_now=False) digested no check, so its run recorded none, and a resume after
    checks.py changed mixed two checks in one run. Every run now loads and digests the checks it calls."""
    root = _check_suite(make_suite, STRICT_CHECK)
    out = tmp_path / "run"
    _finished_then_reopened(op.load_suite(root, import_system_now=False), out)
    assert json.loads((out / "manifest.json").read_text())["digests"]["code:checks:done"] == _digest_of(STRICT_CHECK)
    (root / "checks.py").write_text(LOOSE_CHECK, encoding="utf-8")
    with pytest.raises(op.RunDirError, match=r"the code of checks:done changed since this run started"):
        op.run(op.load_suite(root, import_system_now=False), out=out, resume=True, progress=False)


def test_a_suite_copied_with_another_check_records_that_checks_code(make_suite, tmp_path: Path) -> None:
    """with_user_code trusted a copy's flag: a Suite made with dataclasses.replace and a python check the
    loaded suite did not have ran that check without recording its code."""
    import dataclasses

    root = _check_suite(make_suite, STRICT_CHECK)
    plain = op.load_suite(root)  # a copy whose config calls checks:done, without that check or its digest
    bare = dataclasses.replace(plain, checks={}, digests={k: v for k, v in plain.digests.items()
                                                          if not k.startswith("code:")})
    assert bare.code_loaded
    run = op.run(bare, out=tmp_path / "run", progress=False)
    assert run.manifest.digests["code:checks:done"] == _digest_of(STRICT_CHECK)
    assert list(run.verdicts["verdict"]) == ["fail", "pass"] * 3


def test_in_jupyter_without_ipywidgets_the_bar_is_the_text_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a notebook without ipywidgets, tqdm.auto warned "IProgress not found" into every
    executed notebook (and fell back to the text bar anyway)."""
    import sys
    import warnings

    import tqdm.notebook
    import tqdm.std

    from oloproof_nb._display import notebook

    monkeypatch.setattr(notebook, "in_notebook", lambda: True)
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import ipywidgets raises ImportError
    bar = notebook._bar_class()
    assert issubclass(bar, tqdm.std.tqdm) and not issubclass(bar, tqdm.notebook.tqdm)  # the text bar, not the widget
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        update, close = notebook.progress_bar("desk")
        update(1, 3)
        update(3, 3)
        close()
    class Broken:  # ipywidgets there but broken (a version clash): tqdm.auto falls back to the text bar too
        def find_spec(self, name: str, *args: Any) -> None:
            if name == "ipywidgets":
                raise RuntimeError("ipywidgets 7 with a jupyterlab 4 frontend")

    monkeypatch.delitem(sys.modules, "ipywidgets")
    monkeypatch.setattr(sys, "meta_path", [Broken(), *sys.meta_path])
    bar = notebook._bar_class()  # op.run raised in such a notebook
    assert issubclass(bar, tqdm.std.tqdm) and not issubclass(bar, tqdm.notebook.tqdm)
    monkeypatch.setattr(notebook, "in_notebook", lambda: False)  # elsewhere: tqdm.auto's choice
    from tqdm.auto import tqdm as auto

    assert notebook._bar_class() is auto


# -- the runner's own rules, one at a time --------------------------------------------------------------


class _Versioned(Noop):
    """The do-nothing sandbox with a ``version``, which the subclasses below change (and nothing else)."""

    version = "v1"


class _VersionTwo(_Versioned):
    version = "v2"


def _answers(n: int) -> list[dict[str, Any]]:
    return [{"id": f"c{i}", "input": {"answer": i}, "expected": {"answer": i}} for i in range(n)]


def test_resume_refuses_another_system_version_and_says_which(make_suite, tmp_path: Path) -> None:
    root = make_suite(_answers(2))
    out = tmp_path / "run"
    op.run(root, system=_Versioned, out=out, progress=False)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]  # as if killed after the last record
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(op.RunDirError, match=r"the system version changed \('v1' → 'v2'\); start a new run"):
        op.run(root, system=_VersionTwo, out=out, resume=True, progress=False)


def _stop_after_two(done: int, total: int) -> None:
    """A progress callback that stops a run as a Ctrl-C does once 2 case runs are recorded."""
    if done >= 2:
        raise KeyboardInterrupt


class _Careful:
    version = "v1"

    def __init__(self, careful: bool = True) -> None:
        self.careful = careful

    def run(self, input: dict) -> dict:
        return {"steps": [], "answer": input["answer"] if self.careful else None}


def test_resume_refuses_the_system_built_with_other_settings(make_suite, tmp_path: Path) -> None:
    """One code, two settings: a run of ``partial(Desk, careful=True)`` stopped after 2 cases was resumed by
    ``careful=False`` (the code fingerprint covers files, not the values a system is built with), one run of two
    systems. It is refused, and nothing is written; the same settings resume it."""
    import functools

    root = make_suite(_answers(4))
    out = tmp_path / "run"

    with pytest.raises(KeyboardInterrupt):
        op.run(root, system=functools.partial(_Careful, careful=True), out=out, progress=_stop_after_two)
    before = (out / "cases.jsonl").read_bytes()
    with pytest.raises(op.RunDirError, match="built with other settings than this run's"):
        op.run(root, system=functools.partial(_Careful, careful=False), out=out, resume=True, progress=False)
    assert (out / "cases.jsonl").read_bytes() == before
    done = op.run(root, system=functools.partial(_Careful, careful=True), out=out, resume=True, progress=False)
    assert done.finished and list(done.verdicts["verdict"]) == ["pass"] * 4
    assert done.manifest.settings_fingerprint is not None


def test_resume_of_a_run_that_records_no_settings_fingerprint_does_not_blame_other_settings(
        make_suite, tmp_path: Path) -> None:
    """A run made before manifests recorded ``settings_fingerprint``, resumed by the very system that
    made it, was refused as 'built with other settings than this run's (… differ)', and told to 'resume with the
    system built as before', which it was. Nothing tells the settings apart, so it is still refused, saying why."""
    import functools

    root = make_suite(_answers(2))
    out = tmp_path / "run"
    op.run(root, system=functools.partial(_Careful, careful=True), out=out, progress=False)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"], manifest["settings_fingerprint"]  # as a run made before the field, killed
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(op.RunDirError, match="records no settings fingerprint") as refused:
        op.run(root, system=functools.partial(_Careful, careful=True), out=out, resume=True, progress=False)
    assert "other settings" not in str(refused.value)


class _Policy:
    """Keeps its setting under another name: only a partial's arguments tell two settings apart."""

    version = "v1"

    def __init__(self, strict: bool = True) -> None:
        self.policy = "strict" if strict else "lax"

    def run(self, input: dict) -> dict:
        return {"steps": [], "answer": input["answer"] if self.policy == "strict" else None}


@pytest.mark.parametrize(("first_strict", "why"), [(True, "this run records no settings fingerprint"),
                                                   (False, "built with other settings than this run's")],
                         ids=["bare-then-partial", "partial-then-bare"])
def test_resume_refuses_settings_recorded_on_one_side_only(make_suite, tmp_path: Path, first_strict: bool,
                                                           why: str) -> None:
    """A run of the bare class records no settings (no attribute is named as a parameter, no
    partial) and one of ``partial(_Policy, strict=False)`` records some; either resumed by the other is two
    systems in one run, refused with nothing written."""
    import functools

    bare, lax = _Policy, functools.partial(_Policy, strict=False)
    first, second = (bare, lax) if first_strict else (lax, bare)
    root = make_suite(_answers(4))
    out = tmp_path / "run"

    with pytest.raises(KeyboardInterrupt):
        op.run(root, system=first, out=out, progress=_stop_after_two)
    stored = json.loads((out / "manifest.json").read_text(encoding="utf-8")).get("settings_fingerprint")
    assert (stored is None) is first_strict
    before = (out / "cases.jsonl").read_bytes()
    with pytest.raises(op.RunDirError, match=why):
        op.run(root, system=second, out=out, resume=True, progress=False)
    assert (out / "cases.jsonl").read_bytes() == before


def test_resume_refuses_a_system_class_no_file_defines(make_suite, tmp_path: Path) -> None:
    """A class typed into a notebook cell has no code fingerprint: an edit of the cell (its version kept) was
    resumed into the run begun by the cell before it, one gate over two agents. It is refused as an
    edited file's class is, and nothing is written; with a fingerprint() the run resumes."""
    root = make_suite(_answers(4))

    def cell(answer: str, fingerprint: str = "") -> type:
        namespace: dict[str, Any] = {"__name__": "g11_notebook_cell"}
        body = (f"class Agent:\n    version = 'v1'\n{fingerprint}    def run(self, input):\n"
                f"        return {{'steps': [], 'answer': {answer}}}\n")
        exec(compile(body, "<ipython-input-2-g11>", "exec"), namespace)  # noqa: S102 - a cell's class
        return namespace["Agent"]

    for name, fingerprint, refused in (("plain", "", True), ("pinned", "    def fingerprint(self):\n"
                                                                        "        return 'agent@1'\n", False)):
        out = tmp_path / name
        op.run(root, system=cell("input['answer']", fingerprint), out=out, progress=False)
        lines = (out / "cases.jsonl").read_bytes().splitlines(keepends=True)
        (out / "cases.jsonl").write_bytes(b"".join(lines[:2]))  # stopped after two cases
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        del manifest["finished_at"]
        (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
        before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
        edited = cell("-1", fingerprint)  # the cell edited: every answer wrong, the version kept
        if refused:
            with pytest.raises(op.RunDirError, match=r"the system's class is defined in no file \(typed into a "
                                                     r"notebook cell\).*start a new run instead"):
                op.run(root, system=edited, out=out, resume=True, progress=False)
            assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name != ".lock"} == \
                {k: v for k, v in before.items() if k != ".lock"}
        else:  # the fingerprint() is the user's word that the code is the same
            assert op.run(root, system=edited, out=out, resume=True, progress=False).finished


@pytest.mark.skipif(not hasattr(BaseException, "add_note"), reason="exception notes are Python 3.11+")
def test_a_worker_system_that_cannot_be_built_names_the_run_it_stopped(make_suite, tmp_path: Path) -> None:
    """op.run(..., workers=3) whose factory fails on its third instance stopped with "building the system raised
    RuntimeError: no more licences" and nothing else, though the run folder (its manifest) was already written:
    op.run's Raises promise that the folder and the way to finish the run are named."""
    root = make_suite(_scripted_cases(6))
    built: list[int] = []

    def factory() -> Any:
        built.append(1)
        if len(built) == 3:
            raise RuntimeError("no more licences")
        return op.load_suite(root).resolve_system()()

    out = tmp_path / "stopped"
    with pytest.raises(op.OloproofError, match="no more licences") as stopped:
        op.run(root, system=factory, workers=3, out=out, progress=False)
    assert (out / "manifest.json").is_file()
    assert stopped.value.__notes__ == [f"the run is in {out}; finish it with op.run(suite, out={str(out)!r}, "
                                       "resume=True)"]
    assert op.run(root, system=factory, workers=2, out=out, resume=True, progress=False).finished  # as it says


@pytest.mark.skipif(not hasattr(BaseException, "add_note"), reason="exception notes are Python 3.11+")
def test_a_stop_that_names_its_run_folder_gets_no_second_note(make_suite, tmp_path: Path) -> None:
    """The note naming a stopped run's folder is added only where the error names none. An
    executor shut down before its first batch stops the run with one line that already says where the run is and
    how to finish it; with the note added regardless, the folder and the resume were said twice."""
    root = make_suite(_scripted_cases(2))
    out = tmp_path / "refused"
    pool = ThreadPoolExecutor(1)
    pool.shutdown()
    with pytest.raises(op.OloproofError, match="was refused") as stopped:
        op.run(root, executor=pool, out=out, progress=False)
    assert (out / "manifest.json").is_file()
    assert str(out) in str(stopped.value) and "resume=True" in str(stopped.value)
    assert getattr(stopped.value, "__notes__", []) == []


@pytest.mark.skipif(not hasattr(BaseException, "add_note"), reason="exception notes are Python 3.11+")
def test_a_ctrl_c_note_offers_no_resume_the_run_would_refuse(make_suite, tmp_path: Path) -> None:
    """A Ctrl-C (a notebook's interrupt) in the run of a class typed into a cell said "finish it
    with op.run(suite, out=..., resume=True)", and that resume is refused (no code fingerprint). The note says the
    run cannot be resumed and what to do instead; a class a file defines is still offered the resume."""
    root = make_suite(_answers(4))
    namespace: dict[str, Any] = {"__name__": "f6_notebook_cell"}
    cell = ("class Agent:\n    version = 'v1'\n    def run(self, input):\n"
            "        return {'steps': [], 'answer': input['answer']}\n")
    exec(compile(cell, "<ipython-input-3-f6>", "exec"), namespace)  # noqa: S102 - a cell's class

    def ctrl_c(done: int, total: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    for name, system, resumable in (("cell", namespace["Agent"], False), ("file", _VersionTwo, True)):
        out = tmp_path / name
        with pytest.raises(KeyboardInterrupt) as stopped:
            op.run(root, system=system, out=out, progress=ctrl_c)
        (note,) = stopped.value.__notes__
        assert ("resume=True" in note) is resumable, note
        if not resumable:
            assert note.endswith("start a new run, or give the system a fingerprint() that changes with its code")
            with pytest.raises(op.RunDirError, match="defined in no file"):  # the refusal the note spares the user
                op.run(root, system=system, out=out, resume=True, progress=False)
        else:
            assert op.run(root, system=system, out=out, resume=True, progress=False).finished


def test_a_resumed_run_hands_no_record_to_the_sink(make_suite, tmp_path: Path) -> None:
    """``run_suite``: the sink "is not used on resume: it would miss the records already there"."""
    root = make_suite(_answers(3))
    out = tmp_path / "run"
    op.run(root, out=out, progress=False)
    lines = (out / "cases.jsonl").read_bytes().splitlines(keepends=True)
    (out / "cases.jsonl").write_bytes(b"".join(lines[:1]))  # two case records lost
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    seen: list[str] = []

    class Spy:
        def start(self, directory: Path) -> None:
            seen.append("start")

        def add(self, record: Any, state_ref: str | None, initial_ref: str | None = None) -> None:
            seen.append(record["case"]["id"])

    run_suite(op.load_suite(root), out=out, resume=True, sink=Spy())
    assert seen == []
    assert len((out / "cases.jsonl").read_bytes().splitlines()) == 3  # the resume itself ran the two cases


POISONED_SYSTEM = '''
class Poisoned:
    """Raises when its input says so; an instance that raised once fails every later case too."""

    version = "poisoned-1"

    def __init__(self):
        self.broken = False
        self.state = {}

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        if self.broken:
            raise RuntimeError("this instance is broken")
        if input.get("explode"):
            self.broken = True
            raise RuntimeError("boom")
        return {"answer": input["n"], "steps": []}
'''


def test_on_an_executor_a_case_after_a_failed_one_runs_on_a_fresh_instance(make_suite, tmp_path: Path) -> None:
    cases = [{"id": "c0", "input": {"n": 0, "explode": True}, "expected": {"answer": 0}},
             {"id": "c1", "input": {"n": 1}, "expected": {"answer": 1}},
             {"id": "c2", "input": {"n": 2}, "expected": {"answer": 2}}]
    root = make_suite(cases, system="sysmod:Poisoned", system_code=POISONED_SYSTEM,
                      evaluators=[{"type": "answer_matches"}])
    with ThreadPoolExecutor(max_workers=1) as pool:  # one batch of 8 on one instance
        run = op.run(root, executor=pool, out=tmp_path / "run", progress=False)
    statuses = dict(zip(run.cases["case_id"], run.cases["status"], strict=True))
    assert statuses == {"c0": "error", "c1": "completed", "c2": "completed"}


def test_a_ctrl_c_right_after_the_run_folder_is_locked_releases_it(make_suite, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Between locking the run folder and the run's own ``try``, the runner set up its settings (and,
    on a resume, read every record for the receipts): a Ctrl-C there kept the lock, and the resume in the same
    process was refused as "in use by another oloproof process" (its own pid)."""
    from oloproof_nb._run import runner

    folder = make_suite([{"id": f"c{i}", "input": {"answer": "ok"}, "expected": {"answer": "ok"}} for i in range(2)],
                        evaluators=[{"type": "answer_matches"}])
    out = tmp_path / "run"

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(runner.RunSettings, "of", interrupted)  # the run's settings, built after the folder is locked
        with pytest.raises(KeyboardInterrupt):
            op.run(folder, out=out, progress=False)
    run = op.run(folder, out=out, resume=True, progress=False)  # refused while the lock was kept
    assert run.finished and run.cases["case_id"].tolist() == ["c0", "c1"]


def test_out_through_a_loop_of_links_is_the_one_line_about_creating_the_run_directory(
        make_suite: Any, tmp_path: Path) -> None:
    """The check whether ``out=`` is a folder of the suite's runs (for ``follows``) resolves the path,
    and on Python before 3.13 a loop of symbolic links there raised RuntimeError ("the run stopped: RuntimeError:
    Symlink loop from …") before the run directory was made; it is the error creating the directory gives."""
    from oloproof_nb.errors import RunDirError

    suite = op.load_suite(make_suite(_scripted_cases(1)))
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    for out in (loop / "runs" / "x", loop / "x"):
        with pytest.raises(RunDirError, match=r"cannot create the run directory \(Too many levels of symbolic links"):
            op.run(suite, out=out, progress=False)


# -- resuming a run that is (nearly) done -------------------------------------------------------------------

#: The inputs :class:`_Counted` ran, in order: a hand count of what a resume runs again.
_COUNTED: list[Any] = []


class _Counted:
    """Answers its input and notes it in ``_COUNTED``."""

    version = "counted-1"

    def run(self, input: dict[str, Any]) -> dict[str, Any]:
        _COUNTED.append(input["answer"])
        return {"answer": input["answer"], "steps": []}


def test_resuming_a_finished_run_that_lacks_a_record_runs_that_case_only(make_suite, tmp_path: Path) -> None:
    """A finished run whose last case record is gone is not taken as done: the resume runs that one case (a count
    off by one would leave it out)."""
    root = make_suite(_answers(3))
    out = tmp_path / "run"
    op.run(root, system=_Counted, out=out, progress=False)
    journal = out / "cases.jsonl"
    journal.write_bytes(b"".join(journal.read_bytes().splitlines(keepends=True)[:2]))  # c2's record gone
    _COUNTED.clear()
    run = op.run(root, system=_Counted, out=out, resume=True, progress=False)
    assert _COUNTED == [2] and sorted(run.cases["case_id"]) == ["c0", "c1", "c2"]


def test_resuming_a_finished_run_twice_in_one_process_leaves_the_folder_free(make_suite, tmp_path: Path) -> None:
    """A resume of a finished run has nothing to do and returns at once: it releases the folder, so a second one in
    the same process (a notebook cell run again) is not refused as in use by its own pid."""
    from oloproof_nb._run.lock import RunLock

    root = make_suite(_answers(2))
    out = tmp_path / "run"
    op.run(root, out=out, progress=False)
    for _ in range(2):
        assert op.run(root, out=out, resume=True, progress=False).finished
    assert RunLock.holder(out) is None


def test_a_resume_refused_for_a_damaged_record_leaves_the_folder_free(make_suite, tmp_path: Path) -> None:
    """Reading the records of the run to resume fails on a damaged line (a finished run without replays.jsonl, where
    the store's own checks read no record): the folder is released, so asking again names the damage again, not
    this process as the folder's holder."""
    root = make_suite(_answers(2))
    out = tmp_path / "run"
    op.run(root, out=out, progress=False)
    assert not (out / "replays.jsonl").exists()
    journal = out / "cases.jsonl"
    journal.write_bytes(journal.read_bytes() + b"{not json\n")  # line 3, after the two records
    for _ in range(2):
        with pytest.raises(op.RunDirError, match=r"cases\.jsonl: line 3: a stored record is not valid JSON"):
            op.run(root, out=out, resume=True, progress=False)


def test_a_worker_with_another_code_fingerprint_names_the_fingerprints_not_the_versions(make_suite) -> None:
    """An executor's worker whose system has the run's version but another code fingerprint was refused as having
    "another code fingerprint than the run's ('scripted-1' vs 'scripted-1')": the two versions, which are equal.
    The message quotes the values that differ (here the fingerprints)."""
    from oloproof_nb._run.remote import _remote_batch

    folder = make_suite(_scripted_cases(1))
    suite = op.load_suite(folder)
    with pytest.raises(op.OloproofError, match=r"has another code fingerprint than the run's \('[0-9a-f]+' vs 'f+'\)"):
        _remote_batch(str(folder), dict(suite.digests), [], "run", "scripted-1", "f" * 64)
    with pytest.raises(op.OloproofError, match=r"has another version than the run's \('scripted-1' vs 'other'\)"):
        _remote_batch(str(folder), dict(suite.digests), [], "run", "other", "f" * 64)
