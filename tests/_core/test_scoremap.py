"""The score mapping of Inspect AI score values, against the documented table."""

from __future__ import annotations

import math

import pytest

from oloproof_nb._core.scoremap import check_score_map, on_default_scale, reason_kind, score_verdict


@pytest.mark.parametrize(("value", "verdict"), [
    ("C", "pass"), ("I", "fail"), ("P", "fail"), ("N", "fail"), (" c ", "missing"),
    (True, "pass"), (False, "fail"), (1, "pass"), (1.0, "pass"), (0.999, "fail"), (0, "fail"),
    (2.5, "missing"), (-1, "missing"), (1e9, "missing"),
    (math.nan, "missing"), ("yes", "pass"), ("False", "fail"), ("maybe", "missing"), ({"a": 1}, "missing"),
    ([1], "missing"), (None, "missing"),
])
def test_default_table(value: object, verdict: str) -> None:
    assert score_verdict(value)[0] == verdict


def test_threshold_boundary_is_a_pass() -> None:
    assert score_verdict(0.5, pass_threshold=0.5)[0] == "pass"
    assert score_verdict(0.4999, pass_threshold=0.5)[0] == "fail"


def test_a_number_off_the_0_1_scale_needs_a_threshold() -> None:
    """A 1–10 rating of 2 passed at the default cut of 1; the scale's ends 0 and 1 are still scores."""
    assert score_verdict(2)[0] == "missing" and "pass_threshold=" in score_verdict(2)[1]
    assert (score_verdict(0)[0], score_verdict(1)[0], score_verdict(1.0000001)[0]) == ("fail", "pass", "missing")
    assert (score_verdict(7, pass_threshold=7)[0], score_verdict(6.99, pass_threshold=7)[0]) == ("pass", "fail")
    assert score_verdict(7, {7: "fail"})[0] == "fail"  # a mapping still decides first


def test_mapping_over_the_defaults_and_callable() -> None:
    assert score_verdict("P", {"P": "pass"})[0] == "pass"
    assert score_verdict("I", {"P": "pass"})[0] == "fail"  # the rest of the table still applies
    assert score_verdict("N", {"N": None})[0] == "missing"
    assert score_verdict({"a": 1}, lambda v: v["a"] == 1)[0] == "pass"
    assert score_verdict("C", lambda v: "nonsense")[0] == "missing"
    assert score_verdict("C")[1] == "" and score_verdict("I")[1] == "score 'I'"


def test_bad_map_refused() -> None:
    with pytest.raises(ValueError, match=r"score_map\['C'\]"):
        check_score_map({"C": "ok"})
    with pytest.raises(ValueError, match="mapping"):
        check_score_map(3)  # type: ignore[arg-type]


def test_a_score_too_long_to_print_is_quoted_not_raised() -> None:
    """An int score of 5,000 digits: repr raised ValueError (the 4,300-digit limit), math.isnan OverflowError."""
    huge = 10 ** 5000
    assert score_verdict(huge) == ("missing", f"score <int of {huge.bit_length()} bits> is not in [0, 1]; say which "
                                              "scores pass with pass_threshold= (--pass-threshold)")
    assert score_verdict(huge, pass_threshold=7) == ("pass", "")


def test_a_callable_score_map_is_called_once_per_score() -> None:
    """The reason of a score the map could not place called the user's map a second time to quote it."""
    calls: list[object] = []

    def unsure(score: object) -> object:
        calls.append(score)
        return "maybe"

    assert score_verdict("X", unsure) == ("missing", "score_map returned 'maybe' for score 'X'")
    assert calls == ["X"]


def test_nan_is_missing_as_no_score_and_on_no_scale() -> None:
    """NaN is no score: ``missing`` with its value as the reason, not "not in [0, 1]" (it is on no scale, so it
    does not make a criterion's other numbers missing either)."""
    assert score_verdict(math.nan) == ("missing", "score nan")
    assert on_default_scale(math.nan) is None


