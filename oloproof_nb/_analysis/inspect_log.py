"""Inspect AI eval logs as a :class:`~oloproof_nb._analysis.run.Run`, without running anything again.

A log (``.eval`` or ``.json``) or a folder of logs is read through ``inspect_ai.log`` (the optional
extra ``[inspect]``, imported only here and only when a log is read). Each sample × epoch becomes a
case record like the ones a run writes, so the same frames, gate, slice tables, plots and reports
apply:

- ``cases``: ``case_id`` is the sample id as text, ``epoch`` (1-based), ``status`` (``completed``;
  ``error`` when the sample raised; ``timeout`` at a time or working-time limit; ``failed`` at any other
  limit, the limit named in ``error``), ``metadata`` the sample's; an Inspect run's cases also carry
  ``input`` and ``target``. ``digest`` is the **sample digest**: SHA-256 of the canonical JSON of
  ``{id, input, target, metadata}`` (plus ``choices`` when the sample has them; message ids left out) of
  the sample as the dataset gave it (its ``sample_init`` event: the log's ``metadata`` is the final task
  state's, which a solver may change), the same for every epoch, so ``op.compare`` pairs the samples of
  two logs of one dataset. ``metadata`` is the log's.
- ``steps``: the messages the run added (assistant turns as ``message`` steps named after the model,
  each followed by its tool calls as ``tool_call`` steps with the arguments and the result; user
  messages a solver added as ``message`` steps); system messages and the input's messages are left out.
  A tool result is its JSON value when its text parses as JSON or a Python literal (Inspect stores a
  dict result as its ``str()``) into a value nested at most ``MAX_DEPTH`` (200) levels, else the text; a tool
  error becomes ``{"ok": false, "error": type, "message": ...}``, so ``is_error`` follows the usual rule.
- ``verdicts``: one criterion per scorer (evaluator ``inspect_scorer``), named as the samples' scores name it
  (a scorer function run twice in one task: ``graded`` and ``graded1``, :func:`scorer_names`), each score mapped by
  :func:`~oloproof_nb._core.scoremap.score_verdict` (see that module for the table and ``score_map``).
  A scorer that gives a dict value (``{"correct": "C", "safe": 1}``, one metric per key) is one criterion per
  key instead, each key's value mapped by the same table: named as Inspect's results name that key's metrics, the
  key alone, or ``scorer/key`` when another scorer has that key or that name (:func:`criterion_names`). A sample
  whose dict lacks a key of its task's scorer, or whose value is not a dict, is ``missing`` for that key (a key
  only another task's scorer of that name gives is no criterion of its samples; a task whose scorer of that name
  gives no dict but plain scores has the scorer's own criterion, named by it). A ``score_map`` function is
  given the whole dict, as before (its scorer stays one criterion); a mapping ``score_map`` applies to each key's
  value. A sample that raised is ``missing`` for every scorer. A criterion is one task's: where the logs hold the
  samples of several tasks and a name would have rows of more than one (``match()`` scores two tasks), it is a
  criterion per task, ``<task>/<name>`` (``bulk/match``, ``small/match``; ``bulk/checks/correct`` for a key named
  ``checks/correct``), each with its task's scorer options; a name only one task's samples have keeps it
  (:meth:`Reader._split_by_task`). Pooled, 0 of 10 in one task beside 300 of 300 in another passed at 0.9.
  A score under a name no scorer of the eval gave (not in the header's ``eval.scorers``, and no ``score`` event of
  the sample names it, as one its solver set does) was added by hand after the eval (``edit_score``): warned, and no
  criterion (:func:`added_scores`; a release naming it is refused). Of a sample the eval scored (its ``scorers``
  span), only the scores its final ``score`` events name are the eval's: one added under a scorer's own name where
  that scorer gave none is left out too, warned (the sample is missing on it).
- ``cluster``: the value of a metadata key (``cluster="topic"``; the dataset's value, else the log's, and
  an error when a sample's epochs disagree), or each sample its own cluster (its epochs share it, so a
  log with epochs is clustered).
- a log of a selection of its dataset (``--sample-id``, ``--limit``: its header's ``dataset.sample_ids`` fewer than
  ``dataset.samples``, counted over the logs of its task and dataset) holds fewer samples than planned, as a
  drained one: :func:`unrun_samples` says so, and the gate gives no release decision.
- the logs of a folder are of one agent: one model (``eval.model``), the same generation settings, model arguments,
  solver and sample limits (:func:`agent_settings`: the settings of how calls reach the model,
  :data:`OPERATIONAL_SETTINGS` and :data:`OPERATIONAL_MODEL_ARGS`, may differ, as in shards and retries), and the logs
  of a task of one version of it and one sandbox (:func:`task_settings`), else the folder is refused in one line
  naming the two logs and the setting.
- ``snapshots`` and ``changes``, with ``state_key``: the final state is the sample store's value under
  that key (or, for an Inspect ``StoreModel``, the fields stored as ``<state_key>:<field>``); the
  initial state is that value right after the first store event that wrote it (the solver's set-up),
  replayed from the sample's store events. A sample without such an event has its snapshot but no
  ``changes`` rows (its initial state is unknown).

The parts live beside this module: :mod:`.inspect_files` (which files are logs, and guarding one before inspect-ai
reads it), :mod:`.inspect_records` (a sample as a case record, and :class:`~.inspect_records.Reader`, which judges
the scores) and :mod:`.inspect_settings` (the criterion names, scorer options and score readings that make a check,
and the settings that make the logs of a folder one agent).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Literal, TypeVar

import numpy as np
import pandas as pd
from pydantic import ValidationError

from .._config.suite_config import SuiteConfig
from .._core.canonical import iso
from .._core.evaluator import CaseContext, Evaluation, Evaluator
from .._core.records import CaseRecord, Manifest, ReplayRecord, StoredSuite
from .._core.scoremap import ScoreMap, check_score_map
from .._run.states import StateReader
from .._version import __version__
from ..errors import OloproofError, VacuousCheckWarning, describe_exception, validation_problem, warn_at_caller
from . import frames
from .columns import FRAMES
from .inspect_files import check_log_nesting, inspect_log_files
from .inspect_records import Reader, iso_time
from .inspect_settings import (
    agent_settings,
    check_retuned,
    epoch_settings,
    options_text,
    same_agent,
    same_options,
    score_reading,
    scorer_names,
    task_settings,
)
from .journal import Journal
from .run import Run

__all__ = ["from_inspect", "is_inspect_run", "unrun_samples", "task_criteria", "added_scores",
           "InspectScorer", "INSPECT_EXTRA", "DEFAULT_SLICES", "PassThreshold"]

R = TypeVar("R", bound=Run)

#: ``pass_threshold=``: one number for every criterion, or a mapping criterion name -> number (the criteria not
#: named keep the default rule).
PassThreshold = float | Mapping[str, float]

INSPECT_EXTRA = "pip install 'oloproof_nb[inspect]'"
#: Slices an Inspect run's report shows.
DEFAULT_SLICES = ["tool_calls:1,2,4", "trajectory_length:2,4,8"]


class InspectScorer(Evaluator):
    """A scorer of an Inspect AI log: its verdicts are read from the log's scores, never computed here.

    Not registered as an evaluator type: it cannot be written in oloproof.yaml, only read from a log.
    """

    type: Literal["inspect_scorer"] = "inspect_scorer"
    #: The scorer's arguments as the log declares them (canonical JSON; empty when the log says none): a scorer
    #: run with other arguments (``strict=False``, another grader model) is another check (``check_changed``).
    options: str = ""
    #: How its scores were read into verdicts when not by the defaults (``pass_threshold``, ``score_map``;
    #: canonical JSON, empty for the defaults): a log read with a lower threshold, or a map that passes ``P``,
    #: is judged by another check (``check_changed``), as a scorer run with other arguments is.
    reading: str = ""
    scope: ClassVar[Literal["case"]] = "case"

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        return self.missing("an Inspect scorer is read from the log, not run")


class _HeldRecords(Journal):
    """The case records of a Run held in memory, answering what a run directory's journal answers."""

    def __init__(self, directory: Path, records: list[CaseRecord]) -> None:
        super().__init__(directory, StateReader(directory))
        self._held = records
        self._by_key = {(r["case"]["id"], _epoch_of(r)): r for r in records}

    def record(self, case_id: str, epoch: int = 1) -> CaseRecord | None:
        return self._by_key.get((case_id, epoch))

    def stored_cases(self, keys: Iterable[tuple[str, int]]) -> dict[tuple[str, int], dict[str, Any]]:
        return {key: dict(self._by_key[key]["case"]) for key in keys if key in self._by_key}

    def replays_of(self, case_id: str, epoch: int = 1) -> list[ReplayRecord]:
        return []

    def records(self) -> list[CaseRecord]:
        return list(self._held)

    def replay_records(self) -> list[ReplayRecord]:
        return []


