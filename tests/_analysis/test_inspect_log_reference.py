"""op.from_inspect checked against Inspect AI's own numbers (``results.scores[...].metrics``) and a hand count, on
real logs of the shapes teams have (tests/_inspect_task.py ``--graders``): one scorer function run twice with
other arguments, two tasks of one eval, an eval retried beside its first attempt, a sample retried within its eval."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _inspect_logs import of_mode, shared_logs

import oloproof_nb as op
from oloproof_nb.cli import main

pytest.importorskip("inspect_ai")


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The logs of ``_inspect_task.py --graders``, made once per session in a child process (read only)."""
    with shared_logs(tmp_path_factory, "graders", of_mode("--graders")) as root:
        yield root / "logs"


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


def test_a_sample_inspect_ran_again_after_it_raised_is_read_as_its_last_attempt(folders: Path) -> None:
    """README section 10: a sample run again after it raised (``retry_on_error``) is read as its
    last attempt and the attempt that raised is not counted. Sample ``r2`` of ``retried`` raised once, then passed:
    Inspect keeps that error in ``error_retries`` and scores 4 of 4 C; read here, 4 cases, none missing, r2 passing
    (the raise hidden, as the README warns)."""
    from inspect_ai.log import read_eval_log

    (file,) = sorted((folders / "retried").glob("*.eval"))
    log = read_eval_log(str(file))
    assert log.status == "success" and log.samples is not None
    retries = {str(sample.id): len(sample.error_retries or []) for sample in log.samples}
    assert retries == {"r0": 0, "r1": 0, "r2": 1, "r3": 0}  # r2's first attempt raised, and Inspect ran it again
    run = op.from_inspect(file)
    verdicts = run.verdicts.set_index("case_id")["verdict"].to_dict()
    assert len(run.cases) == 4 and verdicts == {"r0": "pass", "r1": "pass", "r2": "pass", "r3": "pass"}
    assert _rates(run) == {"graded": 1.0} == _accuracy(file)


def test_load_run_of_an_inspect_log_says_to_read_it_with_from_inspect(folders: Path, tmp_path: Path) -> None:
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
    empty = tmp_path / "empty"  # not beside the logs, which the session's tests share (read only)
    empty.mkdir()
    with pytest.raises(op.RunDirError, match=r"empty: not a run directory \(no manifest\.json\)$"):
        op.load_run(empty)


#: The dicts log's criteria and the Inspect results entry of each: (``results.scores[i].scorer``, ``.name``).
DICT_CRITERIA = {"checks/correct": ("checks", "correct"), "safe": ("checks", "safe"),
                 "audit/correct": ("audit", "correct"), "polite": ("audit", "polite"), "graded": ("graded", "graded")}


def _dicts_log(folders: Path) -> Path:
    (file,) = sorted((folders / "dicts").glob("*.eval"))
    return file


def test_a_dict_valued_score_is_a_criterion_per_key_as_inspect_scores_it(folders: Path) -> None:
    """``Score(value={"correct": "C", "safe": 1})`` with a metric per key: Inspect's results hold an entry per key
    (``name`` the key, ``scorer`` the scorer). Every such score was ``missing``, so the scorer could not be gated
    (without a ``score_map`` function replacing the whole table). Each key is now a criterion, named as Inspect's
    results name it; ``correct``, a key of both ``checks`` and ``audit``, is ``checks/correct`` and ``audit/correct``.
    n, passed and rate match Inspect's ``scored_samples`` (× 2 epochs) and accuracy, and a hand count of CHECKS."""
    from _inspect_task import CHECKS, GRADES
    from inspect_ai.log import read_eval_log

    file = _dicts_log(folders)
    results = read_eval_log(str(file), header_only=True).results
    assert results is not None
    inspect_says = {(s.scorer, s.name): (s.metrics["accuracy"].value, s.scored_samples) for s in results.scores
                    if "accuracy" in s.metrics}
    assert set(inspect_says) == set(DICT_CRITERIA.values())
    rows = [epoch for sample in CHECKS for epoch in sample]  # 5 samples × 2 epochs
    correct = sum(c == "C" for c, _, _ in rows)
    by_hand = {"checks/correct": correct, "safe": sum(s for _, s, _ in rows), "audit/correct": correct,
               "polite": sum(p for _, _, p in rows), "graded": 2 * GRADES.count("C")}
    assert by_hand == {"checks/correct": 6, "safe": 7, "audit/correct": 6, "polite": 8, "graded": 4}
    run = op.from_inspect(file)
    assert [e.criterion for e in run.config.evaluators] == list(DICT_CRITERIA)
    release = {"criteria": {name: 0.1 for name in DICT_CRITERIA}, "min_clusters": 2, "allow_approximate_methods": True}
    table = op.gate(run, release=release).table.set_index("criterion")
    for name, (scorer, key) in DICT_CRITERIA.items():
        accuracy, scored = inspect_says[(scorer, key)]
        assert (table.loc[name, "n"], table.loc[name, "n_clusters"]) == (2 * scored, scored) == (10, 5), name
        assert table.loc[name, "passed"] == by_hand[name], name
        assert table.loc[name, "rate"] == pytest.approx(accuracy) == by_hand[name] / 10, name
    assert _rates(run) == {name: by_hand[name] / 10 for name in DICT_CRITERIA}


