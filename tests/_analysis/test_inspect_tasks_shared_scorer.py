"""A scorer that several tasks of Inspect AI logs share is a criterion per task, ``<task>/<name>``.

Real logs (mockllm, one eval of two tasks, each scored by ``match()``) made by :data:`SCRIPT` in a child process (the
log-writing code of the other real-log tests): task ``bulk`` answers every sample right, task ``small`` the first
``right`` of its samples. Pooled, ``bulk`` 80 of 80 beside ``small`` 0 of 6 was one criterion ``match``, 80 of 86, whose
Clopper–Pearson ci_low is above 0.8: PASS (exit 0) with one task failing every sample, where Inspect reports each task
on its own. Every expected count is a hand count of the logs by Inspect's own reader (``read_eval_log``), every bound
scipy's beta quantile.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _inspect_logs import run_inspect, shared_logs
from scipy import stats

import oloproof_nb as op
from oloproof_nb.cli import main

pytest.importorskip("inspect_ai")

#: Writes one eval of two tasks into each folder ``argv[3::2]``: ``bulk`` of ``argv[1]`` samples all answered right,
#: ``small`` of ``argv[2]`` samples of which the first ``argv[4::2]`` (the folder's) are answered right. The inputs are
#: the same whatever is answered (so two folders' samples pair by their digests in ``op.compare``). The folders are
#: made in one process: Inspect AI's import is most of a child's time.
SCRIPT = """
import sys
from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

bulk, small = map(int, sys.argv[1:3])
right = 0  # the folder's, set before each eval

def policy(messages, tools, tool_choice, config):
    task, number = messages[-1].text.split()
    out = ModelOutput.from_content("mockllm/model", "yes" if task == "bulk" or int(number) < right else "no")
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out

tasks = [Task(dataset=[Sample(id=f"b{i}", input=f"bulk {i}", target="yes") for i in range(bulk)],
              solver=[generate()], scorer=match(), name="bulk"),
         Task(dataset=[Sample(id=f"s{i}", input=f"small {i}", target="yes") for i in range(small)],
              solver=[generate()], scorer=match(), name="small")]
for log_dir, right in zip(sys.argv[3::2], map(int, sys.argv[4::2])):
    logs = inspect_eval(tasks, model=get_model("mockllm/model", custom_outputs=policy), log_dir=log_dir,
                        display="none", max_samples=64)
    assert [log.status for log in logs] == ["success", "success"], logs
"""

BULK, SMALL, THRESHOLD = 80, 6, 0.8
SPLIT = {"criteria": {"bulk/match": THRESHOLD, "small/match": THRESHOLD}, "allow_approximate_methods": True}


def _write(root: Path, *small_right: int) -> list[Path]:
    folders = [root / f"right{right}" for right in small_right]
    pairs = [str(part) for right in small_right for part in (root / f"right{right}", right)]
    run_inspect(["-c", SCRIPT, str(BULK), str(SMALL), *pairs], root)
    return folders


def _none_and_five_right(root: Path) -> None:
    _write(root, 0, 5)


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """``regressed``: ``small`` answers none right; ``holds``: ``small`` answers 5 of 6 right."""
    with shared_logs(tmp_path_factory, "tasks-shared-scorer", _none_and_five_right) as root:
        yield {"regressed": root / "right0", "holds": root / "right5"}


def _hand_count(folder: Path) -> dict[str, tuple[int, int]]:
    """Per task of the folder's logs: (samples scored C, samples), read by Inspect's own reader."""
    from inspect_ai.log import read_eval_log

    counts: dict[str, tuple[int, int]] = {}
    for file in sorted(folder.glob("*.eval")):
        log = read_eval_log(str(file))
        values = [sample.scores["match"].value for sample in log.samples or []]
        counts[log.eval.task] = (values.count("C"), len(values))
    return counts


def _counts(run: op.Run) -> dict[str, tuple[int, int]]:
    """Per criterion of ``run``: (rows that pass, rows)."""
    verdicts = run.verdicts
    return {str(name): (int((rows["verdict"] == "pass").sum()), len(rows))
            for name, rows in verdicts.groupby("criterion", sort=False)}


def _release(where: Path, name: str, criteria: str) -> Path:
    """A release.yaml ``name`` in the folder ``where`` gating ``criteria`` (the text of a YAML flow mapping)."""
    release = where / f"{name}.yaml"
    release.write_text(f"criteria: {{{criteria}}}\nallow_approximate_methods: true\n", encoding="utf-8")
    return release


def test_two_tasks_sharing_a_scorer_are_a_criterion_each(folders: dict[str, Path]) -> None:
    """One criterion ``match`` held both tasks' 86 rows; now ``bulk/match`` and ``small/match`` hold each task's
    own, as Inspect's reader counts them, and each scorer's options are its task's."""
    folder = folders["regressed"]
    hand = _hand_count(folder)
    assert hand == {"bulk": (BULK, BULK), "small": (0, SMALL)}
    run = op.from_inspect(folder)
    assert run.criteria == ["bulk/match", "small/match"]
    assert _counts(run) == {f"{task}/match": counted for task, counted in hand.items()}
    verdicts = run.verdicts
    small = verdicts[verdicts["criterion"] == "small/match"]
    assert set(small["case_id"]) == {f"s{i}" for i in range(SMALL)}
    assert [(e.criterion, e.options) for e in run.config.evaluators] == [("bulk/match", ""), ("small/match", "")]