def _epoch_of(rec: CaseRecord) -> int:
    """A record's epoch (1 when it has none)."""
    case: dict[str, Any] = dict(rec["case"])
    return int(case.get("epoch", 1))


def _inspect() -> ModuleType:
    try:
        import inspect_ai.log as log
    except ImportError:
        raise OloproofError(f"reading Inspect AI logs needs inspect-ai: {INSPECT_EXTRA}") from None
    return log


def _modified_at(file: Path) -> str:
    """When a log that records no creation time was last modified: its start time instead. One whose modification
    time ``datetime`` cannot hold (the years 1–9999; a file system may hold more) is refused, naming the file."""
    try:
        return iso(datetime.fromtimestamp(file.stat().st_mtime, timezone.utc))
    except (ValueError, OverflowError, OSError):
        raise OloproofError(f"{file}: records no creation time, and its modification time is outside the years "
                            "1–9999; give a log that records when it was created") from None


#: Samples of an ``.eval`` archive asked of Inspect's reader at once. Its one-sample reader parses the
#: archive's central directory again for every sample, so reading a log one sample at a time grew with the
#: square of its samples (4,000 samples: about 145 s, a one-off timing; ``benchmarks/inspect_logs.py``
#: times the batches); a batch parses it once, and holds BATCH samples in memory (128 samples of 1 MB each took
#: 947 MB at peak against 705 MB one at a time: a one-off measurement, no script).
BATCH = 64
#: Most sample epochs (dataset samples × epochs) of a header's plan listed one by one. A log's header is text anyone
#: can edit: ``"epochs": 10000000000000000000`` in a 300 KB log set the plan, a list of 4 × 10¹⁹ entries, being
#: built until memory ran out (23 GB on the machine it was tried on, where the kernel killed the process).
#: A larger plan is read by the log's own summaries.
MAX_PLAN = 1_000_000


