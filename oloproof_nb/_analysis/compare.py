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
   the code of its python check or validators edited, see :func:`~.run_checks.changed_checks`, or the ``metadata`` of a
   paired case edited where a python check is given it, see :func:`~.compare_notes.metadata_changes`; a loosened
   check would read as a system that held up) → ``INSUFFICIENT_EVIDENCE``;
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
   cannot see them; (``unpaired_ties``) when rows the base run did not pass have no row in the candidate and,
   counted as ties (the candidate not passing there either), the interval no longer clears −margin: left out, a
   tie raises the difference where gains outnumber losses, so a candidate that stopped calling a tool in a case
   whose fault replay the base failed read NO_REGRESSION where the one that still called it and failed did not;
   and (``base_missing``) when paired rows are ``missing`` in the base run and the interval
   with them counted as base passes no longer clears −margin: the base measured nothing there (its sandbox down,
   a replay that did not reproduce), so counting it as not passed makes the candidate's failure there a tie and
   its pass a gain (a base whose sandbox was down on 30 of 60 cases and a candidate failing those 30 read
   NO_REGRESSION at margin 0.1), while as passes, the most the base could have done, every such row
   is a tie or a loss; a NO_REGRESSION that holds then holds whatever the base would have done (a note says so).
   Where the rows of ``unpaired_ties`` are there too, it must also hold with both counted so, the worst case of
   the two together (4 rows lost, 14 gained, one tie and one base row missing read ci_low −0.0474 with the
   missing row as a base pass and +0.018 with the tie, NO_REGRESSION at margin 0.05; with both, −0.0525).
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
``weaker_than``); the verdict stays the rule's.

Runs made with different validity labels (:func:`~.run_checks.label_difference`, the test ``op.load_runs`` pools by) are
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
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .._config.files import yaml_number
from .._config.release import ReleaseConfig, check_reductions, load_release, parse_release, revalidated
from .._core.epochs import parse_reduce
from .._core.stats import is_clustered
from .._run.baseline import NOOP_VERSION
from ..errors import ConfigError, OloproofError, format_loc, warn_at_caller
from .columns import TEXT, Column, FrameSpec
from .compare_notes import comparison_notes, metadata_changes, relaxed_rule, rule_changes, unchecked_criteria
from .compare_pairing import epochs_of, flips, joined_clusters, pair_cases, pair_rows, same_epochs_per_case
from .compare_rows import (
    base_missing_passed,
    decide,
    missing_why,
    paired_row,
    reduced_row,
    regression_verdict,
    rows_ci_low,
)
from .gate import FEWER_EPOCHS, criterion_sums, fewer_epochs, no_decision, vacuous_findings
from .gate_drift import drift_sentences, release_now, release_unreadable, warn_release_drift
from .gate_findings import VACUOUS
from .gate_settings import (
    APPROXIMATE_NOT_ALLOWED,
    PAIRED_CLUSTERED,
    ReleaseLike,
    approximate_reason,
    relaxed_or_now,
)
from .inspect_log import task_criteria
from .inspect_settings import split_hint
from .run import Run, as_run
from .run_checks import changed_checks

