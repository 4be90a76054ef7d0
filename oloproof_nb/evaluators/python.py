"""``python``: a suite's own success function, called on every case.

Benchmarks ship their own checks over (initial state, final state,
trajectory). ``{type: python, name: task_done, check: "checks:task_done"}``
calls ``task_done(case, initial_state, final_state, trajectory)`` from the
suite folder. The function is imported by ``_config`` when the suite loads and
called by the run (``RunContext.call_check``) under the run's timeout; this
module only reads what it returned.
"""

from __future__ import annotations

import decimal
import inspect
import numbers
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from .._config.files import a_number, yaml_number
from .._config.validators import check_import_spec
from .._core.case import case_copy
from .._core.evaluator import CaseContext, Evaluation, Evaluator, Scope, register
from .._core.jsonsafe import copy_json
from .._core.records import VerdictRow
from .._core.scoremap import A_SCORE, at_threshold
from ..errors import quote, storable

__all__ = ["PythonCheck", "interpret_check"]

#: Reason prefix of a ``missing`` verdict whose check raised (the traceback is kept in the verdict record).
CHECK_RAISED = "check_raised"
_ALLOWED = "return True, False, None or a (verdict, reason) pair"


class CheckVerdictRow(VerdictRow, total=False):
    """A verdict row of a check that raised: the stored record keeps the full traceback."""

    traceback: str


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def _is_score(value: Any) -> bool:
    """A number that is not a bool: a Python or NumPy int or float, a ``Fraction`` or a ``Decimal`` (a benchmark's
    reward: one kept in Decimals, as its balances are, was told to return True or False)."""
    # a NumPy timedelta64 is an np.integer, but a duration, no score: compared with pass_threshold it raised
    # TypeError and stopped the run with an internal error (and without one, the reason said to give one)
    return (isinstance(value, (numbers.Real, np.integer, np.floating, decimal.Decimal)) and not _is_bool(value)
            and not isinstance(value, np.timedelta64))


def _score_verdict(score: Any, shown: str, reason: str, pass_threshold: float
                   ) -> tuple[Literal["pass", "fail", "missing"], str]:
    """A score's verdict at ``pass_threshold``: at or above it passes, below fails, NaN and ±inf are missing (the
    check's own reason after it: alone, ``(nan, "partial credit")`` read as if the check had said why)."""
    threshold = pass_threshold
    if isinstance(score, np.floating) and np.finfo(score.dtype).bits < 64:
        # read at the score's own precision: np.float32(0.7) is 0.699999988 as a float, and a reward of 0.7
        # failed pass_threshold 0.7 ("score np.float32(0.7) is below pass_threshold 0.7")
        with np.errstate(over="ignore"):  # a threshold past the type's range reads as ±inf, as the score would
            rounded = float(score.dtype.type(pass_threshold))
        # never a threshold above zero read as zero: a reward of 0.0 passed pass_threshold 1e-300 ("any reward")
        threshold = rounded if rounded != 0 or pass_threshold == 0 else pass_threshold
    if isinstance(score, decimal.Decimal) and not score.is_finite():  # its NaN refuses to be compared, as no float's
        verdict: Literal["pass", "fail", "missing"] = "missing"
    elif isinstance(score, decimal.Decimal):
        # Decimal to Decimal: the check's module may trap FloatOperation (no float in a balance), and a Decimal
        # compared with a float then raised it, stopping the run with an internal error
        verdict = "pass" if score >= decimal.Decimal.from_float(threshold) else "fail"
    else:
        verdict = at_threshold(score.item() if isinstance(score, (np.integer, np.floating)) else score, threshold)
    if verdict == "missing":
        return "missing", f"check returned {shown}, not a finite score" + (f"; its reason: {reason}" if reason else "")
    if verdict == "pass":
        return "pass", reason
    # every digit of the threshold: ``:g`` kept six ("score 0.1234564 is below pass_threshold 0.123456")
    return "fail", reason or f"score {shown} is below pass_threshold {yaml_number(pass_threshold)}"


