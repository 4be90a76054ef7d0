"""Review F56: Inspect AI scores edited by hand with no provenance are said as R55's signed edits are.

``ScoreEdit.provenance`` is optional (its default is None, the value Inspect gives the scorer's original kept in the
score's ``history``), so ``edit_score(log, "p27", "graded", ScoreEdit(value="C"))`` is an edit that names nobody.
R55's warning looked only for history entries with a provenance: 27 of 30 pass (INSUFFICIENT_EVIDENCE at 0.8, the
Clopper-Pearson interval of 27 of 30 by scipy's beta quantiles 0.734-0.979); the 3 failing scores edited from ``I``
to ``C`` with no provenance gated 30 of 30 (0.884-1.000), PASS, exit 0, without a word. Now such edits are said, as
is a score added by an unsigned edit; an unsigned edit that puts the scorer's own value back is not.

The logs are made for real with the mockllm model by this file run as a script (``python THIS ROOT``), in its own
process, as ``tests/_analysis/test_inspect_logs_r55.py`` does, and edited by Inspect's own ``edit_score``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest


def _write(root: Path) -> None:  # pragma: no cover - run in a child process
    """ROOT/graded (27 C, 3 I) and its copies edited with no provenance: ROOT/unsigned (p27-p29 to C), ROOT/added
    (a ``review`` score added to p3), ROOT/back (p29 to C, then back to I). Each copy is written only when the
    installed inspect-ai has ``edit_score``."""
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
            return Score(value=state.metadata["grade"])

        return score

    def policy(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        out = ModelOutput.from_content("mockllm/model", "ok")
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    task = Task(dataset=[Sample(id=f"p{i}", input=f"Question {i}.", target="ok", metadata={"grade": grade})
                         for i, grade in enumerate("C" * 27 + "I" * 3)], solver=generate(), scorer=graded(),
                name="picked")
    made = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=policy), log_dir=str(root / "graded"),
                        display="none", max_samples=8)[0]
    assert made.status == "success"
    if not hasattr(inspect_log, "edit_score"):
        return
    from inspect_ai.scorer import ScoreEdit

    edits = {"unsigned": [("p27", "graded", "C"), ("p28", "graded", "C"), ("p29", "graded", "C")],
             "added": [("p3", "review", "C")],
             "back": [("p29", "graded", "C"), ("p29", "graded", "I")]}
    for folder, changes in edits.items():
        log = read_eval_log(str(made.location))
        for sid, name, value in changes:
            inspect_log.edit_score(log, sid, name, ScoreEdit(value=value))  # no provenance: ScoreEdit's default
        (root / folder).mkdir()
        write_eval_log(log, str(root / folder / Path(str(made.location)).name))


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("inspect_ai")
    root = tmp_path_factory.mktemp("inspect-f56")
    env = {**os.environ, "INSPECT_DISPLAY": "none", "XDG_DATA_HOME": str(root / "xdg"), "NO_PROXY": "*"}
    done = subprocess.run([sys.executable, __file__, str(root)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return root


def _edit_warnings(folder: Path) -> tuple[list[str], object]:
    import oloproof_nb as op

    if not folder.is_dir():
        pytest.skip(f"this inspect-ai release cannot write the {folder.name} log")
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
    said, _ = _edit_warnings(logs / "added")
    assert len(said) == 1, said
    assert "1 score(s) of scorer 'review'" in said[0] and "sample 'p3' epoch 1 from None to 'C'" in said[0]


def test_an_unsigned_inspect_edit_put_back_is_not_said(logs: Path) -> None:
    said, run = _edit_warnings(logs / "back")
    assert said == []
    assert int((run.verdicts.verdict == "pass").sum()) == 27  # type: ignore[attr-defined]


if __name__ == "__main__":  # pragma: no cover - the logs, in a child process of the fixture
    _write(Path(sys.argv[1]))