__all__ = ["Comparison", "compare", "compare_release", "COMPARE", "RunLike", "NO_CRITERIA"]

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
#: The overall reason when the candidate's own release.yaml (the default rule) decides differently from the base's.
RELEASE_CHANGED = "release_changed"
#: What the settings given to a comparison are compared with (:attr:`Comparison.relaxed`).
BASE_OWN = "the base run's own release settings"
#: :attr:`Comparison.weaker_than` when the base run stored no release settings (made without release.yaml, or an
#: Inspect AI log): the defaults stand for its own rule, and are named as such.
BASE_DEFAULTS = "the default release settings (the base run has none of its own)"
#: The reason of a criterion whose candidate failed rows the base run never judged (not in the paired difference).
NEW_FAILURES = "unpaired_failures"
LOST_PASSES = "unpaired_passes"
#: The reason of a criterion whose NO_REGRESSION does not hold once the base run's rows that did not pass and have no
#: candidate row are counted as ties (left out, a tie raises the difference where gains outnumber losses).
DROPPED_TIES = "unpaired_ties"
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
        What :attr:`relaxed` is weaker than: ``the base run's own release settings`` (:data:`BASE_OWN`; the
        defaults, :data:`BASE_DEFAULTS`, when the base run stored none: an Inspect AI log has none), or
        ``<suite>/release.yaml as it is now``; empty when :attr:`relaxed` is.
    drift : tuple of str
        The files of the candidate's suite folder (oloproof.yaml, the case file, validity labels) that now ask for
        other judgements than the candidate run was made with, one sentence each (also in :attr:`notes`, and warned);
        empty when none does. Both runs' verdicts still decide: run both versions again to compare by the suite as
        it is now.
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
    drift: tuple[str, ...] = field(default_factory=tuple)

    @property
    def margin(self) -> float:
        """The regression margin."""
        return self.release.regression.margin

    @property
    def regressions(self) -> pd.DataFrame:
        """The criteria that regressed."""
        return self.table[self.table["verdict"] == "REGRESSION"].reset_index(drop=True)


def _overall(table: pd.DataFrame, base_run: Run, cand_run: Run, unpaired: pd.DataFrame, paired: pd.DataFrame,
             release: ReleaseLike | None) -> tuple[str, str]:
    """The overall verdict of a comparison and its reason, from the criteria's rows and what holds them all back.

    Parameters
    ----------
    table : pandas.DataFrame
        The per-criterion rows (:data:`COMPARE`).
    base_run, cand_run : Run
        The two runs.
    unpaired : pandas.DataFrame
        The unpaired case runs (:data:`~.compare_pairing.UNPAIRED`).
    paired : pandas.DataFrame
        The paired case runs with their merged and base clusters (:func:`~.compare_pairing.pair_cases`).
    release : ReleaseConfig, dict, path or None
        The settings given to :func:`compare` (None: the candidate run's own, which are then weighed against the
        base run's).

    Returns
    -------
    tuple of str
        ``(verdict, reason)``: ``REGRESSION`` when a listed criterion regressed, ``NO_REGRESSION`` when every one
        did not, else ``INSUFFICIENT_EVIDENCE``; a ``NO_REGRESSION`` becomes ``INSUFFICIENT_EVIDENCE`` when a run
        cannot decide (:func:`~.gate.no_decision`), tried each case fewer times than its suite asks
        (``fewer_epochs``), a case run of the base run is not paired (:data:`CASES_NOT_IN_BOTH`), the candidate
        joins clusters of the base run (:data:`~.compare_pairing.CLUSTERS_JOINED`) or, with ``release`` None, the
        runs' release settings differ in one that decides a comparison (:data:`RELEASE_CHANGED`). The reason
        joins each of those with ``; ``, or is :data:`NO_CRITERIA` when no criterion was decided, else empty.

    Examples
    --------
    >>> import oloproof_nb as op
    >>> cmp = op.compare("runs/v1", "runs/v2")                        # doctest: +SKIP
    >>> cmp.verdict, cmp.reason                                       # doctest: +SKIP
    """
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
    if short:  # first tries alone: a candidate that fails only on a later try read NO_REGRESSION
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
    joined = joined_clusters(paired)
    if joined:  # a loss and a gain joined in one cluster cancel: the interval narrowed by relabeling
        unwhole.append(joined)
        if overall == "NO_REGRESSION":
            overall = "INSUFFICIENT_EVIDENCE"
    changes = rule_changes(base_run.release, cand_run.release) if release is None else []
    if changes:  # the candidate's suite may have loosened the rule it is judged by: not the candidate's to decide
        unwhole.append(f"{RELEASE_CHANGED}: the candidate run's release.yaml, applied by default, differs from the "
                       f"base run's in {', '.join(changes)}; give the rule with --release (release= in Python)")
        if overall == "NO_REGRESSION":
            overall = "INSUFFICIENT_EVIDENCE"
    return overall, "; ".join(unwhole) or ("" if len(decided) else NO_CRITERIA)


