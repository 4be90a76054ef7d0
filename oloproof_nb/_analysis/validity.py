"""Validity of metamorphic transforms: how many pairs humans labeled, how many kept the meaning.

A transform is **checked** when every derived pair of the suite is labeled
(coverage 1) and the share labeled valid is at least the transform's
``minimum_validity``. Until then the gate reports its rules as
``INSUFFICIENT_EVIDENCE`` (``transform_not_checked``); once checked, a relation
is judged only on the pairs labeled valid.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .._config.files import yaml_number
from .._config.release import parse_release
from .._core.labels import Label, labels_row, transform_pair_labels
from . import frames
from .columns import VALIDITY
from .gate_drift import label_drift, suite_folder
from .run import Run, as_run, stored_pair_labels

__all__ = ["VALIDITY_COLUMNS", "validity_table", "checked_transforms", "unchecked_reasons", "validity",
           "unscored_copies", "broken_copies", "unscored_note", "broken_note"]

VALIDITY_COLUMNS = VALIDITY.names


def validity_table(transforms: Iterable[Any], labels: Mapping[str, Iterable[Mapping[str, Any]]],
                   derived: Mapping[str, int], confidence: float = 0.95) -> pd.DataFrame:
    """One row per transform: coverage and validity rate of its human labels.

    Parameters
    ----------
    transforms : iterable
        The declared transforms (objects with ``name`` and ``minimum_validity``), in order.
    labels : mapping of str to judgements
        Judgements by transform name (``Suite.labels`` / ``Run.labels``).
    derived : mapping of str to int
        Pairs of each transform in the suite by transform name (one per source case, recorded or not); the
        judged ids are among them (the suite checks each label's id when it loads it).
    confidence : float, default 0.95
        Confidence level of the Wilson interval.

    Returns
    -------
    pandas.DataFrame
        Columns, in order:

        ``transform`` (str)
            The transform's name.
        ``derived`` (int)
            Derived pairs of the transform.
        ``labeled`` (int)
            Of those, pairs with at least one judgement.
        ``valid`` (int)
            Of those, pairs whose label (the majority; a tie is invalid) is valid.
        ``coverage`` (float)
            ``labeled / derived`` (NaN without pairs).
        ``rate`` (float)
            Validity rate ``valid / labeled`` (NaN when nothing is labeled).
        ``ci_low``, ``ci_high`` (float)
            Wilson interval of ``rate`` at ``confidence`` (NaN when nothing is labeled).
        ``minimum_validity`` (float)
            The transform's required validity rate.
        ``checked`` (bool)
            ``coverage == 1 and rate >= minimum_validity``.

    Notes
    -----
    With v valid of L labeled pairs, z = Φ⁻¹(1 − α/2) and p̂ = v/L, the Wilson
    interval is (p̂ + z²/2L ± z·√(p̂(1−p̂)/L + z²/4L²)) / (1 + z²/L), computed with
    SciPy's normal quantile (``_core.binomial.wilson``; statsmodels is not imported on this path) and
    equal to statsmodels ``proportion_confint(method="wilson")`` to 1e-12 (tests). ``checked`` compares
    the point rate (not the interval) with ``minimum_validity``; the interval
    tells how well the labels pin the rate down. Numbers are not rounded.

    References
    ----------
    Brown, L. D., Cai, T. T. & DasGupta, A. (2001). Interval estimation for a binomial proportion.
    Statistical Science 16(2), 101–133.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> t = SimpleNamespace(name="t", minimum_validity=0.5)
    >>> js = {"t": [{"case_id": "a~t", "valid": True}, {"case_id": "b~t", "valid": False}]}
    >>> row = validity_table([t], js, {"t": 3}).iloc[0]
    >>> int(row.labeled), float(row.rate), bool(row.checked)
    (2, 0.5, False)
    """
    return _table(transforms, transform_pair_labels(labels), derived, confidence)


def _table(transforms: Iterable[Any], labels: Mapping[str, Mapping[str, Label]], derived: Mapping[str, int],
           confidence: float) -> pd.DataFrame:
    """:func:`validity_table` of each transform's pair labels (a Run's, worked out once)."""
    rows = []
    for t in transforms:
        row = labels_row(labels.get(t.name, {}), derived.get(t.name, 0), t.minimum_validity, confidence)
        rows.append({"transform": t.name, **row})
    table = VALIDITY.from_columns({c: [row[c] for row in rows] for c in VALIDITY_COLUMNS})
    table.attrs["confidence"] = confidence  # the Wilson intervals' level, for a plot's label
    return table


def validity(run: Run, confidence: float | None = None) -> pd.DataFrame:
    """Validity of each metamorphic transform of a run, from the human labels the run stored.

    Parameters
    ----------
    run : Run
        A run (from :func:`oloproof_nb.run` or :func:`oloproof_nb.load_run`).
        Its pairs are its suite's derived cases, one per source case, whether
        it recorded them or not (the labels judge the suite's pairs, and a
        run stopped part-way is checked, and leaves out the copies, as its
        finished run would); its labels are the judgements the suite's label
        files held when the run started.
    confidence : float, optional
        Confidence level of the Wilson interval, at least 0.5 as in release.yaml; default the release's
        ``confidence`` (0.95 without a release.yaml).

    Returns
    -------
    pandas.DataFrame
        One row per declared transform, columns ``transform, derived, labeled,
        valid, coverage, rate, ci_low, ci_high, minimum_validity, checked``
        (see :func:`validity_table`).

    Notes
    -----
    coverage = labeled / derived pairs; rate = valid / labeled pairs with a
    Wilson interval. A pair's label is the majority of its judgements (a tie
    is invalid). ``checked`` is true only when coverage is 1 and rate ≥
    ``minimum_validity``: until then the gate reports the transform's
    relations as ``INSUFFICIENT_EVIDENCE`` (``transform_not_checked``).
    A pooled run (:func:`oloproof_nb.load_runs`) is of runs made with the
    same labels, and a transform is checked only when it is also checked in
    each run (each judged its relations on its own derived cases).

    Examples
    --------
    >>> import oloproof_nb as op                     # doctest: +SKIP
    >>> op.validity(op.load_run("runs/x"))           # doctest: +SKIP
    """
    run = as_run(run, "validity: run")
    if confidence is None:
        confidence = run.release.confidence if run.release is not None else 0.95
    else:  # the release's rule: 0.05 is alpha written for 0.95, which made a 5% interval look like a tight 95% one
        confidence = parse_release({"confidence": confidence}, "validity(confidence=)").confidence
    transforms = list(run.config.metamorphic.transforms)
    # the suite's pairs (its manifest's), as the copies left out and the relations count them, recorded or not;
    # pooled runs of case files that differ hold each pair any of them derived (a finished run recorded its suite's).
    # Its n_cases as read, as the copies left out (Run.unscored_ids): edited in place (run.manifest.n_cases = 40),
    # the table counted 40 pairs and unchecked the transform while the gate's rows were the run's
    suite_pairs = max(frames.pairs_per_transform(member.config, member._as_read.n_cases) for member in run.runs)
    cases = run.cases
    derived = {t.name: max(suite_pairs, cases.loc[cases["transform"] == t.name, "case_id"].nunique())
               for t in transforms}
    table = _table(transforms, stored_pair_labels(run), derived, confidence)
    if len(run.runs) > 1:  # pooled: checked in every run too (see checked_transforms)
        each = [checked_transforms(member) for member in run.runs]
        table["checked"] = [bool(c) and all(e[t] for e in each) for t, c in zip(table["transform"], table["checked"],
                                                                                strict=True)]
    return table


def checked_transforms(run: Run) -> dict[str, bool]:
    """Transform name → whether it is checked in this run (what the gate reads for ``transform_not_checked``).

    In a pooled run (:func:`oloproof_nb.load_runs`), a transform is checked only when it is checked in every
    run: each run judged its relations on the pairs its own labels held valid, so a run whose labels were
    incomplete kept pairs labeled invalid since, and the labels of another run cannot take them out.
    """
    table = validity(run)
    return dict(zip(table["transform"], table["checked"].astype(bool), strict=True))


def unchecked_reasons(run: Run) -> dict[str, str]:
    """Transform name → why it is not checked in this run, for each transform that is not: the pairs without a
    label (the first three named), or the valid share below ``minimum_validity``."""
    out: dict[str, str] = {}
    cases, judged = run.cases, stored_pair_labels(run)
    for t in validity(run).itertuples():
        if t.checked:
            continue
        if t.labeled < t.derived:
            labeled = set(judged.get(str(t.transform), {}))
            unlabeled = sorted(set(cases.loc[cases["transform"] == t.transform, "case_id"]) - labeled)
            missing = t.derived - t.labeled
            named = ", ".join(unlabeled[:3]) + (" …" if len(unlabeled) > 3 else "")
            # a stopped run has not recorded every copy: those are counted, not left out ("has no label ()")
            unrecorded = missing - len(unlabeled)
            if unrecorded:
                rest = f"{'one' if unrecorded == 1 and not named else unrecorded} the run has not recorded"
                named = f"{named} and {rest}" if named else rest
            out[str(t.transform)] = (f"{missing} of its {t.derived} pairs {'has' if missing == 1 else 'have'} no "
                                     f"label ({named})")
        else:  # every digit of the minimum: 0.8500001 shown as 0.85 called 17 of 20 a share below 0.85
            out[str(t.transform)] = (f"{t.valid} of its {t.derived} pairs {'is' if t.valid == 1 else 'are'} labeled "
                                     f"valid, a share below its minimum_validity {yaml_number(t.minimum_validity)}")
    return out


def unchecked_notes(run: Run, criteria: Iterable[str]) -> tuple[str, ...]:
    """One line per transform of ``run`` that is not checked and that a relation among ``criteria`` (the gate's
    table: gated or ``REPORT_ONLY``) is judged on: why (:func:`unchecked_reasons`) and where its labels go. Shown
    whatever the relation's own reason: a first suite with an empty label file, its relation held back by
    ``too_few_clusters`` or not gated, heard of the labels only once it had 20 clusters and gated the relation.
    A label file that differs from the labels the run was made with (:func:`~.gate_drift.label_drift`: labeled since)
    is said so in its line: a run keeps the labels it started with, and the line told a user who had just labeled
    every pair, and gated the run again, to label them in that file."""
    shown = set(criteria)
    relations = {str(getattr(ev, "transform", "")) for ev in run.config.evaluators
                 if ev.type == "metamorphic_relation" and ev.name in shown}
    if not relations:
        return ()
    unchecked = {t: why for t, why in unchecked_reasons(run).items() if t in relations}  # not a transform no
    if not unchecked:  # relation of the table uses: "its relations are judged once…" of none held no row back
        return ()
    # where a label goes: the suite folder's file (None: an Inspect AI log, with no folder of its own), the folder the
    # gate compares the labels in (gate_drift.suite_folder): a suite moved with its runs (another checkout, a CI
    # job's workspace) was told to fill the file where it was made, where nothing is
    root = suite_folder(run)
    files = {t.name: root / t.validity_labels if root else Path(t.validity_labels)
             for t in run.config.metamorphic.transforms}
    changed = {path for path, _ in label_drift(run)}
    return tuple(f"transform {transform} is not checked: {why}; its relations are judged once every pair is labeled"
                 + (f" in {files[transform]}" if transform in files else "")
                 + " and the valid share reaches minimum_validity (see op.validity(run))"
                 + (f"; that file has changed since run {run.run_id} was made, which keeps the labels it started "
                    "with: run the suite again to judge by the file as it is now"
                    if files.get(transform) in changed else "")
                 for transform, why in unchecked.items())


def unscored_note(unscored: Sequence[str], shown: int = 3, broken: Sequence[str] = ()) -> str:
    """The line a gate is read with when copies were left out of every criterion, naming the first ``shown``;
    empty for none. ``broken``: those of them whose pair did not hold (:func:`broken_copies`), counted at its end:
    a copy that fails, labeled invalid, no longer counts against the agent, so the verdict leans on its label.

    Examples
    --------
    >>> unscored_note(["a~t", "b~t", "c~t", "d~t"])
    '4 copies labeled invalid, scored by no criterion: a~t, b~t, c~t and 1 more (see op.validity(run))'
    >>> unscored_note(["a~t", "b~t"], broken=["b~t"]).split("); ")[1]
    '1 of them broke its pair, so the verdict leans on its label'
    >>> unscored_note([])
    ''
    """
    if not unscored:
        return ""
    more = len(unscored) - shown
    named = ", ".join(unscored[:shown]) + (f" and {more} more" if more > 0 else "")
    note = (f"{len(unscored)} {'copy' if len(unscored) == 1 else 'copies'} labeled invalid, scored by no "
            f"criterion: {named} (see op.validity(run))")
    return f"{note}; {broken_note(len(unscored), len(broken))}" if broken else note


def broken_note(unscored: int, broken: int) -> str:
    """How many of the ``unscored`` copies left out of every criterion broke their pair (``broken`` ≥ 1).

    Examples
    --------
    >>> broken_note(1, 1)
    'it broke its pair, so the verdict leans on its label'
    >>> broken_note(3, 2)
    '2 of them broke their pair, so the verdict leans on their labels'
    """
    one = broken == 1
    whose = "it broke its pair" if unscored == 1 else f"{broken} of them broke {'its' if one else 'their'} pair"
    return f"{whose}, so the verdict leans on {'its label' if one else 'their labels'}"


def broken_copies(run: Run, unscored: Sequence[str] | None = None) -> list[str]:
    """The copies of :func:`unscored_copies` whose pair did not hold under a relation (``run.pairs.holds`` False,
    or missing: a side that raised, timed out or recorded no state, a row that never passes), sorted: left out of
    every criterion, a copy that failed its pair no longer counts against the agent, so a
    labeler who marked exactly the failing copies invalid (within the share ``minimum_validity`` allows) lifted
    the relation, and the gate's line says how many of the copies it left out were such (3 failing
    copies of 20 labeled invalid turned 17 of 20, not enough, into 17 of 17, PASS, with only their names shown).
    ``unscored``: :func:`unscored_copies` of ``run`` when the caller has it."""
    unscored = unscored_copies(run) if unscored is None else unscored
    if not unscored:
        return []
    pairs = run.pairs
    held = pairs["holds"].eq(True).fillna(False).to_numpy(dtype=bool)  # a missing pair lifts the relation too
    ids = pairs["derived_id"]
    broken = ids[~held & ids.isin(unscored).to_numpy(dtype=bool)]  # vectorised: 2,083 copies of 100,000 cases
    return sorted(map(str, broken.unique()))


def unscored_copies(run: Run) -> list[str]:
    """The derived cases of ``run`` labeled invalid by a checked transform, which no criterion scores (their
    verdict rows are left out of ``run.verdicts``), sorted: a gate that passes without them says so."""
    unscored = run.unscored_ids
    if not unscored:
        return []
    ids = run.cases["case_id"]
    return sorted(map(str, ids[ids.isin(unscored)].unique()))  # vectorised: 100,000 ids read one by one took 63 ms
