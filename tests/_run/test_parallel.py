"""Parallel and distributed runs: serial, threaded (``workers=N``) and Dask-executed runs give identical frames,
no two cases ever overlap on one sandbox, worker processes rebuild the suite from its folder (and refuse a
different one), errors cross process boundaries, and the timeout helper threads are reused and never leak.

No timing is asserted here: throughput is measured by ``benchmarks/parallel.py``.
"""

from __future__ import annotations

import json
import pickle
import re
import subprocess
import sys
import threading
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

import oloproof_nb as op
from oloproof_nb._config.suite import Suite
from oloproof_nb._run import timeouts as services
from oloproof_nb._run.timeouts import CaseTimeout, call_with_timeout
from oloproof_nb.errors import CaseFileError, ConfigError, LabelFileError, OloproofError

#: A Recorder-based refund desk whose sandbox detects concurrent use. ``reset`` takes a lock without
#: blocking (it raises ``Overlap`` when another episode holds it) and ``snapshot`` releases it, so an
#: episode (reset → run or replay → snapshot) that overlaps another on the same instance fails loudly;
#: ``act`` also checks that no reset happened under it. Overlaps are logged in ``OVERLAPS`` too, and
#: ``PEAK`` records the most episodes active at once across instances (proof that threads did overlap).
GUARDED = '''
import copy
import threading
import time

from oloproof_nb import RecordedAgent

OVERLAPS = []
ACTIVE = [0]
PEAK = [0]
_COUNT = threading.Lock()


class Overlap(RuntimeError):
    pass


class GuardedDesk(RecordedAgent):
    version = {version!r}

    def __init__(self):
        self._busy = threading.Lock()
        self._episode = None
        self.state = {{"orders": {{}}}}

    def _overlap(self, what):
        OVERLAPS.append((id(self), what))
        raise Overlap(what)

    def reset(self, state):
        if not self._busy.acquire(blocking=False):
            self._overlap("reset while another case holds this sandbox")
        with _COUNT:
            ACTIVE[0] += 1
            PEAK[0] = max(PEAK[0], ACTIVE[0])
        self._episode = object()
        self.state = state

    def snapshot(self):
        if not self._busy.locked() or self._episode is None:
            self._overlap("snapshot outside an episode")
        snap = copy.deepcopy(self.state)
        self._episode = None
        with _COUNT:
            ACTIVE[0] -= 1
        self._busy.release()
        return snap

    def _lookup(self, order_id):
        order = self.state["orders"].get(order_id)
        return {{"ok": True, "status": order["status"]}} if order else {{"ok": False, "error": "not_found"}}

    def _refund(self, order_id):
        self.state["orders"][order_id]["status"] = "refunded"
        return {{"ok": True}}

    def _escalate(self, order_id):
        self.state.setdefault("escalations", []).append(order_id)
        return {{"ok": True}}

    def act(self, input, rec):
        token = self._episode
        if token is None:
            self._overlap("run without reset")
        time.sleep(0.003)  # widen the window in which an overlapping case would be caught
        oid = input["order_id"]
        found = rec.tool("lookup_order", self._lookup, order_id=oid)
        if found.get("status") == "delivered":
            result = rec.tool("issue_refund", self._refund, order_id=oid)
            if isinstance(result, dict) and result.get("ok"):
                answer = "refunded"
            else:
                rec.tool("escalate_to_human", self._escalate, order_id=oid)
                answer = "escalated"
        elif found.get("status") == "lost":
            answer = "refunded"  # the defect: a refund claimed, none made
        else:
            answer = "refused"
        if self._episode is not token:
            self._overlap("reset during run")
        return answer
'''

STATUSES = ["delivered", "shipped", "delivered", "lost", "refunded"]
N_SOURCES = 20  # 20 sources + 20 derived = 40 cases
VOLATILE = ("started_at", "duration_s", "captured_at", "run_id")
FRAMES = ("cases", "steps", "snapshots", "changes", "verdicts", "comparisons", "replays", "pairs", "receipts")


def write_guarded_suite(root: Path, version: str | None = None) -> Path:
    root.mkdir(parents=True)
    (root / "guarded.py").write_text(GUARDED.format(version=version), encoding="utf-8")
    cases = []
    for i in range(N_SOURCES):
        oid = f"o{i:02d}"
        status = STATUSES[i % len(STATUSES)]
        cases.append({"id": oid, "input": {"order_id": oid, "message": f"refund {oid}"},
                      "initial_state": {"orders": {oid: {"status": status}, "ord-x": {"status": "delivered"}}},
                      "expected": {"answer": "refunded" if status == "delivered" else "refused",
                                   "state": {"orders": {oid: {"status": "refunded" if status == "delivered"
                                                              else status}}}}})
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (root / "labels").mkdir()
    (root / "labels" / "polite.jsonl").write_text(
        "".join(json.dumps({"case_id": f"{c['id']}~polite", "valid": True}) + "\n" for c in cases), encoding="utf-8")
    config = {
        "name": "guarded", "system": "guarded:GuardedDesk", "cases": "cases.jsonl", "case_timeout_s": 30,
        "evaluators": [
            {"type": "answer_matches"},
            {"type": "state_matches", "mode": "subset"},
            {"type": "state_unchanged", "criterion": "bystander_untouched", "paths": ["orders.ord-x"]},
            {"type": "fault_recovery", "tool": "issue_refund", "fault": "error",
             "escalate_tools": ["escalate_to_human"]},
            {"type": "metamorphic_relation", "relation": "same_state", "transform": "polite"},
        ],
        "metamorphic": {"transforms": [{"name": "polite", "field": "message", "template": "{value}, please",
                                        "validity_labels": "labels/polite.jsonl", "minimum_validity": 0.8}]},
    }
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (root / "release.yaml").write_text(yaml.safe_dump(
        {"allow_approximate_methods": True, "min_clusters": 10, "criteria": {"answer_matches": 0.5}}),
        encoding="utf-8")
    return root


