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
  dict result as its ``str()``), else the text; a tool error becomes ``{"ok": false, "error": type,
  "message": ...}``, so ``is_error`` follows the usual rule.
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
  (:meth:`_Reader._split_by_task`). Pooled, 0 of 10 in one task beside 300 of 300 in another passed at 0.9.
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
"""

from __future__ import annotations

import ast
import copy
import functools
import hashlib
import json
import marshal
import math
import numbers
import re
import sys
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any, ClassVar, Literal, TypeVar

import numpy as np
import pandas as pd
from pydantic import ValidationError

from .._config.cases import LOOK_ALIKE_HELP, LookAlikes, key_look
from .._config.files import UnreadableFile, folder_problem, open_regular
from .._config.suite import SUITE_FILE, SuiteConfig
from .._core.canonical import canonical_json, digest, iso
from .._core.evaluator import CaseContext, Evaluation, Evaluator
from .._core.paths import flatten
from .._core.records import ENDED, ENV_SCHEMA, CaseRecord, Manifest, ReplayRecord, StoredSuite
from .._core.scoremap import ScoreMap, check_score_map, on_default_scale, score_verdict
from .._run.states import StateReader
from .._run.store import MANIFEST
from .._version import __version__
from ..errors import (
    OloproofError,
    VacuousCheckWarning,
    clip,
    describe_exception,
    quote,
    validation_problem,
    warn_at_caller,
)
from . import frames
from .columns import FRAMES
from .journal import Journal
from .run import Run

__all__ = ["from_inspect", "is_inspect_log", "inspect_log_files", "is_inspect_run", "unrun_samples", "sample_digest",
           "dataset_sample", "task_criteria", "split_hint",
           "InspectScorer", "INSPECT_EXTRA", "DEFAULT_SLICES", "PassThreshold"]

R = TypeVar("R", bound=Run)

#: ``pass_threshold=``: one number for every criterion, or a mapping criterion name -> number (the criteria not
#: named keep the default rule).
PassThreshold = float | Mapping[str, float]

INSPECT_EXTRA = "pip install 'oloproof_nb[inspect]'"
#: Slices an Inspect run's report shows.
DEFAULT_SLICES = ["tool_calls:1,2,4", "trajectory_length:2,4,8"]
#: A ``.json`` log is recognised by these keys in its first bytes.
_HEAD_BYTES = 65536
#: A ``.json`` log's first key is ``version`` (Inspect writes ``EvalLog`` fields in order). Inspect's
#: ``logs.json`` (the listing an ``eval_set`` writes beside its logs) holds ``"version"`` and ``"eval"``
#: one level down, under each log's name: it is not a log.
_JSON_LOG_START = re.compile(rb'\{\s*"version"\s*:')
#: A string (a key when a ``:`` follows it) or a bracket of JSON text, for :func:`_top_keys`.
_JSON_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"\s*:?|[\[\]{}]')


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


#: Deepest nesting of a log's JSON handed to inspect-ai. Its reader's memory grows faster than the depth: a
#: 200 KB ``.json`` log nested 100,000 deep took 24 GB before the kernel killed the process. Real logs nest a
#: few dozen levels (a tool's arguments, a state); oloproof refuses values deeper than 200 itself.
MAX_LOG_DEPTH = 1000
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth(data: bytes) -> int:
    """How deeply the JSON text ``data`` nests (0: a scalar), counted from its brackets outside strings.

    Vectorised (a regular expression drops the strings, NumPy sums the brackets), so a large log costs
    about as much as reading it once. Text that is not JSON gets some number; its reader refuses it.

    Examples
    --------
    >>> json_depth(b'{"a": [1, {"b": "[[[["}]}'), json_depth(b"3")
    (3, 0)
    """
    return _bracket_depth(_JSON_STRING.sub(b"", data))


def _bracket_depth(outside: bytes) -> int:
    """:func:`json_depth` of JSON text whose strings are already dropped."""
    brackets = outside.translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1).astype(np.int64)
    return int(np.cumsum(steps).max())


#: Largest member of an ``.eval`` archive read (uncompressed). A zip of 1 MB can hold a 1 GiB member (a review's
#: took 2.2 GB of memory); one sample's JSON, attachments included, is far below this.
MAX_LOG_MEMBER_BYTES = 256 * 1024 * 1024


def _member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, file: Path) -> bytes:
    """One member's bytes, never more than :data:`MAX_LOG_MEMBER_BYTES` (its declared size is not trusted)."""
    data = b""
    if info.file_size <= MAX_LOG_MEMBER_BYTES:
        with archive.open(info) as handle:
            data = handle.read(MAX_LOG_MEMBER_BYTES + 1)
    if info.file_size > MAX_LOG_MEMBER_BYTES or len(data) > MAX_LOG_MEMBER_BYTES:
        raise OloproofError(f"{file}: {info.filename}: more than {MAX_LOG_MEMBER_BYTES // 2**20} MiB uncompressed "
                            "(a compressed archive can hold far more than it takes on disk); not an Inspect AI log "
                            "oloproof reads")
    return data


#: ``bytes.translate`` table: every digit to ``0``, anything else to a space (a long run of digits is then found by a
#: substring search, and the slower regular expression that reads where the run starts only runs when there is one).
_DIGITS_AS_ZEROS = bytes(ord("0") if ord("0") <= code <= ord("9") else ord(" ") for code in range(256))


def check_log_nesting(file: Path) -> None:
    """Refuse a log whose JSON (a ``.json`` log, or any member of an ``.eval`` archive) nests deeper than
    :data:`MAX_LOG_DEPTH`, holds a number whose integer part has more digits than Python converts
    (``sys.get_int_max_str_digits()``, 4,300 by default: ijson 3.6's C parser, which inspect-ai reads with, then
    crashed the process with SIGSEGV, exit 139, on such an integer; one followed by a fraction or an exponent, which
    it reads, is refused too), or an archive member larger than :data:`MAX_LOG_MEMBER_BYTES` uncompressed, before
    inspect-ai reads it (one line naming the file and the member)."""
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()

    def check(data: bytes, where: str) -> None:
        outside = _JSON_STRING.sub(b"", data)
        depth = _bracket_depth(outside)
        if depth > MAX_LOG_DEPTH:
            raise OloproofError(f"{where}: nested {depth} levels deep (at most {MAX_LOG_DEPTH}); not an Inspect AI "
                                "log oloproof reads")
        if limit and b"0" * (limit + 1) in outside.translate(_DIGITS_AS_ZEROS) and re.search(
                rb"(?<![\d.eE+])(?<![eE]-)\d{%d}" % (limit + 1), outside):  # the regex only when digits run that long
            # inspect-ai reads logs with ijson, whose C parser crashes the process (SIGSEGV) on such a number
            raise OloproofError(f"{where}: holds a number whose integer part runs past {limit:,} digits (Python's "
                                "limit for reading text as an integer); not an Inspect AI log oloproof reads")

    try:
        if file.suffix == ".eval":
            with zipfile.ZipFile(file) as archive:
                for info in archive.infolist():
                    if info.filename.endswith(".json"):
                        check(_member(archive, info, file), f"{file}: {info.filename}")
        else:
            check(file.read_bytes(), str(file))
    except (OSError, zipfile.BadZipFile, RuntimeError) as exc:  # RuntimeError: an encrypted member
        raise OloproofError(f"{file}: cannot read this Inspect AI log ({type(exc).__name__}: {exc})") from None


