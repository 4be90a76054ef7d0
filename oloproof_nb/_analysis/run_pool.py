"""Several runs of one suite as one :class:`~.run.Run` (``op.load_runs``): what pooling refuses, and how.

:func:`pool` makes the pooled Run, of the class ``cls`` (``op.load_runs`` gives
the face's ``op.Run``), refusing runs that would not measure one thing: runs of
other suites, criteria, release.yaml files, validity labels or checks (see
:mod:`~oloproof_nb._analysis.run_checks`), the do-nothing baseline beside the
agent, a run given twice, or a case in two clusters. The pooled Run's frames are
its runs' frames one after another, each with ``run_id`` (``Run._frame``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

import pandas as pd

from .._run.baseline import NOOP_VERSION
from ..errors import OloproofError, cut_middle, terminal_text
from .run import Run, run_directory, stored_pair_labels
from .run_checks import changed_checks, check_one_code, label_difference, unscored_difference, validity_check_difference

__all__ = ["pool", "load_runs", "directory_list"]

R = TypeVar("R", bound=Run)


def pool(cls: type[R], runs: Sequence[Run]) -> R:
    """One Run of several (see :func:`load_runs`)."""
    if not runs:
        raise OloproofError("load_runs needs at least one run directory")
    first = runs[0]
    ids = [r.run_id for r in runs]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        where = [Path(r.directory) for r in runs if r.run_id == twice[0]]
        # resolved, as the CLI tells compare's two runs apart: a link to the folder is that folder, not a copy
        copy = where[0].resolve() != where[1].resolve()
        same = f"a copy of {terminal_text(str(where[0]))}" if copy else "the same folder"
        raise OloproofError(f"{terminal_text(str(where[1]))}: run {twice[0]} is given twice ({same}); "
                            "pool each run once")
    for other in runs[1:]:
        if other.suite_name != first.suite_name:
            raise OloproofError(f"{_at(other)}: runs {first.run_id} and {other.run_id} are of different suites "
                                f"({first.suite_name!r}, {other.suite_name!r}); pool runs of one suite")
        if other.manifest.oloproof_nb != first.manifest.oloproof_nb:  # as a resume by another release is refused
            raise OloproofError(f"{_at(other)}: runs {first.run_id} and {other.run_id} were made by different "
                                f"oloproof_nb releases ({first.manifest.oloproof_nb}, {other.manifest.oloproof_nb}), "
                                "which may judge, reset or replay a case otherwise: the pooled verdicts would mix two "
                                "releases' rules; pool runs of one release, or run the suite again with this one")
        if _criteria(other) != _criteria(first):
            raise OloproofError(f"{_at(other)}: runs {first.run_id} and {other.run_id} judge different criteria "
                                f"({', '.join(first.criteria)} / {', '.join(other.criteria)}); "
                                "pool runs of the same suite configuration")
        idle = [r.run_id for r in (first, other) if r.manifest.system_version == NOOP_VERSION]
        if len(idle) == 1:  # the no-op's passes would raise the agent's rate (INSUFFICIENT_EVIDENCE became PASS)
            baseline = first if first.run_id == idle[0] else other
            raise OloproofError(f"{_at(baseline)}: run {idle[0]} is the do-nothing baseline (system {NOOP_VERSION}), "
                                "not the agent: pool runs of the agent, and give the baseline as baseline= to op.gate")
        if other.release != first.release:  # the pooled run is gated by one: which, was the order's choice
            raise OloproofError(f"{_at(other)}: runs {first.run_id} and {other.run_id} were made with different "
                                "release.yaml files (the same runs gated BLOCK in one order and PASS in the other); "
                                "pool runs of one release.yaml, or gate the pooled runs with op.gate(run, release=...) "
                                "after pooling runs made with the same one")
        relabeled = label_difference(stored_pair_labels(first), stored_pair_labels(other),
                                     (f"in {first.run_id}", f"in {other.run_id}"))
        if relabeled:  # each run judged its pairs, and left out its invalid copies, by the labels it started with
            raise OloproofError(f"{_at(other)}: runs {first.run_id} and {other.run_id} were made with different "
                                f"validity labels ({relabeled}); pool runs made with the same label files, or run "
                                "the suite again with the labels as they are now")
        moved = unscored_difference(first, other)
        if moved:  # the same labels checked otherwise: each run's verdicts leave out other copies
            raise OloproofError(f"{_at(other)}: runs {first.run_id} and {other.run_id} leave out other copies "
                                f"labeled invalid ({validity_check_difference(first, other)}: {moved}); pool runs of "
                                "the same suite configuration")
        differ = changed_checks(first, other)
        if differ:  # one criterion, two measurements: the pooled rate would mix them (and compare sees one)
            name, how = next(iter(differ.items()))
            raise OloproofError(f"{_at(other)}: runs {first.run_id} and {other.run_id} judge {name} with "
                                f"different checks ({how}); pool runs of the same suite configuration and code")
    check_one_code(runs)
    _check_clusters(runs)  # reads each run's cases (the gate of the pooled run reads them anyway)
    pooled = cls(first.directory, first.manifest)
    pooled._members = list(runs)
    pooled._labels = first._labels  # the same in every run
    return pooled


def _at(run: Run) -> str:
    """The folder ``run`` was read from, as an error about it starts (the run id alone named no folder of the
    list given when the runs were written with ``out=``), on one line."""
    return terminal_text(str(run.directory))


def _criteria(run: Run) -> list[tuple[str, str]]:
    return [(ev.name, ev.type) for ev in run.config.evaluators]


def _check_clusters(runs: Sequence[Run]) -> None:
    """Raise unless every case is in the same cluster in each of ``runs`` that recorded it.

    A case whose ``cluster`` changed between two runs (the case file regrouped, the ids and digests the same)
    would be in two clusters of the pooled run, its rows counted as independent evidence.
    """
    seen = pd.concat([r.cases[["case_id", "cluster"]].assign(run=r.run_id) for r in runs], ignore_index=True)
    seen = seen.drop_duplicates(["case_id", "cluster"])
    split = seen[seen["case_id"].duplicated(keep=False)]
    if len(split):
        first = split[split["case_id"] == split["case_id"].iloc[0]]
        cid, (a, b), (ca, cb) = first["case_id"].iloc[0], first["run"].iloc[:2], first["cluster"].iloc[:2]
        folder = _at(next(r for r in runs if r.run_id == b))
        raise OloproofError(f"{folder}: runs {a} and {b} put case {cid!r} in different clusters ({ca!r}, {cb!r}), "
                            "so its rows would count as independent evidence; pool runs whose cases keep their "
                            "clusters")


def directory_list(directories: Sequence[str | Path]) -> list[str | Path]:
    """``directories`` (any iterable) as a list, in the order given (a set's, which has none, sorted by path),
    refusing one path given alone (a string is a sequence too) and an item that is no path."""
    if isinstance(directories, (str, bytes, os.PathLike)):
        raise OloproofError("load_runs takes a list of run directories; for one run use load_run")
    unordered = isinstance(directories, (set, frozenset))
    try:
        if unordered:  # no order of its own: the first run (whose configuration
            # and release the pool takes) followed the hash seed, so one notebook pooled differently run to run
            items = sorted(directories, key=str)
        else:
            items = list(directories)  # a list, a generator (Path.glob), a pandas Series …: in the order given
    except TypeError:
        raise OloproofError(f"load_runs takes a list of run directories, got {type(directories).__name__}") from None
    # an item of a set is named by itself: its place in the sorted order is one the caller never saw
    return [run_directory(d, f"load_runs: {_item_of_a_set(d)}" if unordered else f"load_runs: item {i}")
            for i, d in enumerate(items)]


def _item_of_a_set(item: object) -> str:
    """How an error names ``item`` of a set: a Run by its folder (``the Run of runs/a``), anything else as Python
    writes it (``3 in the set``), cut to a line."""
    if isinstance(item, Run):
        return terminal_text(f"the Run of {cut_middle(str(item.directory), 200)} in the set")
    return terminal_text(f"{cut_middle(repr(item), 200)} in the set")


def load_runs(directories: Sequence[str | Path]) -> Run:
    """Open several run directories of one suite as one :class:`Run` (see ``op.load_runs``)."""
    return pool(Run, [Run.load(d) for d in directory_list(directories)])
