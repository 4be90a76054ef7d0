"""Paired comparison of two runs of one suite: per criterion, the difference of pass rates with a clustered interval.

Cases are paired by (case id, case digest): a case in one run only, or whose digest changed (its input,
initial state, expected result or outcome contract was edited), is listed in ``unpaired`` and left out —
never paired silently. The rows of a criterion that both runs judged on a paired case are the paired rows;
their cluster is the case's cluster (a case's clusters in the two runs are merged if they differ, so a
cluster never splits; a join holds back ``NO_REGRESSION``, see below). Per criterion the per-cluster sums
(b_c base passes, k_c candidate passes, m_c rows) come from the gate's own group-by
(:func:`~oloproof_nb._analysis.gate.criterion_sums`) and the interval from
:func:`~oloproof_nb._core.paired.paired_difference_from_sums`. A criterion release.yaml reduces with
``pass^k`` or ``pass@k`` is compared on its reduced values, one row per paired case (``n`` counts cases): with
exactly k epochs they are 0 or 1 and get the same paired interval; a case with fewer than k paired epochs gives
``too_few_epochs``, more than k epochs (fractional values, no paired interval) ``reduce_not_paired``, both
``INSUFFICIENT_EVIDENCE`` — but pass^1 and pass@1 with as many paired epochs in every case are the mean, and are
compared as it is, over the case runs.

Regression rule (release.yaml ``regression: {margin, criteria}``), per listed criterion, the first that
applies:

0. a reduced criterion that cannot be paired case by case (``too_few_epochs``, ``reduce_not_paired``), or a
   criterion whose check differs in the two runs (``check_changed``: its evaluator configured differently, or
   the code of its python check or validators edited, see :func:`~.run.changed_checks`, or the ``metadata`` of a
   paired case edited where a python check is given it, see :func:`_metadata_changes`; a loosened check
   would read as a system that held up) → ``INSUFFICIENT_EVIDENCE``;
1. no paired rows → ``INSUFFICIENT_EVIDENCE`` (``no_evidence``);
2. every paired row missing on a side → ``INSUFFICIENT_EVIDENCE`` (``all_missing``);
3. a clustered comparison without ``allow_approximate_methods: true`` →
   ``INSUFFICIENT_EVIDENCE`` (``approximate_methods_not_allowed``);
4. fewer than ``min_clusters`` clusters → ``INSUFFICIENT_EVIDENCE`` (``too_few_clusters: its rows fall in 6
   clusters, min_clusters is 20``, and, when the interval lies below −margin all the same, a clause saying so):
   the paired interval is always the clustered one (a case is its own cluster in an unclustered run) and the
   simulation (benchmarks/paired.md) checked it from 20 clusters;
5. a metamorphic relation whose transform is not checked in both runs → ``INSUFFICIENT_EVIDENCE``
   (``transform_not_checked``);
6. ``NO_REGRESSION`` when ci_low ≥ −margin, ``REGRESSION`` when ci_high < −margin, otherwise
   ``INSUFFICIENT_EVIDENCE`` (``interval_includes_minus_margin``);
7. a ``NO_REGRESSION`` becomes ``INSUFFICIENT_EVIDENCE`` (``unpaired_failures``) when the candidate has rows
   that do not pass where the base run judged nothing for that case (a fault replay of a tool only the
   candidate calls), or (``unpaired_passes``) when rows the base run passed have no row in the candidate (an
   outcome the candidate left ``waiting``, a replay of a tool it no longer calls): the paired difference
   cannot see them; and (``base_missing``) when paired rows are ``missing`` in the base run and the interval
   with them counted as base passes no longer clears −margin: the base measured nothing there (its sandbox down,
   a replay that did not reproduce), so counting it as not passed makes the candidate's failure there a tie and
   its pass a gain (a base whose sandbox was down on 30 of 60 cases and a candidate failing those 30 read
   NO_REGRESSION at margin 0.1; review R40), while as passes, the most the base could have done, every such row
   is a tie or a loss; a NO_REGRESSION that holds then holds whatever the base would have done (a note says so).
   A row missing in the candidate alone counts as not passed, which can only count against the candidate.

Without ``regression.criteria``, a criterion the base run judges and the candidate run does not gets a row
of its own, ``INSUFFICIENT_EVIDENCE`` (``not_in_both_runs``): a candidate whose suite dropped the check it
fails shows no regression otherwise.

The overall verdict is ``REGRESSION`` when any listed criterion regressed, else ``INSUFFICIENT_EVIDENCE``
when any could not be decided (or none was listed), or when a case run of the base run is not paired (the
candidate did not run it, or ran it changed: ``cases_not_in_both_runs``; new cases of the candidate do not
count), or when the candidate's case file joins clusters of the base run (``clusters_changed``: the digest leaves
the cluster out, and a loss and a gain joined in one cluster cancel, which narrows the interval), or when a run
tried each case fewer times than its suite's ``epochs`` asks (``fewer_epochs``, as its gate says: a case that fails
only on a later try is in neither run), or when no rule was given and the candidate's release.yaml (the default)
differs from the base run's in a setting that decides a comparison (``release_changed``: a candidate's suite could
loosen the rule it is judged by), else ``NO_REGRESSION``. Two runs made while release.yaml was loosened agree,
so that cannot catch them: the rule used (theirs, or one given) is also weighed against the candidate's suite
folder's release.yaml as it is now, as the gate's settings are, and a weaker one is named (``Comparison.relaxed``,
``weaker_than``); the verdict stays the rule's (review R23).

Runs made with different validity labels (:func:`~.run.label_difference`, the test ``op.load_runs`` pools by) are
compared, with a note in ``Comparison.notes`` naming the copies scored in one run only (each run left out the
copies its own labels held invalid). Such a copy's rows are one-sided, so the rules above already keep a label
change from hiding a regression: a copy the candidate's labels drop that the base passed holds back
``NO_REGRESSION`` (``unpaired_passes``), one the base's labels dropped that the candidate fails does too
(``unpaired_failures``), and a relation whose transform is checked in one run only is ``transform_not_checked``;
the note says why, where those reasons name other causes.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._config.cases import repeats_note
from .._config.release import (
    ReleaseConfig,
    flat_settings,
    load_release,
    parse_release,
    relaxed_settings,
    setting_change,
)
from .._core.bootstrap import PAIRED_BOOTSTRAP_MIN_CLUSTERS
from .._core.canonical import canonical_json
from .._core.epochs import Reduction, parse_reduce, reduce_counts
from .._core.paired import mcnemar_exact, paired_difference_from_sums
from .._core.stats import is_clustered, is_clustered_from_sums
from ..errors import ConfigError, OloproofError, warn_at_caller
from .columns import TEXT, Column, FrameSpec
from .gate import FEWER_EPOCHS, criterion_sums, fewer_epochs, no_decision, vacuous_findings
from .gate_drift import release_now, release_unreadable, warn_release_drift
from .gate_findings import VACUOUS
from .gate_reasons import abrupt_ends, abrupt_ends_note, commonest_reason
from .gate_settings import (
    APPROXIMATE_NOT_ALLOWED,
    PAIRED_CLUSTERED,
    ReleaseLike,
    approximate_reason,
    relaxed_note,
    relaxed_or_now,
)
from .inspect_log import task_criteria
from .inspect_settings import split_hint
from .run import Run, as_run, changed_checks, label_difference
from .validity import broken_copies, checked_transforms, unscored_copies, unscored_note

__all__ = ["Comparison", "compare", "compare_release", "relaxed_rule", "regression_verdict", "COMPARE", "UNPAIRED",
           "PAIRED_VERDICTS", "FLIPS", "RunLike", "NO_CRITERIA"]

#: What ``compare`` accepts for each side: a Run or its directory.
RunLike = Run | str | Path
#: ``Comparison.reason`` when no criterion was compared.
NO_CRITERIA = "no_criteria: nothing was compared"
#: The reason of a criterion whose evaluator is configured differently in the two runs.
CHECK_CHANGED = "check_changed"
#: The reason of a criterion the base run judges and the candidate run does not (no ``regression.criteria``).
NOT_IN_BOTH = "not_in_both_runs"
#: The overall reason when a case run of the base run is not paired (missing from the candidate, or changed).
CASES_NOT_IN_BOTH = "cases_not_in_both_runs"
#: The overall reason when the candidate's case file joins clusters of the base run (the digest leaves them out).
CLUSTERS_JOINED = "clusters_changed"
#: The overall reason when the candidate's own release.yaml (the default rule) decides differently from the base's.
RELEASE_CHANGED = "release_changed"
#: What the settings given to a comparison are compared with (:attr:`Comparison.relaxed`).
BASE_OWN = "the base run's own release settings"
#: The settings of release.yaml that decide a comparison (a criterion's gate threshold does not; nor does
#: ``unclustered_method``: the paired interval is always the clustered one). ``method`` and ``bootstrap`` decide
#: only once the paired bootstrap is validated at some number of clusters (:data:`PAIRED_BOOTSTRAP_MIN_CLUSTERS`).
_RULE_KEYS = ("regression", "confidence", "min_clusters", "allow_approximate_methods", "reductions") + (
    ("method", "bootstrap") if math.isfinite(PAIRED_BOOTSTRAP_MIN_CLUSTERS) else ())
#: The reason of a criterion whose candidate failed rows the base run never judged (not in the paired difference).
NEW_FAILURES = "unpaired_failures"
LOST_PASSES = "unpaired_passes"
#: The reason of a criterion with paired rows the base run recorded as ``missing`` (it measured nothing there).
BASE_MISSING = "base_missing"

COMPARE = FrameSpec("compare", (
    Column("criterion", TEXT, "The criterion (judged by both runs, or by the base only: ``not_in_both_runs``)."),
    Column("base_rate", "float64", "Pass rate of the base run on the paired rows, Σb/Σm."),
    Column("candidate_rate", "float64", "Pass rate of the candidate run on the same rows, Σk/Σm."),
    Column("difference", "float64", "candidate_rate − base_rate."),
    Column("ci_low", "float64", "Lower end of the paired, clustered interval of the difference."),
    Column("ci_high", "float64", "Upper end."),
    Column("method", TEXT, "The method that produced the interval: ``cluster_t``, or ``clopper_pearson`` for "
                           "d̂ ± the Clopper–Pearson bound when the paired differences do not vary (as the gate)."),
    Column("n", "int64", "Paired rows: the criterion's rows both runs judged on a paired case."),
    Column("n_clusters", "int64", "Clusters among the paired rows."),
    Column("pass_to_fail", "int64", "Rows that pass in the base run and not in the candidate (fail or missing)."),
    Column("fail_to_pass", "int64", "Rows that do not pass in the base run and pass in the candidate."),
    Column("missing", "int64", "Paired rows whose verdict is ``missing`` in either run (they count as not passed)."),
    Column("mcnemar_p", "float64", "Exact McNemar p-value when every cluster holds one row, else NaN."),
    Column("margin", "float64", "The regression margin (NaN: not listed)."),
    Column("verdict", TEXT, "``NO_REGRESSION``, ``REGRESSION``, ``INSUFFICIENT_EVIDENCE`` or ``REPORT_ONLY``."),
    Column("reason", TEXT, "Which rule decided, and any fallback of the interval."),
    Column("one_sided", "int64", "Rows of paired cases judged in one run only (left out, e.g. a fault never "
                                 "replayed because the tool was not called)."),
), documented=15)

UNPAIRED = FrameSpec("unpaired", (
    Column("case_id", TEXT, "The case."),
    Column("reason", TEXT, "``only_in_base``, ``only_in_candidate`` or ``digest_changed``."),
    Column("base_digest", TEXT, "Its digest in the base run (missing when absent)."),
    Column("candidate_digest", TEXT, "Its digest in the candidate run (missing when absent)."),
), documented=4)

PAIRED_VERDICTS = FrameSpec("paired_verdicts", (
    Column("case_id", TEXT, "The case."),
    Column("cluster", TEXT, "Its cluster (the base run's; clusters joined by the candidate's are merged)."),
    Column("criterion", TEXT, "The criterion."),
    Column("base", TEXT, "The base run's verdict: ``pass``, ``fail`` or ``missing``."),
    Column("candidate", TEXT, "The candidate run's verdict."),
    Column("base_reason", TEXT, "Why, in the base run."),
    Column("candidate_reason", TEXT, "Why, in the candidate run."),
), documented=7)

FLIPS = FrameSpec("flips", (
    Column("case_id", TEXT, "The case."),
    Column("cluster", TEXT, "Its cluster."),
    Column("criterion", TEXT, "The criterion."),
    Column("change", TEXT, "``pass_to_fail`` or ``fail_to_pass`` (missing counts as not passed)."),
    Column("base", TEXT, "The base run's verdict."),
    Column("candidate", TEXT, "The candidate run's verdict."),
    Column("base_reason", TEXT, "Why, in the base run."),
    Column("candidate_reason", TEXT, "Why, in the candidate run."),
), documented=8)


@dataclass(frozen=True)
class Comparison:
    """Two runs of one suite compared case by case.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per criterion both runs judge (and, without ``regression.criteria``, per criterion the base
        judges alone: ``not_in_both_runs``): ``criterion, base_rate, candidate_rate, difference, ci_low,
        ci_high, method, n, n_clusters, pass_to_fail, fail_to_pass, missing, mcnemar_p, margin, verdict,
        reason, one_sided`` (unrounded; see :data:`COMPARE`).
    verdict : str
        ``NO_REGRESSION``, ``REGRESSION`` or ``INSUFFICIENT_EVIDENCE``.
    release : ReleaseConfig
        The settings used (``regression.margin``, ``confidence``, ``method``, ``min_clusters`` …).
    unpaired : pandas.DataFrame
        ``case_id, reason, base_digest, candidate_digest``: cases left out.
    verdicts : pandas.DataFrame
        ``case_id, cluster, criterion, base, candidate, base_reason, candidate_reason``: every paired row.
    flips : pandas.DataFrame
        ``case_id, cluster, criterion, change, base, candidate, base_reason, candidate_reason``: the paired
        rows that passed in one run only.
    base, candidate : Run
        The two runs.
    clustered : bool
        Whether a cluster holds more than one paired case.
    n_paired : int
        Case runs paired (same id and digest in both runs, and the same epoch when the runs have epochs: 40 cases
        of 3 epochs pair 120).
    reason : str
        ``no_criteria: nothing was compared`` when no criterion was listed; why a run cannot decide when one
        did not finish or lost case runs, and ``cases_not_in_both_runs`` when a case run of the base run is
        not paired (then the verdict is never ``NO_REGRESSION``: the cases it lacks may be the regressions; a
        regression proven on the recorded cases stays ``REGRESSION``), ``fewer_epochs: …`` when a run tried each
        case fewer times than its suite asks (the same); empty otherwise.
    notes : tuple of str
        What the reader should know: the settings used weaker than :attr:`weaker_than`'s (``relaxed``), criteria
        judged in one run only or configured differently, runs made with different validity labels (their copies
        labeled invalid differ), a run resumed after abrupt ends of its process (the case runs in flight ran again,
        as its gate says), unpaired cases.
    relaxed : tuple of str
        The settings of the rule used weaker than :attr:`weaker_than`'s that decide this comparison
        (:func:`relaxed_rule`), e.g. ``regression.margin 0.02 → 0.99``: a NO_REGRESSION is read knowing the rule
        was weaker. Settings given (``release=``, ``oloproof compare --release``) are compared with the base run's
        own release settings, stored with it when it started (the defaults when it had no release.yaml, as the
        default rule reads it); when none is weaker than those, the rule used (given, the candidate run's own, or the
        defaults when the runs were made without release.yaml) with the candidate's suite folder's release.yaml as it
        is now (runs made while the file was loosened, compared after it was put back; as
        :attr:`~oloproof_nb._analysis.gate.Gate.relaxed`, which leaves out a run made without release.yaml: the
        defaults gate no criterion, but they do decide a comparison). Empty when none is weaker.
    weaker_than : str
        What :attr:`relaxed` is weaker than: ``the base run's own release settings`` (:data:`BASE_OWN`), or
        ``<suite>/release.yaml as it is now``; empty when :attr:`relaxed` is.
    margin : float
        The regression margin (``release.regression.margin``).
    regressions : pandas.DataFrame
        The rows of ``table`` whose verdict is ``REGRESSION``.
    """

    table: pd.DataFrame
    verdict: str
    release: ReleaseConfig
    unpaired: pd.DataFrame
    verdicts: pd.DataFrame
    flips: pd.DataFrame
    base: Run = field(repr=False)
    candidate: Run = field(repr=False)
    clustered: bool = False
    n_paired: int = 0
    reason: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    relaxed: tuple[str, ...] = field(default_factory=tuple)
    weaker_than: str = ""

    @property
    def margin(self) -> float:
        """The regression margin."""
        return self.release.regression.margin

    @property
    def regressions(self) -> pd.DataFrame:
        """The criteria that regressed."""
        return self.table[self.table["verdict"] == "REGRESSION"].reset_index(drop=True)


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


def _same_run(base: Run, candidate: Run) -> bool:
    """Whether the two are one run given twice: the same id, manifest, checks and verdicts. A run's manifest
    keeps where an Inspect AI log was read from, which is not the run: one eval read from two copies of its log
    (a folder downloaded twice, the ``.eval`` and its ``.json``) was compared with itself (review U4). Its
    findings name that place too: a vacuous check names the path given to ``from_inspect`` and samples that never
    ran the log's file name, so they are set aside with it (each is worked out from the reading, in ``config``, and
    the scores, in the verdicts, both compared): read with ``pass_threshold=0``, the eval was compared with itself
    again, NO_REGRESSION. A pool of one run (``op.load_runs([dir])``) is that run: its frames only add the
    ``run_id`` column (review F22: compared with the run itself, NO_REGRESSION)."""
    def where_aside(run: Run) -> Any:
        stored = run.manifest.suite_config
        if "inspect_logs" not in stored.config:
            return run.manifest
        config = {k: v for k, v in stored.config.items() if k not in ("inspect_logs", "inspect_unrun")}
        aside = stored.model_copy(update={"config": config, "vacuous": {}})
        return run.manifest.model_copy(update={"suite_config": aside})

    def verdicts(run: Run) -> pd.DataFrame:  # a pool of this one run (op.load_runs([dir])) adds its id to each row
        return run.verdicts.drop(columns="run_id") if len(run.runs) == 1 and "run_id" in run.verdicts else run.verdicts

    return (base.run_id == candidate.run_id and where_aside(base) == where_aside(candidate)
            and base.config == candidate.config and verdicts(base).equals(verdicts(candidate)))


def _common_criteria(base: Run, candidate: Run) -> list[str]:
    """The criteria both runs judge, in the base run's order."""
    names = set(candidate.criteria)
    return [c for c in base.criteria if c in names]


