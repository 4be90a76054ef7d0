"""``_core/binomial.py``, the never-pass cap: each test kills a mutant the other tests let live, checked against
SciPy or a hand count, never the module's own output."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from oloproof_nb._core import binomial


def test_a_block_of_the_never_pass_cap_counts_its_lowest_rate_where_that_is_at_its_top() -> None:
    """701 one-row cases that never pass beside 300 two-row cases passing one row each (K = 300, N = 1,301): a
    never-passing case turned with one pass is a case at rate 1, above the others' 0.5, so the rate
    (K + j − r)/(N − Z + j − r) of r left falls as r grows, and the lowest rate of a block past 512 left is at its
    top, not at its start (the last block holds r = 700 and 701). The cap as documented, by hand (blocks 0..511
    one count each, then growing by a 256th; 1 − s_U at each block's largest count from scipy.stats.beta, times the
    block's lowest rate), against one that read each block's rate at its first count (kills ``rate[starts]`` for
    ``np.minimum.reduceat(rate, starts)``)."""
    j = 701
    m = np.r_[np.ones(j, dtype=int), np.full(300, 2)]
    k = np.r_[np.zeros(j, dtype=int), np.ones(300, dtype=int)]
    total, passed = j + 600, 300
    n_min = total**2 / (j * 1 + 300 * 4)
    r = np.arange(j + 1)
    rate = (passed + j - r) / (600 + (j - r))  # the j − r others, one row each, turned with one pass
    assert np.all(np.diff(rate) < 0)  # falling: each block's lowest rate is at its top
    starts = list(range(512))
    while starts[-1] <= j:  # one start past j: the last block ends at j
        starts.append(starts[-1] + max(1, starts[-1] // 256))
    blocks = [(a, min(b - 1, j)) for a, b in zip(starts, starts[1:], strict=False) if a <= j]
    assert blocks[-1] == (700, 701)
    x = np.array([n_min * top / total for _, top in blocks])  # the zero rows left, as successes in n_min
    share = np.where(x > 0, 1.0 - stats.beta.ppf(0.975, x + 1, n_min - x), 0.025 ** (1 / n_min))
    lowest = np.array([rate[a:top + 1].min() for a, top in blocks])
    at_start = np.array([rate[a] for a, _ in blocks])
    expected = float(np.min(share * lowest))
    assert expected < float(np.min(share * at_start)) - 1e-6  # the two readings differ here
    assert binomial.never_pass_cap(k, m, 0.95) == pytest.approx(expected, rel=1e-12)
