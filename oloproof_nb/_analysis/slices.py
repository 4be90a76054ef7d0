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

from .._core.slicespec import NA_BIN, SliceSpec, parse_slice_spec
from .columns import SLICES
from .gate import ReleaseLike, criterion_sums, resolve_release, run_is_clustered, sums_interval
from .run import Run

__all__ = ["SLICE_COLUMNS", "slice_table"]

SLICE_COLUMNS = SLICES.names


def _bin_labels(values: pd.Series, spec: SliceSpec) -> np.ndarray:
    """The bin label of every case (``NA_BIN`` where the measure is missing)."""
    arr = values.astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    labels = np.array([label for label, _, _ in spec.bins()] + [NA_BIN], dtype=object)
    # searchsorted with side="right": a value equal to an edge falls in the bin that starts there.
    idx = np.searchsorted(np.asarray(spec.edges, dtype=float), arr, side="right")
    idx = np.where(np.isnan(arr), len(labels) - 1, idx)
    return labels[idx]


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
          case recorded no trajectory (status ``error`` or ``timeout``). Every
          bin is present, also when empty.
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

        Supports of a criterion add up to its rows in ``run.verdicts``.

    Raises
    ------
    SliceSpecError
        When ``spec`` is malformed (one line naming the spec and what is allowed).

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
    >>> table = op.slice_table(run, "tool_calls:1,2")          # doctest: +SKIP
    >>> table[["bin", "criterion", "support", "rate", "ci_low", "ci_high"]]   # doctest: +SKIP
    """
    parsed = parse_slice_spec(spec)
    cfg = resolve_release(run, release)
    min_clusters = cfg.min_clusters  # 20 unless release.yaml says otherwise
    cases = run.cases
    clustered = run_is_clustered(run)
    bins = [*parsed.bins(), (NA_BIN, math.nan, math.nan)]
    labels = [label for label, _, _ in bins]
    bin_of_case = pd.Categorical(_bin_labels(cases[parsed.column], parsed), categories=labels).codes
    verdicts = run.verdicts
    keys = ["case_id", "epoch"] if "epoch" in cases.columns and "epoch" in verdicts.columns else ["case_id"]
    where = pd.MultiIndex.from_frame(cases[keys]).get_indexer(pd.MultiIndex.from_frame(verdicts[keys]))
    na_code = len(labels) - 1
    row_bins = np.where(where >= 0, bin_of_case[np.clip(where, 0, None)], na_code).astype(np.int64)
    sums = criterion_sums(verdicts, by=[row_bins]) if len(verdicts) else {}
    rows: list[dict[str, Any]] = []
    for criterion in run.criteria:
        for code, (label, lower, upper) in enumerate(bins):
            group = sums.get((criterion, code))
            support = 0 if group is None else group.n
            n_clusters = 0 if group is None else int(group.rows.size)
            row: dict[str, Any] = {
                "slice": parsed.text, "bin": label, "lower": lower, "upper": upper, "criterion": criterion,
                "support": support, "clusters": n_clusters,
                "passed": 0 if group is None else int(group.passes.sum()),
                "rate": math.nan, "ci_low": math.nan, "ci_high": math.nan,
                "few_clusters": n_clusters < min_clusters, "method": "",
            }
            if group is not None and support:
                iv, _ = sums_interval(group, cfg, clustered)
                row.update(rate=iv.estimate, ci_low=iv.low, ci_high=iv.high, method=iv.method)
            rows.append(row)
    return SLICES.from_columns({c: [row[c] for row in rows] for c in SLICE_COLUMNS})
