"""The validity check at its edge, and what a labeler can move.

Numbers are counted by hand and checked against statsmodels (Wilson) and SciPy (Clopper–Pearson), not against the
code's own output. The suite: 20 source cases of ``DIRECTED``; the transform appends ``"er now"`` to the message, so
the copies of c05, c11 and c17 (whose message ends ``"!answ"``) read ``"!answer"`` and answer otherwise: those 3
copies fail ``answer_matches`` and break ``same_output``, the other 17 copies pass and hold.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from _metamorphic_systems import case, mm_suite
from scipy.stats import beta
from statsmodels.stats.proportion import proportion_confint

import oloproof_nb as op
from oloproof_nb._analysis.run_checks import validity_check_difference
from oloproof_nb._analysis.validity import unchecked_reasons
from oloproof_nb._config.suite_config import parse_suite_config
from oloproof_nb._config.vacuity import thin_validity
from oloproof_nb._core.labels import invalid_copies, pair_labels, transform_checked, validity_row

FAILING = ("c05", "c11", "c17")
SOURCES = [f"c{i:02d}" for i in range(20)]
RELATION = "same_output_under_t"


def _labels(invalid: set[str], labeler: str = "lab") -> list[dict[str, Any]]:
    return [{"case_id": f"{s}~t", "valid": s not in invalid, "labeler": labeler} for s in SOURCES]


def _suite(make_suite: Callable[..., Path], minimum: float, invalid: set[str]) -> Path:
    cases = [case(s, "please mark it !answ" if s in FAILING else "please mark it") for s in SOURCES]
    t = {"name": "t", "field": "message", "template": "{value}er now", "validity_labels": "labels/t.jsonl",
         "minimum_validity": minimum}
    evaluators = [{"type": "answer_matches"}, {"type": "metamorphic_relation", "relation": "same_output",
                                               "transform": "t"}]
    release = {"allow_approximate_methods": True, "min_clusters": 5,
               "criteria": {"answer_matches": 0.85, RELATION: 0.8}}
    return mm_suite(make_suite, cases, [t], evaluators, {"t": _labels(invalid)}, release=release)


def _run(root: Path, out: Path) -> op.Run:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a vacuous finding at minimum_validity 0 is not what these tests read
        return op.run(op.load_suite(root), out=out, progress=False)


def _gate_row(run: op.Run, criterion: str) -> Any:
    return op.gate(run).table.set_index("criterion").loc[criterion]


def test_a_share_exactly_at_minimum_validity_checks_the_transform(make_suite: Callable[..., Path],
                                                                  tmp_path: Path) -> None:
    """DESIGN: checked when the validity rate (the point estimate valid / labeled) is at least minimum_validity.
    17 of 20 valid is 0.85 exactly: checked at 0.85, though its Wilson interval reaches down to 0.64; 16 of 20 is
    not. So the labels may leave out 3 of the 20 copies at 0.85 (20 − ⌈0.85 × 20⌉ = 3), not 4."""
    exact = _run(_suite(make_suite, 0.85, set(FAILING)), tmp_path / "exact")
    row = op.validity(exact).iloc[0]
    low, high = proportion_confint(17, 20, alpha=0.05, method="wilson")
    assert (row.derived, row.labeled, row.valid, row.coverage, row.rate) == (20, 20, 17, 1.0, 17 / 20)
    assert row.ci_low == pytest.approx(low, abs=1e-12) and row.ci_high == pytest.approx(high, abs=1e-12)
    assert bool(row.checked) and row.ci_low < 0.85  # the point rate decides, not the interval's low end
    assert op.gate(exact).unscored == ("c05~t", "c11~t", "c17~t")

    one_more = _run(_suite(make_suite, 0.85, {*FAILING, "c00"}), tmp_path / "one_more")
    row = op.validity(one_more).iloc[0]
    assert (row.valid, row.rate, bool(row.checked)) == (16, 16 / 20, False)
    assert op.gate(one_more).unscored == ()  # labels of an unchecked transform leave out nothing
    assert _gate_row(one_more, RELATION)["reason"].startswith("transform_not_checked")
    assert _gate_row(one_more, "answer_matches")[["n", "passed"]].tolist() == [40, 37]  # 20 + 20 copies, 3 fail


def test_the_labeler_who_marks_exactly_the_failing_copies_moves_the_gate_and_the_gate_names_them(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """What a labeler can move within the share minimum_validity allows. Every copy labeled valid: the relation
    holds 17 of 20 pairs (INSUFFICIENT_EVIDENCE at 0.8) and answer_matches passes 37 of 40 rows. The 3 failing
    copies labeled invalid instead (17 of 20 valid = 0.85, checked): the relation is 17 of 17 and PASSes (its low
    end the Clopper–Pearson bound 0.025^(1/17) = 0.8049 of a run whose every row passes), and answer_matches is
    37 of 37. The gate says which copies it left out, and that all 3 broke their pair (before, only
    their names; a mutant counting every copy left out, or none, is caught by the honest/mixed labels below)."""
    honest = _run(_suite(make_suite, 0.85, set()), tmp_path / "honest")
    assert op.gate(honest).unscored == ()
    relation = _gate_row(honest, RELATION)
    assert relation[["n", "passed", "verdict"]].tolist() == [20, 17, "INSUFFICIENT_EVIDENCE"]
    assert _gate_row(honest, "answer_matches")[["n", "passed"]].tolist() == [40, 37]

    moved = _run(_suite(make_suite, 0.85, set(FAILING)), tmp_path / "moved")
    relation = _gate_row(moved, RELATION)
    assert relation[["n", "passed", "verdict"]].tolist() == [17, 17, "PASS"]
    assert relation["ci_low"] == pytest.approx(beta.ppf(0.025, 17, 1), abs=1e-9) == pytest.approx(0.025 ** (1 / 17))
    assert _gate_row(moved, "answer_matches")[["n", "passed"]].tolist() == [37, 37]
    pairs = moved.pairs.set_index("derived_id")
    assert pairs.loc[["c05~t", "c11~t", "c17~t"], "holds"].tolist() == [False] * 3  # still shown in run.pairs
    gate = op.gate(moved)
    assert gate.unscored == gate.unscored_broken == ("c05~t", "c11~t", "c17~t")
    assert repr(gate).count("3 of them broke their pair, so the verdict leans on their labels") == 1
    # two failing copies and one that held labeled invalid: 2 of the 3 left out broke their pair (a hand count)
    mixed = op.gate(_run(_suite(make_suite, 0.85, {"c05", "c11", "c02"}), tmp_path / "mixed"))
    assert (mixed.unscored, mixed.unscored_broken) == (("c02~t", "c05~t", "c11~t"), ("c05~t", "c11~t"))
    assert "2 of them broke their pair, so the verdict leans on their labels" in repr(mixed)


def test_the_checked_rule_is_the_point_rate_against_the_minimum_for_every_share_counted_by_hand() -> None:
    """For every v of n ≤ 40 and every minimum written with up to 3 decimals, checked is exactly v/n ≥ minimum as
    fractions (no float rounding either way), and the interval is statsmodels' Wilson interval."""
    minimums = [f"{k / 1000:.3f}" for k in range(0, 1001, 5)]  # as a user writes them: 0.000, 0.005, …, 0.850, …
    for n in range(1, 41):
        for v in range(n + 1):
            js = [{"case_id": f"c{i}~t", "valid": i < v} for i in range(n)]
            row = validity_row(js, n, 0.5)
            low, high = proportion_confint(v, n, alpha=0.05, method="wilson")
            assert row["ci_low"] == pytest.approx(low, abs=1e-12) and row["ci_high"] == pytest.approx(high, abs=1e-12)
            for written in minimums:
                exact = Fraction(v, n) >= Fraction(written)
                assert transform_checked(js, n, float(written)) is exact, (v, n, written)