def compare_release(base: Run, candidate: Run, release: ReleaseLike | None) -> ReleaseConfig:
    """The release settings :func:`compare` applies to the two runs (it raises what compare would raise for
    ``release``); it reads only their configuration."""
    return _release(candidate, release, _common_criteria(base, candidate), _split_names(base, candidate))


def _split_names(base: Run, candidate: Run) -> set[str]:
    """The criterion names the samples of several tasks share in either run's Inspect AI logs (``match``, read as
    ``bulk/match`` and ``small/match``: :func:`~.inspect_log.task_criteria`)."""
    return set(task_criteria(base)) | set(task_criteria(candidate))


def _release(candidate: Run, release: ReleaseLike | None, common: list[str], split: Collection[str]
             ) -> ReleaseConfig:
    """``release`` validated (default: the candidate's release.yaml, else the defaults); regression criteria checked
    (a name in ``split`` is one several tasks share: the message says each task has its own, as the gate's does)."""
    file = "release"
    if release is None:
        cfg = candidate.release if candidate.release is not None else ReleaseConfig()
        file = "release.yaml of the candidate run"
    elif isinstance(release, ReleaseConfig):
        cfg = release
    elif isinstance(release, dict):
        cfg = parse_release(release, "release")
    else:
        cfg, file = load_release(release), str(release)
    for name in cfg.regression.criteria or []:
        if name not in common:
            hint = f" ({split_hint(name)})" if name in split else ""  # review F38: it said not why
            raise ConfigError(file, "regression.criteria", f"{name!r} is not judged by both runs{hint}; criteria of "
                                                           f"both: {', '.join(common) or '(none)'}")
    return cfg