def test_the_cli_gates_a_key_of_a_dict_valued_score_named_in_release_yaml(
        folders: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof gate LOG --release release.yaml`` with ``safe`` and ``checks/correct`` listed: exit 0 at a low
    threshold and 1 (BLOCK) at one above the rate (7 of 10). Before, the log had no such criteria (exit 2)."""
    file = _dicts_log(folders)
    release = tmp_path / "release.yaml"
    base = "min_clusters: 2\nallow_approximate_methods: true\ncriteria:\n  checks/correct: 0.1\n"
    release.write_text(base + "  safe: 0.1\n", encoding="utf-8")
    assert main(["gate", str(file), "--release", str(release)]) == 0
    release.write_text(base + "  safe: 0.95\n", encoding="utf-8")
    assert main(["gate", str(file), "--release", str(release)]) == 1
    out = capsys.readouterr().out
    assert "safe" in out and "BLOCK" in out
    release.write_text(base.replace("checks/correct", "correct"), encoding="utf-8")  # a key of two scorers
    assert main(["gate", str(file), "--release", str(release)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "criteria.correct: no such criterion" in err and "checks/correct, safe, audit/correct, polite, graded" in err


def test_a_score_map_maps_each_key_and_a_score_map_function_gets_the_whole_dict(folders: Path) -> None:
    """A mapping ``score_map`` applies to each key's value (``{"I": "pass"}``: every ``correct`` passes; ``safe``
    keeps its 7 of 10); before, a dict value was missing whatever the mapping said. A function ``score_map`` is given
    the whole dict, as before: the scorer stays one criterion named after it."""
    file = _dicts_log(folders)
    lenient = _rates(op.from_inspect(file, score_map={"I": "pass"}))
    assert lenient == {"checks/correct": 1.0, "safe": 0.7, "audit/correct": 1.0, "polite": 0.8, "graded": 1.0}
    given: list[object] = []

    def both(value: object) -> bool:
        given.append(value)
        return isinstance(value, dict) and value["correct"] == "C" and value.get("safe", 1) == 1

    whole = _rates(op.from_inspect(file, score_map=both))
    assert whole == {"checks": 0.5, "audit": 0.6, "graded": 0.0}  # C and safe: d0 ×2, d1 e1, d3 e2, d4 e2
    assert {"correct": "C", "safe": 1} in given and len(given) == 30


def test_a_key_a_score_lacks_is_missing_for_that_key_only(folders: Path, tmp_path: Path) -> None:
    """The log rewritten: d0 epoch 1's ``checks`` lacks ``safe``, d3 epoch 2's ``checks`` is ``"C"`` (not a dict),
    and d4 epoch 1 raised. Only those rows are missing, each saying why; the other keys of the rows keep their
    verdicts, and the sample that raised is missing for every key of every scorer."""
    from inspect_ai.log import EvalError, read_eval_log, write_eval_log

    log = read_eval_log(str(_dicts_log(folders)))
    for sample in log.samples or []:
        if (sample.id, sample.epoch) == ("d0", 1):
            sample.scores["checks"].value = {"correct": "C"}  # type: ignore[index]
        elif (sample.id, sample.epoch) == ("d3", 2):
            sample.scores["checks"].value = "C"  # type: ignore[index]
        elif (sample.id, sample.epoch) == ("d4", 1):
            sample.error, sample.scores = EvalError(message="boom", traceback="", traceback_ansi=""), None
    write_eval_log(log, tmp_path / "edited.eval")
    v = op.from_inspect(tmp_path / "edited.eval").verdicts.set_index(["case_id", "epoch", "criterion"])
    assert v.loc[("d0", 1, "checks/correct"), "verdict"] == "pass"
    assert tuple(v.loc[("d0", 1, "safe"), ["verdict", "reason"]]) == ("missing", "key 'safe' not in score "
                                                                       "{'correct': 'C'}")
    assert [v.loc[("d3", 2, name), "verdict"] for name in ("checks/correct", "safe", "polite")] == \
        ["missing", "missing", "pass"]
    assert "score 'C' is not a dict of scores (scorer 'checks')" in v.loc[("d3", 2, "safe"), "reason"]
    d4 = v.loc[("d4", 1)]
    assert sorted(d4.index) == sorted(DICT_CRITERIA) and set(d4["verdict"]) == {"missing"}
    assert (v["verdict"] == "missing").sum() == 1 + 2 + 5


def test_a_scorer_whose_dicts_are_all_empty_stays_one_missing_criterion(folders: Path, tmp_path: Path) -> None:
    """Every ``audit`` score rewritten to ``{}``: it has no key to judge, so it stays the criterion ``audit``, every
    row missing (its check is not dropped from the table), and ``correct``, now a key of ``checks`` alone, is named
    by the key."""
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(_dicts_log(folders)))
    for sample in log.samples or []:
        sample.scores["audit"].value = {}  # type: ignore[index]
    write_eval_log(log, tmp_path / "empty.eval")
    run = op.from_inspect(tmp_path / "empty.eval")
    assert [e.criterion for e in run.config.evaluators] == ["correct", "safe", "audit", "graded"]
    audit = run.verdicts[run.verdicts["criterion"] == "audit"]
    assert len(audit) == 10 and set(audit["verdict"]) == {"missing"}
    assert _rates(run)["correct"] == 0.6


def test_two_tasks_whose_dict_scorer_gives_other_keys_keep_each_key_to_its_task(
        folders: Path, tmp_path: Path) -> None:
    """A folder of two tasks whose scorer ``checks`` gives ``{"correct", "safe"}`` in one and ``{"correct", "fast"}``
    in the other (the dicts log, and a copy as task ``dicts_b`` with ``safe`` renamed ``fast``). Inspect's results
    of each task have a row for its own keys only: ``safe`` 0.7 over the 5 samples of ``dicts``, ``fast`` 0.7 over
    those of ``dicts_b``. Before, each task's samples were also given a ``missing`` row for the other task's key, so
    ``safe`` and ``fast`` read 7 of 20 (0.35) with 10 missing, and their gate rows counted 20 rows, 10 missing."""
    from inspect_ai.log import read_eval_log, write_eval_log

    folder, log = _two_tasks(folders, tmp_path, "dicts_b",
                             lambda value: {"correct": value["correct"], "fast": value["safe"]}, write=False)
    assert log.results is not None
    for score in log.results.scores:
        score.name = "fast" if score.name == "safe" else score.name
    write_eval_log(log, folder / "b.eval")
    inspect_says = {s.name: s.metrics["accuracy"].value for s in read_eval_log(str(folder / "b.eval"),
                                                                                header_only=True).results.scores
                    if "accuracy" in s.metrics}
    assert inspect_says["fast"] == 0.7
    release = {"criteria": {"safe": 0.1, "fast": 0.1}, "min_clusters": 2, "allow_approximate_methods": True}
    table = op.gate(op.from_inspect(folder), release=release).table.set_index("criterion")
    for key in ("safe", "fast"):
        assert tuple(table.loc[key, ["n", "passed", "missing", "n_clusters"]]) == (10, 7, 0, 5), key
        assert table.loc[key, "rate"] == pytest.approx(inspect_says["fast"]), key
        assert table.loc[key, "verdict"] == "PASS", key


def _two_tasks(folders: Path, tmp_path: Path, task: str, rescore: Any, write: bool = True) -> tuple[Path, Any]:
    """A folder ``two`` holding the dicts log as ``a.eval`` and a copy of it as task ``task`` (its sample ids
    prefixed ``b``, each ``checks`` score replaced by ``rescore(score)``), written as ``b.eval`` when ``write``;
    the folder and the copy's log."""
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(_dicts_log(folders)))
    folder = tmp_path / "two"
    folder.mkdir()
    write_eval_log(log, folder / "a.eval")
    log.eval.task, log.eval.task_id = task, "another-task-id"
    log.eval.dataset.sample_ids = [f"b{sid}" for sid in log.eval.dataset.sample_ids or []]
    for sample in log.samples or []:
        sample.id = f"b{sample.id}"
        sample.scores["checks"].value = rescore(sample.scores["checks"].value)  # type: ignore[index]
    if write:
        write_eval_log(log, folder / "b.eval")
    return folder, log


