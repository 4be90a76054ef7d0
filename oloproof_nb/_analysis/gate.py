"""The release gate: per criterion, a pass rate with an interval against its threshold.

Rule, per criterion named in release.yaml (DESIGN.md, "Gate rule"):

1. a clustered run without ``allow_approximate_methods: true`` →
   ``INSUFFICIENT_EVIDENCE`` (``approximate_methods_not_allowed``);
2. a clustered run with fewer than ``min_clusters`` source cases →
   ``INSUFFICIENT_EVIDENCE`` (``too_few_clusters``);
3. a criterion with no rows → ``INSUFFICIENT_EVIDENCE`` (``no_evidence``);
4. a metamorphic rule whose transform is not checked →
   ``INSUFFICIENT_EVIDENCE`` (``transform_not_checked``);
5. ``PASS`` when ci_low ≥ threshold, ``FAIL`` when ci_high < threshold,
   otherwise ``INSUFFICIENT_EVIDENCE`` (``interval_includes_threshold``).

The gate's verdict is ``PASS`` only when every listed criterion passes, else
``BLOCK`` (also when release.yaml lists no criterion: nothing was shown to be
good enough). Criteria not listed appear with threshold NaN and verdict
``REPORT_ONLY``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._config.release import ReleaseConfig, load_release, parse_release
from .._core.stats import Interval, is_clustered, rate_interval
from ..errors import ConfigError
from .columns import GATE
from .run import Run
from .validity import checked_transforms

__all__ = ["Gate", "gate", "GATE_COLUMNS", "criterion_interval", "resolve_release", "ReleaseLike"]

GATE_COLUMNS = GATE.names
#: What ``release=`` accepts: a model, a mapping like release.yaml, or a path to one.
ReleaseLike = ReleaseConfig | dict[str, Any] | str | Path


@dataclass(frozen=True)
class Gate:
    """The release decision for one run.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per criterion: ``criterion, evaluator, n, n_clusters, passed,
        missing, rate, ci_low, ci_high, method, threshold, verdict, reason``.
        ``n`` counts rows (cases judged), ``passed`` those that passed,
        ``missing`` those without a usable result (they count as not passed).
        Numbers are unrounded.
    verdict : str
        ``PASS`` when every criterion listed in release.yaml passes, else ``BLOCK``.
    release : ReleaseConfig
        The settings used.
    clustered : bool
        Whether any cluster of the run holds more than one case.
    n_source_clusters : int
        Distinct clusters (source cases) in the run.
    """

    table: pd.DataFrame
    verdict: str
    release: ReleaseConfig
    clustered: bool
    n_source_clusters: int

    @property
    def blocking(self) -> pd.DataFrame:
        """The listed criteria that did not pass."""
        t = self.table
        return t[(t["verdict"] != "PASS") & (t["verdict"] != "REPORT_ONLY")].reset_index(drop=True)


def resolve_release(run: Run, release: ReleaseLike | None) -> ReleaseConfig:
    """The release settings to apply: ``release`` validated, or the run's release.yaml, or the defaults.

    Criteria ``release`` names must be criteria of the run.
    """
    if release is None:
        return run.release if run.release is not None else ReleaseConfig()
    if isinstance(release, ReleaseConfig):
        cfg = release
        file = "release"
    elif isinstance(release, dict):
        cfg, file = parse_release(release, "release"), "release"
    else:
        cfg, file = load_release(release), str(release)
    unknown = [name for name in cfg.criteria if name not in run.criteria]
    if unknown:
        raise ConfigError(file, f"criteria.{unknown[0]}",
                          f"no such criterion in the run; its criteria: {', '.join(run.criteria) or '(none)'}")
    return cfg


def criterion_interval(values: np.ndarray, clusters: np.ndarray, release: ReleaseConfig, clustered: bool) -> Interval:
    """The interval the gate uses for one criterion's rows (``values`` 0/1, ``clusters`` ids)."""
    method = release.method if clustered else release.unclustered_method
    return rate_interval(values, clusters if clustered else None, method=method, confidence=release.confidence,
                         clustered_method=release.method, resamples=release.bootstrap.resamples,
                         seed=release.bootstrap.seed)


