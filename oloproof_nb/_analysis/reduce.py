"""Per-case reductions of a criterion's epochs, summed per cluster (what the gate, slices and
``op.reduce_epochs`` share; the intervals are the gate's, in ``_analysis/gate.py``)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .._core.epochs import Reduction, reduce_counts, value_denominator
from .columns import TEXT

if TYPE_CHECKING:
    from .run import Run

__all__ = ["epoch_counts", "repeated_rows", "REPEATED_NOTE", "ReducedSums", "reduced_sums"]

#: How a reduced criterion's reason names the rows :func:`repeated_rows` left out (``{n}``: how many).
REPEATED_NOTE = ("{n} row(s) repeat a try another run of the pool holds (a fault replay taken from the replay cache, "
                 "or a case's epoch run by a system given its epoch), so they are one try of the agent each and are "
                 "counted once")


def repeated_rows(run: Run, verdicts: pd.DataFrame, criteria: Collection[str]) -> np.ndarray:
    """Which rows of ``verdicts`` (``run.verdicts``) of ``criteria`` (those reduced with pass^k or pass@k) repeat a
    try of the agent another row already counts, in a pooled run: the fault replay rows that
    :meth:`~.run.Run.repeated_replays` names, and the rows of a run given its epoch whose (case, epoch, criterion)
    an earlier run of the pool holds (:func:`_given_epoch_repeats`). The replay records are read only when one of
    ``criteria`` is a fault criterion of a pooled run that took a replay from the cache, and once per run (``python
    benchmarks/pooled.py``: two pooled runs of 50,000 cases, the first such gate 3.9–4.3 s, 0.66–0.68 s after).

    pass^k and pass@k take a case's epochs for independent tries. The replay cache gives a later run the very
    replay an earlier run made of the same case, epoch and recording, so a pool of two runs of one system held
    each fault replay twice: a recovery that succeeds half the time, whose pass^4 is 0.5⁴ ≈ 0.06, got over
    "4 epochs" the pass^2 of its 2 tries, 0.5² = 0.25 expected, which a threshold of 0.1 can PASS (the
    pooled desk of ``tests/_analysis/test_epochs.py`` read 3 of 8 cases so). Rows of ``mean`` are left alone: a row
    repeated within its case's cluster leaves the interval cluster-robust, and where every case's rows repeat
    alike (each fault replay of the later run from the cache) the rate and interval are as they were; where
    only some cases' replays came from the cache, those cases weigh more, and the rate and interval move.

    The two rules agree on which row is kept: the epoch rule looks only at the rows the cache rule keeps. Pooled
    with the run whose replays it took listed after it, a run given its epoch lost each fault replay row to the
    cache rule, and the run it came from lost its own row to the epoch rule (an earlier run of the pool holds the
    case's epoch), so neither was counted: the fault criterion had no rows (``no_evidence``, and
    ``op.reduce_epochs`` raised ``KeyError``) where the other order counted each try once.
    """
    out = np.zeros(len(verdicts), dtype=bool)
    faulted = set(criteria) & set(run.replays["criterion"].astype(str)) if len(run.runs) > 1 else set()
    repeated = run.repeated_replays() if faulted and len(verdicts) else set()
    if repeated:
        rows = np.flatnonzero(verdicts["criterion"].astype(str).isin(faulted).to_numpy())
        part = verdicts.iloc[rows]
        epochs = part["epoch"] if "epoch" in part.columns else pd.Series(1, index=part.index)
        keys = zip(part["run_id"].astype(str), part["case_id"].astype(str), epochs.astype(int),
                   part["criterion"].astype(str), strict=True)
        out[rows] = np.fromiter((key in repeated for key in keys), dtype=bool, count=len(part))
    out |= _given_epoch_repeats(run, verdicts, criteria, out)
    return out


def _given_epoch_repeats(run: Run, verdicts: pd.DataFrame, criteria: Collection[str],
                         cached: np.ndarray) -> np.ndarray:
    """Rows of ``criteria`` in a pooled run whose (case, epoch, criterion) an earlier run of the pool (in the pool's
    order) holds, where the row's own run gave the system's ``run`` its epoch (``manifest.epoch_given``). Rows
    ``cached`` marks (replays the cache gave, repeats already) are neither repeats here nor the row others repeat.

    A system that declares ``epoch`` is given it so that it can seed itself per (case, epoch) (README §6b), and
    such a system makes the same tries in every run: two 1-epoch runs of one that fails 6 of 30 cases in epoch 2
    only, pooled, read pass^2 30 of 30 (a PASS at 0.7), where one run of 2 epochs reads 24 of 30.
    Nothing in the rows tells a seeded try from an agent that always acts the same way, but the runner knows
    which systems it gave the epoch, so each repeat counts once: the pool holds fewer tries, and a case left
    with fewer than k is ``too_few_epochs``. A system given its epoch that draws afresh anyway loses tries it
    had; run it without the ``epoch`` parameter, or with more epochs in one run.
    """
    out = np.zeros(len(verdicts), dtype=bool)
    # ``run`` given the epoch: the case's trajectory, which every row of the case judges, is the seeded one (a
    # system given it in ``replay`` alone draws its case runs afresh)
    given = [r.run_id for r in run.runs if "run" in (r.manifest.epoch_given or ())] if len(run.runs) > 1 else []
    if not given or not len(verdicts) or not criteria:
        return out
    order = {r.run_id: i for i, r in enumerate(run.runs)}
    # the rows of the criteria asked for, of runs given the epoch: a run whose system drew afresh repeats no one's
    # try, and none of its rows is another's try again
    rows = np.flatnonzero((verdicts["criterion"].astype(str).isin(set(criteria))
                           & verdicts["run_id"].astype(str).isin(given)).to_numpy() & ~cached)
    part = verdicts.iloc[rows]
    keys = pd.DataFrame({"place": part["run_id"].astype(str).map(order).to_numpy(),
                         "case_id": part["case_id"].astype(str).to_numpy(),
                         "epoch": part["epoch"].astype(int).to_numpy() if "epoch" in part.columns else 1,
                         "criterion": part["criterion"].astype(str).to_numpy()})
    later = keys.sort_values("place", kind="stable").duplicated(["case_id", "epoch", "criterion"]).sort_index()
    out[rows] = later.to_numpy()
    return out


def epoch_counts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per criterion and case: ``cluster``, ``epochs`` (rows n), ``passes`` (c), ``missing`` (rows missing).

    Rows are the verdict rows of the case's epochs (a case is its ``case_id``: a derived case is a case
    of its own, in its source's cluster).
    """
    if not len(verdicts):
        return pd.DataFrame({"criterion": pd.Series([], dtype=TEXT), "case_id": pd.Series([], dtype=TEXT),
                             "cluster": pd.Series([], dtype=TEXT), "epochs": pd.Series([], dtype="int64"),
                             "passes": pd.Series([], dtype="int64"), "missing": pd.Series([], dtype="int64")})
    frame = pd.DataFrame({"criterion": verdicts["criterion"], "case_id": verdicts["case_id"],
                          "cluster": verdicts["cluster"],
                          "passes": (verdicts["verdict"] == "pass").astype("int64"),
                          "missing": (verdicts["verdict"] == "missing").astype("int64")})
    # observed: of a frame whose ids are categorical, the (criterion, case) pairs that have rows (pandas 2 also gave
    # every other pair of categories, a case of 0 rows: counted in ``cases`` and ``left_out``, too_few_epochs)
    grouped = frame.groupby(["criterion", "case_id"], sort=False, observed=True)
    out = grouped.agg(cluster=("cluster", "first"), epochs=("passes", "size"), passes=("passes", "sum"),
                      missing=("missing", "sum")).reset_index()
    return out.astype({"epochs": "int64", "passes": "int64", "missing": "int64"})