def hand_counts() -> dict[str, int]:
    """Passes per criterion, counted by hand from STATUSES (each source and its derived copy alike)."""
    per_source = {"answer_matches": 0, "state_matches": 0, "bystander_untouched": 0,
                  "recovers_from_error_at_issue_refund": 0}
    for i in range(N_SOURCES):
        status = STATUSES[i % len(STATUSES)]
        per_source["answer_matches"] += status != "lost"  # a lost order gets a false "refunded"
        per_source["state_matches"] += 1  # the state is always right
        per_source["bystander_untouched"] += 1
        per_source["recovers_from_error_at_issue_refund"] += status == "delivered"  # it escalates
    counts = {k: 2 * v for k, v in per_source.items()}
    counts["same_state_under_polite"] = N_SOURCES  # the polite copy leaves the same state every time
    return counts


def guard_module(suite: op.Suite) -> Any:
    return sys.modules[suite.resolve_system().__module__]


def stable(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=[c for c in VOLATILE if c in frame.columns])


def assert_same_run(a: op.Run, b: op.Run) -> None:
    for name in FRAMES:
        pd.testing.assert_frame_equal(stable(getattr(a, name)), stable(getattr(b, name)), obj=f"run.{name}")
    pd.testing.assert_frame_equal(op.gate(a).table, op.gate(b).table, obj="gate.table")


def assert_counts(run: op.Run) -> None:
    assert set(run.cases["status"]) == {"completed"}, run.cases[["case_id", "status", "error"]]
    passed = run.verdicts[run.verdicts["verdict"] == "pass"].groupby("criterion").size().to_dict()
    assert passed == hand_counts()


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> tuple[op.Suite, op.Run]:
    """The guarded suite and its serial run (the reference every other run is compared with)."""
    suite = op.load_suite(write_guarded_suite(tmp_path_factory.mktemp("guarded") / "suite"))
    mod = guard_module(suite)
    mod.OVERLAPS.clear()
    serial = op.run(suite, out=suite.root / "runs" / "serial", progress=False)
    assert mod.OVERLAPS == []
    assert_counts(serial)
    return suite, serial


# -- the guard itself ------------------------------------------------------------------------------------


def test_the_guard_catches_two_cases_on_one_instance(guarded: tuple[op.Suite, op.Run]) -> None:
    """Without the runner's one-case-per-instance rule, the guarded sandbox fails: the check can fail."""
    suite, _ = guarded
    mod = guard_module(suite)
    mod.OVERLAPS.clear()
    desk = suite.resolve_system()()
    case = suite.cases[0]
    # a second case reaching the instance while the first holds it (deterministic: no thread timing involved)
    desk.reset(json.loads(json.dumps(case.initial_state)))
    with pytest.raises(RuntimeError) as err:
        desk.reset(json.loads(json.dumps(case.initial_state)))
    assert type(err.value).__name__ == "Overlap"
    desk.run(dict(case.input))
    desk.snapshot()
    assert mod.OVERLAPS
    mod.OVERLAPS.clear()


# -- threads -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [2, 4])
def test_threaded_run_equals_serial_and_never_overlaps(guarded: tuple[op.Suite, op.Run], workers: int) -> None:
    suite, serial = guarded
    mod = guard_module(suite)
    mod.OVERLAPS.clear()
    mod.PEAK[0] = 0
    threaded = op.run(suite, workers=workers, out=suite.root / "runs" / f"threads-{workers}", progress=False)
    assert mod.OVERLAPS == []
    assert mod.PEAK[0] >= 2  # cases really ran at the same time, on different instances
    assert list(threaded.cases["case_id"]) == [c.id for c in suite.cases]  # the suite's order, not completion order
    assert_counts(threaded)
    assert_same_run(serial, threaded)


def test_any_executor_in_process_equals_serial(guarded: tuple[op.Suite, op.Run]) -> None:
    """``executor=`` takes any concurrent.futures.Executor; a thread pool runs the remote path in-process."""
    suite, serial = guarded
    mod = guard_module(suite)
    mod.OVERLAPS.clear()
    with ThreadPoolExecutor(max_workers=3) as pool:
        run = op.run(suite, executor=pool, chunk_size=3, out=suite.root / "runs" / "pool", progress=False)
    assert mod.OVERLAPS == []
    assert_same_run(serial, run)
    # the replay records came back from the workers and were appended by the caller
    assert len(run.replay_records) == len(serial.replay_records) > 0


