"""The interval record and the binomial intervals (Clopper–Pearson, Wilson) from SciPy alone.

Pure NumPy/SciPy: importing this module does not import statsmodels (the gate's cold path stays light);
the tests check both intervals against statsmodels ``proportion_confint`` to 1e-12.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Interval", "check_confidence", "clopper_pearson", "wilson", "all_pass_low", "unseen_cap", "n_min"]


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
    if not 0.0 < float(confidence) < 1.0:
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
    and n). At k = n the lower end is the closed form (α/2)^(1/n), the Beta(n, 1) quantile, and at k = 0
    the upper end is 1 − (α/2)^(1/n): a solver can round those one unit in the last place either way
    (scipy 1.10 did), and the cluster bounds cap a run with failures at this same all-pass number, so
    the gate's promise that a perfect run is never judged below one with a failure holds to the last bit.
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
    return float(special.betaincinv(k, n - k + 1, alpha / 2)), float(special.betaincinv(k + 1, n - k, 1 - alpha / 2))


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
    z = float(special.ndtri(1 - alpha / 2))
    p = k / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if k == 0 else min(max(center - half, 0.0), 1.0)
    high = 1.0 if k == n else min(max(center + half, 0.0), 1.0)
    return low, high


def n_min(m: np.ndarray) -> float:
    """The effective size n_min = (Σm)²/Σm² of clusters of sizes ``m`` (the size if every cluster were one row)."""
    mf = np.sort(m.astype(float))
    return float(mf.sum() ** 2 / (mf**2).sum())


def all_pass_low(m: np.ndarray, confidence: float) -> float:
    """The lower bound when every row passes: Clopper–Pearson of n_min successes in n_min, (α/2)^(1/n_min)
    (computed by :func:`clopper_pearson`, so a perfect run and the cap of a run with failures are one number)."""
    size = n_min(m)
    return clopper_pearson(size, size, confidence)[0]


def unseen_cap(m: np.ndarray, estimate: float, confidence: float) -> float:
    """The highest lower bound clusters of sizes ``m`` that pass a share ``estimate`` of their rows can vouch for:
    L_all·p̂, with L_all = (α/2)^(1/n_min) the all-pass bound (:func:`all_pass_low`).

    A sample of n_min clusters, all of them passing, cannot rule out a share 1 − L_all of clusters it did not
    draw that pass nothing; nor can a sample whose clusters pass a share p̂ of their rows rule out such clusters
    beside others at p̂: the rate L_all·p̂. At p̂ = 1 it is L_all itself, and it rises with p̂, so a bound capped
    at it stays monotone. Epochs (many rows a cluster) make the spread between the clusters drawn small, so the
    CR2 logit-t bound alone vouched for more: where one case in ten never passes and the others pass 9 tries in
    10 (rate 0.81), 20 cases × 10 epochs put it above 0.81 in 11.55% of samples, nominal 2.5% (mostly the
    0.9^20 = 12% that drew no such case; ``python tests/reference/hard_cells.py --only mixture`` on the code
    before this cap, review G27). The argument makes the cap necessary, not sufficient: p̂ stands in for the rate
    of the kinds drawn, and what the capped bound misses is measured, not proven (the ``mixture`` cells of
    benchmarks/coverage.md: at most 1.35% up to G = 30, 5% at G = 100, where samples hold a few such cases).

    Examples
    --------
    >>> round(unseen_cap(np.full(20, 10), 185 / 200, 0.95), 4)  # (0.025)^(1/20) · 0.925
    0.7692
    """
    return all_pass_low(m, confidence) * estimate
