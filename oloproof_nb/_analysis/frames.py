"""Tidy DataFrames built from run records: one row per observation, ids on every frame.

Each function walks the records to the items its frame has one row per (a
case, a step, a changed leaf, a verdict …) and lets the frame's
:class:`~oloproof_nb._analysis.columns.FrameSpec` read and type the columns.
:func:`journal_items` gives every frame's items of a run chunk by chunk (what the
columnar copy is written from).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

from .._config.shared_rules import ignored_paths, shared_list_rules
from .._config.suite_config import SuiteConfig
from .._core.labels import Label, invalid_copies
from .._core.pairs import PairViews, Shared, pack_view
from .._core.paths import ABSENT, leaf_diff
from .._core.records import ENDED, CaseRecord, PairRow, ReceiptRow, RunVerdictRow
from .._core.trajectory import DEFAULT_TOOL_ERRORS, ToolErrorRule
from ..errors import value_kind
from ..evaluators.state import pinned_paths
from .columnar import json_text
from .columns import CASES, CHANGES, COMPARISONS, PAIRS, RECEIPTS, REPLAYS, SNAPSHOTS, STEPS, TEXT, VERDICTS, FrameSpec

__all__ = [
    "ended_case_runs",
    "unscored_cases",
    "cases_frame",
    "steps_frame",
    "snapshots_frame",
    "changes_frame",
    "verdicts_frame",
    "comparisons_frame",
    "replays_frame",
    "pairs_frame",
    "receipts_frame_from_rows",
    "decode_absent",
    "run_scope_rows",
    "pairs_per_transform",
    "journal_items",
    "chunk_items",
    "ChunkItems",
    "case_row",
    "snapshot_item",
    "as_is",
    "PER_CASE",
    "run_scope_items",
    "StateDiffs",
    "steps_items",
    "snapshots_items",
    "changes_items",
    "verdicts_items",
    "comparisons_items",
    "replays_items",
    "receipts_items",
    "RunScope",
    "concat",
    "TEXT",
]


def decode_absent(value: Any) -> Any:
    """Stored ``{"$absent": true}`` back to :data:`~oloproof_nb.ABSENT`.

    Examples
    --------
    >>> decode_absent({"$absent": True}), decode_absent({"a": 1})
    (<absent>, {'a': 1})
    """
    if isinstance(value, dict) and len(value) == 1 and value.get("$absent") is True:
        return ABSENT
    return value


def _epoch(rec: CaseRecord) -> int:
    """The epoch of a case record (1 when it has none)."""
    return int(rec["case"].get("epoch", 1))


def _with_epoch(row: Any, epoch: int) -> Any:
    """A stored row with its record's ``epoch`` (the row itself for epoch 1)."""
    return row if epoch == 1 else {**row, "epoch": epoch}


def as_is(value: Any) -> Any:
    """A JSON cell of the frames made in memory: the value itself (the copy's rows hold its
    :func:`~.columnar.json_text`)."""
    return value


#: What a row function makes of each JSON cell (:func:`as_is`, or :func:`~.columnar.json_text` for the copy).
Cell = Callable[[Any], Any]


def _cluster(rec: CaseRecord) -> str:
    """The case's cluster, which oloproof_nb always writes as text: a record without one (``null``) would put
    its verdict rows in no cluster, which the gate cannot count."""
    cluster = rec["case"]["cluster"]
    if not isinstance(cluster, str):
        # the file's words (a number (7.5), a list), not Python's: it said "a JSON float", "a JSON dict"
        raise TypeError(f"its case's cluster is {value_kind(cluster)}, not text")
    return cluster


