"""What a comparison says of how its two runs differ beside their verdicts (:func:`comparison_notes`): the release
settings that decide it (:func:`rule_changes`, :func:`relaxed_rule`), checks given other metadata, criteria judged
in one run only, validity labels, copies no criterion scores, vacuous checks, repeated cases and unchecked
transforms.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import pandas as pd

from .._config.cases import repeats_note
from .._config.release import ReleaseConfig, flat_settings, relaxed_settings, setting_change
from .._core.bootstrap import PAIRED_BOOTSTRAP_MIN_CLUSTERS
from .._core.canonical import canonical_json
from .._version import __version__
from .gate_reasons import abrupt_ends, abrupt_ends_note
from .gate_settings import ReleaseLike, relaxed_note
from .run import Run, stored_pair_labels
from .run_checks import label_difference
from .validity import broken_copies, checked_transforms, unscored_copies, unscored_note

__all__ = ["rule_changes", "relaxed_rule", "comparison_notes", "metadata_changes", "unchecked_criteria"]

#: The settings of release.yaml that decide a comparison (a criterion's gate threshold does not; nor does
#: ``unclustered_method``: the paired interval is always the clustered one). ``method`` and ``bootstrap`` decide
#: only once the paired bootstrap is validated at some number of clusters (:data:`PAIRED_BOOTSTRAP_MIN_CLUSTERS`).
_RULE_KEYS = ("regression", "confidence", "min_clusters", "allow_approximate_methods", "reductions") + (
    ("method", "bootstrap") if math.isfinite(PAIRED_BOOTSTRAP_MIN_CLUSTERS) else ())


def rule_changes(base: ReleaseConfig | None, candidate: ReleaseConfig | None) -> list[str]:
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


def relaxed_rule(base: Run, candidate: Run, cfg: ReleaseConfig, clustered: bool, *,
                 own: ReleaseConfig | None = None) -> list[str]:
    """The settings of ``cfg`` weaker than ``own`` (default: the base run's stored release settings, the defaults
    when the base had no release.yaml, as :func:`rule_changes` reads it; the suite's release.yaml as it is now for
    :attr:`~.compare.Comparison.relaxed`'s second look; :func:`~oloproof_nb._config.release.relaxed_settings`),
    among those that decide a comparison (:data:`_RULE_KEYS`; ``allow_approximate_methods`` only when
    ``clustered``). ``regression.criteria`` is read among the criteria the base run judges, and left unset stands
    for all of them (``cfg`` unset compares those both runs judge and holds back the others, ``not_in_both_runs``).

    ``oloproof compare A B --release loose.yaml`` with ``regression: {margin: 0.99}`` said ``NO_REGRESSION — exit 0:
    every listed criterion's interval lies above -margin``; only the header's ``margin 0.99`` told it from the
    runs' own 0.02, by which the same runs are INSUFFICIENT_EVIDENCE. A base run without release.yaml was measured
    against the candidate's instead: the candidate's own file, margin 0.9, given with ``--release`` read
    NO_REGRESSION with no word of it, where the default rule says ``release_changed``. And ``own``'s
    criteria were read among those both runs judge: a check the candidate's suite dropped (the one its system now
    fails) fell out of the base run's own list, so the candidate's file, listing the rest, given with ``--release``
    read NO_REGRESSION, exit 0, as no weaker rule.
    """
    if own is None:
        own = base.release if base.release is not None else ReleaseConfig()

    def every(c: ReleaseConfig) -> ReleaseConfig:
        judged = base.criteria
        listed = [name for name in (c.regression.criteria or judged) if name in judged]
        return c.model_copy(update={"regression": c.regression.model_copy(update={"criteria": listed})})

    heads = [h for h in _RULE_KEYS if clustered or h != "allow_approximate_methods"]
    return relaxed_settings(every(own), every(cfg), heads)


def comparison_notes(base_run: Run, cand_run: Run, release: ReleaseLike | None, relaxed: list[str], than: str,
                     changed: dict[str, str], paired: pd.DataFrame, vacuous: dict[str, dict[str, list[str]]],
                     common: list[str], unpaired: pd.DataFrame) -> list[str]:
    """The notes of a comparison (:attr:`~.compare.Comparison.notes`), in order.

    Parameters
    ----------
    base_run, cand_run : Run
        The two runs.
    release : ReleaseConfig, dict, path or None
        The settings given to :func:`~.compare.compare` (None: the runs' own), named in the relaxed note.
    relaxed, than : list of str, str
        The settings of the rule used weaker than ``than``'s (:func:`relaxed_rule`); empty for none.
    changed : dict of str to str
        Criterion → how its check differs in the two runs (:func:`~.run_checks.changed_checks`,
        :func:`metadata_changes`).
    paired : pandas.DataFrame
        The paired case runs (:func:`~.compare_pairing.pair_cases`).
    vacuous : dict
        ``{"base": …, "candidate": …}``: each run's :func:`~.gate.vacuous_findings`.
    common : list of str
        The criteria both runs judge.
    unpaired : pandas.DataFrame
        The unpaired case runs (:data:`~.compare_pairing.UNPAIRED`).

    Returns
    -------
    list of str
        The relaxed rule (:func:`~.gate_settings.relaxed_note`), criteria judged in one run only or by other
        checks (:func:`_config_notes`), validity labels (:func:`_labels_note`, else :func:`_unscored_notes`), repeated
        cases, vacuous checks, abrupt ends of either run's process and the cases left out.

    Examples
    --------
    >>> import oloproof_nb as op
    >>> op.compare("runs/v1", "runs/v2").notes                        # doctest: +SKIP
    """
    given = (str(release) if isinstance(release, (str, os.PathLike)) else "the settings given" if release is not None
             else "the settings stored with the runs" if cand_run.release is not None
             else "the default settings (the runs were made without release.yaml)")
    notes_all = [relaxed_note(relaxed, given, verb="compared", than=than)] if relaxed else []
    notes_all += _config_notes(base_run, cand_run, changed)
    relabeled = label_difference(stored_pair_labels(base_run), stored_pair_labels(cand_run),
                                 (f"in the base run {base_run.run_id}", f"in the candidate {cand_run.run_id}"))
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
    return notes_all


def _labels_note(base: Run, candidate: Run, relabeled: str, paired: set[str]) -> str:
    """What a reader of a comparison of runs made with different validity labels should know (``relabeled``:
    :func:`~.run_checks.label_difference`): each run left out the copies its own labels held invalid (once its transform
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


def metadata_changes(base: Run, candidate: Run, paired: pd.DataFrame, changed: dict[str, str]) -> dict[str, str]:
    """The ``python`` checks both runs judge (and ``changed`` does not name) that were given another ``metadata``
    for a paired case, each with how: a check is called with the whole case, and its ``metadata`` is where a
    suite keeps what a check compares with (the outputs a reply must mention, a benchmark's ground truth), but the
    case digest leaves ``metadata`` out, so the case stays paired. A candidate's case file that wrote its own
    wrong answers into the metadata of the cases it now fails read NO_REGRESSION. Other checks are
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


def _one_release(releases: tuple[str, str]) -> str:
    """Which run to make again, and with which release, for two runs made by ``releases`` (base, candidate): the one
    the installed release did not make, with it; both, with one release, when it made neither. "Run the base again
    with this release" named neither release when the base was the newer run.

    Examples
    --------
    >>> _one_release(("0.0.1", __version__)) == f"run the base again with the installed oloproof_nb {__version__}"
    True
    >>> _one_release(("0.0.1", "0.0.2")) == f"run both again with one release (oloproof_nb {__version__} is installed)"
    True
    """
    for run, other in (("base", releases[1]), ("candidate", releases[0])):
        if other == __version__:
            return f"run the {run} again with the installed oloproof_nb {__version__}"
    return f"run both again with one release (oloproof_nb {__version__} is installed)"


def _config_notes(base: Run, candidate: Run, changed: dict[str, str]) -> list[str]:
    notes = []
    releases = base.manifest.oloproof_nb, candidate.manifest.oloproof_nb
    if releases[0] != releases[1]:  # a resume, or a pool, of two releases is refused: their rules may differ
        notes.append(f"the runs were made by different oloproof_nb releases ({releases[0]} the base, {releases[1]} "
                     "the candidate), which may judge a case otherwise: a flip may be the rules' change, not the "
                     f"system's; {_one_release(releases)} to compare the systems alone")
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


def unchecked_criteria(base: Run, candidate: Run, criteria: list[str]) -> set[str]:
    """The metamorphic criteria whose transform is not checked in both runs (their rows kept every pair, the
    ones labeled invalid among them, as the gate's ``transform_not_checked`` says)."""
    relations = {ev.name: str(getattr(ev, "transform", "")) for ev in candidate.config.evaluators
                 if ev.type == "metamorphic_relation" and ev.name in criteria}
    if not relations:
        return set()
    checked = [checked_transforms(base), checked_transforms(candidate)]
    return {name for name, transform in relations.items() if not all(c.get(transform, False) for c in checked)}
