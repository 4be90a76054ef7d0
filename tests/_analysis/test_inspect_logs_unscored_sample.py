"""A score added by hand to an Inspect AI log under a scorer's own name, on a sample it did not score.

A score under a name no scorer of the eval gave is left out (``test_inspect_logs_unknown_scorer.py``): the names were
the header's ``eval.scorers`` and those of each sample's ``score`` events. A scorer may give a sample no score (it
returns None: the sample is ``missing`` on it); ``edit_score(log, "p27", "graded", ScoreEdit(value="C", metadata=…))``
then an explanation edit (as there, the history then reads as a scorer's score never changed) put a ``C`` there under
the scorer's own name, which the header declares: read as the scorer's, 27 of 30 with 3 missing (BLOCK) became 30 of 30,
PASS (the exact 95% lower bound 0.025^(1/30) = 0.884 by hand, above 0.85), without a word. A sample the eval scored
holds its ``scorers`` span, and its final ``score`` events name every score it gave: the added ones are left out,
warned.

The logs are made for real with the mockllm model by this file run as a script (``python THIS ROOT``), in its own
process as ``tests/_inspect_logs.py`` does, and the edited log is written with Inspect's ``write_eval_log``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _inspect_logs import read_by_hand, run_inspect

#: The ``graded`` scorer's grades of the 30 samples: 27 pass, and 3 it gives no score (None).
GRADES = "C" * 27 + "N" * 3


def _write(root: Path) -> None:  # pragma: no cover - run in a child process
    """ROOT/graded (scorer ``graded``, None on p27..p29) and ROOT/handed: that log with ``graded`` added by hand to
    p27..p29 (``C`` with a metadata dict, then an edit of the explanation alone)."""
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
        async def score(state: TaskState, target: Target) -> Score | None:
            grade = state.metadata["grade"]
            return None if grade == "N" else Score(value=grade)

        return score

    def policy(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        out = ModelOutput.from_content("mockllm/model", "ok")
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    task = Task(dataset=[Sample(id=f"p{i}", input=f"Question {i}.", target="ok", metadata={"grade": grade})
                         for i, grade in enumerate(GRADES)], solver=[generate()], scorer=graded(), name="ungraded")
    logs = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=policy), log_dir=str(root / "graded"),
                        display="none", max_samples=8)
    assert logs[0].status == "success"
    path = str(logs[0].location)
    if not hasattr(inspect_log, "edit_score"):
        return
    from inspect_ai.scorer import ScoreEdit

    log = read_eval_log(path)
    for i, grade in enumerate(GRADES):
        if grade == "N":
            for edit in [ScoreEdit(value="C", metadata={"note": "mine"}), ScoreEdit(explanation="checked")]:
                inspect_log.edit_score(log, f"p{i}", "graded", edit, recompute_metrics=False)
    (root / "handed").mkdir()
    write_eval_log(log, str(root / "handed" / f"{Path(path).stem}.json"))


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("inspect_ai")
    root = tmp_path_factory.mktemp("inspect-f60")
    run_inspect([__file__, str(root)], root)
    return root


def test_inspect_scores_added_by_hand_under_a_scorers_name_where_it_gave_none_are_left_out(logs: Path) -> None:
    import oloproof_nb as op

    said, run = read_by_hand(logs / "graded")
    assert said == []
    assert op.gate(run, criteria={"graded": 0.85}).table.loc[0, ["n", "passed", "missing"]].tolist() == [30, 27, 3]
    said, run = read_by_hand(logs / "handed")
    assert len(said) == 1, said
    assert ("3 score(s) under 'graded' were added by hand after the eval (Inspect's edit_score) to samples its "
            "scorer gave no score, the first sample 'p27' epoch 1 as 'C'") in said[0]
    g = op.gate(run, criteria={"graded": 0.85})
    assert g.verdict == "BLOCK" and g.table.loc[0, ["n", "passed", "missing"]].tolist() == [30, 27, 3]


if __name__ == "__main__":  # pragma: no cover - the logs, in a child process of the fixture
    _write(Path(sys.argv[1]))
