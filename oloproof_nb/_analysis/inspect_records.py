"""One Inspect AI sample as a case record, and its scores as verdict rows (see :mod:`.inspect_log`).

The sample as its dataset gave it and its digest (:func:`sample_digest`), the steps of the messages the run added,
the state in its store, its status; :class:`Reader` turns the samples of a folder's logs into case records and,
once every log is read, their scores into verdict rows.
"""

from __future__ import annotations

import ast
import copy
import json
import math
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from .._config.cases import LOOK_ALIKE_HELP, LookAlikes, key_look
from .._config.files import yaml_number
from .._core.canonical import digest, iso
from .._core.paths import exceeds_depth
from .._core.records import ENDED, ENV_SCHEMA, CaseRecord
from .._core.scoremap import ScoreMap, on_default_scale, score_verdict
from ..errors import OloproofError, quote
from .inspect_settings import added_hint, criterion_names, plain_json, split_hint

__all__ = ["sample_digest", "dataset_sample"]


# -- one sample -> one case record -------------------------------------------------------------------
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
    body = {"id": str(sample.id), "input": plain_json(given.input), "target": given.target,
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
    """A tool result's JSON value: JSON text parsed, a Python literal (a dict's ``str()``) evaluated, else the text.

    A value nested deeper than :data:`~oloproof_nb._core.paths.MAX_DEPTH` stays the text: a tool's text of a thousand
    brackets (``[[[…]]]``, what a tool read from a page, say) made ``json.loads`` raise RecursionError, an internal
    error for the whole log, and a value parsed from it would nest deeper than a run's trajectory may."""
    if not isinstance(text, str):
        return plain_json(text)
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[\"0123456789-tfnTFN":
        return text
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        pass
    else:
        return text if exceeds_depth(value) else value
    if stripped[0] in "{[" and len(stripped) <= 1_000_000:
        try:
            value = ast.literal_eval(stripped)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
        else:
            return text if exceeds_depth(value) else value
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
            steps.append({"kind": "tool_call", "tool": call.function, "args": plain_json(dict(call.arguments or {})),
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


def iso_time(ts: Any, default: str) -> str:
    if isinstance(ts, datetime):
        return iso(ts)
    if isinstance(ts, str) and ts:
        return iso(datetime.fromisoformat(ts.replace("Z", "+00:00")))
    return default


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


class Reader:
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
        #: per scorer: the scores a person changed after the eval (``edit_score``), each (sample id, epoch, the scorer's
        #: value, the value now, who, why), :meth:`edit_findings`
        self.edited: dict[str, list[tuple[str, int, Any, Any, str, str]]] = {}
        #: per log file: the names its eval's scorers score under (its header's ``eval.scorers``, named as
        #: :func:`~.inspect_settings.scorer_names` names them; empty: the header declares none)
        self.declared: dict[Path, set[str]] = {}
        #: per name no scorer of the eval gave: the scores a person added under it after the eval (``edit_score``),
        #: each (sample id, epoch, the value now, who, why), left out of the criteria (:meth:`edit_findings`)
        self.added: dict[str, list[tuple[str, int, Any, str, str]]] = {}

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
        started = iso_time(getattr(sample, "started_at", None), created)
        case: dict[str, Any] = {"id": cid, "epoch": epoch, "input": {"input": plain_json(sample.input)},
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
                       "system_version": model, "captured_at": iso_time(getattr(sample, "completed_at", None), started),
                       "state": state, "state_digest": digest(state)}
                if epoch != 1:  # as a run directory stores it: the epoch only when it is not 1
                    env["epoch"] = epoch
        traj = None
        if status != "error" or sample.messages:
            output = getattr(sample, "output", None)
            traj = {"steps": _steps(sample.messages or []), "answer": output.completion if output else None,
                    "status": status if status in ("completed", "failed") else "failed", "input": case["input"]}
        given = _eval_scores(sample, self.declared.get(file, set()))
        scores = {}
        for name, score in (sample.scores or {}).items():
            if given is not None and name not in given:  # no scorer of the eval gave it: made by hand, no criterion
                self.added.setdefault(name, []).append((cid, epoch, getattr(score, "value", None),
                                                        *_last_change(list(getattr(score, "history", None) or []))))
            else:
                scores[name] = score
        self.scores[index] = [(name, score.value) for name, score in scores.items()]
        for name, score in scores.items():
            edit = _edit_of(score)
            if edit is not None:
                self.edited.setdefault(name, []).append((cid, epoch, *edit))
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
        shown = "None" if threshold is None else yaml_number(threshold)  # every digit: 1.0000001 is not 1
        return f"pass_threshold{where}={shown}"

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
            elif name in self.added:
                hint = f" ({added_hint(name)})"
            there = ", ".join(self.criteria) or "(none: no scorer scored a sample)"
            raise OloproofError(f"pass_threshold[{name!r}]={yaml_number(threshold)}: these logs have no criterion "
                                f"{name!r}{hint}; their criteria: {there}")

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
            # str() made null the cluster "None", and NaN (a missing value, as a dataset built from a pandas frame
            # has it) the cluster "nan": unrelated samples counted as one cluster
            unset = raw is None or (isinstance(raw, float) and math.isnan(raw))
            if unset or isinstance(raw, (dict, list, tuple)):
                kind = ("null" if raw is None else "NaN (a missing value)" if unset
                        else "an object" if isinstance(raw, dict) else "a list")
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

    def edit_findings(self, path: str | Path) -> list[str]:
        """One finding per scorer some of whose scores a person changed after the eval (Inspect's ``edit_score``,
        kept in each score's ``history`` with who and why): the verdicts are of the values now, which are no longer
        the scorer's. Three failing scores edited from ``I`` to ``C`` ("close enough") turned a BLOCK into a PASS (30
        of 30, exit 0) without a word, where the log shows the edits to whoever opens it. And one per name
        under which a person added scores no scorer of the eval gave (:func:`_eval_scores`), left out of the criteria:
        a verdict made by hand, gated 30 of 30 (PASS) as a criterion of its own without a word."""
        found = []
        for name, added in self.added.items():
            cid, epoch, now, who, why = added[0]
            by = f"by {quote(who, 40)}" if who else "by an edit that names no author (no provenance)"
            if any(name in declared for declared in self.declared.values()):  # its scorer gave those samples none
                found.append(f"{path}: {len(added)} score(s) under {name!r} were added by hand after the eval "
                             f"(Inspect's edit_score) to samples its scorer gave no score, the first sample {cid!r} "
                             f"epoch {epoch} as {quote(now, 40)} {by}{why}: a verdict made by hand is not the "
                             f"scorer's, so they are left out ({name!r} is missing there); to judge the samples on "
                             "it, score them with the scorer (inspect score)")
                continue
            found.append(f"{path}: {len(added)} score(s) under {name!r}, a name no scorer of the eval gave, were added "
                         f"by hand after the eval (Inspect's edit_score), the first sample {cid!r} epoch {epoch} as "
                         f"{quote(now, 40)} {by}{why}: a verdict made by hand is no criterion, so they are left out "
                         f"(a release or pass_threshold naming {name!r} is refused); to judge the samples on it, score "
                         "them with a scorer (inspect score)")
        for scorer, edits in self.edited.items():
            cid, epoch, was, now, who, why = edits[0]
            by = f"by {quote(who, 40)}" if who else "by an edit that names no author (no provenance)"
            found.append(f"{path}: {len(edits)} score(s) of scorer {scorer!r} were changed by hand after the eval "
                         f"(Inspect's edit_score; each score's history), the first sample {cid!r} epoch {epoch} from "
                         f"{quote(was, 40)} to {quote(now, 40)} {by}{why}: the verdicts are of the "
                         "edited values, not of the scorer's own; read the edits before relying on the gate")
        return found

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


def _edit_of(score: Any) -> tuple[Any, Any, str, str] | None:
    """A score's value as its scorer gave it, its value now, who changed it (``""``: the edit names nobody) and why
    (`` ("reason")`` or ``""``), when a person changed its value after the eval; None otherwise (no edit, an edit
    of its explanation alone, or edits that put the value back).

    ``edit_score`` keeps the scorer's score as the first entry of its ``history`` when it first edits it (its
    ``metadata`` a dict), then appends each edit; a score it added starts with its first edit (``metadata``
    ``"UNCHANGED"`` unless the edit gave one). An edit's provenance is optional (``ScoreEdit``'s
    default is None, as the original's): three failing scores edited to ``C`` with no provenance read as no edit at
    all, 30 of 30, PASS at 0.8, without a word, where the scorer's 27 of 30 are INSUFFICIENT_EVIDENCE.
    """
    history = list(getattr(score, "history", None) or [])
    if not history:
        return None
    # no scorer gave it: the first entry is an edit, signed, or (unsigned) with what it left alone "UNCHANGED";
    # the scorer's score edit_score keeps has its metadata (a dict, {} for none). Taken for the scorer's, a score
    # added with no provenance and edited I -> C -> I read as put back, and was not said
    first = history[0]
    added = (len(history) == 1 or getattr(first, "provenance", None) is not None
             or getattr(first, "metadata", None) == "UNCHANGED")
    original = None if added else history[0].value
    now = getattr(score, "value", None)
    if original == now:
        return None
    return (original, now, *_last_change(history if added else history[1:]))


def _last_change(edits: list[Any]) -> tuple[str, str]:
    """Who made the last of ``edits`` (a score's ``history`` entries that are edits) that changed the value
    (``""``: it names nobody, or none did) and why (`` ("reason")`` or ``""``)."""
    changes = [h for h in edits if not (isinstance(h.value, str) and h.value == "UNCHANGED")]
    last: Any = getattr(changes[-1], "provenance", None) if changes else None
    why = f" ({quote(last.reason, 60)})" if getattr(last, "reason", None) else ""
    return str(getattr(last, "author", "") or ""), why


def _eval_scores(sample: Any, declared: set[str]) -> set[str] | None:
    """The names the eval scored ``sample`` under: those of its final ``score`` events (its scorers', and those of
    the scores its solver set, ``state.scores``), when the sample's events hold the eval's scoring (its ``scorers``
    span); else its scorers' (``declared``, the log header's ``eval.scorers``) and those of its score events; None
    when the sample's events cannot say (it kept none, or a score event names no scorer).

    A score under another name was added after the eval by ``edit_score``, which records a ``score_edit`` event,
    never a ``score`` event. Its history cannot tell it: added with a metadata dict and edited again after (an
    explanation), it reads as a scorer's score kept by ``edit_score`` and never changed, and a criterion made by
    hand was gated (30 of 30, PASS) without a word; added as ``I`` then edited to ``C``, it read as changed "from
    'I' to 'C'", an ``I`` no scorer gave. Nor is a scorer's name enough once the sample was scored: a
    scorer that gave no score on 3 of 30 samples (it returned None: missing, BLOCK) had ``C`` added by hand under its
    own name there, read as its scores, 30 of 30, PASS. An intermediate score (a solver's ``score()``
    call) is no score of the sample's.
    """
    events = list(getattr(sample, "events", None) or [])
    if not events:
        return None
    scored = False
    given: set[str] = set()
    for event in events:
        kind = getattr(event, "event", None)
        if kind == "span_begin" and (getattr(event, "name", None), getattr(event, "type", None)) == ("scorers",) * 2:
            scored = True  # the eval scored the sample: its final score events are every score it gave
        elif kind == "score":
            scorer = getattr(event, "scorer", None)
            if not scorer:
                return None
            if not getattr(event, "intermediate", False):
                given.add(str(scorer))
    return given if scored else given | declared


def _row(criterion: str, verdict: str, reason: str) -> Any:
    return {"criterion": criterion, "evaluator": "inspect_scorer", "verdict": verdict, "reason": reason}


def _duration(sample: Any) -> float:
    total = getattr(sample, "total_time", None)
    return float(total) if total is not None else math.nan