# -- Dask distributed, process workers ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def dask_client() -> Any:
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None,
                                       silence_logs=50)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def test_dask_process_workers_give_the_serial_frames(guarded: tuple[op.Suite, op.Run], dask_client: Any) -> None:
    suite, serial = guarded
    run = op.run(suite, executor=dask_client.get_executor(), chunk_size=4, out=suite.root / "runs" / "dask",
                 progress=False)
    assert_counts(run)  # an overlap on a worker would have made a case 'error'
    assert_same_run(serial, run)
    # the cases really ran in other processes
    pids = dask_client.run(lambda: __import__("os").getpid())
    assert len(set(pids.values())) == 2 and __import__("os").getpid() not in pids.values()


def test_dask_workers_share_the_replay_cache(tmp_path: Path, dask_client: Any) -> None:
    """A versioned system's replays are cached in the suite folder by the workers: a second run makes none."""
    suite = op.load_suite(write_guarded_suite(tmp_path / "suite", version="guarded-1"))
    first = op.run(suite, executor=dask_client.get_executor(), out=tmp_path / "first", progress=False)
    second = op.run(suite, executor=dask_client.get_executor(), out=tmp_path / "second", progress=False)
    assert len(first.replays) == hand_counts()["recovers_from_error_at_issue_refund"]
    assert not first.replays["cached"].any() and second.replays["cached"].all()
    assert len(list((suite.root / ".oloproof" / "replays").glob("*.json"))) == 2 * len(first.replays)
    pd.testing.assert_frame_equal(stable(first.replays).drop(columns="cached"),
                                  stable(second.replays).drop(columns="cached"))


# -- a worker process lost mid-batch ------------------------------------------------------------------------

#: A desk that notes each case it runs in ``effects.log`` and ends its process (``os._exit``) on a case whose input
#: says ``die``: every time (``always``), or only until ``died-<n>`` exists beside it (``once``).
DYING = """
import os
import pathlib

HERE = pathlib.Path(__file__).parent


class Desk:
    version = "dying-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        with (HERE / "effects.log").open("a", encoding="utf-8") as log:
            log.write(f"c{input['n']}\\n")
        marker = HERE / f"died-{input['n']}"
        if input.get("die") == "always" or (input.get("die") == "once" and not marker.exists()):
            marker.touch()
            os._exit(3)
        return {"steps": [], "answer": input["n"]}
"""


def dying_suite(make_suite: Any, die: str, at: int = 2, n: int = 8) -> Path:
    cases = [{"id": f"c{i}", "input": {"n": i, **({"die": die} if i == at else {})}, "expected": {"answer": i}}
             for i in range(n)]
    return make_suite(cases, system="sysmod:Desk", system_code=DYING, evaluators=[{"type": "answer_matches"}])


def test_a_process_pool_whose_worker_dies_stops_the_run_with_one_line_and_resume_finishes_it(
        make_suite: Any, tmp_path: Path) -> None:
    """os._exit in a case breaks a ProcessPoolExecutor: one line naming the lost batch's cases and how to finish
    (before: "internal error: BrokenProcessPool … a bug in oloproof_nb, not in your system"); the resume runs
    every case not recorded, and each case is in the run once (a hand count: 8 cases, ids c0…c7)."""
    from concurrent.futures import ProcessPoolExecutor

    root = dying_suite(make_suite, "once")
    out = tmp_path / "run"
    with ProcessPoolExecutor(1) as pool, pytest.raises(OloproofError) as err:
        op.run(root, executor=pool, chunk_size=2, out=out, progress=False)
    message = str(err.value)
    assert "\n" not in message and "BrokenProcessPool" in message and "a worker process of the executor died" in message
    # a broken pool fails every batch in flight: the one named may be a batch after the one that died
    assert re.search(r"the task running cases 'c\d' to 'c\d' \(2 case runs\) failed", message)
    assert "resume=True" in message and not (out / "internal-error.txt").exists()
    journal = out / "cases.jsonl"
    kept = [json.loads(line)["case"]["id"] for line in journal.read_text().splitlines()] if journal.exists() else []
    assert "c2" not in kept and len(kept) == len(set(kept))
    with ProcessPoolExecutor(1) as pool:
        run = op.run(root, executor=pool, chunk_size=2, out=out, resume=True, progress=False)
    assert sorted(run.cases["case_id"]) == [f"c{i}" for i in range(8)]
    assert list(run.cases["status"]) == ["completed"] * 8


def test_a_dask_worker_lost_for_good_stops_the_run_with_one_line(make_suite: Any, tmp_path: Path) -> None:
    """A case that ends its Dask worker every time: KilledWorker stops the run with one line naming the batch
    (before: an internal error, "a bug in oloproof_nb, not in your system"). ``allowed-failures: 0``: the
    scheduler gives up at the first lost worker, as the README suggests."""
    distributed = pytest.importorskip("distributed")
    import dask

    root = dying_suite(make_suite, "always", n=4)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=50)
    client = distributed.Client(cluster)
    try:
        with pytest.raises(OloproofError) as err:
            op.run(root, executor=client.get_executor(), chunk_size=4, out=tmp_path / "run", progress=False)
    finally:
        client.close()
        cluster.close()
    message = str(err.value)
    assert "\n" not in message and "KilledWorker" in message and "'c0' to 'c3' (4 case runs)" in message
    assert not (tmp_path / "run" / "internal-error.txt").exists()


