"""A confidence given as an int too big for a float is refused in one line, as every other value outside (0, 1):
``float(10**400)`` raises ``OverflowError``, a traceback where the user gave a wrong number."""

from __future__ import annotations

import numpy as np
import pytest

import oloproof_nb as op
from oloproof_nb._core.binomial import check_confidence


@pytest.mark.parametrize("confidence", [10**400, -(10**400), 0, 1, np.int64(1), float("nan"), 1 - 1e-17],
                         ids=["1e400", "-1e400", "0", "1", "int64-1", "nan", "1-1e-17"])
def test_outside_the_open_interval_is_a_value_error(confidence: object) -> None:
    with pytest.raises(ValueError, match=r"is outside \(0, 1\)"):
        check_confidence(confidence)  # type: ignore[arg-type]


@pytest.mark.parametrize("confidence", [10**400, -(10**400)], ids=["1e400", "-1e400"])
def test_public_intervals_refuse_it(confidence: int) -> None:
    with pytest.raises(ValueError, match=r"is outside \(0, 1\)"):
        op.rate_interval([1, 0, 1, 1], confidence=confidence)
    with pytest.raises(ValueError, match=r"is outside \(0, 1\)"):
        op.rate_interval_from_sums([3, 2], [4, 4], confidence=confidence)


def test_inside_it_is_kept_as_a_float() -> None:
    assert check_confidence(np.float32(0.5)) == 0.5 and check_confidence(0.95) == 0.95
    assert isinstance(check_confidence(np.float64(0.9)), float)
