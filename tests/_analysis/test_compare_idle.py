"""A do-nothing baseline given to ``op.compare`` or ``oloproof compare`` as either run is refused, by both alike.

The baseline (``op.baseline``, system ``oloproof-noop``) is no version of the agent. Given as the candidate, the
Python comparison said REGRESSION (the idle agent fails what the agent passes) while ``oloproof compare`` of the same
folders refused it, exit 2; given as the base, any agent cleared it. Both now refuse it with one message, naming the
baseline's folder and where it belongs (the gate's ``baseline=``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.cli import main


@pytest.fixture
def agent_and_idle(make_suite: Callable[..., Path], tmp_path: Path) -> tuple[op.Run, op.Run]:
    cases = [{"id": f"c{i:02d}", "input": {"answer": "ok"}, "initial_state": {"n": i},
              "expected": {"answer": "ok"}} for i in range(24)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release={"regression": {"margin": 0.1}})
    suite = op.load_suite(root)
    agent = op.run(suite, out=tmp_path / "agent", progress=False)
    idle = op.baseline(suite, progress=False).run
    return agent, idle


def _idle_message(idle: op.Run, side: str) -> str:
    return (f"{idle.directory}: the {side} run {idle.run_id} is the do-nothing baseline (system oloproof-noop), not a "
            "version of the agent, so a comparison with it decides nothing; compare two runs of the agent, and give "
            "the baseline to the gate (op.gate(run, baseline=...), oloproof gate --baseline)")


def test_compare_refuses_the_do_nothing_baseline_as_either_run(agent_and_idle: tuple[op.Run, op.Run]) -> None:
    agent, idle = agent_and_idle
    assert (agent.verdicts["verdict"] == "pass").sum() == 24  # 24 of 24 answers right
    assert (idle.verdicts["verdict"] == "fail").sum() == 24  # the idle agent answers nothing: 24 of 24 fail
    with pytest.raises(op.OloproofError) as candidate:
        op.compare(agent, idle)  # before: REGRESSION, answer_matches -1.0
    assert str(candidate.value) == _idle_message(idle, "candidate")
    with pytest.raises(op.OloproofError) as base:
        op.compare(idle.directory, agent.directory)
    assert str(base.value) == _idle_message(idle, "base")


def test_oloproof_compare_refuses_it_with_the_same_message(agent_and_idle: tuple[op.Run, op.Run],
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    agent, idle = agent_and_idle
    assert main(["compare", str(agent.directory), str(idle.directory)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [f"oloproof: error: {_idle_message(idle, 'candidate')}"]
