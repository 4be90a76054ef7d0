"""Notes a gate's reasons are read with: why a criterion's rows are missing (:func:`commonest_reason`), what would
decide a criterion whose every row passes, an ``outcome_contract`` PASS whose contracts check no content, and the
abrupt ends of a resumed run (:func:`abrupt_ends_note`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._config.files import yaml_number
from .._core.binomial import clopper_pearson, n_min
from .._core.records import AbruptEnd
from .._core.scoremap import reason_kind
from ..errors import quote
from .receipts import outcome_summary
from .run import Run

__all__ = ["abrupt_ends", "abrupt_ends_note", "case_runs", "commonest_reason"]


#: Reason note of an ``outcome_contract`` PASS on contracts none of which checks the artifact's content.
OUTCOME_CONTENT_UNCHECKED = "outcome_content_unchecked"


def abrupt_ends(run: Run) -> list[AbruptEnd]:
    """The ends of ``run``'s process that a resume could not blame on the system, whose case runs in flight ran
    again: its manifest's ``abrupt_ends`` (a pooled run: each of its runs', in their order); empty for none."""
    return [end for member in run.runs for end in (member.manifest.abrupt_ends or [])]


def abrupt_ends_note(ends: Sequence[AbruptEnd]) -> str:
    """The line a gate is read with when its run was resumed after abrupt ends of its process (:func:`abrupt_ends`):
    the case runs in flight ran again, a second chance a run that never stopped gave none of them; empty for none.

    Examples
    --------
    >>> print(abrupt_ends_note([AbruptEnd(how="killed by signal SIGKILL", rerun=[("c4", 1)])]))
    ... # doctest: +NORMALIZE_WHITESPACE
    resumed after 1 abrupt end of the run's process (killed by signal SIGKILL); the 1 case run in flight was run
    again: case 'c4'; isolation: process judges a crash as the case's error
    >>> abrupt_ends_note([])
    ''
    """
    if not ends:
        return ""
    hows = sorted({end.how or "not seen by oloproof run" for end in ends})
    rerun = [key for end in ends for key in end.rerun]
    n = len(ends)
    return (f"resumed after {n} abrupt end{'s' if n != 1 else ''} of the run's process ({'; '.join(hows)}); the "
            f"{len(rerun)} case run{'s' if len(rerun) != 1 else ''} in flight {'were' if len(rerun) != 1 else 'was'} "
            f"run again: {case_runs(rerun)}; isolation: process judges a crash as the case's error")


def case_runs(keys: Sequence[tuple[str, int]], most: int = 5) -> str:
    """``case 'c1'``, ``cases 'c1', 'c2' (epoch 2) and 3 more``: the case runs ``keys`` in a line.

    >>> case_runs([("c1", 1), ("c2", 2)])
    "cases 'c1', 'c2' (epoch 2)"
    """
    named = [quote(case_id) + (f" (epoch {epoch})" if epoch != 1 else "") for case_id, epoch in keys[:most]]
    more = f" and {len(keys) - most:,} more" if len(keys) > most else ""
    return ("case " if len(keys) == 1 else "cases ") + ", ".join(named) + more


def all_pass_note(row: dict[str, Any], sizes: np.ndarray, threshold: float, confidence: float,
                   clustered: bool) -> str:
    """What would decide a criterion whose every row passes and whose interval still holds ``threshold``, else "".

    Its lower bound is then the all-pass bound (α/2)^(1/n_min), n_min = (Σm)²/Σm² over its clusters of sizes
    ``sizes`` (Clopper–Pearson, and ``cluster_t``'s fallback when every row agrees), so only a larger n_min
    clears the threshold: at least ln(α/2)/ln(threshold), the least whole n whose bound as the gate computes it
    reaches it (:func:`_least_all_pass_n`; of clusters, the least n_min in hundredths,
    :func:`_least_all_pass_size`; README section 6, "How big must a suite be?"). Before,
    the reason said ``interval_includes_threshold`` alone, and a team whose every case passed read no more.
    Other methods (``wilson``) have another all-pass bound: no note.
    """
    if not (row["n"] and row["passed"] == row["n"] and row["method"] in ("clopper_pearson", "cluster_t")):
        return ""
    size = n_min(np.asarray(sizes))
    unit = "row" if row.get("reduce", "mean") == "mean" else "case"  # pass^k / pass@k: n counts reduced cases
    # every digit of the threshold (:g showed 0.9999995 as 1), and n_min rounded down to 2 decimals (.4g showed
    # 1,163.6 as 1164 beside "needs n_min of at least 1164", and 12,345.6 as 1.235e+04)
    shown = yaml_number(threshold)
    if threshold >= 1:
        return f"every {unit} passes, and no number of {unit}s gives a lower bound of {shown}: lower the threshold"
    half = (1 - confidence) / 2
    need = _least_all_pass_n(threshold, confidence)
    if clustered:
        effective = f"{math.floor(size * 100 + 1e-9) / 100:,.2f}".rstrip("0").rstrip(".")
        # n_min need not be whole: the least one in hundredths, as n_min is shown (36 was said for 0.9, where
        # clusters of n_min 35.1 pass: 0.025^(1/35.1) = 0.90024)
        least = f"{_least_all_pass_size(threshold, confidence, need):,.2f}".rstrip("0").rstrip(".")
        return (f"every {unit} passes: its clusters count as n_min = {effective} equal-sized ones, and no lower "
                f"bound is above {half:g}^(1/n_min); {shown} needs n_min of at least {least} (more clusters, or "
                "clusters closer in size; README section 6, How big must a suite be?)")
    units = unit if row["n"] == 1 else f"{unit}s"  # a first suite of one case: "1 independent row"
    return (f"every {unit} passes: with {row['n']:,} independent {units} no lower bound is above "
            f"{half:g}^(1/{row['n']}); {shown} needs at least {need:,} (README section 6, How big must a suite be?)")


def _least_all_pass_n(threshold: float, confidence: float) -> int:
    """The least whole n whose all-pass lower bound, as the gate computes it (:func:`clopper_pearson` of n in n,
    (α/2)^(1/n)), reaches ``threshold`` (0 < ``threshold`` < 1).

    ln(α/2)/ln(threshold) rounded up is that n in exact arithmetic, but the gate decides on the float bound: at
    confidence 0.68 and threshold 0.4 the decimal n is 2 and the bound of 2 is 0.39999999999999997, so 2 passing
    rows stay ``interval_includes_threshold`` while the note said 0.4 needed 2; a threshold one float
    above an achievable bound likewise. So the bound itself is searched (it rises with n), by bisection: near 1 the
    float bound is flat over many n.
    """
    def reaches(n: int) -> bool:
        return clopper_pearson(n, n, confidence)[0] >= threshold

    # half the exact n: its bound is about threshold², below it, unless that is 1 row (then the answer, as rounding
    # can put the exact n just above 1 at a threshold of α/2)
    low = max(1, math.ceil(math.log((1 - confidence) / 2) / math.log(threshold)) // 2)
    if reaches(low):
        return low
    high = 2 * low
    while not reaches(high):  # the float bound rounds to 1.0 for a large enough n: this ends
        low, high = high, 2 * high
    while high - low > 1:  # reaches(high), not reaches(low)
        mid = (low + high) // 2
        low, high = (low, mid) if reaches(mid) else (mid, high)
    return high


def _least_all_pass_size(threshold: float, confidence: float, whole: int) -> float:
    """The least effective size n_min, in hundredths, whose all-pass lower bound as the gate computes it (the
    clustered fallback: :func:`clopper_pearson` of n_min in n_min) reaches ``threshold``; ``whole`` is the least
    whole one (:func:`_least_all_pass_n`), so it lies above ``whole`` − 1 and at most at ``whole``.

    n_min = (Σm)²/Σm² is a whole number only for clusters of one size: 35 singletons and a pair (n_min 35.1) pass
    0.9 at confidence 0.95, where the least whole n is 36.
    """
    def reaches(hundredths: int) -> bool:
        return hundredths > 0 and clopper_pearson(hundredths / 100, hundredths / 100, confidence)[0] >= threshold

    low, high = (whole - 1) * 100, whole * 100  # reaches(high), not reaches(low)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if reaches(mid) else (mid, high)
    return high / 100


def missing_why(verdicts: pd.DataFrame, criterion: str) -> str:
    """Why ``criterion``'s rows are missing, for its ``all_missing`` reason: the commonest reason its rows give and
    how many give it (``every row is missing: "score 9 is not in [0, 1]; say which scores pass with pass_threshold=
    (--pass-threshold)" (all 240 rows)``, :func:`commonest_reason`).

    ``all_missing`` alone told the user nothing of what would make the criterion decide, where each row's reason
    says it (a rating read without a ``pass_threshold``, a control replay that diverged, a system that raised)."""
    rows = verdicts.loc[(verdicts["criterion"] == criterion) & (verdicts["verdict"] == "missing"), "reason"]
    quoted = commonest_reason(rows)
    return f"every row is missing: {quoted}" if quoted else "every row is missing"


def commonest_reason(reasons: pd.Series, where: str = "run.verdicts") -> str:
    """The commonest of the ``reasons`` of missing rows, quoted, and how many rows give it: ``"no_state_recorded"
    (all 40 rows)``, or ``"…" (30 of 40 rows; 2 other reasons, 4 with none, each in run.verdicts)`` (``where``
    says where each row's reason is); ``""`` when no row gives one. Reasons of one kind that differ only in the
    score they name are one reason, quoted without it (:func:`~oloproof_nb._core.scoremap.reason_kind`).

    The ``all_missing`` reason of the gate (:func:`missing_why`) and of a comparison quote it: what would make the
    criterion decide is in its rows' reasons."""
    text = reasons.fillna("").astype(str)
    # the commonest reason given: rows without one (NaN, "") outnumbering it hid it behind "every row is missing"
    given = text[text != ""]
    # of its kind, not of the score it names: a rating's "score 3 …" and "score 7 …" are one reason, which was
    # quoted for the rows of one rating (17 of 72 rows; 4 other reasons, where 51 rows gave it)
    kinds = given.map(reason_kind)
    counts = kinds.value_counts(sort=True)
    if counts.empty:
        return ""
    said = given[kinds == counts.index[0]].unique()
    top, n, more = str(said[0] if len(said) == 1 else counts.index[0]), int(counts.iloc[0]), len(counts) - 1
    blank = len(text) - int(counts.sum())
    if not more and not blank:
        return f'"{top}" (all {n:,} rows)'
    others = [f"{more:,} other reason{'s' if more != 1 else ''}"] if more else []
    others += [f"{blank:,} with none"] if blank else []
    return f'"{top}" ({n:,} of {len(text):,} rows; {", ".join(others)}, each in {where})'


def content_unchecked(run: Run) -> str:
    """The note for an ``outcome_contract`` PASS when no contract of the run's expected outcomes checks the
    artifact's content (``check_coverage`` 0), else ``""`` (also without an ``outcome_contract`` evaluator).

    Such a PASS says every promised file was there and fresh, nothing of what it holds: before, it read as any
    other PASS (40 empty files read ``gate: PASS``)."""
    if not any(ev.type == "outcome_contract" for ev in run.config.evaluators):
        return ""
    receipts = run.receipts
    if receipts.empty:
        return ""
    summary = outcome_summary(receipts).iloc[0]
    if not summary["expected"] or summary["check_coverage"] > 0:
        return ""
    return (f"{OUTCOME_CONTENT_UNCHECKED}: no contract of the {int(summary['expected'])} expected outcomes checks "
            "the artifact's content (check_coverage 0: no validator, no expected_sha256), so any fresh file, an "
            "empty one included, was verified")


def clusters_text(n: int) -> str:
    """``n`` clusters as a ``too_few_clusters`` reason counts them: ``1 cluster``, ``12 clusters``.

    Examples
    --------
    >>> clusters_text(1), clusters_text(12)
    ('1 cluster', '12 clusters')
    """
    return f"{n} cluster" + ("" if n == 1 else "s")


def too_few_clusters(n_clusters: int, min_clusters: int) -> str:
    """The reason of a row whose clusters are fewer than ``min_clusters``, with both numbers (the gate's and
    compare's: "too few" said nothing to a suite of 16 cases).

    Examples
    --------
    >>> too_few_clusters(1, 20)
    'too_few_clusters: its rows fall in 1 cluster, min_clusters is 20'
    """
    return f"too_few_clusters: its rows fall in {clusters_text(n_clusters)}, min_clusters is {min_clusters}"