def test_dask_runs_a_batch_whose_worker_died_again(make_suite: Any, tmp_path: Path, dask_client: Any) -> None:
    """What the README says Dask does with a batch whose worker died once (allowed-failures 3, the default): it
    runs the batch again on another worker, so the cases before the crash run twice (effects.log, a hand count),
    each is recorded once, and the crash is recorded nowhere. A limitation pinned, not a fix: the README's
    advice (allowed-failures 0, or isolation: process) is tested above and in test_isolation."""
    root = dying_suite(make_suite, "once", at=2, n=4)
    run = op.run(root, executor=dask_client.get_executor(), chunk_size=4, out=tmp_path / "run", progress=False)
    ran = (root / "effects.log").read_text(encoding="utf-8").split()
    assert sorted(run.cases["case_id"]) == ["c0", "c1", "c2", "c3"] and set(run.cases["status"]) == {"completed"}
    assert sorted(ran) == ["c0", "c0", "c1", "c1", "c2", "c2", "c3"]


def test_a_resume_runs_again_the_batch_a_dask_worker_lost(make_suite: Any, tmp_path: Path, dask_client: Any) -> None:
    """The README's advice after a lost worker: ``resume=True`` on a running executor. Held as a notebook holds the
    last error, the stopped run's futures kept its lost batch on the scheduler, and Dask gives a task submitted with
    the same arguments the same key: the resume got that batch's ``KilledWorker`` back without running a case.
    ``allowed-failures`` 0 on the module's scheduler: the first loss stops the run."""
    root = dying_suite(make_suite, "once", at=2, n=4)
    out = tmp_path / "run"

    def allowed_failures(n: int, dask_scheduler: Any) -> int:
        before, dask_scheduler.allowed_failures = dask_scheduler.allowed_failures, n
        return int(before)

    default = dask_client.run_on_scheduler(allowed_failures, 0)
    try:
        with pytest.raises(OloproofError) as stopped:
            op.run(root, executor=dask_client.get_executor(), chunk_size=4, out=out, progress=False)
        assert "KilledWorker" in str(stopped.value) and "'c0' to 'c3' (4 case runs)" in str(stopped.value)
        run = op.run(root, executor=dask_client.get_executor(), chunk_size=4, out=out, resume=True, progress=False)
    finally:
        dask_client.run_on_scheduler(allowed_failures, default)
    assert sorted(run.cases["case_id"]) == ["c0", "c1", "c2", "c3"] and set(run.cases["status"]) == {"completed"}
    # c0 to c2 ran in the lost batch and again in the resume; c2 ended its process once (a hand count)
    assert sorted((root / "effects.log").read_text(encoding="utf-8").split()) == ["c0", "c0", "c1", "c1", "c2", "c2",
                                                                                 "c3"]


#: A desk whose case c1 ends its process the first time, once the run's journal (``RUN`` beside it) holds c0:
#: the worker that ran c0 dies after c0's result reached the run.
DIES_AFTER_C0_IS_RECORDED = DYING.replace(
    "        marker = HERE", """        if input["n"] == 1 and not (HERE / "died-1").exists():
            import time
            journal = pathlib.Path(os.environ.get("RUN", "")) / "cases.jsonl"
            for _ in range(200):  # up to 10 s: the run records c0 before it waits for c1
                if journal.is_file() and '"c0"' in journal.read_text(encoding="utf-8"):
                    break
                time.sleep(0.05)
        marker = HERE""")


def test_a_dask_worker_that_dies_does_not_run_a_recorded_batch_again(make_suite: Any, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """One worker runs c0, then dies in c1. Dask runs a task again when a worker that held its result dies while a
    client still holds its future: the run held the future of the batch it had just recorded while it waited for
    the next, so c0 ran a second time (effects.log read c0, c1, c0, c2, c1) for a result nobody read. A hand count:
    c1 runs twice (it died once), every other case once, and each is recorded once."""
    distributed = pytest.importorskip("distributed")
    cases = [{"id": f"c{i}", "input": {"n": i, **({"die": "once"} if i == 1 else {})}, "expected": {"answer": i}}
             for i in range(3)]
    root = make_suite(cases, system="sysmod:Desk", system_code=DIES_AFTER_C0_IS_RECORDED,
                      evaluators=[{"type": "answer_matches"}])
    out = tmp_path / "run"
    monkeypatch.setenv("RUN", str(out))  # before the cluster starts: its worker processes inherit it
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=50)
    client = distributed.Client(cluster)
    try:
        run = op.run(root, executor=client.get_executor(), chunk_size=1, out=out, progress=False)
    finally:
        client.close()
        cluster.close()
    assert sorted(run.cases["case_id"]) == ["c0", "c1", "c2"] and set(run.cases["status"]) == {"completed"}
    assert sorted((root / "effects.log").read_text(encoding="utf-8").split()) == ["c0", "c1", "c1", "c2"]


