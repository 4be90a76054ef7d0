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

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from .._config.cases import repeats_note
from .._config.release import (
    ReleaseConfig,
    check_reductions,
    criterion_hint,
    load_release,
    parse_release,
    revalidated,
)
from .._core.epochs import fractional_interval, parse_reduce
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
from ..errors import ConfigError, OloproofError, VacuousCheckWarning, format_loc, quote, warn_at_caller
from .baseline import Baseline, as_baseline, check_baseline, with_idle_columns
from .columns import GATE
from .gate_drift import drift_sentences, release_now, release_unreadable, warn_release_drift
from .gate_findings import by_criterion, late_findings, with_findings, zero_thresholds
from .gate_reasons import all_pass_note, content_unchecked, missing_why, too_few_clusters
from .gate_settings import APPROXIMATE_NOT_ALLOWED, ReleaseLike, approximate_reason, weaker_settings
from .inspect_log import added_scores, is_inspect_run, task_criteria, unrun_samples
from .inspect_settings import added_hint, split_hint
from .reduce import REPEATED_NOTE, ReducedSums, epoch_counts, reduced_sums, repeated_rows
from .run import Run, as_run, case_run_unit, expected_case_runs
from .validity import broken_copies, checked_transforms, unscored_copies

__all__ = ["Gate", "gate", "GATE_COLUMNS", "ClusterSums", "criterion_sums", "sums_interval", "resolve_release",
           "NO_CRITERIA", "run_is_clustered", "reduced_is_clustered", "reduced_interval", "no_decision",
           "vacuous_findings", "fewer_epochs", "FEWER_EPOCHS", "EDITED", "mixed_pool", "unfinished_runs"]

GATE_COLUMNS = GATE.names
#: ``Gate.reason`` when release.yaml lists no criterion.
NO_CRITERIA = "no_criteria: nothing was gated"
OUTCOME_WAITING = "outcome_waiting"
#: What ``Gate.reason`` starts with when the run tried each case fewer times than its oloproof.yaml's ``epochs``.
FEWER_EPOCHS = "fewer_epochs"
#: What ``Gate.reason`` starts with when a frame of the run was set in the session (``run.verdicts = frame``), or its
#: manifest edited in place (``run.manifest.n_cases = …``).
EDITED = "edited_frames"


