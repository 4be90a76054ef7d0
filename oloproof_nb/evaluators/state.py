"""State checks: ``state_matches`` (whole / paths / subset, numeric tolerance) and ``state_unchanged``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from .._core.compare import NO_STATE, Row, compare_state, compare_unchanged
from .._core.evaluator import CaseContext, Evaluation, Evaluator, register
from .._core.paths import parse_path
from .._core.records import ComparisonRow

__all__ = ["StateMatches", "StateUnchanged"]

def _rows_to_evaluation(ev: Evaluator, rows: list[Row], what: str, case_id: str) -> Evaluation:
    comparisons: list[ComparisonRow] = [
        {"case_id": case_id, "criterion": ev.name, "path": p, "expected": e, "actual": a, "ok": ok}
        for p, e, a, ok in rows
    ]
    bad = [p for p, _, _, ok in rows if not ok]
    if bad:
        shown = ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
        reason = f"{len(bad)} of {len(rows)} {what} differ: {shown}"
        return Evaluation(verdicts=[ev.verdict("fail", reason)], comparisons=comparisons)
    return Evaluation(verdicts=[ev.verdict("pass", "")], comparisons=comparisons)


def _check_paths(paths: list[str]) -> list[str]:
    for path in paths:
        parse_path(path)
    return paths


@register
class StateMatches(Evaluator):
    """Passes when the recorded state matches ``expected.state``.

    ``mode`` is ``whole`` (equal entirely), ``paths`` (equal on the declared
    ``paths``) or ``subset`` (the default: every leaf of ``expected.state`` is
    present and equal). ``tolerance`` is an absolute tolerance on numeric
    leaves. Applies to cases whose ``expected`` has a ``state``; a case without
    a recorded state is ``missing``. ``absent_ok: true`` says a ``paths:`` entry
    that no case's initial or expected state contains is meant (no
    ``VacuousCheckWarning`` at ``load_suite``).
    """

    type: Literal["state_matches"]
    mode: Literal["whole", "paths", "subset"] = "subset"
    paths: list[str] = Field(default_factory=list)
    tolerance: float | None = Field(default=None, ge=0)
    #: A ``paths:`` entry absent from every case's initial and expected state is on purpose (no warning).
    absent_ok: bool = False

    @field_validator("paths")
    @classmethod
    def _valid_paths(cls, value: list[str]) -> list[str]:
        return _check_paths(value)

    @model_validator(mode="after")
    def _paths_for_mode(self) -> StateMatches:
        if self.mode == "paths" and not self.paths:
            raise ValueError("mode 'paths' needs a non-empty 'paths' list")
        if self.mode != "paths" and self.paths:
            raise ValueError(f"'paths' is only used with mode 'paths' (mode is {self.mode!r})")
        return self

    def default_criterion(self) -> str:
        return "state_matches"

    def judge(self, expected: dict[str, Any], state: dict[str, Any] | None, case_id: str = "") -> Evaluation:
        """The verdict and comparisons for one recorded ``state`` (None: no state recorded)."""
        if state is None:
            return self.missing(NO_STATE)
        rows = compare_state(expected, state, self.mode, self.paths, self.tolerance)
        return _rows_to_evaluation(self, rows, "paths", case_id)

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        expected = ctx.case.expected.state
        if expected is None:
            return Evaluation()
        if ctx.failure is not None:
            return self.missing(ctx.failure)
        return self.judge(expected, ctx.state, ctx.case.id)


@register
class StateUnchanged(Evaluator):
    """Passes when every declared path keeps the value it had in ``initial_state``.

    An absent path must stay absent. Applies to every case; a case without a
    recorded state is ``missing``. A path that no case's ``initial_state``
    contains gives a ``VacuousCheckWarning`` at ``load_suite`` (a typo passes
    every case) unless ``absent_ok: true`` says it must stay absent on purpose.
    """

    type: Literal["state_unchanged"]
    paths: list[str] = Field(min_length=1)
    #: A path absent from every case's ``initial_state`` must stay absent on purpose (no VacuousCheckWarning).
    absent_ok: bool = False

    @field_validator("paths")
    @classmethod
    def _valid_paths(cls, value: list[str]) -> list[str]:
        return _check_paths(value)

    def default_criterion(self) -> str:
        return "state_unchanged"

    def judge(self, initial: dict[str, Any], state: dict[str, Any] | None, case_id: str = "") -> Evaluation:
        """The verdict and comparisons for one recorded ``state`` (None: no state recorded)."""
        if state is None:
            return self.missing(NO_STATE)
        return _rows_to_evaluation(self, compare_unchanged(initial, state, self.paths), "paths", case_id)

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        if ctx.failure is not None:
            return self.missing(ctx.failure)
        return self.judge(ctx.case.initial_state, ctx.state, ctx.case.id)
