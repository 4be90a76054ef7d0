"""A python check's score judged at pass_threshold: NaN and ±inf are missing whatever float type holds
them. ``np.longdouble`` is a NumPy float that ``.item()`` leaves as it is (no Python float holds its range), and its
NaN failed (``nan >= t`` is False) while its inf passed, where a float64 NaN or inf is missing (README 1a, the
docstring of :func:`~oloproof_nb.evaluators.python.interpret_check`)."""

from __future__ import annotations

import numpy as np
import pytest

from oloproof_nb._core.scoremap import at_threshold
from oloproof_nb.evaluators.python import interpret_check


@pytest.mark.parametrize("text", ["nan", "inf", "-inf"])
def test_a_longdouble_that_is_no_finite_number_is_missing(text: str) -> None:
    value = np.longdouble(text)
    assert at_threshold(value, 0.5) == at_threshold(float(text), 0.5) == "missing"
    verdict, reason = interpret_check(value, pass_threshold=0.5)
    assert verdict == "missing"
    assert "not a finite score" in reason


def test_a_finite_longdouble_is_judged_as_its_value() -> None:
    assert interpret_check(np.longdouble("0.75"), pass_threshold=0.5) == ("pass", "")
    assert interpret_check(np.longdouble("0.25"), pass_threshold=0.5)[0] == "fail"
    assert at_threshold(10**400, 1) == "pass"  # a huge int is a number, never NaN or inf