def is_inspect_log(path: str | Path) -> bool:
    """Whether ``path`` is an Inspect AI log file, from its first bytes (inspect-ai is not imported).

    An ``.eval`` log is a zip archive holding ``header.json`` or ``_journal/start.json``; a ``.json``
    log is a JSON object whose first key is ``"version"`` and whose first bytes name ``"eval"`` (the
    ``logs.json`` listing an ``eval_set`` writes is not one), or, its keys in another order, one whose first
    bytes hold its key ``"eval"`` and name ``"run_id"`` and ``"task"``.
    """
    p = Path(path)
    if not p.is_file():
        return False
    if p.suffix == ".eval":
        try:
            with zipfile.ZipFile(p) as z:
                names = set(z.namelist())
        except (OSError, zipfile.BadZipFile):
            return False
        return "header.json" in names or "_journal/start.json" in names
    if p.suffix == ".json":
        try:
            with p.open("rb") as handle:
                head = handle.read(_HEAD_BYTES).lstrip()
        except OSError:
            return False
        if _JSON_LOG_START.match(head) is not None:
            return b'"eval"' in head
        # a log another tool wrote again with its keys sorted (``jq -S``, ``json.dump(sort_keys=True)``) starts with
        # another key: it was skipped, and its folder judged on its other logs (8 samples of 16), silently; a log
        # now, it is read, or refused naming it (inspect-ai cannot read such a log's header alone)
        return head.startswith(b"{") and b'"eval"' in _top_keys(head) and b'"run_id"' in head and b'"task"' in head
    return False


def _top_keys(head: bytes) -> set[bytes]:
    """The keys of the outermost JSON object among the first bytes ``head`` (each with its quotes).

    Examples
    --------
    >>> sorted(_top_keys(b'{"error": null, "eval": {"task": "x", "s": "{\\"a\\": 1"}, "plan": [{"eval": 1}]'))
    [b'"error"', b'"eval"', b'"plan"']
    """
    keys: set[bytes] = set()
    depth = 0
    for token in _JSON_TOKEN.findall(head):
        if token in (b"{", b"["):
            depth += 1
        elif token in (b"}", b"]"):
            depth -= 1
        elif depth == 1 and token.endswith(b":"):
            keys.add(token[:token.rindex(b'"') + 1])
    return keys


def _cannot_read(file: Path) -> str | None:
    """Why the regular file ``file`` cannot be opened for reading (``cannot read: Permission denied``), or None.

    :func:`is_inspect_log` answers False for such a file, as for a file that is no log: a log of a folder that
    could not be read was left out without a word, its folder judged on the other logs, and one given alone was
    "not an Inspect AI log" (review R50)."""
    try:
        handle, _ = open_regular(file)
    except UnreadableFile as exc:
        return str(exc)
    handle.close()
    return None


def log_folder_files(folder: Path) -> list[Path]:
    """The files a folder of Inspect AI logs is read from: those in it and in its folders, two levels (Inspect AI
    writes its logs flat into its log folder, an eval set too), sorted. Deeper files are not looked at, so an old
    ``.eval`` somewhere below a folder of projects is not taken for one of its logs."""
    near: list[Path] = []
    for child in sorted(folder.iterdir()):
        near.append(child)
        if child.is_dir():
            near += sorted(child.iterdir())
    return [f for f in near if not f.is_dir()]


def is_inspect_source(path: Path) -> bool:
    """Whether ``path`` is read as Inspect AI logs: a log file (by its suffix, so that :func:`inspect_log_files`
    says what is wrong with a damaged one), or a folder holding a log where :func:`log_folder_files` looks, and
    neither a run manifest nor a suite file, nor a run or suite folder among its folders (a folder of projects is
    not a log folder, and a suite folder stands for its latest run, whatever logs it keeps)."""
    if folder_problem(path) is not None:  # an unreadable folder: the caller says what is wrong with it
        return False
    if path.exists() and not path.is_dir():  # a FIFO named x.eval: "not a regular file", never opened
        return path.suffix in (".eval", ".json") or (path.is_file() and is_inspect_log(path))
    if not path.is_dir() or (path / MANIFEST).exists() or (path / SUITE_FILE).exists():
        return False
    try:
        if any((f / MANIFEST).is_file() or (f / SUITE_FILE).is_file() for f in path.iterdir()):
            return False
        near = log_folder_files(path)
    except OSError:  # an unreadable folder: the caller says what is wrong with it
        return False
    unread = [f for f in near if f.suffix == ".json" and f.is_file() and _cannot_read(f) is not None]  # may be logs
    return bool(unread) or any(f.suffix == ".eval" or (f.suffix == ".json" and is_inspect_log(f)) for f in near)


def inspect_log_files(path: str | Path) -> list[Path]:
    """The Inspect AI logs at ``path``: the file itself, or every log in the folder and its folders
    (:func:`log_folder_files`).

    Raises
    ------
    OloproofError
        When ``path`` is neither an Inspect log nor a folder holding one.
    """
    p = Path(path)
    problem = folder_problem(p)
    if problem is not None:
        raise OloproofError(f"{p}: {problem}; give an Inspect AI log or a folder of logs you can read")
    if p.is_file():
        unread = _cannot_read(p)
        if unread is not None:
            raise OloproofError(f"{p}: {unread}; give an Inspect AI log you can read")
        if not is_inspect_log(p):
            raise OloproofError(f"{p}: not an Inspect AI log (an .eval or .json eval log)")
        return [p]
    if p.is_dir():
        near = log_folder_files(p)
        for f in near:  # a log that cannot be read, left out, would judge the folder on part of its samples
            unread = _cannot_read(f) if f.suffix in (".eval", ".json") and f.is_file() else None
            if unread is not None:
                raise OloproofError(f"{f}: {unread}; a log of this folder that cannot be read would leave its samples "
                                    "out: make it readable, or move it out of the folder")
        found = [f for f in near if f.suffix in (".eval", ".json") and is_inspect_log(f)]
        damaged = [f for f in near if f.suffix == ".eval" and f not in found]
        if damaged:  # an .eval is a log by its name: skipping it would judge the folder on the others
            raise OloproofError(f"{damaged[0]}: not a readable Inspect AI log (an .eval log is a zip archive with "
                                "header.json); repair or remove it, or read the other logs one by one")
        if not found:
            raise OloproofError(f"{p}: no Inspect AI log (.eval or .json) in this folder or its folders (two levels "
                                "are read: Inspect AI writes its logs flat into its log folder)")
        return found
    if p.exists():  # a FIFO, a socket, a device: never opened (reading a FIFO would wait for a writer)
        raise OloproofError(f"{p}: not a regular file or folder; give an Inspect AI log (an .eval or .json file) "
                            "or a folder of logs")
    raise OloproofError(f"{p}: no such file or folder")


# -- one sample -> one case record -------------------------------------------------------------------
def _plain(value: Any) -> Any:
    """A pydantic model (a chat message) as JSON, without ids that change from run to run."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True, exclude={"id"})
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def dataset_sample(sample: Any) -> Any:
    """The sample as the dataset gave it: its ``sample_init`` event's ``sample``, else the log's sample.

    A log's sample ``metadata`` is the task state's at the end, which a solver may change (differently in
    each epoch); the ``sample_init`` event holds the dataset's.
    """
    for event in getattr(sample, "events", None) or []:
        if getattr(event, "event", None) == "sample_init":
            given = getattr(event, "sample", None)
            return sample if given is None else given
    return sample


def sample_digest(sample: Any) -> str:
    """The sample digest: SHA-256 of the canonical JSON of ``{id, input, target, metadata[, choices, setup,
    sandbox, files]}`` (the last three when the sample has them: its sandbox's start; a log keeps the names
    of ``files``, not their contents).

    Of the sample as the dataset gave it (:func:`dataset_sample`), so every epoch has the same digest
    whatever a solver wrote into the metadata.
    """
    given = dataset_sample(sample)
    body = {"id": str(sample.id), "input": _plain(given.input), "target": given.target,
            "metadata": given.metadata or {}}
    if getattr(given, "choices", None):
        body["choices"] = list(given.choices)
    # the sandbox a sample starts from is its initial state: a changed setup script or file set is another case
    for key in ("setup", "sandbox", "files"):
        value = getattr(given, key, None)
        if value:
            body[key] = json.loads(json.dumps(value, sort_keys=True, default=str)) if not isinstance(value, str) \
                else value
    return digest(body)


def _parse_result(text: Any) -> Any:
    """A tool result's JSON value: JSON text parsed, a Python literal (a dict's ``str()``) evaluated, else the text."""
    if not isinstance(text, str):
        return _plain(text)
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[\"0123456789-tfnTFN":
        return text
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    if stripped[0] in "{[" and len(stripped) <= 1_000_000:
        try:
            return ast.literal_eval(stripped)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    return text


def _steps(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """Steps of the messages the run added (see the module)."""
    msgs = list(messages)
    results = {m.tool_call_id: m for m in msgs if m.role == "tool" and getattr(m, "tool_call_id", None)}
    steps: list[dict[str, Any]] = []
    for m in msgs:
        if m.role in ("system", "tool") or getattr(m, "source", None) == "input":
            continue
        steps.append({"kind": "message", "role": m.role, "content": m.text,
                      "name": getattr(m, "model", None) if m.role == "assistant" else None})
        for call in getattr(m, "tool_calls", None) or []:
            answer = results.get(call.id)
            if answer is None:
                result: Any = None
            elif getattr(answer, "error", None) is not None:
                result = {"ok": False, "error": answer.error.type, "message": answer.error.message}
            else:
                result = _parse_result(answer.text if isinstance(answer.content, list) else answer.content)
            steps.append({"kind": "tool_call", "tool": call.function, "args": _plain(dict(call.arguments or {})),
                          "result": result})
    return steps


def _world(store: dict[str, Any], key: str) -> tuple[bool, Any]:
    """The store's value under ``key``, or its ``StoreModel`` fields ``key:field`` as a dict."""
    if key in store:
        return True, store[key]
    prefix = f"{key}:"
    fields = {k[len(prefix):]: v for k, v in store.items() if k.startswith(prefix)}
    return (True, fields) if fields else (False, None)


