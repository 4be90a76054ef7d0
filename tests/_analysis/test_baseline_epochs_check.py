"""A baseline of fewer epochs than a criterion's ``pass^k`` needs is refused whichever row of the gate's table that
criterion is on: here the second, after a criterion gated by its mean (which any baseline's epochs give)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op

CASES = [{"id": f"c{i}", "input": {"answer": "done", "writes": []},
          "initial_state": {"acct": {"n": 0}, "other": {"k": i}},
          "expected": {"answer": "done", "state": {"acct": {"n": 0}}}} for i in range(3)]
EVALUATORS = [{"type": "answer_matches"}, {"type": "state_matches"}]


def test_a_reduced_criterion_after_a_mean_one_is_checked(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    suite = make_suite(CASES, evaluators=EVALUATORS, release={"criteria": {"answer_matches": 0.3,
                                                                            "state_matches": 0.3}})
    idle = op.baseline(suite, progress=False)
    assert idle.run.epochs == 1
    run = op.run(suite, out=tmp_path / "run", epochs=2, progress=False)
    criteria = {"answer_matches": 0.3, "state_matches": {"threshold": 0.3, "reduce": "pass^2"}}
    assert op.gate(run, criteria=criteria).table["criterion"].tolist() == ["answer_matches", "state_matches"]
    with pytest.raises(op.OloproofError, match=r"the baseline has epochs=1, and state_matches is gated with reduce: "
                                               r"pass\^2, which needs 2 epochs of each case"):
        op.gate(run, baseline=idle, criteria=criteria)
