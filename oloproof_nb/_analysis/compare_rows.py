"""One criterion's row of a comparison: its paired interval (of the rows, or of pass^k / pass@k per case) and the
regression rule that decides it (rules 0–6 of :mod:`~.compare`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .._config.release import ReleaseConfig
from .._core.bootstrap import PAIRED_BOOTSTRAP_MIN_CLUSTERS
from .._core.epochs import Reduction, reduce_counts
from .._core.paired import mcnemar_exact, paired_difference_from_sums
from .._core.stats import is_clustered_from_sums
from .gate import criterion_sums
from .gate_reasons import commonest_reason, too_few_clusters
from .gate_settings import APPROXIMATE_NOT_ALLOWED

__all__ = ["regression_verdict", "decide", "reduced_row", "missing_why", "base_missing_passed", "rows_ci_low",
           "paired_row"]


def regression_verdict(ci_low: float, ci_high: float, margin: float) -> tuple[str, str]:
    """Rule 6: ``NO_REGRESSION`` when ci_low ≥ −margin, ``REGRESSION`` when ci_high < −margin, else undecided.

    Examples
    --------
    >>> regression_verdict(-0.02, 0.05, 0.02)
    ('NO_REGRESSION', 'ci_low_at_or_above_minus_margin')
    >>> regression_verdict(-0.30, -0.02, 0.02)
    ('INSUFFICIENT_EVIDENCE', 'interval_includes_minus_margin')
    """
    if ci_low >= -margin:
        return "NO_REGRESSION", "ci_low_at_or_above_minus_margin"
    if ci_high < -margin:
        return "REGRESSION", "ci_high_below_minus_margin"
    return "INSUFFICIENT_EVIDENCE", "interval_includes_minus_margin"


def decide(row: dict[str, Any], cfg: ReleaseConfig, clustered: bool, unchecked: bool = False,
           undecided: str = "") -> tuple[str, str]:
    if undecided:  # a reduced criterion that cannot be paired case by case
        return "INSUFFICIENT_EVIDENCE", undecided
    if row["n"] == 0:
        return "INSUFFICIENT_EVIDENCE", "no_evidence"
    if row["missing"] == row["n"]:
        return "INSUFFICIENT_EVIDENCE", "all_missing"
    if clustered and not cfg.allow_approximate_methods:
        return "INSUFFICIENT_EVIDENCE", APPROXIMATE_NOT_ALLOWED  # compare() says after it which key decides it
    if row["n_clusters"] < cfg.min_clusters:  # the numbers, as the gate gives them, and where the interval lies
        why = too_few_clusters(row["n_clusters"], cfg.min_clusters)
        if row["ci_high"] < -cfg.regression.margin:  # a wrapped benchmark's 6 customers said no more
            why += ("; its interval lies below −margin, but from so few clusters an interval is not trusted: a "
                    "loss this suite has too few clusters to confirm (cluster more finely, or add clusters)")
        return "INSUFFICIENT_EVIDENCE", why
    if unchecked:
        return "INSUFFICIENT_EVIDENCE", "transform_not_checked"
    return regression_verdict(row["ci_low"], row["ci_high"], cfg.regression.margin)


def reduced_row(row: dict[str, Any], rows: pd.DataFrame, reduction: Reduction, cfg: ReleaseConfig,
                notes: list[str]) -> str:
    """Fill ``row`` for a criterion release.yaml reduces with pass^k or pass@k: the paired difference of its
    per-case values; return why it cannot be decided (``""`` when it can).

    The per-row difference is not the reduced one: a base passing half its cases in all 3 epochs and the other
    half in 1 and a candidate passing every case in 2 have the same mean (2/3) and pass^3 0.5 and 0. Each paired
    case (its epochs paired in both runs) becomes one row of value pass^k or pass@k (missing counts as not
    passed), in its cluster. With exactly k epochs the values are 0 or 1 and get the paired interval of
    :func:`~oloproof_nb._core.paired.paired_difference_from_sums` on their per-cluster sums (``n`` counts cases);
    a case with fewer than k paired epochs may be the one that regressed (``too_few_epochs``), and values that
    can be fractional (more than k epochs) have no paired interval (``reduce_not_paired``), but for k = 1 with as
    many paired epochs in every case: pass^1 and pass@1 are then the mean, compared over the case runs (``n``
    counts them).
    """
    text = reduction.text
    if rows.empty:
        return ""
    by_case = pd.DataFrame({"case_id": rows["case_id"], "cluster": rows["cluster"],
                            "b": rows["base"] == "pass", "c": rows["candidate"] == "pass",
                            "mb": rows["base"] == "missing", "mc": rows["candidate"] == "missing"}).groupby(
        "case_id", sort=False).agg(cluster=("cluster", "first"), n=("b", "size"), b=("b", "sum"), c=("c", "sum"),
                                   mb=("mb", "sum"), mc=("mc", "sum"))
    n = by_case["n"].to_numpy(np.int64)
    short = int((n < reduction.k).sum())
    if reduction.k == 1 and not short and int(n.min()) == int(n.max()):
        # pass^1 and pass@1 of a case are its pass rate over its epochs: with as many paired epochs in every case,
        # their mean over cases is the mean over case runs, whose paired interval is the mean's (its rows in
        # their clusters); with more than one epoch it was never decided (fractional values)
        notes.append(f"{text} with {int(n.max())} paired epoch(s) in every case: the mean over its case runs, "
                     "n counts case runs")
        is_b, is_c = rows["base"] == "pass", rows["candidate"] == "pass"
        (sb,) = criterion_sums(rows.assign(verdict=rows["base"])).values()
        (sc,) = criterion_sums(rows.assign(verdict=rows["candidate"])).values()
        missing = int(((rows["base"] == "missing") | (rows["candidate"] == "missing")).sum())
        paired_row(row, sb.passes, sc.passes, sb.rows, (int((is_b & ~is_c).sum()), int((~is_b & is_c).sum()),
                                                       missing), cfg, notes)
        return ""
    notes.append(f"{text}: n counts cases, each one row of its {text} value over its paired epochs")
    if short:
        notes.append(f"{short} case(s) with fewer than {reduction.k} paired epochs")
        return "too_few_epochs"
    if int(n.max()) > reduction.k:
        notes.append(f"{int(n.max())} epochs reduced with {text} give fractional values, which have no paired "
                     "interval; compare runs of k epochs")
        return "reduce_not_paired"
    vb = np.rint(reduce_counts(n, by_case["b"].to_numpy(np.int64), reduction)).astype(np.int64)
    vc = np.rint(reduce_counts(n, by_case["c"].to_numpy(np.int64), reduction)).astype(np.int64)
    codes, _ = pd.factorize(by_case["cluster"], sort=False)
    sizes = np.bincount(codes)
    ptf, ftp = int(((vb == 1) & (vc == 0)).sum()), int(((vb == 0) & (vc == 1)).sum())
    missing = int(((by_case["mb"].to_numpy() == n) | (by_case["mc"].to_numpy() == n)).sum())
    paired_row(row, np.bincount(codes, weights=vb).astype(np.int64), np.bincount(codes, weights=vc).astype(np.int64),
               sizes, (ptf, ftp, missing), cfg, notes)
    return ""


def missing_why(rows: pd.DataFrame) -> str:
    """Why one criterion's paired ``rows`` are all missing, for its ``all_missing`` reason: in each run with missing
    rows, the commonest reason they give (:func:`~oloproof_nb._analysis.gate_reasons.commonest_reason`, as the
    gate quotes it): ``every paired row is missing in a run: in the base run "…" (all 40 rows) and in the
    candidate run …``.

    ``all_missing`` alone said nothing of what would make the criterion decide (a sandbox that was down, a rating
    read without ``pass_threshold``), where each row's reason in the run says it."""
    sides = []
    for side in ("base", "candidate"):
        reasons = rows.loc[rows[side] == "missing", f"{side}_reason"]
        if len(reasons):
            quoted = commonest_reason(reasons, "cmp.verdicts")
            sides.append(f"in the {side} run {quoted or f'({len(reasons):,} rows, none with a reason)'}")
    return f"every paired row is missing in a run: {' and '.join(sides)}"


