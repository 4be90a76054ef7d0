"""The interval record, the binomial intervals (Clopper–Pearson, Wilson) from SciPy alone, and the bounds every
clustered interval is capped at: the effective size n_min, the all-pass bound and the never-pass cap.

Pure NumPy/SciPy: importing this module does not import statsmodels (the gate's cold path stays light);
the tests check both intervals against statsmodels ``proportion_confint`` to 1e-12.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Interval", "check_confidence", "clopper_pearson", "wilson", "all_pass_low", "never_pass_cap", "n_min"]


@dataclass(frozen=True)
class Interval:
    """A pass rate with its confidence interval.

    Attributes
    ----------
    estimate : float
        The rate p̂ = Σk/Σm.
    low, high : float
        Interval bounds, 0 ≤ low ≤ estimate ≤ high ≤ 1 and low < high.
    method : str
        The method that produced ``low`` and ``high`` (one of ``METHODS``); a clustered
        method that fell back says ``"clopper_pearson"``.
    n : int
        Number of rows.
    n_clusters : int
        Number of clusters G (equal to ``n`` when rows are not clustered).
    reason : str
        Why a fallback was used (starts with ``"degenerate"`` when every row agrees); empty otherwise.

    Examples
    --------
    >>> import oloproof_nb as op
    >>> iv = op.rate_interval([1, 1, 0, 1])
    >>> iv.estimate, iv.n, iv.n_clusters
    (0.75, 4, 4)
    >>> iv.low < iv.estimate < iv.high
    True
    """

    estimate: float
    low: float
    high: float
    method: str
    n: int
    n_clusters: int
    reason: str = ""


def check_confidence(confidence: float) -> float:
    """``confidence`` as a float in (0, 1); a ValueError naming the value otherwise."""
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float, np.floating, np.integer)):
        raise ValueError(f"confidence={confidence!r} is not a number; use a probability in (0, 1), e.g. 0.95")
    if not 0 < confidence < 1:  # compared as given: float(10**400) would raise OverflowError
        raise ValueError(f"confidence={confidence!r} is outside (0, 1); use e.g. 0.95")
    return float(confidence)


def _check_counts(successes: float, nobs: float) -> tuple[float, float]:
    if not (np.isfinite(nobs) and nobs > 0):
        raise ValueError(f"nobs={nobs!r} must be a positive number")
    if not (np.isfinite(successes) and 0 <= successes <= nobs):
        raise ValueError(f"successes={successes!r} must lie in [0, nobs={nobs!r}]")
    return float(successes), float(nobs)


def clopper_pearson(successes: float, nobs: float, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper–Pearson) binomial interval.

    Parameters
    ----------
    successes : float
        Number of passes, 0 ≤ successes ≤ nobs. May be fractional (an effective count).
    nobs : float
        Number of trials, > 0. May be fractional (an effective size such as n_min).
    confidence : float, default 0.95
        Two-sided confidence level in (0, 1).

    Returns
    -------
    tuple of float
        ``(low, high)``.

    Notes
    -----
    With α = 1 − confidence, low = Beta⁻¹(α/2; k, n − k + 1) and high = Beta⁻¹(1 − α/2; k + 1, n − k),
    with low = 0 when k = 0 and high = 1 when k = n, from ``scipy.special.betaincinv`` (the inverse of
    the regularised incomplete beta function, which ``scipy.stats.beta.ppf`` calls; defined for real k
    and n) and, for high, ``betainccinv`` at the upper tail α/2 (as ``scipy.stats.beta.isf``, which
    statsmodels calls: 1 − α/2 rounds near 1). At k = n the lower end is the closed form (α/2)^(1/n), the
    Beta(n, 1) quantile, and at k = 0 the upper end is 1 − (α/2)^(1/n): a solver can round those one unit in
    the last place either way (scipy 1.10 did), and the cluster bounds cap a run with failures at this same
    all-pass number, so the gate's promise that a perfect run is never judged below one with a failure holds
    to the last bit.
    Equal to statsmodels ``proportion_confint(method="beta")`` to 1e-12.

    References
    ----------
    Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a binomial proportion.
    Statistical Science 16(2), 101–133.

    Examples
    --------
    >>> low, high = clopper_pearson(9, 10)
    >>> round(low, 4), round(high, 4)
    (0.555, 0.9975)
    """
    # first use; not scipy.stats, whose import costs far more (the gate's cold path; a one-off measurement, no
    # script: 1.0-1.9 s against 0.27-0.38 s for scipy.special after numpy, 5 fresh processes each, load average 4)
    from scipy import special
    alpha = 1.0 - check_confidence(confidence)
    k, n = _check_counts(successes, nobs)
    if k == n:  # Beta⁻¹(α/2; n, 1) in closed form: the all-pass bound never hangs on the solver's last bit
        return (alpha / 2) ** (1.0 / n), 1.0
    if k == 0:
        return 0.0, 1.0 - (alpha / 2) ** (1.0 / n)
    # the upper end from the upper tail α/2 itself (betainccinv), not from 1 − α/2: that float near 1 is off by up to
    # 5.6e-17, 1.1e-10 of α/2 = 5e-7 at confidence 0.999999, and the bound moved by 2.5e-12
    return float(special.betaincinv(k, n - k + 1, alpha / 2)), float(special.betainccinv(k + 1, n - k, alpha / 2))