def case_row(rec: CaseRecord, cell: Cell = as_is) -> tuple[Any, ...]:
    """The item of :data:`~oloproof_nb._analysis.columns.CASES` of one case record: every column, in order (one
    call per case, not one per cell); ``answer`` and ``metadata`` as ``cell`` makes them."""
    case = rec["case"]
    cluster = case["cluster"]
    if type(cluster) is not str:
        cluster = _cluster(rec)  # text of a str subclass, or the one line refusing a record without text
    traj = rec.get("trajectory")
    if traj:
        steps = traj["steps"]
        n_tool_calls = 0
        for step in steps:  # a plain loop: a comprehension costs a frame per case
            if step.get("kind") == "tool_call":
                n_tool_calls += 1
        answer, n_steps = traj.get("answer"), len(steps)
    else:
        answer, n_tool_calls, n_steps = None, pd.NA, pd.NA
    return (case["id"], case["source_id"], case.get("transform"), cluster, case["digest"], rec["status"], cell(answer),
            n_tool_calls, n_steps, rec["duration_s"], rec.get("error"), rec.get("environment_state") is not None,
            case.get("epoch", 1), rec["started_at"], cell(case.get("metadata") or {}))


def _steps_of(rec: CaseRecord, is_error: Callable[[Any], bool], cell: Cell, out: list[tuple[Any, ...]]) -> None:
    """Append the :data:`~oloproof_nb._analysis.columns.STEPS` rows of one record to ``out`` (see
    :func:`steps_items`)."""
    traj = rec.get("trajectory")
    if traj:
        append = out.append
        case = rec["case"]
        cid, epoch = case["id"], int(case.get("epoch", 1))  # _epoch(rec), inline: once per record
        for i, s in enumerate(traj["steps"]):
            if s.get("kind") == "tool_call":
                result = s.get("result")
                append((cid, i, "tool_call", s["tool"], cell(s.get("args")), cell(result), is_error(result), epoch,
                        None, cell(None)))
            else:
                append((cid, i, "message", s.get("name"), cell(s.get("args")), cell(None), False, epoch, s.get("role"),
                        cell(s.get("content"))))


def steps_items(records: Iterable[CaseRecord], tool_errors: ToolErrorRule = DEFAULT_TOOL_ERRORS,
                ) -> list[tuple[Any, ...]]:
    """The items of :data:`~oloproof_nb._analysis.columns.STEPS`: each step's row, ``(case id, index, kind, tool,
    args, result, is_error, epoch, role, content)``.

    ``is_error`` follows the suite's ``tool_errors`` rule. A step is a tool call when its ``kind`` is
    ``tool_call`` (read once per step); tool fields are empty on message rows and vice versa.
    """
    items: list[tuple[Any, ...]] = []
    for rec in records:
        _steps_of(rec, tool_errors.is_error, as_is, items)
    return items


def snapshot_item(env: Any, ref: str | None, cell: Cell = as_is) -> Any:
    """The item of :data:`~oloproof_nb._analysis.columns.SNAPSHOTS` of one ``environment_state/v1`` record whose
    state is stored at ``ref`` (None: not in the state store): the record itself in memory; for the copy (``cell``
    not :func:`as_is`) its fields with ``state`` as ``cell`` makes it, ABSENT (a null) when it is stored by
    address."""
    if cell is as_is and ref is None:
        return env
    return {**env, "state": cell(ABSENT if ref is not None else env["state"])}


def snapshots_items(records: Iterable[CaseRecord]) -> list[Any]:
    """The items of :data:`~oloproof_nb._analysis.columns.SNAPSHOTS`: each ``environment_state/v1`` record."""
    return [rec["environment_state"] for rec in records if rec.get("environment_state") is not None]


def _changes_of(rec: CaseRecord, diff: Callable[[Any, Any], list[tuple[str, Any, Any]]], cell: Cell,
                out: list[tuple[str, str, Any, Any, int]]) -> None:
    """Append the :data:`~oloproof_nb._analysis.columns.CHANGES` rows of one record to ``out``."""
    env = rec.get("environment_state")
    if env is not None:
        case = rec["case"]
        cid, epoch = case["id"], int(case.get("epoch", 1))  # _epoch(rec), inline: once per record
        out += [(cid, path, cell(before), cell(after), epoch)
                for path, before, after in diff(case.get("initial_state", {}), env["state"])]


