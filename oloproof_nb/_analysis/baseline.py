"""The do-nothing baseline as data: its pass rate per criterion, and the gate columns it adds.

A baseline is an ordinary run whose system did nothing (``_run/baseline.py``).
Its rate of a criterion is the plain share of its verdict rows that passed (missing
counts as not passed, as in the gate). Against a gate, a criterion's ``noop_rate`` is that rate reduced as the
gate reduces the criterion (``mean``: the share of rows; ``pass^k`` / ``pass@k``: the mean of the cases'
values), and it is ``passes_when_idle`` when that rate already meets the criterion's threshold: expected
for a collateral-damage check (an idle agent breaks nothing), a red flag for a task
check (e.g. ``state_matches`` on cases that expect no change).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .._config.files import float_text
from .._core.epochs import parse_reduce, reduce_counts
from .._run.baseline import BASELINE_DIR, NOOP_VERSION
from ..errors import OloproofError, terminal_text
from .columns import TEXT, Column, FrameSpec
from .frames import ended_case_runs
from .reduce import epoch_counts
from .run import Run, expected_case_runs, stored_pair_labels
from .run_checks import changed_checks, label_difference, unscored_difference, validity_check_difference

__all__ = ["Baseline", "BASELINE_RATES", "IDLE_COLUMNS", "as_baseline", "baseline_rates", "check_baseline_config",
           "with_idle_columns"]

BASELINE_RATES = FrameSpec("baseline", (
    Column("criterion", TEXT, "The criterion."),
    Column("n", "int64", "Verdict rows of the no-op run."),
    Column("passed", "int64", "Rows that passed with the no-op system."),
    Column("missing", "int64", "Rows without a usable result (they count as not passed)."),
    Column("rate", "float64", "passed / n (NaN without rows)."),
), documented=5)

#: Columns a baseline adds to ``gate.table``.
IDLE_COLUMNS = FrameSpec("gate_baseline", (
    Column("noop_rate", "float64", "The criterion's pass rate with the no-op system, reduced as the gate reduces it "
                                   "(NaN: not judged there, or no case with k epochs for pass^k / pass@k)."),
    Column("passes_when_idle", "bool", "noop_rate ≥ threshold: the idle agent already meets the threshold."),
), documented=2)


def baseline_rates(run: Run) -> pd.DataFrame:
    """Pass rate per criterion of a run (``criterion, n, passed, missing, rate``), every criterion of the run."""
    v = run.verdicts
    rows = []
    for criterion in run.criteria:
        verdict = v.loc[v["criterion"] == criterion, "verdict"]
        n, passed = int(len(verdict)), int((verdict == "pass").sum())
        rows.append({"criterion": criterion, "n": n, "passed": passed, "missing": int((verdict == "missing").sum()),
                     "rate": passed / n if n else math.nan})
    return BASELINE_RATES.from_columns({c: [row[c] for row in rows] for c in BASELINE_RATES.names})


@dataclass(frozen=True)
class Baseline:
    """The do-nothing baseline of a suite: its run and its pass rate per criterion.

    Attributes
    ----------
    run : Run
        The baseline's run (``system_version`` ``oloproof-noop``): every frame, the case panel.
    rates : pandas.DataFrame
        ``criterion, n, passed, missing, rate`` — one row per criterion of the suite.

    Examples
    --------
    >>> import oloproof_nb as op
    >>> import tempfile
    >>> from oloproof_nb.examples import init_example
    >>> tmp = tempfile.TemporaryDirectory()
    >>> idle = op.baseline(init_example("false-success", tmp.name + "/suite"))
    >>> idle.run.system_version, list(idle.rates.columns)
    ('oloproof-noop', ['criterion', 'n', 'passed', 'missing', 'rate'])
    >>> tmp.cleanup()
    """

    run: Run

    @property
    def rates(self) -> pd.DataFrame:
        return baseline_rates(self.run)

    def __repr__(self) -> str:
        parts = [f"{r.criterion}={float_text(r.rate)}" if not math.isnan(r.rate) else f"{r.criterion}=n/a"
                 for r in self.rates.itertuples()]
        size = f"cases={self.run.n_cases}" if self.run.epochs == 1 else \
            f"cases={self.run.n_cases // self.run.epochs}, epochs={self.run.epochs}"
        return terminal_text(f"Baseline({self.run.run_id!r}, {size}, " + ", ".join(parts) + ")")


def as_baseline(value: Baseline | Run | str | os.PathLike[str]) -> Baseline | Run:
    """``value``, or the run in the folder it names (``baselines/<run_id>``, as ``oloproof gate --baseline`` takes
    it); a suite folder is refused naming its latest baseline, not its latest run (the agent's, which
    :func:`check_baseline` refuses)."""
    if isinstance(value, (str, os.PathLike)):
        return Run.load(Path(value), BASELINE_DIR)
    return value


def check_baseline(run: Run, baseline: Baseline | Run, run_whole: bool = True) -> None:
    """Raise unless ``baseline`` is a whole do-nothing run (``system_version`` ``oloproof-noop``) of the cases
    of ``run``.

    Any other run would give its own rates as the idle agent's (the real run itself: every criterion "passes
    when idle"), and another suite's run would leave the columns blank without a word. A baseline that did not
    finish (or lost records) gives the rates of the cases it holds: stopped before the cases that expect no
    change, its ``state_matches`` rate is 0 and the red flag is gone. A baseline of another version of the suite
    (cases added, removed or edited since: another (case id, digest) set) gives the rates of other cases, and
    one whose checks differ from the run's (:func:`~.run_checks.changed_checks`) the rates of other checks, one that
    does not judge a criterion of the run (a check added or renamed since) no rate of it at all, one made
    by another oloproof_nb release (``manifest.oloproof_nb``, as :func:`op.load_runs <oloproof_nb.load_runs>` refuses
    to pool it) the rates of another release's rules, and one
    whose validity labels leave out other copies (:attr:`~.run.Run.unscored_ids`) the rates of other rows: labels
    made otherwise (:func:`~.run_checks.label_difference`, as ``op.load_runs`` tells them), or the same labels
    checked against another ``minimum_validity``. Labels that differ and leave out the same copies (a transform still
    not checked in both, say) give the same rows, so the same rates: accepted. A baseline whose sandbox raised or timed
    out in a case run (its ``reset``, ``snapshot`` or ``observe``: a database down) counts that run's rows as not
    passed, though nothing was measured: with half its cases in error, a ``state_matches`` every case of which the idle
    agent passes read 0.5, below the threshold, and the red flag was gone; refused too.
    A baseline one of whose frames was set in the session (``idle.verdicts = frame``: :attr:`~.run.Run.replaced`)
    gives the rates of that frame: refused too, as is one whose manifest was edited in place
    (:attr:`~.run.Run.manifest_edits`: its ``n_cases``, ``finished_at`` or ``system_version`` are what is checked).
    ``run_whole`` False (the run did not finish, or lost records: the gate says BLOCK for it anyway): its cases
    need only be among the baseline's.
    """
    idle = baseline.run if isinstance(baseline, Baseline) else baseline
    if not isinstance(idle, Run):
        raise OloproofError(f"baseline: give op.baseline(suite), its run or its folder, got {type(baseline).__name__}")
    if idle.manifest_edits:  # what is checked next reads it: a real run given system_version "noop" was taken
        names = ", ".join(f"run.{name}" for name in idle.manifest_edits)
        raise OloproofError(f"{idle.directory}: the baseline's {names} was edited in this session, so it is not the "
                            "do-nothing run its folder holds; give the baseline as it was made (its folder, "
                            "baselines/<run_id>)")
    check_baseline_config(run, idle)
    if idle.replaced:  # its rates would be of that frame: the idle agent's 6 of 6 dropped read passes_when_idle False
        names = ", ".join(f"run.{name}" for name in idle.replaced)
        raise OloproofError(f"{idle.directory}: the baseline's {names} was set in this session, so its "
                            "rates are of that frame, not of the do-nothing run; give the baseline as it was made "
                            "(its folder, baselines/<run_id>)")
    expected = expected_case_runs(idle)
    if not idle.finished or idle.n_cases != expected:
        # "holds 6 of its 6 case runs (it did not finish, or records are lost)" named no fault of a whole unfinished one
        held = (f"holds {idle.n_cases} of its {expected} case runs (it did not finish, or records are lost)"
                if idle.n_cases != expected else f"holds its {expected} case runs but did not finish (its manifest "
                "records no finished_at: stopped before it wrote that it finished)")
        raise OloproofError(f"{idle.directory}: the baseline {held}, so its rates are those of the cases it holds; "
                            "make a new one with op.baseline(suite) or oloproof run --baseline")
    ended = ended_case_runs(idle.cases)
    if len(ended):  # the sandbox failed there: nothing was measured, yet the rows count as not passed
        first = ended.iloc[0]
        raise OloproofError(f"{idle.directory}: {len(ended)} of the baseline's {idle.n_cases} case runs ended in "
                            f"{first['status']} (the first, case {first['case_id']!r}: {first['message']}), so "
                            "its rates count them as not passed though the sandbox measured nothing there, and a "
                            "criterion the idle agent passes may look as if it did not; make a new one once the "
                            "sandbox runs every case: op.baseline(suite) or oloproof run --baseline")
    theirs = set(zip(idle.cases["case_id"], idle.cases["digest"], strict=True))
    ours = set(zip(run.cases["case_id"], run.cases["digest"], strict=True))
    if theirs != ours and (run_whole or not ours <= theirs):  # a run that did not finish holds part of its cases
        differ = sorted({case_id for case_id, _ in (theirs ^ ours if run_whole else ours - theirs)})
        raise OloproofError(f"{idle.directory}: a baseline of other cases than run {run.run_id}'s ({len(differ)} "
                            f"case(s) added, removed or edited, first {differ[0]!r}): another version of suite "
                            f"{run.suite_name!r}; make one with op.baseline(suite) on the suite of this run")


def check_baseline_config(run: Run, idle: Run) -> None:
    """The part of :func:`check_baseline` a run's manifest answers (it reads no frame, so the command line checks
    it before opening either run): ``idle`` is a do-nothing run of ``run``'s suite made by the same oloproof_nb
    release, judged by the same checks (every criterion of ``run`` among them), whose validity labels leave out the
    same copies.

    Raises
    ------
    OloproofError
        Naming the baseline's folder and what differs.
    """
    if idle.system_version != NOOP_VERSION:
        raise OloproofError(f"{idle.directory}: not a do-nothing baseline (its system is "
                            f"{idle.system_version or 'unnamed'}, not {NOOP_VERSION}); make one with "
                            "op.baseline(suite) or oloproof run --baseline")
    if idle.suite_name != run.suite_name:
        raise OloproofError(f"{idle.directory}: a baseline of suite {idle.suite_name!r}, not of {run.suite_name!r}")
    releases = idle.manifest.oloproof_nb, run.manifest.oloproof_nb
    if releases[0] != releases[1]:  # as op.load_runs refuses to pool such runs, and a resume to mix them
        raise OloproofError(f"{idle.directory}: a baseline made by oloproof_nb {releases[0]}, run {run.run_id} by "
                            f"{releases[1]}, which may judge, reset or replay a case otherwise, so its rates are "
                            "judged by another release's rules; make one with op.baseline(suite) or oloproof run "
                            "--baseline")
    differ = changed_checks(run, idle)
    if differ:
        name, how = next(iter(differ.items()))
        raise OloproofError(f"{idle.directory}: a baseline that judges {name} with another check than run "
                            f"{run.run_id} ({how}), so its rates are another check's; make one with "
                            "op.baseline(suite) on the suite of this run")
    judged = set(idle.criteria)
    unjudged = [name for name in run.criteria if name not in judged]
    if unjudged:  # a check added (or renamed) since: its noop_rate was blank, and passes_when_idle False
        raise OloproofError(f"{idle.directory}: a baseline that does not judge {unjudged[0]} ({len(unjudged)} "
                            f"criterion(s) of run {run.run_id} added or renamed since it was made), so its noop_rate "
                            "would be blank and never flag a check the idle agent passes; make one with "
                            "op.baseline(suite) on the suite of this run")
    moved = unscored_difference(run, idle)
    if moved:  # each run leaves out the copies its own labels hold invalid: the rates would be of other rows
        relabeled = label_difference(stored_pair_labels(run), stored_pair_labels(idle),
                                     (f"in run {run.run_id}", "in the baseline"))
        how = (f"made with other validity labels than run {run.run_id} ({relabeled})" if relabeled else
               f"whose suite checks the validity labels otherwise than run {run.run_id}'s "
               f"({validity_check_difference(run, idle)})")
        raise OloproofError(f"{idle.directory}: a baseline {how}, so its rates count other copies ({moved}); make the "
                            "baseline with the labels and suite the run was made with, or both again: "
                            "oloproof run --baseline")


def with_idle_columns(table: pd.DataFrame, baseline: Baseline | Run) -> pd.DataFrame:
    """``table`` (a gate table) with ``noop_rate`` and ``passes_when_idle`` appended (a new frame).

    ``noop_rate`` is the baseline's rate of the criterion reduced as the table's ``reduce`` says: for ``mean`` the
    share of its rows that passed (:func:`baseline_rates`), for ``pass^k`` / ``pass@k`` the mean of the values of
    its cases with at least k rows (NaN when none has), as the gate's ``rate`` is. The plain share set against a
    reduced threshold compared two quantities: a sandbox right in one epoch of three whatever the agent does gives
    the idle agent a share of 1/3 but a pass@3 of 1, and its pass@3 check lost its red flag.
    ``passes_when_idle`` is ``noop_rate >= threshold``; False when the criterion is not listed in release.yaml
    (threshold NaN) or the baseline has no rows for it.
    """
    run = baseline.run if isinstance(baseline, Baseline) else baseline
    rates = baseline_rates(run).set_index("criterion")["rate"]
    reductions = table["reduce"] if "reduce" in table.columns else pd.Series("mean", index=table.index)
    _check_epochs(run, table["criterion"], reductions)
    counts = epoch_counts(run.verdicts) if (reductions != "mean").any() else None
    noop = [float(rates.get(c, math.nan)) if text == "mean" or counts is None else _reduced_rate(counts, c, text)
            for c, text in zip(table["criterion"], reductions, strict=True)]
    idle = [not math.isnan(r) and not math.isnan(t) and r >= t for r, t in zip(noop, table["threshold"], strict=True)]
    extra = IDLE_COLUMNS.from_columns({"noop_rate": noop, "passes_when_idle": idle})
    return pd.concat([table.reset_index(drop=True), extra], axis=1)


def _check_epochs(idle: Run, criteria: pd.Series, reductions: pd.Series) -> None:
    """Raise when a criterion is reduced with a k the baseline's epochs cannot give (``pass^2`` of a baseline of one
    epoch): no case of it has k rows, so its ``noop_rate`` was NaN and ``passes_when_idle`` False without a word, the
    red flag gone, as the gate refuses a run of fewer epochs than a reduction's k (``check_reductions``)."""
    for criterion, text in zip(criteria, reductions, strict=True):
        k = 1 if text == "mean" else parse_reduce(text).k
        if k > 1 and k > idle.epochs:
            raise OloproofError(f"{idle.directory}: the baseline has epochs={idle.epochs}, and {criterion} is gated "
                                f"with reduce: {text}, which needs {k} epochs of each case: its noop_rate would be "
                                f"blank and never flag a check the idle agent passes; make the baseline with {k} or "
                                f"more epochs (oloproof run --baseline --epochs {k}, or op.baseline(suite) with that "
                                "reduce in the suite's release.yaml)")


def _reduced_rate(counts: pd.DataFrame, criterion: str, text: str) -> float:
    """The mean over the cases of ``criterion`` with at least k rows (``counts``: :func:`~.reduce.epoch_counts`) of
    their ``text`` (``pass^k``, ``pass@k``) values; NaN when no case has k rows."""
    reduction = parse_reduce(text)
    group = counts[(counts["criterion"] == criterion) & (counts["epochs"] >= reduction.k)]
    if not len(group):
        return math.nan
    return float(reduce_counts(group["epochs"].to_numpy(), group["passes"].to_numpy(), reduction).mean())