def _samples(log: ModuleType, file: Path, header: Any) -> Iterator[Any]:
    """The samples of one log, streamed in Inspect's order (each dataset sample's epochs in turn, then those its
    ``SampleSource`` added); a damaged sample is one error naming the file. A sample the log lacks is left out (the
    count check names it).

    The plan is the header's ``dataset.sample_ids`` × ``epochs``. A log short of it (unfinished, drained) is asked
    only for what its summaries say it holds; so is one whose header counts other samples than the plan: a task whose
    dataset is a ``SampleSource`` adds samples and epochs (``enqueue_sample(..., epoch=2)``) as it runs, which the
    plan leaves out (Inspect's ``read_eval_log_samples`` reads only the plan: such a valid log was refused as
    damaged, 4 of its 8 samples read).
    """
    try:
        ids = getattr(header.eval.dataset, "sample_ids", None)
        if ids is None:  # Inspect's reader says what is wrong (a log without sample_ids)
            yield from log.read_eval_log_samples(file, all_samples_required=False, resolve_attachments=True)
            return
        epochs = int(header.eval.config.epochs or 1)
        plan = len(ids) * epochs  # counted, not listed (MAX_PLAN)
        total = getattr(header.results, "total_samples", None)
        held: list[tuple[Any, int]] | None = None
        if plan > MAX_PLAN or header.status != "success" \
                or getattr(header.results, "logged_samples", None) is not None \
                or (isinstance(total, int) and total != plan):
            try:
                held = list(dict.fromkeys((s.id, int(s.epoch)) for s in log.read_eval_log_sample_summaries(file)))
            except Exception:  # noqa: BLE001 - no readable summaries: ask for the plan, batch by batch
                held = None
        if held is not None:  # the plan's sample epochs the log holds, in the plan's order, then those it adds
            listed = {str(sid) for sid in ids}
            epochs_of: dict[str, set[int]] = {}
            for sid, epoch in held:
                epochs_of.setdefault(str(sid), set()).add(epoch)
            wanted = [(sid, epoch) for sid in ids
                      for epoch in sorted(e for e in epochs_of.get(str(sid), ()) if 1 <= e <= epochs)]
            wanted += [(sid, epoch) for sid, epoch in held if not (str(sid) in listed and 1 <= epoch <= epochs)]
        elif plan > MAX_PLAN:
            raise OloproofError(f"{file}: its header plans {plan:,} sample epochs ({len(ids):,} samples × "
                                f"{epochs:,} epochs), more than the {MAX_PLAN:,} oloproof lists without the log's "
                                "sample summaries, which cannot be read; not an Inspect AI log oloproof reads")
        else:
            wanted = [(sid, epoch) for sid in ids for epoch in range(1, epochs + 1)]
        batched = getattr(log, "read_eval_log_samples_by_id", None)  # inspect-ai releases before it: one at a time
        if file.suffix.lower() != ".eval":  # a .json log is read whole for each sample, by Inspect as by this
            batched = None
        size = BATCH if batched is not None else 1
        for start in range(0, len(wanted), size):
            batch = wanted[start:start + size]
            if batched is not None:
                try:
                    yield from batched(file, batch, resolve_attachments=True)
                    continue
                except IndexError:  # a sample missing from the archive: this batch one by one, without it
                    pass
            for sid, epoch in batch:
                try:
                    yield log.read_eval_log_sample(file, sid, epoch, resolve_attachments=True)
                except IndexError:
                    continue
    except OloproofError:
        raise
    except Exception as exc:  # noqa: BLE001 - inspect raises many kinds for a damaged log
        raise OloproofError(f"{file}: cannot read the samples of this Inspect AI log ({_why(exc)})") from None