def gate(run: Run, release: ReleaseLike | None = None) -> Gate:
    """Apply the release gate to a run.

    Parameters
    ----------
    run : Run
        From :func:`oloproof_nb.run` or :func:`oloproof_nb.load_run`.
    release : ReleaseConfig, dict or path, optional
        Gate settings; by default the suite's release.yaml stored with the run.

    Returns
    -------
    Gate
        ``.table`` (columns ``criterion, evaluator, n, n_clusters, passed,
        missing, rate, ci_low, ci_high, method, threshold, verdict, reason``)
        and ``.verdict`` (``PASS`` or ``BLOCK``).

    Notes
    -----
    Rows of a criterion are binary: pass = 1; fail and missing = 0. The rate
    is Σk/Σm over clusters. A run is clustered when any cluster holds more
    than one case; clustered runs use ``release.method`` (``cluster_t``:
    CR1 clustered SE on the logit scale with t on G−1 df, Miller 2024; or
    ``cluster_bootstrap``: BCa over resampled clusters, Efron 1987), and
    unclustered runs ``release.unclustered_method`` (Clopper–Pearson or
    Wilson; Brown, Cai & DasGupta 2001). See :mod:`oloproof_nb.stats`.

    References
    ----------
    .. [1] Miller, E. (2024). Adding error bars to evals: a statistical approach to
       language model evaluations. arXiv:2411.00640.
    .. [2] Efron, B. (1987). Better bootstrap confidence intervals. JASA 82(397), 171–185.

    Examples
    --------
    >>> g = op.gate(run)                  # doctest: +SKIP
    >>> g.verdict, g.table[["criterion", "verdict"]]   # doctest: +SKIP
    """
    cfg = resolve_release(run, release)
    cases = run.cases
    cluster_of_case = cases["cluster"]
    clustered = is_clustered(cluster_of_case.to_numpy()) if len(cases) else False
    n_source = int(cluster_of_case.nunique())
    checked = checked_transforms(run)
    verdicts = run.verdicts
    evaluator_of = {ev.name: ev for ev in run.config.evaluators}
    rows = []
    for criterion in run.criteria:
        ev = evaluator_of[criterion]
        sub = verdicts[verdicts["criterion"] == criterion]
        values = (sub["verdict"] == "pass").to_numpy(dtype=np.int64)
        clusters = sub["cluster"].to_numpy()
        n = len(sub)
        row: dict[str, Any] = {
            "criterion": criterion, "evaluator": ev.type, "n": n,
            "n_clusters": int(pd.unique(clusters).size), "passed": int(values.sum()),
            "missing": int((sub["verdict"] == "missing").sum()),
            "rate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "method": "",
        }
        note = ""
        if n:
            interval = criterion_interval(values, clusters, cfg, clustered)
            row.update(rate=interval.estimate, ci_low=interval.low, ci_high=interval.high, method=interval.method)
            note = interval.reason
        threshold = cfg.criteria.get(criterion)
        row["threshold"] = math.nan if threshold is None else float(threshold)
        verdict, reason = _decide(row, threshold, cfg, clustered, n_source, ev, checked)
        row["verdict"] = verdict
        row["reason"] = f"{reason}; {note}" if reason and note else (reason or note)
        rows.append(row)
    table = GATE.from_columns({c: [row[c] for row in rows] for c in GATE_COLUMNS})
    listed = table[table["verdict"] != "REPORT_ONLY"]
    overall = "PASS" if len(listed) and bool((listed["verdict"] == "PASS").all()) else "BLOCK"
    return Gate(table=table, verdict=overall, release=cfg, clustered=clustered, n_source_clusters=n_source)


def _decide(row: dict[str, Any], threshold: float | None, cfg: ReleaseConfig, clustered: bool, n_source: int,
            ev: Any, checked: dict[str, bool]) -> tuple[str, str]:
    if threshold is None:
        return "REPORT_ONLY", ""
    if clustered and not cfg.allow_approximate_methods:
        return "INSUFFICIENT_EVIDENCE", "approximate_methods_not_allowed"
    if clustered and n_source < cfg.min_clusters:
        return "INSUFFICIENT_EVIDENCE", "too_few_clusters"
    if row["n"] == 0:
        return "INSUFFICIENT_EVIDENCE", "no_evidence"
    transform = getattr(ev, "transform", None)
    if ev.type == "metamorphic_relation" and not checked.get(str(transform), False):
        return "INSUFFICIENT_EVIDENCE", "transform_not_checked"
    if row["ci_low"] >= threshold:
        return "PASS", "ci_low_at_or_above_threshold"
    if row["ci_high"] < threshold:
        return "FAIL", "ci_high_below_threshold"
    return "INSUFFICIENT_EVIDENCE", "interval_includes_threshold"