def _keys(base: pd.DataFrame, candidate: pd.DataFrame) -> list[str]:
    """The columns naming one case run: the case id, and its epoch when both runs have epochs."""
    return ["case_id"] + (["epoch"] if "epoch" in base.columns and "epoch" in candidate.columns else [])


def _one_row_per_case(cases: pd.DataFrame, keys: list[str], run: Run, side: str) -> None:
    twice = cases[cases.duplicated(keys, keep=False)]
    if len(twice):
        raise OloproofError(f"compare: case {twice['case_id'].iloc[0]!r} is in the {side} run {run.run_id} more "
                            "than once (a pooled run?); compare one run on each side")


def _epochs_of(run: Run, side: str) -> int:
    """The epochs each case of ``run`` ran: its own, or the one count shared by every run of a pooled run.

    A pooled run's ``epochs`` is the sum over its runs, but its rows keep each run's epoch numbers (1..k): two
    runs of 1 epoch holding different cases are a pooled run of "2 epochs" whose every case has epoch 1 only.
    Compared with a run of 2 epochs it paired epoch 1 and left the candidate's epoch 2 unseen, so the epochs
    that must match are the runs' own.
    """
    own = sorted({r.manifest.epochs for r in run.runs})
    if len(own) > 1:
        raise OloproofError(f"compare: the {side} run {run.run_id} pools runs made with different epochs "
                            f"({', '.join(map(str, own))}); each case run is paired with the same epoch of the other "
                            "run, so compare runs made with the same epochs")
    return own[0]


