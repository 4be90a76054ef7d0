"""``_core/scoremap.py``: the edges of the documented table no other test pinned."""

from __future__ import annotations

from oloproof_nb._core.scoremap import score_verdict


def test_a_bool_score_is_pass_or_fail_whatever_the_threshold() -> None:
    """The table: ``True`` / ``False`` are pass / fail, not the numbers 1 and 0. Read as numbers, True failed a
    threshold of 2 (1 < 2) and False passed a threshold of 0 (0 >= 0)."""
    assert score_verdict(True, pass_threshold=2) == ("pass", "")
    assert score_verdict(False, pass_threshold=0) == ("fail", "score False")
    assert score_verdict(True, pass_threshold=0.5) == ("pass", "")  # and within [0, 1] as before
