"""How two runs' validity labels differ: a pair labeled in both, otherwise; a pair judged on one side only, said
so, each side named by the words given for it (``a`` first). Expectations written by hand."""

from __future__ import annotations

from oloproof_nb._analysis.run_checks import label_difference


def test_a_pair_labeled_in_both_otherwise() -> None:
    assert label_difference({"t": {"c1~t": "valid"}}, {"t": {"c1~t": "invalid"}}, ("in A", "in B")) == (
        "transform t: c1~t is labeled otherwise")


def test_a_pair_labeled_on_the_first_side_only() -> None:
    assert label_difference({"t": {"c1~t": "invalid"}}, {"t": {}}, ("in A", "in B")) == (
        "transform t: c1~t is labeled invalid in A and not labeled in B")


def test_a_pair_labeled_on_the_second_side_only() -> None:
    assert label_difference({"t": {"c2~t": "valid"}}, {"t": {"c1~t": "valid", "c2~t": "valid"}},
                            ("in A", "in B")) == "transform t: c1~t is not labeled in A and labeled valid in B"


def test_a_transform_on_one_side_only_and_the_default_words() -> None:
    assert label_difference({}, {"u": {"c3~u": "invalid"}}) == (
        "transform u: c3~u is not labeled in one and labeled invalid in the other")


def test_the_same_labels_differ_nowhere() -> None:
    assert label_difference({"t": {"c1~t": "valid"}}, {"t": {"c1~t": "valid"}}, ("in A", "in B")) == ""