def _suite_changes(candidate: Run) -> list[str]:
    """What of the candidate's suite folder now asks for other judgements than the candidate run was made with: its
    oloproof.yaml, case file or validity labels (:func:`~.gate_drift.drift_sentences`, as ``op.gate`` of the run names
    them), one sentence each; empty when they are as the run used them.

    Two runs made while the suite was loosened (``epochs: 1`` where it asks 3, a check made lenient, its hard cases
    taken out) and compared after it was put back agree with each other, so no ``check_changed``, ``fewer_epochs``
    or ``cases_not_in_both_runs`` holds them back: a desk that acts only on a request's first try read
    NO_REGRESSION, exit 0, against one that always acts, where the suite's 3 epochs make it a regression, and
    ``oloproof gate`` of either run warned of the change while ``oloproof compare`` said nothing. The base
    run is not weighed on its own: when its suite differs from the candidate's, the checks, epochs and cases the
    comparison pairs say so already, and a suite edited between the two runs is the usual case.

    Parameters
    ----------
    candidate : Run
        The candidate run (its suite folder is :func:`~.gate_drift.suite_folder`'s).

    Returns
    -------
    list of str
        One sentence per file that differs, naming the file and the change.
    """
    return drift_sentences(candidate, f"the candidate run {candidate.run_id}",
                           "both runs were judged on the cases and by the checks they recorded, so this comparison "
                           "says nothing of the suite as it is now: to compare by it, run both versions again",
                           "the runs' labels decide which copies are scored: to compare by the labels as they are "
                           "now, run both versions again")


def _same_run(base: Run, candidate: Run) -> bool:
    """Whether the two are one run given twice: the same id, manifest, checks and verdicts. A run's manifest
    keeps where an Inspect AI log was read from, which is not the run: one eval read from two copies of its log
    (a folder downloaded twice, the ``.eval`` and its ``.json``) was compared with itself. Its
    findings name that place too: a vacuous check names the path given to ``from_inspect`` and samples that never
    ran the log's file name, so they are set aside with it (each is worked out from the reading, in ``config``, and
    the scores, in the verdicts, both compared): read with ``pass_threshold=0``, the eval was compared with itself
    again, NO_REGRESSION. A pool of one run (``op.load_runs([dir])``) is that run: its frames only add the
    ``run_id`` column (compared with the run itself, it read NO_REGRESSION)."""
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


def _refuse_idle(base: Run, candidate: Run) -> None:
    """Refuse a do-nothing baseline (system ``oloproof-noop``, :func:`oloproof_nb.baseline`) given as either run, or
    pooled into it: it is no version of the agent, so a candidate that is one read REGRESSION in Python (and a base
    that is one let any agent clear it) where ``oloproof compare`` refused it, exit 2. As ``op.load_runs`` refuses
    to pool it with the agent's runs; it reads only the manifests.

    Raises
    ------
    OloproofError
        Naming the baseline's folder, and where to give it instead.
    """
    for side, run in (("base", base), ("candidate", candidate)):
        idle = [r for r in run.runs if r.manifest.system_version == NOOP_VERSION]
        if idle:
            raise OloproofError(f"{idle[0].directory}: the {side} run {idle[0].run_id} is the do-nothing baseline "
                                f"(system {NOOP_VERSION}), not a version of the agent, so a comparison with it "
                                "decides nothing; compare two runs of the agent, and give the baseline to the gate "
                                "(op.gate(run, baseline=...), oloproof gate --baseline)")