def test_a_task_whose_scorer_of_a_dict_scorers_name_gives_plain_scores_is_judged_on_them(
        folders: Path, tmp_path: Path) -> None:
    """A folder of two tasks whose scorer ``checks`` gives ``{"correct": ..., "safe": ...}`` in one (the dicts log) and
    a plain ``"C"``/``"I"`` in the other (a copy as task ``plain_b``, each value its dict's ``correct``). Before, the
    plain task's 10 scores were all ``missing`` under the other task's keys (``score 'C' is not a dict of scores``)
    and ``checks`` was no criterion at all: the task's check vanished, and ``safe`` read 7 of 20. Now ``checks`` is
    the plain task's criterion, 6 of 10 by a hand count of CHECKS, and the keys keep the dict task's samples."""
    from _inspect_task import CHECKS

    folder, _ = _two_tasks(folders, tmp_path, "plain_b", lambda value: value["correct"])
    rows = [epoch for sample in CHECKS for epoch in sample]  # 5 samples × 2 epochs
    correct, safe = sum(c == "C" for c, _, _ in rows), sum(s for _, s, _ in rows)
    assert (correct, safe) == (6, 7)
    run = op.from_inspect(folder)
    verdicts = run.verdicts
    plain = verdicts[verdicts["criterion"] == "checks"]
    assert set(plain["case_id"]) == {f"b{sid}" for sid in ("d0", "d1", "d2", "d3", "d4")}
    assert plain["verdict"].value_counts().to_dict() == {"pass": correct, "fail": 10 - correct}
    for key, passed in (("checks/correct", correct), ("safe", safe)):
        rows_of_key = verdicts[verdicts["criterion"] == key]
        assert not rows_of_key["case_id"].str.startswith("b").any(), key
        assert (len(rows_of_key), int((rows_of_key["verdict"] == "pass").sum())) == (10, passed), key
    release = {"criteria": {"checks": 0.1}, "min_clusters": 2, "allow_approximate_methods": True}
    table = op.gate(run, release=release).table.set_index("criterion")
    assert tuple(table.loc["checks", ["n", "passed", "missing", "n_clusters"]]) == (10, correct, 0, 5)


