"""A confidence level given as a NumPy float narrower than Python's (float32, float16) is labelled with its own
shortest text: widened to a float first, ``np.float32(0.95)`` read ``94.9999988079071%`` (the float32 nearest 0.95
is 0.949999988079071 as a float64), where the level the user wrote, and the one every digit of the label names, is
0.95."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import pytest

from oloproof_nb._display.theme import fmt_level


@pytest.mark.parametrize(("confidence", "text"), [
    (np.float32(0.95), "95%"), (np.float32(0.99), "99%"), (np.float32(0.975), "97.5%"),
    (np.float32(0.9999999), "99.99999%"), (np.float16(0.9), "90%"), (np.float64(0.95), "95%"),
    (0.95, "95%"), (1 - 1e-10, "99.99999999%"),
])
def test_a_level_is_labelled_with_its_own_shortest_digits(confidence: Any, text: str) -> None:
    shown = fmt_level(confidence)
    assert shown == text
    # the label names the level exactly in its own precision (Python's float parser, or NumPy's for float32/16)
    assert type(confidence)(str(Decimal(shown.removesuffix("%")) / 100)) == confidence
