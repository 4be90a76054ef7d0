"""``answer_matches`` (oloproof_nb/evaluators/answer.py) on a case that timed out."""

from __future__ import annotations

from oloproof_nb._core.case import case_from_mapping
from oloproof_nb._core.trajectory import Trajectory
from oloproof_nb.evaluators import AnswerMatches, CaseContext


def test_a_case_that_timed_out_is_missing_even_with_a_trajectory_that_holds_the_answer() -> None:
    """A case that timed out leaves all its verdicts ``missing``, the reason naming the timeout (DESIGN.md), even when
    the trajectory recorded before the timeout already holds the expected answer. (Mutant: only a missing trajectory
    made the verdict ``missing``, and this case passed.)"""
    case = case_from_mapping({"id": "c1", "input": {}, "expected": {"answer": "refunded"}})
    ctx = CaseContext(case=case, status="timeout", trajectory=Trajectory(answer="refunded"), state=None,
                      failure="timeout after 300 s")
    result = AnswerMatches(type="answer_matches").evaluate(ctx)
    assert result.verdicts == [{"criterion": "answer_matches", "evaluator": "answer_matches", "verdict": "missing",
                                "reason": "timeout after 300 s"}]
    assert result.comparisons == []
