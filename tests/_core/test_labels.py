"""Which derived copies no criterion scores (``invalid_copies``), one judgement line, a validity row: hand counts."""

from __future__ import annotations

from typing import Any

import pytest

from oloproof_nb._core.labels import Label, invalid_copies, pair_labels, parse_judgement, validity_row


def _pairs(labels: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Label]]:
    """Each transform's pair labels, as a Run gives them to ``invalid_copies``."""
    return {name: pair_labels(judgements) for name, judgements in labels.items()}


def test_a_copy_is_left_out_only_when_every_pair_of_its_transform_is_labeled() -> None:
    """5 copies, 4 labeled: 3 valid and d~t invalid. Counted over the 5 copies the valid share is 3/5 = 0.6, at the
    minimum, but one pair is unlabeled, so the transform is not checked (as ``op.validity`` says: coverage 0.8)
    and its labels decide nothing: every copy is scored. Labeling e~t valid makes 4 of 5 valid and leaves d~t out."""
    judgements = [{"case_id": "a~t", "valid": True}, {"case_id": "b~t", "valid": True},
                  {"case_id": "c~t", "valid": True}, {"case_id": "d~t", "valid": False}]
    assert invalid_copies(_pairs({"t": judgements}), {"t": 0.6}, 5) == frozenset()
    assert invalid_copies(_pairs({"t": [*judgements, {"case_id": "e~t", "valid": True}]}), {"t": 0.6}, 5) == {"d~t"}


def test_labels_of_a_transform_not_declared_are_ignored_and_no_copies_check_nothing() -> None:
    """The labels of a transform the suite no longer declares decide nothing (and do not need a minimum); a
    transform with no copy has no labeled share to check (0 of 0 is no rate)."""
    gone = [{"case_id": "a~gone", "valid": False}, {"case_id": "b~gone", "valid": True}]
    labels = {"gone": gone, "t": [{"case_id": "a~t", "valid": False}, {"case_id": "b~t", "valid": True}]}
    assert invalid_copies(_pairs(labels), {"t": 0.5}, 2) == {"a~t"}  # 1 of 2 valid, at the minimum; a~gone: no copy
    assert invalid_copies({"t": {}}, {"t": 0.0}, 0) == frozenset()


def test_a_judgement_is_checked_against_an_empty_set_of_derived_ids() -> None:
    """known_ids given but empty (a transform with no derived case in the suite): every id is refused, as None
    accepts every id."""
    with pytest.raises(ValueError, match="case id 'a~t' is not a derived case of transform 't' of this suite"):
        parse_judgement({"case_id": "a~t", "valid": True}, known_ids=set(), transform="t")


@pytest.mark.parametrize(("case_id", "clause"), [
    # the copy of a source the case file no longer holds: the id has the form '<source id>~<transform>'
    ("c9~t", "; the suite has no case 'c9' for it to copy (a case removed or renamed since it was labeled? take its "
             "line out)"),
    ("a~b~t", "; the suite has no case 'a~b' for it to copy (a case removed or renamed since it was labeled? take "
              "its line out)"),
    # the source case's own id, and the same source's copy under another transform
    ("c1", "; 'c1' is the source case: its copy under transform 't' is 'c1~t'"),
    ("c2~u", "; it names case 'c2' under transform 'u', not 't': this file judges the copies of 't' ('c2~t'); a copy "
             "of another transform is judged in that transform's own label file"),
    # a copy's id with the transform's name appended twice: the copy is in the suite, no case is its source
    ("c1~t~t", "; 'c1~t' is a copy already, and no copy is copied again: judge it as 'c1~t'"),
    ("c1~t~u", "; 'c1~t' is a copy already, and no copy is copied again: judge it as 'c1~t'"),
    # nothing the suite can tell: the form of a label id
    ("zz", "; label ids are '<source id>~<transform>' (e.g. 'c1~t')"),
    ("~t", "; label ids are '<source id>~<transform>' (e.g. 'c1~t')"),
    ("c9~u", "; label ids are '<source id>~<transform>' (e.g. 'c1~t')"),  # another transform's, of no case
])
def test_an_id_no_copy_of_the_transform_has_is_refused_saying_what_it_is(case_id: str, clause: str) -> None:
    """A judgement of no copy of transform ``t`` (copies ``c1~t``, ``c2~t``) is refused with what its id is, as far
    as the copies tell: a copy of a case taken out of the case file since (its id has the form of a label id, so
    the form alone said nothing), the source case itself, a copy's id with the transform's name twice, or the copy
    of another transform."""
    with pytest.raises(ValueError) as info:
        parse_judgement({"case_id": case_id, "valid": True}, known_ids={"c1~t", "c2~t"}, transform="t")
    assert str(info.value) == f"case id {case_id!r} is not a derived case of transform 't' of this suite{clause}"


def test_a_null_labeler_reads_as_no_labeler() -> None:
    # "labeler": null is allowed (as "note": null) and stored as "", never None
    assert parse_judgement({"case_id": "a~t", "valid": False, "labeler": None}) == {
        "case_id": "a~t", "valid": False, "labeler": "", "note": ""}


def test_validity_row_defaults_to_a_95_percent_wilson_interval() -> None:
    """1 of 2 labeled pairs valid: the interval is statsmodels' 95% Wilson interval of 1 in 2 when no confidence is
    given."""
    from statsmodels.stats.proportion import proportion_confint

    row = validity_row([{"case_id": "a~t", "valid": True}, {"case_id": "b~t", "valid": False}], 2, 0.5)
    low, high = proportion_confint(1, 2, alpha=0.05, method="wilson")
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_invalid_copies_of_every_checked_transform_are_left_out() -> None:
    """Two checked transforms (each 1 of 2 valid, at the minimum 0.5): the invalid copy of each is left out, not only
    the last transform's."""
    labels = {"t": [{"case_id": "a~t", "valid": False}, {"case_id": "b~t", "valid": True}],
              "u": [{"case_id": "a~u", "valid": True}, {"case_id": "b~u", "valid": False}]}
    assert invalid_copies(_pairs(labels), {"t": 0.5, "u": 0.5}, 2) == {"a~t", "b~u"}


@pytest.mark.parametrize("votes", [(), (True,), (False,), (True, False), (False, True), (True, True, False),
                                   (True, False, False), (True, True, False, False), (True, True, True, False, False)])
def test_one_pair_and_many_pairs_take_one_majority(votes: tuple[bool, ...]) -> None:
    """``pair_label`` (one pair) and ``pair_labels`` (by id) apply one rule: valid with more valid
    than invalid judgements, invalid with at least as many invalid (a tie), nothing without judgements."""
    from oloproof_nb._core.labels import pair_label, pair_labels

    yes, no = sum(votes), len(votes) - sum(votes)  # by hand
    expected = "" if not votes else ("valid" if yes > no else "invalid")
    judgements = [{"case_id": "a~t", "valid": v} for v in votes]
    assert pair_label(judgements) == expected
    assert pair_labels(judgements) == ({"a~t": expected} if votes else {})


def test_an_id_refused_where_no_transform_is_named_names_none() -> None:
    """A judgement parsed without a transform's name is refused without one: there is none to give."""
    with pytest.raises(ValueError) as info:
        parse_judgement({"case_id": "zz", "valid": True}, known_ids={"c1~t"})
    assert str(info.value).startswith("case id 'zz' is not a derived case of this suite; ")
