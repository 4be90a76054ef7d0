"""A system-scope evaluator's call into the system that timed out (a fault replay that hangs) goes on in the
background as a timed-out run does: the case notes the instance, so a resume in the same process is refused it
while that call runs. Only the case's own timeout was pinned (``tests/_run/test_runner_slotted_instance.py``); a
case noting only ``timed_out`` passed every test."""

from __future__ import annotations

from pathlib import Path

import pytest
from _reliability_systems import EVALUATORS, FAULT_EVALUATOR, make_case, read_log, runs_of, write_suite

import oloproof_nb as op
from oloproof_nb._run.systems import BUSY_INSTANCE
from oloproof_nb._run.timeouts import abandoned_calls
from oloproof_nb.errors import OloproofError

#: A factory that gives the module's one instance.
SINGLETON = '''
from relsys import VersionedDesk

DESK = VersionedDesk()


def make():
    return DESK
'''


def test_a_resume_waits_for_a_fault_replay_that_timed_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release, log = tmp_path / "release", tmp_path / "log"
    monkeypatch.setenv("RELSYS_RELEASE", str(release))
    monkeypatch.setenv("RELSYS_LOG", str(log))
    cases = [make_case("c0", replay_op="hang"), make_case("c1"), make_case("c2")]
    root = write_suite(tmp_path / "suite", cases, evaluators=[*EVALUATORS, FAULT_EVALUATOR], system="single:make",
                       case_timeout_s=0.3)
    (root / "single.py").write_text(SINGLETON, encoding="utf-8")
    try:
        with pytest.raises(OloproofError):  # the replacement for c0's instance is the one its replay still runs on
            op.run(root, out=tmp_path / "run", progress=False, cache=False)
        with pytest.raises(OloproofError) as caught:
            op.run(root, out=tmp_path / "run", resume=True, progress=False, cache=False)
        assert str(caught.value) == f"{root / 'oloproof.yaml'}: system: {BUSY_INSTANCE}"
        assert runs_of(read_log(log)) == ["c0"]  # c1 never ran beside the replay
    finally:
        release.touch()  # the replay ends
    for thread in abandoned_calls():
        thread.join(10)
    run = op.run(root, out=tmp_path / "run", resume=True, progress=False, cache=False)
    assert run.cases[["case_id", "status"]].values.tolist() == [["c0", "completed"], ["c1", "completed"],
                                                               ["c2", "completed"]]