def wilson(successes: float, nobs: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score binomial interval.

    Parameters
    ----------
    successes : float
        Number of passes, 0 ≤ successes ≤ nobs.
    nobs : float
        Number of trials, > 0.
    confidence : float, default 0.95
        Two-sided confidence level in (0, 1).

    Returns
    -------
    tuple of float
        ``(low, high)``, clipped to [0, 1]; exactly 0 when k = 0 and 1 when k = n.

    Notes
    -----
    With z = Φ⁻¹(1 − α/2) and p̂ = k/n: (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n).
    Equal to statsmodels ``proportion_confint(method="wilson")`` to 1e-12.

    References
    ----------
    Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a binomial proportion.
    Statistical Science 16(2), 101–133.

    Examples
    --------
    >>> low, high = wilson(9, 10)
    >>> round(low, 4), round(high, 4)
    (0.5958, 0.9821)
    """
    from scipy import special  # imported on first use: keeps `import oloproof_nb` fast
    alpha = 1.0 - check_confidence(confidence)
    k, n = _check_counts(successes, nobs)
    z = -float(special.ndtri(alpha / 2))  # the tail itself, not 1 − α/2 (rounded near 1; see clopper_pearson)
    p = k / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if k == 0 else min(max(center - half, 0.0), 1.0)
    high = 1.0 if k == n else min(max(center + half, 0.0), 1.0)
    return low, high


def n_min(m: np.ndarray) -> float:
    """The effective size n_min = (Σm)²/Σm² of clusters of sizes ``m`` (the size if every cluster were one row)."""
    mf = np.sort(m.astype(float))  # sorted: the same sizes in any order give the same float sums
    return float(mf.sum() ** 2 / (mf**2).sum())


def all_pass_low(m: np.ndarray, confidence: float) -> float:
    """The lower bound when every row passes: Clopper–Pearson of n_min successes in n_min, (α/2)^(1/n_min)
    (computed by :func:`clopper_pearson`, so a perfect run and the cap of a run with failures are one number)."""
    size = n_min(m)
    return clopper_pearson(size, size, confidence)[0]


#: Counts of never-passing clusters left that :func:`never_pass_cap` visits one by one; beyond, fixed blocks.
CAP_STEPS = 512


@functools.cache
def _block_starts(exact: int) -> np.ndarray:
    """The first count of each block of :func:`never_pass_cap`: 0, 1, …, ``exact`` − 1 one by one, then blocks
    growing by a 256th (at most 0.4% of the count in a block), up to 2⁴⁰. Fixed, whatever the data: two data
    sets compared for monotonicity put the same count in the same block."""
    starts = list(range(exact))
    start = exact
    while start < 2**40:
        starts.append(start)
        start += max(1, start // 256)
    return np.asarray(starts, dtype=np.int64)


def never_pass_cap(k: np.ndarray, m: np.ndarray, confidence: float) -> float:
    """The highest lower bound clusters of sizes ``m`` passing ``k`` of their rows can vouch for, given how many of
    them pass nothing.

    Let N = Σm rows, K = Σk passes, and Z the rows of the j clusters that pass no row. The data cannot rule out
    that a share s_U(Z) of the population's rows lies in clusters that pass nothing, with s_U(Z) the
    Clopper–Pearson upper bound of n_min·Z/N successes in n_min (:func:`n_min`; j of G when the sizes are
    equal), beside the others at the rate the clusters drawn show, K/(N − Z): the cap
    f(0) = (1 − s_U(Z))·K/(N − Z). With no such cluster it is L_all·p̂, L_all = (α/2)^(1/n_min) the all-pass
    bound (:func:`all_pass_low`): a sample cannot vouch for kinds of case it never drew.

    Why: the CR2 logit-t bound reads the share of never-passing cases from its spread, which is too small in the
    samples that drew fewer such cases than the population holds (the sampling of that count is skewed). Where one
    case in ten never passes and the others pass 9 tries in 10 (rate 0.81), 20 cases × 10 epochs put the bound
    alone above 0.81 in 11.55% of samples (nominal 2.5%), and where one case in twenty never passes,
    100 cases × 10 epochs in 4.45–5% (``python tests/reference/hard_cells.py --only mixture``; the cap with
    j = 0 alone). The cap is necessary, not sufficient: K/(N − Z) stands in for the rate of the others,
    and what the capped bound misses is measured, not proven (benchmarks/coverage.md, the ``mixture`` cells).

    Made monotone: a data set at least as good turns some of the j clusters into ones that pass a row or more,
    so the cap is the minimum over r = 0..j of them left of f(r) = (1 − s_U(T_r))·(K + j − r)/(N − Z + T_{j−r}),
    T_r the rows of the r largest such clusters (the most zero rows left with r of them, and with the j − r others
    turned, one pass each, the lowest rate). A better data set with r of its own left has terms at least those
    of this set at the same r (its zero clusters are some of these, each turned one passes a row or more), so one
    more pass never lowers the cap; with equal sizes it is the lowest such term over every better data set. Past
    :data:`CAP_STEPS` clusters left, r runs in fixed blocks (:func:`_block_starts`), each counted as its lowest
    first factor (at its largest r) times its lowest second factor: below every f(r) in the block, and the same
    blocks for every data set, which keeps the argument.

    Examples
    --------
    >>> round(never_pass_cap(np.r_[np.full(15, 9), np.full(5, 10)], np.full(20, 10), 0.95), 4)  # 0.025^(1/20)·0.925
    0.7692
    >>> k = np.r_[0, np.full(19, 9)]  # one case of 20 never passes: 1 − s_U(1 of 20) = 0.75127, times 171/190
    >>> round(never_pass_cap(k, np.full(20, 10), 0.95), 4)
    0.6761
    """
    from scipy import special  # first use; not scipy.stats (see clopper_pearson)
    alpha = 1.0 - check_confidence(confidence)
    k, m = np.asarray(k, dtype=float), np.asarray(m, dtype=float)
    total, passed = float(m.sum()), float(k.sum())
    if passed <= 0:
        return 0.0
    size = n_min(m)
    zero = np.sort(m[k <= 0])[::-1]  # the sizes of the clusters that pass nothing, largest first
    j = zero.size
    rest = total - float(zero.sum())
    largest = np.concatenate(([0.0], np.cumsum(zero)))  # T_r: the rows of the r largest
    r = np.arange(j + 1)
    rate = (passed + j - r) / (rest + largest[j - r])  # the j − r others turned, one pass each
    starts = _block_starts(CAP_STEPS)
    starts = starts[: np.searchsorted(starts, j, side="right")]  # the blocks that hold a count 0..j
    top = np.append(starts[1:] - 1, j)  # each block's largest r
    left = size * largest[top] / total  # n_min·T_r: the zero rows left, as successes
    with np.errstate(invalid="ignore"):
        share = np.where(left > 0, special.betaincinv(size - left, left + 1, alpha / 2), (alpha / 2) ** (1.0 / size))
    return float(np.min(share * np.minimum.reduceat(rate, starts)))
