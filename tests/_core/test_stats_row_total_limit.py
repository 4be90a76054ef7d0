"""The row-total check of the statistics: counts past 2**62 rows are refused, the limit itself included.

Σm of int64 rows wraps past 2**63 - 1 (three clusters of 2**62 gave n < 0); the check refuses a total of 2**62 or
more (the message says so), so a total at the limit is refused and one below it is counted exactly (a total within
a float's rounding of 2**62, as 2**62 - 1, is refused too: the sum is taken in float64).
"""

from __future__ import annotations

import pytest

from oloproof_nb._core.stats import rate_interval_from_sums


@pytest.mark.parametrize(("rows", "shown"), [([2**61, 2**61], "4.612e+18"), ([2**62, 2**62], "9.223e+18"),
                                             ([2**62, 2**61], "6.918e+18")])
def test_a_rows_total_at_or_past_2_to_the_62_is_refused(rows: list[int], shown: str) -> None:
    """By hand: 2**61 + 2**61 = 2**62 (the limit), 2**62 + 2**62 = 2**63 (wraps to -2**63 in int64), and
    2**62 + 2**61 between them; each total is written in the message with four significant digits."""
    with pytest.raises(ValueError, match=rf"^rows total {shown.replace('+', '[+]')}, more than counts can hold"):
        rate_interval_from_sums([1, 1], rows, "clopper_pearson")


def test_a_rows_total_below_the_limit_is_counted_exactly() -> None:
    iv = rate_interval_from_sums([1, 1], [2**61, 2**60], "clopper_pearson")
    assert (iv.n, iv.n_clusters) == (3 * 2**60, 2)  # by hand: 2**61 + 2**60, no wrap, every row counted
