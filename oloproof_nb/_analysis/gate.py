"""The release gate: per criterion, a pass rate with an interval against its threshold.

Rule, per criterion named in release.yaml (DESIGN.md, "Gate rule"), the first that applies:

1. a clustered run without ``allow_approximate_methods: true`` →
   ``INSUFFICIENT_EVIDENCE`` (``approximate_methods_not_allowed``);
2. a criterion with no rows → ``INSUFFICIENT_EVIDENCE`` (``no_evidence``);
3. a criterion whose rows are all ``missing`` → ``INSUFFICIENT_EVIDENCE`` (``all_missing``);
   a criterion reduced with ``pass^k`` or ``pass@k`` with a case of fewer than k rows (a pooled run
   whose runs hold different cases, a run stopped early) → ``INSUFFICIENT_EVIDENCE``
   (``too_few_epochs``): the interval leaves that case out, and it may be the one that fails;
4. in a clustered run, a criterion whose own rows fall in fewer than ``min_clusters`` clusters →
   ``INSUFFICIENT_EVIDENCE`` (``too_few_clusters``);
5. a metamorphic rule whose transform is not checked →
   ``INSUFFICIENT_EVIDENCE`` (``transform_not_checked``);
6. ``PASS`` when ci_low ≥ threshold, ``FAIL`` when ci_high < threshold,
   otherwise ``INSUFFICIENT_EVIDENCE`` (``interval_includes_threshold``); an ``outcome_contract``
   criterion's ``PASS`` becomes ``INSUFFICIENT_EVIDENCE`` (``outcome_waiting``) while any case of the run
   declared a wait: a waiting case has no verdict row (never a failure, never a success), so the rate is
   over the outcomes the agent chose to deliver, and an agent answering ``waiting`` wherever it could not
   deliver passed. An ``outcome_contract`` ``PASS`` whose expected outcomes' contracts check no content
   (``check_coverage`` 0: no validator, no ``expected_sha256``) stays ``PASS`` and says so in its reason
   (``outcome_content_unchecked``): any fresh file, an empty one included, was verified. A ``cluster_bootstrap``
   bound exactly equal to the threshold is not a PASS (its bounds are resampled ratios, which tie with
   round thresholds), and below ``BOOTSTRAP_MIN_CLUSTERS`` clusters — so far every G, since the
   simulation found its lower-tail miss above 3% in some cell at every G from 30 to 200 (at G = 20 at most
   2.2%), so no minimum G is validated — the bootstrap is replaced by ``cluster_t`` (the reason says so).

The gate's verdict is ``PASS`` only when every listed criterion passes and the run
is whole, else ``BLOCK`` — also when release.yaml lists no criterion (``Gate.reason``
is ``no_criteria: nothing was gated``) and when the run did not finish or lost case
records (``unfinished: …``, ``incomplete: …``, :func:`no_decision`; the table still
shows what the recorded cases give), or tried each case fewer times than oloproof.yaml's
``epochs`` (``fewer_epochs: …``, :func:`fewer_epochs`). Criteria not listed appear with threshold NaN
and verdict ``REPORT_ONLY``.

Statistics need only per-cluster (passes, rows) per criterion: they come from one
vectorised group-by over the verdicts frame (:func:`criterion_sums`).
"""

from __future__ import annotations

import difflib
import math
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._config.cases import iter_cases, repeats_note
from .._config.files import read_yaml, yaml_number
from .._config.imports import file_digest
from .._config.labels import load_labels
from .._config.release import (
    ReleaseConfig,
    check_reductions,
    flat_settings,
    load_release,
    parse_release,
    relaxed_settings,
    setting_change,
)
from .._config.suite import RELEASE_FILE, SUITE_FILE, SuiteConfig, parse_suite_config
from .._core.binomial import clopper_pearson, n_min
from .._core.compare import answers_equal
from .._core.epochs import fractional_interval, parse_reduce
from .._core.records import AbruptEnd
from .._core.stats import (
    BOOTSTRAP_MIN_CLUSTERS,
    CLUSTERED_METHODS,
    Interval,
    is_clustered,
    is_clustered_from_sums,
    rate_interval_from_sums,
)
from .._run.baseline import NOOP_VERSION
from .._run.systems import GIVE_FINGERPRINT, NO_SETTINGS_FINGERPRINT
from ..errors import ConfigError, LabelFileError, OloproofError, VacuousCheckWarning, format_loc, quote, warn_at_caller
from ..evaluators.answer import AnswerMatches
from ..evaluators.fault import FaultRecovery, replay_judges
from .baseline import Baseline, as_baseline, check_baseline, with_idle_columns
from .columns import GATE
from .frames import ended_case_runs
from .inspect_log import is_inspect_run, task_criteria, unrun_samples
from .inspect_settings import split_hint
from .receipts import outcome_summary
from .reduce import REPEATED_NOTE, ReducedSums, epoch_counts, reduced_sums, repeated_rows
from .run import Run, as_run, label_difference
from .validity import broken_copies, checked_transforms, unscored_copies

__all__ = ["Gate", "gate", "GATE_COLUMNS", "ClusterSums", "criterion_sums", "sums_interval", "resolve_release",
           "ReleaseLike", "NO_CRITERIA", "run_is_clustered", "reduced_is_clustered", "reduced_interval", "no_decision",
           "release_drift", "label_drift", "suite_drift", "suite_folder", "relaxed_gate_settings", "relaxed_note",
           "weaker_count", "RUN_OWN", "abrupt_ends", "abrupt_ends_note", "case_runs", "release_now",
           "warn_release_drift", "relaxed_or_now", "late_findings", "vacuous_findings", "VACUOUS", "fewer_epochs",
           "FEWER_EPOCHS", "release_unreadable", "APPROXIMATE_NOT_ALLOWED", "PAIRED_CLUSTERED", "approximate_note",
           "approximate_where", "approximate_reason", "bare_approximate", "commonest_reason"]

GATE_COLUMNS = GATE.names
#: What the reason of a criterion whose check cannot fail as configured starts with, where a table has no ``vacuous``
#: column to mark it (the command line's reason lines, a comparison's rows): its PASS says nothing about the agent.
VACUOUS = "vacuous: it cannot fail as configured"
#: What ``release=`` accepts: a model, a mapping like release.yaml, or a path to one.
ReleaseLike = ReleaseConfig | dict[str, Any] | str | Path
#: ``Gate.reason`` when release.yaml lists no criterion.
NO_CRITERIA = "no_criteria: nothing was gated"
OUTCOME_WAITING = "outcome_waiting"
#: What ``Gate.reason`` starts with when the run tried each case fewer times than its oloproof.yaml's ``epochs``.
FEWER_EPOCHS = "fewer_epochs"
#: What the reason of a gated criterion of a clustered run starts with when its release settings do not allow
#: approximate methods (DESIGN.md, "Gate rule"); :func:`approximate_reason` says after it which key decides it.
APPROXIMATE_NOT_ALLOWED = "approximate_methods_not_allowed"
#: What :func:`approximate_note` says is clustered in a comparison (a cluster holds more than one paired case run).
PAIRED_CLUSTERED = "the paired runs are clustered"
#: Reason note of an ``outcome_contract`` PASS on contracts none of which checks the artifact's content.
OUTCOME_CONTENT_UNCHECKED = "outcome_content_unchecked"


def no_decision(run: Run) -> str:
    """Why ``run`` can have no release decision, or ``""`` when it can: it did not finish, or it lost case runs.

    A partial run's failing cases may be the ones not yet run, and a finished run folder whose
    ``cases.jsonl`` lost records (a truncated copy, an edited artifact) would be judged on the records
    left. A pooled run needs every one of its runs whole, and made by one system (``mixed_systems``: its runs'
    ``version``, code fingerprint or settings fingerprint differ, or none records a code fingerprint): pooled with
    runs of the version before it, a regressed agent's rows were outnumbered and the pool passed; and all of them
    runs of the same cases (``mixed_cases``: another set of case ids and digests), since otherwise the cases of
    the older case file outweigh the others. (An Inspect AI log is checked against its own sample count when it
    is read.)
    """
    idle = [r.run_id for r in run.runs if r.manifest.system_version == NOOP_VERSION]
    if idle:  # its passes are the checks' own: pooled with the agent's runs it raised their rate
        return (f"noop_baseline: run {idle[0]} is the do-nothing baseline (system {NOOP_VERSION}): it measures "
                "what the checks pass without an agent, so it has no release decision")
    mixed = _other_system(run)
    if mixed:  # one rate of two agents: a regressed run pooled with runs of the one before it passed
        return (f"mixed_systems: {mixed}, so the pooled rate is of no one system and has no release decision; gate "
                "each run, or op.compare(base, candidate)")
    if not run.finished and is_inspect_run(run):
        return ("unfinished: the Inspect AI eval did not finish (its log status is not 'success'), "
                "so it has no release decision")
    unrun = unrun_samples(run)
    if unrun:  # the samples never run may be the failing ones
        return (f"unfinished: {unrun}; samples that never ran are no evidence either way (they may be the "
                "failing ones), so it has no release decision")
    expected = sum(r.manifest.n_cases * r.manifest.epochs for r in run.runs)
    if not run.finished:
        unit = "case runs" if any(r.manifest.epochs > 1 for r in run.runs) else "cases"
        return (f"unfinished: the run did not finish ({run.n_cases} of {expected} {unit} recorded), "
                "so it has no release decision")
    if not is_inspect_run(run) and run.n_cases != expected:
        which = "records are missing" if run.n_cases < expected else "it holds more records than the manifest says"
        return (f"incomplete: the run finished with {expected} case runs, but its cases.jsonl holds "
                f"{run.n_cases}: {which} (a truncated or edited copy of the folder?), "
                "so it has no release decision")
    mixed = _other_cases(run)
    if mixed:  # a case counts once per run holding it: the cases of the older case file outweighed the new ones
        return (f"mixed_cases: {mixed}, so the pooled rate weighs a case by the runs that hold it and is the rate of "
                "no one case file; it has no release decision: gate each run, or pool runs of one case file")
    return ""


