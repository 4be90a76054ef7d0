"""A score a person added to an Inspect AI log after the eval, under a name no scorer of the eval gave.

``edit_score(log, "p0", "review", ScoreEdit(value="C", metadata={"note": "mine"}))`` adds a score ``review`` to a
sample; its ``history`` starts with that edit. Edited again after (``ScoreEdit(explanation="checked")``) and written
to the log (``exclude_none``: the provenance left out reads back as None), the history reads exactly as a scorer's
score that ``edit_score`` kept (its first entry unsigned, with a metadata dict) and never changed. So 30 scores added
as ``C`` by hand to a task whose only scorer, ``graded``, passes 27 of 30, were read as a criterion ``review`` never
edited: ``criteria: {review: 0.85}`` gated 30 of 30 (Clopper-Pearson 0.884-1.000, scipy's beta quantiles), PASS,
exit 0, without a word. Added as ``I`` and then edited to ``C``, the warning said "from 'I' to 'C'", an ``I`` no
scorer gave. The history alone cannot tell them apart; the eval can: its header's ``eval.scorers`` names its scorers
and each sample's ``score`` events the scores it gave (a solver's ``state.scores`` too), while ``edit_score`` records
a ``score_edit`` event. A score under another name is made by hand: warned, and no criterion (a release naming it is
refused, exit 2).

The logs are made for real with the mockllm model by this file run as a script (``python THIS ROOT``), in its own
process as ``tests/_inspect_logs.py`` does, and each edited log is written with Inspect's ``write_eval_log``.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _inspect_logs import made, read_by_hand, run_inspect, shared_logs

#: The ``graded`` scorer's grades of the 30 samples: 27 pass.
GRADES = "C" * 27 + "I" * 3


def _write(root: Path) -> None:  # pragma: no cover - run in a child process
    """ROOT/graded (scorer ``graded``; the solver also sets a score ``self_check`` on each sample, C), and the
    graded log with a ``review`` score added by hand to every sample: ROOT/noted (``C`` with a metadata dict, then
    an edit of the explanation alone), ROOT/flipped (``I`` with a metadata dict, then ``C``)."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai import log as inspect_log
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, Target, accuracy, scorer
    from inspect_ai.solver import Generate, TaskState, generate, solver

    @scorer(metrics=[accuracy()])
    def graded():  # type: ignore[no-untyped-def]
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=state.metadata["grade"])

        return score

    @solver
    def checked():  # type: ignore[no-untyped-def]
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            state.scores = {"self_check": Score(value="C")}  # a score the eval's solver gives: the eval's own
            return state

        return solve

    def policy(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        out = ModelOutput.from_content("mockllm/model", "ok")
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    task = Task(dataset=[Sample(id=f"p{i}", input=f"Question {i}.", target="ok", metadata={"grade": grade})
                         for i, grade in enumerate(GRADES)], solver=[generate(), checked()], scorer=graded(),
                name="picked")
    logs = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=policy), log_dir=str(root / "graded"),
                        display="none", max_samples=8)
    assert logs[0].status == "success"
    path = str(logs[0].location)
    if not hasattr(inspect_log, "edit_score"):
        return
    from inspect_ai.scorer import ScoreEdit

    for folder, edits in {"noted": [ScoreEdit(value="C", metadata={"note": "mine"}), ScoreEdit(explanation="checked")],
                          "flipped": [ScoreEdit(value="I", metadata={"note": "mine"}), ScoreEdit(value="C")]}.items():
        log = read_eval_log(path)
        for i in range(len(GRADES)):
            for edit in edits:  # the metrics recomputed once below (each edit's own recompute took 20 s in all)
                inspect_log.edit_score(log, f"p{i}", "review", edit.model_copy(), recompute_metrics=False)
        if hasattr(inspect_log, "recompute_metrics"):  # as edit_score's default does: results list 'review' then
            inspect_log.recompute_metrics(log)
        (root / folder).mkdir()
        write_eval_log(log, str(root / folder / f"{Path(path).stem}.json"))


