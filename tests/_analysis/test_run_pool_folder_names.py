"""``_analysis/run_pool``: a refusal of ``op.load_runs`` starts with the folder of the run it refuses.

Runs written with ``out=`` live in folders named by the user (``runs/monday``), not by their run ids: a refusal
that named two run ids only left the user to open every manifest of the list to find the run to take out. Each
expectation below is written from the folders and ids the test made, never from the pooled Run's output.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op

CASES = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(3)]
EVALUATORS = [{"type": "answer_matches"}]


def _refusal(directories: list[str | Path]) -> str:
    with pytest.raises(op.OloproofError) as info:
        op.load_runs(directories)
    return str(info.value)


def test_runs_of_another_suite_are_refused_naming_that_run_s_folder(make_suite: Callable[..., Path],
                                                                    tmp_path: Path) -> None:
    """Three runs pooled, the third of another suite: the line starts with the third folder (the first run is the
    pool's reference), then the two ids, on one line."""
    mine, theirs = make_suite(CASES, evaluators=EVALUATORS), make_suite(CASES, evaluators=EVALUATORS, name="other")
    a, b = (op.run(mine, out=tmp_path / name, progress=False) for name in ("monday", "tuesday"))
    c = op.run(theirs, out=tmp_path / "wednesday", progress=False)
    said = _refusal([a.directory, b.directory, c.directory])
    assert said.startswith(f"{tmp_path / 'wednesday'}: runs {a.run_id} and {c.run_id} are of different suites "
                           "('tiny', 'other'); pool runs of one suite")
    assert "\n" not in said


def test_a_run_given_twice_names_the_folder_given_second(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The same folder twice, and a copy of a folder beside it: each refusal starts with the folder given the
    second time (the copy names the folder it copies)."""
    a = op.run(make_suite(CASES, evaluators=EVALUATORS), out=tmp_path / "monday", progress=False)
    copy = tmp_path / "monday-backup"
    shutil.copytree(a.directory, copy)
    assert _refusal([a.directory, a.directory]) == (f"{tmp_path / 'monday'}: run {a.run_id} is given twice (the "
                                                    "same folder); pool each run once")
    assert _refusal([a.directory, copy]) == (f"{copy}: run {a.run_id} is given twice (a copy of "
                                             f"{tmp_path / 'monday'}); pool each run once")


def test_runs_that_regrouped_a_case_are_refused_naming_the_later_run_s_folder(make_suite: Callable[..., Path],
                                                                              tmp_path: Path) -> None:
    """The case file regrouped between two runs: the line starts with the folder of the run that put the case in
    the second cluster."""
    root = make_suite(CASES, evaluators=EVALUATORS)
    a = op.run(root, out=tmp_path / "monday", progress=False)
    (root / "cases.jsonl").write_text("".join(json.dumps({**c, "cluster": "all"}) + "\n" for c in CASES),
                                      encoding="utf-8")
    b = op.run(root, out=tmp_path / "tuesday", progress=False)
    assert _refusal([a.directory, b.directory]).startswith(
        f"{tmp_path / 'tuesday'}: runs {a.run_id} and {b.run_id} put case 'c0' in different clusters ('c0', 'all')")


def test_runs_of_another_check_code_are_refused_naming_that_run_s_folder(make_suite: Callable[..., Path],
                                                                         tmp_path: Path) -> None:
    """The suite's python check edited between two runs (the same configuration): the line starts with the
    folder of the run whose check's code differs from the first's."""
    root = make_suite(CASES, evaluators=[{"type": "python", "check": "checks:done"}])
    (root / "checks.py").write_text("def done(case, initial_state, final_state, trajectory):\n    return {}\n",
                                    encoding="utf-8")
    a = op.run(root, out=tmp_path / "monday", progress=False)
    (root / "checks.py").write_text("def done(case, initial_state, final_state, trajectory):\n    return {}  # v2\n",
                                    encoding="utf-8")
    b = op.run(root, out=tmp_path / "tuesday", progress=False)
    said = _refusal([a.directory, b.directory])
    assert re.match(re.escape(f"{tmp_path / 'tuesday'}: runs {a.run_id} and {b.run_id} judge done with different "
                              "checks ("), said), said


def test_the_do_nothing_baseline_beside_the_agent_is_refused_naming_its_own_folder(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The baseline given first or second: the line starts with the baseline's folder, not the agent's."""
    root = make_suite(CASES, evaluators=EVALUATORS)
    agent = op.run(root, out=tmp_path / "monday", progress=False)
    idle = op.baseline(root, progress=False).run
    orders: list[list[str | Path]] = [[agent.directory, idle.directory], [idle.directory, agent.directory]]
    for order in orders:
        assert _refusal(order).startswith(f"{idle.directory}: run {idle.run_id} is the do-nothing baseline")