def _initial_world(sample: Any, key: str) -> tuple[bool, Any]:
    """The value under ``key`` right after the first store event that wrote it (replayed from the events)."""
    import jsonpatch  # a dependency of inspect-ai

    store: dict[str, Any] = {}
    for event in getattr(sample, "events", None) or []:
        kind = getattr(event, "event", None)
        if kind == "sample_init":
            store = copy.deepcopy(dict((getattr(event, "state", None) or {}).get("store") or {}))
        elif kind == "store":
            try:
                store = jsonpatch.apply_patch(store, [dict(c) for c in event.changes], in_place=True)
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError):
                return False, None
        else:
            continue
        found, value = _world(store, key)
        if found:
            return True, copy.deepcopy(value)
    return False, None


def _iso(ts: Any, default: str) -> str:
    if isinstance(ts, datetime):
        return iso(ts)
    if isinstance(ts, str) and ts:
        return iso(datetime.fromisoformat(ts.replace("Z", "+00:00")))
    return default


def _modified_at(file: Path) -> str:
    """When a log that records no creation time was last modified: its start time instead. One whose modification
    time ``datetime`` cannot hold (the years 1–9999; a file system may hold more) is refused, naming the file."""
    try:
        return iso(datetime.fromtimestamp(file.stat().st_mtime, timezone.utc))
    except (ValueError, OverflowError, OSError):
        raise OloproofError(f"{file}: records no creation time, and its modification time is outside the years "
                            "1–9999; give a log that records when it was created") from None


def _status(sample: Any) -> tuple[str, str | None]:
    error = getattr(sample, "error", None)
    if error is not None:
        return "error", str(error.message).splitlines()[0] if error.message else "the sample raised"
    invalid = getattr(sample, "invalidation", None)
    if invalid is not None:
        return "error", "the sample was invalidated"
    limit = getattr(sample, "limit", None)
    if limit is not None:
        if limit.type == "operator":  # `inspect ctl task cancel --action score`: scored on its partial work
            return "error", "stopped by an operator before it finished (operator limit)"
        amount = f"{limit.limit:g}" if isinstance(limit.limit, (int, float)) else str(limit.limit)
        what = f"{limit.type} limit reached ({amount})"
        return ("timeout" if limit.type in ("time", "working") else "failed"), what
    return "completed", None