def _build_frames(records: list[CaseRecord], config: SuiteConfig, unknown_initial: set[tuple[str, int]],
                  ) -> dict[str, pd.DataFrame]:
    """Every frame of the records (the same items a run directory's columnar copy is built from)."""
    items: dict[str, list[Any]] = {name: [] for name in FRAMES}
    epochs: dict[str, list[int]] = {name: [] for name in FRAMES}
    for rec in records:
        epoch = _epoch_of(rec)
        for name, found, _ in frames.journal_items([([rec], [None], [None])], config.tool_errors, None,
                                                   cell=frames.as_is):
            items[name] += found
            epochs[name] += [epoch] * len(found)
    built = {name: FRAMES[name].build(items[name]) for name in FRAMES}
    for name, frame in built.items():
        if "epoch" not in frame.columns:  # the frame specs do not carry it yet: every frame of a run with epochs does
            frame["epoch"] = np.asarray(epochs[name], dtype=np.int64)
    cases = built["cases"]
    cases["input"] = pd.Series([rec["case"]["input"]["input"] for rec in records], dtype=object)
    cases["target"] = pd.Series([rec["case"]["expected"]["answer"] for rec in records], dtype=object)
    if unknown_initial:
        changes = built["changes"]
        keep = [(c, int(e)) not in unknown_initial for c, e in zip(changes["case_id"], changes["epoch"], strict=True)]
        built["changes"] = changes[np.asarray(keep, dtype=bool)].reset_index(drop=True)
    return built


def is_inspect_run(run: Run) -> bool:
    """Whether ``run`` was read from Inspect AI logs (by :func:`from_inspect`)."""
    return bool(run.manifest.suite_config.config.get("inspect_logs"))


def task_criteria(run: Run) -> dict[str, list[str]]:
    """Per criterion name the samples of several tasks of ``run``'s Inspect AI logs share (``match``): the
    criteria it is read as, one per task (``["bulk/match", "small/match"]``); empty for a run of other logs."""
    split = run.manifest.suite_config.config.get("inspect_tasks") if is_inspect_run(run) else None
    return {str(name): [str(c) for c in named] for name, named in (split or {}).items()}


def added_scores(run: Run) -> list[str]:
    """The names under which a person added scores to ``run``'s Inspect AI logs after the eval, which no scorer of the
    eval gave (no criteria: :func:`~.inspect_settings.added_hint`); empty for a run of other logs."""
    added = run.manifest.suite_config.config.get("inspect_added") if is_inspect_run(run) else None
    return [str(name) for name in added or []]


