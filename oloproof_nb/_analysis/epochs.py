"""Epochs of a run reduced per case: mean (pass@1), pass^k and pass@k, with clustered intervals.

A run with ``epochs: k`` has one verdict row per (case, epoch, criterion). A reduction turns each
case's n rows with c passes into one value (``_core/epochs.py``): c/n, C(c,k)/C(n,k) or
1 − C(n−c,k)/C(n,k). A criterion's reduced rate is the mean of its cases' values, with an interval
over the source clusters (an epoch, like a derived case, stays in its source's cluster):

- ``mean`` is the gate's own computation on the verdict rows (every epoch a row);
- a reduction whose values are all 0 or 1 (pass^k or pass@k when every case has exactly k rows)
  uses the gate's interval on the per-cluster sums of those values;
- otherwise (a case with more than k rows: values that can be fractional, whatever the passes)
  :func:`~oloproof_nb._core.epochs.fractional_interval`, the CR2 logit-t interval on per-cluster sums
  of the values, made monotone like the gate's (one more passing epoch never lowers a bound).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from .._core.epochs import Reduction, parse_reduce, reduce_counts
from ..errors import OloproofError, warn_at_caller
from .columns import TEXT
from .gate import criterion_sums, mixed_pool, reduced_interval, resolve_release, run_is_clustered, sums_interval
from .gate_settings import ReleaseLike
from .reduce import REPEATED_NOTE, epoch_counts, reduced_sums, repeated_rows
from .run import Run, as_run

__all__ = ["reduce_epochs", "EPOCHS_COLUMNS", "CASE_COLUMNS"]

#: Columns of :func:`reduce_epochs`.
EPOCHS_COLUMNS = ["criterion", "reduce", "k", "cases", "n_clusters", "rate", "ci_low", "ci_high", "method",
                  "left_out", "reason"]
#: Columns of ``reduce_epochs(..., by_case=True)``.
CASE_COLUMNS = ["case_id", "cluster", "criterion", "epochs", "passes", "missing", "reduce", "value"]


def _reductions(run: Run, reduce: str | Sequence[str] | None) -> list[Reduction]:
    if reduce is None:
        k = run.epochs
        texts: list[str] = ["mean"] + ([f"pass^{k}", f"pass@{k}"] if k > 1 else [])
    elif isinstance(reduce, str):
        texts = [reduce]
    elif isinstance(reduce, (list, tuple)):
        texts = list(reduce)
    else:
        raise OloproofError(f"reduce={reduce!r}: give mean, pass^k or pass@k, or a list of them")
    out = []
    for text in texts:
        try:
            r = parse_reduce(text)
        except ValueError as exc:
            raise OloproofError(f"reduce={text!r}: {exc}") from None
        if r.k > run.epochs:
            raise OloproofError(f"reduce={text!r} needs at least {r.k} epochs; run {run.run_id} has "
                                f"epochs={run.epochs} (run it with epochs={r.k} or more)")
        out.append(r)
    return out


def reduce_epochs(run: Run, reduce: str | Sequence[str] | None = None, release: ReleaseLike | None = None,
                  by_case: bool = False) -> pd.DataFrame:
    """Every criterion reduced over the epochs of each case: mean (pass@1), pass^k, pass@k.

    Parameters
    ----------
    run : Run
        A run (``op.run(suite, epochs=k)``, or ``epochs: k`` in oloproof.yaml).
    reduce : str or list of str, optional
        ``mean``, ``pass^k``, ``pass@k`` (k ≤ the run's epochs). Default: ``mean``, ``pass^K`` and
        ``pass@K`` with K the run's epochs (only ``mean`` when K = 1).
    release : ReleaseConfig, dict or path, optional
        Confidence and methods of the intervals (default: the run's release.yaml).
    by_case : bool
        Return the per-case values instead.

    Returns
    -------
    pandas.DataFrame
        One row per criterion × reduction: ``criterion, reduce, k, cases, n_clusters, rate, ci_low,
        ci_high, method, left_out, reason``. ``cases``: cases reduced (a derived case counts as a case);
        ``rate``: the mean of their values; ``left_out``: cases with fewer than k rows of the criterion
        (e.g. a fault replay made in only some epochs), not reduced. With ``by_case``: ``case_id,
        cluster, criterion, epochs, passes, missing, reduce, value``.

    Raises
    ------
    OloproofError
        A ``reduce`` that is not ``mean``/``pass^k``/``pass@k``, or whose k exceeds the run's epochs.

    Warns
    -----
    UserWarning
        When ``run`` pools runs (:func:`oloproof_nb.load_runs`) of different systems or case files, whose pooled
        gate has no decision (``mixed_systems``, ``mixed_cases``): each rate is then of no one system.

    Notes
    -----
    Per case with n rows (epochs) and c passes: mean c/n; pass^k = C(c,k)/C(n,k) (Yao et al. 2024);
    pass@k = 1 − C(n−c,k)/C(n,k) (Chen et al. 2021). ``mean`` is the gate's rate and interval (Σc/Σn
    over the verdict rows). For pass^k / pass@k each case is one row of value v ∈ [0, 1] in its
    source's cluster; binary values (every case has exactly k rows) get the gate's interval, values that
    can be fractional the monotone CR2 logit-t interval on per-cluster sums
    (:func:`oloproof_nb._core.epochs.fractional_interval`). In a pooled run, pass^k and pass@k count a fault
    replay the replay cache gave several of its runs once (it is one try of the agent; ``reason`` says how many
    rows were left out), as the gate does.

    Examples
    --------
    >>> import oloproof_nb as op
    >>> run = op.run(suite, epochs=5)                   # doctest: +SKIP
    >>> op.reduce_epochs(run)[["criterion", "reduce", "rate", "ci_low", "ci_high"]]   # doctest: +SKIP
    """
    run = as_run(run, "reduce_epochs: run")
    cfg = resolve_release(run, release)
    reductions = _reductions(run, reduce)
    mixed = mixed_pool(run)
    if mixed:  # v1's and v2's epochs reduced together: a rate of no one agent, as op.gate and op.slice_table say
        warn_at_caller(f"reduce_epochs: the pooled run's rows are of no one system or case file ({mixed}), so each "
                       "rate is of none: reduce one version's runs (op.load_runs of its folders), or each run")
    verdicts = run.verdicts
    # pass^k and pass@k count one try once (a replay from the cache, an epoch a system was given in two runs)
    repeated = repeated_rows(run, verdicts, run.criteria if any(r.kind != "mean" for r in reductions) else ())
    counts = epoch_counts(verdicts)
    by_criterion = {name: group for name, group in counts.groupby("criterion", sort=False, observed=True)}
    tries = by_criterion if not repeated.any() else dict(tuple(epoch_counts(verdicts[~repeated]).groupby(
        "criterion", sort=False, observed=True)))  # mean stays the gate's: every row
    left = verdicts.loc[repeated, "criterion"].value_counts()
    left = left[left > 0]  # a categorical criterion counts each of its categories, 0 where no row repeats
    if by_case:
        parts = []
        for r in reductions:
            for criterion in run.criteria:
                group = (by_criterion if r.kind == "mean" else tries).get(criterion)
                if group is None or not len(group):
                    continue
                group = group[group["epochs"] >= r.k]
                values = reduce_counts(group["epochs"].to_numpy(), group["passes"].to_numpy(), r)
                parts.append(group.assign(reduce=r.text, value=values))
        if not parts:  # the columns' dtypes of a table with rows (every one float64 before)
            return epoch_counts(verdicts.iloc[:0]).assign(
                reduce=pd.Series([], dtype=TEXT), value=pd.Series([], dtype="float64"))[CASE_COLUMNS]
        return pd.concat(parts, ignore_index=True)[CASE_COLUMNS]
    all_sums = criterion_sums(verdicts)
    clustered = run_is_clustered(run, all_sums.values())
    mean_sums = {key[0]: value for key, value in all_sums.items()}
    rows: list[dict[str, Any]] = []
    for r in reductions:
        for criterion in run.criteria:
            group = by_criterion.get(criterion)
            row: dict[str, Any] = {"criterion": criterion, "reduce": r.text, "k": r.k, "cases": 0, "n_clusters": 0,
                                   "rate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "method": "",
                                   "left_out": 0, "reason": ""}
            if group is None or not len(group):
                row["reason"] = "no_evidence"
                rows.append(row)
                continue
            if r.kind == "mean":
                sums = mean_sums[criterion]
                iv, note = sums_interval(sums, cfg, clustered)
                row.update(cases=len(group), n_clusters=int(sums.rows.size))
            else:
                rs = reduced_sums(tries[criterion], r)
                row.update(cases=rs.cases, n_clusters=int(rs.sizes.size), left_out=rs.left_out)
                repeats = REPEATED_NOTE.format(n=int(left[criterion])) if criterion in left.index else ""
                if not rs.cases:
                    row["reason"] = "; ".join(n for n in (f"no case has {r.k} rows", repeats) if n)
                    rows.append(row)
                    continue
                iv, note, _ = reduced_interval(rs, cfg)
                note = "; ".join(n for n in (note, repeats) if n)
            row.update(rate=iv.estimate, ci_low=iv.low, ci_high=iv.high, method=iv.method,
                       reason="; ".join(n for n in (note, iv.reason) if n))
            rows.append(row)
    out = pd.DataFrame(rows, columns=EPOCHS_COLUMNS)
    return out.astype({"criterion": TEXT, "reduce": TEXT, "k": "int64", "cases": "int64", "n_clusters": "int64",
                       "rate": "float64", "ci_low": "float64", "ci_high": "float64", "method": TEXT,
                       "left_out": "int64", "reason": TEXT})