def interpret_check(value: Any, pass_threshold: float | None = None
                    ) -> tuple[Literal["pass", "fail", "missing"], str]:
    """A check's return value as ``(verdict, reason)``.

    ``True`` passes, ``False`` fails, ``None`` is missing (the check could not
    judge the case); a ``(verdict, reason)`` pair gives the reason too. A
    number (a benchmark's reward: an int or float of Python or NumPy, a
    ``Fraction`` or a ``Decimal``; a NumPy float32 compared at its own
    precision) passes at or above ``pass_threshold`` and
    fails below it (NaN and ±inf are missing); without ``pass_threshold`` it is
    ``missing``, the reason saying to give one. Any other value is ``missing``
    with a reason saying what was returned.

    Examples
    --------
    >>> interpret_check(True), interpret_check((False, "paid twice")), interpret_check(None)
    (('pass', ''), ('fail', 'paid twice'), ('missing', 'check returned None'))
    >>> interpret_check("yes")[0], interpret_check((True, False))[0], interpret_check(0.5)[0]
    ('missing', 'missing', 'missing')
    >>> interpret_check(1.0, pass_threshold=1.0), interpret_check(0.5, pass_threshold=1.0)
    (('pass', ''), ('fail', 'score 0.5 is below pass_threshold 1'))
    """
    reason, returned = "", value
    if inspect.iscoroutine(value) or inspect.isgenerator(value):
        # a def that hands on an async one's result (a decorator's wrapper, a lambda), which the suite's load cannot
        # tell from a plain def: "check returned <coroutine object …>" and Python's "never awaited" warning, which
        # pointed at oloproof; closed, never run
        value.close()
        made = "a coroutine, never awaited" if inspect.iscoroutine(value) else "a generator, never iterated"
        return "missing", f"check returned {made} (of {quote(value.__name__, 80)}); {_ALLOWED}"
    if isinstance(value, tuple) and len(value) == 2 and (value[1] is None or isinstance(value[1], str)):
        value, why = value  # a reason is text: (True, False) is two conditions, not a verdict and its reason
        reason = "" if why is None else storable(why)
    if value is None:
        return "missing", reason or "check returned None"
    if _is_bool(value):
        return ("pass" if bool(value) else "fail"), reason
    shown = quote(value, 80)  # never raises: a check may return an int of more than 4300 digits
    if _is_score(value):
        if pass_threshold is not None:
            return _score_verdict(value, shown, reason, pass_threshold)
        # the pair as returned, its reason with it: "check returned 0.5" hid the reason and that it was a pair
        return "missing", f"check returned {quote(returned, 80) if returned is not value else shown}; {A_SCORE}"
    # a pair whose reason is not text; not a pair as a pair's verdict: ((True, "a"), "b") was told its reason is
    # "text, not str"
    if isinstance(value, tuple) and len(value) == 2 and returned is value:
        return "missing", (f"check returned {shown}: the second item of a (verdict, reason) pair is its reason, "
                           f"text, not {type(value[1]).__name__} (two conditions? return both and-ed); {_ALLOWED}")
    return "missing", f"check returned {shown if returned is value else quote(returned, 80)}; {_ALLOWED}"


@register
class PythonCheck(Evaluator):
    """Passes when the suite's Python function says so.

    Parameters
    ----------
    check : str
        ``module:function`` importable from the suite folder (imported when the
        suite loads: a wrong name is a config error there).
    name : str, optional
        The criterion's name (``criterion`` works too); default: the function's name.
    pass_threshold : float, optional
        For a check that returns a score (a benchmark's reward, partial credit): a number at or above it
        passes, below it fails (``1`` passes full credit only). Without it a number is ``missing``.

    Notes
    -----
    The function is called as ``check(case, initial_state, final_state,
    trajectory)`` with copies it may not change anything through: ``case`` is
    the :class:`~oloproof_nb._core.case.Case`, ``initial_state`` its
    ``initial_state``, ``final_state`` the state the case left (None when the
    system recorded none) and ``trajectory`` the
    :class:`~oloproof_nb.Trajectory` as stored (JSON values). It returns
    ``True`` (pass), ``False`` (fail), ``None`` (missing), a ``(verdict,
    reason)`` pair, or a score read at ``pass_threshold`` (alone or as the
    pair's verdict). It runs under the run's ``case_timeout_s``. An exception
    inside it makes that case ``missing`` (reason ``check_raised: …``) with the
    full traceback kept in the stored verdict (``run.panel`` shows it); a case
    that raised or timed out is ``missing`` without calling it. Its rows join
    ``run.verdicts``, the gate and slices like any criterion. It judges the
    case's own run, not fault replays.

    Examples
    --------
    >>> ev = PythonCheck.model_validate({"type": "python", "name": "task_done", "check": "checks:task_done"})
    >>> ev.name, PythonCheck(type="python", check="checks:no_attacker_payment").name
    ('task_done', 'no_attacker_payment')
    """

    type: Literal["python"]
    check: str
    pass_threshold: Annotated[float | None, a_number("a score (a number)")] = Field(default=None,
                                                                                 allow_inf_nan=False)

    @field_validator("check")
    @classmethod
    def _check_spec(cls, value: str) -> str:
        return check_import_spec(value, "module:function", "checks:task_done", "the check function")

    scope: ClassVar[Scope] = "system"

    @model_validator(mode="before")
    @classmethod
    def _name_is_the_criterion(cls, data: Any) -> Any:
        if isinstance(data, dict) and "name" in data:
            data = dict(data)
            name = data.pop("name")
            if data.get("criterion") not in (None, name):
                raise ValueError("give 'name' or 'criterion', not both")
            data["criterion"] = name
        return data

    def default_criterion(self) -> str:
        return self.check.split(":", 1)[1]

    def user_code(self) -> list[tuple[str, str]]:
        return [("check", self.check)]

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        if ctx.failure is not None or ctx.trajectory is None:
            return self.missing(ctx.failure or "no_trajectory")
        if ctx.run is None:
            return self.missing("a python check needs a live run (nothing to call it with)")
        call = ctx.run.call_check(self.check, case_copy(ctx.case), copy_json(ctx.case.initial_state),
                                  copy_json(ctx.state), ctx.trajectory.model_copy(deep=True))
        if call.error is not None:
            base = self.verdict("missing", f"{CHECK_RAISED}: {call.error}")
            row: CheckVerdictRow = {"criterion": base["criterion"], "evaluator": base["evaluator"],
                                    "verdict": base["verdict"], "reason": base["reason"]}
            if call.traceback:
                row["traceback"] = call.traceback
            return Evaluation(verdicts=[row])
        verdict, reason = interpret_check(call.value, self.pass_threshold)
        return Evaluation(verdicts=[self.verdict(verdict, reason)])