class _Reader:
    """Turns the samples of the logs into case records."""

    def __init__(self, cluster: str | None, state_key: str | None, score_map: ScoreMap | None,
                 pass_threshold: float | dict[str, float] | None) -> None:
        self.cluster, self.state_key = cluster, state_key
        self.score_map, self.pass_threshold = score_map, pass_threshold
        self.criteria: dict[str, None] = {}
        self.seen: dict[tuple[str, int], Path] = {}
        self.clusters: dict[str, tuple[str, int]] = {}  # per sample id: its cluster, and the epoch it came from
        self.looks = LookAlikes()  # cluster values that read alike but differ (one cluster counted as two)
        self.store_keys: set[str] = set()
        #: per criterion: a number the default table found off [0, 1], and where its in-scale numbers' rows are
        self.off_scale: dict[str, Any] = {}
        self.in_scale: dict[str, list[tuple[int, int, Any]]] = {}
        #: per criterion whose pass_threshold is ≤ 0 (or above 1): how many of its scores are numbers in [0, 1] (each
        #: passes; above 1: none does), and the criteria with a score judged otherwise (a string, a bool, a number
        #: below 0 or above 1: it may fail, or pass)
        self.unit_scores: dict[str, int] = {}
        self.judged_otherwise: set[str] = set()
        self.unknown_initial: set[tuple[str, int]] = set()
        #: per log file: its task's name and ``task_id`` (an eval_retry keeps it)
        self.tasks: dict[Path, tuple[str, str]] = {}
        #: per record (its index): each scorer's score value, judged once every log is read (:meth:`judge`)
        self.scores: dict[int, list[tuple[str, Any]]] = {}
        #: per scorer that gave a dict value: its keys, in the order first seen (each key is a criterion)
        self.keys: dict[str, dict[str, None]] = {}
        #: per (task, scorer): the keys that task's samples gave (another task's scorer of one name may give others)
        self.task_keys: dict[tuple[str, str], set[str]] = {}
        #: the (task, scorer) pairs whose samples gave a score that is not a dict (``"C"``, ``1.0``)
        self.plain: set[tuple[str, str]] = set()
        #: per record (its index): its log's task
        self.task_of: dict[int, str] = {}
        #: per criterion: the key of its scorer's dict it reads (None: the scorer's whole score)
        self.key_of: dict[str, str | None] = {}
        #: per criterion: the scorer whose score (or one key of it) it reads
        self.scorer_of: dict[str, str] = {}
        #: per criterion: the tasks whose samples have rows of it (one, unless the logs hold a single task)
        self.tasks_of: dict[str, list[str]] = {}
        #: per criterion name as one task's logs name it (``match``) that the samples of several tasks have: task ->
        #: its own criterion (``bulk/match``), :meth:`judge`
        self.split: dict[str, dict[str, str]] = {}
        #: per (scorer, key): the criterion name as one task's logs name it (:func:`criterion_names`)
        self.base: dict[tuple[str, str | None], str] = {}

    def record(self, file: Path, index: int, sample: Any, run_id: str, model: str, created: str) -> CaseRecord:
        cid, epoch = str(sample.id), int(getattr(sample, "epoch", 1) or 1)
        if (cid, epoch) in self.seen:
            raise OloproofError(f"{file}: sample {cid!r} epoch {epoch} is also in {self.seen[(cid, epoch)]}"
                                f"{self._why_twice(file, self.seen[(cid, epoch)], cid)}")
        self.seen[(cid, epoch)] = file
        metadata = dict(sample.metadata or {})
        if self.cluster is None:
            cluster = cid
        else:
            cluster = self._cluster(file, cid, epoch, sample, metadata)
        status, error = _status(sample)
        started = _iso(getattr(sample, "started_at", None), created)
        case: dict[str, Any] = {"id": cid, "epoch": epoch, "input": {"input": _plain(sample.input)},
                                "expected": {"answer": sample.target}, "cluster": cluster, "metadata": metadata,
                                "digest": sample_digest(sample), "source_id": cid, "transform": None}
        env = None
        if self.state_key is not None:
            store = dict(getattr(sample, "store", None) or {})
            self.store_keys |= set(store)
            found, state = _world(store, self.state_key)
            if found:
                known, initial = _initial_world(sample, self.state_key)
                if known:
                    case["initial_state"] = initial
                else:
                    self.unknown_initial.add((cid, epoch))
                env = {"schema": ENV_SCHEMA, "run_id": run_id, "case_id": cid, "case_digest": case["digest"],
                       "system_version": model, "captured_at": _iso(getattr(sample, "completed_at", None), started),
                       "state": state, "state_digest": digest(state)}
                if epoch != 1:  # as a run directory stores it: the epoch only when it is not 1
                    env["epoch"] = epoch
        traj = None
        if status != "error" or sample.messages:
            output = getattr(sample, "output", None)
            traj = {"steps": _steps(sample.messages or []), "answer": output.completion if output else None,
                    "status": status if status in ("completed", "failed") else "failed", "input": case["input"]}
        self.scores[index] = [(name, score.value) for name, score in (sample.scores or {}).items()]
        self.task_of[index] = self.tasks[file][0]
        for name, value in self.scores[index]:
            self.criteria.setdefault(name, None)
            # a callable is given the whole dict; an empty dict has no key to judge (it is missing, as before)
            if isinstance(value, dict) and value and not callable(self.score_map):
                keys = self.keys.setdefault(name, {})
                for key in value:
                    keys.setdefault(str(key), None)
                self.task_keys.setdefault((self.task_of[index], name), set()).update(str(key) for key in value)
            elif not isinstance(value, dict):
                self.plain.add((self.task_of[index], name))
        rec: dict[str, Any] = {"index": index, "case": case, "status": status, "error": error, "started_at": started,
                               "duration_s": _duration(sample), "trajectory": traj, "environment_state": env,
                               "verdicts": [], "comparisons": [], "replays": [], "receipts": []}
        return rec  # type: ignore[return-value]

    def judge(self, records: list[CaseRecord], scorers: list[list[str] | None]) -> None:
        """Give each record its verdict rows, once every log is read: a scorer's score is one row, a dict-valued
        scorer's one row per key (:func:`criterion_names`), each value mapped by
        :func:`~oloproof_nb._core.scoremap.score_verdict`. Turns :attr:`criteria` from scorer names into criterion
        names (a dict-valued scorer's name into its keys', in place), one per task where the samples of several
        tasks would have rows of one name (:meth:`_split_by_task`). ``scorers``: as :meth:`missing_rows` takes it."""
        plain = {scorer for task, scorer in self.plain if scorer in self.keys and (task, scorer) not in self.task_keys}
        self.base = criterion_names(list(self.criteria), {name: list(keys) for name, keys in self.keys.items()},
                                    plain)
        self._split_by_task(records, scorers)
        self._check_threshold_names()
        for rec in records:
            verdicts = rec["verdicts"]
            for scorer, value in self.scores[rec["index"]]:
                for key in self._keys_of(rec["index"], scorer):
                    name = self.criterion_of(rec["index"], scorer, key)
                    if rec["status"] in ENDED:
                        verdicts.append(_row(name, "missing", f"sample {rec['status']}: {rec['error']}"))
                        continue
                    if key is not None and not (isinstance(value, dict) and key in value):
                        why = f"key {key!r} not in score {quote(value, 80)}" if isinstance(value, dict) \
                            else f"score {quote(value, 80)} is not a dict of scores (scorer {scorer!r})"
                        verdicts.append(_row(name, "missing", why))
                        continue
                    one = value if key is None else value[key]
                    threshold = self.threshold_of(name)
                    verdict, reason = score_verdict(one, self.score_map, threshold)
                    scale = on_default_scale(one, self.score_map, threshold)
                    if scale is False:
                        self.off_scale.setdefault(name, one)
                    elif scale:
                        self.in_scale.setdefault(name, []).append((rec["index"], len(verdicts), one))
                    if threshold is not None and not 0 < threshold <= 1:
                        if on_default_scale(one, self.score_map):
                            self.unit_scores[name] = self.unit_scores.get(name, 0) + 1
                        elif verdict != "missing":
                            self.judged_otherwise.add(name)
                    verdicts.append(_row(name, verdict, reason))

    def _split_by_task(self, records: list[CaseRecord], scorers: list[list[str] | None]) -> None:
        """Name the criteria, :attr:`criteria` and each one's scorer, key and tasks, from :attr:`base`: a name whose
        rows would come from the samples of more than one task (``match()`` scores two tasks) is one criterion per
        task, ``<task>/<name>`` (``bulk/match``, ``small/match``), in the order of the tasks' first samples; a name
        only one task's samples have keeps it. Pooled, a task whose every sample failed (0 of 10) was outnumbered
        by another's (300 of 300: one criterion at 300 of 310 passed a threshold of 0.9), where Inspect reports
        each task on its own. Two names alike (a task named as a scorer) are refused, naming both."""
        tasks: dict[str, dict[str, None]] = {base: {} for base in self.base.values()}
        for rec, own in zip(records, scorers, strict=True):
            index = rec["index"]
            task = self.task_of[index]
            for scorer, key in self._row_keys(index, own):
                tasks[self.base[(scorer, key)]].setdefault(task, None)
        order = self._task_order()
        self.split = {base: {task: f"{task}/{base}" for task in sorted(held, key=order.index)}
                      for base, held in tasks.items() if len(order) > 1 and len(held) > 1}
        criteria: dict[str, tuple[str, str | None, list[str]]] = {}
        for (scorer, key), base in self.base.items():
            named = self.split.get(base)
            for criterion, held in ([(name, [task]) for task, name in named.items()] if named
                                    else [(base, list(tasks[base]))]):
                if criterion in criteria:
                    raise OloproofError(f"these logs have two criteria named {criterion!r} (of scorer "
                                        f"{criteria[criterion][0]!r} and of scorer {scorer!r}; a criterion several "
                                        "tasks share is named <task>/<name>, one per task); read each task's logs "
                                        "on its own")
                criteria[criterion] = (scorer, key, held)
        self.criteria = {criterion: None for criterion in criteria}
        for criterion, (scorer, key, held) in criteria.items():
            self.scorer_of[criterion], self.key_of[criterion], self.tasks_of[criterion] = scorer, key, held

    def _task_order(self) -> list[str]:
        """The tasks of the samples read, in the order of their first samples."""
        return list(dict.fromkeys(self.task_of.values()))

    def _row_keys(self, index: int, own: list[str] | None) -> list[tuple[str, str | None]]:
        """The (scorer, key) pairs record ``index`` has rows of: those it was scored by, and those of the scorers its
        log declares (``own``; None: every scorer) that :meth:`missing_rows` gives it."""
        scored = [(scorer, key) for scorer, _ in self.scores[index] for key in self._keys_of(index, scorer)]
        declared = [(scorer, key) for scorer, key in self.base
                    if (own is None or scorer in own) and key in self._keys_of(index, scorer)]
        return list(dict.fromkeys(scored + declared))

    def criterion_of(self, index: int, scorer: str, key: str | None) -> str:
        """The criterion of record ``index``'s score by ``scorer`` (its ``key``): its task's own when split."""
        base = self.base[(scorer, key)]
        named = self.split.get(base)
        return base if named is None else named[self.task_of[index]]

    def options_task(self, criterion: str) -> str:
        """The task whose scorer settings are ``criterion``'s (the one task whose samples have its rows)."""
        held = self.tasks_of.get(criterion) or self._task_order()
        return held[0] if held else ""

    def threshold_of(self, criterion: str) -> float | None:
        """The ``pass_threshold`` that judges ``criterion``'s numbers: the one number given, its own in a mapping,
        or None (the default rule: a number in [0, 1] passes at 1, another is ``missing``)."""
        if isinstance(self.pass_threshold, dict):
            return self.pass_threshold.get(criterion)
        return self.pass_threshold

    def _said(self, criterion: str) -> str:
        """The ``pass_threshold`` that judges ``criterion`` as the caller gave it: ``pass_threshold=7``, or
        ``pass_threshold['rating']=7`` for a criterion's own (the command says ``--pass-threshold rating=7``)."""
        threshold = self.threshold_of(criterion)
        where = f"[{criterion!r}]" if isinstance(self.pass_threshold, dict) else ""
        return f"pass_threshold{where}={threshold:g}"

    def _check_threshold_names(self) -> None:
        """Refuse a ``pass_threshold`` mapping that names a criterion these logs do not have (a typo, a
        dict-valued scorer's name where its keys are the criteria, or a name several tasks share where each task
        has its own criterion): never ignored, which would read that scorer by the default rule, its ratings
        ``missing``, without a word."""
        if not isinstance(self.pass_threshold, dict):
            return
        for name, threshold in self.pass_threshold.items():
            if name in self.criteria:
                continue
            keys = [c for c in self.criteria if self.scorer_of[c] == name and self.key_of[c] is not None]
            hint = (f" (scorer {name!r} gives dict scores: its criteria are {', '.join(keys)})" if keys else "")
            if name in self.split:
                hint = f" ({split_hint(name)})"
            there = ", ".join(self.criteria) or "(none: no scorer scored a sample)"
            raise OloproofError(f"pass_threshold[{name!r}]={threshold:g}: these logs have no criterion {name!r}"
                                f"{hint}; their criteria: {there}")

    def floor_findings(self, path: str | Path) -> dict[str, str]:
        """Criteria a ``pass_threshold`` ≤ 0 cannot fail: criterion → finding. Every score of such a criterion is
        a number in [0, 1], where 0 is the worst, and a number passes at or above the threshold, so each passes (a
        threshold of 0 written for "above 0"); -inf was refused for this, a finite value at or below the scale's
        floor does the same. A criterion with a score judged otherwise (a string, a bool, a number off [0, 1]) can
        fail. Each criterion by its own threshold (:meth:`threshold_of`)."""
        return {name: (f"{path}: {self._said(name)}: each of criterion {name}'s {count} scores is "
                       "a number in [0, 1], and a number passes at or above the threshold, so a score of 0 passes and "
                       "the criterion cannot fail; give the score a pass needs (1 for full marks)")
                for name, count in self._unit_only().items() if self._off_unit(name) == "floor"}

    def ceiling_findings(self, path: str | Path) -> dict[str, str]:
        """Criteria a ``pass_threshold`` above 1 cannot pass: criterion → finding. One number is every
        criterion's: given for a 1–10 rating (as it must be), it also judged a 0–1 scorer read beside it, whose
        every score, full marks included, then silently failed. A criterion with a score judged otherwise (a
        string, a bool, a number off [0, 1]) can pass, and is on the threshold's scale. A criterion's own
        threshold in a mapping is said as such."""
        if isinstance(self.pass_threshold, dict):
            advice = ("below the threshold given for it, so the criterion cannot pass; give it the score a pass "
                      "needs on its own scale (1 for full marks), or name it not at all (the default: full marks)")
        else:
            advice = ("below the threshold, so the criterion cannot pass (the threshold applies to every "
                      "criterion); judge it from a second reading of the log, without the threshold, or give the "
                      "threshold to the criteria on its scale alone (pass_threshold={criterion: X})")
        return {name: f"{path}: {self._said(name)}: each of criterion {name}'s {count} scores is a number in [0, 1], "
                      f"{advice}"
                for name, count in self._unit_only().items() if self._off_unit(name) == "ceiling"}

    def _off_unit(self, criterion: str) -> str | None:
        """Where ``criterion``'s threshold lies off (0, 1]: ``"floor"`` (at or below 0), ``"ceiling"`` (above 1),
        or None (in it, or no threshold)."""
        threshold = self.threshold_of(criterion)
        if threshold is None or 0 < threshold <= 1:
            return None
        return "floor" if threshold <= 0 else "ceiling"

    def _unit_only(self) -> dict[str, int]:
        """The criteria whose every score is a number in [0, 1] (counted only under a ``pass_threshold`` off
        (0, 1] for the criterion): criterion → how many."""
        return {name: count for name, count in self.unit_scores.items() if name not in self.judged_otherwise}

    def _keys_of(self, index: int, scorer: str) -> list[str | None]:
        """The keys of ``scorer`` that are criteria of record ``index``: ``[None]`` (its whole score) for a scorer
        that gave no dict, in the record's task or at all; else the keys the scorer gave in the record's task, or
        every key where that task's samples gave none (only empty dicts, or no score: they raised). A task of a
        folder has no rows for the keys only another task's scorer of that name gives, as it has none for another
        task's scorers (Inspect's results for it have no such key); a task whose scorer of that name gives plain
        scores (``"C"``) is judged on them, not ``missing`` for another task's keys."""
        if scorer not in self.keys:
            return [None]
        task = self.task_of[index]
        own = self.task_keys.get((task, scorer))
        if own is None and (task, scorer) in self.plain:
            return [None]
        return [key for key in self.keys[scorer] if own is None or key in own]

    def _why_twice(self, file: Path, other: Path, cid: str) -> str:
        """What to do about two logs holding the sample ``cid``, from their tasks (:attr:`tasks`): a retried eval
        leaves its earlier log beside the new one, and tasks whose samples have no ids are each numbered 1, 2, …"""
        (name, task_id), (other_name, other_id) = self.tasks.get(file, ("", "")), self.tasks.get(other, ("", ""))
        if task_id and task_id == other_id:
            return (f", a log of the same eval of task {name!r} (task_id {task_id}): a copy, or an attempt that "
                    "eval_retry ran again (its log holds every sample); read the latest log alone")
        if name and other_name and name != other_name:
            return (f", a log of task {other_name!r}: tasks {other_name!r} and {name!r} both have a sample {cid!r} "
                    "(a case is a sample id); read each task's log on its own")
        return "; read one log, or a folder whose logs hold different samples"

    def _cluster(self, file: Path, cid: str, epoch: int, sample: Any, metadata: dict[str, Any]) -> str:
        """The value of the ``cluster`` metadata key: the dataset's, else the log's (the same in every epoch).

        Every epoch of a sample must fall in one cluster, or its correlated epochs would count as
        independent clusters (a solver that rewrote the key in each epoch made six clusters of two topics).
        """
        given = dict(getattr(dataset_sample(sample), "metadata", None) or {})
        key = str(self.cluster)
        if key in given or key in metadata:
            raw = given[key] if key in given else metadata[key]
            if raw is None or isinstance(raw, (dict, list, tuple)):  # str() made null the cluster "None" (review F36)
                kind = "null" if raw is None else ("an object" if isinstance(raw, dict) else "a list")
                raise OloproofError(f"{file}: cluster={key!r}: sample {cid!r} has {key} {kind}, not a name: every "
                                    f"sample whose {key} is {kind} would fall in one cluster named by Python's "
                                    "spelling of it; give each sample's cluster a text or a number")
            value = str(raw)
        else:
            keys = ", ".join(sorted(map(str, {**given, **metadata}))) or "(none)"
            raise OloproofError(f"{file}: cluster={key!r}: sample {cid!r} has no such metadata key; "
                                f"its metadata keys: {keys}")
        if not key_look(value):  # "", " ": every such sample in one nameless cluster
            raise OloproofError(f"{file}: cluster={key!r}: sample {cid!r} has {key} {quote(value)}, a name that reads "
                                "as nothing: every sample given it would fall in one nameless cluster; give each "
                                "sample's cluster a name")
        first = self.clusters.setdefault(cid, (value, epoch))
        clash = self.looks.clash(f"sample {cid!r}", value, written=True)
        if clash:
            raise OloproofError(f"{file}: cluster={key!r}: sample {cid!r} has {key} {quote(value)}, which reads as "
                                f"the cluster {clash}: they differ only in {LOOK_ALIKE_HELP}, so one cluster "
                                "would count as two independent clusters while every table shows one name")
        if first[0] != value:
            raise OloproofError(f"{file}: cluster={key!r}: sample {cid!r} has {key} {first[0]!r} in epoch "
                                f"{first[1]} but {value!r} in epoch {epoch} (a solver set it); cluster on a "
                                "metadata key that is the same in every epoch of a sample")
        return value

    def one_scale(self, records: list[CaseRecord]) -> None:
        """Make ``missing`` the numbers in [0, 1] of a criterion whose scorer also gave a number outside it:
        they are on that other scale (a 1 of a 1–10 rating is its worst, and passed as full marks)."""
        for name, outside in self.off_scale.items():
            for index, position, value in self.in_scale.get(name, []):
                records[index]["verdicts"][position] = _row(
                    name, "missing", f"score {value!r}: the scorer's scores of this criterion reach {outside!r}, so "
                    "they are not on a 0–1 scale; say which pass with pass_threshold= (--pass-threshold)")

    def missing_rows(self, records: list[CaseRecord], scorers: list[list[str] | None]) -> None:
        """Every criterion of a sample's log gets a row for it: a sample its scorer did not score (it raised) is
        ``missing``.

        ``scorers``: per record, the scorers its log's task declares (None: not known, every criterion). A
        folder of several tasks does not give a sample rows for another task's scorers, which never ran on it, nor
        for the keys only another task's dict-valued scorer of the same name gives (:meth:`_keys_of`).
        """
        for rec, own in zip(records, scorers, strict=True):
            have = {v["criterion"] for v in rec["verdicts"]}
            why = f"sample {rec['status']}: {rec['error']}" if rec["status"] in ENDED else "the scorer gave no score"
            names = [self.criterion_of(rec["index"], scorer, key) for scorer, key in self._row_keys(rec["index"], own)]
            rec["verdicts"] += [_row(name, "missing", why) for name in names if name not in have]
            order = list(self.criteria)
            rec["verdicts"].sort(key=lambda v: order.index(v["criterion"]))