def test_a_reason_quotes_at_most_80_characters_of_the_score() -> None:
    """A 100-character string score: its repr cut to 80 characters (79 and …) in the reason."""
    reason = ("score '" + "x" * 78 + "… has no verdict; map it with score_map= in Python, "
              "op.from_inspect(path, score_map=…); the command line has none")
    assert score_verdict("x" * 100) == ("missing", reason)


def test_a_callable_score_map_that_fails_a_score_says_which() -> None:
    assert score_verdict("I", lambda v: False) == ("fail", "score 'I'")
    assert score_verdict("C", lambda v: True) == ("pass", "")


def test_a_score_map_key_meets_a_letter_code_written_with_space_or_in_lower_case() -> None:
    """A mapping's keys are compared as given and, for a string score, also stripped and upper-cased: {"P": "pass"}
    makes " p" pass, though the default table reads " p" as no letter code (Inspect counts it 0)."""
    assert score_verdict(" p", {"P": "pass"}) == ("pass", "")
    assert score_verdict("p\n", {"P": "pass"}) == ("pass", "")
    assert score_verdict(" p")[0] == "missing"


def test_a_number_the_score_map_decides_is_on_no_scale() -> None:
    """A score of 7 that ``score_map`` maps is judged by the map, not by the [0, 1] scale: it puts the criterion on
    no other scale (None), so its scores in [0, 1] keep their verdicts; an unmapped 7 is off the scale (False)."""
    assert on_default_scale(7, {7: "pass"}) is None
    assert on_default_scale(7, {8: "pass"}) is False
    assert on_default_scale(0.5, {7: "pass"}) is True


def test_text_that_spells_a_number_is_missing_unless_mapped() -> None:
    """README: Inspect's ``value_to_float`` reads ``"1.0"`` as 1.0; this table is stricter (other text, missing: never
    a pass), and ``score_map`` maps it."""
    assert [score_verdict(v)[0] for v in ("1.0", "7", "0.5")] == ["missing"] * 3
    assert score_verdict("1.0", {"1.0": "pass"})[0] == "pass"


def test_the_reasons_of_scores_without_a_verdict_are_one_kind_each_whatever_the_score() -> None:
    """A rating of 3 and one of 7, read without a pass_threshold, are missing for one reason; so are two texts no
    table reads, and two infinities. The kinds leave the score out, and differ from one another; a reason that is
    no score table's is its own kind."""
    kinds = [{reason_kind(score_verdict(value)[1]) for value in pair}
             for pair in ((3, 7), ("maybe", "perhaps"), (math.inf, -math.inf))]
    assert [len(kind) for kind in kinds] == [1, 1, 1] and len(set.union(*kinds)) == 3
    assert all(kind.startswith("score … ") for kind in set.union(*kinds))
    assert reason_kind("the scorer gave no score") == "the scorer gave no score"
    assert reason_kind("score 'I'") == "score 'I'"


@pytest.mark.parametrize("reason", ["scored is not a finite number, so no score",
                                    "score  is not a finite number, so no score",
                                    "scorecard has no verdict; map it with score_map= in Python, "
                                    "op.from_inspect(path, score_map=…); the command line has none"])
def test_a_reason_that_names_no_score_is_its_own_kind(reason: str) -> None:
    """Only ``score <value>`` and the text after it make a score's kind: a reason with no value between them, or a
    word that merely begins with ``score``, is kept as it is."""
    assert reason_kind(reason) == reason


def test_a_numpy_bool_from_a_score_map_is_a_verdict() -> None:
    """A ``score_map`` function or mapping gives a bool as a verdict; NumPy's bool is one too (what
    ``np.isclose(value, 1)`` returns). Before, each was ``missing`` ("score_map returned np.True_ for score 1.0"),
    and a mapping of one was refused as no verdict."""
    import numpy as np

    close = lambda value: np.isclose(value, 1.0)  # noqa: E731 - a user's score_map
    assert score_verdict(1.0, close) == ("pass", "")
    assert score_verdict(0.25, close) == ("fail", "score 0.25")
    check_score_map({"C": np.True_, "I": np.False_})
    assert score_verdict("I", {"C": np.True_, "I": np.False_}) == ("fail", "score 'I'")
    assert score_verdict(1.0, lambda value: np.int64(1))[0] == "missing"  # a number is still no verdict