def changes_items(records: Iterable[CaseRecord], diff: Callable[[Any, Any], list[tuple[str, Any, Any]]] = leaf_diff,
                  ) -> list[tuple[str, str, Any, Any, int]]:
    """The items of :data:`~oloproof_nb._analysis.columns.CHANGES`: ``(case id, path, before, after, epoch)``."""
    items: list[tuple[str, str, Any, Any, int]] = []
    for rec in records:
        _changes_of(rec, diff, as_is, items)
    return items


def ended_case_runs(cases: pd.DataFrame) -> pd.DataFrame:
    """The rows of a ``cases`` frame whose case run ended in ``error`` or ``timeout`` (their verdicts are
    ``missing``), with ``message``: the first line of ``error``, ``(no message)`` when it has none."""
    ended = cases[cases["status"].isin(ENDED)]
    return ended.assign(message=ended["error"].fillna("(no message)").astype(str).str.split("\n").str[0])


def pairs_per_transform(config: SuiteConfig, n_cases: int) -> int:
    """The pairs of each transform in a run of ``config`` with ``n_cases`` cases an epoch (its manifest's): one
    per source case, as each source case gains one copy per transform. Whether a transform is checked is counted
    over these, recorded or not (:func:`~oloproof_nb._core.labels.transform_checked`), for the copies left out
    (:func:`unscored_cases`), the relation (:func:`run_scope_rows`) and ``op.validity`` alike."""
    return n_cases // (1 + len(config.metamorphic.transforms))


def unscored_cases(config: SuiteConfig, labels: Mapping[str, Mapping[str, Label]],
                   n_cases: int) -> frozenset[str]:
    """The copies no criterion scores in a run of ``config`` with ``n_cases`` cases an epoch (its manifest's):
    those labeled invalid by a transform whose labels are checked (:func:`~oloproof_nb._core.labels.invalid_copies`
    over the :func:`pairs_per_transform`); ``labels``: each transform's pair labels (the Run's, worked out once)."""
    transforms = config.metamorphic.transforms
    if not transforms:
        return frozenset()
    minimum = {t.name: t.minimum_validity for t in transforms}
    return invalid_copies(labels, minimum, pairs_per_transform(config, n_cases))


def _verdicts_of(rec: CaseRecord, unscored: Collection[str], out: list[tuple[Any, ...]]) -> None:
    """Append the :data:`~oloproof_nb._analysis.columns.VERDICTS` rows of one record to ``out`` (none when its
    case is in ``unscored``)."""
    case, verdicts = rec["case"], rec["verdicts"]
    if case["id"] not in unscored and len(verdicts):  # len: a record's null raises (its line is named)
        cid, cluster, epoch = case["id"], case["cluster"], _epoch(rec)  # once a record
        out += [(cid, cluster, v["criterion"], v["evaluator"], v["verdict"], v["reason"], epoch) for v in verdicts]


def verdicts_items(records: Iterable[CaseRecord], run_rows: Iterable[RunVerdictRow] = (),
                   unscored: Collection[str] = frozenset()) -> list[tuple[Any, ...]]:
    """The items of :data:`~oloproof_nb._analysis.columns.VERDICTS`: each verdict's row, ``(case id, cluster,
    criterion, evaluator, verdict, reason, epoch)``; the rows of the cases in ``unscored`` (copies labeled
    invalid, :func:`unscored_cases`) are left out."""
    items: list[tuple[Any, ...]] = []
    for rec in records:
        _verdicts_of(rec, unscored, items)
    items += [(r["case_id"], r["cluster"], r["criterion"], r["evaluator"], r["verdict"], r["reason"],
               int(r.get("epoch", 1))) for r in run_rows]
    return items


def _comparisons_of(rec: CaseRecord, cell: Cell, out: list[tuple[Any, ...]]) -> None:
    """Append the :data:`~oloproof_nb._analysis.columns.COMPARISONS` rows of one record to ``out``."""
    if len(comparisons := rec["comparisons"]):  # len: a record's null raises (its line is named)
        epoch = _epoch(rec)  # once a record
        out += [(c["case_id"], c["criterion"], c["path"], cell(decode_absent(c["expected"])),
                 cell(decode_absent(c["actual"])), bool(c["ok"]), epoch) for c in comparisons]


