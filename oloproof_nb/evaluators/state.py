"""State checks: ``state_matches`` (whole / paths / subset, numeric tolerance) and ``state_unchanged``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ..paths import ABSENT, flatten, get_path, parse_path, values_equal
from .base import CaseContext, Evaluation, Evaluator, register

__all__ = ["StateMatches", "StateUnchanged", "compare_state", "compare_unchanged", "NO_STATE"]

#: Reason of a state verdict when the system recorded no state.
NO_STATE = "no_state_recorded"

Row = tuple[str, Any, Any, bool]


def compare_state(expected: dict[str, Any], actual: dict[str, Any], mode: str = "subset",
                  paths: list[str] | None = None, tolerance: float | None = None) -> list[Row]:
    """Compare a recorded state with an expected one, leaf by leaf.

    Parameters
    ----------
    expected, actual : dict
        ``expected.state`` of the case and the state the case left.
    mode : {"whole", "paths", "subset"}
        ``whole``: every leaf of either state must be equal (absent on one side
        fails); ``paths``: only the declared ``paths`` (absent must stay absent);
        ``subset``: every leaf of ``expected`` must be present and equal.
    tolerance : float, optional
        Absolute tolerance for numeric leaves.

    Returns
    -------
    list of (path, expected, actual, ok)
        One row per compared path, :data:`~oloproof_nb.paths.ABSENT` where a
        path does not exist.

    Examples
    --------
    >>> compare_state({"o": {"s": "refunded"}}, {"o": {"s": "refunded", "n": 1}})
    [('o.s', 'refunded', 'refunded', True)]
    """
    if mode == "paths":
        rows = []
        for path in paths or []:
            e, a = get_path(expected, path), get_path(actual, path)
            rows.append((path, e, a, values_equal(e, a, tolerance)))
        return rows
    exp_leaves = flatten(expected)
    rows = []
    act_leaves = flatten(actual) if mode == "whole" else None  # subset: look up only the expected paths
    for path, e in exp_leaves.items():
        a = ABSENT if act_leaves is None else act_leaves.get(path, ABSENT)
        if a is ABSENT:
            a = get_path(actual, path)  # subset mode, or a non-leaf subtree where a leaf was expected
        rows.append((path, e, a, values_equal(e, a, tolerance)))
    if mode == "whole":
        for path, a in act_leaves.items():
            if path not in exp_leaves:
                rows.append((path, get_path(expected, path), a, False))
    return rows


def compare_unchanged(initial: dict[str, Any], actual: dict[str, Any], paths: list[str]) -> list[Row]:
    """For each path, compare its value in ``initial`` with its value after the case.

    A path absent before must stay absent; a subtree must stay equal as a whole.

    Examples
    --------
    >>> compare_unchanged({"o": {"x": 1}}, {"o": {"x": 1, "y": 2}}, ["o.x", "o.y"])
    [('o.x', 1, 1, True), ('o.y', <absent>, 2, False)]
    """
    rows = []
    for path in paths:
        before, after = get_path(initial, path), get_path(actual, path)
        rows.append((path, before, after, values_equal(before, after)))
    return rows


def _rows_to_evaluation(ev: Evaluator, rows: list[Row], what: str) -> Evaluation:
    comparisons = [
        {"criterion": ev.name, "path": p, "expected": e, "actual": a, "ok": ok} for p, e, a, ok in rows
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
    a recorded state is ``missing``.
    """

    type: Literal["state_matches"]
    mode: Literal["whole", "paths", "subset"] = "subset"
    paths: list[str] = Field(default_factory=list)
    tolerance: float | None = Field(default=None, ge=0)

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

    def judge(self, expected: dict[str, Any], state: dict[str, Any] | None) -> Evaluation:
        """The verdict and comparisons for one recorded ``state`` (None: no state recorded)."""
        if state is None:
            return self.missing(NO_STATE)
        rows = compare_state(expected, state, self.mode, self.paths, self.tolerance)
        return _rows_to_evaluation(self, rows, "paths")

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        expected = ctx.case.expected.state
        if expected is None:
            return Evaluation()
        if ctx.failure is not None:
            return self.missing(ctx.failure)
        return self.judge(expected, ctx.state)


@register
class StateUnchanged(Evaluator):
    """Passes when every declared path keeps the value it had in ``initial_state``.

    An absent path must stay absent. Applies to every case; a case without a
    recorded state is ``missing``.
    """

    type: Literal["state_unchanged"]
    paths: list[str] = Field(min_length=1)

    @field_validator("paths")
    @classmethod
    def _valid_paths(cls, value: list[str]) -> list[str]:
        return _check_paths(value)

    def default_criterion(self) -> str:
        return "state_unchanged"

    def judge(self, initial: dict[str, Any], state: dict[str, Any] | None) -> Evaluation:
        """The verdict and comparisons for one recorded ``state`` (None: no state recorded)."""
        if state is None:
            return self.missing(NO_STATE)
        return _rows_to_evaluation(self, compare_unchanged(initial, state, self.paths), "paths")

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        if ctx.failure is not None:
            return self.missing(ctx.failure)
        return self.judge(ctx.case.initial_state, ctx.state)
