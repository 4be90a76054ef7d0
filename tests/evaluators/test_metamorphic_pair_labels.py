"""The pairs' labels are one rule for the relation and for the Run (``op.validity``, the copies its
verdicts leave out), and the relation works the majorities out once per relation."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _metamorphic_systems import case, mm_suite, transform

import oloproof_nb as op
import oloproof_nb._core.labels as core_labels
from oloproof_nb._analysis import frames
from oloproof_nb._analysis.run import stored_pair_labels
from oloproof_nb._analysis.validity import validity_table

IDS = ["c1", "c2", "c3", "c4", "c5", "c6"]
#: A hand-made label file: several labelers, anonymous judgements (no ``labeler``, or ``""``), ties.
JUDGEMENTS: list[dict[str, Any]] = [
    {"case_id": "c1~t", "valid": True, "labeler": "ana"},   # c1: ana valid, bob invalid: a tie, so invalid
    {"case_id": "c1~t", "valid": False, "labeler": "bob"},
    {"case_id": "c2~t", "valid": True},                     # c2: two anonymous, one each way, and ana valid: 2 to 1
    {"case_id": "c2~t", "valid": False, "labeler": ""},
    {"case_id": "c2~t", "valid": True, "labeler": "ana"},
    {"case_id": "c3~t", "valid": True},                     # c3: two anonymous valid
    {"case_id": "c3~t", "valid": True},
    {"case_id": "c4~t", "valid": False, "labeler": "ana"},  # c4: 1 valid to 2 invalid
    {"case_id": "c4~t", "valid": True, "labeler": "bob"},
    {"case_id": "c4~t", "valid": False, "labeler": "cy"},
    {"case_id": "c5~t", "valid": False},                    # c5: one anonymous invalid
    {"case_id": "c5~t", "valid": True},                     # ... and one anonymous valid: a tie of nobodies
]
#: The labels counted by hand from :data:`JUDGEMENTS` (c6~t unlabeled).
BY_HAND = {"c1~t": "invalid", "c2~t": "valid", "c3~t": "valid", "c4~t": "invalid", "c5~t": "invalid"}


def _suite(make_suite: Callable[..., Path], judgements: list[dict[str, Any]]) -> Path:
    """Six sources, transform ``t`` (a polite suffix: the same actions), a ``same_actions`` relation under it."""
    evaluators = [{"type": "answer_matches"},
                  {"type": "metamorphic_relation", "relation": "same_actions", "transform": "t"},
                  {"type": "metamorphic_relation", "relation": "same_output", "transform": "t"}]
    return mm_suite(make_suite, [case(i) for i in IDS], [transform("t", minimum_validity=0.5)], evaluators,
                    labels={"t": judgements})


@pytest.mark.parametrize("c6", [None, True], ids=["c6-unlabeled", "c6-valid"])
def test_the_relation_and_the_run_read_a_hand_made_label_file_alike(make_suite: Callable[..., Path],
                                                                        tmp_path: Path, c6: bool | None) -> None:
    """One rule, two callers: the relation's ``label`` column and whether it scores a pair, and the Run's pair
    labels (``op.validity``, the copies its verdicts leave out), against the labels counted by hand. Unlabeled c6
    leaves the transform unchecked (every pair scored); c6 labeled valid makes 3 of 6 valid, checked at 0.5,
    so the three pairs labeled invalid (a tie among them, and a tie of anonymous judgements) leave the verdicts."""
    extra = [] if c6 is None else [{"case_id": "c6~t", "valid": c6, "labeler": "dee"}]
    run = op.run(_suite(make_suite, JUDGEMENTS + extra), out=tmp_path / "r", progress=False)
    hand = {**BY_HAND, **({} if c6 is None else {"c6~t": "valid"})}
    checked = c6 is not None
    # the Run's, and op.validity of the judgements given by hand (validity_table), by the same counts
    assert stored_pair_labels(run) == {"t": hand}
    valid = sum(1 for label in hand.values() if label == "valid")
    row = op.validity(run).iloc[0]
    assert (int(row.labeled), int(row.valid), bool(row.checked)) == (len(hand), valid, checked)
    t = run.config.metamorphic.transforms[0]
    given = validity_table([t], {"t": JUDGEMENTS + extra}, {"t": len(IDS)}).iloc[0]
    assert (int(given.labeled), int(given.valid), bool(given.checked)) == (len(hand), valid, checked)
    # the relation's, for each of its two criteria
    for criterion in ("same_actions_under_t", "same_output_under_t"):
        pairs = run.pairs[run.pairs["criterion"] == criterion]
        assert dict(zip(pairs["derived_id"], pairs["label"], strict=True)) == {f"{i}~t": hand.get(f"{i}~t", "")
                                                                              for i in IDS}
        scored = set(run.verdicts.loc[run.verdicts["criterion"] == criterion, "case_id"])
        assert scored == ({d for d, label in hand.items() if label == "valid"} if checked else
                          {f"{i}~t" for i in IDS})
    invalid = {d for d, label in hand.items() if label == "invalid"}
    assert run.unscored_ids == (invalid if checked else set())
    answered = set(run.verdicts.loc[run.verdicts["criterion"] == "answer_matches", "case_id"])
    assert answered.isdisjoint(run.unscored_ids) and len(answered) == 12 - len(run.unscored_ids)


def test_the_relation_works_the_majorities_out_once(make_suite: Callable[..., Path], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each relation once worked its transform's majorities out twice each time the frames were built
    (``transform_checked`` did, then ``pair_labels`` again for the label column). Counted, not timed: once per
    relation, with the same rows."""
    run = op.run(_suite(make_suite, [*JUDGEMENTS, {"case_id": "c6~t", "valid": True}]), out=tmp_path / "r",
                 progress=False)
    records = run.records
    before = frames.run_scope_rows(run.config, run.labels, records, run.manifest.n_cases)
    counted = core_labels.pair_labels
    calls: list[int] = []

    def counting(judgements: Any) -> Any:
        calls.append(1)
        return counted(judgements)

    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("oloproof_nb") and getattr(module, "pair_labels",
                                                                                 None) is counted:
            monkeypatch.setattr(module, "pair_labels", counting)
    after = frames.run_scope_rows(run.config, run.labels, records, run.manifest.n_cases)
    assert len(calls) == 2  # two relations, once each
    assert after == before
    assert sorted(r["case_id"] for r in after[0] if r["criterion"] == "same_actions_under_t") == [
        "c2~t", "c3~t", "c6~t"]