def comparisons_items(records: Iterable[CaseRecord]) -> list[tuple[Any, ...]]:
    """The items of :data:`~oloproof_nb._analysis.columns.COMPARISONS`: each comparison's row, ``(case id,
    criterion, path, expected, actual, ok, epoch)``, stored ABSENT decoded back."""
    items: list[tuple[Any, ...]] = []
    for rec in records:
        _comparisons_of(rec, as_is, items)
    return items


def replays_items(records: Iterable[CaseRecord]) -> list[Any]:
    """The items of :data:`~oloproof_nb._analysis.columns.REPLAYS`: each case's replay rows."""
    return [_with_epoch(r, _epoch(rec)) for rec in records for r in rec.get("replays", [])]


def receipts_items(records: Iterable[CaseRecord]) -> list[Any]:
    """The items of :data:`~oloproof_nb._analysis.columns.RECEIPTS`: each case's stored receipts."""
    return [_with_epoch(r, _epoch(rec)) for rec in records for r in rec.get("receipts", [])]


def cases_frame(records: Iterable[CaseRecord]) -> pd.DataFrame:
    """One row per case (columns: :data:`~oloproof_nb._analysis.columns.CASES`)."""
    return CASES.build([case_row(rec) for rec in records])


def steps_frame(records: Iterable[CaseRecord], tool_errors: ToolErrorRule = DEFAULT_TOOL_ERRORS) -> pd.DataFrame:
    """One row per trajectory step (columns: :data:`~oloproof_nb._analysis.columns.STEPS`).

    ``kind`` is ``tool_call`` or ``message``; tool fields are empty on message rows and vice versa;
    ``is_error`` follows the suite's ``tool_errors`` rule.
    """
    return STEPS.build(steps_items(records, tool_errors))


def snapshots_frame(records: Iterable[CaseRecord]) -> pd.DataFrame:
    """One row per recorded state, ``environment_state/v1`` (columns: :data:`~.columns.SNAPSHOTS`)."""
    return SNAPSHOTS.build(snapshots_items(records))


def changes_frame(records: Iterable[CaseRecord],
                  diff: Callable[[Any, Any], list[tuple[str, Any, Any]]] = leaf_diff) -> pd.DataFrame:
    """One row per leaf of the recorded state that differs from ``initial_state``.

    A leaf that appeared or disappeared has :data:`~oloproof_nb.ABSENT` on the other side.
    ``diff`` is :func:`~oloproof_nb.leaf_diff` or a memo of it.
    """
    return CHANGES.build(changes_items(records, diff))


def verdicts_frame(records: Iterable[CaseRecord], run_rows: Iterable[RunVerdictRow] = (),
                   unscored: Collection[str] = frozenset()) -> pd.DataFrame:
    """One row per case × criterion; ``run_rows`` are verdicts judged across cases (metamorphic pairs); none of
    the cases in ``unscored`` (copies labeled invalid)."""
    return VERDICTS.build(verdicts_items(records, run_rows, unscored))


def comparisons_frame(records: Iterable[CaseRecord]) -> pd.DataFrame:
    """One row per compared path; stored ABSENT values are decoded back."""
    return COMPARISONS.build(comparisons_items(records))


def replays_frame(records: Iterable[CaseRecord]) -> pd.DataFrame:
    """One row per fault replay of a case."""
    return REPLAYS.build(replays_items(records))


def pairs_frame(rows: Iterable[PairRow]) -> pd.DataFrame:
    """One row per source/derived pair and relation."""
    return PAIRS.build(list(rows))


def receipts_frame_from_rows(rows: Iterable[ReceiptRow]) -> pd.DataFrame:
    """One row per stored receipt (rows already validated when the run wrote them)."""
    return RECEIPTS.build(list(rows))


