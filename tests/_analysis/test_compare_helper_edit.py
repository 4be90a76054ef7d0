"""A python check whose suite-folder helper module is edited between the runs.

The check takes the answers it accepts, a constant, from a helper module of the suite folder (here
``r52_accept.py``: Python keeps one module of a name per process, whichever suite folder imported it, so the module
names are this file's own). In one Python process (a notebook) an edit of the helper was not taken when the suite
was loaded again: Python keeps the module it imported, so the run was judged by the old check and recorded the old
check's digest, without a word; a check the user had just tightened still passed a desk that answers 30 of 60 cases
wrong, 60 of 60, gate PASS. It is now refused, as an edited helper of the system is. Made in processes
of their own, two runs judged by the two versions of the helper are ``check_changed`` (README section 6a: a check's
own modules of the suite folder count in its digest). Counts are by hand: the desk answers ``no`` on the 30 cases
whose ``n`` is below 30 and ``ok`` on the rest."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.cli import main
from oloproof_nb.errors import ConfigError

CHECK = '''from r52_accept import ACCEPT


def answer_ok(case, initial_state, final_state, trajectory):
    return trajectory.answer in ACCEPT
'''

DESK = '''import copy
import os


class Desk:
    version = "desk"

    def fingerprint(self):
        return os.environ.get("DESK_WRONG", "0")

    def reset(self, state):
        self.state = copy.deepcopy(state)

    def snapshot(self):
        return copy.deepcopy(self.state)

    def run(self, input):
        wrong = input["n"] < int(os.environ.get("DESK_WRONG", "0"))
        return {"steps": [], "answer": "no" if wrong else "ok", "status": "completed"}
'''

LOOSE, STRICT = 'ACCEPT = {"ok", "no"}\n', 'ACCEPT = {"ok"}\n'


def _suite(make_suite: Callable[..., Path], helpers: str, folder: str) -> Path:
    root = make_suite([{"id": f"c{i:02d}", "input": {"n": i}} for i in range(60)],
                      evaluators=[{"type": "python", "name": "answer_ok", "check": "r52_checks:answer_ok"}],
                      system="sysmod:Desk", system_code=DESK, folder=folder,
                      release={"criteria": {"answer_ok": 0.5}, "regression": {"margin": 0.1}})
    (root / "r52_accept.py").write_text(helpers, encoding="utf-8")
    (root / "r52_checks.py").write_text(CHECK, encoding="utf-8")
    return root


def test_a_helper_edited_after_this_process_imported_it_is_refused(make_suite: Callable[..., Path],
                                                                   tmp_path: Path) -> None:
    root = _suite(make_suite, LOOSE, "r52_in_process")
    suite = op.load_suite(root)
    assert suite.checks["r52_checks:answer_ok"](None, {}, {}, op.Trajectory(answer="no")) is True  # loose, as loaded
    (root / "r52_accept.py").write_text(STRICT, encoding="utf-8")  # tightened: "no" must fail now
    with pytest.raises(ConfigError, match=r"r52_accept\.py changed since this process imported it.*r52_checks:answer_ok"
                                          r".*restart the process"):
        op.load_suite(root)  # before: loaded, and a run judged 60 of 60 with the old, loose ACCEPT


def _run_elsewhere(root: Path, out: Path, wrong: int) -> None:
    code = f"import oloproof_nb as op; op.run({str(root)!r}, out={str(out)!r}, progress=False)"
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "DESK_WRONG": str(wrong)}, timeout=120,
                          check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_runs_judged_by_two_versions_of_a_helper_are_check_changed(make_suite: Callable[..., Path], tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    root = _suite(make_suite, STRICT, "r52_two_processes")
    _run_elsewhere(root, tmp_path / "v1", wrong=0)
    (root / "r52_accept.py").write_text(LOOSE, encoding="utf-8")  # the candidate's suite accepts "no" too
    _run_elsewhere(root, tmp_path / "v2", wrong=30)
    base, cand = op.load_run(tmp_path / "v1"), op.load_run(tmp_path / "v2")
    assert (base.verdicts["verdict"] == "pass").sum() == (cand.verdicts["verdict"] == "pass").sum() == 60  # no flip
    cmp = op.compare(base, cand)
    row = cmp.table.set_index("criterion").loc["answer_ok"]
    assert (row["n"], row["pass_to_fail"], row["fail_to_pass"]) == (60, 0, 0)
    assert row["verdict"] == "INSUFFICIENT_EVIDENCE" and row["reason"].startswith("check_changed")
    assert main(["compare", str(tmp_path / "v1"), str(tmp_path / "v2")]) == 1
    assert "compare: INSUFFICIENT_EVIDENCE — exit 1: not decided: check_changed" in capsys.readouterr().out