def no_decision(run: Run) -> str:
    """Why ``run`` can have no release decision, or ``""`` when it can: it did not finish, or it lost case runs.

    A partial run's failing cases may be the ones not yet run, and a finished run folder whose
    ``cases.jsonl`` lost records (a truncated copy, an edited artifact) would be judged on the records
    left. A Run one of whose frames was set in the session (``run.verdicts = frame``: :attr:`Run.replaced`,
    ``edited_frames``) is gated on that frame, which the run folder does not hold: failing rows dropped in a
    notebook PASSed there while ``oloproof gate`` of the same folder BLOCKed; so is one whose manifest
    was edited in place (:attr:`Run.manifest_edits`: a ``finished_at`` given to an unfinished run, a ``n_cases``
    lowered to the records a truncated journal holds, an ``inspect_logs`` key that skips the count, a system version
    or fingerprint made a pooled run's, ``epochs``: each PASSed). A pooled run needs every
    one of its runs whole, and made by one system (``mixed_systems``: its runs' ``version``, code fingerprint or
    settings fingerprint differ, or none records a code fingerprint): pooled with runs of the version before it, a
    regressed agent's rows were outnumbered and the pool passed; and all of them runs of the same cases
    (``mixed_cases``: another set of case ids and digests), since otherwise the cases of the older case file
    outweigh the others. (An Inspect AI log is checked against its own sample count when it is read.)
    """
    if run.replaced:  # a notebook's frame: the run folder is the evidence, gated the same way tomorrow
        names = ", ".join(f"run.{name}" for name in run.replaced)
        return (f"{EDITED}: {names} set in this session (run.{run.replaced[0]} = …), so the table is of that frame, "
                "not of the run's records, and has no release decision; load the run again (op.load_run) for its own")
    edits = run.manifest_edits
    if edits:  # what the checks below read: an unfinished run given a finished_at PASSed
        names = ", ".join(f"run.{name}" for name in edits)
        return (f"{EDITED}: {names} edited in this session, so the table is of a run that is not the one its folder "
                "holds, and has no release decision; load the run again (op.load_run) for its own")
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
    expected = expected_case_runs(run)
    if not run.finished:
        unit = case_run_unit(run)
        where = " in all" if len(run.runs) > 1 else ""
        return (f"unfinished: {unfinished_runs(run)} did not finish ({run.n_cases} of {expected} {unit} recorded"
                f"{where}), so it has no release decision")
    if not is_inspect_run(run) and run.n_cases != expected:
        lost, who = run, "the run"
        short = [r for r in run.runs if r.n_cases != expected_case_runs(r)]
        if len(run.runs) > 1 and short:  # the pooled run whose cases.jsonl it is ("its cases.jsonl" named none)
            lost, who = short[0], f"run {short[0].run_id} of the {len(run.runs)} pooled"
            expected = expected_case_runs(lost)
        which = "records are missing" if lost.n_cases < expected else "it holds more records than the manifest says"
        return (f"incomplete: {who} finished with {expected} case runs, but its cases.jsonl holds "
                f"{lost.n_cases}: {which} (a truncated or edited copy of the folder?), "
                "so it has no release decision")
    mixed = _other_cases(run)
    if mixed:  # a case counts once per run holding it: the cases of the older case file outweighed the new ones
        return (f"mixed_cases: {mixed}, so the pooled rate weighs a case by the runs that hold it and is the rate of "
                "no one case file; it has no release decision: gate each run, or pool runs of one case file")
    return ""


def unfinished_runs(run: Run) -> str:
    """Which run of ``run`` did not finish, in words: ``the run``, or of a pooled run ``run <id> of the <n> pooled``
    (``(and <m> more)`` when others did not either) — which of them to resume ("the run" named none).
    As :func:`no_decision` and the notebook view of the run say it; for a run that did not finish (``run.finished``
    false)."""
    if len(run.runs) < 2:
        return "the run"
    open_runs = [r.run_id for r in run.runs if r.manifest.finished_at is None]
    return f"run {open_runs[0]} of the {len(run.runs)} pooled" + (
        f" (and {len(open_runs) - 1} more)" if len(open_runs) > 1 else "")


def fewer_epochs(run: Run) -> str:
    """Why ``run`` has no release decision for having tried each case fewer times than its suite asks, or ``""``.

    ``epochs: k`` in oloproof.yaml defines the suite's criteria over k tries of every case in a run; ``op.run(suite,
    epochs=)`` and ``oloproof run --epochs`` override it, and a run of fewer tries measures less than the suite does:
    a desk that acts on a request the first time and answers "already done" on every later try passed
    ``state_matches`` 40 of 40 with ``--epochs 1`` (gate PASS, exit 0, not a word) where the suite's own 3 epochs give
    40 of 120 (FAIL). Its tables stay, as an unfinished run's do. Each run of a pool
    (:func:`op.load_runs <oloproof_nb.load_runs>`) must hold its suite's epochs: three 1-epoch runs are three first
    tries, each by a fresh system, and the same desk passed them 120 of 120. The suite's epochs of a pool are the
    most any of its runs was made with: three runs made while oloproof.yaml asked for ``epochs: 1`` pooled with one
    made after it was raised to 3 read 160 of 240 first and later tries (PASS at 0.6, not a word, in the order that
    put the 3-epoch run first) where that run alone gives 40 of 120. An Inspect AI log has no oloproof.yaml: its
    epochs are the log's.
    """
    if is_inspect_run(run):
        return ""
    members = run.runs
    asking = max(members, key=lambda member: member.config.epochs)  # the first of the most, in the pool's order
    asked = asking.config.epochs
    short = next((member for member in members if member.manifest.epochs < asked), None)
    if short is None:
        return ""
    held = short.manifest.epochs
    tries = "once" if held == 1 else f"{held} times"
    which = "the run" if len(members) == 1 else f"run {short.run_id} of the {len(members)} pooled"
    if held == short.config.epochs:  # it ran as its own oloproof.yaml asked: the suite's epochs were raised since
        how = (f"as the oloproof.yaml it was made with asked, where run {asking.run_id}'s asks for epochs: {asked} "
               "(the suite's epochs changed between the runs)")
    else:
        how = (f"(epochs given to op.run(epochs=) or oloproof run --epochs), where the suite's oloproof.yaml asks for "
               f"epochs: {asked}")
    return (f"{FEWER_EPOCHS}: {which} tried each case {tries} {how}; a case that fails only on a later try is not "
            "seen, so it has no release decision: run the suite with its own epochs")