def _why(exc: BaseException) -> str:
    """Why Inspect could not read a log, in one line: its own reason (the first line of its message, and of the
    cause it keeps the reason in, by :func:`~oloproof_nb.errors.describe_exception`), and a pydantic validation
    error as its first problem in the words of :func:`~oloproof_nb.errors.validation_problem` (the key, what is
    wrong), not the whole dump."""
    if isinstance(exc, ValidationError) and exc.error_count():
        key, message, _ = validation_problem(exc)
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        return f"{key or '(the log)'}: {message}{more}"
    text = describe_exception(exc)  # Inspect's reasons can run over several lines: the first
    cause = exc.__cause__
    if cause is not None and cause is not exc and describe_exception(cause) != type(cause).__name__:
        return f"{text}; {_why(cause)}"
    return text


def _check_sample_count(file: Path, header: Any, read: int) -> str | None:
    """Raise when a finished log holds fewer samples than its header counts; say when it holds fewer than its
    eval planned.

    The plan of a finished eval is ``results.total_samples`` (dataset samples × epochs) less the sample epochs
    an early-stopping manager skipped. A drained or cancelled task's header counts the samples it resolved in
    ``results.logged_samples``, the cancelled ones left out although their transcripts are in the log (they
    read as errors). A log holding fewer samples than its header counts lost entries (a damaged archive, or
    ``log_samples=False``) and would otherwise be judged on what is left: its failing samples gone, a PASS.

    Returns
    -------
    str or None
        Why the log holds fewer samples than its eval planned (``inspect ctl task drain``, ``task cancel``, an
        early-stopping manager), or None. The samples that never ran are no evidence either way, and may be the
        failing ones: such a log has no release decision (:func:`unrun_samples`).
    """
    results = getattr(header, "results", None)
    if header.status != "success" or results is None:
        return None
    planned = int(getattr(results, "total_samples", 0) or 0)
    stopping = getattr(results, "early_stopping", None)  # sample epochs an early-stopping manager never ran
    stops = list(getattr(stopping, "early_stops", None) or [])
    logged = getattr(results, "logged_samples", None)
    counted = int(logged) if logged is not None else planned - len(stops)
    if counted and (read < counted or (logged is None and read != counted) or read > planned > 0):
        raise OloproofError(f"{file}: its header counts {counted} samples (dataset samples × epochs) but {read} "
                            "could be read: the log is damaged, or was written without its samples "
                            "(log_samples=False)")
    if stops:
        first = stops[0]
        return (f"{file.name}: an early-stopping manager ({getattr(stopping, 'manager', '?')}) skipped {len(stops)} "
                f"of its {planned} planned sample epochs (sample {str(first.id)!r} epoch {first.epoch} first)")
    if logged is not None and read < planned:
        return (f"{file.name}: {planned - read} of its {planned} planned sample epochs never ran "
                "(the task was drained or cancelled)")
    return None


def _note_selection(picked: dict[tuple[str, str, int], tuple[set[str], Path]], task: str, dataset: Any,
                    file: Path) -> None:
    """Add to ``picked`` the ids of the samples the log ``file`` of ``task`` ran (its header's
    ``dataset.sample_ids``), under its task and dataset (its name and ``dataset.samples``): a log without them
    adds nothing. Logs of one task name on different datasets (a task argument picking the dataset) are counted
    apart: pooled, a complete log of the larger one hid a selection of the smaller one. The dataset's location
    is not part of it: Inspect writes it relative to the working folder, which shards run elsewhere differ in."""
    total, ids = getattr(dataset, "samples", None), getattr(dataset, "sample_ids", None)
    if isinstance(total, int) and ids is not None:
        key = (task, str(getattr(dataset, "name", None) or ""), total)
        ran, first = picked.get(key, (set(), file))
        picked[key] = (ran | {str(sid) for sid in ids}, first)


def _selections(picked: dict[tuple[str, str, int], tuple[set[str], Path]]) -> list[str]:
    """Why the logs of a task ran fewer of its dataset's samples than it has (``--limit``, ``--sample-id``), one
    reason per such task and dataset. The logs of one task that together ran every sample (shards of
    ``limit=(0, 10)`` and ``limit=(10, 20)``) give none. A selection is a plan that left samples out, as a drain
    does: the samples left out may be the failing ones (17 of 20 picked by ``--sample-id``, the 3 failing left
    out, gave PASS)."""
    return [f"{first.name}: task {task!r} ran {len(ran)} of its dataset's {size} samples (a --limit or --sample-id "
            "selection; to gate it, run every sample, or shards that together cover the dataset, into one folder)"
            for (task, _, size), (ran, first) in picked.items() if len(ran) < size]


