"""The notebook face: what ``op.run``, ``op.load_run`` and ``op.gate`` return, and how it shows itself.

``_analysis`` builds a :class:`~oloproof_nb._analysis.run.Run` and a
:class:`~oloproof_nb._analysis.gate.Gate` as data; the classes here add what a
person sees (a case panel, ``repr``, HTML in Jupyter). The face also decides
presentation while a run is made: a progress bar (a widget in Jupyter, a bar on
a terminal) passed to the runner as a callback.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .._analysis import gate as _gate
from .._analysis import inspect_files as _inspect_files
from .._analysis import inspect_log as _inspect_log
from .._analysis import run as _run
from .._analysis.baseline import Baseline
from .._analysis.gate_reasons import abrupt_ends, abrupt_ends_note
from .._analysis.gate_settings import ReleaseLike, relaxed_note
from .._analysis.live_copy import LiveCopy
from .._analysis.run_pool import directory_list, pool
from .._analysis.validity import unchecked_notes, unscored_note
from .._config.files import yaml_number
from .._config.suite import Suite, load_suite
from .._core.records import AbruptEnd
from .._core.scoremap import ScoreMap
from .._run.runner import Isolation, Progress, run_suite
from .._run.store import Fsync
from ..errors import OloproofError, RunDirError, describe_exception, terminal_text
from .html import html_table, render
from .panel import CasePanel
from .terminal import gate_size, no_criteria_note, pool_note, run_size, uncached_note
from .theme import fmt_interval, fmt_level, fmt_number, fmt_rate

__all__ = ["Run", "Gate", "run", "load_run", "load_runs", "from_inspect", "gate", "progress_bar"]


class Run(_run.Run):
    __doc__ = f"""{_run.Run.__doc__}
    Notes
    -----
    As a notebook shows it: :meth:`panel` opens a case (input, steps, verdicts, every compared path), the
    HTML summary says where to look next, and :meth:`replay_summary` counts the replays made and cached.

    Examples
    --------
    >>> import oloproof_nb as op
    >>> import tempfile
    >>> from oloproof_nb.examples import init_example
    >>> tmp = tempfile.TemporaryDirectory()
    >>> run = op.run(init_example("false-success", tmp.name + "/suite"), progress=False)
    >>> run.suite_name, run.n_cases, run.criteria, run.finished
    ('false-success', 6, ['answer_matches', 'outcome_verified'], True)
    >>> run.verdicts[["case_id", "criterion", "verdict"]].shape
    (12, 3)
    >>> tmp.cleanup()
    """

    def panel(self, case_id: str, run_id: str | None = None, epoch: int = 1) -> CasePanel:
        """The case panel: input, steps, verdicts and every compared path (HTML in Jupyter).

        On a pooled run (:func:`load_runs`) a case id may be in several runs: ``run_id`` picks one.
        A run with ``epochs`` shows the case's epochs side by side and ``epoch`` (default 1) in detail.
        """
        if run_id is None:
            return CasePanel(self, case_id, epoch)
        member = next((m for m in self.runs if m.run_id == run_id), None)
        if member is None:
            ids = ", ".join(r.run_id for r in self.runs)
            raise OloproofError(f"run_id={run_id!r}: not one of this run's runs ({ids})")
        return CasePanel(member, case_id, epoch)

    def replay_counts(self) -> tuple[int, int]:
        """``(live, cached)``: replays this run made, and replays it took from the replay cache."""
        live, cached, _ = self.replay_tally()
        return live, cached

    def replay_summary(self) -> str:
        """``"12 live, 64 from the cache"`` (empty when the run made no replays), and ``" (2 of them replay copies no
        criterion scores)"`` when some replayed a copy labeled invalid (its rows count in no verdict), and
        ``"; none from the cache: the system has no `version`, …"`` when it could take none (:func:`.uncached_note`).

        It counts replay *runs*: a fault replay is a control run and a faulted run of the case, two runs for
        one row of :attr:`replays`. Every run made is counted (each cost a run of the system, or a cache hit);
        how many of them replayed copies no criterion scores is said apart, as the gate table's ``n`` leaves
        their rows out. A run whose ``replays.jsonl`` is gone though ``cases.jsonl`` records fault replays has no
        count: ``"replay records missing (…/replays.jsonl: missing, though cases.jsonl records 38 fault replays)"``
        (:meth:`_missing_replay_records`; the repr and HTML say it, and never raise)."""
        missing = self._missing_replay_records()
        if missing:
            return f"replay records missing ({missing})"
        live, cached, unscored = self.replay_tally()
        if not live and not cached:
            return ""
        of = f" ({unscored} of them replay copies no criterion scores)" if unscored else ""
        uncached = uncached_note(self, live, cached)
        return f"{live} live, {cached} from the cache{of}" + (f"; {uncached}" if uncached else "")

    def __repr__(self) -> str:
        status = self.cases["status"].value_counts().to_dict()
        replays = self.replay_summary()
        # cases counted as the HTML and the CLI count them: with epochs, each case once (its runs are epochs)
        size = (f"cases={self.n_cases}" if self.epochs == 1
                else f"cases={self.cases['case_id'].nunique()}, epochs={self.epochs}")
        size += f" ({len(self.runs)} runs pooled)" if len(self.runs) > 1 else ""  # as run_size says it in the HTML
        resumed = abrupt_ends_note(abrupt_ends(self))  # as its HTML, its gate and `oloproof gate` say
        unfinished = self._unfinished_note()
        return (f"Run({self.run_id!r}, suite={self.suite_name!r}, {size}, "
                f"status={status}, criteria={self.criteria}" + (f", replay runs: {replays})" if replays else ")")
                + (f"\n  {terminal_text(unfinished)}" if unfinished else "")
                + (f"\n  {terminal_text(resumed)}" if resumed else ""))

    def _unfinished_note(self) -> str:
        """The line ``repr`` says first of a run that did not finish (no ``finished_at``: still running, stopped or
        killed), as its HTML says "not finished" and its gate ``unfinished``: its frames hold the case runs recorded
        so far, and a text repr said nothing of it; empty for a finished run."""
        if self.finished:
            return ""
        if _inspect_log.is_inspect_run(self):
            return "not finished: the Inspect AI eval did not finish (its log status is not 'success')"
        expected, unit = _run.expected_case_runs(self), _run.case_run_unit(self)
        return (f"not finished: {_gate.unfinished_runs(self)} did not finish ({self.n_cases} of {expected} {unit} "
                "recorded): its frames hold those alone; resume it")

    def _repr_html_(self) -> str:
        status = self.cases["status"].value_counts()
        return render("run.html", run_id=self.run_id, suite=self.suite_name, size=run_size(self),
                      status=", ".join(f"{k}: {v}" for k, v in status.items()), version=str(self.system_version),
                      finished=self.finished, replays=self.replay_summary(), summary=html_table(self.summary()),
                      # which pooled run to resume, as the gate's unfinished reason names it
                      unfinished=_gate.unfinished_runs(self) if len(self.runs) > 1 and not self.finished else "",
                      resumed=abrupt_ends_note(abrupt_ends(self)), next=self._next_steps())

    def _next_steps(self) -> list[str]:
        """'Where to look next': the gate, a failing case per criterion, replays, validity, slices."""
        items = ["op.gate(run): the release decision, a rate and interval per criterion"]
        v = self.verdicts
        bad = v[v["verdict"] != "pass"] if not v.empty else v
        for criterion in self.criteria:
            sub = bad[bad["criterion"] == criterion]
            if not sub.empty:
                items.append(f"{criterion}: {len(sub)} not passed, e.g. {_panel_call(sub.iloc[0], len(self.runs) > 1)}")
        if len(self.replays):
            items.append("run.replays: every fault replay (control, recovered, escalated)")
        if self.config.metamorphic.transforms:
            items.append("op.validity(run): are the transforms' pairs labeled and valid?")
        for spec in self.config.slices[:2]:
            items.append(f"op.slice_table(run, {spec!r}): pass rate per bin (descriptive)")
        return items


def _panel_call(row: Any, pooled: bool) -> str:
    """``run.panel(...)`` that shows the verdict ``row`` (a row of ``run.verdicts``): its run named when the run is
    pooled, where a case id is in several runs (``run.panel(case_id)`` raised), and its epoch when not the first,
    which the panel shows by default (a case failing its second try only pointed at its first, which passed)."""
    args = [repr(str(row["case_id"]))]
    if pooled and "run_id" in row.index:
        args.append(f"run_id={str(row['run_id'])!r}")
    if "epoch" in row.index and int(row["epoch"]) != 1:
        args.append(f"epoch={int(row['epoch'])}")
    return f"run.panel({', '.join(args)})"


@dataclass(frozen=True, repr=False, eq=False)
class Gate(_gate.Gate):
    __doc__ = f"""{_gate.Gate.__doc__}
    Notes
    -----
    As a notebook shows it: its text is the verdict, then one line per criterion (rate, interval, ``n``,
    reason); in Jupyter, a table. :func:`gate` gives it.

    Examples
    --------
    >>> import oloproof_nb as op
    >>> import tempfile
    >>> from oloproof_nb.examples import init_example
    >>> tmp = tempfile.TemporaryDirectory()
    >>> g = op.gate(op.run(init_example("false-success", tmp.name + "/suite"), progress=False))
    >>> g.verdict, list(g.table["criterion"])
    ('BLOCK', ['answer_matches', 'outcome_verified'])
    >>> list(g.blocking["criterion"])
    ['outcome_verified']
    >>> tmp.cleanup()
    """

    #: The abrupt ends of the gated run's process (:func:`~oloproof_nb._analysis.gate_reasons.abrupt_ends`), read
    #: from its manifest by :func:`gate`: shown as the CLI shows them under its table, not a field of the decision.
    _abrupt_ends: tuple[AbruptEnd, ...] = field(default=(), kw_only=True)
    #: What ``n`` counts in a pooled run (:func:`load_runs`; :func:`~.terminal.pool_note`), its runs named; ``""``
    #: for one run. Shown under the verdict: ``n=36`` of a 9-case suite read as 36 cases of one run without it.
    _pooled: str = field(default="", kw_only=True)
    #: Whether the settings were given (``release=``, ``criteria=``, ``confidence=``, ``method=``), not the run's own:
    #: the note of :attr:`relaxed` names them so, also when they are weaker than release.yaml as it is now.
    _given: bool = field(default=False, kw_only=True)
    #: One line per transform not checked that a relation of the table is judged on
    #: (:func:`~oloproof_nb._analysis.validity.unchecked_notes`), as ``oloproof gate`` says it under its table: the
    #: label file to fill, also where the relation's own reason (``too_few_clusters``, or none: ``REPORT_ONLY``)
    #: does not say ``transform_not_checked``.
    _unchecked: tuple[str, ...] = field(default=(), kw_only=True)
    #: Why nothing was gated (``no_criteria``), as ``oloproof gate`` says it above its exit line
    #: (:func:`~.terminal.no_criteria_note`): a suite's release file saved as ``release.yml`` is named; ``""`` else.
    _no_criteria: str = field(default="", kw_only=True)

    @classmethod
    def of(cls, g: _gate.Gate, abrupt_ends: tuple[AbruptEnd, ...] = (), pooled: str = "", given: bool = False,
           unchecked: tuple[str, ...] = (), no_criteria: str = "") -> Gate:
        return cls(**{f.name: getattr(g, f.name) for f in fields(g)}, _abrupt_ends=abrupt_ends, _pooled=pooled,
                   _given=given, _unchecked=unchecked, _no_criteria=no_criteria)

    def _relaxed_note(self) -> str:
        return relaxed_note(self.relaxed, "the settings given" if self._given else "", than=self.weaker_than)

    def __repr__(self) -> str:
        lines = [f"Gate: {self.verdict}" + (f" ({self.reason})" if self.reason else "")]
        lines += [f"  {self._no_criteria}"] if self._no_criteria else []
        lines += [f"  {self._pooled}"] if self._pooled else []
        lines += [f"  vacuous: {finding}" for finding in self.findings]
        lines += [f"  {abrupt_ends_note(self._abrupt_ends)}"] if self._abrupt_ends else []
        lines += [f"  {unscored_note(self.unscored, broken=self.unscored_broken)}"] if self.unscored else []
        lines += [f"  {self._relaxed_note()}"] if self.relaxed else []
        lines += [f"  {note}" for note in self._unchecked]
        for r in self.table.itertuples():
            thr = "" if math.isnan(r.threshold) else f" ≥ {yaml_number(r.threshold)}"  # every digit: 0.9999999 is not 1
            interval = fmt_interval(r.ci_low, r.ci_high, threshold=r.threshold)  # each end on its threshold's side
            rate = "n/a" if math.isnan(r.rate) else f"{fmt_rate(r.rate, r.threshold)} {interval}"  # on its side
            idle = ""
            if hasattr(r, "noop_rate"):  # given a baseline
                noop = "n/a" if math.isnan(r.noop_rate) else fmt_rate(r.noop_rate, r.threshold)  # on its side
                idle = f" noop={noop}" + (" (passes when idle)" if r.passes_when_idle else "")
            how = "" if getattr(r, "reduce", "mean") in ("mean", "") else f" ({r.reduce})"  # n counts cases then
            mark = " (vacuous)" if getattr(r, "vacuous", False) else ""
            lines.append(f"  {r.verdict:22} {r.criterion}{how}{mark}{thr}: {rate} n={r.n}{idle}"
                         + (f" {r.reason}" if r.reason else ""))  # no trailing space on a row without one
        return "\n".join(map(terminal_text, lines))  # a name or reason is shown as written, never acted on

    def _repr_html_(self) -> str:
        shown = self.table.drop(columns=["evaluator"]).rename(columns={"n_clusters": "clusters"})
        return render("gate.html", verdict=self.verdict, reason=self.reason, clustered=self.clustered,
                      sizes=gate_size(self), confidence=fmt_level(self.release.confidence),
                      findings=self.findings, resumed=abrupt_ends_note(self._abrupt_ends),
                      pooled=self._pooled,
                      unscored=unscored_note(self.unscored, shown=20, broken=self.unscored_broken),
                      relaxed=self._relaxed_note(), unchecked=self._unchecked, no_criteria=self._no_criteria,
                      table=html_table(shown, fmt_number, styled=True))


def in_notebook() -> bool:
    """True inside a Jupyter kernel (an IPython shell with a kernel)."""
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    ip = get() if callable(get) else None
    return ip is not None and hasattr(ip, "kernel")


def stderr_is_tty() -> bool:
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty()) if callable(isatty) else False


class _DisplayLine:
    """Where the text bar writes in Jupyter without ipywidgets: one display output, each frame replacing the last.

    Written to the kernel's stderr, every frame of the bar was a stream message of its own, and the notebook kept
    them all: a saved notebook (or one run headless, ``jupyter execute``) showed ``0/48 0%`` under a run that had
    finished, and the bar cleared at the end left an empty stderr box of spaces. Here a frame updates one display
    in place (``update_display_data``); the cleared bar leaves it empty.
    """

    encoding = "utf-8"  # tqdm draws its bar in Unicode blocks when the file says it can take them

    def __init__(self) -> None:
        self._handle: Any = None
        self._frame = ""  # the text after the last carriage return: what a terminal would show
        self._shown = ""

    def write(self, text: str) -> int:
        self._frame = (self._frame + text).rsplit("\r", 1)[-1]
        line = self._frame.rstrip()
        if line != self._shown:
            from IPython.display import display  # in a kernel, IPython is there

            data = {"text/plain": line}
            if self._handle is None:
                self._handle = display(data, raw=True, display_id=True)  # type: ignore[no-untyped-call]
            else:
                self._handle.update(data, raw=True)
            self._shown = line
        return len(text)

    def flush(self) -> None:
        """Nothing to flush: each frame is sent as it is written."""


def _bar_class() -> Any:
    """``tqdm.auto``'s bar, except in Jupyter without ipywidgets: there tqdm.auto warns "IProgress not found" on
    every run and falls back to the text bar on stderr, so the text bar is taken directly, drawn into one display
    output (:class:`_DisplayLine`)."""
    if in_notebook():
        try:
            import ipywidgets  # noqa: F401 - tqdm's notebook bar is a widget (mypy: pyproject ignores its stubs)
        except Exception:  # noqa: BLE001 - missing, or broken (a version clash): tqdm.auto falls back the same way
            from tqdm.std import tqdm as text_bar

            class _TextBar(text_bar):  # type: ignore[misc]
                def __init__(self, *args: Any, **kwargs: Any) -> None:
                    super().__init__(*args, file=_DisplayLine(), **kwargs)

            return _TextBar
    from tqdm.auto import tqdm

    return tqdm


def progress_bar(desc: str) -> tuple[Progress, Callable[[], None]]:
    """A ``tqdm.auto`` bar as a runner callback (a widget in Jupyter, a bar on a terminal), and its closer.

    ``desc`` (a suite's name) is shown as written (:func:`terminal_text`): an escape sequence in it would act
    on the terminal the bar is drawn on. The widget gets it only through ``set_description``: tqdm's notebook
    bar shows the label given to its constructor as HTML, unescaped, in its first frame (it escapes every
    later one), so a name holding ``<img onerror=…>`` would run in the notebook."""
    tqdm = _bar_class()
    desc = terminal_text(desc)
    widget = any(base.__module__ == "tqdm.notebook" for base in tqdm.__mro__)  # tqdm.auto's bar subclasses it
    bar: Any = None

    def update(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, initial=done, unit="case", desc="" if widget else desc, leave=False)
            if widget:
                bar.set_description(desc)  # refreshes the bar: the label is escaped as every later frame is
        else:
            bar.update(done - bar.n)

    def close() -> None:
        if bar is not None:
            bar.close()

    return update, close


def callers_progress(progress: Progress) -> Progress:
    """The caller's own ``progress`` callable as a run calls it: an error it raises stops the run in one line
    (:class:`OloproofError`, its error chained) naming the callable and the call, rather than as an internal error
    of oloproof_nb's (its traceback saved in the run folder as a bug of the package's). A ``KeyboardInterrupt``
    in it is the user's Ctrl-C, passed on as it is."""

    def call(done: int, total: int) -> None:
        try:
            progress(done, total)
        except Exception as exc:
            raise OloproofError(f"progress: the callable given raised {describe_exception(exc)} when called with "
                                f"({done}, {total}); the run stopped there") from exc

    return call