def test_the_gate_fails_the_task_that_fails(folders: dict[str, Path], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Gated per task: ``small/match`` 0 of 6 has ci_high below 0.8 (FAIL), ``bulk/match`` 80 of 80 ci_low above it
    (PASS); the gate BLOCKs, the command exits 1. The pool of 80 of 86 would have passed (ci_low above 0.8)."""
    folder = folders["regressed"]
    assert stats.beta.ppf(0.025, BULK, SMALL + 1) > THRESHOLD  # the pooled criterion passed
    gate = op.gate(op.from_inspect(folder), release=SPLIT)
    table = gate.table.set_index("criterion")
    small, bulk = table.loc["small/match"], table.loc["bulk/match"]
    assert (small["n"], small["passed"], small["verdict"]) == (SMALL, 0, "FAIL")
    assert small["ci_high"] == pytest.approx(stats.beta.ppf(0.975, 1, SMALL), abs=1e-9)
    assert small["ci_high"] < THRESHOLD
    assert (bulk["n"], bulk["passed"], bulk["verdict"]) == (BULK, BULK, "PASS")
    assert bulk["ci_low"] == pytest.approx(stats.beta.ppf(0.025, BULK, 1), abs=1e-9)
    assert gate.verdict == "BLOCK"
    release = _release(tmp_path, "split", f"bulk/match: {THRESHOLD}, small/match: {THRESHOLD}")
    capsys.readouterr()
    assert main(["gate", str(folder), "--release", str(release)]) == 1
    out = capsys.readouterr().out
    assert any(line.startswith("| small/match") and line.rstrip().endswith("| FAIL    |") for line in out.splitlines())


def test_the_pooled_name_is_an_error_listing_each_tasks_criterion(
        folders: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A release.yaml that names ``match`` (as the pooled criterion was named) must not pass silently: the gate, the
    command and the report refuse it in one line naming the key and listing the per-task criteria (exit 2); so does a
    ``pass_threshold`` mapping naming it, while one naming a task's criterion reads."""
    folder = folders["regressed"]
    release = _release(tmp_path, "pooled", f"match: {THRESHOLD}")
    run = op.from_inspect(folder)
    with pytest.raises(op.OloproofError) as raised:
        op.gate(run, release=str(release))
    message = str(raised.value)
    assert "criteria.match: no such criterion in the run" in message
    assert "a criterion per task, named <task>/match" in message
    assert message.endswith("its criteria: bulk/match, small/match")
    capsys.readouterr()
    for command in (["gate", str(folder), "--release", str(release)],
                    ["report", str(folder), "--release", str(release), "--out", str(tmp_path / "r.html")]):
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert err == f"oloproof: error: {message}\n", command
    assert not (tmp_path / "r.html").exists()
    with pytest.raises(op.OloproofError, match=r"^pass_threshold\['match'\]=0.5: these logs have no criterion "
                                               r"'match' \(the samples of several tasks .*; their criteria: "
                                               r"bulk/match, small/match$"):
        op.from_inspect(folder, pass_threshold={"match": 0.5})
    assert run.criteria == op.from_inspect(folder, pass_threshold={"small/match": 0.5}).criteria


def test_one_tasks_log_keeps_the_scorers_name(folders: dict[str, Path]) -> None:
    """A log of one task is read as before: its criterion is ``match``, its rows the log's own."""
    (small,) = [f for f in folders["regressed"].glob("*.eval") if "_small_" in f.name]
    run = op.from_inspect(small)
    assert run.criteria == ["match"]
    assert _counts(run) == {"match": (0, SMALL)}


def test_compare_pairs_each_tasks_criterion(folders: dict[str, Path]) -> None:
    """``op.compare`` of two such folders compares per task: ``small/match`` lost 5 of its 6 passes (5 of 6 right
    in the base, none in the candidate), ``bulk/match`` none of its 80."""
    assert _hand_count(folders["holds"]) == {"bulk": (BULK, BULK), "small": (5, SMALL)}
    table = op.compare(op.from_inspect(folders["holds"]), op.from_inspect(folders["regressed"])).table
    table = table.set_index("criterion")
    assert list(table.index) == ["bulk/match", "small/match"]
    assert tuple(table.loc["small/match", ["n", "pass_to_fail", "fail_to_pass"]]) == (SMALL, 5, 0)
    assert table.loc["small/match", "base_rate"] == pytest.approx(5 / SMALL)
    assert table.loc["small/match", "candidate_rate"] == 0
    assert tuple(table.loc["bulk/match", ["n", "pass_to_fail", "fail_to_pass"]]) == (BULK, 0, 0)


def test_a_tasks_criterion_named_as_another_criterion_is_refused() -> None:
    """Task ``a``'s share of ``match`` is ``a/match``, the name a dict-valued scorer ``a`` gives its key ``match``
    when another scorer is named so: two criteria under one name would pool their rows, so the logs are refused
    naming both scorers (a unit test of the naming: no real logs hold this)."""
    from oloproof_nb._analysis.inspect_records import Reader

    reader = Reader(None, None, None, None)
    reader.task_of = {0: "a", 1: "b"}
    reader.scores = {0: [("match", "C"), ("a", {"match": "C"})], 1: [("match", "I")]}
    reader.keys, reader.task_keys = {"a": {"match": None}}, {("a", "a"): {"match"}}
    reader.base = {("match", None): "match", ("a", "match"): "a/match"}
    with pytest.raises(op.OloproofError, match=r"^these logs have two criteria named 'a/match' \(of scorer 'match' "
                                               r"and of scorer 'a'; "):
        reader._split_by_task([{"index": 0}, {"index": 1}], [["match", "a"], ["match"]])  # type: ignore[list-item]
    reader.base = {("match", None): "match", ("a", "match"): "match2"}
    reader._split_by_task([{"index": 0}, {"index": 1}], [["match", "a"], ["match"]])  # type: ignore[list-item]
    assert list(reader.criteria) == ["a/match", "b/match", "match2"]
    assert reader.tasks_of == {"a/match": ["a"], "b/match": ["b"], "match2": ["a"]}