def test_a_task_whose_dict_scorer_gives_only_empty_dicts_is_missing_under_each_key_not_a_plain_criterion(
        folders: Path, tmp_path: Path) -> None:
    """Beside the dicts log, a copy as task ``empty_b`` whose every ``checks`` score is ``{}`` (no
    key to judge). An empty dict is no plain score: ``empty_b`` has no criterion ``checks`` of its own (read as
    plain, it got one, every row missing, beside the keys); its samples are ``missing`` under each key of the other
    task's ``checks`` (``_keys_of``: every key where the task's samples gave none), 10 rows each. The dict task's
    rows keep their verdicts: 6 and 7 of 10 by a hand count of CHECKS. Both tasks have rows of every criterion, so
    each is a criterion per task (``dicts/safe`` and ``empty_b/safe``; pooled before). And one task whose
    ``checks`` gives a dict in every sample but one ``"C"`` has the keys' criteria only, as Inspect's results name
    them."""
    from _inspect_task import CHECKS
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(_dicts_log(folders)))
    folder = tmp_path / "two"
    folder.mkdir()
    write_eval_log(log, folder / "a.eval")
    log.eval.task, log.eval.task_id = "empty_b", "another-task-id"
    log.eval.dataset.sample_ids = [f"b{sid}" for sid in log.eval.dataset.sample_ids or []]
    for sample in log.samples or []:
        sample.id = f"b{sample.id}"
        sample.scores["checks"].value = {}  # type: ignore[index]
    write_eval_log(log, folder / "b.eval")
    rows = [epoch for sample in CHECKS for epoch in sample]  # 5 samples × 2 epochs
    correct, safe = sum(c == "C" for c, _, _ in rows), sum(s for _, s, _ in rows)
    assert (correct, safe) == (6, 7)
    run = op.from_inspect(folder)
    assert [e.criterion for e in run.config.evaluators] == [f"{task}/{name}" for name in DICT_CRITERIA
                                                            for task in ("dicts", "empty_b")]
    verdicts = run.verdicts
    for key, passed in (("checks/correct", correct), ("safe", safe)):
        of_b = verdicts[verdicts["criterion"] == f"empty_b/{key}"]
        assert of_b["case_id"].str.startswith("b").all(), key
        assert len(of_b) == 10 and set(of_b["verdict"]) == {"missing"}, key
        assert set(of_b["reason"]) == {f"key {key.split('/')[-1]!r} not in score {{}}"}, key
        of_a = verdicts[verdicts["criterion"] == f"dicts/{key}"]
        assert not of_a["case_id"].str.startswith("b").any(), key
        assert (len(of_a), int((of_a["verdict"] == "pass").sum())) == (10, passed), key

    one = read_eval_log(str(_dicts_log(folders)))
    for sample in one.samples or []:
        if (sample.id, sample.epoch) == ("d3", 2):
            sample.scores["checks"].value = "C"  # type: ignore[index]
    write_eval_log(one, tmp_path / "mixed.eval")
    mixed = op.from_inspect(tmp_path / "mixed.eval")
    assert [e.criterion for e in mixed.config.evaluators] == list(DICT_CRITERIA)
    assert sorted(mixed.verdicts["criterion"].unique()) == sorted(DICT_CRITERIA)
