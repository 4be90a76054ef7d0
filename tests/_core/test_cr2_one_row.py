"""The degenerate reason of a clustered interval: "its one row" for exactly one row, the count otherwise."""

from __future__ import annotations

import numpy as np
import pytest

import oloproof_nb as op


@pytest.mark.parametrize(("values", "reason"), [
    ([1], "degenerate: its one row passes"),
    ([0], "degenerate: its one row does not pass"),
    ([1, 1], "degenerate: all 2 rows pass"),        # two rows, by hand: both pass
    ([0, 0], "degenerate: none of the 2 rows passes"),
])
def test_the_reason_counts_the_rows(values: list[int], reason: str) -> None:
    interval = op.rate_interval(np.array(values), np.array([f"g{i}" for i in range(len(values))]), method="cluster_t")
    assert interval.reason.split(";")[0] == reason