def test_an_executor_shut_down_is_one_line(make_suite: Any, tmp_path: Path) -> None:
    """An executor the user shut down (before the run, or during it) refuses the next batch: one line, not an
    internal error blamed on oloproof_nb."""
    root = dying_suite(make_suite, "never", n=3)
    pool = ThreadPoolExecutor(max_workers=1)
    pool.shutdown()
    with pytest.raises(OloproofError) as err:
        op.run(root, executor=pool, out=tmp_path / "run", progress=False)
    message = str(err.value)
    assert "\n" not in message and "cannot schedule new futures after shutdown" in message
    assert "was refused" in message and "'c0' to 'c2' (3 case runs)" in message
    assert not (tmp_path / "run" / "internal-error.txt").exists()


def test_a_lost_batch_of_a_run_with_epochs_names_its_case_runs_epochs(make_suite: Any, tmp_path: Path) -> None:
    """With epochs, a batch holds one case's runs: it was named "cases 'c0' to 'c0' (2 case runs)"."""
    root = dying_suite(make_suite, "never", n=3)
    pool = ThreadPoolExecutor(max_workers=1)
    pool.shutdown()
    with pytest.raises(OloproofError) as err:
        op.run(root, executor=pool, chunk_size=3, epochs=2, out=tmp_path / "run", progress=False)
    message = str(err.value)
    assert "\n" not in message and "was refused" in message
    assert "the task running cases 'c0' (epoch 1) to 'c1' (epoch 1) (3 case runs) was refused" in message


def test_a_worker_that_cannot_import_the_system_is_named(make_suite: Any, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's process imports the system; a worker lacks a package it imports. The one line named the package
    and "the Python that runs oloproof" but no worker, though the user's own Python imports it."""
    distributed = pytest.importorskip("distributed")
    code = "import os\nif not os.environ.get('HAS_PACKAGE'):\n    import package_missing_on_the_worker\n" + DYING
    root = make_suite([{"id": "c0", "input": {"n": 0}, "expected": {"answer": 0}}], system="sysmod:Desk",
                      system_code=code, evaluators=[{"type": "answer_matches"}])
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=50)
    client = distributed.Client(cluster)
    monkeypatch.setenv("HAS_PACKAGE", "1")  # after the worker started: only the run's process has it
    try:
        with pytest.raises(ConfigError) as err:
            op.run(root, executor=client.get_executor(), out=tmp_path / "run", progress=False)
    finally:
        client.close()
        cluster.close()
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{root / 'oloproof.yaml'}: system: on worker ")
    assert "package_missing_on_the_worker" in message


# -- workers rebuild the suite from its folder ---------------------------------------------------------------


def test_a_worker_refuses_a_suite_folder_that_differs(tmp_path: Path) -> None:
    root = write_guarded_suite(tmp_path / "suite")
    suite = op.load_suite(root)
    with (root / "oloproof.yaml").open("a", encoding="utf-8") as handle:  # the folder changes after loading
        handle.write("# edited after the suite was loaded\n")
    with ThreadPoolExecutor(max_workers=2) as pool, pytest.raises(OloproofError) as err:
        op.run(suite, executor=pool, out=tmp_path / "out", progress=False)
    message = str(err.value)
    assert "oloproof.yaml differ from the run's" in message and "load it again" in message and "\n" not in message


