"""Slice tables: pass rates per bin of a trajectory measure, descriptive only.

A slice spec (``_core/slicespec``) such as ``tool_calls:1,2`` gives half-open
bins (−∞, e1), [e1, e2), …, [ek, ∞). Each bin gets the pass rate
of every criterion with the interval the gate would use. Nothing here fits a
trend, a slope or a curve: a slice table says where failures were seen, not how
error grows with trajectory length.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from .._config.release import ReleaseConfig
from .._core.epochs import parse_reduce
from .._core.slicespec import NA_BIN, SliceSpec, parse_slice_spec
from ..errors import OloproofError, SliceWarning, quote_value, warn_at_caller
from .columns import SLICES
from .gate import criterion_sums, mixed_pool, reduced_interval, resolve_release, run_is_clustered, sums_interval
from .gate_settings import ReleaseLike
from .reduce import epoch_counts, reduced_sums, repeated_rows
from .run import Run, as_run

__all__ = ["SLICE_COLUMNS", "slice_table"]

SLICE_COLUMNS = SLICES.names


def _bin_labels(values: pd.Series, spec: SliceSpec) -> np.ndarray:
    """The bin label of every case (``NA_BIN`` where the measure is missing).

    Raises
    ------
    OloproofError
        When the measure is no number (a frame set with ``run.cases = …`` holding text or dates there): one line
        naming the column and a value, not pandas' or pyarrow's error.
    """
    try:
        arr = values.astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError):  # pyarrow's ArrowInvalid is a ValueError
        raise OloproofError(f"slice {spec.text}: run.cases.{spec.column} holds {_not_a_number(values)}, not a number "
                            f"(a frame set with run.cases = …?); give each case run its count, or leave it "
                            "missing for the n/a bin") from None
    labels = np.array([label for label, _, _ in spec.bins()] + [NA_BIN], dtype=object)
    # searchsorted with side="right": a value equal to an edge falls in the bin that starts there.
    idx = np.searchsorted(np.asarray(spec.edges, dtype=float), arr, side="right")
    idx = np.where(np.isnan(arr), len(labels) - 1, idx)
    return labels[idx]


def _not_a_number(values: pd.Series) -> str:
    """A value of ``values`` that is no number, quoted (or the column's dtype when each value alone reads as one)."""
    for value in values.dropna():
        try:
            float(value)
        except (TypeError, ValueError):
            return quote_value(value)
    return f"values of dtype {values.dtype}"


def _reduced_bins(text: str, criterion: str, cfg: ReleaseConfig, verdicts: pd.DataFrame, row_bins: np.ndarray,
                  bins: list[tuple[str, float, float]], min_clusters: int) -> tuple[list[dict[str, Any]], int]:
    """The bins of a criterion release.yaml reduces (pass^k, pass@k): a case whose epochs all fall in one bin is
    reduced there, over all of them.

    ``support`` counts the cases reduced in the bin, ``passed`` the cases whose value is 1, ``rate`` the mean
    of the values. Also returns how many of the criterion's cases the gate reduces (at least k rows in all)
    were reduced in no bin: their epochs fell in different bins. Reduced in each bin over the epochs there, a
    case that passed its short tries and failed its long ones counted as a sure pass in one bin (pass^2 1 over
    2 of 4 epochs, where the gate's value is 1/6). A case with fewer than k rows in all is left out here as
    the gate leaves it out. Every bin gets the method the gate gives the criterion (decided on all its cases).
    """
    reduction = parse_reduce(cfg.reduce_of(criterion))
    mine = (verdicts["criterion"] == criterion).to_numpy()
    all_counts = epoch_counts(verdicts[mine])  # a case with fewer than k rows in all is left out, as by the gate
    as_gated = reduced_sums(all_counts, reduction)
    cases = verdicts["case_id"].astype(str).to_numpy()
    spread = pd.Series(row_bins[mine]).groupby(cases[mine]).nunique()
    # cases with every epoch in one bin; hashed by pandas, as np.isin compares text ids pair by pair (150,000 rows
    # of cases whose epochs took different paths: minutes)
    whole = mine & ~pd.Index(cases).isin(spread.index[spread > 1])
    rows: list[dict[str, Any]] = []
    reduced: set[str] = set()
    held = set(np.unique(row_bins[whole]).tolist())  # the bins a case of the criterion falls in whole
    nothing = reduced_sums(epoch_counts(verdicts[:0]), reduction)  # every other bin's: built once, not once a bin
    for code, (label, lower, upper) in enumerate(bins):
        rs = nothing
        if code in held:
            counts = epoch_counts(verdicts[whole & (row_bins == code)])
            reduced.update(counts.loc[counts["epochs"] >= reduction.k, "case_id"].astype(str).tolist())
            rs = reduced_sums(counts, reduction)
        row: dict[str, Any] = {
            "slice": text, "bin": label, "lower": lower, "upper": upper, "criterion": criterion,
            "support": rs.cases, "clusters": int(rs.sizes.size), "passed": rs.cases_at_one,
            "rate": math.nan, "ci_low": math.nan, "ci_high": math.nan,
            "few_clusters": int(rs.sizes.size) < min_clusters, "method": "", "reduce": reduction.text,
        }
        if rs.cases:
            iv, _, _ = reduced_interval(rs, cfg, decided_by=as_gated)
            row.update(rate=iv.estimate, ci_low=iv.low, ci_high=iv.high, method=iv.method)
        rows.append(row)
    every = set(all_counts.loc[all_counts["epochs"] >= reduction.k, "case_id"].astype(str).tolist())
    return rows, len(every - reduced)


def slice_table(run: Run, spec: str | SliceSpec, release: ReleaseLike | None = None) -> pd.DataFrame:
    """Pass rate of every criterion in each bin of a slice, with the gate's interval.

    Parameters
    ----------
    run : Run
        From :func:`oloproof_nb.run` or :func:`oloproof_nb.load_run`.
    spec : str or SliceSpec
        ``tool_calls:<edges>`` (bins the number of tool calls, ``run.cases.n_tool_calls``)
        or ``trajectory_length:<edges>`` (the number of steps, ``run.cases.trajectory_length``).
    release : ReleaseConfig, dict or path, optional
        The gate settings whose interval method, confidence, bootstrap and
        ``min_clusters`` are used; by default the suite's release.yaml (or the
        defaults when the suite has none).

    Returns
    -------
    pandas.DataFrame
        One row per criterion × bin, criteria in suite order and bins in
        ascending order, then the ``n/a`` bin:

        - ``slice`` : the canonical spec, e.g. ``tool_calls:1,2``.
        - ``bin`` : ``<e1``, ``[e1, e2)``, …, ``≥ek``, and ``n/a`` for rows whose
          case recorded no trajectory (a run's case that ended in ``error`` or
          ``timeout``; a sample of an Inspect AI log that raised or reached a limit
          keeps the messages it had, and is binned by them, its verdicts
          ``missing``). Every bin is present, also when empty.
        - ``lower``, ``upper`` : the bin is ``lower ≤ x < upper``; ``-inf``/``inf``
          at the open ends, NaN for ``n/a``.
        - ``criterion`` : the criterion name.
        - ``support`` : the criterion's verdict rows in the bin (cases judged).
        - ``clusters`` : distinct clusters among those rows.
        - ``passed`` : rows that passed (fail and missing do not).
        - ``rate`` : passed / support; NaN when the bin is empty.
        - ``ci_low``, ``ci_high`` : the interval the gate would use on the bin's
          rows; NaN when the bin is empty.
        - ``few_clusters`` : True when ``clusters`` is below ``min_clusters``
          (release.yaml; 20 without one): read the interval with care.
        - ``method`` : the method that produced the interval (``""`` when empty).

        Supports of a criterion add up to its rows in ``run.verdicts``. For a criterion release.yaml
        reduces (``pass^k``, ``pass@k``), ``support`` counts the cases with at least k epochs in the bin,
        each reduced over its epochs there, and ``reduce`` names the reduction.

    Warns
    -----
    SliceWarning
        When a reduced criterion has cases whose epochs fall in different bins (their epochs took paths of
        different lengths: often the cases that fail on some tries), which no bin can reduce over all of them.
        When ``run`` pools runs (:func:`oloproof_nb.load_runs`) of different systems or case files, whose pooled
        gate has no decision (``mixed_systems``, ``mixed_cases``): each bin's rate is then of no one system.

    Raises
    ------
    SliceSpecError
        When ``spec`` is malformed (one line naming the spec and what is allowed).
    OloproofError
        When the binned ``run.cases`` column holds a value that is no number (a frame set by hand): one line
        naming the column and the value.

    Notes
    -----
    A case's measure x falls in bin [a, b) when a ≤ x < b. Rows are binary
    (pass = 1; fail and missing = 0) and the rate is Σk/Σm. The method choice
    is the gate's, decided once for the whole run: a clustered run (any
    cluster holding more than one case) uses ``release.method`` in every bin
    (cluster_t or cluster_bootstrap), an unclustered one
    ``release.unclustered_method`` (Clopper–Pearson or Wilson); bins where
    every row agrees fall back to Clopper–Pearson on the effective size, as
    in :func:`oloproof_nb.rate_interval`.

    Each verdict row is binned by the case it belongs to (its ``case_id`` in
    ``run.verdicts``; for a metamorphic relation, the derived case). A row
    whose case recorded no trajectory falls in ``n/a``.

    The table is descriptive: bins are compared by eye, with their intervals.
    It fits no trend, slope or curve and cannot say how errors grow with
    trajectory length; bins are not independent samples of a dose–response.

    Examples
    --------
    >>> import oloproof_nb as op
    >>> table = op.slice_table(run, "tool_calls:1,2")          # doctest: +SKIP
    >>> table[["bin", "criterion", "support", "rate", "ci_low", "ci_high"]]   # doctest: +SKIP
    """
    run = as_run(run, "slice_table: run")
    parsed = parse_slice_spec(spec)
    text = parsed.text  # built once: SliceSpec.text joins every edge, and a row per bin asked it again (quadratic)
    cfg = resolve_release(run, release)
    mixed = mixed_pool(run)
    if mixed:  # v1's and v2's rows in one bin: a rate of no one agent, where op.gate of the same pool says so
        warn_at_caller(SliceWarning(
            f"slice {text}: the pooled run's rows are of no one system or case file ({mixed}), so each bin's "
            "rate is of none: slice one version's runs (op.load_runs of its folders), or each run"))
    min_clusters = cfg.min_clusters  # 20 unless release.yaml says otherwise
    cases = run.cases
    verdicts = run.verdicts
    clustered = run_is_clustered(run, criterion_sums(verdicts).values())  # the gate's choice, from every bin's rows
    bins = [*parsed.bins(), (NA_BIN, math.nan, math.nan)]
    labels = [label for label, _, _ in bins]
    bin_of_case = pd.Categorical(_bin_labels(cases[parsed.column], parsed), categories=labels).codes
    # each verdict row is binned by its own case run: (case_id, epoch), and its run in a pooled Run
    keys = [k for k in ("run_id", "case_id", "epoch") if k in cases.columns and k in verdicts.columns]
    index = pd.MultiIndex.from_arrays([cases[k] for k in keys])
    if index.has_duplicates:  # a frame set by hand (two runs' cases concatenated): pandas raised InvalidIndexError
        twice = ", ".join(f"epoch {int(v)}" if k == "epoch" else f"{k} {str(v)!r}"
                          for k, v in zip(keys, index[index.duplicated()][0], strict=True))
        raise OloproofError(f"slice_table: run.cases holds the case run ({twice}) more than once (a frame set with "
                            "run.cases = …?), so its verdicts belong in no one bin; give each case run one row "
                            "(pool runs with op.load_runs, whose rows carry run_id)")
    where = index.get_indexer(pd.MultiIndex.from_arrays([verdicts[k] for k in keys]))
    # a row of no case run in run.cases (get_indexer's -1) takes the n/a code appended last; run.cases may be empty
    row_bins = np.append(bin_of_case, len(labels) - 1)[where].astype(np.int64)
    sums = criterion_sums(verdicts, by=[row_bins]) if len(verdicts) else {}
    once = ~repeated_rows(run, verdicts, [c for c in run.criteria if cfg.reduce_of(c) != "mean"])  # as the gate
    rows: list[dict[str, Any]] = []
    for criterion in run.criteria:
        if cfg.reduce_of(criterion) != "mean":
            reduced, unbinned = _reduced_bins(text, criterion, cfg, verdicts[once], row_bins[once], bins,
                                              min_clusters)
            rows += reduced
            if unbinned:  # never silently: these may be the very cases that fail (a failing try takes another path)
                reduction = parse_reduce(cfg.reduce_of(criterion))
                warn_at_caller(SliceWarning(
                    f"slice {text}: {unbinned} case(s) of {criterion} are in no {reduction.text} bin: their "
                    "epochs fall in different bins, and a case is reduced over all its epochs; the gate counts them "
                    "(op.reduce_epochs(run, by_case=True) lists their values)"))
            continue
        for code, (label, lower, upper) in enumerate(bins):
            group = sums.get((criterion, code))
            support = 0 if group is None else group.n
            n_clusters = 0 if group is None else int(group.rows.size)
            row: dict[str, Any] = {
                "slice": text, "bin": label, "lower": lower, "upper": upper, "criterion": criterion,
                "support": support, "clusters": n_clusters,
                "passed": 0 if group is None else int(group.passes.sum()),
                "rate": math.nan, "ci_low": math.nan, "ci_high": math.nan,
                "few_clusters": n_clusters < min_clusters, "method": "", "reduce": "mean",
            }
            if group is not None and support:
                iv, _ = sums_interval(group, cfg, clustered)
                row.update(rate=iv.estimate, ci_low=iv.low, ci_high=iv.high, method=iv.method)
            rows.append(row)
    table = SLICES.from_columns({c: [row[c] for row in rows] for c in SLICE_COLUMNS})
    table.attrs["confidence"] = cfg.confidence  # the intervals' level, for a plot's label
    return table
