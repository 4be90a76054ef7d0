"""Inspect AI logs whose samples ran under more than one setting gated as one run.

- **Shards at different epochs.** A task of 60 samples run as two shards, ``limit=(0, 30)`` at 10 epochs and
  ``limit=(30, 60)`` at 2: the first 30 pass every epoch, the others pass epoch 1 and fail epoch 2. Each sample's
  epochs are its rows, so the first 30 weighed five times as much: 330 of 360 rows, 0.917, ci_low 0.838, PASS at 0.8
  (exit 0), where each sample's own rate averages 0.75 (a t interval over the 60 per-sample rates, by scipy:
  0.685-0.815) and the same shards at 2 epochs each gate 90 of 120 (0.75), BLOCK. Now logs of one task at different
  epochs are refused (exit 2), naming both logs and ``eval.config.epochs``.
- **A limit retuned while the eval ran.** ``inspect ctl config --message-limit`` (``--time-limit``, ``--token-limit``)
  changes a running eval's sample limits; the log records it in ``config_updates`` and its header keeps the launch
  value, so its samples ran under two settings of the agent, which oloproof refuses between logs. Such a log was gated
  as one agent (20 of 20, PASS, exit 0); now it is refused (exit 2). A retune of how the eval ran (``max_samples``)
  decides nothing and is still read.
- **An infinite score.** A rating judge whose grade is read by ``float()`` (``Rating: inf``) gives ``inf``: at
  ``--pass-threshold 7`` it passed. 30 samples, 24 rated 9 and 6 rated ``inf``, gated 30 of 30 (ci_low 0.884, PASS
  at 0.85, exit 0); a careful reader counts 24 ratings that pass, 0.8, whose Clopper-Pearson interval (scipy's beta
  quantiles) is 0.614-0.923. Now ±inf is ``missing``, as NaN is: 24 of 30, BLOCK.
- **Scores edited by hand.** Inspect's ``edit_score`` changes a score after the eval and keeps the scorer's value and
  each edit (who, why) in the score's ``history``. 27 of 30 pass (BLOCK at 0.85); the 3 failing scores edited from
  ``I`` to ``C`` ("close enough") gated 30 of 30, PASS, exit 0, without a word. The verdicts are still of the
  values now (a reviewer may correct a grader), but reading such a log now warns, naming the scorer, how many scores
  were edited and the first edit; edits that name nobody too (``ScoreEdit``'s provenance is optional,
  and three unsigned ``I`` → ``C`` edits gated 30 of 30, PASS, without a word).

The logs are made for real with the mockllm model by this file run as a script (``python THIS ROOT``), in its own
process as ``tests/_inspect_logs.py`` does; the retuned copies add the ``config_updates`` record Inspect writes
(``ConfigUpdate``), which a running control channel is needed to produce.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from _inspect_logs import made, run_inspect, shared_logs

#: The grades of the 60 samples: C passes every epoch, H passes odd epochs and fails even ones.
GRADES = "C" * 30 + "H" * 30
#: The ``rated`` task's judge grades, as the judge wrote them (read by ``float()``): 24 nines and 6 ``inf``.
RATINGS = ["9"] * 24 + ["inf"] * 6


def _write(root: Path) -> None:  # pragma: no cover - run in a child process
    """The logs (see the module): ROOT/weighted, ROOT/even, ROOT/one, ROOT/retuned, ROOT/operational, ROOT/rated,
    ROOT/graded, ROOT/edited, and ROOT/graded's copies edited with no provenance: ROOT/unsigned (p27-p29 to C),
    ROOT/added (a ``review`` score added to p3), ROOT/back (p29 to C, then back to I)."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai import log as inspect_log
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, Target, accuracy, scorer
    from inspect_ai.solver import TaskState, generate

    @scorer(metrics=[accuracy()])
    def graded():  # type: ignore[no-untyped-def]
        async def score(state: TaskState, target: Target) -> Score:
            grade = state.metadata["grade"]
            return Score(value=("C" if state.epoch % 2 else "I") if grade == "H" else grade)

        return score

    @scorer(metrics=[accuracy()])
    def rating():  # type: ignore[no-untyped-def]
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=float(state.metadata["grade"]))  # a judge's "Rating: <text>" read by float()

        return score

    def policy(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        out = ModelOutput.from_content("mockllm/model", "ok")
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    model = get_model("mockllm/model", custom_outputs=policy)

    def run(folder: str, grades: str, limit: tuple[int, int], epochs: int) -> str:
        task = Task(dataset=[Sample(id=f"p{i}", input=f"Question {i}.", target="ok", metadata={"grade": grade})
                             for i, grade in enumerate(grades)], solver=generate(), scorer=graded(), name="picked")
        logs = inspect_eval(task, model=model, log_dir=str(root / folder), display="none", max_samples=8,
                            limit=limit, epochs=epochs)
        assert logs[0].status == "success"
        return str(logs[0].location)

    for folder, epochs in (("weighted", (10, 2)), ("even", (2, 2))):
        run(folder, GRADES, (0, 30), epochs[0])
        run(folder, GRADES, (30, 60), epochs[1])
    one = run("one", "C" * 20, (0, 20), 1)
    # an inspect-ai release before config_updates (or edit_score) writes no such log: its tests are skipped
    retunes = (("retuned", "message_limit", 100), ("operational", "max_samples", 2))
    for folder, name, value in retunes if hasattr(inspect_log, "ConfigUpdate") else ():
        log = read_eval_log(one)
        log.config_updates = [inspect_log.ConfigUpdate(
            changes=[inspect_log.ConfigValueChange(config="eval", name=name, value=value)], scope="task",
            provenance=inspect_log.ProvenanceData(author="ops", reason="samples kept hitting the limit"))]
        (root / folder).mkdir()
        write_eval_log(log, str(root / folder / Path(one).name))
    rated = Task(dataset=[Sample(id=f"r{i}", input=f"Question {i}.", target="ok", metadata={"grade": grade})
                          for i, grade in enumerate(RATINGS)], solver=generate(), scorer=rating(), name="rated")
    assert inspect_eval(rated, model=model, log_dir=str(root / "rated"), display="none", max_samples=8)[0].status \
        == "success"
    graded_path = run("graded", "C" * 27 + "I" * 3, (0, 30), 1)
    graded_log = read_eval_log(graded_path)
    if not hasattr(inspect_log, "edit_score"):
        return
    from inspect_ai.scorer import ScoreEdit

    for sid in ("p27", "p28", "p29"):
        inspect_log.edit_score(graded_log, sid, "graded", ScoreEdit(value="C", provenance=inspect_log.ProvenanceData(
            author="dev", reason="close enough")))
    inspect_log.edit_score(graded_log, "p0", "graded", ScoreEdit(
        explanation="checked", provenance=inspect_log.ProvenanceData(author="dev")))
    (root / "edited").mkdir()
    write_eval_log(graded_log, str(root / "edited" / Path(graded_log.location).name))
    # edits that name nobody (ScoreEdit's provenance defaults to None), each on the unedited log
    unsigned = {"unsigned": [("p27", "graded", "C"), ("p28", "graded", "C"), ("p29", "graded", "C")],
                "added": [("p3", "review", "C")],
                "back": [("p29", "graded", "C"), ("p29", "graded", "I")]}
    for folder, changes in unsigned.items():
        log = read_eval_log(graded_path)
        for sid, name, value in changes:
            inspect_log.edit_score(log, sid, name, ScoreEdit(value=value))
        (root / folder).mkdir()
        write_eval_log(log, str(root / folder / Path(graded_path).name))


def _made_by_a_child(root: Path) -> None:
    run_inspect([__file__, str(root)], root)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The logs :func:`_write` makes, in a child process, once per test session (read only: a test edits a copy)."""
    pytest.importorskip("inspect_ai")
    with shared_logs(tmp_path_factory, "mixed-settings", _made_by_a_child) as root:
        yield root


def _gate(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], threshold: float,
          criterion: str = "graded", *more: str) -> tuple[int, str, str]:
    from oloproof_nb.cli import main

    release = tmp_path / "release.yaml"
    release.write_text(f"criteria: {{{criterion}: {threshold}}}\nallow_approximate_methods: true\n", encoding="utf-8")
    code = main(["gate", str(folder), "--release", str(release), *more])
    out, err = capsys.readouterr()
    return code, out, err


def test_shards_of_one_task_at_different_epochs_are_refused(logs: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Pooled, the 30 samples at 10 epochs outweighed the 30 at 2: 330 of 360 rows, PASS at 0.8 (exit 0)."""
    files = sorted((logs / "weighted").glob("*.eval"))
    assert len(files) == 2
    code, out, err = _gate(logs / "weighted", tmp_path, capsys, 0.8)
    assert code == 2 and "PASS" not in out
    line = err.strip()
    assert "\n" not in line and "Traceback" not in line
    assert "eval.config.epochs is " in line and all(f.name in line for f in files)
    assert "runs of different epochs" in line


def test_shards_at_one_number_of_epochs_are_read_as_one_run(logs: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The same shards at 2 epochs each: 30 × 2 + 30 × 1 = 90 of 120 rows (by hand), 0.75, no PASS at 0.8."""
    import oloproof_nb as op

    run = op.from_inspect(logs / "even")
    verdicts = run.verdicts
    assert len(verdicts) == 120 and int((verdicts.verdict == "pass").sum()) == 30 * 2 + 30 * 1
    code, out, _ = _gate(logs / "even", tmp_path, capsys, 0.8)
    assert code == 1 and "| graded    | 120 | 90 " in out


def test_a_log_whose_limit_was_retuned_while_it_ran_is_refused(logs: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """``config_updates`` changing ``message_limit``: the samples ran under two limits; before, 20 of 20, PASS."""
    import oloproof_nb as op
    from oloproof_nb.errors import OloproofError

    code, out, err = _gate(made(logs / "retuned"), tmp_path, capsys, 0.7)
    assert code == 2 and "PASS" not in out
    line = err.strip()
    assert "\n" not in line and "Traceback" not in line
    assert "message_limit was changed to 100 while it ran" in line and "config_updates" in line
    with pytest.raises(OloproofError, match="message_limit was changed to 100"):
        op.from_inspect(logs / "retuned")


def test_a_retune_of_how_the_eval_ran_decides_nothing(logs: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """``max_samples`` retuned: the same agent; the log and its unretuned original both PASS (20 of 20)."""
    for folder in ("one", "operational"):
        code, out, err = _gate(made(logs / folder), tmp_path, capsys, 0.7)
        assert code == 0 and "| graded    | 20 | 20 " in out, (folder, out, err)



def test_an_infinite_rating_is_no_score(logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """6 of 30 ratings are ``inf``: missing, so 24 of 30 pass at 7 (by hand) and the gate BLOCKs at 0.85, where
    30 of 30 passed (ci_low 0.884, scipy: the Clopper-Pearson bound of 30 of 30 is 0.025 ** (1 / 30))."""
    from scipy.stats import beta

    import oloproof_nb as op

    assert sum(float(r) >= 7 and float(r) != float("inf") for r in RATINGS) == 24
    assert beta.ppf(0.025, 24, 7) == pytest.approx(0.614, abs=5e-4) and 0.025 ** (1 / 30) > 0.85
    run = op.from_inspect(logs / "rated", pass_threshold=7)
    verdicts = run.verdicts.merge(run.cases[["case_id", "epoch"]], on=["case_id", "epoch"])
    assert verdicts.verdict.value_counts().to_dict() == {"pass": 24, "missing": 6}
    assert set(verdicts[verdicts.verdict == "missing"].case_id) == {f"r{i}" for i in range(24, 30)}
    code, out, err = _gate(logs / "rated", tmp_path, capsys, 0.85, "rating", "--pass-threshold", "7")
    assert code == 1 and "| rating    | 30 | 24   | 6 " in out, (out, err)



def test_scores_edited_by_hand_are_said(logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """3 scores edited from I to C: a warning naming the scorer, the count and the first edit; the unedited log and
    an edit of an explanation alone say nothing. By hand: 27 of 30 unedited, 30 of 30 edited."""
    import warnings

    import oloproof_nb as op

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        unedited = op.from_inspect(logs / "graded")
    assert int((unedited.verdicts.verdict == "pass").sum()) == 27
    with pytest.warns(UserWarning) as caught:
        edited = op.from_inspect(made(logs / "edited"))
    assert int((edited.verdicts.verdict == "pass").sum()) == 30
    said = [str(w.message) for w in caught if "changed by hand" in str(w.message)]
    assert len(said) == 1
    assert "3 score(s) of scorer 'graded' were changed by hand after the eval" in said[0]
    assert "sample 'p27' epoch 1 from 'I' to 'C' by 'dev' ('close enough')" in said[0]
    code, out, err = _gate(logs / "edited", tmp_path, capsys, 0.85)
    assert code == 0 and "changed by hand" in err


# -- Inspect AI scores edited by hand with no provenance -------------------------------------------------------
# ``ScoreEdit.provenance`` is optional (None, as Inspect gives the scorer's original kept in the score's ``history``),
# so ``edit_score(log, "p27", "graded", ScoreEdit(value="C"))`` names nobody. The edit warning once looked only for
# history entries with a provenance: 27 of 30 pass (INSUFFICIENT_EVIDENCE at 0.8; Clopper-Pearson by scipy's beta
# quantiles 0.734-0.979), and the 3 failing scores edited from I to C with no provenance gated 30 of 30 (0.884-1.000),
# PASS, exit 0, without a word. Such edits are said now, as is a score added by an unsigned edit; an unsigned edit that
# puts the scorer's own value back is not.


def _edit_warnings(folder: Path) -> tuple[list[str], object]:
    import oloproof_nb as op

    made(folder)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = op.from_inspect(folder)
    return [str(w.message) for w in caught if "changed by hand" in str(w.message)], run


def test_unsigned_inspect_edits_that_turn_fails_into_passes_are_said(logs: Path) -> None:
    said, run = _edit_warnings(logs / "unsigned")
    assert int((run.verdicts.verdict == "pass").sum()) == 30  # type: ignore[attr-defined]  # the values now decide
    assert len(said) == 1, said  # before: none
    assert "3 score(s) of scorer 'graded' were changed by hand after the eval" in said[0]
    assert "the first sample 'p27' epoch 1 from 'I' to 'C' by an edit that names no author" in said[0]
    unedited, _ = _edit_warnings(logs / "graded")
    assert unedited == []


def test_a_score_added_by_an_unsigned_inspect_edit_is_said(logs: Path) -> None:
    """``review`` is no scorer of the eval: said as added by hand, and no criterion."""
    import oloproof_nb as op

    made(logs / "added")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = op.from_inspect(logs / "added")
    said = [str(w.message) for w in caught if "by hand" in str(w.message)]
    assert len(said) == 1, said
    assert "1 score(s) under 'review', a name no scorer of the eval gave, were added by hand" in said[0]
    assert "the first sample 'p3' epoch 1 as 'C'" in said[0]
    assert set(run.verdicts.criterion) == {"graded"}


def test_an_unsigned_inspect_edit_put_back_is_not_said(logs: Path) -> None:
    said, run = _edit_warnings(logs / "back")
    assert said == []
    assert int((run.verdicts.verdict == "pass").sum()) == 27  # type: ignore[attr-defined]


if __name__ == "__main__":  # pragma: no cover - the logs, in a child process of the fixture
    _write(Path(sys.argv[1]))
