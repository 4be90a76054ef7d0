"""Which derived copies no criterion scores (``invalid_copies``), from hand-counted labels."""

from __future__ import annotations

from oloproof_nb._core.labels import invalid_copies


def test_a_copy_is_left_out_only_when_every_pair_of_its_transform_is_labelled() -> None:
    """5 copies, 4 labelled: 3 valid and d~t invalid. Counted over the 5 copies the valid share is 3/5 = 0.6, at the
    minimum, but one pair is unlabelled, so the transform is not checked (as ``op.validity`` says: coverage 0.8)
    and its labels decide nothing: every copy is scored. Labelling e~t valid makes 4 of 5 valid and leaves d~t out."""
    judgements = [{"case_id": "a~t", "valid": True}, {"case_id": "b~t", "valid": True},
                  {"case_id": "c~t", "valid": True}, {"case_id": "d~t", "valid": False}]
    assert invalid_copies({"t": judgements}, {"t": 0.6}, 5) == frozenset()
    assert invalid_copies({"t": [*judgements, {"case_id": "e~t", "valid": True}]}, {"t": 0.6}, 5) == {"d~t"}


def test_labels_of_a_transform_not_declared_are_ignored_and_no_copies_check_nothing() -> None:
    """The labels of a transform the suite no longer declares decide nothing (and do not need a minimum); a
    transform with no copy has no labelled share to check (0 of 0 is no rate)."""
    gone = [{"case_id": "a~gone", "valid": False}, {"case_id": "b~gone", "valid": True}]
    labels = {"gone": gone, "t": [{"case_id": "a~t", "valid": False}, {"case_id": "b~t", "valid": True}]}
    assert invalid_copies(labels, {"t": 0.5}, 2) == {"a~t"}  # 1 of 2 valid, at the minimum 0.5; a~gone is no copy
    assert invalid_copies({"t": []}, {"t": 0.0}, 0) == frozenset()
