"""op.from_inspect checked against Inspect AI's own numbers (``results.scores[...].metrics``) and a hand count, on
real logs of the shapes teams have (tests/_inspect_task.py ``--graders``): one scorer function run twice with
other arguments, two tasks of one eval, an eval retried beside its first attempt."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.cli import main

pytest.importorskip("inspect_ai")

TASK = Path(__file__).resolve().parents[1] / "_inspect_task.py"


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The logs of ``_inspect_task.py --graders``, made once per module in a child process."""
    root = tmp_path_factory.mktemp("graders")
    env = {**os.environ, "INSPECT_DISPLAY": "none", "XDG_DATA_HOME": str(root / "xdg"), "NO_PROXY": "*"}
    done = subprocess.run([sys.executable, str(TASK), "--graders", str(root / "logs")], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return root / "logs"


def _accuracy(file: Path) -> dict[str, float]:
    """Inspect's own accuracy of each scorer of the log, from its results."""
    from inspect_ai.log import read_eval_log

    results = read_eval_log(str(file), header_only=True).results
    assert results is not None
    return {score.name: score.metrics["accuracy"].value for score in results.scores}


def _rates(run: op.Run) -> dict[str, float]:
    verdicts = run.verdicts
    return {str(c): float((rows["verdict"] == "pass").mean()) for c, rows in verdicts.groupby("criterion")}


def test_one_scorer_function_run_twice_is_two_criteria_as_inspect_scores_them(folders: Path) -> None:
    """``scorer=[graded(), graded(lenient=True)]``: the header names both ``graded`` (with their options) and the
    samples hold ``graded`` and ``graded1``. The log was refused as one scorer run with two settings ("scorer
    'graded' runs with options {"lenient": true}, but <the same file> ran it with {}"), so a task with a strict and
    a lenient grader could not be read at all. Inspect's accuracy: 0.4 and 0.8 (C, P, I, C, P: 2 and 4 pass)."""
    from _inspect_task import GRADES

    (file,) = sorted((folders / "graders").glob("*.eval"))
    inspect_says = _accuracy(file)
    assert inspect_says == {"graded": 0.4, "graded1": 0.8}
    by_hand = {"graded": GRADES.count("C") / 5, "graded1": (GRADES.count("C") + GRADES.count("P")) / 5}
    run = op.from_inspect(file)
    assert _rates(run) == by_hand == inspect_says
    options = {e.criterion: getattr(e, "options", None) for e in run.config.evaluators}
    assert options == {"graded": "", "graded1": '{"lenient": true}'}  # each criterion keeps its own setting
    table = op.gate(run, release={"criteria": {"graded": 0.1, "graded1": 0.1}, "min_clusters": 2}).table
    assert table.set_index("criterion")["passed"].to_dict() == {"graded": 2, "graded1": 4}


def test_two_tasks_that_number_their_samples_alike_are_named_in_the_error(
        folders: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two tasks of one eval whose samples have no ids: Inspect numbers each task's 1, 2, 3. The folder is refused
    (a case is a sample id), and the line now says the two tasks share the ids and to read each task's log on its
    own, where before it said only "read one log, or a folder whose logs hold different samples". Each log alone
    reads as Inspect scores it (C, C, I: 2/3; I, I, C: 1/3)."""
    files = {f.name.split("_")[1]: f for f in sorted((folders / "tasks").glob("*.eval"))}
    assert set(files) == {"task-a", "task-b"}
    assert main(["gate", str(folders / "tasks")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "tasks 'task_a' and 'task_b' both have a sample '1'" in err and "read each task's log on its own" in err
    for name, passed in (("task-a", 2), ("task-b", 1)):
        assert _rates(op.from_inspect(files[name])) == {"graded": passed / 3} == _accuracy(files[name])


def test_an_eval_retried_beside_its_first_attempt_names_the_retry(
        folders: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``eval_retry`` writes a new log beside the failed one (the same task_id; the new log holds every sample,
    the finished ones copied). The folder is refused, now saying it holds two attempts of one eval and to read the
    latest log; that log reads as Inspect scores it (4 of 4 C), and the first attempt alone has no release
    decision (its eval did not finish: exit 2)."""
    from inspect_ai.log import read_eval_log

    first, latest = sorted((folders / "retry").glob("*.eval"))
    assert read_eval_log(str(first), header_only=True).status == "error"
    assert main(["gate", str(folders / "retry")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "a log of the same eval of task 'flaky'" in err and "eval_retry" in err and "read the latest log" in err
    assert _rates(op.from_inspect(latest)) == {"graded": 1.0} == _accuracy(latest)
    assert len(op.from_inspect(latest).cases) == 4
    assert main(["gate", str(first)]) == 2
    assert "did not finish" in capsys.readouterr().err


def test_load_run_of_an_inspect_log_says_to_read_it_with_from_inspect(folders: Path) -> None:
    """op.load_run opens run directories; given an Inspect AI log or a folder of logs (as a team with Inspect evals
    tries first) it said only "not a directory (a run directory holds manifest.json and cases.jsonl)". The line now
    names op.from_inspect; a folder without logs keeps its message."""
    (file,) = sorted((folders / "graders").glob("*.eval"))
    with pytest.raises(op.RunDirError, match=r"graders.*\.eval: not a directory .*; it is an Inspect AI log: read it "
                                             r"with op\.from_inspect\("):
        op.load_run(file)
    with pytest.raises(op.RunDirError, match=r"tasks: not a run directory \(no manifest\.json\); it holds Inspect AI "
                                             r"logs: read them with op\.from_inspect\("):
        op.load_run(folders / "tasks")
    empty = folders.parent / "empty"
    empty.mkdir()
    with pytest.raises(op.RunDirError, match=r"empty: not a run directory \(no manifest\.json\)$"):
        op.load_run(empty)