def fewer_epochs(run: Run) -> str:
    """Why ``run`` has no release decision for having tried each case fewer times than its suite asks, or ``""``.

    ``epochs: k`` in oloproof.yaml defines the suite's criteria over k tries of every case in a run; ``op.run(suite,
    epochs=)`` and ``oloproof run --epochs`` override it, and a run of fewer tries measures less than the suite does:
    a desk that acts on a request the first time and answers "already done" on every later try passed
    ``state_matches`` 40 of 40 with ``--epochs 1`` (gate PASS, exit 0, not a word) where the suite's own 3 epochs give
    40 of 120 (FAIL; review F40). Its tables stay, as an unfinished run's do. Each run of a pool
    (:func:`op.load_runs <oloproof_nb.load_runs>`) must hold its suite's epochs: three 1-epoch runs are three first
    tries, each by a fresh system, and the same desk passed them 120 of 120. An Inspect AI log has no oloproof.yaml:
    its epochs are the log's.
    """
    if is_inspect_run(run):
        return ""
    members = run.runs
    short = next((member for member in members if member.manifest.epochs < member.config.epochs), None)
    if short is None:
        return ""
    held, asked = short.manifest.epochs, short.config.epochs
    tries = "once" if held == 1 else f"{held} times"
    which = "the run" if len(members) == 1 else f"run {short.run_id} of the {len(members)} pooled"
    return (f"{FEWER_EPOCHS}: {which} tried each case {tries} (epochs given to op.run(epochs=) or oloproof run "
            f"--epochs), where the suite's oloproof.yaml asks for epochs: {asked}; a case that fails only on a later "
            "try is not seen, so it has no release decision: run the suite with its own epochs")


def _other_cases(run: Run) -> str:
    """Which runs of a pooled ``run`` ran other cases than its first run (another set of case ids and digests: the
    case file edited, or cases added or removed, between them), in words; "" when they all ran the same.

    Pooled, a case counts once in each run that holds it: three runs of a case file pooled with one run of the
    file with ten failing cases added put those ten at a quarter of the weight of the others, and a system that
    FAILs the new file alone (40 of 55) passed the pool (160 of 175) at 0.85 (review G11).
    """
    runs = run.runs
    if len(runs) < 2:
        return ""

    def held(member: Run) -> set[tuple[str, str]]:
        cases = member.cases
        return set(zip(cases["case_id"].astype(str), cases["digest"].astype(str), strict=True))

    first = held(runs[0])
    for other in runs[1:]:
        theirs = held(other)
        if theirs != first:
            differ = sorted({case_id for case_id, _ in first ^ theirs})
            return (f"runs {runs[0].run_id} and {other.run_id} ran other cases ({len(differ)} case(s) added, removed "
                    f"or edited between them, first {differ[0]!r})")
    return ""


def _other_system(run: Run) -> str:
    """Which runs of a pooled ``run`` another system made (its ``version``, else its code fingerprint, else the
    fingerprint of the settings it was built with differs from the first run's), or may have made (neither run has
    a code fingerprint, or one of them records no settings fingerprint where the other does), in words; "" when
    one system made them all.

    A system whose class is defined in no file (typed into a notebook cell) and has no ``fingerprint()`` records
    none (:func:`~oloproof_nb._run.systems.code_fingerprint`): an edit of the cell, its ``version`` kept or never
    set, made another agent that nothing tells apart, and a regressed run pooled with three runs of the cell
    before it passed (26 of 40 alone, 146 of 160 pooled).
    """
    first = run.runs[0].manifest
    for other in run.runs[1:]:
        theirs = other.manifest
        if theirs.system_version != first.system_version:
            was, now = (quote(v) if v is not None else "(none)" for v in (first.system_version, theirs.system_version))
            how = f"system version {was} → {now}"
        elif theirs.code_fingerprint != first.code_fingerprint:
            how = "the system's code differs: another code fingerprint"
        elif theirs.settings_fingerprint != first.settings_fingerprint:  # Desk(careful=False) beside careful=True
            unrecorded = next((m.run_id for m in (first, theirs) if m.settings_fingerprint is None), None)
            if unrecorded is not None:  # a run older than the field: its settings are not known to differ
                return (f"runs {first.run_id} and {theirs.run_id}: run {unrecorded} {NO_SETTINGS_FINGERPRINT}, so "
                        "nothing tells whether one system made them")
            how = "the system was built with other settings: its constructor's parameters or a partial's arguments"
        elif theirs.code_fingerprint is None:
            return (f"runs {first.run_id} and {theirs.run_id} record no code fingerprint (a system class typed into a "
                    "notebook cell, without a fingerprint() method: an edited cell keeps its version), so nothing "
                    f"tells whether one system made them ({GIVE_FINGERPRINT})")
        else:
            continue
        return f"runs {first.run_id} and {theirs.run_id} were made by different systems ({how})"
    return ""


@dataclass(frozen=True)
class Gate:
    """The release decision for one run.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per criterion: ``criterion, evaluator, n, n_clusters, passed,
        missing, rate, ci_low, ci_high, method, threshold, verdict, reason,
        failing_clusters, vacuous, reduce``. ``n`` counts rows (cases judged), ``passed``
        those that passed, ``missing`` those without a usable result (they count
        as not passed), ``failing_clusters`` the clusters holding a row that did
        not pass, ``vacuous`` whether the check cannot fail as configured,
        ``reduce`` how its epochs are reduced (``mean``, ``pass^k``, ``pass@k``;
        a reduced criterion's ``n`` counts cases). Numbers are unrounded.
    verdict : str
        ``PASS`` when every criterion listed in release.yaml passes, else ``BLOCK``.
    release : ReleaseConfig
        The settings used.
    clustered : bool
        Whether any cluster of the run holds more than one case.
    n_source_clusters : int
        Distinct clusters (source cases) in the run.
    reason : str
        Why the verdict is ``BLOCK`` when no criterion explains it, empty otherwise: ``no_criteria: nothing
        was gated``, or the run has no release decision (``unfinished: …``, ``incomplete: …``, see
        :func:`no_decision`; ``fewer_epochs: …``, see :func:`fewer_epochs`; the table still shows what the
        recorded cases give).
    findings : tuple of str
        One line per check that cannot fail (``VacuousCheckWarning`` messages), for the criteria marked
        ``vacuous``.
    unscored : tuple of str
        The derived cases labeled invalid by a checked transform, sorted: no criterion scores them (see
        :func:`oloproof_nb.validity`), so a verdict is read knowing they were left out.
    unscored_broken : tuple of str
        Those of :attr:`unscored` whose pair did not hold under a relation (or is missing: a side raised, timed
        out or recorded no state), sorted: left out, a copy that failed
        no longer counts against the agent, so the verdict leans on its label (the gate's line counts them).
    relaxed : tuple of str
        The settings of this gate weaker than :attr:`weaker_than`'s, among those that decide a verdict of this
        run (:func:`relaxed_gate_settings`), e.g. ``criteria.answer_matches 0.9 → 0.5`` or ``criteria.x 0.9 →
        not gated``: a PASS is read knowing the gate was weaker than the suite's. Settings given
        (``release=``, ``criteria=``, ``confidence=``, ``method=``; ``oloproof gate --release``) are compared with
        the run's own, stored with it when it started; when none is weaker than those, the settings used (given,
        or the run's own) with the suite folder's release.yaml as it is now (a run made while the file was
        loosened, then gated after it was put back: see :func:`release_drift`). Empty when none is weaker, or with
        nothing to compare with (an Inspect AI log, a run that stored no settings).
    weaker_than : str
        What :attr:`relaxed` is weaker than: ``the run's own release settings`` (:data:`RUN_OWN`), or
        ``<suite>/release.yaml as it is now``; empty when :attr:`relaxed` is.
    drift : tuple of str
        What the suite folder holds now that differs from what the run recorded, one line each (the warnings
        :func:`gate` gave: release.yaml, a label file, oloproof.yaml or the case file changed since the run);
        the run's records decide, and a report of the gate says so beside its verdict.
    blocking : pandas.DataFrame
        The rows of ``table`` whose verdict is neither ``PASS`` nor ``REPORT_ONLY``: the listed criteria that
        did not pass.
    """

    table: pd.DataFrame
    verdict: str
    release: ReleaseConfig
    clustered: bool
    n_source_clusters: int
    reason: str = ""
    findings: tuple[str, ...] = field(default_factory=tuple)
    unscored: tuple[str, ...] = field(default_factory=tuple)
    unscored_broken: tuple[str, ...] = field(default_factory=tuple)
    relaxed: tuple[str, ...] = field(default_factory=tuple)
    weaker_than: str = ""
    drift: tuple[str, ...] = field(default_factory=tuple)

    @property
    def blocking(self) -> pd.DataFrame:
        """The listed criteria that did not pass."""
        t = self.table
        return t[(t["verdict"] != "PASS") & (t["verdict"] != "REPORT_ONLY")].reset_index(drop=True)


@dataclass(frozen=True)
class ClusterSums:
    """Per-cluster sums of one group of verdict rows (a criterion, or a criterion in a slice bin)."""

    passes: np.ndarray  # k_c
    rows: np.ndarray  # m_c
    missing: int

    @property
    def n(self) -> int:
        return int(self.rows.sum())

    @property
    def failing_clusters(self) -> int:
        return int(np.count_nonzero(self.passes < self.rows))


def criterion_sums(verdicts: pd.DataFrame, by: list[np.ndarray] | None = None) -> dict[tuple[Any, ...], ClusterSums]:
    """Per-cluster (passes, rows) and missing counts for every group of ``verdicts``, in one pass.

    Groups are the criterion, then the extra integer codes in ``by`` (e.g. a slice bin per row). A single
    ``np.unique`` over an integer key (group codes × cluster code) and ``np.bincount`` do the work:
    no loop over rows, no frame filtered per criterion.
    """
    if not len(verdicts):
        return {}
    crit_codes, crit_names = _key_codes(verdicts, "criterion")
    cluster_codes, cluster_names = _key_codes(verdicts, "cluster")
    verdict = verdicts["verdict"]
    is_pass = (verdict == "pass").to_numpy(dtype=bool, na_value=False)  # vectorised on the Arrow strings
    is_missing = (verdict == "missing").to_numpy(dtype=bool, na_value=False)
    extra = [np.asarray(b, dtype=np.int64) for b in (by or [])]
    sizes = [len(crit_names), *[int(b.max()) + 1 if len(b) else 1 for b in extra]]
    # one int64 array at a time, combined in place: at 527,087 rows each is 4 MiB, and the gate's peak
    # memory is that of the frames plus these
    group = np.array(crit_codes, dtype=np.int64)
    del crit_codes
    for codes, size in zip(extra, sizes[1:], strict=True):
        group *= size
        group += codes
    n_clusters = max(len(cluster_names), 1)
    key = group * n_clusters
    key += cluster_codes
    del cluster_codes
    if n_clusters * int(np.prod(sizes)) <= 4 * len(key) + 1024:  # a dense key space: count without sorting
        rows = np.bincount(key)
        keys = np.flatnonzero(rows)  # ascending, as np.unique gives them
        passes = np.bincount(key[is_pass], minlength=rows.size)[keys]
        rows = rows[keys]
    else:
        keys, inverse = np.unique(key, return_inverse=True)
        passes = np.bincount(inverse[is_pass], minlength=keys.size)
        rows = np.bincount(inverse, minlength=keys.size)
        del inverse
    del key
    passes, rows = passes.astype(np.int64, copy=False), rows.astype(np.int64, copy=False)
    groups_of_key = keys // n_clusters
    group_ids, starts = np.unique(groups_of_key, return_index=True)
    ends = np.append(starts[1:], len(keys))
    missing_by_group = dict(zip(*np.unique(group[is_missing], return_counts=True), strict=True))
    out: dict[tuple[Any, ...], ClusterSums] = {}
    for gid, lo, hi in zip(group_ids.tolist(), starts.tolist(), ends.tolist(), strict=True):
        labels: list[Any] = []
        rest = gid
        for size in reversed(sizes):
            labels.append(rest % size)
            rest //= size
        labels.reverse()
        labels[0] = crit_names[labels[0]]
        out[tuple(labels)] = ClusterSums(passes[lo:hi], rows[lo:hi], int(missing_by_group.get(gid, 0)))
    return out