def run(suite: Suite | str | Path, system: Any = None, workers: int = 1, executor: Executor | None = None,
        out: str | Path | None = None, resume: bool = False, progress: bool | Progress | None = None,
        chunk_size: int = 8, cache: bool = True, isolation: Isolation | None = None,
        fsync: Fsync = "finish", epochs: int | None = None) -> Run:
    """Run every case of ``suite`` and return the :class:`Run`.

    For each case the sandbox is reset to a deep copy of ``initial_state``,
    the system runs the input, and ``snapshot()`` is stored as an
    ``environment_state/v1`` record beside the trajectory. Records are
    appended to the run directory one at a time, so a crash loses nothing
    that finished.

    Parameters
    ----------
    suite : Suite or path
        A loaded suite, or its folder.
    system : object, class or callable, optional
        Use this system (an instance, or a factory of instances) instead of the suite's ``system``.
        One instance cannot be replaced: its cases run one at a time, and after a call that exceeded
        ``case_timeout_s`` (it may still be running on the instance) the run stops, naming the case;
        give the class or a factory, then resume.
    workers : int
        Number of system instances run concurrently (threads). Cases sharing an
        instance never overlap; the frames equal a serial run's.
    executor : concurrent.futures.Executor, optional
        Run cases on this executor instead (e.g. ``dask.distributed.Client.get_executor()``):
        each worker imports the suite from its folder and builds its own systems. A batch the
        executor loses (its worker process died, the executor shut down) stops the run with one
        line naming the batch's cases; ``resume=True`` runs them. The executor sets how many batches run
        at once: ``workers`` other than 1 beside it is refused.
    out : path, optional
        The run directory (default ``runs/<run_id>/`` in the suite folder). It must
        not exist or be empty, unless ``resume``, and may not be the suite's ``runs/`` or ``baselines/``
        folder itself, however spelt or linked (it holds one folder per run: ``RunDirError``).
    resume : bool
        Finish the interrupted run in ``out``: recorded cases are not run again. A case run in flight when
        the run's process ended is recorded ``error`` when ``oloproof run`` saw the system end it (an exit, a
        segfault); otherwise (a kernel killed, a SIGKILL: nothing here can tell who ended it) it runs again, and
        the manifest's ``abrupt_ends`` keeps that it did (the gate, the report and the run's view say so).
    progress : bool or callable, optional
        ``True``/``False`` shows/hides a progress bar; a callable ``progress(done, total)`` is called
        instead. Default: a bar in Jupyter and when stderr is a terminal.
    chunk_size : int
        Cases per task sent to ``executor``.
    cache : bool
        Take fault replays from the replay cache and store new ones there (default). ``False``
        runs every replay live and leaves the cache untouched.
    isolation : {"thread", "process"}, optional
        Default: the suite's ``isolation`` (``thread`` unless oloproof.yaml says otherwise).
        ``process`` runs each worker in its own process, killed and replaced when a call
        overruns ``case_timeout_s`` (see the README's thread model). It guards against a
        system that hangs or crashes, not one that games its evaluation: a worker also runs
        the checks of its cases, so it is no security boundary.
    fsync : {"finish", "record"}
        When the run's journals are forced to the disk: when the run finishes (default), or
        after every record (survives a power loss at any moment; one disk flush per record).
    epochs : int, optional
        Run each case this many times, each from a fresh reset (default: the suite's ``epochs``,
        1 unless oloproof.yaml says otherwise). Every frame carries ``epoch`` (1..k); see
        :func:`reduce_epochs` for pass^k and pass@k. A resumed run keeps the epochs it started with.

    Returns
    -------
    Run
        Rebuilt from the run directory, exactly as :func:`load_run` would.

    Raises
    ------
    RunDirError
        ``cases.jsonl`` or ``replays.jsonl`` no longer holds the bytes the run wrote when it finishes, or
        is a symbolic link (something else, such as the system under test, wrote into the run folder): the run is
        recorded as ``journal_changed`` and never loaded, gated or resumed.
    OloproofError
        Anything else that stops a run, in one line: a system that cannot be built, the one instance
        of ``system=`` after a timed-out call, a batch the ``executor`` lost, a failed write (the
        run folder and the command to resume it are named).

    Examples
    --------
    The bundled ``false-success`` suite: every answer says the report was written, four of the six
    reports were not (or were stale, or wrong).

    >>> import oloproof_nb as op
    >>> import tempfile
    >>> from oloproof_nb.examples import init_example
    >>> tmp = tempfile.TemporaryDirectory()
    >>> suite = op.load_suite(init_example("false-success", tmp.name + "/suite"))
    >>> run = op.run(suite, progress=False)
    >>> run.verdicts.groupby("criterion").verdict.value_counts().to_dict()
    {('answer_matches', 'pass'): 6, ('outcome_verified', 'fail'): 4, ('outcome_verified', 'pass'): 2}
    >>> run.directory.parent.name  # runs/<run_id>/ in the suite folder
    'runs'
    >>> tmp.cleanup()
    """
    if not isinstance(suite, Suite):
        suite = load_suite(suite)
    close: Callable[[], None] = lambda: None  # noqa: E731
    callback: Progress | None
    if callable(progress):
        callback = callers_progress(progress)
    elif progress or (progress is None and (in_notebook() or stderr_is_tty())):
        callback, close = progress_bar(suite.name)
    else:
        callback = None
    copy = None if resume else LiveCopy()  # the columnar copy, built as the records are appended
    try:
        directory = run_suite(suite, system=system, workers=workers, executor=executor, out=out, resume=resume,
                              progress=callback, chunk_size=chunk_size, cache=cache, isolation=isolation,
                              fsync=fsync, epochs=epochs, sink=copy)
    except BaseException:
        if copy is not None:
            copy.abort()
        raise
    finally:
        close()
    if copy is not None:
        copy.commit()
    return Run.load(directory)


