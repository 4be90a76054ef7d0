"""An independent oracle of the release gate's decision, written from DESIGN.md's text (tests only).

Nothing here imports the package: the rows of each criterion are counted from the verdicts a test planted, and
the intervals come from statsmodels (Clopper–Pearson ``method="beta"``, Wilson ``method="wilson"``) or, for a
clustered run, from the matrix reference of ``tests/_cr2_reference.py`` (the CR2 logit-t bound made monotone by
brute force, with DESIGN's degenerate fallback: Clopper–Pearson on n_min = (Σm)²/Σm² when every row agrees).

DESIGN.md, "Statistics": a run is clustered when any cluster holds more than one case (a case's epochs share its
cluster, README §6b); rows are binary (missing = 0); per criterion named in release.yaml: before anything else a
clustered run without ``allow_approximate_methods`` is ``approximate_methods_not_allowed``, own rows in fewer than
``min_clusters`` clusters ``too_few_clusters`` (an approximate-method setting: release.yaml's comment and README's
"settings that decide nothing for the run (``min_clusters`` on independent cases)"), no rows ``no_evidence``, all
rows missing ``all_missing``; then ``PASS`` when ci_low ≥ threshold, ``FAIL`` when ci_high < threshold, else
``INSUFFICIENT_EVIDENCE`` (``interval_includes_threshold``). The verdict is PASS only when every listed criterion
passes; with none it is BLOCK (``no_criteria``). Unlisted criteria are ``REPORT_ONLY`` with threshold NaN.

From README §6 / §6b where DESIGN.md only names the method: the clustered bound is made monotone (the minimum
over every data set with more passes, capped by what the clusters can vouch for) and, below confidence 0.75,
widened to hold Clopper–Pearson on n_min; ``cluster_bootstrap`` is replaced by ``cluster_t`` (no G is
validated); ``pass^k`` / ``pass@k`` reduce each case's epochs first (:func:`counted_reduced`).
Where DESIGN.md is silent the oracle takes the reading noted at the line (one cluster: Clopper–Pearson on
n_min, as no t has 0 degrees of freedom; a reduced criterion without rows: clustered as the run is); where it
gives no order among the reasons that come first, any reason that applies is accepted.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from _cr2_reference import never_pass_cap_by_hand
from scipy import special, stats
from statsmodels.stats.proportion import proportion_confint

#: The reasons that come before the interval is read, in DESIGN.md's order.
EARLY_REASONS = ("approximate_methods_not_allowed", "too_few_clusters", "no_evidence", "all_missing")


#: A criterion's rows: (cluster, case id, verdict), one per case run (a case's epochs are rows of its cluster).
Rows = list[tuple[str, str, str]]


@dataclass(frozen=True)
class Release:
    """The release settings the oracle reads (release.yaml's keys, DESIGN.md defaults)."""

    criteria: dict[str, float]
    reduce: dict[str, str] = field(default_factory=dict)  # criterion → pass^k / pass@k (README §6b); else mean
    confidence: float = 0.95
    allow_approximate_methods: bool = False
    min_clusters: int = 20
    method: str = "cluster_t"
    unclustered_method: str = "clopper_pearson"

    def as_yaml(self) -> dict[str, object]:
        """The release.yaml mapping these settings write."""
        criteria = {c: {"threshold": t, "reduce": self.reduce[c]} if c in self.reduce else t
                    for c, t in self.criteria.items()}
        return {"criteria": criteria, "confidence": self.confidence, "method": self.method,
                "allow_approximate_methods": self.allow_approximate_methods, "min_clusters": self.min_clusters,
                "unclustered_method": self.unclustered_method}


@dataclass
class Row:
    """One criterion's figures and decision as the oracle sees them."""

    criterion: str
    n: int
    n_clusters: int
    passed: int
    missing: int
    failing_clusters: int
    rate: float
    low: float
    high: float
    threshold: float
    verdict: str
    method: str
    clustered: bool
    reasons: tuple[str, ...] = field(default=())  # every reason DESIGN allows for `verdict`


def _per_cluster(items: list[tuple[str, int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster (Σ passes, Σ rows) of ``(cluster, passes, rows)`` items, clusters in first-seen order."""
    k: dict[str, int] = {}
    m: dict[str, int] = {}
    for cluster, passes, rows in items:
        k[cluster] = k.get(cluster, 0) + passes
        m[cluster] = m.get(cluster, 0) + rows
    return np.array(list(k.values()), dtype=int), np.array(list(m.values()), dtype=int)


@dataclass
class Counted:
    """One criterion's evidence: cluster sums, whether it is clustered, and the gate table's counts."""

    k: np.ndarray
    m: np.ndarray
    clustered: bool
    n: int
    passed: int
    missing: int
    failing_clusters: int
    rate: float


def counted_mean(rows: Rows, run_clustered: bool) -> Counted:
    """DESIGN "Statistics": every row binary (missing = 0), clustered as the run is."""
    k, m = _per_cluster([(c, int(v == "pass"), 1) for c, _, v in rows])
    return Counted(k, m, run_clustered, len(rows), int(k.sum()), sum(v == "missing" for _, _, v in rows),
                   len({c for c, _, v in rows if v != "pass"}), k.sum() / len(rows) if rows else math.nan)


def counted_reduced(rows: Rows, reduce: str) -> Counted:
    """README §6b: per case with n epochs and c passes, pass^k = C(c,k)/C(n,k) and pass@k = 1 − C(n−c,k)/C(n,k);
    ``n`` counts cases, ``passed`` those at 1, ``missing`` those whose every epoch is missing. With exactly k epochs
    a case (values 0 or 1) the interval is on per-cluster sums of the values, clustered only when a cluster holds
    more than one case; with more (fractional values) each case counts as D = lcm C(n, k) rows of which v·D
    pass, always clustered (the monotone CR2 logit-t)."""
    k_of = int(reduce[5:])
    cases: dict[str, list[tuple[str, str]]] = {}
    for cluster, case, verdict in rows:
        cases.setdefault(case, []).append((cluster, verdict))
    values: list[tuple[str, Fraction, bool]] = []
    for runs in cases.values():
        n_runs, c = len(runs), sum(v == "pass" for _, v in runs)
        if reduce.startswith("pass^"):
            value = Fraction(math.comb(c, k_of), math.comb(n_runs, k_of))
        else:
            value = 1 - Fraction(math.comb(n_runs - c, k_of), math.comb(n_runs, k_of))
        values.append((runs[0][0], value, all(v == "missing" for _, v in runs)))
    binary = all(len(runs) == k_of for runs in cases.values())
    scale = 1 if binary else math.lcm(*(math.comb(len(runs), k_of) for runs in cases.values()))
    k, m = _per_cluster([(c, int(v * scale), scale) for c, v, _ in values])
    per_cluster = _per_cluster([(c, 1, 1) for c, _, _ in values])[1]
    return Counted(k, m, bool((per_cluster > 1).any()) or not binary, len(values),
                   sum(v == 1 for _, v, _ in values), sum(gone for _, _, gone in values),
                   len({c for c, v, _ in values if v < 1}),
                   float(sum(v for _, v, _ in values) / len(values)) if values else math.nan)


def cr2_closed_form(k: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """(p̂, CR2 SE) of every row of ``k`` (data sets × clusters) and the Bell–McCaffrey df of the sizes ``m``.

    The matrix definitions of ``_cr2_reference.cr2_matrix`` with X = 1: H_cc = (m_c/N)·J, and 1 is an
    eigenvector of J, so A_c·1 = (1 − m_c/N)^(−1/2)·1 and u_c = (1 − m_c/N)^(−1/2)·(k_c − p̂·m_c), V = Σu_c²/N²;
    the columns of G are (1 − m_c/N)^(−1/2)·(δ_c − m_c/N)/N, so GᵀG = a aᵀ ∘ (diag(m) − m mᵀ/N)/N² (no k in it).
    ``test_closed_form_is_the_matrix_reference`` checks it against the matrices."""
    n = float(m.sum())
    a = 1.0 / np.sqrt(1.0 - m / n)
    p = k.sum(axis=1) / n
    u = a * (k - p[:, None] * m)
    se = np.sqrt((u**2).sum(axis=1)) / n
    gtg = np.outer(a, a) * (np.diag(m.astype(float)) - np.outer(m, m) / n) / n**2
    lam = np.linalg.eigvalsh(gtg)
    return p, se, float(lam.sum() ** 2 / (lam**2).sum())


def monotone_low(k: np.ndarray, m: np.ndarray, confidence: float) -> float:
    """``_cr2_reference.brute_force_low(k, m, confidence, up_to_order=True)``, vectorised over the data sets.

    The minimum of the never-pass cap and, over every data set with k ≤ k' ≤ m other than all-pass, the CR2 logit-t
    bound, or Clopper–Pearson on n_min when every cluster has the same rate."""
    best = never_pass_cap_by_hand(k, m, confidence)
    groups = Counter(zip(m.tolist(), k.tolist(), strict=True))
    keys = sorted(groups)
    choices = [list(itertools.combinations_with_replacement(range(kc, mc + 1), groups[mc, kc])) for mc, kc in keys]
    sizes = np.concatenate([np.full(groups[key], key[0]) for key in keys])
    data = np.array([np.concatenate(combo) for combo in itertools.product(*choices)], dtype=float)
    data = data[(data.sum(axis=1) > 0) & (data.sum(axis=1) < sizes.sum())]
    if not len(data):
        return best
    alpha = 1.0 - confidence
    n_min = sizes.sum() ** 2 / float((sizes.astype(float) ** 2).sum())
    same = np.all(data * sizes[0] == data[:, :1] * sizes, axis=1)
    p, se, df = cr2_closed_form(data, sizes)
    t = stats.t.ppf(1.0 - alpha / 2, df)
    with np.errstate(divide="ignore", invalid="ignore"):
        low = special.expit(special.logit(p) - t * se / (p * (1 - p)))
    x = p * n_min
    low = np.where(same, stats.beta.ppf(alpha / 2, x, n_min - x + 1), low)
    return float(min(best, np.nanmin(low)))


def interval(ev: Counted, release: Release) -> tuple[float, float, str]:
    """The interval DESIGN.md names for this evidence and its method's name (NaN, NaN, "" without rows)."""
    k, m = ev.k, ev.m
    if not m.size:
        return math.nan, math.nan, ""
    passed, n = int(k.sum()), int(m.sum())
    alpha = 1.0 - release.confidence
    if not ev.clustered:
        method = "beta" if release.unclustered_method == "clopper_pearson" else "wilson"
        low, high = proportion_confint(passed, n, alpha=alpha, method=method)
        # Wilson's ends at p̂ = 0 and 1 are 0 and 1 exactly; statsmodels can round them off (1 − 1e-16), which
        # would turn an all-pass run into a FAIL at threshold 1
        low, high = (0.0 if passed == 0 else low), (1.0 if passed == n else high)
        return float(low), float(high), release.unclustered_method
    n_min = n * n / float((m.astype(float) ** 2).sum())
    x = n_min if passed == n else n_min * passed / n  # n_min·n/n can round off n_min: statsmodels' upper is then NaN
    cp_low, cp_high = proportion_confint(x, n_min, alpha=alpha, method="beta")
    if passed in (0, n) or m.size == 1:  # every row agrees (DESIGN's "degenerate"), or no t with 0 df
        return float(cp_low), float(cp_high), "clopper_pearson"
    low, high = monotone_low(k, m, release.confidence), 1.0 - monotone_low(m - k, m, release.confidence)
    if release.confidence < 0.75:  # README §6: below 0.75 widened to hold Clopper–Pearson on n_min
        low, high = min(low, cp_low), max(high, cp_high)
    return low, high, "cluster_t"


def decide(run_rows: dict[str, Rows], run_clustered: bool, release: Release,
           bounds: dict[str, tuple[float, float]] | None = None) -> tuple[str, dict[str, Row]]:
    """The gate's verdict and each criterion's row, from every criterion's ``(cluster, case, verdict)`` rows.

    ``bounds`` replaces the oracle's interval of a criterion (a test that sets a threshold exactly at the
    gate's own interval end decides on those ends, after checking them against the oracle's to 1e-9)."""
    table: dict[str, Row] = {}
    for name in list(run_rows) + [c for c in release.criteria if c not in run_rows]:
        rows = run_rows.get(name, [])
        reduce = release.reduce.get(name, "mean")
        ev = counted_mean(rows, run_clustered) if reduce == "mean" else counted_reduced(rows, reduce)
        if not rows:  # no case reduced: DESIGN is silent; the rules of the run's other criteria (either way
            ev.clustered = run_clustered  # the verdict is INSUFFICIENT_EVIDENCE)
        low, high, method = interval(ev, release)
        if bounds and name in bounds:
            low, high = bounds[name]
        threshold = release.criteria.get(name, math.nan)
        early = []
        if ev.clustered and not release.allow_approximate_methods:
            early.append("approximate_methods_not_allowed")
        if ev.clustered and ev.m.size < release.min_clusters:
            early.append("too_few_clusters")
        if not rows:
            early.append("no_evidence")
        elif ev.missing == ev.n:
            early.append("all_missing")
        if name not in release.criteria:
            verdict, reasons = "REPORT_ONLY", ()
        elif early:
            verdict, reasons = "INSUFFICIENT_EVIDENCE", tuple(early)
        elif low >= threshold:
            verdict, reasons = "PASS", ()
        elif high < threshold:
            verdict, reasons = "FAIL", ()
        else:
            verdict, reasons = "INSUFFICIENT_EVIDENCE", ("interval_includes_threshold",)
        table[name] = Row(name, ev.n, int(ev.m.size), ev.passed, ev.missing, ev.failing_clusters, ev.rate, low, high,
                          threshold, verdict, method, ev.clustered, reasons)
    listed = [table[c] for c in release.criteria]
    overall = "PASS" if listed and all(r.verdict == "PASS" for r in listed) else "BLOCK"
    return overall, table