def criterion_names(scorers: list[str], keys: dict[str, list[str]], plain: Iterable[str] = ()
                    ) -> dict[tuple[str, str | None], str]:
    """The criterion each score is read as: ``(scorer, None)`` for a scorer's score, ``(scorer, key)`` for each key of
    a dict-valued scorer (one in ``keys``), in the order of ``scorers``. A dict-valued scorer in ``plain`` (another
    task's scorer of that name gives plain scores) has its ``(scorer, None)`` too, named by the scorer, and a key
    of it named as the scorer is ``scorer/key``.

    A scorer is named as its scores are (:func:`scorer_names`). A key is named as Inspect's results name the
    metrics of that key (``results.scores[i].name`` is the key): the key alone, unless another scorer is named so
    or another dict-valued scorer has that key too; then ``scorer/key``, for each of them (Inspect's own table
    shows two rows named alike). A name so depends only on the scorers read, never on the order of the samples.

    Examples
    --------
    >>> names = criterion_names(["checks", "audit", "graded"], {"checks": ["correct", "safe"],
    ...                                                        "audit": ["correct", "graded"]})
    >>> list(names.values())
    ['checks/correct', 'safe', 'audit/correct', 'audit/graded', 'graded']
    >>> list(criterion_names(["judge"], {"judge": ["correct", "judge"]}, plain={"judge"}).values())
    ['judge', 'correct', 'judge/judge']
    """
    names: dict[tuple[str, str | None], str] = {}
    also = set(plain)
    for scorer in scorers:
        if scorer not in keys or scorer in also:
            names[(scorer, None)] = scorer
        if scorer not in keys:
            continue
        for key in keys[scorer]:
            shared = any(key == other or key in keys.get(other, []) for other in scorers if other != scorer)
            names[(scorer, key)] = f"{scorer}/{key}" if shared or (scorer in also and key == scorer) else key
    return names