def base_missing_passed(rows: pd.DataFrame, reduction: Reduction, cfg: ReleaseConfig) -> float:
    """ci_low of one criterion's paired difference with the base run's ``missing`` rows counted as passes.

    Where the base measured nothing, its pass there is the worst case for the candidate: every such row becomes a
    tie or a loss, never a gain (a bound in the spirit of Manski's worst-case bounds for missing outcomes). A
    NO_REGRESSION that holds under it holds whatever the base would have done there.
    """
    return rows_ci_low(rows.assign(base=rows["base"].mask(rows["base"] == "missing", "pass")), reduction, cfg)


def rows_ci_low(rows: pd.DataFrame, reduction: Reduction, cfg: ReleaseConfig) -> float:
    """ci_low of one criterion's paired difference over ``rows`` (paired verdict rows, reduced as ``reduction``
    says); −inf when they cannot be paired case by case (a reduced case with fewer than k epochs among them), so
    that a NO_REGRESSION weighed by it does not hold."""
    row: dict[str, Any] = {}
    if reduction.kind != "mean":
        if reduced_row(row, rows, reduction, cfg, []):
            return -math.inf
    else:
        (b,) = criterion_sums(rows.assign(verdict=rows["base"])).values()
        (k,) = criterion_sums(rows.assign(verdict=rows["candidate"])).values()
        paired_row(row, b.passes, k.passes, b.rows, (0, 0, 0), cfg, [])
    return float(row["ci_low"])


def paired_row(row: dict[str, Any], b: np.ndarray, k: np.ndarray, m: np.ndarray, counts: tuple[int, int, int],
               cfg: ReleaseConfig, notes: list[str]) -> None:
    """Fill ``row`` with the paired interval of per-cluster sums ``b`` (base passes), ``k`` (candidate passes) and
    ``m`` (rows), and ``counts`` = (pass_to_fail, fail_to_pass, missing); the bootstrap below
    ``PAIRED_BOOTSTRAP_MIN_CLUSTERS`` clusters is replaced by cluster_t, with a note."""
    method = cfg.method
    if method == "cluster_bootstrap" and m.size < PAIRED_BOOTSTRAP_MIN_CLUSTERS:
        method = "cluster_t"
        notes.append("cluster_t instead of cluster_bootstrap: the simulation (benchmarks/paired.md) shows "
                     "the paired bootstrap's one-sided misses above 3% at 20 and 50 clusters")
    d = paired_difference_from_sums(b, k, m, method=method, confidence=cfg.confidence,
                                    resamples=cfg.bootstrap.resamples, seed=cfg.bootstrap.seed)
    ptf, ftp, missing = counts
    row.update(base_rate=d.base, candidate_rate=d.candidate, difference=d.estimate, ci_low=d.low, ci_high=d.high,
               method=d.method, n=d.n, n_clusters=d.n_clusters, pass_to_fail=ptf, fail_to_pass=ftp, missing=missing,
               mcnemar_p=math.nan if is_clustered_from_sums(m) else mcnemar_exact(ptf, ftp))
    notes += [d.reason] if d.reason else []
