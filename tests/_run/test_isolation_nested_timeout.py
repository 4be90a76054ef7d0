"""``isolation: process``: user code that calls a timed routine of oloproof's is still timed after it.

A python check (or the system's ``run``, or its module as a worker imports it) that calls ``op.observe_file``
made a timed call inside the timed call the run's process was timing; the inner call's end told the run's process
that the call had ended, so a regular expression that held the GIL after it ran unkilled for as long as it took
(the case ``completed`` with its check's verdict ``missing`` ~20 s later, the system's case ``timeout`` from the
worker's own clock when the expression let go, the import not stopped at all). The expression here takes
10–60 s (each ``a`` doubles it): long past the 1 s limit, short enough that a regression fails rather than hangs.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.errors import OloproofError

#: Calls ``op.observe_file`` (timed, on its own helper thread), then holds the GIL far past case_timeout_s.
_NESTED_THEN_HOG = """
import re

import oloproof_nb as op

ARTIFACT = {path!r}
DIGEST = {digest!r}


def nested_then_hog():
    op.observe_file(op.OutcomeContract(artifact_id="a", expected_sha256=DIGEST), ARTIFACT)
    re.match(r"(a+)+$", "a" * 29 + "b")
"""

_SYSTEM = """

class Desk:
    version = "desk-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        if input.get("hog") and HOG_IN == "system":
            nested_then_hog()
        return {"steps": [], "answer": "ok", "status": "completed"}
"""

_CHECK = """

def done(case, initial_state, final_state, trajectory):
    if case.input.get("hog"):
        nested_then_hog()
    return True
"""

KILLED = "timeout: exceeded case_timeout_s=1 (the worker process was killed)"


def _hog(tmp_path: Path) -> str:
    artifact = tmp_path / "artifact.txt"
    artifact.write_text("month,revenue", encoding="utf-8")
    return _NESTED_THEN_HOG.format(path=str(artifact), digest=hashlib.sha256(b"month,revenue").hexdigest())


@pytest.mark.parametrize("where", ["check", "system"])
def test_a_call_holding_the_gil_after_a_timed_call_of_its_own_is_killed_at_the_limit(
        make_suite, tmp_path: Path, where: str) -> None:  # type: ignore[no-untyped-def]
    hog = _hog(tmp_path)
    cases = [{"id": "c0", "input": {}, "initial_state": {}}, {"id": "c1", "input": {"hog": True}, "initial_state": {}}]
    root = make_suite(cases, evaluators=[{"type": "python", "check": "checks:done"}], system="sysmod:Desk",
                      system_code=f"{hog}\nHOG_IN = {where!r}\n{_SYSTEM}",
                      case_timeout_s=1, isolation="process")
    (root / "checks.py").write_text(hog + _CHECK if where == "check" else _CHECK.replace("nested_then_hog()", "pass"),
                                    encoding="utf-8")
    run = op.run(root, out=tmp_path / "run", progress=False)
    cases_ = run.cases.set_index("case_id")
    assert list(cases_["status"]) == ["completed", "timeout"]
    assert cases_.loc["c1", "error"] == KILLED
    assert cases_.loc["c1", "duration_s"] >= 2.0  # not early: 1 s past its 1 s, timed from the outer call's start
    assert list(run.verdicts.set_index("case_id").loc[["c1"], "verdict"]) == ["missing"]


def test_a_system_module_that_holds_the_gil_after_a_timed_call_as_a_worker_imports_it_stops_the_run(
        make_suite, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # the worker imports the system's module on its own thread, inside watched(): the timed call is inside that
    module = f"{_hog(tmp_path)}\nnested_then_hog()\nHOG_IN = None\n{_SYSTEM}"
    root = make_suite([{"id": "c0", "input": {}, "initial_state": {}}], evaluators=[{"type": "answer_matches"}],
                      system="sysmod:Desk", system_code=module, case_timeout_s=1)
    suite = op.load_suite(root, import_system_now=False)  # this process never imports it: only the worker does
    with pytest.raises(OloproofError, match=r"oloproof\.yaml: system: building the system took longer than "
                                            r"case_timeout_s=1$"):
        op.run(suite, out=tmp_path / "run", progress=False, isolation="process")
    assert not (tmp_path / "run").exists()


_ABANDONED_CHECK = """
import time
from pathlib import Path


def done(case, initial_state, final_state, trajectory):
    if case.id == "c0":  # runs past case_timeout_s: abandoned on its helper thread, its worker runs c1
        folder = Path(ARTIFACT).parent
        for _ in range(200):
            if (folder / "c1-runs").exists():
                break
            time.sleep(0.05)
        op.observe_file(op.OutcomeContract(artifact_id="a", expected_sha256=DIGEST), ARTIFACT)
        (folder / "check-called").write_text("", encoding="utf-8")
    return True
"""

_WAITING_SYSTEM = """
import time
from pathlib import Path


class Desk:
    version = "desk-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        if input.get("hog"):
            folder = Path(ARTIFACT).parent
            (folder / "c1-runs").write_text("", encoding="utf-8")
            for _ in range(16):  # under its 1 s
                if (folder / "check-called").exists():
                    break
                time.sleep(0.05)
            re.match(r"(a+)+$", "a" * 29 + "b")
        return {"steps": [], "answer": "ok", "status": "completed"}
"""


def test_a_timed_call_of_a_check_abandoned_in_an_earlier_case_never_stops_the_clock_of_the_next(
        make_suite, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # c0's check outlives its case (timed out in the worker, which goes on) and calls op.observe_file while c1's
    # run is timed: told, its end said c1's call had ended, and c1's expression ran unkilled
    hog = _hog(tmp_path)
    cases = [{"id": "c0", "input": {}, "initial_state": {}}, {"id": "c1", "input": {"hog": True}, "initial_state": {}}]
    root = make_suite(cases, evaluators=[{"type": "python", "check": "checks:done"}], system="sysmod:Desk",
                      system_code=hog + _WAITING_SYSTEM, case_timeout_s=1, isolation="process")
    (root / "checks.py").write_text(hog + _ABANDONED_CHECK, encoding="utf-8")
    run = op.run(root, out=tmp_path / "run", progress=False, workers=1)
    assert (tmp_path / "check-called").exists()  # the abandoned check did call it while c1 ran
    cases_ = run.cases.set_index("case_id")
    assert list(cases_["status"]) == ["completed", "timeout"]
    assert cases_.loc["c1", "error"] == KILLED