def scorer_names(declared: list[str]) -> list[str]:
    """The names a task's scorers score under, from the names its log's header declares, in order.

    The header names each scorer after its function (``graded``, ``graded``), but the samples' ``scores`` and the
    results key a second scorer of one name as Inspect's ``unique_scorer_name`` makes it: ``graded1`` (then
    ``graded2`` …), so two settings of one scorer function (a strict and a lenient grader) are two checks.

    Examples
    --------
    >>> scorer_names(["graded", "match", "graded", "graded"])
    ['graded', 'match', 'graded1', 'graded2']
    """
    names: list[str] = []
    for base in declared:
        name, count = base, 1
        while name in names:
            name, count = f"{base}{count}", count + 1
        names.append(name)
    return names


def _options_text(scorer: Any) -> str:
    """A declared scorer's ``options`` as canonical JSON ("" for none)."""
    opts = getattr(scorer, "options", None)
    return json.dumps(opts, sort_keys=True, ensure_ascii=False, default=str) if opts else ""


def _same_options(seen: dict[tuple[str, str], tuple[str, Path]], name: str, text: str, file: Path,
                  task: str) -> None:
    """Refuse logs of one task that run one scorer with different arguments (they would be pooled into one
    criterion: a lenient half and a strict half read as one check). Two tasks may run it with different arguments
    (``match()`` in one, ``match(location="any")`` in the other): a scorer several tasks share is a criterion per
    task (:meth:`_Reader._split_by_task`), each of one setting."""
    first = seen.setdefault((task, name), (text, file))
    if first[0] == text:
        return
    raise OloproofError(f"{file}: scorer {name!r} runs with options {text or '{}'}, but {first[1]} ran it with "
                        f"{first[0] or '{}'}; read the logs of one scorer setting at a time and compare the "
                        "runs with op.compare")


#: Generation settings that shards and retries of one agent legitimately differ in: how the calls reach the model
#: (connections, timeouts, retries, batching, caching, tracing headers), not what the model is asked or how it
#: samples. Every other generation setting (``temperature``, ``top_p``, ``top_k``, ``max_tokens``, ``seed``,
#: ``system_message``, the reasoning settings, ``stop_seqs`` ...) is part of the agent: :func:`agent_settings`.
OPERATIONAL_SETTINGS = frozenset({"max_connections", "adaptive_connections", "max_retries", "timeout",
                                  "attempt_timeout", "stream_idle_timeout", "batch", "cache", "cache_prompt",
                                  "extra_headers"})

#: The fields of an eval's own config (``eval.config``, where a task's own limits are recorded too) that are part of
#: the agent: the limits a sample runs under, the approval policy of its tool calls, the review policy of their
#: results (a reviewer may end the sample) and its sentinel monitors and protocols decide what the agent can do (a
#: shard at ``message_limit=2`` stopped before it acted). The rest of it is how the eval ran, which shards and
#: retries differ in: sample selection, ``max_samples``, ``fail_on_error``, log settings (:func:`agent_settings`).
AGENT_LIMITS = ("message_limit", "token_limit", "token_limit_type", "turn_limit", "time_limit", "working_limit",
                "cost_limit", "approval", "review", "sentinel")

#: Model arguments (``-M``: ``eval.model_args``, a role's model's ``args``) that say where the model runs or how calls
#: reach it, as Inspect AI's providers read them: the port of a local vLLM or SGLang server (its ``base_url`` is
#: ``model_base_url``, left out too), the client's timeout and retry delay, streaming, the HTTP client and its default
#: headers. ``device`` is kept by its kind only (:func:`_model_args`): ``cuda:0`` and ``cuda:1`` are one setting,
#: ``cuda`` and ``cpu`` two. Every other argument may change what the model computes (``model_path``, ``torch_dtype``,
#: ``chat_template``, ``batch_size``: the padding of a batch changes the numbers, ``responses_api``, ``extra_body``
#: ...), so it is part of the agent; Inspect AI leaves ``api_key`` and ``aws_*`` out of the log itself.
OPERATIONAL_MODEL_ARGS = frozenset({"port", "client_timeout", "retry_delay", "streaming", "http_client",
                                    "default_headers"})


def _leaves(value: Any, path: str) -> dict[str, str]:
    """The leaves of ``value`` (:func:`~oloproof_nb._core.paths.flatten`) under ``path``, each as canonical JSON;
    None and empty mappings and lists add nothing (``model_args`` of None and of ``{}`` are one setting)."""
    return {path + key[1:]: json.dumps(leaf, sort_keys=True, ensure_ascii=False, default=str)
            for key, leaf in flatten({"v": value}).items() if leaf is not None and leaf != {} and leaf != []}


def _model_args(value: Any) -> dict[str, Any]:
    """Model arguments less :data:`OPERATIONAL_MODEL_ARGS`, a ``device`` as its kind (``cuda:1``: ``cuda``).

    Examples
    --------
    >>> _model_args({"device": "cuda:1", "port": 8000, "model_path": "m/v2"})
    {'device': 'cuda', 'model_path': 'm/v2'}
    """
    given = dict(_plain(value) or {})
    if isinstance(given.get("device"), str):
        given["device"] = given["device"].split(":", 1)[0]
    return {k: v for k, v in given.items() if k not in OPERATIONAL_MODEL_ARGS}


