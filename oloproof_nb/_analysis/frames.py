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
from ..evaluators.state import pinned_paths
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


def steps_items(records: Iterable[CaseRecord], tool_errors: ToolErrorRule = DEFAULT_TOOL_ERRORS,
                ) -> list[tuple[Any, ...]]:
    """The items of :data:`~oloproof_nb._analysis.columns.STEPS`: each step's row, ``(case id, index, kind, tool,
    args, result, is_error, epoch, role, content)``.

    ``is_error`` follows the suite's ``tool_errors`` rule. A step is a tool call when its ``kind`` is
    ``tool_call`` (read once per step); tool fields are empty on message rows and vice versa.
    """
    items: list[tuple[Any, ...]] = []
    append = items.append
    is_error = tool_errors.is_error
    for rec in records:
        traj = rec.get("trajectory")
        if traj:
            case = rec["case"]
            cid, epoch = case["id"], int(case.get("epoch", 1))  # _epoch(rec), inline: once per record
            for i, s in enumerate(traj["steps"]):
                if s.get("kind") == "tool_call":
                    result = s.get("result")
                    append((cid, i, "tool_call", s["tool"], s.get("args"), result, is_error(result), epoch, None,
                            None))
                else:
                    append((cid, i, "message", s.get("name"), s.get("args"), None, False, epoch, s.get("role"),
                            s.get("content")))
    return items


def snapshots_items(records: Iterable[CaseRecord]) -> list[Any]:
    """The items of :data:`~oloproof_nb._analysis.columns.SNAPSHOTS`: each ``environment_state/v1`` record."""
    return [rec["environment_state"] for rec in records if rec.get("environment_state") is not None]


def changes_items(records: Iterable[CaseRecord], diff: Callable[[Any, Any], list[tuple[str, Any, Any]]] = leaf_diff,
                  ) -> list[tuple[str, str, Any, Any, int]]:
    """The items of :data:`~oloproof_nb._analysis.columns.CHANGES`: ``(case id, path, before, after, epoch)``."""
    items = []
    for rec in records:
        env = rec.get("environment_state")
        if env is not None:
            case = rec["case"]
            cid, epoch = case["id"], int(case.get("epoch", 1))  # _epoch(rec), inline: once per record
            items += [(cid, path, before, after, epoch)
                      for path, before, after in diff(rec["case"].get("initial_state", {}), env["state"])]
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


def verdicts_items(records: Iterable[CaseRecord], run_rows: Iterable[RunVerdictRow] = (),
                   unscored: Collection[str] = frozenset()) -> list[tuple[Any, ...]]:
    """The items of :data:`~oloproof_nb._analysis.columns.VERDICTS`: each verdict's row, ``(case id, cluster,
    criterion, evaluator, verdict, reason, epoch)``; the rows of the cases in ``unscored`` (copies labeled
    invalid, :func:`unscored_cases`) are left out."""
    items: list[tuple[Any, ...]] = []
    for rec in records:
        case, verdicts = rec["case"], rec["verdicts"]
        if case["id"] not in unscored and len(verdicts):  # len: a record's null raises (its line is named)
            cid, cluster, epoch = case["id"], case["cluster"], _epoch(rec)  # once a record
            items += [(cid, cluster, v["criterion"], v["evaluator"], v["verdict"], v["reason"], epoch)
                      for v in verdicts]
    items += [(r["case_id"], r["cluster"], r["criterion"], r["evaluator"], r["verdict"], r["reason"],
               int(r.get("epoch", 1))) for r in run_rows]
    return items


def comparisons_items(records: Iterable[CaseRecord]) -> list[tuple[Any, ...]]:
    """The items of :data:`~oloproof_nb._analysis.columns.COMPARISONS`: each comparison's row, ``(case id,
    criterion, path, expected, actual, ok, epoch)``, stored ABSENT decoded back."""
    items: list[tuple[Any, ...]] = []
    for rec in records:
        if len(comparisons := rec["comparisons"]):  # len: a record's null raises (its line is named)
            epoch = _epoch(rec)  # once a record
            items += [(c["case_id"], c["criterion"], c["path"], decode_absent(c["expected"]),
                       decode_absent(c["actual"]), bool(c["ok"]), epoch) for c in comparisons]
    return items


def replays_items(records: Iterable[CaseRecord]) -> list[Any]:
    """The items of :data:`~oloproof_nb._analysis.columns.REPLAYS`: each case's replay rows."""
    return [_with_epoch(r, _epoch(rec)) for rec in records for r in rec.get("replays", [])]


def receipts_items(records: Iterable[CaseRecord]) -> list[Any]:
    """The items of :data:`~oloproof_nb._analysis.columns.RECEIPTS`: each case's stored receipts."""
    return [_with_epoch(r, _epoch(rec)) for rec in records for r in rec.get("receipts", [])]


def cases_frame(records: Sequence[CaseRecord]) -> pd.DataFrame:
    """One row per case (columns: :data:`~oloproof_nb._analysis.columns.CASES`)."""
    return CASES.build(records)


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


def chunk_items(records: Sequence[CaseRecord], refs: Sequence[str | None], tool_errors: ToolErrorRule,
                diff: Callable[[Any, Any], list[tuple[str, Any, Any]]] = leaf_diff,
                unscored: Collection[str] = frozenset(),
                ) -> Iterator[tuple[str, list[Any], list[str | None] | None]]:
    """The items of every per-case frame of one chunk of case records (see :func:`journal_items`); no verdict
    rows of the cases in ``unscored``."""
    with_state = [(rec["environment_state"], ref) for rec, ref in zip(records, refs, strict=True)
                  if rec.get("environment_state") is not None]
    yield "cases", list(records), None
    yield "steps", steps_items(records, tool_errors), None
    yield "snapshots", [env for env, _ in with_state], [ref for _, ref in with_state]
    yield "changes", changes_items(records, diff), None
    yield "verdicts", verdicts_items(records, unscored=unscored), None
    yield "comparisons", comparisons_items(records), None
    yield "replays", replays_items(records), None
    yield "receipts", receipts_items(records), None


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
                  ) -> Iterator[tuple[str, list[Any], list[str | None] | None]]:
    """The items of every frame of a run, chunk by chunk from its case records (in case order).

    ``chunks`` gives ``(records, refs, initial_refs)``: the records, and per record the address of its final
    state and of its initial state in the run's state store (None: no state, or stored inline). Yields
    ``(frame name, items, state_refs)``: each chunk's items of every frame (a frame's :class:`FrameSpec` reads
    its columns from them), then the verdicts judged across cases and the pairs. ``run_scope`` gets every
    record as much of it as pairs read, kept packed meanwhile (:func:`pack_view`: one untracked tuple per
    case, states by address, read back through ``states`` when a pair's states are compared).
    ``state_refs`` (``snapshots`` only) gives each item's state address. Concatenated per frame, the items
    are those of the frame built from all records at once. ``unscored``: cases whose verdict rows are left out
    (copies labeled invalid).
    """
    kept: list[Any] = []
    share = Shared()
    for records, refs, initial_refs in chunks:
        yield from chunk_items(records, refs, tool_errors, StateDiffs(), unscored)  # holds the chunk's states only
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