def compare_release(base: Run, candidate: Run, release: ReleaseLike | None) -> ReleaseConfig:
    """The release settings :func:`compare` applies to the two runs (it raises what compare would raise for
    ``release``, and for a do-nothing baseline: :func:`_refuse_idle`); it reads only their configuration."""
    _refuse_idle(base, candidate)
    return _release(candidate, release, _common_criteria(base, candidate), _split_names(base, candidate),
                    _judged(base, candidate))


def _split_names(base: Run, candidate: Run) -> set[str]:
    """The criterion names the samples of several tasks share in either run's Inspect AI logs (``match``, read as
    ``bulk/match`` and ``small/match``: :func:`~.inspect_log.task_criteria`)."""
    return set(task_criteria(base)) | set(task_criteria(candidate))


def _judged(base: Run, candidate: Run) -> list[str]:
    """The criteria either run judges, the base run's first."""
    return [*base.criteria, *(c for c in candidate.criteria if c not in set(base.criteria))]


def _release(candidate: Run, release: ReleaseLike | None, common: list[str], split: Collection[str],
             judged: Collection[str] = ()) -> ReleaseConfig:
    """``release`` validated (default: the candidate's release.yaml, else the defaults); regression criteria checked
    (a name in ``split`` is one several tasks share: the message says each task has its own, as the gate's does), and
    each ``pass^k`` / ``pass@k`` needs k ≤ the candidate run's own epochs (:func:`check_reductions`, as the gate's);
    ``release`` given may name in ``criteria`` only those ``judged`` (by either run), as the gate's."""
    file = "release"
    if release is None:
        cfg = candidate.release if candidate.release is not None else ReleaseConfig()
        file = "release.yaml of the candidate run"
    elif isinstance(release, ReleaseConfig):  # validated again: model_copy(update=) skips the validators
        cfg = revalidated(release, file)
    elif isinstance(release, dict):
        cfg = parse_release(release, "release")
    elif isinstance(release, (str, os.PathLike)):
        cfg, file = load_release(release), str(release)
    else:  # as op.gate refuses it (release=5 was a TypeError from deep in the file reading)
        raise OloproofError(f"compare: release must be a ReleaseConfig, a dict or the path of a release.yaml, got "
                            f"{type(release).__name__}")
    for name in cfg.regression.criteria or []:
        if name not in common:
            hint = f" ({split_hint(name)})" if name in split else ""  # the refusal once said not why
            raise ConfigError(file, "regression.criteria", f"{name!r} is not judged by both runs{hint}; criteria of "
                                                           f"both: {', '.join(common) or '(none)'}")
    # a criterion given (release=, --release) that neither run judges is a typo, as the gate refuses it: its
    # ``reduce`` fell back to the mean, and a candidate whose pass^3 fell while its mean held read NO_REGRESSION, exit 0
    unknown = [name for name in (cfg.criteria if release is not None else {}) if name not in judged]
    if unknown:
        hint = f" ({split_hint(unknown[0])})" if unknown[0] in split else ""
        raise ConfigError(file, format_loc(("criteria", unknown[0])),
                          f"no such criterion in either run{hint}; their criteria: {', '.join(judged) or '(none)'}")
    # a pass^k / pass@k whose k exceeds the epochs each case ran pairs no case: a mistake in the file, as the gate
    # and the runner say (exit 2), not a comparison that cannot decide (it read INSUFFICIENT_EVIDENCE, exit 1,
    # too_few_epochs). The epochs are a run's own (each case run pairs with the same epoch), not a pool's sum.
    check_reductions(cfg, max(r.manifest.epochs for r in candidate.runs), file, candidate.run_id)
    return cfg


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
        When the candidate's suite folder's oloproof.yaml, case file or validity labels now differ from those the
        candidate run was made with, as ``op.gate`` of that run warns: the file and the change (also in
        ``.notes``); the runs' verdicts still decide.

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
    _refuse_idle(base_run, cand_run)
    if _same_run(base_run, cand_run):
        # one run given twice, or a copied folder of it (a CI artifact downloaded twice): no second version. A
        # run re-judged (an Inspect AI log scored with other options) or cut short keeps its id: compared
        raise OloproofError(f"compare: the base and the candidate are the same run {base_run.run_id} "
                            f"({base_run.directory} and {cand_run.directory}); compare two runs")
    common = _common_criteria(base_run, cand_run)
    cfg = _release(cand_run, release, common, _split_names(base_run, cand_run), _judged(base_run, cand_run))
    found = release_now(cand_run)  # read once: the drift warning and Comparison.relaxed
    if release is None:  # the candidate's stored rule decides (the runs are the evidence); the user may think the file
        warn_release_drift(cand_run, found, "this comparison uses the candidate run's; to compare with the file as "
                                            "it is now, give it: op.compare(base, candidate, release=...) or "
                                            "oloproof compare --release", changes=rule_changes)
        unread = "" if found is not None else release_unreadable(cand_run)
        if unread:
            warn_at_caller(f"{unread} (the suite folder's release.yaml, which cannot be read now); this comparison "
                           f"uses the release settings the candidate run {cand_run.run_id} was made with")
    drifted = _suite_changes(cand_run)
    for message in drifted:  # both runs judged by a suite loosened and put back since agree: say it, as the gate does
        warn_at_caller(message)
    listed = set(cfg.regression.criteria or common)
    paired, unpaired, keys = pair_cases(base_run, cand_run)
    if paired.empty and not (unpaired["reason"] == "digest_changed").any() and not (
            base_run.n_cases == 0 or cand_run.n_cases == 0):  # a run that recorded nothing yet: unfinished, below
        raise OloproofError(f"compare: the base run {base_run.run_id} ({base_run.suite_name!r}) and the candidate "
                            f"run {cand_run.run_id} ({cand_run.suite_name!r}) share no case id, so there is nothing "
                            "to pair; compare two runs of one suite")
    base_epochs, cand_epochs = epochs_of(base_run, "base"), epochs_of(cand_run, "candidate")
    if base_epochs != cand_epochs:  # each case run pairs with the same epoch: the rest would go unseen
        raise OloproofError(f"compare: the base run {base_run.run_id} has {base_epochs} epoch(s) and the "
                            f"candidate run {cand_run.run_id} {cand_epochs}; each case run is paired with the same "
                            "epoch of the other run, so compare runs made with the same epochs")
    if "epoch" in keys and base_run.finished and cand_run.finished:  # a run still being written lacks later epochs:
        same_epochs_per_case(base_run.cases, cand_run.cases)           # unpaired, and it never says NO_REGRESSION
    rows, one_sided, new_failures, lost_passes, ties = pair_rows(base_run, cand_run, paired, keys, common)
    clustered = is_clustered(paired["cluster"])  # a cluster holding more than one paired case run
    sums_b = criterion_sums(rows.assign(verdict=rows["base"]))
    sums_c = criterion_sums(rows.assign(verdict=rows["candidate"]))
    is_b, is_c = rows["base"] == "pass", rows["candidate"] == "pass"
    either_missing = (rows["base"] == "missing") | (rows["candidate"] == "missing")
    counts = pd.DataFrame({"criterion": rows["criterion"], "ptf": is_b & ~is_c, "ftp": ~is_b & is_c,
                           "missing": either_missing}).groupby("criterion", sort=False).sum()
    # the base run measured nothing on these rows: as "not passed" they make a candidate's failure there a tie and
    # its pass a gain, so a candidate that fails where the base's sandbox was down read NO_REGRESSION
    base_missing = {str(k): int(v) for k, v in rows.loc[rows["base"] == "missing", "criterion"].value_counts().items()}
    unchecked = unchecked_criteria(base_run, cand_run, common)
    changed = changed_checks(base_run, cand_run)
    changed.update(metadata_changes(base_run, cand_run, paired, changed))
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
            undecided = reduced_row(row, rows[rows["criterion"] == criterion], reduction, cfg, notes)
        elif (criterion,) in sums_b:
            b, k = sums_b[(criterion,)], sums_c[(criterion,)]
            c = counts.loc[criterion]
            paired_row(row, b.passes, k.passes, b.rows, (int(c["ptf"]), int(c["ftp"]), int(c["missing"])), cfg,
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
            verdict, why = decide(row, cfg, grouped, criterion in unchecked, undecided)
            if why == "all_missing":  # as the gate's: the rows' commonest reason says what would decide it
                why = f"all_missing; {missing_why(rows[rows['criterion'] == criterion])}"
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
            elif verdict == "NO_REGRESSION" and (tied := ties[ties["criterion"] == criterion]).size and (
                    low := rows_ci_low(pd.concat([rows[rows["criterion"] == criterion], tied], ignore_index=True),
                                       reduction, cfg)) < -cfg.regression.margin:
                # left out, a tie raises the difference where gains outnumber losses: a candidate that no longer
                # reached a check the base failed read better than one that still reached it and failed
                verdict, shown = "INSUFFICIENT_EVIDENCE", f"{low:.4g}"
                if float(shown) >= -cfg.regression.margin:  # four digits would put it on the other side
                    shown = yaml_number(low)
                why = (f"{DROPPED_TIES}: {len(tied)} row(s) the base run did not pass have no row in the candidate "
                       "(e.g. a fault replay of a tool it no longer calls); counted as ties, as if the candidate "
                       f"failed there too, ci_low is {shown}, below −margin")
            elif verdict == "NO_REGRESSION" and base_missing.get(criterion):  # a tie or gain over no evidence
                own, tied = rows[rows["criterion"] == criterion], ties[ties["criterion"] == criterion]
                worst = base_missing_passed(own, reduction, cfg)
                if len(tied):  # each alone clears −margin, both together may not: the worst case is both
                    worst = min(worst, base_missing_passed(pd.concat([own, tied], ignore_index=True), reduction,
                                                           cfg))
                holds = regression_verdict(worst, math.inf, cfg.regression.margin)[0] == "NO_REGRESSION"
                # four digits, or every digit where four would put it on the other side of −margin than the verdict
                # read it (-0.1481546 at margin 0.148157 read "ci_low is -0.1482: NO_REGRESSION holds either way")
                shown = f"{worst:.4g}"
                if (float(shown) >= -cfg.regression.margin) != holds:
                    shown = yaml_number(worst)
                held = f"{base_missing[criterion]} paired row(s) are missing in the base run, which measured nothing " \
                       "there (e.g. a case run that ended in error or timeout, a replay that did not reproduce its " \
                       f"recording); counted as base passes, the most the base could have done" \
                       + (f", and the {len(tied)} row(s) the base run did not pass that have no row in the candidate "
                          "as ties" if len(tied) else "") + f", ci_low is {shown}"
                if holds:
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
    table.attrs["confidence"] = cfg.confidence  # the intervals' level, for a plot of the table alone
    overall, reason = _overall(table, base_run, cand_run, unpaired, paired, release)
    relaxed, than = relaxed_or_now(relaxed_rule(base_run, cand_run, cfg, clustered) if release is not None
                                   else [], BASE_OWN if base_run.release is not None else BASE_DEFAULTS, found,
                                   lambda now: relaxed_rule(base_run, cand_run, cfg, clustered, own=now))
    notes_all = comparison_notes(base_run, cand_run, release, relaxed, than, changed, paired, vacuous, common,
                                 unpaired) + drifted
    return Comparison(table=table, verdict=overall, release=cfg, unpaired=unpaired, verdicts=rows,
                      flips=flips(rows), base=base_run, candidate=cand_run, clustered=clustered,
                      n_paired=len(paired), reason=reason,
                      notes=tuple(notes_all), relaxed=tuple(relaxed), weaker_than=than, drift=tuple(drifted))


