"""The score mapping of Inspect AI score values, against the documented table."""

from __future__ import annotations

import math

import pytest

from oloproof_nb._core.scoremap import check_score_map, score_verdict


@pytest.mark.parametrize(("value", "verdict"), [
    ("C", "pass"), ("I", "fail"), ("P", "fail"), ("N", "fail"), (" c ", "missing"),
    (True, "pass"), (False, "fail"), (1, "pass"), (1.0, "pass"), (0.999, "fail"), (0, "fail"), (2.5, "pass"),
    (math.nan, "missing"), ("yes", "pass"), ("False", "fail"), ("maybe", "missing"), ({"a": 1}, "missing"),
    ([1], "missing"), (None, "missing"),
])
def test_default_table(value: object, verdict: str) -> None:
    assert score_verdict(value)[0] == verdict


def test_threshold_boundary_is_a_pass() -> None:
    assert score_verdict(0.5, pass_threshold=0.5)[0] == "pass"
    assert score_verdict(0.4999, pass_threshold=0.5)[0] == "fail"


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