def _made_by_a_child(root: Path) -> None:
    run_inspect([__file__, str(root)], root)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The logs :func:`_write` makes, in a child process, once per test session (read only: a test edits a copy)."""
    pytest.importorskip("inspect_ai")
    with shared_logs(tmp_path_factory, "unknown-scorer", _made_by_a_child) as root:
        yield root


def _gate(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], criterion: str) -> tuple[int, str, str]:
    from oloproof_nb.cli import main

    release = tmp_path / "release.yaml"
    release.write_text(f"criteria: {{{criterion}: 0.85}}\nallow_approximate_methods: true\n", encoding="utf-8")
    code = main(["gate", str(folder), "--release", str(release)])
    out, err = capsys.readouterr()
    return code, out, err


def test_inspect_scores_added_by_hand_and_edited_again_are_said_and_never_gated(
        logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """30 ``review`` scores added as C (a metadata dict), then their explanations edited: before, no word, and
    ``review: 0.85`` PASSed, 30 of 30 (exit 0). Now a warning, no ``review`` rows, and the release is refused."""
    said, run = read_by_hand(logs / "noted")
    assert len(said) == 1, said
    assert "30 score(s) under 'review', a name no scorer of the eval gave, were added by hand" in said[0]
    assert "the first sample 'p0' epoch 1 as 'C' by an edit that names no author" in said[0]
    verdicts = run.verdicts  # type: ignore[attr-defined]
    assert set(verdicts.criterion) == {"graded", "self_check"}
    assert int((verdicts[verdicts.criterion == "graded"].verdict == "pass").sum()) == GRADES.count("C")
    code, out, err = _gate(logs / "noted", tmp_path, capsys, "review")
    assert code == 2 and "PASS" not in out
    assert "criteria.review: no such criterion in the run (no scorer of the eval gave a score under 'review'" in err
    code, out, err = _gate(logs / "noted", tmp_path, capsys, "graded")  # 27 of 30, as the scorer gave them
    assert code == 1 and "| graded     | 30 | 27 " in out and "added by hand" in err


def test_an_inspect_score_added_as_i_then_edited_to_c_is_said_as_added_not_changed(logs: Path) -> None:
    """Added as I (with a metadata dict), then edited to C: it said "from 'I' to 'C'", an I no scorer gave."""
    said, run = read_by_hand(logs / "flipped")
    assert len(said) == 1, said
    assert "under 'review', a name no scorer of the eval gave" in said[0] and "as 'C'" in said[0]
    assert "from 'I'" not in said[0]
    assert "review" not in set(run.verdicts.criterion)  # type: ignore[attr-defined]


def test_a_score_the_inspect_solver_set_is_the_evals_own(logs: Path) -> None:
    """``self_check``, which no scorer declares but the eval's solver set (``state.scores``; a ``score`` event names
    it), is a criterion, as before, and nothing is said: 30 of 30."""
    said, run = read_by_hand(logs / "graded")
    assert said == []
    verdicts = run.verdicts  # type: ignore[attr-defined]
    assert int((verdicts[verdicts.criterion == "self_check"].verdict == "pass").sum()) == 30


def test_a_pass_threshold_naming_an_inspect_score_added_by_hand_is_refused(logs: Path) -> None:
    import oloproof_nb as op
    from oloproof_nb.errors import OloproofError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(OloproofError, match=r"no criterion 'review' \(no scorer of the eval gave a score"):
            op.from_inspect(made(logs / "noted"), pass_threshold={"review": 0.5})



# -- the names the eval gave, as the log's JSON holds them -----------------------------------------------------------
def _rewritten(logs: Path, tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> tuple[Path, dict[str, Any]]:
    """The ``noted`` log (JSON) edited by ``edit`` with the json module and written to a folder of its own: the
    folder and the log as written."""
    source = next(made(logs / "noted").glob("*.json"))
    log = json.loads(source.read_text(encoding="utf-8"))
    edit(log)
    folder = tmp_path / "rewritten"
    folder.mkdir()
    (folder / source.name).write_text(json.dumps(log), encoding="utf-8")
    return folder, log


def test_an_inspect_scorer_the_header_declares_is_the_evals_own_without_its_score_events(
        logs: Path, tmp_path: Path) -> None:
    """The header's ``eval.scorers`` alone makes ``graded`` the eval's (its samples' ``score`` events
    removed, and the ``scorers`` span that says the eval scored them, as a log of an Inspect that recorded no such
    span: with the span, only its score events' names are the eval's): 27 of 30 graded C, by the JSON;
    only ``review`` is said to be added by hand."""
    def no_graded_events(log: dict[str, Any]) -> None:
        spans = {e.get("id") for sample in log["samples"] for e in sample["events"]
                 if (e["event"], e.get("name"), e.get("type")) == ("span_begin", "scorers", "scorers")}
        assert spans  # the log has the span, or this test would not remove it
        for sample in log["samples"]:
            sample["events"] = [e for e in sample["events"] if (e["event"], e.get("scorer")) != ("score", "graded")
                                and not (e["event"] in ("span_begin", "span_end") and e.get("id") in spans)]

    folder, log = _rewritten(logs, tmp_path, no_graded_events)
    assert [scorer["name"] for scorer in log["eval"]["scorers"]] == ["graded"]
    grades = [sample["scores"]["graded"]["value"] for sample in log["samples"]]
    said, run = read_by_hand(folder)
    assert len(said) == 1 and "30 score(s) under 'review'" in said[0], said
    verdicts = run.verdicts  # type: ignore[attr-defined]
    assert int((verdicts[verdicts.criterion == "graded"].verdict == "pass").sum()) == grades.count("C") == 27


def test_inspect_scores_added_to_an_eval_that_declares_no_scorer_and_gave_no_score_are_no_criterion(
        logs: Path, tmp_path: Path) -> None:
    """An eval with no scorer (no ``eval.scorers``, no ``score`` event) whose 30 samples a person
    scored by hand (``review``, edit_score): the eval gave no name at all, so ``review`` is said and no criterion
    (an empty set of the eval's names was taken for "cannot say", and 30 of 30 were gated)."""
    def unscored(log: dict[str, Any]) -> None:
        log["eval"].pop("scorers", None)
        for sample in log["samples"]:
            sample["events"] = [e for e in sample["events"] if e["event"] != "score"]
            sample["scores"] = {"review": sample["scores"]["review"]}

    folder, log = _rewritten(logs, tmp_path, unscored)
    assert sum(1 for sample in log["samples"] if "review" in sample["scores"]) == 30
    assert sum(1 for sample in log["samples"] for e in sample["events"] if e["event"] == "score") == 0
    said, run = read_by_hand(folder)
    assert len(said) == 1 and "30 score(s) under 'review', a name no scorer of the eval gave" in said[0], said
    assert run.criteria == [] and len(run.verdicts) == 0  # type: ignore[attr-defined]


def test_a_release_naming_another_unknown_criterion_of_an_inspect_run_with_scores_added_by_hand_gets_no_added_hint(
        logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A typo beside ``review`` in release.yaml is refused as a name the run does not have, not as a
    score added by hand (the hint is of the name refused, the first the release names). Its criteria, by the log's
    JSON: the header's scorer ``graded`` and the solver's ``self_check``."""
    from oloproof_nb.cli import main

    log = json.loads(next(made(logs / "noted").glob("*.json")).read_text(encoding="utf-8"))
    assert [scorer["name"] for scorer in log["eval"]["scorers"]] == ["graded"]
    release = tmp_path / "release.yaml"
    release.write_text("criteria: {graded_typo: 0.85, review: 0.85}\nallow_approximate_methods: true\n",
                       encoding="utf-8")
    code = main(["gate", str(logs / "noted"), "--release", str(release)])
    err = capsys.readouterr().err
    assert code == 2
    assert ("criteria.graded_typo: no such criterion in the run (did you mean graded?); its criteria: graded, "
            "self_check") in err, err

if __name__ == "__main__":  # pragma: no cover - the logs, in a child process of the fixture
    _write(Path(sys.argv[1]))