def load_run(directory: str | Path) -> Run:
    """Rebuild a :class:`Run` from its directory.

    A torn last line (the process died mid-write) is ignored; a case recorded
    twice (never written by oloproof) keeps its first record. Only the manifest
    is read here; each frame is read on first access, from the run's columnar
    copy (``frames/``), which is built from the journal first when it is
    missing or older than the journal.

    Parameters
    ----------
    directory : str or Path
        A run directory (``runs/<run_id>/``), finished or interrupted.

    Returns
    -------
    Run
        Its frames equal those of the :class:`Run` that :func:`run` returned.

    Raises
    ------
    RunDirError
        The folder is not a run directory, or its manifest or journal cannot be read (one line naming
        the file and what is wrong; for a suite folder or its ``runs/``, the latest run to give instead),
        or its journal was changed while it ran (``journal_changed`` in the manifest: not the records
        the run wrote).

    Examples
    --------
    >>> import oloproof_nb as op
    >>> import tempfile
    >>> from oloproof_nb.examples import init_example
    >>> tmp = tempfile.TemporaryDirectory()
    >>> first = op.run(init_example("false-success", tmp.name + "/suite"), progress=False)
    >>> again = op.load_run(first.directory)
    >>> again.run_id == first.run_id, again.verdicts.equals(first.verdicts)
    (True, True)
    >>> tmp.cleanup()
    """
    try:
        return Run.load(_run.run_directory(directory, "load_run"))
    except RunDirError as exc:
        if not _inspect_files.is_inspect_source(Path(directory)):
            raise
        what = "is an Inspect AI log: read it" if Path(directory).is_file() else "holds Inspect AI logs: read them"
        raise RunDirError(f"{exc}; it {what} with op.from_inspect({str(directory)!r})") from None