def run_scope_rows(config: SuiteConfig, labels: Mapping[str, Sequence[Mapping[str, Any]]],
                   records: Sequence[CaseRecord], n_cases: int) -> tuple[list[RunVerdictRow], list[PairRow]]:
    """Verdicts judged across cases (metamorphic pairs) and the pair rows, from every case record of a run of
    ``n_cases`` cases an epoch (its manifest's: a transform is checked over its :func:`pairs_per_transform`)."""
    verdicts: list[RunVerdictRow] = []
    pairs: list[PairRow] = []
    transforms = {t.name: t for t in config.metamorphic.transforms}
    n_derived = pairs_per_transform(config, n_cases)
    ignore, keep = ignored_paths(config.evaluators), pinned_paths(config.evaluators)
    lists = shared_list_rules(config.evaluators)
    for ev in config.evaluators:
        if ev.scope == "run":
            v, p = ev.evaluate_run(records, labels, transforms, n_derived, ignore, keep, lists)
            verdicts += v
            pairs += p
    return verdicts, pairs


class StateDiffs:
    """:func:`~oloproof_nb.leaf_diff` remembered per pair of state objects.

    States read from a run's state store are one object per distinct state, so cases that start from and
    end in the same states are diffed once. The states stay referenced while the memo lives, so an
    ``id`` is never reused for another object meanwhile.
    """

    def __init__(self) -> None:
        self._memo: dict[tuple[int, int], tuple[Any, Any, list[tuple[str, Any, Any]]]] = {}

    def __call__(self, before: Any, after: Any) -> list[tuple[str, Any, Any]]:
        key = (id(before), id(after))
        hit = self._memo.get(key)
        if hit is None:
            hit = (before, after, leaf_diff(before, after))
            self._memo[key] = hit
        return hit[2]


#: Judges a run across cases from what was kept of each record (``keep``'s results, in case order).
RunScope = Callable[[Sequence[Any]], tuple[list[RunVerdictRow], list[PairRow]]]


#: The frames made of each case record, in the order :func:`chunk_items` gives them.
PER_CASE = ("cases", "steps", "snapshots", "changes", "verdicts", "comparisons", "replays", "receipts")


class ChunkItems:
    """The items of every per-case frame of the case records added (in case order), one list per name of
    :data:`PER_CASE`, each JSON cell as ``cell`` makes it: its :func:`~.columnar.json_text` (the default), as
    :func:`~.columnar.to_arrow` takes it, or the value itself (:func:`as_is`), as :meth:`~.columns.FrameSpec.build`
    takes it. No verdict rows of the cases in ``unscored``; ``diff`` is :func:`~oloproof_nb.leaf_diff` or a memo
    of it (:class:`StateDiffs`).

    A record is read once, when it is added; the items keep none of it but the cells (the columnar copy of a
    run that is going on lets go of each record as it arrives).
    """

    def __init__(self, tool_errors: ToolErrorRule, diff: Callable[[Any, Any], list[tuple[str, Any, Any]]] = leaf_diff,
                 unscored: Collection[str] = frozenset(), cell: Cell = json_text) -> None:
        self._is_error, self._diff, self._unscored, self._cell = tool_errors.is_error, diff, unscored, cell
        self.items: dict[str, list[Any]] = {name: [] for name in PER_CASE}
        self.state_refs: list[str | None] = []  # the address of each snapshot's state (None: not stored by address)
        self.records = 0

    def add(self, rec: CaseRecord, ref: str | None) -> None:
        """Add one case record's items; ``ref``: the address of its final state in the state store (None: none)."""
        items, cell = self.items, self._cell
        items["cases"].append(case_row(rec, cell))
        _steps_of(rec, self._is_error, cell, items["steps"])
        env = rec.get("environment_state")
        if env is not None:
            items["snapshots"].append(snapshot_item(env, ref, cell))
            self.state_refs.append(ref)
        _changes_of(rec, self._diff, cell, items["changes"])
        _verdicts_of(rec, self._unscored, items["verdicts"])
        _comparisons_of(rec, cell, items["comparisons"])
        epoch = _epoch(rec)
        items["replays"] += [_with_epoch(r, epoch) for r in rec.get("replays", [])]
        items["receipts"] += [_with_epoch(r, epoch) for r in rec.get("receipts", [])]
        self.records += 1

    def parts(self) -> Iterator[tuple[str, list[Any], list[str | None] | None]]:
        """``(frame name, items, state_refs)`` of each frame, in :data:`PER_CASE` order (``state_refs``:
        ``snapshots`` only)."""
        for name in PER_CASE:
            yield name, self.items[name], self.state_refs if name == "snapshots" else None