def task_settings(header: Any) -> dict[str, str]:
    """What makes a log's task besides its name (the map :func:`agent_settings` gives): ``eval.task_version`` (a
    task's author raises it when the task changes) and the task's sandbox, ``eval.sandbox`` (its ``type``: a
    ``docker`` and a ``local`` sandbox are other worlds for the agent's tools; its ``config``, a file by its name:
    Inspect writes the path relative to the working folder, which shards run elsewhere differ in, and keeps no
    content of the file).

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> task_settings(NS(eval=NS(task_version=2, sandbox=NS(type="docker", config="tasks/compose.yaml"))))
    {'eval.task_version': '2', 'eval.sandbox.type': '"docker"', 'eval.sandbox.config': '"compose.yaml"'}
    """
    spec = header.eval
    sandbox = getattr(spec, "sandbox", None)
    config = getattr(sandbox, "config", None)
    return {**_leaves(getattr(spec, "task_version", None), "eval.task_version"),
            **_leaves(getattr(sandbox, "type", None), "eval.sandbox.type"),
            **_leaves(re.split(r"[\\/]", config)[-1] if isinstance(config, str) else _plain(config),
                      "eval.sandbox.config")}


def agent_settings(header: Any) -> tuple[dict[str, str], dict[str, str]]:
    """What makes a log's agent besides its model: the settings of its model, and those of its task's solver.

    Returns ``(model, plan)``, each a map from a header field's path (``plan.config.temperature``) to its value as
    canonical JSON. ``model``: ``eval.model_generate_config``, ``eval.model_args`` and ``eval.model_roles`` (the
    same in every log of one agent, whatever the task; the model arguments as :func:`_model_args` keeps them).
    ``plan``: the solver's steps with their parameters (``plan.steps``, ``plan.finish``; ``eval.solver`` and
    ``eval.solver_args`` when a solver was given on the command line), the generation config the eval and the task
    gave (``plan.config``: ``eval(..., temperature=0)`` is recorded there) and the limits, approval and review
    policies and sentinels its samples ran under (the :data:`AGENT_LIMITS` of ``eval.config``), the same in every
    log of one task (another task may use another solver). Generation settings in :data:`OPERATIONAL_SETTINGS` are
    left out (of a role's model's ``config`` too), as are the fields shards and retries of one run differ in (the
    rest of ``eval.config``: sample selection, ``max_samples``, log settings; ``eval.dataset``; the model's
    ``model_base_url`` and a role's model's ``base_url``) and ``eval.task_args``, which may pick the dataset (a task
    argument that changes the solver shows in its steps).
    """
    spec, plan = header.eval, getattr(header, "plan", None)

    def config(value: Any) -> dict[str, Any]:
        given = _plain(value) if value is not None else {}
        return {k: v for k, v in dict(given).items() if k not in OPERATIONAL_SETTINGS}

    def role(value: Any) -> Any:  # a role's model as the eval's own: its config less how calls reach it, no base_url
        if isinstance(value, list):
            return [role(item) for item in value]
        given = {k: v for k, v in dict(_plain(value)).items() if k != "base_url"}
        return {**given, "config": config(given.get("config")), "args": _model_args(given.get("args"))}

    model = {**_leaves(config(getattr(spec, "model_generate_config", None)), "eval.model_generate_config"),
             **_leaves(_model_args(getattr(spec, "model_args", None)), "eval.model_args"),
             **_leaves({k: role(v) for k, v in (getattr(spec, "model_roles", None) or {}).items()}, "eval.model_roles")}
    ran = getattr(spec, "config", None)
    solver = {**_leaves(_plain(getattr(spec, "solver", None)), "eval.solver"),
              **_leaves(_plain(getattr(spec, "solver_args", None)), "eval.solver_args"),
              **_leaves({name: _plain(getattr(ran, name, None)) for name in AGENT_LIMITS}, "eval.config")}
    if plan is not None:
        steps = [{"solver": _plain(step.solver), "params": _plain(step.params)} for step in plan.steps or []]
        finish = plan.finish and {"solver": _plain(plan.finish.solver), "params": _plain(plan.finish.params)}
        solver.update({**_leaves(steps, "plan.steps"), **_leaves(finish, "plan.finish"),
                       **_leaves(config(plan.config), "plan.config")})
    return model, solver


def _same_agent(seen: dict[tuple[str, ...], tuple[dict[str, str], Path]], scope: tuple[str, ...],
                settings: dict[str, str], file: Path, two: str = "two agents") -> None:
    """Refuse logs that run one agent with different settings (:func:`agent_settings`): read as one run, the
    rates of two agents (temperature 0 on half the samples, 1 with a system message on the other) were pooled.
    ``two`` says what such logs are (``two versions of the task`` for :func:`task_settings`)."""
    first, other = seen.setdefault(scope, (settings, file))
    for key in sorted(set(first) | set(settings)):
        if first.get(key) != settings.get(key):
            raise OloproofError(f"{file}: {key} is {clip(settings.get(key, 'not set'))}, but {other} has "
                                f"{clip(first.get(key, 'not set'))}: logs of one task run with different settings "
                                f"are {two}; read one setting's logs at a time (one folder per setting) and "
                                "compare the runs with op.compare")


def _row(criterion: str, verdict: str, reason: str) -> Any:
    return {"criterion": criterion, "evaluator": "inspect_scorer", "verdict": verdict, "reason": reason}


def _duration(sample: Any) -> float:
    total = getattr(sample, "total_time", None)
    return float(total) if total is not None else math.nan


#: Samples of an ``.eval`` archive asked of Inspect's reader at once. Its one-sample reader parses the
#: archive's central directory again for every sample, so reading a log one sample at a time grew with the
#: square of its samples (4,000 samples: about 145 s, a review's one-off timing; ``benchmarks/inspect_logs.py``
#: times the batches); a batch parses it once, and holds BATCH samples in memory (128 samples of 1 MB each took
#: 947 MB at peak against 705 MB one at a time: a one-off measurement, no script).
BATCH = 64
#: Most sample epochs (dataset samples × epochs) of a header's plan listed one by one. A log's header is text anyone
#: can edit: ``"epochs": 10000000000000000000`` in a 300 KB log set the plan, a list of 4 × 10¹⁹ entries, being
#: built until memory ran out (23 GB on review R50's machine, where the kernel killed the process). A larger plan
#: is read by the log's own summaries.
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
        for name, found, _ in frames.journal_items([([rec], [None], [None])], config.tool_errors, None):
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


def split_hint(name: str) -> str:
    """Why ``name``, a criterion name the samples of several tasks share, is no criterion: each task has its own.

    Examples
    --------
    >>> split_hint("match")
    "the samples of several tasks are scored under 'match': a criterion per task, named <task>/match"
    """
    return f"the samples of several tasks are scored under {name!r}: a criterion per task, named <task>/{name}"


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


def _reading(score_map: ScoreMap | None, pass_threshold: float | None) -> str:
    """How a criterion's scores become verdicts, when not by the defaults: canonical JSON of its ``pass_threshold``
    (the one number given, or its own in a mapping: a criterion the mapping leaves out is read by the default rule,
    as with no threshold) and the ``score_map`` (a mapping as its sorted ``repr`` pairs, so ``1``, ``"1"`` and
    ``True`` stay apart; a function as its qualified name and a digest of its code); ``""`` for the defaults.

    Examples
    --------
    >>> _reading(None, None)
    ''
    >>> print(_reading({"P": "pass"}, 0.5))
    {"pass_threshold":0.5,"score_map":[["'P'","'pass'"]]}
    """
    out: dict[str, Any] = {}
    if pass_threshold is not None:
        out["pass_threshold"] = float(pass_threshold)
    if callable(score_map):
        out["score_map"] = _function_text(score_map)
    elif score_map is not None:
        out["score_map"] = sorted([repr(k), repr(v)] for k, v in score_map.items())
    return canonical_json(out) if out else ""


#: How deep :func:`_function_text` follows functions bound to a ``score_map`` function (a closure over a helper).
_BOUND_DEPTH = 3