def load_runs(directories: list[str | Path]) -> Run:
    """Open several run directories of one suite as one :class:`Run` whose frames carry ``run_id``.

    For notebooks that compare system versions or pool epochs: every frame is
    the runs' frames one after another, with a first column ``run_id``
    (``snapshots`` already has one). Each run is opened as by :func:`load_run`
    (its columnar copy built if missing); frames are read on first access.

    Parameters
    ----------
    directories : list of path
        Run directories of the same suite, judging the same criteria (each once), made by one oloproof_nb
        release (as a resume is), in the order given (a set, which has none, sorted by path): the first gives the
        configuration.

    Returns
    -------
    Run
        ``run.runs`` lists the runs; ``run.run_id`` is their ids joined with
        ``+``; the configuration, release.yaml and validity labels are the first
        run's (the runs' labels give every pair the same label: others are refused).

    Notes
    -----
    ``op.gate`` on a pooled run pools every run's verdict rows per criterion.
    Rows keep their case's cluster, so the same case in several runs (repeats,
    epochs) falls in one cluster: the pooled run is clustered (the clustered
    methods, ``allow_approximate_methods`` and ``min_clusters`` apply) and the
    interval is not narrowed by treating repeats of a case as independent. It
    answers "how often does this system pass, over every run"; to compare two
    versions, look at their rows side by side (``groupby("run_id")``) or gate
    each run. The gate gives no release decision (``BLOCK``, see
    ``Gate.reason``) on a pool of runs of different systems, of a system that
    records no code fingerprint (``mixed_systems``), or of other cases
    (``mixed_cases``: a case counts once per run that holds it).

    Examples
    --------
    >>> import oloproof_nb as op
    >>> both = op.load_runs(["runs/a", "runs/b"])                 # doctest: +SKIP
    >>> both.verdicts.groupby(["run_id", "criterion"])["verdict"].value_counts()   # doctest: +SKIP
    """
    return pool(Run, [Run.load(d) for d in directory_list(directories)])