@dataclass(frozen=True)
class ReducedSums:
    """One criterion's reduced values summed per cluster.

    ``sums`` (Σ of the cases' values) and ``sizes`` (cases) per cluster; ``denominator`` a common
    denominator D of the values (they are whole multiples of 1/D; D depends on the epochs, not on the
    passes); ``binary`` when D is 1 (every case has exactly k rows, so every value is 0 or 1 whatever the
    passes: a run whose values only happen to be 0 or 1 is not binary, or its interval method would
    change with the passes and a worse agent could get the narrower one); ``cases_at_one`` cases whose
    value is 1; ``all_missing`` cases whose every row is missing; ``left_out`` cases with fewer rows than
    k (not reduced); ``repeated`` fault replay rows left out before reducing, as repeats of a replay another
    run of a pooled run made (:func:`repeated_rows`).
    """

    reduction: Reduction
    sums: np.ndarray
    sizes: np.ndarray
    binary: bool
    cases_at_one: int
    all_missing: int
    left_out: int
    failing_clusters: int
    denominator: int = 1
    repeated: int = 0

    @property
    def cases(self) -> int:
        return int(self.sizes.sum())


def reduced_sums(counts: pd.DataFrame, reduction: Reduction) -> ReducedSums:
    """The per-cluster sums of one criterion's per-case values (``counts``: its rows of :func:`epoch_counts`)."""
    enough = counts["epochs"].to_numpy() >= reduction.k
    used = counts[enough]
    n, c = used["epochs"].to_numpy(np.int64), used["passes"].to_numpy(np.int64)
    values = reduce_counts(n, c, reduction) if len(used) else np.zeros(0)
    codes, _ = pd.factorize(used["cluster"], sort=False)
    g = int(codes.max()) + 1 if len(codes) else 0
    sums = np.bincount(codes, weights=values, minlength=g) if g else np.zeros(0)
    sizes = np.bincount(codes, minlength=g).astype(np.int64) if g else np.zeros(0, np.int64)
    at_one = values == 1.0  # exact: C(n, k)/C(n, k) and 1 − 0 are 1.0 in floating point, nothing else is
    below = np.bincount(codes, weights=(~at_one).astype(float), minlength=g) if g else np.zeros(0)
    denominator = value_denominator(n, reduction) if len(used) else 1
    return ReducedSums(reduction, sums, sizes, denominator == 1, int(at_one.sum()),
                       int((used["missing"].to_numpy() == n).sum()), int((~enough).sum()),
                       int(np.count_nonzero(below > 0)), denominator)
