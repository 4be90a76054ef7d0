"""``metamorphic_relation``: a case and its transformed copy must agree (answers, actions or state).

Judged across cases (scope ``run``) when the run's frames are built: each
derived case ``<source>~<transform>`` is compared with its source.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from .._core.evaluator import Evaluator, Scope, register
from .._core.labels import labels_row, pair_labels
from .._core.lists import ListMatch
from .._core.pairs import compare_pair
from .._core.records import CaseRecord, PairRow, RunVerdictRow, Verdict

__all__ = ["MetamorphicRelation"]


@register
class MetamorphicRelation(Evaluator):
    """Passes when a derived case and its source agree under ``relation``.

    ``relation`` is ``same_output`` (final answers), ``same_actions`` (the
    sequence of tool name + args) or ``same_state`` (the recorded states,
    except at the paths a ``state_path`` transform rewrote in the derived
    case's ``initial_state``, which differ by construction, and under the
    ``ignore`` patterns every ``state_matches`` check in ``changes`` or
    ``whole`` mode gives and no ``state_unchanged`` or ``paths``-mode check
    names: a timestamp the sandbox stamps itself);
    ``transform`` names a transform of ``metamorphic.transforms``. The verdict
    row goes on the derived case, in the source's cluster. A pair with a
    missing side is ``missing``.

    Which pairs count: while the transform is not checked (some pair of the
    suite unlabeled, or the validity rate below ``minimum_validity``), every pair
    gets a verdict row, so the comparisons can be inspected, and the gate
    reports the rule as ``INSUFFICIENT_EVIDENCE`` (``transform_not_checked``).
    Once it is checked, only the pairs labeled valid get verdict rows; pairs
    labeled invalid still appear in ``run.pairs``.

    A relation checks consistency, not correctness: a pair whose two cases do
    the same wrong thing (both refund an order they must refuse) holds, and an
    agent that does nothing holds every ``same_state`` pair. Gate a correctness
    check (``state_matches``, a ``python`` check) beside it.
    """

    type: Literal["metamorphic_relation"]
    relation: Literal["same_output", "same_actions", "same_state"]
    transform: str

    scope: ClassVar[Scope] = "run"

    def default_criterion(self) -> str:
        return f"{self.relation}_under_{self.transform}"

    def check_suite(self, transforms: Mapping[str, Any]) -> list[tuple[str, str]]:
        if self.transform in transforms:
            return []
        declared = ", ".join(transforms) or "(none: add them under metamorphic.transforms)"
        return [("transform", f"transform {self.transform!r} is not declared; declared transforms: {declared}")]

    def evaluate_run(self, records: Sequence[CaseRecord],
                     labels: Mapping[str, Sequence[Mapping[str, Any]]],
                     transforms: Mapping[str, Any], n_derived: int,
                     ignore: Sequence[str] = (), keep: Sequence[str] = (),
                     lists: Mapping[str, ListMatch] | None = None) -> tuple[list[RunVerdictRow], list[PairRow]]:
        """Judge every pair of the transform among the run's stored records.

        Parameters
        ----------
        records : sequence of mapping
            Stored case records.
        labels : mapping
            Judgements by transform name (the run's stored labels).
        transforms : mapping
            Declared transforms by name (objects with ``minimum_validity``).
        n_derived : int
            The transform's pairs in the suite (one per source case), recorded or not: whether it is checked is
            counted over these (:func:`~oloproof_nb._core.labels.transform_checked`), as for the copies a run
            leaves out, so a run stopped part-way judges its pairs as its finished run would.
        ignore : sequence of str
            The ``state_matches`` ``ignore:`` patterns ``same_state`` leaves out: those every ``changes`` or
            ``whole`` check gives (:func:`~oloproof_nb._config.shared_rules.ignored_paths`).
        keep : sequence of str
            Paths a ``state_unchanged`` or ``paths``-mode check judges: compared under those patterns too
            (:func:`~oloproof_nb.evaluators.state.pinned_paths`).
        lists : mapping of str to ListMatch, optional
            The ``unordered`` and ``by_key`` list rules every ``state_matches`` check gives, by which
            ``same_state`` aligns lists (:func:`~oloproof_nb._config.shared_rules.shared_list_rules`).

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
        # one pass over the records for their ids, then positions, not records: ``records`` may make each record
        # as it is read (a run's packed views), so only the pairs' two sides are made again
        keys = [(c["id"], c.get("epoch", 1), c.get("transform"), c.get("source_id"))
                for c in (rec["case"] for rec in records)]
        position = {(cid, epoch): i for i, (cid, epoch, _, _) in enumerate(keys)}
        # the majorities worked out once, for the labels and for whether the transform is checked
        # (``transform_checked`` would work them out again)
        label_of = pair_labels(labels.get(self.transform, []))
        checked = labels_row(label_of, n_derived, transform.minimum_validity)["checked"]
        verdicts: list[RunVerdictRow] = []
        pairs: list[PairRow] = []
        for i, (_, epoch, transform_name, source_id) in enumerate(keys):
            if transform_name != self.transform or source_id is None:
                continue
            at = position.get((source_id, epoch))  # each epoch is paired with its source's same epoch
            if at is None:
                continue
            rec, source = records[i], records[at]
            case = rec["case"]
            holds, reason = compare_pair(self.relation, source, rec, ignore, keep, lists)
            label = label_of.get(case["id"], "")
            cluster = source["case"]["cluster"]
            pair: PairRow = {"source_id": source["case"]["id"], "derived_id": case["id"],
                             "transform": self.transform, "relation": self.relation, "criterion": self.name,
                             "holds": holds, "label": label, "cluster": cluster}
            if epoch != 1:
                pair["epoch"] = epoch
            pairs.append(pair)
            if checked and label != "valid":
                continue
            verdict: Verdict = "missing" if holds is None else ("pass" if holds else "fail")
            row: RunVerdictRow = {"case_id": case["id"], "cluster": cluster,
                                  **self.verdict(verdict, reason)}  # type: ignore[typeddict-item]
            if epoch != 1:
                row["epoch"] = epoch
            verdicts.append(row)
        return verdicts, pairs
