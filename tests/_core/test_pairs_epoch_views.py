"""``_core/pairs``, packed views of a run with epochs: a mutant the nearest tests let through, killed here with
expectations counted by hand."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from oloproof_nb._core.pairs import PairViews, pack_view
from oloproof_nb.evaluators.metamorphic import MetamorphicRelation


def _record(cid: str, epoch: int, answer: str, transform: str | None = None) -> dict[str, Any]:
    case: dict[str, Any] = {"id": cid, "source_id": "c1", "transform": transform, "cluster": "c1",
                            "initial_state": {}}
    if epoch != 1:
        case["epoch"] = epoch
    return {"case": case, "status": "completed", "trajectory": {"steps": [], "answer": answer},
            "environment_state": None}


def test_packed_views_of_a_run_with_epochs_pair_each_epoch_with_its_sources_same_epoch() -> None:
    """Mutant (``epoch`` left out of a packed view): every view would read as epoch 1, so the derived case of
    epoch 1 would be paired with the source's last epoch. Source answers ``yes`` in epoch 1 and ``no`` in epoch 2,
    the copy ``no`` in both: by hand, epoch 1 breaks ``same_output`` and epoch 2 holds it."""
    records = [_record("c1", 1, "yes"), _record("c1", 2, "no"), _record("c1~t", 1, "no", "t"),
               _record("c1~t", 2, "no", "t")]
    views = PairViews([pack_view(r) for r in records], lambda refs: [])
    assert [v["case"].get("epoch", 1) for v in views] == [1, 2, 1, 2]
    relation = MetamorphicRelation(type="metamorphic_relation", relation="same_output", transform="t")
    _, pairs = relation.evaluate_run(views, {}, {"t": SimpleNamespace(minimum_validity=0.9)},  # type: ignore[arg-type]
                                     1)  # views read as records (a run judged across cases passes them)
    assert [(p.get("epoch", 1), p["holds"]) for p in pairs] == [(1, False), (2, True)]