def chunk_items(records: Sequence[CaseRecord], refs: Sequence[str | None], tool_errors: ToolErrorRule,
                diff: Callable[[Any, Any], list[tuple[str, Any, Any]]] = leaf_diff,
                unscored: Collection[str] = frozenset(), cell: Cell = json_text,
                ) -> Iterator[tuple[str, list[Any], list[str | None] | None]]:
    """The items of every per-case frame of one chunk of case records (see :func:`journal_items` and
    :class:`ChunkItems`): ``(frame name, items, state_refs)`` per frame."""
    chunk = ChunkItems(tool_errors, diff, unscored, cell)
    for rec, ref in zip(records, refs, strict=True):
        chunk.add(rec, ref)
    yield from chunk.parts()


def run_scope_items(run_scope: RunScope | None, kept: Sequence[Any],
                    ) -> Iterator[tuple[str, list[Any], list[str | None] | None]]:
    """The verdicts judged across cases and the pairs, from every record (as kept), after the chunks."""
    rows, pairs = run_scope(kept) if run_scope is not None else ([], [])
    yield "verdicts", verdicts_items([], rows), None
    yield "pairs", list(pairs), None


def _no_states(refs: list[str]) -> list[Any]:
    raise LookupError(f"no state store to read state {refs[0]} from")


def journal_items(chunks: Iterable[tuple[Sequence[CaseRecord], Sequence[str | None], Sequence[str | None]]],
                  tool_errors: ToolErrorRule, run_scope: RunScope | None,
                  states: Callable[[list[str]], list[Any]] = _no_states, unscored: Collection[str] = frozenset(),
                  cell: Cell = json_text) -> Iterator[tuple[str, list[Any], list[str | None] | None]]:
    """The items of every frame of a run, chunk by chunk from its case records (in case order).

    ``chunks`` gives ``(records, refs, initial_refs)``: the records, and per record the address of its final
    state and of its initial state in the run's state store (None: no state, or stored inline). Yields
    ``(frame name, items, state_refs)``: each chunk's items of every frame (a frame's :class:`FrameSpec` reads
    its columns from them), then the verdicts judged across cases and the pairs. ``run_scope`` gets every
    record as much of it as pairs read, kept packed meanwhile (:func:`pack_view`: one untracked tuple per
    case, states by address, read back through ``states`` when a pair's states are compared).
    ``state_refs`` (``snapshots`` only) gives each item's state address. Concatenated per frame, the items
    are those of the frame built from all records at once. ``unscored``: cases whose verdict rows are left out
    (copies labeled invalid). ``cell``: what each JSON cell is made (:func:`chunk_items`): its JSON text for the
    columnar copy, the value itself (:func:`as_is`) for frames built in memory.
    """
    kept: list[Any] = []
    share = Shared()
    for records, refs, initial_refs in chunks:
        yield from chunk_items(records, refs, tool_errors, StateDiffs(), unscored, cell)  # the chunk's states only
        if run_scope is not None:
            kept += [pack_view(rec, i, f, share) for rec, i, f in zip(records, initial_refs, refs, strict=True)]
    yield from run_scope_items(run_scope, PairViews(kept, states))


def concat(spec: FrameSpec, parts: Sequence[pd.DataFrame], run_id: bool = False) -> pd.DataFrame:
    """The rows of ``parts`` (frames of ``spec``) in order, as one frame with a fresh index.

    ``run_id``: the parts carry a ``run_id`` column (pooled runs); an empty result keeps it.
    """
    full = [p for p in parts if len(p)]
    if not full:
        empty = spec.empty()
        if run_id and "run_id" not in empty.columns:
            empty.insert(0, "run_id", pd.Series([], dtype=TEXT))
        return empty if not parts else parts[0].iloc[0:0].reset_index(drop=True)
    if len(full) == 1:
        return full[0].reset_index(drop=True)
    return pd.concat(full, ignore_index=True)