def _same_epochs_per_case(base: pd.DataFrame, candidate: pd.DataFrame) -> None:
    """Refuse a case in both runs whose epochs differ: a run's ``epochs`` is its largest, and Inspect AI tasks
    pooled into one run keep each its own (base: a task of 1 epoch and one of 3; candidate: the other way round),
    so the run-level check passed and the epochs one side lacked were left out (the candidate's failing epochs
    2 and 3 of every case: NO_REGRESSION, where its own gate said FAIL)."""
    eb = base.groupby("case_id", sort=False)["epoch"].agg(lambda e: tuple(sorted(e)))
    ec = candidate.groupby("case_id", sort=False)["epoch"].agg(lambda e: tuple(sorted(e)))
    both = eb.index.intersection(ec.index)
    differ = both[(eb[both] != ec[both]).to_numpy()]
    if len(differ):
        cid = differ[0]
        raise OloproofError(f"compare: case {cid!r} ran epochs {_epoch_list(eb[cid])} in the base run and "
                            f"{_epoch_list(ec[cid])} in the candidate ({len(differ)} such case(s)); each case run is "
                            "paired with the same epoch of the other run, so compare runs whose cases ran the same "
                            "epochs")


def _epoch_list(epochs: tuple[int, ...]) -> str:
    return f"{epochs[0]}–{epochs[-1]}" if len(epochs) > 2 and list(epochs) == list(range(epochs[0], epochs[-1] + 1)) \
        else ", ".join(map(str, epochs))