def test_executor_workers_judge_by_the_checks_the_run_loaded(make_suite, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker loads the suite again: checks.py edited after load_suite is refused by name (it said "every worker
    needs the same suite folder", which it had), and a suite loaded without importing its code runs (its workers'
    code digests were compared with none and refused every time)."""
    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}} for i in range(4)]
    root = make_suite(cases, evaluators=[{"type": "python", "check": "checks:done"}])
    (root / "checks.py").write_text("def done(case, initial_state, final_state, trajectory):\n    return True\n",
                                    encoding="utf-8")
    suite = op.load_suite(root)
    (root / "checks.py").write_text("def done(case, initial_state, final_state, trajectory):\n    return False\n",
                                    encoding="utf-8")
    with ThreadPoolExecutor(max_workers=2) as pool, pytest.raises(OloproofError, match=r"checks\.py changed since "
                                                                                       r"this suite was loaded"):
        op.run(suite, executor=pool, out=tmp_path / "edited", progress=False)  # refused before it writes
    assert not (tmp_path / "edited").exists()
    # an edit the run's own check does not see (made once it has passed it): the workers refuse it as before
    with monkeypatch.context() as patch, ThreadPoolExecutor(max_workers=2) as pool, \
            pytest.raises(OloproofError) as err:
        patch.setattr(Suite, "_refuse_edited_code", lambda self: None)
        op.run(suite, executor=pool, out=tmp_path / "edited-later", progress=False)
    assert "the code of checks:done differ from the run's" in str(err.value)
    lazy = op.load_suite(root, import_system_now=False)
    with ThreadPoolExecutor(max_workers=2) as pool:
        run = op.run(lazy, executor=pool, out=tmp_path / "lazy", progress=False)
    assert list(run.verdicts["verdict"]) == ["fail"] * 4 and "code:checks:done" in run.manifest.digests


def test_a_case_file_changed_after_loading_is_refused_before_any_case_runs(tmp_path: Path) -> None:
    """Cases are streamed from the file during the run: a file edited since load_suite is never half-read."""
    root = write_guarded_suite(tmp_path / "suite")
    suite = op.load_suite(root)
    with (root / "cases.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": "late", "input": {"order_id": "late", "message": "m"}}) + "\n")
    with pytest.raises(OloproofError, match=r"cases\.jsonl: changed since the suite was loaded"):
        op.run(suite, out=tmp_path / "out", progress=False)
    assert op.load_run(tmp_path / "out").records == []


def _versioned_desk(make_suite: Any, tmp_path: Path) -> tuple[Path, Path]:
    """A suite of 4 cases whose system reads its version, when built, from a file outside the suite (``v1``), and
    answers it; and that file. Each instance built and released is logged beside it."""
    version = tmp_path / "version.txt"
    version.write_text("v1", encoding="utf-8")
    log = tmp_path / "instances.log"
    code = ("from pathlib import Path\n\nclass Desk:\n    def __init__(self):\n"
            f"        self.version = Path({str(version)!r}).read_text(encoding='utf-8')\n"
            f"        with open({str(log)!r}, 'a') as f: f.write('built\\n')\n\n"
            "    def __del__(self):\n"
            f"        with open({str(log)!r}, 'a') as f: f.write('released\\n')\n\n"
            "    def run(self, input):\n"
            "        return {'steps': [], 'answer': self.version, 'status': 'completed'}\n")
    cases = [{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": "v2"}} for i in range(4)]
    return make_suite(cases, system="sysmod:Desk", system_code=code, evaluators=[{"type": "answer_matches"}]), version


def test_an_instance_pooled_by_an_earlier_run_is_checked_against_this_runs_system(make_suite: Any,
                                                                                  tmp_path: Path) -> None:
    """A worker process keeps the instances it built for its next batch, of this run or the next run of the same
    suite files. Checked against the run's version only when built, an instance pooled by a run of version v1 ran
    the batches of the next run, whose system (its version read from a file outside the suite, now v2) the run
    recorded as v2: the run said v2 and held v1's answers. It is replaced by one built and checked against v2."""
    from oloproof_nb._run.remote import _release_here, _remote_batch

    root, version = _versioned_desk(make_suite, tmp_path)
    first = op.run(root, out=tmp_path / "first", progress=False)
    fingerprint = first.manifest.code_fingerprint
    assert first.manifest.system_version == "v1" and fingerprint
    suite = op.load_suite(root)
    batch = list(enumerate(suite.kept_cases or ()))
    try:
        records, _ = _remote_batch(str(root), dict(suite.digests), batch, "r1", "v1", fingerprint)
        assert [r["trajectory"]["answer"] for r in records] == ["v1"] * 4
        version.write_text("v2", encoding="utf-8")
        records, _ = _remote_batch(str(root), dict(suite.digests), batch, "r2", "v2", fingerprint)
        assert [r["trajectory"]["answer"] for r in records] == ["v2"] * 4  # was v1's: the instance pooled by "r1"
    finally:
        _release_here(str(root), None)


def test_an_instance_a_worker_refuses_is_released(make_suite: Any, tmp_path: Path) -> None:
    """An instance built on a worker and refused (another version than the run's) was left to the
    exception's traceback, which holds it (and what it holds open) as long as the error is kept. It is released
    before the error is raised (the log's counts)."""
    from oloproof_nb._run.remote import _remote_batch

    root, _ = _versioned_desk(make_suite, tmp_path)
    suite = op.load_suite(root)
    with pytest.raises(OloproofError, match=r"has another version than the run's \('v1' vs 'v9'\)") as info:
        _remote_batch(str(root), dict(suite.digests), [], "r", "v9", "f" * 64)
    assert info.value is not None  # the error, and its traceback, still held here
    lines = (tmp_path / "instances.log").read_text(encoding="utf-8").split()
    assert (lines.count("built"), lines.count("released")) == (1, 1)


def test_a_thread_executors_instances_are_released_when_the_run_ends(make_suite: Any, tmp_path: Path) -> None:
    """A ``ThreadPoolExecutor``'s workers are this process: the instances they pooled (a database file, a
    connection) were kept after ``op.run`` returned, until the process ended. Released with the run, as a serial
    run's are (the log's counts); a second run builds its own."""
    from oloproof_nb._run import remote

    root, _ = _versioned_desk(make_suite, tmp_path)
    log = tmp_path / "instances.log"
    for n in (1, 2):
        with ThreadPoolExecutor(max_workers=2) as pool:
            run = op.run(root, executor=pool, chunk_size=1, out=tmp_path / f"run{n}", progress=False)
        assert list(run.cases["answer"]) == ["v1"] * 4
        assert not [k for k in remote._REMOTE_SUITES if k[0] == str(root)]
        lines = log.read_text(encoding="utf-8").split()
        assert lines.count("built") == lines.count("released") >= 2 * n  # the run's own, and at least one a worker


def test_workers_reload_a_suite_whose_files_changed(tmp_path: Path) -> None:
    """Worker processes live long; a changed case file is loaded again, never served from a stale copy."""
    root = write_guarded_suite(tmp_path / "suite")
    with ThreadPoolExecutor(max_workers=2) as pool:
        before = op.run(op.load_suite(root), executor=pool, out=tmp_path / "before", progress=False)
        lines = (root / "cases.jsonl").read_text(encoding="utf-8").splitlines()
        first = json.loads(lines[0])
        first["expected"]["answer"] = "no such answer"
        (root / "cases.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
        after = op.run(op.load_suite(root), executor=pool, out=tmp_path / "after", progress=False)
    answer = {r.case_id: r.verdict for r in after.verdicts.itertuples() if r.criterion == "answer_matches"}
    was = {r.case_id: r.verdict for r in before.verdicts.itertuples() if r.criterion == "answer_matches"}
    assert was["o00"] == "pass" and answer["o00"] == "fail"


@pytest.mark.parametrize("error", [
    ConfigError("/suite/oloproof.yaml", "system", "cannot import 'guarded'"),
    ConfigError(None, None, "plain"),
    CaseFileError("/suite/cases.jsonl", 3, "duplicate case id 'a'"),
    LabelFileError("/suite/labels/p.jsonl", None, "holds no labels"),
])
def test_errors_raised_on_a_worker_cross_the_process_boundary(error: OloproofError) -> None:
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and str(again) == str(error)
    assert vars(again) == vars(error)


# -- the timeout helper threads ------------------------------------------------------------------------------


def test_calls_from_one_thread_reuse_one_helper_thread() -> None:
    idents = {call_with_timeout(threading.get_ident, 10) for _ in range(50)}
    assert len(idents) == 1 and threading.get_ident() not in idents


def test_a_timed_out_helper_is_replaced_and_its_result_dropped() -> None:
    release = threading.Event()
    first = call_with_timeout(threading.get_ident, 10)
    with pytest.raises(CaseTimeout):
        call_with_timeout(lambda: release.wait(30) and "late", 0.05)
    after = call_with_timeout(threading.get_ident, 10)
    assert after != first  # the stuck helper is not reused
    assert call_with_timeout(lambda: "fresh", 10) == "fresh"
    release.set()


def test_exceptions_propagate_from_the_helper() -> None:
    with pytest.raises(ZeroDivisionError):
        call_with_timeout(lambda: 1 / 0, 10)
    assert call_with_timeout(lambda: 2, 10) == 2  # the helper survives an exception


def test_threads_each_get_their_own_helper() -> None:
    """Three threads call at once (a barrier holds each until all three are in): three helpers, none shared.
    Before, 30 calls on a pool of 3 accepted 1 to 3 helpers, so one helper shared by every thread passed."""
    together = threading.Barrier(3)

    def call(_: int) -> tuple[int, int]:
        together.wait(10)
        return threading.get_ident(), call_with_timeout(threading.get_ident, 10)

    with ThreadPoolExecutor(max_workers=3) as pool:
        seen = dict(pool.map(call, range(3)))
    assert len(seen) == 3 and len(set(seen.values())) == 3 and not set(seen) & set(seen.values())


def test_idle_helpers_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(services, "HELPER_IDLE_S", 0.05)
    monkeypatch.setattr(services, "_LOCAL", threading.local())
    helper = call_with_timeout(threading.current_thread, 10)
    assert helper.name == "oloproof-call" and helper.daemon
    helper.join(timeout=20)  # generous: only waits for the helper to notice it is idle
    assert not helper.is_alive()
    assert call_with_timeout(threading.current_thread, 10) is not helper  # a new helper starts when needed


def test_a_stuck_call_never_keeps_the_process_alive() -> None:
    code = ("import time\nfrom oloproof_nb._run.timeouts import CaseTimeout, call_with_timeout\n"
            "try:\n    call_with_timeout(lambda: time.sleep(3600), 0.1)\nexcept CaseTimeout:\n    print('timed out')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "timed out"


def test_no_more_instances_than_case_runs(make_suite: Any, tmp_path: Path) -> None:
    """``--workers 10000`` on 48 cases built 10,000 system instances (or process workers) before the first case;
    the workers are now at most the case runs."""
    built: list[int] = []

    class Echo:
        def __init__(self) -> None:
            built.append(1)

        def run(self, input: dict[str, Any]) -> dict[str, Any]:
            return {"steps": [], "answer": "ok", "status": "completed"}

    cases = [{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(3)]
    suite = op.load_suite(make_suite(cases, evaluators=[{"type": "answer_matches"}]))
    run = op.run(suite, system=Echo, workers=50, epochs=2, out=tmp_path / "run", progress=False)
    assert len(run.cases) == 6 and len(built) == 6  # 6 case runs: 6 workers at most


class _LosingExecutor(Executor):
    """An executor that loses every batch: ``cancelled`` ends each task cancelled before it started (an executor
    shut down with ``cancel_futures``, a Dask client closed), ``broken`` refuses it with ``BrokenProcessPool`` (a
    process pool whose worker died since the last batch was sent)."""

    def __init__(self, how: str) -> None:
        self.how = how

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        if self.how == "broken":
            raise BrokenProcessPool("A child process terminated abruptly, the process pool is not usable anymore")
        future: Future[Any] = Future()
        future.cancel()
        future.set_running_or_notify_cancel()  # as an executor does with a task cancelled before it started
        return future


@pytest.mark.parametrize("how", ["cancelled", "broken"])
def test_a_batch_the_executor_cancelled_or_broke_is_one_line(make_suite: Any, tmp_path: Path, how: str) -> None:
    """A batch cancelled by the executor, or refused by a broken process pool, stops the run with the one line of a
    lost batch ('failed', the worker that died or the executor shut down, how to resume), never an internal error
    and never 'was refused' (that is an executor shut down by its user: ``RuntimeError``, of which
    ``BrokenExecutor`` is a subclass). Without ``CancelledError`` among the losses, or with the
    broken pool taken for a refusal, every other test passes."""
    root = dying_suite(make_suite, "never", n=3)
    with pytest.raises(OloproofError) as err:
        op.run(root, executor=_LosingExecutor(how), out=tmp_path / "run", progress=False)
    message = str(err.value)
    kind = "CancelledError" if how == "cancelled" else "BrokenProcessPool"
    assert "\n" not in message and message.startswith("executor=: the task running cases 'c0' to 'c2' (3 case runs) "
                                                      f"failed ({kind}")
    assert "a worker process of the executor died" in message and "resume=True" in message
    assert not (tmp_path / "run" / "internal-error.txt").exists()


#: A desk whose case ``c0`` waits for ``go`` beside it (at most a minute).
WAITING = """
import pathlib
import time

HERE = pathlib.Path(__file__).parent


class Desk:
    version = "waiting-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        if input["n"] == 0:
            deadline = time.monotonic() + 60
            while not (HERE / "go").exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        return {"steps": [], "answer": input["n"]}
"""


def test_an_executor_shut_down_with_its_queued_batches_cancelled_during_the_run_is_one_line(
        make_suite: Any, tmp_path: Path) -> None:
    """``shutdown(cancel_futures=True)`` while a batch waits in the executor's queue cancels it
    with ``Future.cancel()``, which wakes no ``concurrent.futures.wait`` (only an executor's own
    ``set_running_or_notify_cancel`` does): the run waited for that batch for ever. It is now the one line of a
    lost batch, naming it and how to resume. ``c0`` holds the only worker until the batch of ``c1`` is cancelled."""
    cases = [{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": i}} for i in range(2)]
    root = make_suite(cases, system="sysmod:Desk", system_code=WAITING, evaluators=[{"type": "answer_matches"}])
    class Noting(ThreadPoolExecutor):
        """One worker; ``queued`` is set once the second batch is handed to it (it waits behind ``c0``)."""

        def __init__(self) -> None:
            super().__init__(max_workers=1)
            self.submitted = 0
            self.queued = threading.Event()

        def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
            future = super().submit(fn, *args, **kwargs)
            self.submitted += 1
            if self.submitted == 2:
                self.queued.set()
            return future

    pool = Noting()
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            op.run(root, executor=pool, chunk_size=1, out=tmp_path / "run", progress=False)
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            outcome.append(exc)

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    assert pool.queued.wait(60) and runner.is_alive()  # c1's batch is in the queue, behind c0 (which waits)
    pool.shutdown(wait=False, cancel_futures=True)  # c1's batch waits in the queue: cancelled
    (root / "go").touch()
    runner.join(timeout=60)  # a guard against the old hang, not a measure: the run stops at once
    assert not runner.is_alive(), "the run still waits for the cancelled batch"
    (error,) = outcome
    assert isinstance(error, OloproofError), repr(error)
    message = str(error)
    assert "\n" not in message and message.startswith("executor=: the task running case 'c1' failed (CancelledError")
    assert "resume=True" in message
    journal = tmp_path / "run" / "cases.jsonl"  # c0's record is kept if it came in before the loss was seen
    assert "c1" not in [json.loads(line)["case"]["id"] for line in (journal.read_text().splitlines()
                                                                     if journal.exists() else [])]


def test_a_stale_pooled_instance_is_released_before_its_replacement_is_built(make_suite: Any,
                                                                              tmp_path: Path) -> None:
    """An instance pooled by a run of v1, met by a batch of a run of v2, is released and then one is built and
    checked (what it holds open, a database file or a lock, is let go before its replacement takes it). Without
    the release it lived on, beside its replacement, until the batch ended."""
    from oloproof_nb._run.remote import _release_here, _remote_batch

    root, version = _versioned_desk(make_suite, tmp_path)
    log = tmp_path / "instances.log"
    fingerprint = op.run(root, out=tmp_path / "first", progress=False).manifest.code_fingerprint
    suite = op.load_suite(root)
    batch = list(enumerate(suite.kept_cases or ()))
    try:
        _remote_batch(str(root), dict(suite.digests), batch, "r1", "v1", fingerprint)
        log.write_text("", encoding="utf-8")
        version.write_text("v2", encoding="utf-8")
        records, _ = _remote_batch(str(root), dict(suite.digests), batch, "r2", "v2", fingerprint)
        assert [r["trajectory"]["answer"] for r in records] == ["v2"] * 4
        assert log.read_text(encoding="utf-8").split() == ["released", "built"]
    finally:
        _release_here(str(root), None)
