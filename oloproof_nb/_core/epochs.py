"""Repeated runs of a case (epochs): the unbiased pass^k and pass@k estimators and their clustered interval.

Pure NumPy/SciPy. A case run n times (epochs) with c passes has three per-case summaries of a criterion:

- ``mean`` (pass@1): c/n;
- ``pass^k``: the chance that k runs drawn without replacement from the n **all** pass,
  C(c, k)/C(n, k) (Yao et al. 2024, τ-bench);
- ``pass@k``: the chance that **at least one** of k such runs passes, 1 − C(n−c, k)/C(n, k)
  (Chen et al. 2021).

Both are unbiased for the case's true pass^k = p^k and pass@k = 1 − (1−p)^k when the n epochs are
independent runs with pass probability p, and need n ≥ k. A criterion's value is the mean of the
per-case values; its interval treats each case as one row of value v_i ∈ [0, 1] in its source's
cluster (:func:`fractional_interval`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .binomial import Interval, all_pass_low, check_confidence
from .cr2 import bell_mccaffrey_df, cp_on_n_min_at, cr2_se, low_confidence_floor, monotone_low

__all__ = ["Reduction", "parse_reduce", "pass_hat_k", "pass_at_k", "reduce_counts", "value_denominator",
           "fractional_interval", "REDUCE_HELP", "MAX_SCALED_ROWS"]

#: Largest Σm·D (cases × the common denominator of their values) the monotone interval of
#: :func:`fractional_interval` works on exactly; above it the denominator is made smaller (values rounded down).
#: A constant: it depends on the design (cases and epochs), never on the passes.
MAX_SCALED_ROWS = 2_000_000
#: What ``reduce`` accepts, in words (error messages).
REDUCE_HELP = "mean, pass^K or pass@K (K a whole number ≥ 1, at most the run's epochs)"
_PATTERN = re.compile(r"^(?:(mean)|pass(\^|@)([1-9]\d{0,4}))$")


@dataclass(frozen=True)
class Reduction:
    """A parsed ``reduce``: ``kind`` (``mean``, ``pass^`` or ``pass@``) and ``k`` (1 for ``mean``)."""

    kind: str
    k: int

    @property
    def text(self) -> str:
        """The canonical spelling: ``mean``, ``pass^3``, ``pass@3``."""
        return "mean" if self.kind == "mean" else f"{self.kind}{self.k}"


def parse_reduce(text: object) -> Reduction:
    """Parse ``mean``, ``pass^k`` or ``pass@k``.

    Raises
    ------
    ValueError
        Any other text (``k`` must be a whole number ≥ 1).

    Examples
    --------
    >>> parse_reduce("pass^3"), parse_reduce("mean").text
    (Reduction(kind='pass^', k=3), 'mean')
    """
    m = _PATTERN.match(text.strip()) if isinstance(text, str) else None
    if m is None:
        raise ValueError(f"{text!r} is not a reduction; allowed: {REDUCE_HELP}")
    if m.group(1):
        return Reduction("mean", 1)
    return Reduction("pass" + m.group(2), int(m.group(3)))


def _counts(name: str, value: ArrayLike) -> np.ndarray:
    """``value`` as whole numbers, or ValueError: a fraction, a text or a bool is no count of epochs or passes
    (``pass_hat_k(5, 2.5, 2)`` was read as 2 passes, 0.1, and ``pass_hat_k(5.9, 5, 5)`` as 5 of 5, 1.0)."""
    raw = np.asarray(value)
    if raw.dtype.kind in "iu":
        return raw.astype(np.int64)
    if raw.dtype.kind == "f" and np.isfinite(raw).all() and (raw == np.round(raw)).all():
        return raw.astype(np.int64)
    raise ValueError(f"{name} must hold whole numbers (counts per case), got {value!r}")


def _check(n: ArrayLike, c: ArrayLike, k: int) -> tuple[np.ndarray, np.ndarray]:
    n_arr, c_arr = _counts("n", n), _counts("c", c)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k={k!r} must be a whole number ≥ 1")
    if n_arr.shape != c_arr.shape:
        raise ValueError("n and c must have the same shape (one entry per case)")
    if ((c_arr < 0) | (c_arr > n_arr)).any():
        raise ValueError("every case needs 0 ≤ c ≤ n")
    if (n_arr < k).any():
        i = int(np.flatnonzero(n_arr < k)[0])
        raise ValueError(f"k={k} needs n ≥ k epochs per case; case {i} has n={int(n_arr.flat[i])}")
    return n_arr, c_arr


def _ratio(top: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """C(top, k)/C(n, k) = Π_{i<k} (top − i)/(n − i), 0 when top < k (exact products, no factorials)."""
    out = np.ones(top.shape, dtype=float)
    for i in range(k):
        out *= np.clip(top - i, 0, None) / (n - i)
    return out


def pass_hat_k(n: ArrayLike, c: ArrayLike, k: int) -> np.ndarray:
    """The unbiased estimator of pass^k (all of k runs pass) per case: C(c, k)/C(n, k).

    Parameters
    ----------
    n : array-like of int
        Epochs of each case (n ≥ k).
    c : array-like of int
        Passes among them (0 ≤ c ≤ n).
    k : int
        Runs that must all pass.

    Returns
    -------
    numpy.ndarray of float
        C(c, k)/C(n, k) = Π_{i=0}^{k−1} (c − i)/(n − i) per case (0 when c < k).

    Notes
    -----
    Of the C(n, k) ways to pick k of the n recorded epochs, C(c, k) pick only passes; with the epochs
    independent Bernoulli(p) draws, E[C(c, k)]/C(n, k) = p^k, so the estimator is unbiased for the
    case's pass^k (Yao et al. 2024 define pass^k this way for τ-bench). k = 1 gives c/n.

    References
    ----------
    Yao, S., Shinn, N., Razavi, P. & Narasimhan, K. (2024). τ-bench: a benchmark for tool-agent-user
    interaction in real-world domains. arXiv:2406.12045.

    Examples
    --------
    >>> pass_hat_k([5, 5, 3], [5, 3, 2], 3).round(4).tolist()
    [1.0, 0.1, 0.0]
    """
    n_arr, c_arr = _check(n, c, k)
    return _ratio(c_arr, n_arr, k)


def pass_at_k(n: ArrayLike, c: ArrayLike, k: int) -> np.ndarray:
    """The unbiased estimator of pass@k (at least one of k runs passes) per case: 1 − C(n−c, k)/C(n, k).

    Parameters
    ----------
    n : array-like of int
        Epochs of each case (n ≥ k).
    c : array-like of int
        Passes among them (0 ≤ c ≤ n).
    k : int
        Runs of which one must pass.

    Returns
    -------
    numpy.ndarray of float
        1 − Π_{i=0}^{k−1} (n − c − i)/(n − i) per case (1 when n − c < k).

    Notes
    -----
    The complement of "all k picked epochs fail": C(n − c, k) of the C(n, k) picks hold only failures.
    Unbiased for 1 − (1 − p)^k (Chen et al. 2021, eq. 1). Chen et al. compute it as
    1 − Π_{i=n−c+1}^{n} (1 − k/i), a product over the c passes; the product here runs over the k picks,
    and the two are equal (both are C(n − c, k)/C(n, k) written as a ratio of falling factorials).

    References
    ----------
    Chen, M., Tworek, J., Jun, H., et al. (2021). Evaluating large language models trained on code.
    arXiv:2107.03374.

    Examples
    --------
    >>> pass_at_k([5, 5, 3], [0, 1, 1], 3).round(4).tolist()
    [0.0, 0.6, 1.0]
    """
    n_arr, c_arr = _check(n, c, k)
    return 1.0 - _ratio(n_arr - c_arr, n_arr, k)


def reduce_counts(n: ArrayLike, c: ArrayLike, reduction: Reduction | str) -> np.ndarray:
    """The per-case value of ``reduction`` (``mean``: c/n; ``pass^k``; ``pass@k``) from epochs n and passes c."""
    r = parse_reduce(reduction) if isinstance(reduction, str) else reduction
    if r.kind == "mean":
        n_arr, c_arr = _check(n, c, 1)
        return np.asarray(c_arr / n_arr, dtype=float)
    estimator = pass_hat_k if r.kind == "pass^" else pass_at_k
    return estimator(n, c, r.k)


def value_denominator(n: ArrayLike, reduction: Reduction | str) -> int:
    """A common denominator D of the per-case values of ``reduction``: every value times D is a whole number.

    Parameters
    ----------
    n : array-like of int
        Epochs of each case (n ≥ k).
    reduction : Reduction or str
        ``mean``, ``pass^k`` or ``pass@k``.

    Returns
    -------
    int
        The least common multiple of the C(n_i, k) (of the n_i for ``mean``): a value is C(c, k)/C(n, k),
        1 − C(n − c, k)/C(n, k) or c/n. It depends on the epochs only, never on the passes; 1 when every
        case has exactly k epochs (binary values).

    Examples
    --------
    >>> value_denominator([5, 5], "pass^3"), value_denominator([4, 6], "pass@2"), value_denominator([3], "pass^3")
    (10, 30, 1)
    """
    r = parse_reduce(reduction) if isinstance(reduction, str) else reduction
    sizes = {int(v) for v in np.asarray(n, dtype=np.int64).ravel().tolist()}
    if any(v < r.k for v in sizes):
        raise ValueError(f"k={r.k} needs n ≥ k epochs per case")
    return math.lcm(1, *(v if r.kind == "mean" else math.comb(v, r.k) for v in sizes))


def fractional_interval(sums: ArrayLike, sizes: ArrayLike, confidence: float = 0.95,
                        denominator: int | None = None) -> Interval:
    """Interval of a mean of per-case values v_i ∈ [0, 1] clustered by source: the CR2 logit-t interval.

    Parameters
    ----------
    sums : array-like of float
        Per cluster, the sum s_c of its cases' values (e.g. pass^k estimates).
    sizes : array-like of int
        Per cluster, its cases m_c ≥ 1.
    confidence : float, default 0.95
        Two-sided level.
    denominator : int, optional
        A common denominator D of the values (:func:`value_denominator`): every s_c·D is a whole number.
        Given, the bounds are **monotone by construction** (Notes); the gate always gives it.

    Returns
    -------
    Interval
        ``method="cluster_t"`` (``n`` = Σm cases, ``n_clusters`` = G), or ``clopper_pearson`` with a
        ``reason`` when every value is 0, every value is 1, or G < 2.

    Notes
    -----
    The estimate is p̂ = Σs/Σm, the intercept of the regression of the values on a constant. Its CR2
    standard error is √(Σ_c (s_c − p̂ m_c)²/(1 − m_c/N))/N (Bell & McCaffrey 2002; N = Σm) — the
    formula of the gate's ``cluster_t``, which depends on the rows only through the cluster sums, so
    it holds for fractional values — and the degrees of freedom are Bell–McCaffrey's, which depend on
    the sizes m_c only. The interval is expit(logit p̂ ± t_ν · SE/(p̂(1 − p̂))), its lower end capped
    at min(p̂, (α/2)^(1/n_min)) and its upper end at max(p̂, 1 − (α/2)^(1/n_min)) with
    n_min = (Σm)²/Σm² (the all-pass bound the gate caps at). That raw bound is not monotone: one more
    failing epoch can raise it (19 cases at 1 and one at 0 give a lower bound 0.03 below the same cases
    with one case at 2/3 instead of 1). With ``denominator`` D the bounds are the gate's monotone
    ``cluster_t`` bounds of the data set where case i is D rows of which a_i = v_i·D pass (its value
    is their mean, and the CR2 SE and Bell–McCaffrey degrees of freedom do not change when every
    size is multiplied by D): the smallest CR2 logit-t bound over every data set with more passing
    rows — a superset of the data sets with more passing epochs — so raising any value never lowers
    ``low`` and never lowers ``high``. When Σm·D exceeds :data:`MAX_SCALED_ROWS`, D is made smaller
    and the values rounded down to it (a worse data set: the bound only gets lower). When every value
    is 0 or every value is 1, or G < 2, it is Clopper–Pearson on n_min with p̂·n_min successes; below
    confidence ``cr2.LOW_CONFIDENCE`` = 0.75 every interval is widened to hold that interval, as the
    gate's ``cluster_t`` is (``cr2.low_confidence_floor``).

    References
    ----------
    Bell, R. M. & McCaffrey, D. F. (2002). Bias reduction in standard errors for linear regression with
    multi-stage samples. Survey Methodology 28(2), 169–181.
    Pustejovsky, J. E. & Tipton, E. (2018). Small-sample methods for cluster-robust variance estimation
    and hypothesis testing in fixed effects models. JBES 36(4), 672–683.

    Examples
    --------
    >>> iv = fractional_interval([0.5, 1.0, 0.1, 1.0], [1, 1, 1, 1])
    >>> round(iv.estimate, 4), iv.method, iv.low < iv.estimate < iv.high
    (0.65, 'cluster_t', True)
    """
    confidence = check_confidence(confidence)
    s = np.asarray(sums, dtype=float)
    m = np.asarray(sizes, dtype=np.int64)
    if s.ndim != 1 or s.shape != m.shape or s.size == 0:
        raise ValueError("sums and sizes must be non-empty one-dimensional arrays of the same length")
    if (m < 1).any() or (s < -1e-12).any() or (s > m + 1e-12).any() or not np.isfinite(s).all():
        raise ValueError("every cluster needs sizes ≥ 1 and 0 ≤ sums ≤ sizes")
    total = int(m.sum())
    estimate = float(min(max(s.sum() / total, 0.0), 1.0))
    g = s.shape[0]
    if estimate in (0.0, 1.0) or g < 2:
        why = (f"degenerate: every value is {estimate:g}" if estimate in (0.0, 1.0)
               else f"too few clusters for cluster_t: G={g}, need at least 2")
        return cp_on_n_min_at(estimate, m, confidence, why)
    from scipy import special  # first use; not scipy.stats (t quantile: special.stdtrit, as stats.t.ppf does)

    top = all_pass_low(m, confidence)
    df = bell_mccaffrey_df(m)
    if denominator is not None:
        low, high = _monotone_bounds(s, m, int(denominator), confidence, df)
        low, high = min(low, top, estimate), max(high, 1.0 - top, estimate)
    else:
        se = cr2_se(s, m)
        t = float(special.stdtrit(df, 0.5 + confidence / 2))
        half = t * se / (estimate * (1.0 - estimate))
        centre = float(special.logit(estimate))
        low = min(float(special.expit(centre - half)), top, estimate)
        high = max(float(special.expit(centre + half)), 1.0 - top, estimate)
    if not math.isfinite(low) or not math.isfinite(high):  # pragma: no cover - se is finite for G ≥ 2
        raise ValueError("the interval is not finite")
    low, high = low_confidence_floor(low, high, estimate, m, confidence)  # as the gate's cluster_t
    if not low < high:  # the raw bound when every cluster has the same mean (SE = 0); never the monotone one
        return cp_on_n_min_at(estimate, m, confidence, "zero-width cluster_t")
    return Interval(estimate, low, high, "cluster_t", total, g)


def _monotone_bounds(s: np.ndarray, m: np.ndarray, denominator: int, confidence: float,
                     df: float) -> tuple[float, float]:
    """The monotone CR2 logit-t bounds of values s_c/m_c with common denominator D (see :func:`fractional_interval`)."""
    if denominator < 1:
        raise ValueError(f"denominator={denominator!r} must be a whole number ≥ 1")
    total = int(m.sum())
    scale = denominator
    if total * scale > MAX_SCALED_ROWS:  # a design too large to scale exactly: a coarser D, values rounded down
        scale = max(1, MAX_SCALED_ROWS // total)
    rows = m * scale
    down = np.minimum(np.floor(s * scale + 1e-9).astype(np.int64), rows)  # exact when scale == D (s·D whole)
    # rounded down, the upper bound must come from the values rounded up
    up = down if scale == denominator else np.minimum(np.ceil(s * scale - 1e-9).astype(np.int64), rows)
    return monotone_low(down, rows, confidence, df), 1.0 - monotone_low(rows - up, rows, confidence, df)