def _other_cases(run: Run) -> str:
    """Which runs of a pooled ``run`` ran other cases than its first run (another set of case ids and digests: the
    case file edited, or cases added or removed, between them), in words; "" when they all ran the same.

    Pooled, a case counts once in each run that holds it: three runs of a case file pooled with one run of the
    file with ten failing cases added put those ten at a quarter of the weight of the others, and a system that
    FAILs the new file alone (40 of 55) passed the pool (160 of 175) at 0.85.
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


def mixed_pool(run: Run) -> str:
    """Why the rows of a pooled ``run`` are of no one system or case file (the gate's ``mixed_systems: …`` or
    ``mixed_cases: …``, without what it makes of it), or ``""``: one run, or runs of one system and case file.

    For the tables that pool rows without a decision (:func:`~oloproof_nb._analysis.slices.slice_table`), which
    say so rather than show one rate of two agents.
    """
    mixed = _other_system(run)
    if mixed:
        return f"mixed_systems: {mixed}"
    mixed = _other_cases(run)
    return f"mixed_cases: {mixed}" if mixed else ""


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
        was gated``, or the run has no release decision (``unfinished: …``, ``incomplete: …``, ``edited_frames: …``, see
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
        nothing to compare with (an Inspect AI log, a run that stored no settings gated by no criterion).
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
    Criteria ``release`` or ``criteria`` name must be criteria of the run (one the run's stored settings name and
    none of its checks judges is kept: the gate gives it a ``no_evidence`` row).
    """
    if release is None and (criteria, confidence, method) == (None, None, None):
        cfg = run.release if run.release is not None else ReleaseConfig()
        check_reductions(cfg, run.epochs, run.suite_root / "release.yaml" if run.suite_root else "release.yaml",
                         run.run_id)
        return cfg
    if release is None:
        cfg, file = (run.release if run.release is not None else ReleaseConfig()), "release"
    elif isinstance(release, ReleaseConfig):  # validated again: model_copy(update=) skips the validators
        cfg, file = revalidated(release, "release"), "release"
    elif isinstance(release, dict):
        cfg, file = parse_release(release, "release"), "release"
    elif isinstance(release, (str, os.PathLike)):
        cfg, file = load_release(release), str(release)
    else:
        raise OloproofError(f"release must be a ReleaseConfig, a dict or the path of a release.yaml, got "
                            f"{type(release).__name__}")
    if (criteria, confidence, method) != (None, None, None):
        cfg, file = _merged(cfg, criteria, confidence, method), "gate(criteria=, confidence=, method=)"
    # the run's own settings (release None) may gate a criterion none of its checks judges: a no_evidence row, as
    # without the keywords; only a name the keywords add is refused (gate(run, confidence=0.9) named the stored
    # criterion as the caller's mistake, where gate(run) BLOCKs on it)
    named = cfg.criteria if release is not None else (criteria or {})
    unknown = [name for name in named if name not in run.criteria]
    if unknown:
        hint = f" ({split_hint(unknown[0])})" if unknown[0] in task_criteria(run) else ""
        if unknown[0] in added_scores(run):  # scores a person added after the eval (warned when the log was read)
            hint = f" ({added_hint(unknown[0])})"
        hint = hint or criterion_hint(unknown[0], run.criteria)
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
    return _ids_repeat(run.cases["cluster"]) or any(is_clustered_from_sums(s.rows) for s in sums)


