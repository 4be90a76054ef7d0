"""The executor's batches (which kinds of case share one) and a worker process's per-suite records.

An executor's batch holds the keys of all its cases (``shared_files``). A case that observes an artifact holds
``OBSERVES`` and a case that promises none ``UNOBSERVED``, which keep apart; a batch of both held both,
and ran beside no other batch: with the default ``chunk_size`` (8) a suite of 64 cases, 1 in 4 promising a report,
ran on a ``ThreadPoolExecutor(4)`` one batch at a time (peak 1 case at once, 4.8 s; before the two markers existed,
peak 4, 1.3 s). Batches now end where the kind changes. And a worker process keeps one record per suite folder
(``_WorkerSuite``): a second suite's batches neither drop nor share the first's, and a new version of a suite's
files drops the old one's instances, now through ``release`` (the helper thread, under the timeout) as at a run's
end: they were dropped on the batch's thread under the workers' lock.
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

import oloproof_nb as op
from oloproof_nb._core.case import Case, case_from_mapping
from oloproof_nb._run import remote
from oloproof_nb._run.remote import _batched, _release_here, _remote_batch

#: A case that promises nothing marks its start, then waits (at most 10 s) for its partner's: ``together`` if the
#: partner started meanwhile (it ran beside it), else ``alone``. An observer writes its report.
DESK = '''
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


class Desk:
    version = "desk-m54"

    def reset(self, state):
        (HERE / "out").mkdir(exist_ok=True)
        (HERE / "marks").mkdir(exist_ok=True)

    def snapshot(self):
        return {}

    def run(self, input):
        if "report" in input:
            (HERE / "out" / input["report"]).write_text("r\\n")
            return {"steps": [], "answer": "together", "status": "completed"}
        (HERE / "marks" / input["me"]).write_text("")
        end = time.monotonic() + 10.0
        while not (HERE / "marks" / input["partner"]).exists() and time.monotonic() < end:
            time.sleep(0.01)
        answer = "together" if (HERE / "marks" / input["partner"]).exists() else "alone"
        return {"steps": [], "answer": answer, "status": "completed"}
'''


def test_batches_end_where_a_case_that_observes_follows_one_that_promises_nothing_or_back() -> None:
    kinds = "OUUUOUUUNN"  # O observes, U promises nothing, N neither (a suite without an outcome check)
    items = [(i, case_from_mapping({"id": f"{k}{i}", "input": {}})) for i, k in enumerate(kinds)]

    def kind(item: tuple[int, Case]) -> str:
        return item[1].id[0]

    # by hand: at most 2 a batch, a new one where the letter changes
    assert [[c.id for _, c in b] for b in _batched(items, 2, kind)] == [
        ["O0"], ["U1", "U2"], ["U3"], ["O4"], ["U5", "U6"], ["U7"], ["N8", "N9"]]
    assert [len(b) for b in _batched(items, 4)] == [4, 4, 2]  # no kind: batches of the size, as before


def test_batches_of_cases_that_promise_nothing_run_side_by_side_on_an_executor(tmp_path: Path) -> None:
    root = tmp_path / "desk"
    root.mkdir()
    (root / "desk.py").write_text(DESK, encoding="utf-8")
    cases: list[dict[str, Any]] = []
    # chunk_size 3 gave the batches [o0 u1 u2] [o3 u4 u5], each holding both markers: they ran one after the other
    for n, (me, partner) in enumerate([("u1", "u4"), ("u2", "u5"), ("u4", "u1"), ("u5", "u2")]):
        if n % 2 == 0:
            cases.append({"id": f"o{n}", "input": {"report": f"o{n}.txt"}, "expected": {"answer": "together"},
                          "outcome": {"artifact_id": f"o{n}", "locator": f"out/o{n}.txt"}})
        cases.append({"id": me, "input": {"me": me, "partner": partner}, "expected": {"answer": "together"}})
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    config = {"name": "m54", "system": "desk:Desk", "cases": "cases.jsonl",
              "evaluators": [{"type": "answer_matches"}, {"type": "outcome_contract"}]}
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    with ThreadPoolExecutor(max_workers=2) as pool:
        run = op.run(op.load_suite(root), executor=pool, chunk_size=3, out=tmp_path / "run", progress=False)
    answers = dict(zip(run.cases["case_id"], run.cases["answer"], strict=True))
    # [u1 u2] and [u4 u5] ran at once, once no observer ran: each case met its partner
    assert answers == {"o0": "together", "u1": "together", "u2": "together", "o2": "together",
                       "u4": "together", "u5": "together"}
    assert run.receipts["status"].tolist() == ["verified", "verified"]


SYSTEM = ("import threading\n\nclass Desk:\n    version = {version!r}\n\n    def __init__(self):\n"
          "        with open({log!r}, 'a') as f: f.write('built\\n')\n\n"
          "    def __del__(self):\n"
          "        with open({log!r}, 'a') as f: f.write('released:' + threading.current_thread().name + '\\n')\n\n"
          "    def run(self, input):\n"
          "        return {{'steps': [], 'answer': self.version, 'status': 'completed'}}\n")


def _logged_suite(make_suite: Any, tmp_path: Path, name: str) -> tuple[Path, Path, str]:
    """A suite of 2 cases whose system (version ``name``) logs each instance built and released; and its log and
    the code fingerprint a run of it records."""
    log = tmp_path / f"{name}.log"
    root = make_suite([{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": name}} for i in range(2)],
                      system="sysmod:Desk", system_code=SYSTEM.format(version=name, log=str(log)),
                      evaluators=[{"type": "answer_matches"}], folder=name)
    fingerprint = op.run(root, out=tmp_path / f"{name}-run", progress=False).manifest.code_fingerprint
    assert fingerprint
    log.write_text("", encoding="utf-8")  # the serial run's own instance: not counted below
    return root, log, fingerprint


def _counts(log: Path) -> tuple[int, int]:
    lines = log.read_text(encoding="utf-8").split()
    return lines.count("built"), sum(line.startswith("released:") for line in lines)


def test_a_worker_keeps_one_record_per_suite_folder(make_suite: Any, tmp_path: Path) -> None:
    a, a_log, a_print = _logged_suite(make_suite, tmp_path, "va")
    b, b_log, b_print = _logged_suite(make_suite, tmp_path, "vb")
    suite_a, suite_b = op.load_suite(a), op.load_suite(b)
    try:
        for _ in range(2):  # a, b, a, b: each suite's second batch runs on the instance its first pooled
            for root, suite, version, fingerprint in ((a, suite_a, "va", a_print), (b, suite_b, "vb", b_print)):
                records, _ = _remote_batch(str(root), dict(suite.digests), list(enumerate(suite.kept_cases or ())),
                                           "r", version, fingerprint)
                assert [r["trajectory"]["answer"] for r in records] == [version] * 2
        assert _counts(a_log) == _counts(b_log) == (1, 0)  # by hand: one instance each, still pooled
        held = [k for k in remote._REMOTE_SUITES if k[0] in (str(a), str(b))]
        assert len(held) == 2 and remote._REMOTE_SUITES[held[0]].pool is not remote._REMOTE_SUITES[held[1]].pool
        # a new version of a's files: the worker drops the old one's record, and with it its instance
        with (a / "cases.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"id": "c2", "input": {"n": 2}, "expected": {"answer": "va"}}) + "\n")
        suite_a = op.load_suite(a)
        _remote_batch(str(a), dict(suite_a.digests), list(enumerate(suite_a.kept_cases or ())), "r2", "va", a_print)
        assert len([k for k in remote._REMOTE_SUITES if k[0] == str(a)]) == 1
        assert _counts(a_log) == (2, 1) and _counts(b_log) == (1, 0)
        # released as at a run's end, on the helper thread (it was dropped on this one, under the workers' lock)
        assert f"released:{threading.current_thread().name}" not in a_log.read_text(encoding="utf-8").split()
    finally:
        _release_here(str(a), None)
        _release_here(str(b), None)
    assert _counts(a_log) == (2, 2) and _counts(b_log) == (1, 1)
    assert not [k for k in remote._REMOTE_SUITES if k[0] in (str(a), str(b))]



def test_a_thread_executors_instances_are_released_on_the_helper_thread(make_suite: Any, tmp_path: Path) -> None:
    """``_release_here`` hands a thread executor's pooled instances to ``release`` (the helper thread, under the
    timeout: a ``__del__`` that hangs stops the run after case_timeout_s). Dropped where they were collected, they
    were released on the thread that ran ``op.run`` all the same, outside any timeout: the system logs the thread."""
    log = tmp_path / "threads.log"
    code = ("import threading\n\nclass Desk:\n    version = 'v1'\n\n"
            "    def __del__(self):\n"
            f"        with open({str(log)!r}, 'a') as f: f.write(threading.current_thread().name + '\\n')\n\n"
            "    def run(self, input):\n"
            "        return {'steps': [], 'answer': 'v1', 'status': 'completed'}\n")
    root = make_suite([{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": "v1"}} for i in range(4)],
                      system="sysmod:Desk", system_code=code, evaluators=[{"type": "answer_matches"}],
                      case_timeout_s=30)
    with ThreadPoolExecutor(max_workers=2) as pool:
        op.run(root, executor=pool, chunk_size=1, out=tmp_path / "run", progress=False)
    threads = log.read_text(encoding="utf-8").split()
    assert len(threads) >= 2 and threading.current_thread().name not in threads  # the run's own, and a worker's
