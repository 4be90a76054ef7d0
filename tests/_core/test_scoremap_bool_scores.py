"""``_core/scoremap.py``: the edges of the documented table no other test pinned."""

from __future__ import annotations

import pytest

from oloproof_nb._core.scoremap import score_verdict


def test_a_bool_score_is_pass_or_fail_whatever_the_threshold() -> None:
    """The table: ``True`` / ``False`` are pass / fail, not the numbers 1 and 0. Read as numbers, True failed a
    threshold of 2 (1 < 2) and False passed a threshold of 0 (0 >= 0)."""
    assert score_verdict(True, pass_threshold=2) == ("pass", "")
    assert score_verdict(False, pass_threshold=0) == ("fail", "score False")
    assert score_verdict(True, pass_threshold=0.5) == ("pass", "")  # and within [0, 1] as before


def test_a_score_map_keeps_bools_and_numbers_apart() -> None:
    """Python's dict finds ``True`` under ``1``: ``{1: "fail"}``, written for a rating's 1, failed every ``True`` score,
    which the table passes, and ``{True: "fail"}`` failed a 1, full marks on the [0, 1] scale."""
    ratings = {1: "fail", 0: "missing"}
    assert score_verdict(True, ratings) == ("pass", "")
    assert score_verdict(False, ratings) == ("fail", "score False")
    assert score_verdict(1, ratings) == ("fail", "score 1")
    assert score_verdict(1.0, ratings) == ("fail", "score 1.0")  # a number key matches the equal float
    bools = {True: "fail"}
    assert score_verdict(True, bools) == ("fail", "score True")
    assert score_verdict(1, bools)[0] == "pass"  # the table: full marks on the [0, 1] scale
    assert score_verdict(5, bools)[0] == "missing"


def test_a_score_map_keeps_numpy_bools_with_bools() -> None:
    np = pytest.importorskip("numpy")
    assert score_verdict(np.True_, {True: "fail"})[0] == "fail"
    assert score_verdict(np.True_, {1: "fail"}) == score_verdict(np.True_)  # the map says nothing of it
    assert score_verdict(np.int64(1), {1: "fail"})[0] == "fail"


def test_a_score_map_holding_another_bool_says_nothing_of_a_bool_it_finds_under_a_number() -> None:
    """``{1: "fail", False: "fail"}``: ``True`` is found under ``1``, and the map's one bool is ``False``, which is not
    ``True``: the table passes it."""
    mixed = {1: "fail", False: "fail"}
    assert score_verdict(True, mixed) == ("pass", "")
    assert score_verdict(False, mixed) == ("fail", "score False")
    assert score_verdict(1, mixed) == ("fail", "score 1")
