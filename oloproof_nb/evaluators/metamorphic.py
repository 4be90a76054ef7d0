"""``metamorphic_relation``: a case and its transformed copy must agree (answers, actions or state).

Judged across cases (scope ``run``) when the run's frames are built: each
derived case ``<source>~<transform>`` is compared with its source.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from ..labels import pair_labels
from ..paths import leaf_diff, values_equal
from ..validity import derived_ids, transform_checked
from .answer import answers_equal
from .base import Evaluator, register

__all__ = ["MetamorphicRelation", "RELATIONS", "compare_pair", "actions"]

RELATIONS: tuple[str, ...] = ("same_output", "same_actions", "same_state")
_HARNESS_FAILURES = ("error", "timeout")


def _short(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def actions(trajectory: Mapping[str, Any]) -> list[list[Any]]:
    """The ``[tool, args]`` of every tool call of a stored trajectory, in order.

    Examples
    --------
    >>> actions({"steps": [{"kind": "message", "content": "hi"},
    ...                    {"kind": "tool_call", "tool": "t", "args": {"x": 1}, "result": 2}]})
    [['t', {'x': 1}]]
    """
    return [[s["tool"], s.get("args") or {}] for s in trajectory.get("steps", []) if s.get("kind") == "tool_call"]


def _side_missing(rec: Mapping[str, Any], relation: str) -> str | None:
    cid = rec["case"]["id"]
    if rec.get("status") in _HARNESS_FAILURES:
        return f"{cid} has status {rec['status']}"
    if rec.get("trajectory") is None:
        return f"{cid} has no trajectory"
    if relation == "same_state" and rec.get("environment_state") is None:
        return f"no state recorded for {cid}"
    return None


def compare_pair(relation: str, source: Mapping[str, Any], derived: Mapping[str, Any]) -> tuple[bool | None, str]:
    """Compare a source record with its derived record under ``relation``.

    Parameters
    ----------
    relation : {"same_output", "same_actions", "same_state"}
        ``same_output``: final answers equal (strings compared without case
        and surrounding space, like ``answer_matches``); ``same_actions``: the
        sequences of (tool, args) of the tool calls are equal; ``same_state``:
        the recorded states are equal.
    source, derived : mapping
        Stored case records (``case``, ``status``, ``trajectory``, ``environment_state``).

    Returns
    -------
    (holds, reason)
        ``holds`` is True or False, or None when either side is missing (the
        system raised or timed out, recorded no trajectory, or — for
        ``same_state`` — no state); ``reason`` is empty when the relation holds.
    """
    for rec in (source, derived):
        why = _side_missing(rec, relation)
        if why is not None:
            return None, why
    sid = source["case"]["id"]
    s_traj, d_traj = source["trajectory"], derived["trajectory"]
    if relation == "same_output":
        a, b = s_traj.get("answer"), d_traj.get("answer")
        if answers_equal(a, b):
            return True, ""
        return False, f"answer {_short(b)} differs from {sid}'s {_short(a)}"
    if relation == "same_actions":
        a_calls, b_calls = actions(s_traj), actions(d_traj)
        if values_equal(a_calls, b_calls):
            return True, ""
        for i, (x, y) in enumerate(zip(a_calls, b_calls, strict=False)):
            if not values_equal(x, y):
                return False, (f"tool call {i} is {y[0]}({_short(y[1], 60)}), "
                               f"{sid}'s is {x[0]}({_short(x[1], 60)})")
        return False, (f"{len(b_calls)} tool calls ({', '.join(c[0] for c in b_calls) or 'none'}), "
                       f"{sid} made {len(a_calls)} ({', '.join(c[0] for c in a_calls) or 'none'})")
    if relation == "same_state":
        a_state, b_state = source["environment_state"]["state"], derived["environment_state"]["state"]
        if values_equal(a_state, b_state):
            return True, ""
        paths = [p for p, _, _ in leaf_diff(a_state, b_state)]
        shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        return False, f"state differs from {sid}'s at {len(paths)} path(s): {shown or 'the whole state'}"
    raise ValueError(f"relation={relation!r}; allowed: {', '.join(RELATIONS)}")


@register
class MetamorphicRelation(Evaluator):
    """Passes when a derived case and its source agree under ``relation``.

    ``relation`` is ``same_output`` (final answers), ``same_actions`` (the
    sequence of tool name + args) or ``same_state`` (the recorded states);
    ``transform`` names a transform of ``metamorphic.transforms``. The verdict
    row goes on the derived case, in the source's cluster. A pair with a
    missing side is ``missing``.

    Which pairs count: while the transform is not checked (some pair
    unlabeled, or the validity rate below ``minimum_validity``), every pair
    gets a verdict row, so the comparisons can be inspected, and the gate
    reports the rule as ``INSUFFICIENT_EVIDENCE`` (``transform_not_checked``).
    Once it is checked, only the pairs labeled valid get verdict rows; pairs
    labeled invalid still appear in ``run.pairs``.
    """

    type: Literal["metamorphic_relation"]
    relation: Literal["same_output", "same_actions", "same_state"]
    transform: str

    scope: ClassVar[Literal["case", "system", "run"]] = "run"

    def default_criterion(self) -> str:
        return f"{self.relation}_under_{self.transform}"

    def check_suite(self, suite_root: Path | None, transforms: dict[str, Any]) -> list[tuple[str, str]]:
        if self.transform in transforms:
            return []
        declared = ", ".join(transforms) or "(none: add them under metamorphic.transforms)"
        return [("transform", f"transform {self.transform!r} is not declared; declared transforms: {declared}")]

    def evaluate_run(self, records: Sequence[Mapping[str, Any]],
                     labels: Mapping[str, Sequence[Mapping[str, Any]]],
                     transforms: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Judge every pair of the transform among the run's stored records.

        Parameters
        ----------
        records : sequence of mapping
            Stored case records.
        labels : mapping
            Judgements by transform name (the run's stored labels).
        transforms : mapping
            Declared transforms by name (objects with ``minimum_validity``).

        Returns
        -------
        (verdict_rows, pair_rows)
            ``verdict_rows``: ``case_id`` (the derived id), ``cluster`` (the
            source's), ``criterion``, ``evaluator``, ``verdict``, ``reason`` —
            every pair until the transform is checked, then only the pairs
            labeled valid. ``pair_rows``: one per pair with the columns of
            ``frames.PAIR_COLUMNS``; ``holds`` is None for a missing pair and
            ``label`` is ``valid``, ``invalid`` or ``""`` (unlabeled).
        """
        transform = transforms.get(self.transform)
        if transform is None:
            return [], []
        judgements = list(labels.get(self.transform, []))
        by_id = {rec["case"]["id"]: rec for rec in records}
        checked = transform_checked(judgements, derived_ids(records, self.transform), transform.minimum_validity)
        label_of = pair_labels(judgements)
        verdicts: list[dict[str, Any]] = []
        pairs: list[dict[str, Any]] = []
        for rec in records:
            case = rec["case"]
            if case.get("transform") != self.transform:
                continue
            source = by_id.get(case["source_id"])
            if source is None:
                continue
            holds, reason = compare_pair(self.relation, source, rec)
            label = label_of.get(case["id"], "")
            cluster = source["case"]["cluster"]
            pairs.append({"source_id": source["case"]["id"], "derived_id": case["id"], "transform": self.transform,
                          "relation": self.relation, "criterion": self.name, "holds": holds, "label": label,
                          "cluster": cluster})
            if checked and label != "valid":
                continue
            verdict = "missing" if holds is None else ("pass" if holds else "fail")
            verdicts.append({"case_id": case["id"], "cluster": cluster, **self.verdict(verdict, reason)})
        return verdicts, pairs