def unrun_samples(run: Run) -> str:
    """Why ``run``, read from Inspect AI logs, holds fewer samples than its evals planned ("" when it does not)."""
    return "; ".join(why for one in run.runs for why in one.manifest.suite_config.config.get("inspect_unrun") or [])


def _thresholds(pass_threshold: PassThreshold | None) -> float | dict[str, float] | None:
    """``pass_threshold=`` checked: a finite number (not a bool; a NumPy number is one), or a mapping criterion
    name -> such a number (an empty one is the default rule, as None); one line naming what is wrong otherwise.

    Examples
    --------
    >>> _thresholds(7), _thresholds({"rating": np.int64(7)}), _thresholds({})
    (7.0, {'rating': 7.0}, None)
    """
    def finite(value: Any) -> bool:  # -inf: every score passed; a NumPy number is one (np.int64(7) was refused)
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            return False
        try:
            return math.isfinite(value)
        except OverflowError:  # an int beyond a float's range (10**400): no float to compare a score with
            return False

    if pass_threshold is None:
        return None
    if isinstance(pass_threshold, Mapping):
        for name, value in pass_threshold.items():
            if not isinstance(name, str) or not name:
                raise OloproofError(f"pass_threshold: key {name!r} is no criterion name; give {{criterion name: "
                                    "number}, a criterion named as the verdicts name it")
            if not finite(value):
                raise OloproofError(f"pass_threshold[{name!r}]={value!r}: give a finite number (a numeric score of "
                                    f"criterion {name} passes at or above it)")
        return {name: float(value) for name, value in pass_threshold.items()} or None
    if not finite(pass_threshold):
        raise OloproofError(f"pass_threshold={pass_threshold!r}: give a finite number (a numeric score passes at or "
                            "above it)")
    return float(pass_threshold)