def from_inspect(path: str | Path, *, cluster: str | None = None, state_key: str | None = None,
                 score_map: ScoreMap | None = None, pass_threshold: _inspect_log.PassThreshold | None = None) -> Run:
    """Read Inspect AI eval logs into a :class:`Run`, without running anything again.

    Parameters
    ----------
    path : str or Path
        One log (``.eval`` or ``.json``), or a folder: every Inspect log in it and in its folders, two
        levels (Inspect AI writes its logs flat into its log folder; deeper files are not read), logs of one
        model; a sample id and epoch may appear once.
    cluster : str, optional
        A metadata key whose value is each sample's cluster (samples sharing a topic, a source
        document …). Default: each sample is its own cluster (its epochs share it).
    state_key : str, optional
        The key under which the solver kept the world in the sample store: gives ``snapshots`` (the
        final value) and ``changes`` (against the value right after the first store event that wrote
        it). A ``StoreModel``'s fields (``<state_key>:<field>``) are gathered into one dict.
    score_map : mapping or callable, optional
        How score values map to verdicts, over the default table (``{"P": "pass"}``; applied to each key's
        value of a dict-valued score), or a function ``f(value) -> "pass" | "fail" | "missing" | bool | None``
        that replaces it (given a dict-valued score whole: its scorer is then one criterion, as before).
    pass_threshold : float or mapping of str to float, optional
        A numeric score passes at or above this. Not given, a score in [0, 1] passes at 1 (full marks)
        and any other number is ``missing`` (a 1–10 rating of 2 must not pass at 1: say the cut). One number is
        every criterion's: above 1, a criterion whose every score is in [0, 1] cannot pass (warned). A mapping
        gives each criterion named its own (``{"rating": 7, "accuracy": 0.5}``; a key of a dict-valued score by
        its criterion's name, as the verdicts name it: ``small/match`` for a task's own); a criterion not named
        keeps the default rule, and a name that no criterion of the logs has is an error listing those there are.
        Each threshold is a finite number.

    Returns
    -------
    Run
        Held in memory (nothing is written): ``cases`` (``case_id`` the sample id, ``epoch``,
        ``digest`` the sample digest, ``status``, ``metadata``, plus ``input`` and ``target``),
        ``steps``, ``verdicts`` (one criterion per scorer, and per key of a dict-valued scorer, named as
        Inspect's results name it: the key, or ``scorer/key`` when another scorer has that key or name;
        evaluator ``inspect_scorer``; where the logs hold several tasks, a name more than one task's samples
        have is a criterion per task, ``<task>/<name>``: ``bulk/match``, ``small/match``), and with
        ``state_key`` ``snapshots`` and ``changes``. ``op.gate``, ``op.slice_table``, plots,
        ``export_table``, ``run.panel`` and reports work on it; ``run.system_version`` is the model.

    Raises
    ------
    OloproofError
        inspect-ai is not installed (``pip install 'oloproof_nb[inspect]'``), the path holds no
        Inspect log, a metadata key or store key is not there, a ``pass_threshold`` is no finite number or
        names a criterion the logs do not have, or logs of several models are mixed.

    Notes
    -----
    Default score mapping (see ``oloproof_nb._core.scoremap``): ``C`` pass; ``I``, ``P`` (partial)
    and ``N`` (no answer) fail; ``True``/``False`` pass/fail; a number passes at or above
    the criterion's ``pass_threshold`` (not given: 1, and a number outside [0, 1] is ``missing``); ``"yes"``/``"true"``
    pass, ``"no"``/``"false"`` fail; anything else, no score, or a sample that raised: ``missing``
    (never a pass). A dict value (``{"correct": "C", "safe": 1}``) is a verdict per key, each by this table.

    Examples
    --------
    >>> import oloproof_nb as op
    >>> run = op.from_inspect("logs/", cluster="topic", state_key="world")     # doctest: +SKIP
    >>> rated = op.from_inspect("logs/", pass_threshold={"rating": 7})          # doctest: +SKIP
    >>> op.gate(run, release={"criteria": {"match": 0.9}}).verdict             # doctest: +SKIP
    """
    return _inspect_log.from_inspect(path, cluster=cluster, state_key=state_key, score_map=score_map,
                                     pass_threshold=pass_threshold, cls=Run)


def gate(run: _run.Run, release: ReleaseLike | None = None, *,
         baseline: Baseline | _run.Run | str | os.PathLike[str] | None = None,
         criteria: dict[str, float] | None = None, confidence: float | None = None,
         method: str | None = None) -> Gate:
    """Apply the release gate to a run (see :func:`oloproof_nb._analysis.gate.gate` for the rule)."""
    run = _run.as_run(run, "gate: run")
    g = _gate.gate(run, release, baseline=baseline, criteria=criteria, confidence=confidence, method=method)
    return Gate.of(g, abrupt_ends=tuple(abrupt_ends(run)),
                   pooled=pool_note(run, g.table),
                   given=(release, criteria, confidence, method) != (None,) * 4,
                   unchecked=unchecked_notes(run, g.table["criterion"]),
                   no_criteria=no_criteria_note(run, g, release, python=True) or "")


gate.__doc__ = _gate.gate.__doc__