def _ids_repeat(clusters: pd.Series) -> bool:
    """:func:`~oloproof_nb._core.stats.is_clustered` of a run's ``cluster`` column, its rows per id counted by
    ``pd.factorize`` (in C): ``is_clustered`` made a Python string of each id, checked each for a missing marker
    and counted them in a ``Counter``, 0.06 s of CPU at 250,000 case runs and about a tenth of the gate's own.
    A column with a missing id, or ids ``factorize`` cannot hash, goes to ``is_clustered``, which
    refuses the one and counts the other as it did."""
    if not clusters.hasnans:
        try:
            codes, _ = pd.factorize(clusters, sort=False)
        except TypeError:  # unhashable ids (a frame assigned by hand): counted by their codes there
            return is_clustered(clusters)
        return is_clustered_from_sums(np.bincount(codes))
    return is_clustered(clusters)


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


def vacuous_findings(run: Run) -> dict[str, list[str]]:
    """Every check of ``run`` that cannot fail as configured, whatever the release settings: criterion → its
    findings (the manifest's, then :func:`late_findings`), as :attr:`Gate.findings` gives them; empty for none."""
    rows = {key[0]: value.n for key, value in criterion_sums(run.verdicts).items()}
    return by_criterion(run, late_findings(run, rows))


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
        with the run, which decide (:func:`~.gate_drift.label_drift`); and when the suite folder's oloproof.yaml
        or case file now asks for other judgements than the run recorded: a check configured otherwise, a case
        added, removed or edited (:func:`~.gate_drift.suite_drift`; the run's verdicts decide). The suite folder
        is the one the run folder sits in, else the one it was made from (:func:`suite_folder`).
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
    # the run's verdicts were judged on its cases, by its checks; its labels decide which copies are scored
    changed = drift_sentences(run, f"run {run.run_id}",
                              "this gate judges the cases and checks the run recorded; to judge the agent by the suite "
                              "as it is now, run the suite again",
                              "this gate uses the run's (they decide which copies are scored and whether the "
                              "transform is checked); to judge the agent by the labels as they are now, run the suite "
                              "again")
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
    late = with_findings(late_findings(run, {c: s.n for c, s in sums.items()}),  # vacuous checks found only now
                          zero_thresholds(cfg, run.criteria))
    for message in late.values():
        warn_at_caller(VacuousCheckWarning(message))
    findings = [m for found in by_criterion(run, late).values() for m in found]
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
    rows += [_unjudged_row(name, cfg, clustered, run) for name in cfg.criteria if name not in run.criteria]
    repeated = repeats_note(run.manifest.suite_config.repeated)  # one case under two ids: counted twice
    unchecked = content_unchecked(run)
    for row in rows:
        if row["reason"] == APPROXIMATE_NOT_ALLOWED or row["reason"].startswith(f"{APPROXIMATE_NOT_ALLOWED};"):
            # the key that decides it, right after the code, as all_missing's why below
            row["reason"] = row["reason"].replace(APPROXIMATE_NOT_ALLOWED,
                                                  approximate_reason(release, run.release is not None), 1)
        if row["reason"] == "all_missing" or row["reason"].startswith("all_missing;"):
            # right after the code, where the user reads first: why the rows are missing says what would decide it
            why = missing_why(run.verdicts, row["criterion"])
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
    table.attrs["confidence"] = cfg.confidence  # the intervals' level, for a plot of the table alone
    listed = table[table["verdict"] != "REPORT_ONLY"]
    blocker = unwhole or ("" if len(listed) else NO_CRITERIA) or fewer_epochs(run)
    overall = "PASS" if not blocker and bool((listed["verdict"] == "PASS").all()) else "BLOCK"
    relaxed, than = weaker_settings(run, cfg, rows, found)
    unscored = unscored_copies(run)
    return Gate(table=table, verdict=overall, release=cfg, clustered=clustered, n_source_clusters=n_source,
                reason=blocker, findings=tuple(findings), unscored=tuple(unscored),
                unscored_broken=tuple(broken_copies(run, unscored)),
                relaxed=tuple(relaxed), weaker_than=than, drift=tuple(drifted))


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
    groups = dict(tuple(counts.groupby("criterion", sort=False, observed=True)))
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
        k = rs.reduction.k  # and what would decide it: the reason said only what was left out
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
    (or reduced cases) of each of the criterion's clusters, for :func:`all_pass_note`.
    """
    criterion = row["criterion"]
    threshold = cfg.criteria.get(criterion)
    row["threshold"] = math.nan if threshold is None else float(threshold)
    verdict, reason = _decide(row, threshold, cfg, clustered, ev, checked, left_out)
    if reason == "interval_includes_threshold" and sizes is not None and threshold is not None:
        notes = [*notes, all_pass_note(row, sizes, float(threshold), cfg.confidence, clustered)]
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


def _unjudged_row(criterion: str, cfg: ReleaseConfig, clustered: bool, run: Run) -> dict[str, Any]:
    """The row of a criterion the run's release settings name and none of its checks judges: no rows, so
    ``INSUFFICIENT_EVIDENCE`` (``no_evidence``; ``approximate_methods_not_allowed`` first, as for any criterion).

    A release given to the gate is refused for such a name (:func:`resolve_release`), but the settings the run
    stored are not checked against its checks there: a run of a suite whose evaluators were narrowed in code
    (``dataclasses.replace(suite, config=...)`` before ``op.run``) stored release.yaml's five criteria beside one
    check, and its gate left the other four out of the table: ``gate: PASS — exit 0: the 1 gated criterion
    passes``)."""
    row: dict[str, Any] = {
        "criterion": criterion, "evaluator": "", "n": 0, "n_clusters": 0, "passed": 0, "missing": 0,
        "rate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "method": "", "failing_clusters": 0,
        "vacuous": False, "reduce": cfg.reduce_of(criterion),
    }
    checks = ", ".join(run.criteria) or "(none)"
    note = (f"no check of run {run.run_id} judges it (its criteria: {checks}), though its release settings gate it: "
            "was the suite's oloproof.yaml changed in code before op.run? Run the suite as its files are")
    return _decided(row, [note], cfg, clustered, None, {}, {})


def _waiting(run: Run) -> int:
    """Case runs whose outcome receipt is ``waiting`` (0 without an ``outcome_contract`` evaluator: the
    receipts are not read)."""
    if not any(ev.type == "outcome_contract" for ev in run.config.evaluators):
        return 0
    receipts = run.receipts
    keys = [c for c in ("run_id", "case_id", "epoch") if c in receipts.columns]
    return int(len(receipts.loc[receipts["status"] == "waiting", keys].drop_duplicates()))


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
        return "INSUFFICIENT_EVIDENCE", too_few_clusters(row["n_clusters"], cfg.min_clusters)
    transform = getattr(ev, "transform", None)
    if ev.type == "metamorphic_relation" and not checked.get(str(transform), False):
        return "INSUFFICIENT_EVIDENCE", "transform_not_checked"
    strict = row["method"] == "cluster_bootstrap"  # resampled ratios tie with round thresholds: a tie is no PASS
    if row["ci_low"] > threshold or (row["ci_low"] == threshold and not strict):
        return "PASS", "ci_low_at_or_above_threshold" if not strict else "ci_low_above_threshold"
    if row["ci_high"] < threshold:
        return "FAIL", "ci_high_below_threshold"
    return "INSUFFICIENT_EVIDENCE", "interval_includes_threshold"
