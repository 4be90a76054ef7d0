"""``answer_matches`` (oloproof_nb/evaluators/answer.py); its comparison rules are tested with ``answers_equal`` in
test_state.py."""

from __future__ import annotations

from typing import Any

from oloproof_nb._core.case import Case, case_from_mapping
from oloproof_nb._core.trajectory import Trajectory
from oloproof_nb.evaluators import AnswerMatches, CaseContext


def _case(answer: Any) -> Case:
    return case_from_mapping({"id": "c1", "input": {}, "expected": {"answer": answer}})


# -- gaps a mutant showed ----------------------------------------------------------------------------------


def test_a_case_that_recorded_no_trajectory_is_missing_not_judged() -> None:
    """No failure, but no trajectory either: nothing to compare the expected answer with."""
    ctx = CaseContext(case=_case("refunded"), status="completed", trajectory=None, state=None)
    result = AnswerMatches(type="answer_matches").evaluate(ctx)
    assert result.verdicts == [{"criterion": "answer_matches", "evaluator": "answer_matches", "verdict": "missing",
                                "reason": "no_trajectory"}]
    assert result.comparisons == []


def test_a_failing_answer_says_both_answers_and_a_passing_one_gives_no_reason() -> None:
    ev = AnswerMatches(type="answer_matches")
    refused = CaseContext(case=_case("refunded"), status="completed", trajectory=Trajectory(answer="refused"),
                          state=None)
    (row,) = ev.evaluate(refused).verdicts
    assert (row["verdict"], row["reason"]) == ("fail", "answer 'refused' != expected 'refunded'")
    same = CaseContext(case=_case("refunded"), status="completed", trajectory=Trajectory(answer=" Refunded "),
                       state=None)
    (row,) = ev.evaluate(same).verdicts
    assert (row["verdict"], row["reason"]) == ("pass", "")
