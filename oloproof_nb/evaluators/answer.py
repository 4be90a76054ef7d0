"""``answer_matches``: the final answer equals ``expected.answer``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .._core.compare import answers_equal
from .._core.evaluator import CaseContext, Evaluation, Evaluator, register
from .._core.records import ComparisonRow

__all__ = ["AnswerMatches"]


@register
class AnswerMatches(Evaluator):
    """Passes when the final answer equals ``expected.answer``.

    Applies to cases whose ``expected`` has an ``answer``. ``normalize``
    (default true) ignores case and surrounding whitespace of strings.
    """

    type: Literal["answer_matches"]
    normalize: bool = Field(default=True, strict=True)  # "no", "off" or 0: a mistake, not a no

    def default_criterion(self) -> str:
        return "answer_matches"

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        if not ctx.case.expected.has_answer:
            return Evaluation()
        if ctx.failure is not None or ctx.trajectory is None:
            return self.missing(ctx.failure or "no_trajectory")
        expected, actual = ctx.case.expected.answer, ctx.trajectory.answer
        ok = answers_equal(expected, actual, self.normalize)
        row: ComparisonRow = {"case_id": ctx.case.id, "criterion": self.name, "path": "answer",
                              "expected": expected, "actual": actual, "ok": ok}
        reason = "" if ok else f"answer {actual!r} != expected {expected!r}"
        return Evaluation(verdicts=[self.verdict("pass" if ok else "fail", reason)], comparisons=[row])
