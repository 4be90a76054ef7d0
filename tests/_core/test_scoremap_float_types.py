"""One rule for NaN and ±inf in the score table, of any float type. ``_is_nan`` and ``_is_infinite``
read Python floats only, and ``at_threshold`` (a python check's score, after NumPy's ``.item()``) used them: an
``np.longdouble``, which ``.item()`` leaves as it is, NaN failed and inf passed at a threshold."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from oloproof_nb._core import scoremap
from oloproof_nb._core.scoremap import at_threshold, on_default_scale, score_verdict
from oloproof_nb.errors import quote


@pytest.mark.parametrize("value", [float("nan"), np.float64("nan"), np.float32("nan"), np.float16("nan"),
                                   np.longdouble("nan")])
def test_nan_of_any_float_type_is_nan_and_missing(value: Any) -> None:
    assert scoremap._is_nan(value) and not scoremap._is_infinite(value)
    assert at_threshold(value, 0.5) == at_threshold(value, -1e300) == "missing"


@pytest.mark.parametrize("text", ["inf", "-inf"])
@pytest.mark.parametrize("kind", [float, np.float64, np.float32, np.float16, np.longdouble])
def test_an_infinity_of_any_float_type_is_infinite_and_missing(kind: Any, text: str) -> None:
    value = kind(text)
    assert scoremap._is_infinite(value) and not scoremap._is_nan(value)
    assert at_threshold(value, 0.5) == "missing"  # np.longdouble("inf") passed
    # the score table says the same of it as of a Python inf: no finite number (it said "map it with score_map=")
    assert score_verdict(value, pass_threshold=7) == ("missing", f"score {quote(value, 80)} is not a finite "
                                                                 "number, so no score")


@pytest.mark.parametrize("value", [0, 1, -3, 10**400, -(10**400), True, 0.5, np.longdouble("0.25"), np.int64(7),
                                   np.float32(1e38), "nan", "inf", None, {"a": float("nan")}, [float("inf")]])
def test_a_finite_number_or_no_number_is_neither(value: Any) -> None:
    """An int of any size is compared, never converted (``math.isnan(10**400)`` raises OverflowError); text that
    spells nan or inf, a dict, a list or None is no number at all."""
    assert not scoremap._is_nan(value) and not scoremap._is_infinite(value)


def test_finite_numbers_keep_their_verdicts() -> None:
    assert at_threshold(np.longdouble("0.75"), 0.5) == "pass" and at_threshold(np.longdouble("0.25"), 0.5) == "fail"
    assert at_threshold(10**400, 1) == "pass" and at_threshold(-(10**400), 1) == "fail"
    assert on_default_scale(float("inf")) is None and on_default_scale(float("nan")) is None
    assert on_default_scale(10**400) is False and on_default_scale(1) is True
