"""A real Inspect AI log of two scorers on two scales, for the per-criterion ``pass_threshold`` tests.

``python tests/_inspect_rated_log.py LOG_DIR`` (run in a child process of its own by :func:`write_rated`): a task
``rated`` of eight samples (``ROWS``), one epoch, the mockllm model, three scorers that return each sample's
metadata as its score: ``rating`` (a 1-10 rating, Inspect's ``mean``), ``exact`` (1.0 / 0.0, ``accuracy``) and
``checks``, a dict-valued scorer (``{"correct": "C"/"I", "quality": 1-10}``, one metric per key: the criteria
``correct`` and ``quality``). The verdicts are known by hand from ``ROWS``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from _inspect_logs import run_inspect, shared_logs

#: Per sample ``q0`` … ``q7``: (rating, exact, correct, quality). By hand: ratings at or above 7 are 9, 7, 10 and
#: 7.0 (4 of 8; 6.9 just below); exact is 1.0 five times; quality at or above 7 is 8, 7, 10 and 7 (4 of 8).
ROWS: list[tuple[float, float, str, int]] = [
    (9, 1.0, "C", 8), (7, 0.0, "C", 6), (6.9, 1.0, "I", 7), (3, 1.0, "C", 2),
    (10, 0.0, "I", 10), (1, 1.0, "C", 1), (7.0, 0.0, "I", 5), (2, 1.0, "C", 7),
]


def write_rated(root: Path) -> Path:
    """Write the ``rated`` log under ``root`` (Inspect's data there too) and return the ``.eval`` file."""
    run_inspect([__file__, str(root / "logs")], root)
    (file,) = sorted((root / "logs").glob("*.eval"))
    return file


@contextmanager
def shared_rated(factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The ``.eval`` file of :func:`write_rated`, made once per test session whichever module or xdist worker asks
    first (``tests/_inspect_logs.py``'s ``shared_logs``); a module-scoped fixture yields inside it. Read only."""
    with shared_logs(factory, "rated", write_rated) as root:
        (file,) = sorted((root / "logs").glob("*.eval"))
        yield file


def main(log_dir: str) -> None:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, Target, accuracy, mean, scorer
    from inspect_ai.solver import TaskState, generate

    @scorer(metrics=[mean()])
    def rating():  # type: ignore[no-untyped-def]
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=state.metadata["rating"])

        return score

    @scorer(metrics=[accuracy()])
    def exact():  # type: ignore[no-untyped-def]
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=state.metadata["exact"])

        return score

    @scorer(metrics={"correct": [accuracy()], "quality": [mean()]})
    def checks():  # type: ignore[no-untyped-def]
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value={"correct": state.metadata["correct"], "quality": state.metadata["quality"]})

        return score

    def policy(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        out = ModelOutput.from_content("mockllm/model", "ok")
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no token counting (offline)
        return out

    samples = [Sample(id=f"q{i}", input=f"Question {i}.", target="ok",
                      metadata={"rating": r, "exact": e, "correct": c, "quality": q})
               for i, (r, e, c, q) in enumerate(ROWS)]
    task = Task(dataset=samples, solver=generate(), scorer=[rating(), exact(), checks()], name="rated")
    logs = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=policy), log_dir=log_dir,
                        display="none", max_samples=8)
    assert logs[0].status == "success", logs[0].status


if __name__ == "__main__":
    main(sys.argv[1])
