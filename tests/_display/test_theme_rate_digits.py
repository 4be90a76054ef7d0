"""A rate beside its threshold takes the decimals it needs to be on the threshold's side the rate is on, and no
more; where no fixed number of decimals can (a rate a hair below a small threshold), its shortest exact text.
Expectations by hand."""

from __future__ import annotations

import math

import numpy as np

from oloproof_nb._display.theme import fmt_rate


def test_one_more_decimal_than_the_three_shown_when_those_cross() -> None:
    # 0.999951 at 0.9999505: three or more decimals print 0.99995 (fmt_number), below the threshold the rate
    # clears; six give 0.999951, on its side
    assert fmt_rate(0.999951, threshold=0.9999505) == "0.999951"


def test_as_many_decimals_as_it_takes_and_no_more() -> None:
    # 0.8999912345 at 0.9: 0.900, 0.9000 (both ≥ 0.9), then 0.89999 (< 0.9, as the rate is)
    assert fmt_rate(0.8999912345, threshold=0.9) == "0.89999"
    # the other way: 0.90049 at 0.9004 prints 0.900, below the threshold it clears; four decimals give 0.9005
    assert fmt_rate(0.90049, threshold=0.9004) == "0.9005"


def test_a_rate_a_hair_below_a_small_threshold_is_written_exactly() -> None:
    # the float just below 0.001: to 17 decimals it is 0.00100000000000000, on the threshold; its shortest text
    x = math.nextafter(0.001, 0.0)
    assert x < 0.001
    assert fmt_rate(x, threshold=0.001) == "0.0009999999999999998"


def test_no_number_is_left_as_fmt_number_shows_it() -> None:
    # a flag (yes/blank) and an infinity (∞) are no rate to put beside a threshold: shown as they are
    assert fmt_rate(True, threshold=0.9) == "yes"
    assert fmt_rate(np.True_, threshold=0.9) == "yes"
    assert fmt_rate(float("inf"), threshold=0.9) == "∞"