def from_inspect(path: str | Path, *, cluster: str | None = None, state_key: str | None = None,
                 score_map: ScoreMap | None = None, pass_threshold: PassThreshold | None = None,
                 cls: type[R] = Run) -> R:  # type: ignore[assignment]
    """Read an Inspect AI log (or a folder of logs) into a Run; see ``op.from_inspect``."""
    try:
        check_score_map(score_map)
    except ValueError as exc:
        raise OloproofError(str(exc)) from None
    thresholds = _thresholds(pass_threshold)
    files = inspect_log_files(path)
    log = _inspect()
    reader = Reader(cluster, state_key, score_map, thresholds)
    records: list[CaseRecord] = []
    scorers: list[list[str] | None] = []  # per record, the scorers its log declares
    tasks: dict[str, None] = {}
    models: dict[str, None] = {}
    run_ids: dict[str, None] = {}
    created: list[str] = []
    finished: list[str | None] = []
    options: dict[tuple[str, str], tuple[str, Path]] = {}  # (task, scorer name) -> its options, the first log
    agents: dict[tuple[str, ...], tuple[dict[str, str], Path]] = {}  # model[, task] -> its settings, a log
    unrun: list[str] = []  # per log that holds fewer samples than it planned: why
    picked: dict[tuple[str, str, int], tuple[set[str], Path]] = {}  # per task and dataset: ids run, a log
    for file in files:
        check_log_nesting(file)
        try:
            header = log.read_eval_log(file, header_only=True)
        except Exception as exc:  # noqa: BLE001 - inspect raises many kinds for a damaged log
            raise OloproofError(f"{file}: cannot read this Inspect AI log ({_why(exc)})") from None
        spec = header.eval
        tasks.setdefault(str(spec.task), None)
        reader.tasks[file] = (str(spec.task), str(getattr(spec, "task_id", None) or ""))
        models.setdefault(str(spec.model), None)
        run_ids.setdefault(str(spec.run_id or spec.eval_id), None)
        start = iso_time(spec.created, "") or _modified_at(file)
        created.append(start)
        declared_scorers = list(getattr(spec, "scorers", None) or [])
        declared = scorer_names([str(scorer.name) for scorer in declared_scorers])
        reader.declared[file] = set(declared)
        for name in declared:
            reader.criteria.setdefault(name, None)
        for name, scorer in zip(declared, declared_scorers, strict=True):
            same_options(options, name, options_text(scorer), file, str(spec.task))
        check_retuned(header, file)
        model_settings, plan_settings = agent_settings(header)  # keyed by model: other models are refused below
        same_agent(agents, (str(spec.model),), model_settings, file)
        same_agent(agents, (str(spec.model), str(spec.task)), plan_settings, file)
        same_agent(agents, (str(spec.model), str(spec.task), "task"), task_settings(header), file,
                    "two versions of the task")
        same_agent(agents, (str(spec.model), str(spec.task), "epochs"), epoch_settings(header), file,
                    "runs of different epochs, whose samples would weigh in the rate by their epochs")
        stats = getattr(header, "stats", None)
        done = iso_time(getattr(stats, "completed_at", None), "") if header.status == "success" else None
        finished.append(done or (start if header.status == "success" else None))
        before = len(records)
        for sample in _samples(log, file, header):
            records.append(reader.record(file, len(records), sample, str(spec.run_id or spec.eval_id),
                                         str(spec.model), start))
        short = _check_sample_count(file, header, len(records) - before)
        if short is not None:
            unrun.append(short)
        _note_selection(picked, str(spec.task), spec.dataset, file)
        seen = {name for rec in records[before:] for name, _ in reader.scores[rec["index"]]}
        own = [name for name in reader.criteria if name in seen or name in declared]
        scorers += [own if declared else None] * (len(records) - before)
    unrun += _selections(picked)
    if len(models) > 1:
        raise OloproofError(f"{path}: logs of different models ({', '.join(models)}); read one model's logs at a "
                            "time (one folder per model) and compare the runs with op.compare")
    if state_key is not None and not any(rec["environment_state"] is not None for rec in records):
        keys = ", ".join(sorted(reader.store_keys)[:10]) or "(the stores are empty)"
        raise OloproofError(f"{path}: state_key={state_key!r}: no sample's store holds it; store keys: {keys}")
    reader.judge(records, scorers)
    reader.one_scale(records)
    reader.missing_rows(records, scorers)
    vacuous = reader.floor_findings(path)
    for message in vacuous.values():
        warn_at_caller(VacuousCheckWarning(message))
    for message in reader.edit_findings(path):  # the gate still judges the values now: said, not decided here
        warn_at_caller(message)
    for message in reader.ceiling_findings(path).values():  # not vacuous (it cannot pass): the gate never PASSes it
        warn_at_caller(message)
    name = "+".join(tasks)
    config = SuiteConfig(name=name or "inspect", system="inspect_ai:eval", evaluators=[
        InspectScorer(criterion=c, options=options.get((reader.options_task(c), reader.scorer_of[c]), ("",))[0],
                      reading=score_reading(score_map, reader.threshold_of(c)))
        for c in reader.criteria],
        slices=DEFAULT_SLICES)
    manifest_fields: dict[str, Any] = {
        "suite": config.name, "run_id": "+".join(run_ids) or "inspect", "system_version": next(iter(models), None),
        "started_at": min(created), "oloproof_nb": __version__, "n_cases": len(records),
        "finished_at": max(f for f in finished if f is not None) if finished and all(finished) else None,
        "suite_config": StoredSuite(root=None, config={"name": config.name, "inspect_logs": [str(f) for f in files],
                                                      **({"inspect_unrun": unrun} if unrun else {}),
                                                      **({"inspect_added": list(reader.added)} if reader.added else {}),
                                                      **({"inspect_tasks": {name: list(named.values()) for name, named
                                                                            in reader.split.items()}}
                                                         if reader.split else {})},
                                    vacuous={name: [message] for name, message in vacuous.items()}),
    }
    if "epochs" in Manifest.model_fields:  # the epochs field of a run's manifest: the most epochs of a sample
        manifest_fields["epochs"] = max((_epoch_of(r) for r in records), default=1)
    manifest = Manifest.model_validate(manifest_fields)
    directory = Path(path) if Path(path).is_dir() else Path(path).parent
    built = _build_frames(records, config, reader.unknown_initial)
    return cls.held(directory, manifest, config, _HeldRecords(directory, records), built)