def test_a_tie_and_a_missing_pair_at_the_edge() -> None:
    """20 pairs at 0.85: 17 valid, 2 invalid and a tie (1 to 1, invalid) is 17 of 20, checked, and leaves out 3
    copies, the tie among them; one pair without a judgement instead of the tie is coverage 19 of 20, not checked."""
    js = [{"case_id": f"c{i}~t", "valid": i < 17, "labeler": "a"} for i in range(19)]
    tie = [{"case_id": "c19~t", "valid": True, "labeler": "a"}, {"case_id": "c19~t", "valid": False, "labeler": "b"}]
    assert sorted(invalid_copies({"t": pair_labels(js + tie)}, {"t": 0.85}, 20)) == ["c17~t", "c18~t", "c19~t"]
    assert invalid_copies({"t": pair_labels(js)}, {"t": 0.85}, 20) == frozenset()
    row = validity_row(js, 20, 0.85)
    assert (row["labeled"], row["valid"], row["coverage"], row["checked"]) == (19, 17, 19 / 20, False)


@pytest.mark.parametrize("minimum", [0.0, 1.0])
def test_minimum_validity_zero_and_one(minimum: float) -> None:
    """At 0 the labels may leave out every copy (checked with none valid); at 1 they leave out none (any invalid
    pair, a tie included, keeps the transform unchecked)."""
    none_valid = [{"case_id": f"c{i}~t", "valid": False} for i in range(4)]
    all_but_tie = [{"case_id": f"c{i}~t", "valid": True} for i in range(3)]
    all_but_tie += [{"case_id": "c3~t", "valid": True, "labeler": "a"}, {"case_id": "c3~t", "valid": False}]
    left_out = invalid_copies({"t": pair_labels(none_valid)}, {"t": minimum}, 4)
    assert len(left_out) == (4 if minimum == 0 else 0)
    assert transform_checked(all_but_tie, 4, minimum) is (minimum == 0)


