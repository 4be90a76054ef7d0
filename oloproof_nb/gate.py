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

import html
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .errors import ConfigError
from .release import BootstrapConfig, ReleaseConfig, load_release, parse_release
from .stats import Interval, is_clustered, rate_interval

if TYPE_CHECKING:
    from .results import Run

__all__ = ["Gate", "gate", "GATE_COLUMNS", "ReleaseConfig", "BootstrapConfig", "criterion_interval"]

GATE_COLUMNS = ["criterion", "evaluator", "n", "n_clusters", "passed", "missing", "rate", "ci_low", "ci_high",
                "method", "threshold", "verdict", "reason"]
GATE_VERDICTS = ("PASS", "FAIL", "INSUFFICIENT_EVIDENCE", "REPORT_ONLY")


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

    def __repr__(self) -> str:
        lines = [f"Gate: {self.verdict}"]
        for r in self.table.itertuples():
            thr = "" if math.isnan(r.threshold) else f" ≥ {r.threshold:g}"
            rate = "n/a" if math.isnan(r.rate) else f"{r.rate:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]"
            lines.append(f"  {r.verdict:22} {r.criterion}{thr}: {rate} n={r.n} {r.reason}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        esc = html.escape
        colour = {"PASS": "#1a7f37", "FAIL": "#cf222e", "INSUFFICIENT_EVIDENCE": "#9a6700", "REPORT_ONLY": "#57606a"}
        head_colour = colour["PASS"] if self.verdict == "PASS" else colour["FAIL"]
        rows = []
        for r in self.table.itertuples():
            rows.append(
                f"<tr><td><code>{esc(r.criterion)}</code></td><td>{r.n}</td><td>{r.n_clusters}</td>"
                f"<td>{r.passed}</td><td>{r.missing}</td><td>{_fmt(r.rate)}</td>"
                f"<td>[{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]</td><td>{esc(str(r.method))}</td>"
                f"<td>{_fmt(r.threshold)}</td><td style='color:{colour.get(r.verdict, '#000')}'><b>{r.verdict}</b>"
                f"</td><td>{esc(r.reason)}</td></tr>")
        header = "".join(f"<th>{h}</th>" for h in ["criterion", "n", "clusters", "passed", "missing", "rate",
                                                   f"{self.release.confidence:.0%} CI", "method", "threshold",
                                                   "verdict", "reason"])
        return (f"<h4>Release gate: <span style='color:{head_colour}'>{self.verdict}</span></h4>"
                f"<p>{'clustered' if self.clustered else 'unclustered'} run, {self.n_source_clusters} source "
                f"clusters</p><table><tr>{header}</tr>{''.join(rows)}</table>")


def _fmt(x: float | None) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _resolve_release(run: Run, release: ReleaseConfig | dict[str, Any] | str | Path | None) -> ReleaseConfig:
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


def _checked_transforms(run: Run) -> dict[str, bool]:
    if not run.config.metamorphic.transforms:
        return {}
    from .validity import validity

    table = validity(run)
    return dict(zip(table["transform"], table["checked"].astype(bool), strict=True))


def gate(run: Run, release: ReleaseConfig | dict[str, Any] | str | Path | None = None) -> Gate:
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
    cfg = _resolve_release(run, release)
    cases = run.cases
    cluster_of_case = cases["cluster"]
    clustered = is_clustered(cluster_of_case.to_numpy()) if len(cases) else False
    n_source = int(cluster_of_case.nunique())
    checked = _checked_transforms(run)
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
    table = pd.DataFrame(rows, columns=GATE_COLUMNS)
    table = table.astype({"n": "int64", "n_clusters": "int64", "passed": "int64", "missing": "int64",
                          "rate": "float64", "ci_low": "float64", "ci_high": "float64", "threshold": "float64"})
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
    if ev.type == "metamorphic_relation" and not checked.get(transform, False):
        return "INSUFFICIENT_EVIDENCE", "transform_not_checked"
    if row["ci_low"] >= threshold:
        return "PASS", "ci_low_at_or_above_threshold"
    if row["ci_high"] < threshold:
        return "FAIL", "ci_high_below_threshold"
    return "INSUFFICIENT_EVIDENCE", "interval_includes_threshold"
