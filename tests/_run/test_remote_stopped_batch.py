"""A batch of an executor that stops before its next case (no instance could be built for it) hands back what its
cases did before: their records and their replays, appended as a finished batch's are.

:class:`~oloproof_nb._run.remote._BatchStopped` carries both; the run appends the replays, then the records. Kept
without the replays, a case whose fault replay timed out (which leaves its instance stale) was recorded with
verdicts from replays ``replays.jsonl`` never held, and a resume did not run it again to find them.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from _reliability_systems import FAULT_EVALUATOR, make_case, read_log, runs_of, write_suite

import oloproof_nb as op
from oloproof_nb._run.timeouts import abandoned_calls


def test_the_replays_of_the_cases_a_stopped_batch_ran_are_appended(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    log, release = tmp_path / "log", tmp_path / "release"
    monkeypatch.setenv("RELSYS_LOG", str(log))
    monkeypatch.setenv("RELSYS_RELEASE", str(release))
    # the run's process builds instance 0 (its identity), the batch instance 1; c0's replay hangs past the timeout
    # (its instance is stale) and the replacement c1 needs, instance 2, cannot be built
    monkeypatch.setenv("RELSYS_INIT", "raise_after:2")
    root = write_suite(tmp_path / "suite", [make_case("c0", replay_op="hang"), make_case("c1")],
                       evaluators=[FAULT_EVALUATOR], case_timeout_s=0.5)
    out = tmp_path / "run"
    try:
        with ThreadPoolExecutor(1) as executor:
            with pytest.raises(op.OloproofError, match="^building the system raised RuntimeError") as stopped:
                op.run(root, out=out, executor=executor, chunk_size=2, progress=False, cache=False)
    finally:
        release.touch()  # the hung replay ends
        for thread in abandoned_calls():
            thread.join(10)
    cases = [json.loads(line)["case"]["id"] for line in (out / "cases.jsonl").read_text(encoding="utf-8").splitlines()]
    replays = [json.loads(line) for line in (out / "replays.jsonl").read_text(encoding="utf-8").splitlines()]
    assert cases == ["c0"]
    assert type(stopped.value) is op.OloproofError  # the batch's own carrier never reaches the user
    assert replays and {replay["case_id"] for replay in replays} == {"c0"}
    assert [event for event, cid, *_ in read_log(log) if event == "replay"] == ["replay"]  # the one that hung
    assert runs_of(read_log(log)) == ["c0"]