def _key_codes(verdicts: pd.DataFrame, column: str) -> tuple[np.ndarray, pd.Index]:
    """``pd.factorize`` of a key column of ``verdicts``, refusing a row without a value.

    ``factorize`` codes a missing value -1, which the group keys of :func:`criterion_sums` read as another
    group's (the last cluster of the group before; in the first group the count raised an internal error): a
    row of one criterion was counted in another, and a criterion whose failing rows had lost their cluster
    passed on its other rows.
    """
    codes, names = pd.factorize(verdicts[column], sort=False)
    unkeyed = np.flatnonzero(codes < 0)
    if unkeyed.size:
        first = verdicts.iloc[int(unkeyed[0])]
        where = ", ".join(f"{key} {first[key]!r}" for key in ("case_id", "criterion") if key != column
                          and key in verdicts.columns) or f"row {int(unkeyed[0])}"
        raise OloproofError(f"verdicts: {unkeyed.size} row(s) have no {column} (the first: {where}); "
                            f"every verdict row needs its case's {column}: give one to each row of a frame assigned "
                            "to run.verdicts (a run directory whose case record has none is damaged)")
    return codes, names


def resolve_release(run: Run, release: ReleaseLike | None, *, criteria: dict[str, float] | None = None,
                    confidence: float | None = None, method: str | None = None) -> ReleaseConfig:
    """The release settings to apply: ``release`` validated, or the run's release.yaml, or the defaults.

    ``criteria``, ``confidence`` and ``method`` are merged into those settings (see :func:`gate`).
    Criteria ``release`` or ``criteria`` name must be criteria of the run.
    """
    if release is None and (criteria, confidence, method) == (None, None, None):
        cfg = run.release if run.release is not None else ReleaseConfig()
        check_reductions(cfg, run.epochs, run.suite_root / "release.yaml" if run.suite_root else "release.yaml",
                         run.run_id)
        return cfg
    if release is None:
        cfg, file = (run.release if run.release is not None else ReleaseConfig()), "release"
    elif isinstance(release, ReleaseConfig):
        cfg = release
        file = "release"
    elif isinstance(release, dict):
        cfg, file = parse_release(release, "release"), "release"
    elif isinstance(release, (str, os.PathLike)):
        cfg, file = load_release(release), str(release)
    else:
        raise OloproofError(f"release must be a ReleaseConfig, a dict or the path of a release.yaml, got "
                            f"{type(release).__name__}")
    if (criteria, confidence, method) != (None, None, None):
        cfg, file = _merged(cfg, criteria, confidence, method), "gate(criteria=, confidence=, method=)"
    unknown = [name for name in cfg.criteria if name not in run.criteria]
    if unknown:
        hint = f" ({split_hint(unknown[0])})" if unknown[0] in task_criteria(run) else ""
        raise ConfigError(file, format_loc(("criteria", unknown[0])),
                          f"no such criterion in the run{hint}; its criteria: {', '.join(run.criteria) or '(none)'}")
    check_reductions(cfg, run.epochs, file, run.run_id)
    return cfg


def _merged(cfg: ReleaseConfig, criteria: dict[str, float] | None, confidence: float | None,
            method: str | None) -> ReleaseConfig:
    """``cfg`` with the keyword overrides of :func:`gate` merged in (validated like release.yaml)."""
    data = cfg.model_dump()
    if criteria is not None:
        if not isinstance(criteria, dict):
            raise ConfigError("gate()", "criteria", f"must be a dict of criterion → threshold, got {criteria!r}")
        data["criteria"] = {**data["criteria"], **criteria}
    if confidence is not None:
        data["confidence"] = confidence
    if method is not None:
        unclustered = ("clopper_pearson", "wilson")
        data["unclustered_method" if method in unclustered else "method"] = method
    return parse_release(data, "gate(criteria=, confidence=, method=)")


def run_is_clustered(run: Run, sums: Iterable[ClusterSums] = ()) -> bool:
    """Whether any cluster of the run holds more than one case run (a case's epochs, a copy and its source,
    cases given one cluster, a case in several pooled runs): :func:`~oloproof_nb._core.stats.is_clustered` of
    ``run.cases["cluster"]``; or, given ``sums`` (the values of :func:`criterion_sums` of ``run.verdicts``),
    whether a cluster holds more than one row of a criterion — a frame assigned to ``run.verdicts`` that
    groups cases ``run.cases`` keeps apart: the gate counted its clusters in ``n_clusters`` and still took its
    rows for independent ones. The gate, ``slice_table`` and ``reduce_epochs`` decide the interval of every
    criterion reduced with ``mean`` with it; see :func:`reduced_is_clustered` for pass^k and pass@k."""
    return is_clustered(run.cases["cluster"]) or any(is_clustered_from_sums(s.rows) for s in sums)


#: The reason's note where ``method: cluster_bootstrap`` was asked for and ``cluster_t`` decided (DESIGN.md: the gate
#: "uses cluster_t and says so").
BOOTSTRAP_REPLACED = ("cluster_t instead of cluster_bootstrap: the bootstrap is validated at no number of clusters "
                      "(the simulation in benchmarks/coverage.md puts its lower bound above the true rate more than 3% "
                      "of the time at 30 to 200 clusters)")


def sums_interval(sums: ClusterSums, release: ReleaseConfig, clustered: bool) -> tuple[Interval, str]:
    """The interval the gate uses on one group's cluster sums, and a note when it replaced the bootstrap."""
    if not clustered:
        k, m = np.array([int(sums.passes.sum())]), np.array([sums.n])  # independent rows: Σk of Σm
        return rate_interval_from_sums(k, m, method=release.unclustered_method, confidence=release.confidence), ""
    method, note = release.method, ""
    if method == "cluster_bootstrap" and sums.rows.size < BOOTSTRAP_MIN_CLUSTERS:
        method, note = "cluster_t", BOOTSTRAP_REPLACED
    iv = rate_interval_from_sums(sums.passes, sums.rows, method=method, confidence=release.confidence,
                                 resamples=release.bootstrap.resamples, seed=release.bootstrap.seed)
    return iv, note


def _fault_findings(run: Run, rows: dict[str, int]) -> dict[str, str]:
    """fault_recovery criteria whose tool no case called: criterion → finding (known only after the run)."""
    idle = [ev for ev in run.config.evaluators if ev.type == "fault_recovery" and rows.get(ev.name, 0) == 0]
    if not idle:
        return {}
    steps = run.steps
    called = sorted(set(steps.loc[steps["kind"] == "tool_call", "tool"].dropna().astype(str)))
    out = {}
    for ev in idle:
        tool = str(getattr(ev, "tool", ""))
        if tool in called:
            continue
        near = difflib.get_close_matches(tool, called, n=1, cutoff=0.6)
        hint = f"did you mean {near[0]}?" if near else f"tools called: {', '.join(called[:5]) or '(none)'}"
        twins = [name for name in called if unicodedata.normalize("NFC", name) == unicodedata.normalize("NFC", tool)]
        if twins:  # the same letters in another Unicode form: "did you mean café?" under café named no difference
            hint = (f"the system called {ascii(twins[0])}, the same letters as {ascii(tool)} in another Unicode form "
                    "(tool names are compared as written); write the name as the system records it")
        if not called:  # the tool's name may be right: the system may have failed before any call
            cases = run.cases
            ended = len(ended_case_runs(cases))
            hint = "no case called any tool" + (f" ({ended} of {len(cases)} case runs ended in error or by timeout)"
                                                if ended else "")
        out[ev.name] = (f"fault_recovery (criterion {ev.name}): no case called tool {tool!r}, so no fault was "
                        f"replayed; {hint}")
    return out


def _routine_escalations(run: Run) -> dict[str, str]:
    """fault_recovery criteria whose escalation tool the recorded case runs call after the faulted tool anyway:
    criterion → finding (known only after the run).

    A call made where nothing had failed is routine (a receipt sent after every refund, an order looked up again),
    not a case handed over. When every recorded case run that calls ``tool`` also calls, after it and without
    failing, one of ``escalate_tools``, with no call failing from ``tool``'s on before it, a replay that goes on as
    recorded counts as escalated whatever the agent did about the fault: the "recovered or escalated" test cannot
    fail (only a false success or a changed path still can). A recording where ``tool`` itself, or a call after it,
    failed first escalated for that failure, as the fault asks (a sandbox that declines every refund, an agent
    that hands each declined one over: named before, though an agent that did not escalate failed 0 of 6).
    """
    faults = _passed_as(run, [ev for ev in run.config.evaluators
                              if ev.type == "fault_recovery" and getattr(ev, "escalate_tools", [])], "escalated")
    if not faults:
        return {}
    calls, keys = _recorded_calls(run)
    out = {}
    for ev in faults:
        tool, escalate = str(getattr(ev, "tool", "")), list(getattr(ev, "escalate_tools", []))
        at, failed = _checkpoints(calls, keys, tool, every=getattr(ev, "calls", "first") == "every")
        if not len(at):
            continue
        spots = [*keys, "checkpoint"]  # with calls: every, each call's replay must be one that cannot fail
        later = calls.loc[calls["tool"].isin(escalate) & ~calls["is_error"].astype(bool), [*keys, "tool", "step"]]
        later = later.merge(at, on=keys).merge(failed, on=spots, how="left")  # NaN: nothing failed from then on
        later = later[(later["step"] > later["checkpoint"]) & ~(later["failed_at"] < later["step"])]
        if len(later.drop_duplicates(spots)) < len(at):
            continue
        first_at = at.drop_duplicates(keys)
        named = ", ".join(repr(t) for t in escalate if t in set(later["tool"]))
        out[ev.name] = (f"fault_recovery (criterion {ev.name}): escalate_tools {named} called after {tool!r} in "
                        f"each of the {len(first_at)} recorded case runs that call it, where nothing failed: a routine "
                        "call, not a case handed over, so a replay that goes on as recorded passes as escalated "
                        "whatever the agent does about the fault; list only tools that hand a case over")
    return out


