"""The pooled name of a scorer several tasks of Inspect AI logs share (each task has its criterion, ``<task>/<name>``).

- ``op.compare`` with ``regression.criteria: [match]`` on two such runs said only "'match' is not judged by both
  runs", where the gate and ``pass_threshold`` say why (each task has its own criterion): it now says so too.
- The README's numbers for the pooled criterion (300 of 300 beside 0 of 10) are those ``oloproof gate`` prints,
  Clopper–Pearson bounds rounded outward (scipy's beta quantiles): it said 0.941–0.984 and ci_high 0.308, where the
  command prints 0.941–0.985 and 0.000–0.309.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from _inspect_logs import run_inspect
from scipy import stats

import oloproof_nb as op

README = Path(__file__).resolve().parents[2] / "README.md"

#: One eval of two tasks scored by ``match()`` into each folder of ``argv[1:]`` (an eval of its own each, made in one
#: process: Inspect AI's import is most of a child's time): ``bulk`` (3 samples) answered right, ``small`` (2 samples)
#: answered wrong.
SCRIPT = """
import sys
from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

def policy(messages, tools, tool_choice, config):
    out = ModelOutput.from_content("mockllm/model", "yes" if messages[-1].text.startswith("bulk") else "no")
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out

tasks = [Task(dataset=[Sample(id=f"{name[0]}{i}", input=f"{name} {i}", target="yes") for i in range(n)],
              solver=[generate()], scorer=match(), name=name) for name, n in (("bulk", 3), ("small", 2))]
for log_dir in sys.argv[1:]:
    logs = inspect_eval(tasks, model=get_model("mockllm/model", custom_outputs=policy), log_dir=log_dir,
                        display="none")
    assert [log.status for log in logs] == ["success", "success"], logs
"""


def _logs(*folders: Path) -> tuple[Path, ...]:
    pytest.importorskip("inspect_ai")
    run_inspect(["-c", SCRIPT, *map(str, folders)], folders[0].parent)
    return folders


def test_compare_naming_the_pooled_name_in_regression_criteria_says_each_task_has_its_own(tmp_path: Path) -> None:
    """Mutant caught: the compare message without the hint the gate's message gives."""
    base, candidate = map(op.from_inspect, _logs(tmp_path / "base", tmp_path / "candidate"))
    assert candidate.criteria == ["bulk/match", "small/match"]
    release = {"criteria": {}, "regression": {"criteria": ["match"]}}
    with pytest.raises(op.OloproofError) as raised:
        op.compare(base, candidate, release=release)
    assert str(raised.value) == ("release: regression.criteria: 'match' is not judged by both runs (the samples of "
                                 "several tasks are scored under 'match': a criterion per task, named <task>/match); "
                                 "criteria of both: bulk/match, small/match")
    with pytest.raises(op.OloproofError, match=r"'nosuch' is not judged by both runs; criteria of both: "):
        op.compare(base, candidate, release={"criteria": {}, "regression": {"criteria": ["nosuch"]}})
    table = op.compare(base, candidate, release={"criteria": {}, "regression": {"criteria": ["small/match"]}}).table
    assert table.set_index("criterion").loc["small/match", "n"] == 2


def _outward(low: float, high: float) -> str:
    return f"{math.floor(low * 1000) / 1000:.3f}–{math.ceil(high * 1000) / 1000:.3f}"


def test_the_readme_numbers_of_the_pooled_tasks_are_the_gates() -> None:
    """300 of 310 pooled and 0 of 10 alone, 95% Clopper–Pearson from scipy, rounded outward as the gate prints them
    (``oloproof gate`` on such logs, run at cacf3d8 and now: ``0.941–0.985`` PASS; ``0.000–0.309`` FAIL)."""
    pooled = _outward(stats.beta.ppf(0.025, 300, 11), stats.beta.ppf(0.975, 301, 10))
    small_high = _outward(0.0, stats.beta.ppf(0.975, 1, 10)).split("–")[1]
    assert (pooled, small_high) == ("0.941–0.985", "0.309")
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert f"gated as 300 of 310, {pooled}, PASS at 0.9 (exit 0), although `small` alone has ci_high {small_high} " \
           in text
