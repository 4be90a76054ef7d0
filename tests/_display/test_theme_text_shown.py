"""``_display/theme.py``: a text the run wrote is shown up to 2,000 characters in a table or panel for the eye."""

from __future__ import annotations

from oloproof_nb._display.theme import fmt_text


def test_a_text_of_2000_characters_is_shown_whole_and_one_longer_is_cut_to_2000() -> None:
    assert fmt_text("x" * 2000) == "x" * 2000
    assert fmt_text("x" * 1999 + "yz") == "x" * 1999 + "…"
    assert len(fmt_text("r" * 1_000_000)) == 2000
