"""A suite's Python check that timed out runs on no system instance: the case that notes the calls it abandoned on
its instance (``systems.note_abandoned``, when a fault replay of it timed out, or the case was interrupted) notes
only those on the instance. Before, the check's helper thread was noted too, so a resume in the same process was
refused a module-level instance (``BUSY_INSTANCE``) as long as the check ran (one that never ends: for good), though
the replay that timed out on the instance had ended."""

from __future__ import annotations

from pathlib import Path

import pytest
from _reliability_systems import EVALUATORS, FAULT_EVALUATOR, make_case, write_suite

import oloproof_nb as op
from oloproof_nb._run.timeouts import abandoned_calls
from oloproof_nb.errors import OloproofError

#: A factory that gives the module's one instance.
SINGLETON = '''
from relsys import VersionedDesk

DESK = VersionedDesk()


def make():
    return DESK
'''

#: A check that runs until the file ``CHECK_RELEASE`` names exists (at most a minute).
CHECKS = '''
import os
import time


def hangs(case, initial_state, state, trajectory):
    deadline = time.monotonic() + 60
    while not os.path.exists(os.environ["CHECK_RELEASE"]) and time.monotonic() < deadline:
        time.sleep(0.01)
    return True
'''


def test_a_resume_is_not_refused_the_instance_a_timed_out_check_never_ran_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release, check_release = tmp_path / "release", tmp_path / "check_release"
    monkeypatch.setenv("RELSYS_RELEASE", str(release))
    monkeypatch.setenv("RELSYS_LOG", str(tmp_path / "log"))
    monkeypatch.setenv("CHECK_RELEASE", str(check_release))
    check = {"type": "python", "name": "hangs", "check": "checks:hangs"}  # judged before the replay
    root = write_suite(tmp_path / "suite", [make_case("c0", replay_op="hang"), make_case("c1")],
                       evaluators=[*EVALUATORS, check, FAULT_EVALUATOR], system="single:make", case_timeout_s=0.3)
    (root / "single.py").write_text(SINGLETON, encoding="utf-8")
    (root / "checks.py").write_text(CHECKS, encoding="utf-8")
    try:
        with pytest.raises(OloproofError):  # c0's replacement is the instance its replay still runs on
            op.run(root, out=tmp_path / "run", progress=False, cache=False)
        release.touch()  # the replay ends; the check goes on
        for thread in abandoned_calls():  # the calls on the instance (before: the check's too, ending after 60 s)
            thread.join(10)
        run = op.run(root, out=tmp_path / "run", resume=True, progress=False, cache=False)
    finally:
        check_release.touch()
    assert run.cases[["case_id", "status"]].values.tolist() == [["c0", "completed"], ["c1", "completed"]]
    assert run.verdicts.set_index(["case_id", "criterion"]).loc[("c0", "hangs"), "verdict"] == "missing"