def _merged_clusters(base: pd.Series, candidate: pd.Series) -> np.ndarray:
    """Each paired case's cluster: the base cluster, with clusters the candidate joins merged (connected parts)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    b = ["b:" + str(v) for v in base]
    c = ["c:" + str(v) for v in candidate]
    for x, y in set(zip(b, c, strict=True)):
        rx, ry = find(x), find(y)
        if rx != ry:
            parent[max(rx, ry)] = min(rx, ry)
    label: dict[str, str] = {}
    for x in sorted(set(b)):  # a merged cluster is named after its first base cluster
        label.setdefault(find(x), x[2:])
    return np.array([label[find(x)] for x in b], dtype=object)


def _pair_cases(base: Run, candidate: Run) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """(paired cases with their cluster, the unpaired frame, the key columns)."""
    bc, cc = base.cases, candidate.cases
    keys = _keys(bc, cc)
    _one_row_per_case(bc, keys, base, "base")
    _one_row_per_case(cc, keys, candidate, "candidate")
    merged = bc[[*keys, "digest", "cluster"]].merge(cc[[*keys, "digest", "cluster"]], on=keys, how="outer",
                                                    suffixes=("_base", "_candidate"), indicator=True, sort=False)
    side = merged["_merge"].astype(str)
    same = (side == "both") & (merged["digest_base"] == merged["digest_candidate"])
    reason = np.select([side == "left_only", side == "right_only"], ["only_in_base", "only_in_candidate"],
                       "digest_changed")
    out = merged[~same.to_numpy()]
    unpaired = UNPAIRED.from_columns({"case_id": list(out["case_id"]), "reason": list(reason[~same.to_numpy()]),
                                      "base_digest": list(out["digest_base"]),
                                      "candidate_digest": list(out["digest_candidate"])})
    paired = merged[same.to_numpy()]
    paired = pd.DataFrame({**{k: paired[k].to_numpy() for k in keys},
                           "cluster": _merged_clusters(paired["cluster_base"], paired["cluster_candidate"]),
                           "base_cluster": paired["cluster_base"].astype(str).to_numpy()})
    return paired, unpaired, keys


def _joined_clusters(paired: pd.DataFrame) -> str:
    """What :data:`CLUSTERS_JOINED` says when the candidate's clusters join clusters of the base run (``""`` when
    they join none): how many, and the first cluster made of several.

    The case digest leaves the cluster out, so a candidate's case file may group the paired cases otherwise. A
    split is undone by the merge (a cluster never splits), but a join narrows the interval too: the paired
    interval splits each cluster's *net* change into a loss and a gain, so a lost case and a gained case put into
    one cluster cancel (100 singletons, 15 lost and 10 gained, margin 0.12: each gained case joined to a lost
    one's cluster moved ci_low from −0.147 to −0.117, NO_REGRESSION)."""
    bases = paired.groupby("cluster", sort=True)["base_cluster"].unique()
    joined = bases[bases.map(len) > 1]
    if joined.empty:
        return ""
    first = sorted(joined.iloc[0])
    shown = ", ".join(first[:3]) + (" …" if len(first) > 3 else "")
    return (f"{CLUSTERS_JOINED}: the candidate's case file puts paired cases of {int(joined.map(len).sum())} "
            f"clusters of the base run into {len(joined)} (first: {shown}); a loss and a gain in one cluster cancel, "
            "so the joined clusters' interval may be narrower than the base's clusters give: compare runs whose "
            "cases have the same clusters")


def _pair_rows(base: Run, candidate: Run, paired: pd.DataFrame, keys: list[str],
               criteria: list[str]) -> tuple[pd.DataFrame, dict[str, int], dict[str, int], dict[str, int]]:
    """The paired verdict rows (``case_id, cluster, criterion, base, candidate, …``), the rows judged
    one-sidedly and, of those, the candidate's rows that do not pass and the base run's rows that pass, per
    criterion."""
    cols = [*keys, "criterion", "verdict", "reason"]
    bv = base.verdicts[cols][base.verdicts["criterion"].isin(criteria)]
    cv = candidate.verdicts[cols][candidate.verdicts["criterion"].isin(criteria)]
    both = bv.merge(cv, on=[*keys, "criterion"], how="outer", suffixes=("_b", "_c"), indicator=True, sort=False)
    both = both.merge(paired, on=keys, how="inner", sort=False)  # rows of paired cases only
    lone = both[both["_merge"].astype(str) != "both"]
    one_sided = lone["criterion"].value_counts().to_dict()
    failed = lone[(lone["_merge"].astype(str) == "right_only") & (lone["verdict_c"] != "pass")]
    new_failures = failed["criterion"].value_counts().to_dict()
    lost = lone[(lone["_merge"].astype(str) == "left_only") & (lone["verdict_b"] == "pass")]
    lost_passes = lost["criterion"].value_counts().to_dict()
    rows = both[both["_merge"].astype(str) == "both"]
    order = {c: i for i, c in enumerate(criteria)}
    rows = rows.assign(_o=rows["criterion"].map(order)).sort_values("_o", kind="stable")
    frame = PAIRED_VERDICTS.from_columns({
        "case_id": list(rows["case_id"]), "cluster": list(rows["cluster"]), "criterion": list(rows["criterion"]),
        "base": list(rows["verdict_b"]), "candidate": list(rows["verdict_c"]),
        "base_reason": list(rows["reason_b"]), "candidate_reason": list(rows["reason_c"])})
    if len(keys) > 1:  # epochs: keep them beside the case id
        for extra in reversed(keys[1:]):
            frame.insert(1, extra, rows[extra].to_numpy())
    return (frame, {str(k): int(v) for k, v in one_sided.items()}, {str(k): int(v) for k, v in new_failures.items()},
            {str(k): int(v) for k, v in lost_passes.items()})


def _flips(rows: pd.DataFrame) -> pd.DataFrame:
    """The paired rows that pass in one run only, with ``change`` (pass_to_fail or fail_to_pass)."""
    flipped = rows[((rows["base"] == "pass") != (rows["candidate"] == "pass")).to_numpy()]
    change = np.where((flipped["base"] == "pass").to_numpy(), "pass_to_fail", "fail_to_pass")
    out = FLIPS.from_columns({**{c: list(flipped[c]) for c in FLIPS.names if c != "change"},
                              "change": list(change)})
    if "epoch" in rows.columns:
        out.insert(1, "epoch", flipped["epoch"].to_numpy())
    return out


def _rule_changes(base: ReleaseConfig | None, candidate: ReleaseConfig | None) -> list[str]:
    """The settings deciding a comparison that ``candidate`` (the candidate run's release.yaml, or the suite's as it
    is now) gives otherwise than ``base`` (``regression.margin 0.02 → 0.4``); None stands for the defaults (a run
    made without release.yaml)."""
    def flat(cfg: ReleaseConfig | None) -> dict[str, Any]:
        data = flat_settings(cfg, nested=("regression", "bootstrap"))
        criteria = data["regression.criteria"]
        data["regression.criteria"] = None if criteria is None else sorted(set(criteria))  # a set, not a list
        data["reductions"] = {k: v for k, v in data["reductions"].items() if v != "mean"}  # mean: the default
        return {k: v for head in _RULE_KEYS for k, v in data.items() if k.split(".", 1)[0] == head}

    before, after = flat(base), flat(candidate)
    return [setting_change(key, before[key], after[key]) for key in before if before[key] != after[key]]


def _labels_note(base: Run, candidate: Run, relabeled: str, paired: set[str]) -> str:
    """What a reader of a comparison of runs made with different validity labels should know (``relabeled``:
    :func:`~.run.label_difference`): each run left out the copies its own labels held invalid (once its transform
    was checked), so a paired copy may be scored in one run only; its rows are then left out of the paired
    difference (``one_sided``), or hold back a ``NO_REGRESSION`` (``unpaired_passes``, ``unpaired_failures``)."""
    one_run = sorted((set(unscored_copies(base)) ^ set(unscored_copies(candidate))) & paired)
    head = f"the runs were made with different validity labels ({relabeled})"
    if not one_run:
        return f"{head}: every paired copy is scored in both runs or in neither, so the labels change no paired row"
    shown = ", ".join(one_run[:5]) + (" …" if len(one_run) > 5 else "")
    copies = "1 paired copy is" if len(one_run) == 1 else f"{len(one_run)} paired copies are"
    return (f"{head}: {copies} scored in one run only ({shown}), and left out of the paired difference "
            "(one_sided); to compare on the same copies, run the base again with the candidate's labels")


def _metadata_changes(base: Run, candidate: Run, paired: pd.DataFrame, changed: dict[str, str]) -> dict[str, str]:
    """The ``python`` checks both runs judge (and ``changed`` does not name) that were given another ``metadata``
    for a paired case, each with how: a check is called with the whole case, and its ``metadata`` is where a
    suite keeps what a check compares with (the outputs a reply must mention, a benchmark's ground truth), but the
    case digest leaves ``metadata`` out, so the case stays paired. A candidate's case file that wrote its own
    wrong answers into the metadata of the cases it now fails read NO_REGRESSION (review R17). Other checks are
    never given the metadata: an edited tag changes nothing they judge."""
    judged = {ev.name for ev in base.config.evaluators}
    checks = [ev.name for ev in candidate.config.evaluators
              if ev.type == "python" and ev.name in judged and ev.name not in changed]
    if not checks or paired.empty:
        return {}
    ids = set(paired["case_id"])

    def metadata(run: Run) -> dict[str, str]:
        cases = run.cases[run.cases["case_id"].isin(ids)].drop_duplicates("case_id")
        return dict(zip(cases["case_id"], map(canonical_json, cases["metadata"]), strict=True))

    before, after = metadata(base), metadata(candidate)
    differ = sorted(cid for cid, text in before.items() if after.get(cid) != text)
    if not differ:
        return {}
    how = f"the metadata it is given differs in {len(differ)} paired case(s), first {differ[0]!r}"
    return dict.fromkeys(checks, how)


def _config_notes(base: Run, candidate: Run, changed: dict[str, str]) -> list[str]:
    notes = []
    b = {ev.name for ev in base.config.evaluators}
    c = {ev.name for ev in candidate.config.evaluators}
    for name in (ev.name for ev in base.config.evaluators):
        if name not in c:
            notes.append(f"criterion {name} is judged only in the base run")
        elif name in changed:
            notes.append(f"criterion {name} is judged by different checks in the two runs ({changed[name]}): "
                         "its flips mix the system's change with the check's")
    notes += [f"criterion {ev.name} is judged only in the candidate run: not compared"
              for ev in candidate.config.evaluators if ev.name not in b]
    return notes


def compare(base: RunLike, candidate: RunLike, release: ReleaseLike | None = None) -> Comparison:
    """Compare two runs of one suite case by case: paired, clustered differences and a regression verdict.

    Parameters
    ----------
    base : Run or path
        The version in production (or any reference run), or its run directory.
    candidate : Run or path
        The new version, run on the same cases.
    release : ReleaseConfig, dict or path, optional
        Settings: ``regression: {margin, criteria}``, ``confidence``, ``method``, ``bootstrap``,
        ``min_clusters``, ``allow_approximate_methods``. Default: the candidate run's release.yaml, or the
        defaults (margin 0.02, every criterion both runs judge) when it had none.

    Returns
    -------
    Comparison
        ``.table`` (per criterion: ``criterion, base_rate, candidate_rate, difference, ci_low, ci_high,
        method, n, n_clusters, pass_to_fail, fail_to_pass, missing, mcnemar_p, margin, verdict, reason,
        one_sided``), ``.verdict``, ``.unpaired``, ``.verdicts``, ``.flips``, ``.notes``, ``.relaxed`` and
        ``.weaker_than``.

    Warns
    -----
    UserWarning
        Without ``release``, when the candidate's suite folder's release.yaml now differs from the settings stored
        with the candidate run (which decide) in a setting that decides a comparison, as ``op.gate`` warns for
        its own: the differing settings, and how to compare with the file as it is now. A rule weaker than the
        file is also named in ``.relaxed`` (``.weaker_than``: ``<suite>/release.yaml as it is now``).

    Notes
    -----
    A paired row is a (case, criterion) both runs judged, on a case whose id and digest are the same in both. Rows
    are binary (pass = 1; fail and missing = 0, as in the gate). With per-cluster sums b_c (base passes), k_c
    (candidate passes) and m_c (rows), the difference is d̂ = (Σk − Σb)/Σm = (fail_to_pass − pass_to_fail)/n. Its
    interval (:func:`oloproof_nb._core.paired.paired_difference_from_sums`) splits each cluster's change into a net
    loss and a net gain, gives each of the two rates the gate's monotone CR2 logit-t interval and combines them by
    the MOVER with a bound on their negative correlation that grows with one direction's count only; it is
    monotone by construction: a candidate that passes one more row, or a base that passes one fewer, never gets a
    lower ci_low or ci_high, so one lost row is never judged better than no change.
    In the simulation of benchmarks/paired.md (G = 20 and 50, 2,000 repetitions per cell) no one-sided miss occurs
    in the paired beta-binomial cells, at most 0.8% where changes are rare and 1.05% where whole clusters flip (a
    stress design), at the nominal 2.5%; the price is width (in the beta-binomial cells the median interval is
    1.2–1.9 times as wide as the previous, non-monotone one's, and the cap on what the clusters can vouch for makes
    it 1.04–1.50 times as wide again). ``method: cluster_bootstrap`` in release.yaml is replaced by ``cluster_t``
    as in the gate (the paired bootstrap missed up to 7.05%; the reason says so). When no row changed between the
    runs, the interval is d̂ ± the Clopper–Pearson bound of 0 discordant rows in n_min = (Σm)²/Σm², never zero
    width: with 24 clusters of two rows that is ±0.142, so no margin below 0.142 can be cleared by 24 source cases,
    and a candidate that only lost rows has ci_low ≤ −0.142 too. The exact McNemar test (McNemar 1947) of
    pass_to_fail against fail_to_pass is given when every cluster holds one paired row.

    References
    ----------
    .. [1] Newcombe, R. G. (1998a). Statistics in Medicine 17(8), 873–890 (square-and-add, independent rates).
    .. [2] Newcombe, R. G. (1998b). Statistics in Medicine 17(22), 2635–2650 (paired rates).
    .. [3] Bell, R. M. & McCaffrey, D. F. (2002). Survey Methodology 28(2), 169–181.
    .. [4] McNemar, Q. (1947). Psychometrika 12(2), 153–157.
    .. [5] Zou, G. Y. & Donner, A. (2008). Statistics in Medicine 27(10), 1693–1702 (MOVER).

    Examples
    --------
    >>> import oloproof_nb as op
    >>> cmp = op.compare("runs/v1", "runs/v2")                        # doctest: +SKIP
    >>> cmp.verdict, cmp.table[["criterion", "difference", "ci_low", "ci_high", "verdict"]]   # doctest: +SKIP
    """
    base_run, cand_run = as_run(base, "compare: base"), as_run(candidate, "compare: candidate")
    if _same_run(base_run, cand_run):
        # one run given twice, or a copied folder of it (a CI artifact downloaded twice): no second version. A
        # run re-judged (an Inspect AI log scored with other options) or cut short keeps its id: compared
        raise OloproofError(f"compare: the base and the candidate are the same run {base_run.run_id} "
                            f"({base_run.directory} and {cand_run.directory}); compare two runs")
    common = _common_criteria(base_run, cand_run)
    cfg = _release(cand_run, release, common, _split_names(base_run, cand_run))
    found = release_now(cand_run)  # read once: the drift warning and Comparison.relaxed
    if release is None:  # the candidate's stored rule decides (the runs are the evidence); the user may think the file
        warn_release_drift(cand_run, found, "this comparison uses the candidate run's; to compare with the file as "
                                            "it is now, give it: op.compare(base, candidate, release=...) or "
                                            "oloproof compare --release", changes=_rule_changes)
        unread = "" if found is not None else release_unreadable(cand_run)
        if unread:
            warn_at_caller(f"{unread} (the suite folder's release.yaml, which cannot be read now); this comparison "
                           f"uses the release settings the candidate run {cand_run.run_id} was made with")
    listed = set(cfg.regression.criteria or common)
    paired, unpaired, keys = _pair_cases(base_run, cand_run)
    if paired.empty and not (unpaired["reason"] == "digest_changed").any() and not (
            base_run.n_cases == 0 or cand_run.n_cases == 0):  # a run that recorded nothing yet: unfinished, below
        raise OloproofError(f"compare: the base run {base_run.run_id} ({base_run.suite_name!r}) and the candidate "
                            f"run {cand_run.run_id} ({cand_run.suite_name!r}) share no case id, so there is nothing "
                            "to pair; compare two runs of one suite")
    base_epochs, cand_epochs = _epochs_of(base_run, "base"), _epochs_of(cand_run, "candidate")
    if base_epochs != cand_epochs:  # each case run pairs with the same epoch: the rest would go unseen
        raise OloproofError(f"compare: the base run {base_run.run_id} has {base_epochs} epoch(s) and the "
                            f"candidate run {cand_run.run_id} {cand_epochs}; each case run is paired with the same "
                            "epoch of the other run, so compare runs made with the same epochs")
    if "epoch" in keys:
        _same_epochs_per_case(base_run.cases, cand_run.cases)
    rows, one_sided, new_failures, lost_passes = _pair_rows(base_run, cand_run, paired, keys, common)
    clustered = is_clustered(paired["cluster"])  # a cluster holding more than one paired case run
    sums_b = criterion_sums(rows.assign(verdict=rows["base"]))
    sums_c = criterion_sums(rows.assign(verdict=rows["candidate"]))
    is_b, is_c = rows["base"] == "pass", rows["candidate"] == "pass"
    either_missing = (rows["base"] == "missing") | (rows["candidate"] == "missing")
    counts = pd.DataFrame({"criterion": rows["criterion"], "ptf": is_b & ~is_c, "ftp": ~is_b & is_c,
                           "missing": either_missing}).groupby("criterion", sort=False).sum()
    # the base run measured nothing on these rows: as "not passed" they make a candidate's failure there a tie and
    # its pass a gain, so a candidate that fails where the base's sandbox was down read NO_REGRESSION (review R40)
    base_missing = {str(k): int(v) for k, v in rows.loc[rows["base"] == "missing", "criterion"].value_counts().items()}
    unchecked = _unchecked_criteria(base_run, cand_run, common)
    changed = changed_checks(base_run, cand_run)
    changed.update(_metadata_changes(base_run, cand_run, paired, changed))
    vacuous = {side: vacuous_findings(r) for side, r in (("base", base_run), ("candidate", cand_run))}
    out: list[dict[str, Any]] = []
    for criterion in common:
        row: dict[str, Any] = {"criterion": criterion, "base_rate": math.nan, "candidate_rate": math.nan,
                               "difference": math.nan, "ci_low": math.nan, "ci_high": math.nan, "method": "",
                               "n": 0, "n_clusters": 0, "pass_to_fail": 0, "fail_to_pass": 0, "missing": 0,
                               "mcnemar_p": math.nan, "one_sided": one_sided.get(criterion, 0)}
        notes: list[str] = []
        undecided = ""
        reduction = parse_reduce(cfg.reduce_of(criterion))
        if reduction.kind != "mean":
            undecided = _reduced_row(row, rows[rows["criterion"] == criterion], reduction, cfg, notes)
        elif (criterion,) in sums_b:
            b, k = sums_b[(criterion,)], sums_c[(criterion,)]
            c = counts.loc[criterion]
            _paired_row(row, b.passes, k.passes, b.rows, (int(c["ptf"]), int(c["ftp"]), int(c["missing"])), cfg,
                        notes)
        if criterion in changed and not undecided:  # a loosened check must not read as a system that held up
            undecided = CHECK_CHANGED
            notes.append(f"its check differs in the two runs ({changed[criterion]}), so a flip may be the check's, "
                         "not the system's: run the base again on the candidate's suite")
        sides = [side for side, findings in vacuous.items() if criterion in findings]
        if sides:  # as the gate marks it: no row of such a check can fail, so no row of it can regress
            notes.append(f"{VACUOUS} in {'both runs' if len(sides) == 2 else f'the {sides[0]} run'}")
        if criterion in listed:
            row["margin"] = cfg.regression.margin
            # a reduced criterion has one row per case: clustered when a cluster holds several cases (as in the gate)
            grouped = clustered if reduction.kind == "mean" else bool(row["n_clusters"] < row["n"])
            verdict, why = _decide(row, cfg, grouped, criterion in unchecked, undecided)
            if why == "all_missing":  # as the gate's: the rows' commonest reason says what would decide it
                why = f"all_missing; {_missing_why(rows[rows['criterion'] == criterion])}"
            if why == APPROXIMATE_NOT_ALLOWED:  # as the gate's: which key decides it, and in which settings
                why = approximate_reason(release, cand_run.release is not None,
                                         "op.compare(base, candidate, release=...) to compare these runs",
                                         "the candidate run", PAIRED_CLUSTERED)
            if verdict == "NO_REGRESSION" and new_failures.get(criterion):  # a case that now reaches the check
                verdict = "INSUFFICIENT_EVIDENCE"                          # and fails it is in no paired row
                why = (f"{NEW_FAILURES}: {new_failures[criterion]} row(s) of the candidate do not pass where the "
                       "base run judged nothing (e.g. a fault replayed only because the candidate now calls the "
                       "tool); they are not in the paired difference")
            elif verdict == "NO_REGRESSION" and lost_passes.get(criterion):  # a pass that became no row at all
                verdict = "INSUFFICIENT_EVIDENCE"
                why = (f"{LOST_PASSES}: {lost_passes[criterion]} row(s) the base run passed have no row in the "
                       "candidate (e.g. an outcome it left waiting, a fault replay of a tool it no longer calls); "
                       "they are not in the paired difference")
            elif verdict == "NO_REGRESSION" and base_missing.get(criterion):  # a tie or gain over no evidence
                worst = _base_missing_passed(rows[rows["criterion"] == criterion], reduction, cfg)
                held = f"{base_missing[criterion]} paired row(s) are missing in the base run, which measured nothing " \
                       "there (e.g. a case run that ended in error or timeout, a replay that did not reproduce its " \
                       f"recording); counted as base passes, the most the base could have done, ci_low is {worst:.4g}"
                if regression_verdict(worst, math.inf, cfg.regression.margin)[0] == "NO_REGRESSION":
                    notes.append(f"{held}: NO_REGRESSION holds either way")
                else:
                    verdict = "INSUFFICIENT_EVIDENCE"
                    why = (f"{BASE_MISSING}: {held}, below −margin: the candidate's failures there may be the "
                           "regression; run the base again")
        else:
            row["margin"], verdict, why = math.nan, "REPORT_ONLY", ""
        row["verdict"] = verdict
        row["reason"] = "; ".join([why, *notes] if why else notes)
        out.append(row)
    for criterion in [] if cfg.regression.criteria else [c for c in base_run.criteria if c not in common]:
        out.append({"criterion": criterion, "base_rate": math.nan, "candidate_rate": math.nan,
                    "difference": math.nan, "ci_low": math.nan, "ci_high": math.nan, "method": "", "n": 0,
                    "n_clusters": 0, "pass_to_fail": 0, "fail_to_pass": 0, "missing": 0, "mcnemar_p": math.nan,
                    "one_sided": 0, "margin": cfg.regression.margin, "verdict": "INSUFFICIENT_EVIDENCE",
                    "reason": f"{NOT_IN_BOTH}; the base run judges it and the candidate run does not (a dropped "
                              "check shows no regression): list regression.criteria to leave it out on purpose"})
    table = COMPARE.from_columns({c: [r[c] for r in out] for c in COMPARE.names})
    decided = table.loc[table["verdict"] != "REPORT_ONLY", "verdict"]
    if (decided == "REGRESSION").any():
        overall = "REGRESSION"
    elif len(decided) and (decided == "NO_REGRESSION").all():
        overall = "NO_REGRESSION"
    else:
        overall = "INSUFFICIENT_EVIDENCE"
    unwhole = [f"the {side} run {r.run_id}: {why}" for side, r in (("base", base_run), ("candidate", cand_run))
               if (why := no_decision(r))]
    if unwhole and overall == "NO_REGRESSION":  # its unrecorded (or lost) cases may be the regressions
        overall = "INSUFFICIENT_EVIDENCE"
    short = [f"{FEWER_EPOCHS}: the {side} run {r.run_id}: {why.split(': ', 1)[1]}"
             for side, r in (("base", base_run), ("candidate", cand_run)) if (why := fewer_epochs(r))]
    if short:  # first tries alone: a candidate that fails only on a later try read NO_REGRESSION (review F41)
        unwhole += short
        if overall == "NO_REGRESSION":
            overall = "INSUFFICIENT_EVIDENCE"
    lost = unpaired.loc[unpaired["reason"] != "only_in_candidate", "reason"].value_counts()
    if len(lost):  # a candidate run on a subset (or with the failing cases edited) showed no regression
        unwhole.append(f"{CASES_NOT_IN_BOTH}: {int(lost.sum())} case run(s) of the base run are not paired ("
                       + ", ".join(f"{k}: {v}" for k, v in lost.items()) + "): the cases the candidate did not "
                       "run, or ran changed, may be the regressions; compare runs of the same cases")
        if overall == "NO_REGRESSION":
            overall = "INSUFFICIENT_EVIDENCE"
    joined = _joined_clusters(paired)
    if joined:  # a loss and a gain joined in one cluster cancel: the interval narrowed by relabeling
        unwhole.append(joined)
        if overall == "NO_REGRESSION":
            overall = "INSUFFICIENT_EVIDENCE"
    changes = _rule_changes(base_run.release, cand_run.release) if release is None else []
    if changes:  # the candidate's suite may have loosened the rule it is judged by: not the candidate's to decide
        unwhole.append(f"{RELEASE_CHANGED}: the candidate run's release.yaml, applied by default, differs from the "
                       f"base run's in {', '.join(changes)}; give the rule with --release (release= in Python)")
        if overall == "NO_REGRESSION":
            overall = "INSUFFICIENT_EVIDENCE"
    relaxed, than = relaxed_or_now(relaxed_rule(base_run, cand_run, cfg, clustered) if release is not None
                                   else [], BASE_OWN, found,
                                   lambda now: relaxed_rule(base_run, cand_run, cfg, clustered, own=now))
    given = (str(release) if isinstance(release, (str, os.PathLike)) else "the settings given" if release is not None
             else "the settings stored with the runs" if cand_run.release is not None
             else "the default settings (the runs were made without release.yaml)")
    notes_all = [relaxed_note(relaxed, given, verb="compared", than=than)] if relaxed else []
    notes_all += _config_notes(base_run, cand_run, changed)
    relabeled = label_difference(base_run.labels, cand_run.labels)
    if relabeled:
        notes_all.append(_labels_note(base_run, cand_run, relabeled, set(paired["case_id"])))
    else:  # as the gate of each run says under its table: rows no criterion counts
        notes_all += _unscored_notes(base_run, cand_run)
    notes_all += _repeats_notes(base_run, cand_run)
    notes_all += _vacuous_notes(vacuous, common)
    notes_all += [f"the {side} run {r.run_id} was {note}" for side, r in (("base", base_run), ("candidate", cand_run))
                  if (note := abrupt_ends_note(abrupt_ends(r)))]  # as its gate says: a second try the other never had
    if len(unpaired):
        tally = unpaired["reason"].value_counts()
        runs = f" ({len(unpaired)} case runs of {cand_run.epochs} epochs)" if cand_run.epochs > 1 else ""
        notes_all.append(f"{unpaired['case_id'].nunique()} cases left out{runs} ("
                         + ", ".join(f"{k}: {v}" for k, v in tally.items()) + "): see .unpaired")
    return Comparison(table=table, verdict=overall, release=cfg, unpaired=unpaired, verdicts=rows,
                      flips=_flips(rows), base=base_run, candidate=cand_run, clustered=clustered,
                      n_paired=len(paired), reason="; ".join(unwhole) or ("" if len(decided) else NO_CRITERIA),
                      notes=tuple(notes_all), relaxed=tuple(relaxed), weaker_than=than)


def relaxed_rule(base: Run, candidate: Run, cfg: ReleaseConfig, clustered: bool, *,
                 own: ReleaseConfig | None = None) -> list[str]:
    """The settings of ``cfg`` weaker than ``own`` (default: the base run's stored release settings, the defaults
    when the base had no release.yaml, as :func:`_rule_changes` reads it; the suite's release.yaml as it is now for
    :attr:`Comparison.relaxed`'s second look; :func:`~oloproof_nb._config.release.relaxed_settings`),
    among those that decide a comparison (:data:`_RULE_KEYS`; ``allow_approximate_methods`` only when
    ``clustered``). ``regression.criteria`` is read among the criteria the base run judges, and left unset stands
    for all of them (``cfg`` unset compares those both runs judge and holds back the others, ``not_in_both_runs``).

    ``oloproof compare A B --release loose.yaml`` with ``regression: {margin: 0.99}`` said ``NO_REGRESSION — exit 0:
    every listed criterion's interval lies above -margin``; only the header's ``margin 0.99`` told it from the
    runs' own 0.02, by which the same runs are INSUFFICIENT_EVIDENCE. A base run without release.yaml was measured
    against the candidate's instead: the candidate's own file, margin 0.9, given with ``--release`` read
    NO_REGRESSION with no word of it, where the default rule says ``release_changed`` (review R17). And ``own``'s
    criteria were read among those both runs judge: a check the candidate's suite dropped (the one its system now
    fails) fell out of the base run's own list, so the candidate's file, listing the rest, given with ``--release``
    read NO_REGRESSION, exit 0, as no weaker rule (review R28).
    """
    if own is None:
        own = base.release if base.release is not None else ReleaseConfig()

    def every(c: ReleaseConfig) -> ReleaseConfig:
        judged = base.criteria
        listed = [name for name in (c.regression.criteria or judged) if name in judged]
        return c.model_copy(update={"regression": c.regression.model_copy(update={"criteria": listed})})

    heads = [h for h in _RULE_KEYS if clustered or h != "allow_approximate_methods"]
    return relaxed_settings(every(own), every(cfg), heads)


def _unscored_notes(base: Run, candidate: Run) -> list[str]:
    """``both runs: 1 copy labeled invalid, scored by no criterion: …``, the gate's line for each run whose checked
    transforms left copies out of every criterion (once when both left out the same), for runs made with the same
    labels (:func:`_labels_note` speaks of runs made with others)."""
    def held(run: Run) -> tuple[tuple[str, ...], tuple[str, ...]] | tuple[()]:
        ids = unscored_copies(run)
        return (tuple(ids), tuple(broken_copies(run))) if ids else ()

    return _of_each_run({"base": held(base), "candidate": held(candidate)},
                        lambda left_out: unscored_note(left_out[0], broken=left_out[1]))


def _vacuous_notes(found: dict[str, dict[str, list[str]]], criteria: list[str]) -> list[str]:
    """``vacuous check (both runs): …``: the gate's finding for each compared criterion whose check cannot fail as
    configured in a run (``found``: :func:`~.gate.vacuous_findings` of each side), once when both runs have it.

    ``oloproof gate`` of either run marks such a criterion; a comparison of the two read ``NO_REGRESSION — exit 0``
    on it with no word (a ``state_unchanged`` path that no case's state holds passes every row of both runs).
    """
    notes = []
    for criterion in criteria:
        base, candidate = found["base"].get(criterion, []), found["candidate"].get(criterion, [])
        if base and base == candidate:
            notes += [f"vacuous check (both runs): {finding}" for finding in base]
            continue
        notes += [f"vacuous check (the {side} run): {finding}"
                  for side, held in (("base", base), ("candidate", candidate)) for finding in held]
    return notes


def _repeats_notes(base: Run, candidate: Run) -> list[str]:
    """The gate's note on cases that repeat another's content under another id (``DuplicateCaseWarning``), for
    each run whose case file had such cases (once when both had the same): each copy is a pair of its own, so
    the paired interval is narrower than the evidence supports."""
    return _of_each_run({side: repeats_note(run.manifest.suite_config.repeated)
                         for side, run in (("base", base), ("candidate", candidate))}, str)


def _of_each_run(held: dict[str, Any], say: Callable[[Any], str]) -> list[str]:
    """``both runs: <say>`` when the base and the candidate hold the same (non-empty) ``held``, else ``the <side>
    run: <say>`` for each side that holds any."""
    if held["base"] and held["base"] == held["candidate"]:
        return [f"both runs: {say(held['base'])}"]
    return [f"the {side} run: {say(value)}" for side, value in held.items() if value]


def _unchecked_criteria(base: Run, candidate: Run, criteria: list[str]) -> set[str]:
    """The metamorphic criteria whose transform is not checked in both runs (their rows kept every pair, the
    ones labeled invalid among them, as the gate's ``transform_not_checked`` says)."""
    relations = {ev.name: str(getattr(ev, "transform", "")) for ev in candidate.config.evaluators
                 if ev.type == "metamorphic_relation" and ev.name in criteria}
    if not relations:
        return set()
    checked = [checked_transforms(base), checked_transforms(candidate)]
    return {name for name, transform in relations.items() if not all(c.get(transform, False) for c in checked)}


def _reduced_row(row: dict[str, Any], rows: pd.DataFrame, reduction: Reduction, cfg: ReleaseConfig,
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
        _paired_row(row, sb.passes, sc.passes, sb.rows, (int((is_b & ~is_c).sum()), int((~is_b & is_c).sum()),
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
    _paired_row(row, np.bincount(codes, weights=vb).astype(np.int64), np.bincount(codes, weights=vc).astype(np.int64),
                sizes, (ptf, ftp, missing), cfg, notes)
    return ""


def _missing_why(rows: pd.DataFrame) -> str:
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


def _base_missing_passed(rows: pd.DataFrame, reduction: Reduction, cfg: ReleaseConfig) -> float:
    """ci_low of one criterion's paired difference with the base run's ``missing`` rows counted as passes.

    Where the base measured nothing, its pass there is the worst case for the candidate: every such row becomes a
    tie or a loss, never a gain (a bound in the spirit of Manski's worst-case bounds for missing outcomes). A
    NO_REGRESSION that holds under it holds whatever the base would have done there.
    """
    worst = rows.assign(base=rows["base"].mask(rows["base"] == "missing", "pass"))
    row: dict[str, Any] = {}
    if reduction.kind != "mean":
        _reduced_row(row, worst, reduction, cfg, [])  # the same cases and epochs as the row it bounds: decidable
    else:
        (b,) = criterion_sums(worst.assign(verdict=worst["base"])).values()
        (k,) = criterion_sums(worst.assign(verdict=worst["candidate"])).values()
        _paired_row(row, b.passes, k.passes, b.rows, (0, 0, 0), cfg, [])
    return float(row["ci_low"])


def _paired_row(row: dict[str, Any], b: np.ndarray, k: np.ndarray, m: np.ndarray, counts: tuple[int, int, int],
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


def _decide(row: dict[str, Any], cfg: ReleaseConfig, clustered: bool, unchecked: bool = False,
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
        why = f"too_few_clusters: its rows fall in {row['n_clusters']} clusters, min_clusters is {cfg.min_clusters}"
        if row["ci_high"] < -cfg.regression.margin:  # a wrapped benchmark's 6 customers (review U18) said no more
            why += ("; its interval lies below −margin, but from so few clusters an interval is not trusted: a "
                    "loss this suite has too few clusters to confirm (cluster more finely, or add clusters)")
        return "INSUFFICIENT_EVIDENCE", why
    if unchecked:
        return "INSUFFICIENT_EVIDENCE", "transform_not_checked"
    return regression_verdict(row["ci_low"], row["ci_high"], cfg.regression.margin)