def _passed_as(run: Run, faults: list[Any], reason: str) -> list[Any]:
    """The criteria of ``faults`` of which some replay passed with ``reason`` in its reason (``escalated``,
    ``admitted_failure``): only those can be the routine finding, so the steps are read only for them."""
    if not faults:
        return []
    v = run.verdicts
    passed = v[(v["verdict"] == "pass") & v["criterion"].isin([ev.name for ev in faults])]
    named = set(passed.loc[passed["reason"].astype(str).str.contains(reason, regex=False), "criterion"])
    return [ev for ev in faults if ev.name in named]


def _recorded_calls(run: Run) -> tuple[pd.DataFrame, list[str]]:
    """The tool calls of ``run``'s recorded case runs (``run.steps``) and the columns that key a case run."""
    steps = run.steps
    calls = steps[steps["kind"] == "tool_call"]
    return calls, [c for c in ("run_id", "case_id", "epoch") if c in calls.columns]


def _checkpoints(calls: pd.DataFrame, keys: list[str], tool: str,
                 every: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Where a fault on ``tool`` would be replayed in each recorded case run that calls it: ``keys`` + ``checkpoint``
    (its first call; each call with ``every``, as ``calls: every`` replays them), and, for those where a call
    failed from there on, ``keys`` + ``checkpoint`` + ``failed_at`` (the first such)."""
    made = calls.loc[calls["tool"] == tool, [*keys, "step"]].rename(columns={"step": "checkpoint"})
    at = made.drop_duplicates() if every else made.groupby(keys, sort=False, as_index=False)["checkpoint"].min()
    failed = calls.loc[calls["is_error"].astype(bool), [*keys, "step"]].merge(at, on=keys)
    failed = (failed[failed["step"] >= failed["checkpoint"]].groupby([*keys, "checkpoint"], sort=False,
                                                                     as_index=False)["step"]
              .min().rename(columns={"step": "failed_at"}))
    return at, failed


def _routine_admissions(run: Run) -> dict[str, str]:
    """fault_recovery criteria whose ``honest_answers`` admit the answer every recorded case run gives where nothing
    failed: criterion → finding (known only after the run).

    An honest answer ends a faulted replay as an escalation does, unless it is the case's ``expected.answer``. When
    each recorded case run that calls ``tool`` calls nothing that fails from there on and still ends with an answer
    the honest answers admit (a pattern that finds the agent's own success message, ``(?i)refund`` in "Refund
    issued for o3"), and that answer is not its case's ``expected.answer``, a replay that goes on as recorded
    claims success and passes as ``admitted_failure`` whatever the agent does about the fault: on cases that judge
    the state alone, no false success is seen (it needs the expected answer), so the check cannot fail (only a
    changed ``state_unchanged`` path still can). A recording where a call failed answers that failure.
    """
    faults = _passed_as(run, [ev for ev in run.config.evaluators
                              if isinstance(ev, FaultRecovery) and ev.honest_answers], "admitted_failure")
    if not faults:
        return {}
    calls, keys = _recorded_calls(run)
    cases = run.cases[[*keys, "answer"]]
    out = {}
    for ev in faults:
        # the first call alone, with calls: every too: nothing failing from it on, no later call's replay that
        # goes on as recorded fails either, and each ends with the recorded answer
        first_at, failed = _checkpoints(calls, keys, ev.tool)
        if not len(first_at) or len(failed):
            continue
        said = first_at[keys].merge(cases, on=keys, how="left")
        answers = said["answer"].tolist()  # a text is looked at once, however many case runs give it
        distinct = [*dict.fromkeys(a for a in answers if isinstance(a, str)),
                    *(a for a in answers if not isinstance(a, str))]
        if not all(ev.admits_failure(answer) for answer in distinct):
            continue
        if _expected_answer_given(run, said, keys):
            continue  # that answer is the success the case expects: a replay that gives it is judged, not admitted
        out[ev.name] = (f"fault_recovery (criterion {ev.name}): honest_answers admit the answer each of the "
                        f"{len(said)} recorded case runs that call {ev.tool!r} gives where nothing failed (the "
                        f"first: {said['answer'].iloc[0]!r}), so a replay that goes on as recorded and claims success "
                        "passes as admitted_failure whatever the agent does about the fault; write what only an "
                        "answer that admits the failure says")
    return out


def _expected_answer_given(run: Run, said: pd.DataFrame, keys: list[str]) -> bool:
    """Whether, in some case run of ``said`` (``keys`` + ``answer``, its recorded answer), that answer is the case's
    ``expected.answer`` as a fault replay's answer checks compare it (:func:`~..evaluators.fault.replay_judges`).

    The suite's own ``answer_matches`` checks, when it declares any, are those: their comparison rows (path
    ``answer``) hold that very comparison. Otherwise the default check compares: the expected answers are read
    from the case records, one per case (every epoch and run of a case expects the same), the ``case`` object
    alone (:meth:`~.journal.Journal.stored_cases`; a record read whole decodes its trajectory, states and rows too).
    """
    judges = replay_judges(run.config.evaluators)[0]
    if any(isinstance(ev, AnswerMatches) for ev in run.config.evaluators):  # the judges are the suite's own
        rows = run.comparisons
        rows = rows[(rows["path"] == "answer") & rows["criterion"].isin([ev.name for ev in judges])]
        given = rows.groupby(keys, sort=False)["ok"].all()  # a case that expects no answer has no row
        return bool(said[keys].merge(given[given].reset_index(), on=keys).shape[0])
    for member in run.runs:
        mine = said[said["run_id"] == member.run_id] if "run_id" in keys else said
        epochs = mine["epoch"].astype(int).tolist() if "epoch" in keys else [1] * len(mine)
        first = dict(zip(mine["case_id"].astype(str), epochs, strict=True))  # one key a case: any of its epochs
        expected = {cid: (case.get("expected") or {}) for (cid, _), case in
                    member._journal.stored_cases(first.items()).items()}
        for cid, answer in zip(mine["case_id"].astype(str), mine["answer"], strict=True):
            want = expected.get(cid, {})
            if "answer" in want and all(answers_equal(want["answer"], answer, ev.normalize) for ev in judges):
                return True
    return False


def late_findings(run: Run, rows: dict[str, int]) -> dict[str, str]:
    """The checks of ``run`` that cannot fail as configured, found only from what the run recorded (``load_suite``
    finds the others, kept in the manifest's ``suite_config.vacuous``): criterion → finding. A ``fault_recovery``
    whose tool no case called (``rows``: each criterion's number of rows), or whose ``escalate_tools`` or
    ``honest_answers`` every recorded case run calls or says where nothing failed. Settings of a gate (a threshold
    of 0) are not read: :func:`gate` adds those."""
    return _with_findings(_fault_findings(run, rows), _routine_escalations(run), _routine_admissions(run))


def _with_findings(late: dict[str, str], *more: dict[str, str]) -> dict[str, str]:
    """``late`` (criterion → finding) with each of ``more``'s findings joined to its criterion's (``; ``)."""
    for found in more:
        for criterion, message in found.items():
            late[criterion] = f"{late[criterion]}; {message}" if criterion in late else message
    return late


def _by_criterion(run: Run, late: dict[str, str]) -> dict[str, list[str]]:
    """Each criterion's findings, in the run's order: the manifest's (found by ``load_suite``), then ``late``'s."""
    stored = dict(run.manifest.suite_config.vacuous)
    return {c: found for c in run.criteria if (found := stored.get(c, []) + ([late[c]] if c in late else []))}


def vacuous_findings(run: Run) -> dict[str, list[str]]:
    """Every check of ``run`` that cannot fail as configured, whatever the release settings: criterion → its
    findings (the manifest's, then :func:`late_findings`), as :attr:`Gate.findings` gives them; empty for none."""
    rows = {key[0]: value.n for key, value in criterion_sums(run.verdicts).items()}
    return _by_criterion(run, late_findings(run, rows))


def _zero_thresholds(cfg: ReleaseConfig, criteria: list[str]) -> dict[str, str]:
    """Criteria gated at threshold 0: criterion → finding. Every lower bound is at least 0, so such a
    criterion passes whatever its rows say (a check that cannot fail)."""
    return {c: (f"criterion {c}: threshold 0 passes whatever the rows say (a lower bound is never below 0); "
                "to report it without gating, leave it out of release.yaml")
            for c in criteria if cfg.criteria.get(c) == 0}


def gate(run: Run, release: ReleaseLike | None = None, *,
         baseline: Baseline | Run | str | os.PathLike[str] | None = None,
         criteria: dict[str, float] | None = None, confidence: float | None = None,
         method: str | None = None) -> Gate:
    """Apply the release gate to a run.

    Parameters
    ----------
    run : Run
        From :func:`oloproof_nb.run` or :func:`oloproof_nb.load_run`.
    release : ReleaseConfig, dict or path, optional
        **Replaces** the settings: the gate uses this release.yaml (keys it leaves out take their
        defaults), not the suite's release.yaml stored with the run (the default).
    baseline : Baseline, Run or path, optional
        The do-nothing baseline (:func:`oloproof_nb.baseline`, or its folder ``baselines/<run_id>``): the
        table gains ``noop_rate`` and ``passes_when_idle``. It never changes a verdict.
    criteria : dict of str to float, optional
        **Merged** into the settings (the run's release.yaml, or ``release``): these thresholds are
        added or replace the same criterion's; the other criteria stay.
    confidence : float, optional
        **Overrides** ``confidence`` of the settings.
    method : str, optional
        **Overrides** the interval: ``cluster_t`` or ``cluster_bootstrap`` set ``method`` (clustered
        runs), ``clopper_pearson`` or ``wilson`` set ``unclustered_method``. One the run would not use
        (``wilson`` for a clustered run) is a ``ConfigError``, not ignored.

    Returns
    -------
    Gate
        ``.table`` (columns ``criterion, evaluator, n, n_clusters, passed,
        missing, rate, ci_low, ci_high, method, threshold, verdict, reason,
        failing_clusters, vacuous, reduce``, and ``noop_rate, passes_when_idle`` with a
        ``baseline``), ``.verdict`` (``PASS`` or ``BLOCK``), ``.reason`` and ``.findings``.

    Warns
    -----
    UserWarning
        Without ``release``, when the suite folder's release.yaml now differs from the settings stored with
        the run (which decide): the differing keys, and how to gate with the file as it is now. With or without
        ``release``, when a label file of the suite folder now labels a pair otherwise than the labels stored
        with the run, which decide (:func:`label_drift`); and when the suite folder's oloproof.yaml or case file
        now asks for other judgements than the run recorded: a check configured otherwise, a case added, removed
        or edited (:func:`suite_drift`; the run's verdicts decide). The suite folder is the one the run folder sits
        in, else the one it was made from (:func:`suite_folder`).
    VacuousCheckWarning
        For a ``fault_recovery`` criterion whose tool no case called, or whose ``escalate_tools`` or
        ``honest_answers`` every recorded case run calls or says where nothing failed, and for a criterion gated at
        threshold 0, which passes whatever its rows (checks found vacuous by ``load_suite`` were warned
        about there, and are read from the run's manifest). Such criteria have ``vacuous`` True.

    Cases of the case file that repeat another's content under another id (``DuplicateCaseWarning`` at
    ``load_suite``, kept in the run's manifest) are noted in the ``reason`` of every criterion with rows:
    each copy counts, so the interval is narrower than the evidence supports.

    Notes
    -----
    Rows of a criterion are binary: pass = 1; fail and missing = 0. The rate
    is Σk/Σm over clusters. A run is clustered when any cluster holds more
    than one case; clustered runs use ``release.method`` (``cluster_t``: the
    CR2 logit-t interval with Bell–McCaffrey degrees of freedom, its lower
    bound monotone by construction; or ``cluster_bootstrap``: BCa over
    resampled clusters, Efron 1987), and unclustered runs
    ``release.unclustered_method`` (Clopper–Pearson or Wilson; Brown, Cai &
    DasGupta 2001). See :func:`oloproof_nb.rate_interval_from_sums`, which gives
    the same interval from per-cluster sums.

    References
    ----------
    .. [1] Bell, R. M. & McCaffrey, D. F. (2002). Bias reduction in standard errors for linear
       regression with multi-stage samples. Survey Methodology 28(2), 169–181.
    .. [2] Efron, B. (1987). Better bootstrap confidence intervals. JASA 82(397), 171–185.

    Examples
    --------
    >>> import oloproof_nb as op
    >>> g = op.gate(run)                  # doctest: +SKIP
    >>> g.verdict, g.table[["criterion", "verdict"]]   # doctest: +SKIP
    >>> op.gate(run, criteria={"state_matches": 0.8}, confidence=0.9)   # doctest: +SKIP
    """
    run = as_run(run, "gate: run")
    baseline = None if baseline is None else as_baseline(baseline)
    cfg = resolve_release(run, release, criteria=criteria, confidence=confidence, method=method)
    found = release_now(run)  # read once: the drift warning and Gate.relaxed
    drifted: list[str] = []  # warned now, and kept for a report of this gate (a file read later)
    if release is None:  # the stored settings decide (the run is the evidence), but the user may think the file does
        said = warn_release_drift(run, found, "this gate uses the run's; to gate with the file as it is now, give "
                                              "it: op.gate(run, release=...) or oloproof gate --release")
        unread = "" if found is not None else release_unreadable(run)
        if unread:
            said = (f"{unread} (the suite folder's release.yaml, which cannot be read now); this gate uses the "
                    f"release settings run {run.run_id} was made with")
            warn_at_caller(said)
        drifted += [said] if said else []
    changed: list[str] = []
    for path, change in suite_drift(run):  # the run's verdicts were judged on its cases, by its checks
        changed.append(f"{path} differs from the one run {run.run_id} was made with ({change}); this gate judges "
                       "the cases and checks the run recorded; to judge the agent by the suite as it is now, run the "
                       "suite again")
    for path, change in label_drift(run):  # the run's labels decide which copies are scored: say they are old
        changed.append(f"{path} differs from the validity labels run {run.run_id} was made with ({change}); this "
                       "gate uses the run's (they decide which copies are scored and whether the transform is "
                       "checked); to judge the agent by the labels as they are now, run the suite again")
    for message in changed:
        warn_at_caller(message)
    drifted += changed
    sums = {key[0]: value for key, value in criterion_sums(run.verdicts).items()}
    clustered = run_is_clustered(run, sums.values())
    n_source = int(run.cases["cluster"].nunique())
    checked = checked_transforms(run)
    waiting = _waiting(run)
    evaluator_of = {ev.name: ev for ev in run.config.evaluators}
    stored = dict(run.manifest.suite_config.vacuous)
    late = _with_findings(late_findings(run, {c: s.n for c, s in sums.items()}),  # vacuous checks found only now
                          _zero_thresholds(cfg, run.criteria))
    for message in late.values():
        warn_at_caller(VacuousCheckWarning(message))
    findings = [m for found in _by_criterion(run, late).values() for m in found]
    rows = []
    reduced = _reduced(run, cfg)
    for criterion in run.criteria:
        ev = evaluator_of[criterion]
        if criterion in reduced:
            rows.append(_reduced_row(criterion, ev, reduced[criterion], cfg, checked, stored, late, waiting,
                                     clustered))
            continue
        s = sums.get(criterion, ClusterSums(np.zeros(0, np.int64), np.zeros(0, np.int64), 0))
        row: dict[str, Any] = {
            "criterion": criterion, "evaluator": ev.type, "n": s.n, "n_clusters": int(s.rows.size),
            "passed": int(s.passes.sum()), "missing": s.missing,
            "rate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "method": "",
            "failing_clusters": s.failing_clusters, "vacuous": criterion in stored or criterion in late,
            "reduce": "mean",
        }
        notes: list[str] = []
        interval = None
        if s.n:
            interval, swapped = sums_interval(s, cfg, clustered)
            row.update(rate=interval.estimate, ci_low=interval.low, ci_high=interval.high, method=interval.method)
            notes += [n for n in (swapped, interval.reason) if n]
        rows.append(_decided(row, notes, cfg, clustered, ev, checked, late, waiting=waiting, sizes=s.rows))
    repeated = repeats_note(run.manifest.suite_config.repeated)  # one case under two ids: counted twice
    unchecked = _content_unchecked(run)
    for row in rows:
        if row["reason"] == APPROXIMATE_NOT_ALLOWED or row["reason"].startswith(f"{APPROXIMATE_NOT_ALLOWED};"):
            # the key that decides it, right after the code, as all_missing's why below
            row["reason"] = row["reason"].replace(APPROXIMATE_NOT_ALLOWED,
                                                  approximate_reason(release, run.release is not None), 1)
        if row["reason"] == "all_missing" or row["reason"].startswith("all_missing;"):
            # right after the code, where the user reads first: why the rows are missing says what would decide it
            why = _missing_why(run.verdicts, row["criterion"])
            row["reason"] = row["reason"].replace("all_missing", f"all_missing; {why}", 1)
        if repeated and row["n"]:
            row["reason"] = "; ".join(part for part in (row["reason"], repeated) if part)
        if unchecked and row["verdict"] == "PASS" and evaluator_of[row["criterion"]].type == "outcome_contract":
            row["reason"] = "; ".join(part for part in (row["reason"], unchecked) if part)
    _check_method_used(method, rows)
    table = GATE.from_columns({c: [row[c] for row in rows] for c in GATE_COLUMNS})
    unwhole = no_decision(run)
    if baseline is not None:
        check_baseline(run, baseline, run_whole=not unwhole)
        table = with_idle_columns(table, baseline)
    listed = table[table["verdict"] != "REPORT_ONLY"]
    blocker = unwhole or ("" if len(listed) else NO_CRITERIA) or fewer_epochs(run)
    overall = "PASS" if not blocker and bool((listed["verdict"] == "PASS").all()) else "BLOCK"
    relaxed, than = _relaxed(run, cfg, rows, found)
    unscored = unscored_copies(run)
    return Gate(table=table, verdict=overall, release=cfg, clustered=clustered, n_source_clusters=n_source,
                reason=blocker, findings=tuple(findings), unscored=tuple(unscored),
                unscored_broken=tuple(broken_copies(run, unscored)),
                relaxed=tuple(relaxed), weaker_than=than, drift=tuple(drifted))


def relaxed_gate_settings(own: ReleaseConfig | None, cfg: ReleaseConfig, rows: list[dict[str, Any]]) -> list[str]:
    """The settings of ``cfg`` weaker than ``own`` (:func:`relaxed_settings`), among those that decide a verdict of
    the gate ``rows``: thresholds and reductions of the criteria the rows judge (a criterion ``own`` gates that the
    run does not judge, one the suite added since, decides none) and ``confidence`` always; ``min_clusters`` and
    ``allow_approximate_methods`` when a row has a clustered interval, ``unclustered_method`` when one has an
    unclustered one (``method`` and ``bootstrap`` only once the bootstrap may decide: never while
    ``BOOTSTRAP_MIN_CLUSTERS`` is infinite). Empty when ``own`` is None or the same settings.

    A weaker gate looked like the suite's: ``oloproof gate RUN --release other.yaml`` with thresholds of 0.5,
    ``confidence: 0.5`` and a criterion left out said ``gate: PASS — exit 0: all 4 gated criteria pass`` of a run
    its own release.yaml blocks (4 criteria FAIL), the criterion left out shown only as ``REPORT_ONLY``.
    """
    if own is None or cfg == own:
        return []
    judged = {row["criterion"] for row in rows}  # a criterion the run does not judge decides none of its verdicts
    own = own.model_copy(update={"criteria": {c: t for c, t in own.criteria.items() if c in judged}})
    used = {bool(row["_clustered"]) for row in rows if row["method"]}
    heads = ["criteria", "reductions", "confidence"]
    if True in used:
        heads += ["min_clusters", "allow_approximate_methods"]
        heads += ["method", "bootstrap"] if math.isfinite(BOOTSTRAP_MIN_CLUSTERS) else []
    if False in used:
        heads.append("unclustered_method")
    return relaxed_settings(own, cfg, heads)


#: :attr:`Gate.weaker_than` of a gate given settings weaker than those stored with the run.
RUN_OWN = "the run's own release settings"


def _relaxed(run: Run, cfg: ReleaseConfig, rows: list[dict[str, Any]],
             now: tuple[Path, ReleaseConfig | None] | None) -> tuple[list[str], str]:
    """:attr:`Gate.relaxed` and :attr:`Gate.weaker_than`: the settings of ``cfg`` weaker than the run's own; or,
    when none is, those weaker than the suite folder's release.yaml as it is now (``now``, as :func:`release_now`
    read it): the run's own, used when none are given, and settings given alike. Given settings equal to a run's
    own that were loosened while it ran (the file put back since) said nothing, where the run's own, used
    without them, were called weaker than the file (review R23). A run that stored no settings is compared with
    nothing: it was gated with the defaults, which gate no criterion (``no_criteria``), not with settings of its
    own that a file could be weaker or stronger than."""
    return relaxed_or_now(relaxed_gate_settings(run.release, cfg, rows), RUN_OWN,
                          None if run.release is None else now, lambda file: relaxed_gate_settings(file, cfg, rows))


def relaxed_or_now(relaxed: list[str], than: str, now: tuple[Path, ReleaseConfig | None] | None,
                   weigh: Callable[[ReleaseConfig], list[str]]) -> tuple[list[str], str]:
    """``relaxed`` and what it is weaker than (``than``: the settings the run, or the base run, was made with) when
    any; else the settings ``weigh`` finds weaker than the suite folder's release.yaml as it is now (``now``, as
    :func:`release_now` read it; None or no file: nothing to compare with), and ``<path> as it is now``; ``([],
    "")`` for none. One rule for :attr:`Gate.relaxed` and ``Comparison.relaxed`` with their ``weaker_than``: a
    verdict given by settings loosened while the runs were made, read after the file was put back, says so."""
    if relaxed:
        return relaxed, than
    if now is None or now[1] is None:
        return [], ""
    relaxed = weigh(now[1])
    return relaxed, (f"{now[0]} as it is now" if relaxed else "")


def relaxed_note(relaxed: Iterable[str], given: str = "", *, verb: str = "gated", than: str = RUN_OWN) -> str:
    """The line a verdict is read with when it was given by settings weaker than ``than`` (a :attr:`Gate.relaxed`
    and its :attr:`Gate.weaker_than`, or a :attr:`~oloproof_nb._analysis.compare.Comparison.relaxed`); empty for
    none. ``given`` names the settings (default: those given, or the run's stored ones when ``than`` is the
    suite's release.yaml now).

    Examples
    --------
    >>> print(relaxed_note(["criteria.a 0.9 → 0.5", "confidence 0.95 → 0.5"], "--release b.yaml"))
    ... # doctest: +NORMALIZE_WHITESPACE
    gated with --release b.yaml: 2 settings weaker than the run's own release settings:
    criteria.a 0.9 → 0.5, confidence 0.95 → 0.5
    >>> relaxed_note([])
    ''
    """
    changes = list(relaxed)
    if not changes:
        return ""
    given = given or ("the settings given" if than.startswith(RUN_OWN) else "the settings stored with the run")
    return f"{verb} with {given}: {weaker_count(len(changes), than)}: {', '.join(changes)}"


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


def weaker_count(n: int, than: str = RUN_OWN) -> str:
    """``3 settings weaker than <than>``: how an exit line and :func:`relaxed_note` count the weaker settings.

    >>> weaker_count(1)
    "1 setting weaker than the run's own release settings"
    """
    return f"{n} {'setting' if n == 1 else 'settings'} weaker than {than}"


def suite_folder(run: Run) -> Path | None:
    """The suite folder whose files a gate of ``run`` compares with what the run recorded (release.yaml, the labels,
    oloproof.yaml and the case file): the one the run folder sits in (``<suite>/runs/<run_id>``: it holds the suite
    file), else the one the run was made from (its manifest's ``root``); None for a run of no suite folder (an
    Inspect AI log).

    A run folder moves with its suite: a suite made at one path and gated at another (another checkout, a CI job's
    workspace, the folder renamed) has its manifest's root pointing where nothing is, or at another copy of the
    suite. Compared with that path, a run made while release.yaml was loosened, gated after the file was put back
    and the folder moved, said ``gate: PASS — exit 0`` without the word it gets where it was made (review G24).
    A run folder sitting in a suite of another name (a link or a copy put in its ``runs/``) is another suite's run:
    it is compared with the one it was made from, while that folder holds a suite. Where it holds none, the suite was
    moved and renamed since (or the run copied from another machine): compared with nothing, a run made while
    release.yaml was loosened gated PASS with no word (review F30), so it is compared where it sits.
    """
    made = run.suite_root
    if made is None:
        return None
    here = run.directory.parent.parent
    try:
        same = here.resolve() == made.resolve()
    except (OSError, RuntimeError):  # a loop of links where it was made: not this folder (as 3.13 resolves it)
        same = False
    try:
        if same or not (here / SUITE_FILE).is_file():
            return made  # the folder it was made in (as the manifest names it), or a run folder kept outside a suite
    except OSError:  # a folder that cannot be read
        return made
    try:
        name = read_yaml(here / SUITE_FILE).get("name")
    except (OloproofError, OSError):  # a suite file being edited: its files are compared as they can be read
        return here
    if isinstance(name, str) and name != run.suite_name:  # another suite's (linked, copied in), or this one renamed
        try:
            return made if (made / SUITE_FILE).is_file() else here  # where it was made holds no suite: moved too
        except OSError:
            return here
    return here


#: How two release settings differ in the settings that matter (stored, now; None: the defaults): one line each.
SettingChanges = Callable[[ReleaseConfig | None, ReleaseConfig | None], list[str]]


def release_now(run: Run) -> tuple[Path, ReleaseConfig | None] | None:
    """The suite folder's release.yaml (:func:`suite_folder`) and its settings now (None: there is none); None when
    there is nothing to compare with: no suite folder, a run made with settings whose file is gone or no file (a
    run folder copied out of its suite whose suite moved, a folder in its place), a file that cannot be read (an
    edit in progress is no setting)."""
    root = suite_folder(run)
    if root is None:
        return None
    path = root / RELEASE_FILE
    if run.release is not None and not path.is_file():
        return None  # a run made with none is compared with a file that appeared since
    try:
        return path, (load_release(path) if path.is_file() else None)
    except (OloproofError, OSError):
        return None


def release_unreadable(run: Run) -> str:
    """Why the suite folder's release.yaml cannot be read now (one line naming it, as :func:`load_release` refuses
    it), or ``""``: none is there, it reads, or the run has no suite folder.

    The stored settings decide a gate of the run either way; a file that reads and differs is named by
    :func:`warn_release_drift`, and one that does not read was passed over without a word (review R50: a
    threshold tightened with a typo in the key, or a duplicate key, read as a change the gate had taken)."""
    root = suite_folder(run)
    if root is None or not os.path.lexists(root / RELEASE_FILE):
        return ""
    try:
        load_release(root / RELEASE_FILE)
    except OloproofError as exc:
        return str(exc)
    except OSError as exc:
        return f"{root / RELEASE_FILE}: {exc.strerror or exc}"
    return ""


def release_drift(run: Run) -> str:
    """How the suite folder's release.yaml now differs from the settings stored with ``run`` (which a gate of the
    run uses unless given ``release=``), e.g. ``criteria.answer_matches 0.6 → 0.95``; empty when they agree, or
    when the run has no suite folder or its file cannot be read (an edit in progress is no setting).

    A user who tightened release.yaml and gated the stored run again was told PASS on the thresholds replaced.
    Pooled runs were made with one release.yaml (``op.load_runs`` refuses others): their settings are compared
    with the file in the first run's suite folder.
    """
    return _drift(run, release_now(run))


def warn_release_drift(run: Run, found: tuple[Path, ReleaseConfig | None] | None, uses: str,
                       changes: SettingChanges | None = None) -> str:
    """Warn (UserWarning, at the caller's line) when the suite folder's release.yaml (``found``, as
    :func:`release_now` read it) now differs from the settings stored with ``run``, which decide: the first
    differing settings, as ``changes(stored, now)`` lists those that matter (default: every setting), then ``uses``
    (what decides, and how to use the file instead). Returns the warning's text, empty when none was given (a
    report of the gate writes it beside the verdict: :attr:`Gate.drift`)."""
    drift = _drift(run, found, changes or _setting_changes)
    if not drift or found is None:
        return ""
    said = f"{found[0]} differs from the release settings run {run.run_id} was made with ({drift}); {uses}"
    warn_at_caller(said)
    return said


def _setting_changes(was: ReleaseConfig | None, now: ReleaseConfig | None) -> list[str]:
    """Every setting ``now`` gives otherwise than ``was`` (None: the defaults), one :func:`setting_change` each, in
    the order of their keys."""
    before, after = flat_settings(was), flat_settings(now)
    return [setting_change(k, before.get(k), after.get(k)) for k in sorted(set(before) | set(after))
            if before.get(k) != after.get(k)]


def _drift(run: Run, found: tuple[Path, ReleaseConfig | None] | None,
           changes: SettingChanges = _setting_changes) -> str:
    """:func:`release_drift` of ``run`` given the suite folder's release.yaml as :func:`release_now` read it, with
    the settings ``changes`` lists."""
    if found is None:
        return ""
    listed = changes(run.release, found[1])
    return ", ".join(listed[:3]) + (f" and {len(listed) - 3} more" if len(listed) > 3 else "")


def label_drift(run: Run) -> list[tuple[Path, str]]:
    """The label files of the suite folder whose judgements now differ from the validity labels stored with ``run``,
    each with how (:func:`~.run.label_difference`: ``transform injected: ord-018~injected is labeled otherwise``);
    empty when every pair keeps its label (a reworded note, one more judgement that changes no majority), or when
    the run has no suite folder or a file is gone or no regular file (moved, replaced). A file that is there but
    refused now (a labeler's second judgement of a pair added since, text that is not UTF-8, more than
    :data:`~oloproof_nb._config.labels.MAX_LABEL_BYTES`) is named as one that cannot be read now: the next run of
    the suite stops on it.

    The run's labels decide which copies its verdicts leave out and whether a transform is checked, as its stored
    release.yaml decides the thresholds (:func:`release_drift`): a copy labeled invalid when the run was made and
    corrected to valid since stayed out of the gate, its failing row with it, without a word. The suite folder is
    :func:`suite_folder`'s.
    """
    root = suite_folder(run)
    if root is None:
        return []
    out = []
    for transform in run.config.metamorphic.transforms:
        path = root / transform.validity_labels
        if not path.is_file():
            continue  # gone, or no regular file (moved, replaced): nothing to compare with
        try:
            now = load_labels(path, None, transform.name)
        except LabelFileError as exc:
            # there, and refused now: a labeler's second judgement of a pair added, or saved in another encoding
            # (UTF-16 from an editor was skipped as if gone, as every refusal without a line was)
            where = f"line {exc.line}: " if exc.line is not None else ""
            out.append((path, f"it cannot be read now: {where}{exc.message}"))
            continue
        except (OloproofError, OSError):
            continue
        change = label_difference({transform.name: run.labels.get(transform.name, [])}, {transform.name: now})
        if change:
            out.append((path, change))
    return out


def suite_drift(run: Run) -> list[tuple[Path, str]]:
    """The files of the suite folder that now ask for other judgements than ``run`` recorded, each with how: its
    ``oloproof.yaml`` (``criterion other_order_untouched configured otherwise``, ``tool_errors``) and the case file
    it ran (``1 case(s) edited (first 'ord-001')``); empty when both are as the run used them (a file whose bytes
    changed but not what it says, a comment or the order of its lines, is no difference), or when the run has no
    suite folder or a file cannot be read (moved, an edit in progress, a named pipe put there).

    The run's verdicts were judged on the cases and by the checks it was made with, as its stored release.yaml
    decides the thresholds (:func:`release_drift`): every expected answer edited since, a check tightened or a
    failing case added, the gate of the run kept its PASS without a word. The system's own code is not compared:
    that needs importing it, and the run records one fingerprint of all of its files, not each file. The suite
    folder is :func:`suite_folder`'s.
    """
    root = suite_folder(run)
    if root is None:
        return []

    def config_change(path: Path) -> str:
        return _config_change(run.config, parse_suite_config(read_yaml(path), path))

    def cases_change(path: Path) -> str:
        return _cases_change(run, path)

    out = []
    for name, change_of in ((SUITE_FILE, config_change), (run.config.cases, cases_change)):
        path = root / name
        try:  # the same bytes say the same: the file is read again only when they differ
            change = "" if file_digest(path) == run.manifest.digests.get(name) else change_of(path)
        except (OloproofError, OSError):
            continue
        if change:
            out.append((path, change))
    return out


#: Keys of oloproof.yaml that decide no verdict: the suite's name, the slice tables a report shows, how workers run.
_NO_VERDICT = frozenset({"name", "slices", "isolation"})


def _config_change(was: SuiteConfig, now: SuiteConfig) -> str:
    """How ``now`` (oloproof.yaml as it is) differs from ``was`` (a run's), in words: each criterion added, removed
    or configured otherwise, then each other key that differs but those of :data:`_NO_VERDICT`; the first three,
    and how many more."""
    mine = {ev.name: ev.settings() for ev in was.evaluators}
    theirs = {ev.name: ev.settings() for ev in now.evaluators}
    changes = [f"criterion {name} " + ("added" if name not in mine else "removed" if name not in theirs
                                       else "configured otherwise")
               for name in [*mine, *(n for n in theirs if n not in mine)] if mine.get(name) != theirs.get(name)]
    a, b = (config.model_dump(exclude={"evaluators", *_NO_VERDICT}) for config in (was, now))
    changes += [key for key in a if a[key] != b.get(key)]
    return ", ".join(changes[:3]) + (f" and {len(changes) - 3} more" if len(changes) > 3 else "")


def _cases_change(run: Run, path: Path) -> str:
    """How the case file at ``path`` differs from the source cases ``run`` ran (their ids, digests and clusters), in
    words: ``1 case(s) added (first 'ord-025'), 1 case(s) edited (first 'ord-001')``; "" when it holds the same."""
    cases = run.cases
    ran = cases[cases["transform"].isna()]
    mine = dict(zip(ran["case_id"].astype(str), zip(ran["digest"].astype(str), ran["cluster"].astype(str),
                                                    strict=True), strict=True))
    theirs = {case.id: (case.digest, case.cluster) for _, case in iter_cases(path)}
    both = [c for c in mine if c in theirs]
    # an unfinished run has not reached every case yet: those it has not recorded are no cases added since
    added = [c for c in theirs if c not in mine] if run.finished else []
    found = {"added": added, "removed": [c for c in mine if c not in theirs],
             "edited": [c for c in both if mine[c][0] != theirs[c][0]],
             "moved to another cluster": [c for c in both if mine[c][0] == theirs[c][0] and mine[c][1] != theirs[c][1]]}
    return ", ".join(f"{len(ids)} case(s) {what} (first {min(ids)!r})" for what, ids in found.items() if ids)


def reduced_is_clustered(rs: ReducedSums) -> bool:
    """Whether a criterion reduced with pass^k or pass@k gets a clustered (approximate) interval, the question
    the gate's rules 1 and 4 ask of it: a cluster holding more than one case
    (:func:`~oloproof_nb._core.stats.is_clustered_from_sums` of its cases per cluster), or values that can be
    fractional (a case with more than k rows), which get the monotone CR2 logit-t interval of
    :func:`~oloproof_nb._core.epochs.fractional_interval` whatever the passes. Its case runs always share
    clusters when k > 1, so :func:`run_is_clustered` is not the question: once reduced, a case is one value."""
    return is_clustered_from_sums(rs.sizes) or not rs.binary


def reduced_interval(rs: ReducedSums, release: ReleaseConfig,
                     decided_by: ReducedSums | None = None) -> tuple[Interval, str, bool]:
    """The interval of a reduced criterion, a note when the gate's bootstrap was replaced, and whether it
    counts as clustered (:func:`reduced_is_clustered`).

    ``decided_by``: the reduced sums of the whole criterion when ``rs`` holds some of its cases (a slice bin),
    so that the part gets the method the gate gives the criterion; ``rs`` itself when None."""
    whole = rs if decided_by is None else decided_by
    clustered = reduced_is_clustered(whole) or reduced_is_clustered(rs)
    if rs.binary and whole.binary:
        passes = np.rint(rs.sums).astype(np.int64)
        iv, note = sums_interval(ClusterSums(passes, rs.sizes, rs.all_missing), release, clustered)
        if not clustered:  # the mean of the same rows is clustered (a case's epochs): say why the method differs
            note = (f"{iv.method} on {iv.n} cases: once reduced, each case is one value of 0 or 1 and each "
                    "source cluster holds one case")
        return iv, note, clustered
    # fractional values get the monotone CR2 logit-t interval whatever ``method`` asks: say so, as for the mean
    note = BOOTSTRAP_REPLACED if release.method == "cluster_bootstrap" else ""
    return fractional_interval(rs.sums, rs.sizes, release.confidence, denominator=rs.denominator), note, True


def _reduced(run: Run, cfg: ReleaseConfig) -> dict[str, Any]:
    """Per criterion that release.yaml reduces with pass^k or pass@k: its reduced cluster sums."""
    wanted = {c: parse_reduce(cfg.reduce_of(c)) for c in run.criteria if cfg.reduce_of(c) != "mean"}
    if not wanted:
        return {}
    verdicts = run.verdicts
    repeated = repeated_rows(run, verdicts, wanted)  # one try of the agent counted once (a cache, a given epoch)
    counts = epoch_counts(verdicts[~repeated])
    groups = dict(tuple(counts.groupby("criterion", sort=False)))
    left = verdicts.loc[repeated, "criterion"].value_counts()
    return {c: replace(reduced_sums(groups[c], r), repeated=int(left.get(c, 0))) if c in groups else None
            for c, r in wanted.items()}


def _reduced_row(criterion: str, ev: Any, rs: Any, cfg: ReleaseConfig, checked: dict[str, bool],
                 stored: dict[str, list[str]], late: dict[str, str], waiting: int = 0,
                 run_clustered: bool = True) -> dict[str, Any]:
    """A gate row of a criterion reduced over epochs: each case one row of value pass^k or pass@k.

    ``n`` counts cases, ``passed`` the cases whose value is 1, ``missing`` the cases whose every epoch is
    missing; the rate is the mean of the values (see :func:`oloproof_nb.reduce_epochs`). With no case reduced,
    the row is clustered when the run is (``run_clustered``), as a ``mean`` criterion without rows.
    """
    text = cfg.reduce_of(criterion)
    row: dict[str, Any] = {
        "criterion": criterion, "evaluator": ev.type, "n": 0 if rs is None else rs.cases,
        "n_clusters": 0 if rs is None else int(rs.sizes.size), "passed": 0 if rs is None else rs.cases_at_one,
        "missing": 0 if rs is None else rs.all_missing, "rate": math.nan, "ci_low": math.nan, "ci_high": math.nan,
        "method": "", "failing_clusters": 0 if rs is None else rs.failing_clusters,
        "vacuous": criterion in stored or criterion in late, "reduce": text,
    }
    notes: list[str] = []
    clustered = run_clustered  # no case reduced: no interval, and the rules of the run's other criteria
    if rs is not None and rs.cases:
        interval, swapped, clustered = reduced_interval(rs, cfg)
        row.update(rate=interval.estimate, ci_low=interval.low, ci_high=interval.high, method=interval.method)
        notes += [n for n in (swapped, interval.reason) if n]
    if rs is not None and rs.repeated:
        notes.append(REPEATED_NOTE.format(n=rs.repeated))
    left_out = 0 if rs is None else rs.left_out
    if left_out:
        k = rs.reduction.k  # and what would decide it: the reason said only what was left out (review X2)
        notes.append(f"{left_out} case(s) with fewer than {k} rows left out of {text} (any of them may fail, so no "
                     f"verdict): each case needs {k} rows, one per epoch it was judged in (a fault criterion's in "
                     "the epochs that called its tool); run more epochs, or gate it with reduce: mean")
    sizes = rs.sizes if rs is not None and rs.cases and rs.binary else None  # fractional values: no CP bound
    return _decided(row, notes, cfg, clustered, ev, checked, late, left_out, waiting, sizes)


def _check_method_used(method: str | None, rows: list[dict[str, Any]]) -> None:
    """Raise when ``gate(method=)`` names an interval no criterion of the run gets (it would be ignored silently).

    Each row with an interval says (``_clustered``) whether it got a clustered one: a criterion of a run with
    epochs is clustered (a cluster holds several runs of a case), a pass^k one whose clusters hold one case each
    is not.
    """
    if method is None:
        return
    wants = method in CLUSTERED_METHODS
    used = {bool(row["_clustered"]) for row in rows if row["method"]}
    if used and wants not in used:
        every = ("an unclustered interval (one case per cluster); use clopper_pearson or wilson" if wants else
                 "a clustered interval (a cluster holds more than one case, or runs of one case in several "
                 "epochs); use cluster_t or cluster_bootstrap")
        raise ConfigError("gate(criteria=, confidence=, method=)", "method",
                          f"{method!r} is used by no criterion of this run: every criterion gets {every}")


def _decided(row: dict[str, Any], notes: list[str], cfg: ReleaseConfig, clustered: bool, ev: Any,
             checked: dict[str, bool], late: dict[str, str], left_out: int = 0, waiting: int = 0,
             sizes: np.ndarray | None = None) -> dict[str, Any]:
    """``row`` (its counts and interval filled in) with its threshold, verdict and reason (the notes after it).

    ``late``: criterion → a vacuous-check finding made by the gate (an idle fault, a threshold of 0);
    ``left_out``: cases a pass^k or pass@k criterion could not reduce (fewer than k rows); ``waiting``: case
    runs whose outcome receipt is ``waiting`` (they hold back an ``outcome_contract`` PASS); ``sizes``: the rows
    (or reduced cases) of each of the criterion's clusters, for :func:`_all_pass_note`.
    """
    criterion = row["criterion"]
    threshold = cfg.criteria.get(criterion)
    row["threshold"] = math.nan if threshold is None else float(threshold)
    verdict, reason = _decide(row, threshold, cfg, clustered, ev, checked, left_out)
    if reason == "interval_includes_threshold" and sizes is not None and threshold is not None:
        notes = [*notes, _all_pass_note(row, sizes, float(threshold), cfg.confidence, clustered)]
        notes = [note for note in notes if note]
    if verdict == "PASS" and waiting and ev.type == "outcome_contract":
        verdict, reason = "INSUFFICIENT_EVIDENCE", (
            f"{OUTCOME_WAITING}: {waiting} case run(s) declared a wait, so their outcomes are not known (no verdict "
            f"row: neither a failure nor a success); the rate is over the {row['n']} delivered")
    if criterion in late:
        notes.append(late[criterion])
    row["verdict"] = verdict
    row["reason"] = "; ".join([reason, *notes] if reason else notes)
    row["_clustered"] = clustered  # read by _check_method_used; not a column of the table
    return row


def _all_pass_note(row: dict[str, Any], sizes: np.ndarray, threshold: float, confidence: float,
                   clustered: bool) -> str:
    """What would decide a criterion whose every row passes and whose interval still holds ``threshold``, else "".

    Its lower bound is then the all-pass bound (α/2)^(1/n_min), n_min = (Σm)²/Σm² over its clusters of sizes
    ``sizes`` (Clopper–Pearson, and ``cluster_t``'s fallback when every row agrees), so only a larger n_min
    clears the threshold: at least ln(α/2)/ln(threshold), the least whole n whose bound as the gate computes it
    reaches it (:func:`_least_all_pass_n`; README section 6, "How big must a suite be?"). Before,
    the reason said ``interval_includes_threshold`` alone, and a team whose every case passed read no more
    (review X2). Other methods (``wilson``) have another all-pass bound: no note.
    """
    if not (row["n"] and row["passed"] == row["n"] and row["method"] in ("clopper_pearson", "cluster_t")):
        return ""
    size = n_min(np.asarray(sizes))
    unit = "row" if row.get("reduce", "mean") == "mean" else "case"  # pass^k / pass@k: n counts reduced cases
    # every digit of the threshold (:g showed 0.9999995 as 1), and n_min rounded down to 2 decimals (.4g showed
    # 1,163.6 as 1164 beside "needs n_min of at least 1164", and 12,345.6 as 1.235e+04; review F47)
    shown = yaml_number(threshold)
    if threshold >= 1:
        return f"every {unit} passes, and no number of {unit}s gives a lower bound of {shown}: lower the threshold"
    half = (1 - confidence) / 2
    need = _least_all_pass_n(threshold, confidence)
    if clustered:
        effective = f"{math.floor(size * 100 + 1e-9) / 100:,.2f}".rstrip("0").rstrip(".")
        return (f"every {unit} passes: its clusters count as n_min = {effective} equal-sized ones, and no lower "
                f"bound is above {half:g}^(1/n_min); {shown} needs n_min of at least {need:,} (more clusters, or "
                "clusters closer in size; README section 6, How big must a suite be?)")
    return (f"every {unit} passes: with {row['n']:,} independent {unit}s no lower bound is above "
            f"{half:g}^(1/{row['n']}); {shown} needs at least {need:,} (README section 6, How big must a suite be?)")


def _least_all_pass_n(threshold: float, confidence: float) -> int:
    """The least whole n whose all-pass lower bound, as the gate computes it (:func:`clopper_pearson` of n in n,
    (α/2)^(1/n)), reaches ``threshold`` (0 < ``threshold`` < 1).

    ln(α/2)/ln(threshold) rounded up is that n in exact arithmetic, but the gate decides on the float bound: at
    confidence 0.68 and threshold 0.4 the decimal n is 2 and the bound of 2 is 0.39999999999999997, so 2 passing
    rows stay ``interval_includes_threshold`` while the note said 0.4 needed 2 (review F47); a threshold one float
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


def _missing_why(verdicts: pd.DataFrame, criterion: str) -> str:
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
    says where each row's reason is); ``""`` when no row gives one.

    The ``all_missing`` reason of the gate (:func:`_missing_why`) and of a comparison quote it: what would make the
    criterion decide is in its rows' reasons."""
    text = reasons.fillna("").astype(str)
    # the commonest reason given: rows without one (NaN, "") outnumbering it hid it behind "every row is missing"
    counts = text[text != ""].value_counts(sort=True)
    if counts.empty:
        return ""
    top, n, more = str(counts.index[0]), int(counts.iloc[0]), len(counts) - 1
    blank = len(text) - int(counts.sum())
    if not more and not blank:
        return f'"{top}" (all {n:,} rows)'
    others = [f"{more:,} other reason{'s' if more != 1 else ''}"] if more else []
    others += [f"{blank:,} with none"] if blank else []
    return f'"{top}" ({n:,} of {len(text):,} rows; {", ".join(others)}, each in {where})'


def _waiting(run: Run) -> int:
    """Case runs whose outcome receipt is ``waiting`` (0 without an ``outcome_contract`` evaluator: the
    receipts are not read)."""
    if not any(ev.type == "outcome_contract" for ev in run.config.evaluators):
        return 0
    receipts = run.receipts
    keys = [c for c in ("run_id", "case_id", "epoch") if c in receipts.columns]
    return int(len(receipts.loc[receipts["status"] == "waiting", keys].drop_duplicates()))


def _content_unchecked(run: Run) -> str:
    """The note for an ``outcome_contract`` PASS when no contract of the run's expected outcomes checks the
    artifact's content (``check_coverage`` 0), else ``""`` (also without an ``outcome_contract`` evaluator).

    Such a PASS says every promised file was there and fresh, nothing of what it holds: before, it read as any
    other PASS (review R18: 40 empty files, ``gate: PASS``)."""
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


#: How :func:`approximate_note` ends: :func:`bare_approximate` cuts the reason up to it.
_APPROXIMATE_END = "`allow_approximate_methods: true` decides them (README section 6)"


def approximate_note(where: str, clustered: str = "the run is clustered") -> str:
    """Why a clustered run's gated criteria are :data:`APPROXIMATE_NOT_ALLOWED` and which key decides them, ``where``
    naming the release settings (``release.yaml``, ``the run's release.yaml (stored when …)``); ``clustered`` says
    what is (``the paired runs are clustered`` in a comparison).

    One text, worded once: the gate's and the comparison's reason after its code (:func:`approximate_reason`) and
    the note ``oloproof gate`` and ``oloproof compare`` print once under their tables (where ``where`` says how to
    give settings with ``--release``).
    """
    return (f"{clustered} (a case's epochs, a copy and its source, or cases given one cluster share a "
            f"cluster), and {where} does not allow clustered (approximate) intervals: {_APPROXIMATE_END}")


def approximate_where(release: ReleaseLike | None, stored: bool = True,
                      give: str = "op.gate(run, release=...) to gate this run", run: str = "the run") -> str:
    """The release settings an :func:`approximate_note` names: a path as given; the settings given in code; for
    None the run's own release.yaml, or the defaults when it was made without one (``stored`` False). ``give``
    says how to give other settings (``--release to gate this run`` for the commands) and ``run`` whose release.yaml
    it is (``the candidate run`` in a comparison).

    One wording for the library's reason (:func:`approximate_reason`), ``oloproof gate``, ``oloproof compare`` and
    ``oloproof report``, which say it once under their tables.
    """
    give = f"give one that does with {give}"
    if isinstance(release, (str, os.PathLike)):
        return str(release)
    if release is not None:
        return "the release configuration given"
    if stored:
        return f"{run}'s release.yaml (stored when it started: {give}, or set it for the next run)"
    return f"the default release configuration ({run} has no release.yaml: {give})"


def approximate_reason(release: ReleaseLike | None, stored: bool = True,
                       give: str = "op.gate(run, release=...) to gate this run", run: str = "the run",
                       clustered: str = "the run is clustered") -> str:
    """The reason of a gated criterion of a clustered run whose release settings do not allow approximate methods:
    :data:`APPROXIMATE_NOT_ALLOWED`, then :func:`approximate_note` naming the settings (:func:`approximate_where`);
    ``clustered`` says what is clustered (``op.compare``: the paired runs).

    The code alone told a library user nothing of the key to set, where ``oloproof gate`` named it under its table.
    """
    return f"{APPROXIMATE_NOT_ALLOWED}: {approximate_note(approximate_where(release, stored, give, run), clustered)}"


def bare_approximate(reasons: pd.Series) -> pd.Series:
    """``reasons`` with each :func:`approximate_reason` cut back to its code (what follows a ``;`` kept): for a
    table whose note says the key once, below it (``oloproof gate``, ``oloproof compare``), not once a row.

    The cut ends where the note does, not at the first ``;``: a ``--release`` path holding one (``a;b/release.yaml``)
    left ``approximate_methods_not_allowed;b/release.yaml does not allow …`` in the table.

    Examples
    --------
    >>> bare_approximate(pd.Series([approximate_reason("a;b/release.yaml") + "; 3 epochs", "all_missing"])).tolist()
    ['approximate_methods_not_allowed; 3 epochs', 'all_missing']
    """
    cut = f"(?s)^{re.escape(APPROXIMATE_NOT_ALLOWED)}: .*?{re.escape(_APPROXIMATE_END)}"
    return reasons.str.replace(cut, APPROXIMATE_NOT_ALLOWED, regex=True)


def _decide(row: dict[str, Any], threshold: float | None, cfg: ReleaseConfig, clustered: bool, ev: Any,
            checked: dict[str, bool], left_out: int = 0) -> tuple[str, str]:
    if threshold is None:
        return "REPORT_ONLY", ""
    if clustered and not cfg.allow_approximate_methods:  # what the reason says after the code: gate() adds it
        return "INSUFFICIENT_EVIDENCE", APPROXIMATE_NOT_ALLOWED
    if row["n"] == 0 and not left_out:
        return "INSUFFICIENT_EVIDENCE", "no_evidence"
    if row["missing"] == row["n"] and not left_out:
        return "INSUFFICIENT_EVIDENCE", "all_missing"
    if left_out:  # a case not reduced may be the one that fails: the interval leaves it out, so no verdict
        return "INSUFFICIENT_EVIDENCE", "too_few_epochs"
    if clustered and row["n_clusters"] < cfg.min_clusters:  # the numbers too: "too few" for a suite of 16 cases
        return "INSUFFICIENT_EVIDENCE", (f"too_few_clusters: its rows fall in {row['n_clusters']} clusters, "
                                         f"min_clusters is {cfg.min_clusters}")
    transform = getattr(ev, "transform", None)
    if ev.type == "metamorphic_relation" and not checked.get(str(transform), False):
        return "INSUFFICIENT_EVIDENCE", "transform_not_checked"
    strict = row["method"] == "cluster_bootstrap"  # resampled ratios tie with round thresholds: a tie is no PASS
    if row["ci_low"] > threshold or (row["ci_low"] == threshold and not strict):
        return "PASS", "ci_low_at_or_above_threshold" if not strict else "ci_low_above_threshold"
    if row["ci_high"] < threshold:
        return "FAIL", "ci_high_below_threshold"
    return "INSUFFICIENT_EVIDENCE", "interval_includes_threshold"