def _function_text(fn: Any, depth: int = 0) -> str:
    """A ``score_map`` function as what decides its verdicts: its qualified name and a digest of its code, with the
    values it is bound to — a closure's cells, its defaults, the module-level values its code reads (a ``CUTS`` dict),
    a ``functools.partial``'s arguments, a function's own attributes, a callable object's or a bound method's object's
    attributes — as a digest of their text (:func:`_value_text`: a function among them by this text, ``depth`` levels
    deep, a plain object by its class and attributes; a value whose own ``repr`` names its address reads as another
    value in another process, which can only say ``check_changed``).

    ``cut_at(1.0)`` and ``cut_at(0.5)`` (one ``lambda`` closing over the cut) have one code, and a ``partial`` has no
    code of its own: a candidate's log read with the lower cut was the base's check, no flip, NO_REGRESSION (review
    F41); they are two readings now.

    Examples
    --------
    >>> import functools
    >>> def cut(value, at): return "pass" if value >= at else "fail"
    >>> _function_text(functools.partial(cut, at=1.0)) == _function_text(functools.partial(cut, at=0.5))
    False
    """
    def value(v: Any) -> str:
        return _value_text(v, depth)

    bound: list[str]
    if isinstance(fn, functools.partial):  # no code of its own: the function and the arguments it is given
        text = f"functools.partial({value(fn.func)})"
        bound = [value(a) for a in fn.args] + [f"{k}={value(v)}" for k, v in sorted(fn.keywords.items())]
    else:
        text, bound = _code_text(fn), []
        code = _code_of(fn)
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                bound.append(value(cell.cell_contents))
            except ValueError:  # an empty cell
                bound.append("<empty>")
        bound += [value(v) for v in getattr(fn, "__defaults__", None) or ()]
        bound += [f"{k}={value(v)}" for k, v in sorted((getattr(fn, "__kwdefaults__", None) or {}).items())]
        names = getattr(fn, "__globals__", None) or {}
        bound += [f"{name}={value(names[name])}" for name in (code.co_names if code is not None else ())
                  if name in names and not isinstance(names[name], ModuleType)]
        # a bound method's object; a function's own attributes (``grade.at = 0.5``, which its code reads)
        held = getattr(fn, "__self__", fn) if hasattr(fn, "__code__") else fn
        attributes = _attributes(held)
        if attributes is not None and not isinstance(held, ModuleType):
            bound += [f"{k}={value(v)}" for k, v in sorted(attributes.items(), key=lambda kv: str(kv[0]))]
    if not bound:
        return text
    return f"{text} bound {hashlib.sha256(', '.join(bound).encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"


def _value_text(v: Any, depth: int) -> str:
    """A value a ``score_map`` function is bound to, as text (:func:`_function_text`, ``depth`` levels deep): a
    function by :func:`_function_text`; an object whose ``repr`` is ``object``'s (its address alone) by its class
    and attributes; else its ``repr``.

    A closure over a plain settings object (``cfg.cut``) was its address: ``cut 1.0`` and ``cut 0.5`` made one after
    the other, the first freed, got one address and read as one check (review F43's F41 hole), and two equal
    settings alive at once read as two.

    Examples
    --------
    >>> class Cfg:
    ...     def __init__(self, cut): self.cut = cut
    >>> _value_text(Cfg(1.0), 0) == _value_text(Cfg(1.0), 0) != _value_text(Cfg(0.5), 0)
    True
    """
    if depth < _BOUND_DEPTH:
        if callable(v):
            return _function_text(v, depth + 1)
        attributes = _attributes(v) if getattr(type(v), "__repr__", None) is object.__repr__ else None
        if attributes is not None:
            kind = type(v)
            held = ", ".join(f"{k}={_value_text(a, depth + 1)}"
                             for k, a in sorted(attributes.items(), key=lambda kv: str(kv[0])))
            return f"{kind.__module__}.{kind.__qualname__}({held})"
    try:
        return repr(v)
    except Exception:  # noqa: BLE001  (a repr that raises: its type, and the comparison says changed at worst)
        return f"<{type(v).__qualname__}>"


def _attributes(obj: Any) -> dict[str, Any] | None:
    """``obj``'s attributes: its ``__dict__`` with the ``__slots__`` its classes declare that are set (None: it has
    neither, as a number or a string).

    A settings object or a grader with ``__slots__`` has no ``__dict__``: its cut was not read, so
    ``Grader(1.0).grade`` and ``Grader(0.5).grade``, or ``cfg.cut = 0.5`` between two readings, were one check
    (review M49).

    Examples
    --------
    >>> class Cfg:
    ...     __slots__ = ("cut", "floor")
    ...     def __init__(self, cut): self.cut = cut
    >>> _attributes(Cfg(0.5)), _attributes(1.5)
    ({'cut': 0.5}, None)
    """
    own = getattr(obj, "__dict__", None)
    found: dict[str, Any] | None = dict(own) if isinstance(own, dict) else None
    for kind in type(obj).__mro__:
        slots = vars(kind).get("__slots__")
        if slots is None:
            continue
        found = {} if found is None else found
        for name in (slots,) if isinstance(slots, str) else slots:
            if name in ("__dict__", "__weakref__"):
                continue
            stored = f"_{kind.__name__.lstrip('_')}{name}" if name.startswith("__") and not name.endswith("__") \
                else name  # a private slot is stored under its mangled name
            try:
                value = getattr(obj, stored)
            except Exception:  # noqa: BLE001  (a slot never set; a getter that raises: left out)
                continue
            found.setdefault(stored, value)  # a name a subclass declares again: read once
    return found


def _code_text(fn: Any) -> str:
    """A callable's qualified name and a digest of its code (a callable object's: its class's ``__call__``)."""
    named = fn if hasattr(fn, "__qualname__") else type(fn)
    code = _code_of(fn)
    text = f"{getattr(named, '__module__', None) or ''}.{named.__qualname__}"
    return text + (f" {hashlib.sha256(marshal.dumps(code)).hexdigest()[:16]}" if code is not None else "")


def _code_of(fn: Any) -> CodeType | None:
    """A callable's code: a function's (a bound method's), a callable object's class's ``__call__``, else None."""
    code = getattr(fn, "__code__", None)
    if code is None:
        code = getattr(type(fn).__call__, "__code__", None)
    return code if isinstance(code, CodeType) else None


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
        return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)

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
    reader = _Reader(cluster, state_key, score_map, thresholds)
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
        start = _iso(spec.created, "") or _modified_at(file)
        created.append(start)
        declared_scorers = list(getattr(spec, "scorers", None) or [])
        declared = scorer_names([str(scorer.name) for scorer in declared_scorers])
        for name in declared:
            reader.criteria.setdefault(name, None)
        for name, scorer in zip(declared, declared_scorers, strict=True):
            _same_options(options, name, _options_text(scorer), file, str(spec.task))
        model_settings, plan_settings = agent_settings(header)  # keyed by model: other models are refused below
        _same_agent(agents, (str(spec.model),), model_settings, file)
        _same_agent(agents, (str(spec.model), str(spec.task)), plan_settings, file)
        _same_agent(agents, (str(spec.model), str(spec.task), "task"), task_settings(header), file,
                    "two versions of the task")
        stats = getattr(header, "stats", None)
        done = _iso(getattr(stats, "completed_at", None), "") if header.status == "success" else None
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
    for message in reader.ceiling_findings(path).values():  # not vacuous (it cannot pass): the gate never PASSes it
        warn_at_caller(message)
    name = "+".join(tasks)
    config = SuiteConfig(name=name or "inspect", system="inspect_ai:eval", evaluators=[
        InspectScorer(criterion=c, options=options.get((reader.options_task(c), reader.scorer_of[c]), ("",))[0],
                      reading=_reading(score_map, reader.threshold_of(c)))
        for c in reader.criteria],
        slices=DEFAULT_SLICES)
    manifest_fields: dict[str, Any] = {
        "suite": config.name, "run_id": "+".join(run_ids) or "inspect", "system_version": next(iter(models), None),
        "started_at": min(created), "oloproof_nb": __version__, "n_cases": len(records),
        "finished_at": max(f for f in finished if f is not None) if finished and all(finished) else None,
        "suite_config": StoredSuite(root=None, config={"name": config.name, "inspect_logs": [str(f) for f in files],
                                                      **({"inspect_unrun": unrun} if unrun else {}),
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