def _stated(text: str) -> Fraction:
    """The number a message shows after ``minimum_validity``."""
    return Fraction(text.split("minimum_validity ")[1].split()[0].rstrip(",;"))


def test_an_unchecked_reason_shows_the_minimum_with_every_digit(make_suite: Callable[..., Path],
                                                                tmp_path: Path) -> None:
    """minimum_validity 0.8500001 and 17 of 20 valid (0.85): not checked, rightly, but the reason said "17 of its
    20 pairs are labeled valid, a share below its minimum_validity 0.85" (six significant digits), a share equal to
    the number it named. The minimum is written with every digit it has, as the gate table writes it."""
    run = _run(_suite(make_suite, 0.8500001, set(FAILING)), tmp_path / "r")
    why = unchecked_reasons(run)["t"]
    assert why == "17 of its 20 pairs are labeled valid, a share below its minimum_validity 0.8500001"
    assert Fraction(17, 20) < _stated(why)


def test_one_valid_pair_is_said_in_the_singular(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    run = _run(_suite(make_suite, 0.85, set(SOURCES) - {"c00"}), tmp_path / "r")
    assert unchecked_reasons(run)["t"] == ("1 of its 20 pairs is labeled valid, a share below its minimum_validity "
                                           "0.85")


def test_pooling_refused_for_another_minimum_names_two_numbers_that_differ(make_suite: Callable[..., Path],
                                                                           tmp_path: Path) -> None:
    """The same labels (17 of 20 valid) checked at 0.85 in one run and at 0.8500001 in the other: the first leaves
    out 3 copies, the second none, so op.load_runs refuses them, but said "minimum_validity 0.85, not 0.85"."""
    root = _suite(make_suite, 0.85, set(FAILING))
    a = _run(root, tmp_path / "a")
    suite_file = root / "oloproof.yaml"
    suite_file.write_text(suite_file.read_text(encoding="utf-8").replace("minimum_validity: 0.85",
                                                                         "minimum_validity: 0.8500001"),
                          encoding="utf-8")
    b = _run(root, tmp_path / "b")
    assert validity_check_difference(a, b) == "transform t: minimum_validity 0.8500001, not 0.85"
    with pytest.raises(op.OloproofError, match=r"minimum_validity 0\.8500001, not 0\.85: 3 scored in one"):
        op.load_runs([a.directory, b.directory])


def test_the_load_finding_of_a_thin_minimum_shows_it_with_every_digit() -> None:
    """0.04166666 of 24 pairs is met once 1 is labeled valid (1/24 = 0.041666…), and the finding said so of
    "minimum_validity 0.0416667", a minimum 1 of 24 does not meet."""
    body = {"name": "s", "system": "m:S", "cases": "cases.jsonl",
            "evaluators": [{"type": "metamorphic_relation", "relation": "same_state", "transform": "t"}],
            "metamorphic": {"transforms": [{"name": "t", "field": "message", "template": "{value} x",
                                            "validity_labels": "labels/t.jsonl", "minimum_validity": 0.04166666}]}}
    finding = thin_validity(parse_suite_config(body), 24)["same_state_under_t"]
    assert "minimum_validity 0.04166666 is met once 1 of its 24 pairs labeled valid" in finding
    assert Fraction(1, 24) >= _stated(finding)


def test_labels_written_as_the_suite_reads_them(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The labels of the hand-counted suite as a file: a byte-order mark, CRLF ends and blank lines change no
    count (20 labeled, 17 valid, checked)."""
    root = _suite(make_suite, 0.85, set(FAILING))
    lines = [json.dumps(j) for j in _labels(set(FAILING))]
    (root / "labels" / "t.jsonl").write_bytes(b"\xef\xbb\xbf" + "\r\n\r\n".join(lines).encode() + b"\r\n")
    row = op.validity(_run(root, tmp_path / "r")).iloc[0]
    assert (row.labeled, row.valid, bool(row.checked), math.isclose(row.rate, 0.85)) == (20, 17, True, True)
