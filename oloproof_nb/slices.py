"""Slice tables: pass rates per bin of a trajectory measure, descriptive only.

A slice spec is ``<dimension>:<edges>``, e.g. ``tool_calls:1,2`` or
``trajectory_length:4,5``. The edges are ascending non-negative integers and
give half-open bins (−∞, e1), [e1, e2), …, [ek, ∞). Each bin gets the pass rate
of every criterion with the interval the gate would use. Nothing here fits a
trend, a slope or a curve: a slice table says where failures were seen, not how
error grows with trajectory length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .errors import OloproofError

if TYPE_CHECKING:
    from .release import ReleaseConfig
    from .results import Run

__all__ = ["SLICE_COLUMNS", "DIMENSIONS", "NA_BIN", "SliceSpec", "SliceSpecError", "parse_slice_spec",
           "slice_table"]

SLICE_COLUMNS = ["slice", "bin", "lower", "upper", "criterion", "support", "clusters", "passed", "rate", "ci_low",
                 "ci_high", "few_clusters", "method"]
#: Slice dimension → the ``run.cases`` column it bins.
DIMENSIONS: dict[str, str] = {"tool_calls": "n_tool_calls", "trajectory_length": "trajectory_length"}
#: The bin of rows whose case recorded no trajectory (status ``error`` or ``timeout``).
NA_BIN = "n/a"
_ALLOWED = ("allowed: tool_calls:<edges> or trajectory_length:<edges>, edges ascending non-negative integers "
            "separated by commas, e.g. tool_calls:1,2")


class SliceSpecError(OloproofError):
    """A malformed slice spec; the message names the spec and what is allowed."""

    def __init__(self, spec: object, problem: str) -> None:
        self.spec = spec
        self.problem = problem
        super().__init__(f"slice spec {spec!r}: {problem}; {_ALLOWED}")


@dataclass(frozen=True)
class SliceSpec:
    """A parsed slice spec.

    Attributes
    ----------
    dimension : {"tool_calls", "trajectory_length"}
        What is binned: the number of tool calls or of trajectory steps of a case.
    edges : tuple of int
        Strictly ascending bin edges.
    """

    dimension: str
    edges: tuple[int, ...]

    @property
    def column(self) -> str:
        """The ``run.cases`` column binned."""
        return DIMENSIONS[self.dimension]

    @property
    def text(self) -> str:
        """The canonical spec, e.g. ``tool_calls:1,2``."""
        return f"{self.dimension}:{','.join(str(e) for e in self.edges)}"

    def bins(self) -> list[tuple[str, float, float]]:
        """``(label, lower, upper)`` of every numeric bin, in order (``lower`` inclusive, ``upper`` exclusive)."""
        e = self.edges
        out = [(f"<{e[0]}", -math.inf, float(e[0]))]
        out += [(f"[{a}, {b})", float(a), float(b)) for a, b in zip(e[:-1], e[1:], strict=True)]
        out.append((f"≥{e[-1]}", float(e[-1]), math.inf))
        return out


def parse_slice_spec(spec: str | SliceSpec) -> SliceSpec:
    """Parse ``<dimension>:<edges>``.

    Parameters
    ----------
    spec : str or SliceSpec
        ``tool_calls:<edges>`` or ``trajectory_length:<edges>``; edges are
        strictly ascending non-negative integers separated by commas (spaces
        are ignored).

    Returns
    -------
    SliceSpec

    Raises
    ------
    SliceSpecError
        One line naming the spec and what is allowed: an unknown dimension,
        no edges, an edge that is not a non-negative integer, edges not
        strictly ascending.

    Examples
    --------
    >>> parse_slice_spec("tool_calls:1,2")
    SliceSpec(dimension='tool_calls', edges=(1, 2))
    >>> [label for label, _, _ in parse_slice_spec("trajectory_length:4").bins()]
    ['<4', '≥4']
    """
    if isinstance(spec, SliceSpec):
        return parse_slice_spec(spec.text)
    if not isinstance(spec, str):
        raise SliceSpecError(spec, f"must be a string, got {type(spec).__name__}")
    dimension, sep, rest = spec.strip().partition(":")
    dimension = dimension.strip()
    if not sep:
        raise SliceSpecError(spec, "no ':' between the dimension and the edges")
    if dimension not in DIMENSIONS:
        raise SliceSpecError(spec, f"unknown dimension {dimension!r}")
    parts = [p.strip() for p in rest.split(",")]
    if parts == [""]:
        raise SliceSpecError(spec, "no edges")
    edges: list[int] = []
    for part in parts:
        if not part.isdigit() or not part.isascii():
            raise SliceSpecError(spec, f"edge {part!r} is not a non-negative integer")
        edges.append(int(part))
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        if b <= a:
            raise SliceSpecError(spec, f"edges must be strictly ascending, but {b} follows {a}")
    return SliceSpec(dimension, tuple(edges))


def _bin_labels(values: pd.Series, spec: SliceSpec) -> np.ndarray:
    """The bin label of every case (``NA_BIN`` where the measure is missing)."""
    arr = values.astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    labels = np.array([label for label, _, _ in spec.bins()] + [NA_BIN], dtype=object)
    # searchsorted with side="right": a value equal to an edge falls in the bin that starts there.
    idx = np.searchsorted(np.asarray(spec.edges, dtype=float), arr, side="right")
    idx = np.where(np.isnan(arr), len(labels) - 1, idx)
    return labels[idx]


def slice_table(run: Run, spec: str | SliceSpec, release: ReleaseConfig | dict[str, Any] | str | Path | None = None
                ) -> pd.DataFrame:
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
    from .gate import _resolve_release, criterion_interval
    from .stats import is_clustered

    parsed = parse_slice_spec(spec)
    cfg = _resolve_release(run, release)
    min_clusters = cfg.min_clusters  # 20 unless release.yaml says otherwise
    cases = run.cases
    clustered = is_clustered(cases["cluster"].to_numpy()) if len(cases) else False
    bin_of_case = dict(zip(cases["case_id"], _bin_labels(cases[parsed.column], parsed), strict=True))
    verdicts = run.verdicts
    row_bins = verdicts["case_id"].map(bin_of_case).fillna(NA_BIN).to_numpy(dtype=object)
    bins = [*parsed.bins(), (NA_BIN, math.nan, math.nan)]
    rows: list[dict[str, Any]] = []
    for criterion in run.criteria:
        in_criterion = (verdicts["criterion"] == criterion).to_numpy()
        for label, lower, upper in bins:
            mask = in_criterion & (row_bins == label)
            sub = verdicts[mask]
            values = (sub["verdict"] == "pass").to_numpy(dtype=np.int64)
            clusters = sub["cluster"].to_numpy()
            n_clusters = int(pd.unique(clusters).size)
            row: dict[str, Any] = {
                "slice": parsed.text, "bin": label, "lower": lower, "upper": upper, "criterion": criterion,
                "support": int(values.size), "clusters": n_clusters, "passed": int(values.sum()),
                "rate": math.nan, "ci_low": math.nan, "ci_high": math.nan,
                "few_clusters": n_clusters < min_clusters, "method": "",
            }
            if values.size:
                iv = criterion_interval(values, clusters, cfg, clustered)
                row.update(rate=iv.estimate, ci_low=iv.low, ci_high=iv.high, method=iv.method)
            rows.append(row)
    table = pd.DataFrame(rows, columns=SLICE_COLUMNS)
    return table.astype({"lower": "float64", "upper": "float64", "support": "int64", "clusters": "int64",
                         "passed": "int64", "rate": "float64", "ci_low": "float64", "ci_high": "float64",
                         "few_clusters": "bool"})
