"""oloproof_nb._display.theme.contrast: two values shown side by side differ where the values do."""

from __future__ import annotations

import pytest

from oloproof_nb import ABSENT
from oloproof_nb._display.theme import contrast, preview

NOTE = "Refund issued for order ord-1 under the 30-day return policy, clause 4.2("


def test_two_texts_that_differ_past_the_cut_are_shown_from_their_difference() -> None:
    """The JSON texts are ``"`` + NOTE + ``b)"`` and ``c)"``: 77 characters that first differ at index 74 (the
    opening quote, then the 73 characters of NOTE). A cut at 60 keeps 59 of them, equal on both sides."""
    expected, actual = NOTE + "b)", NOTE + "c)"
    assert len(NOTE) == 73 and preview(expected, 60) == preview(actual, 60)
    shown = contrast(expected, actual, 60), contrast(actual, expected, 60)
    # from index 77 - 59 = 18 (the longer text's last 59 characters, after an ellipsis): 60 characters each
    assert shown == ("…" + ('"' + expected + '"')[18:], "…" + ('"' + actual + '"')[18:])
    assert [len(s) for s in shown] == [60, 60] and shown[0][-3:] == 'b)"' and shown[1][-3:] == 'c)"'


def test_a_difference_in_the_middle_keeps_context_on_both_sides() -> None:
    """Texts of 1 + 30 + 1 + 100 + 1 characters that differ at index 31; with a cut at 20 the window starts
    (20 - 2) * 2 // 3 = 12 characters before it (index 19) and holds 18 characters between its two ellipses."""
    a, b = "x" * 30 + "A" + "y" * 100, "x" * 30 + "B" + "y" * 100
    assert contrast(a, b, 20) == "…" + "x" * 12 + "A" + "y" * 5 + "…"
    assert contrast(b, a, 20) == "…" + "x" * 12 + "B" + "y" * 5 + "…"


def test_an_object_that_differs_in_a_late_key_is_shown_at_that_key() -> None:
    expected, actual = {"memo": "m" * 80, "total": 10}, {"memo": "m" * 80, "total": 12}
    assert preview(expected, 40) == preview(actual, 40)
    assert contrast(expected, actual, 40).endswith('"total": 10}')
    assert contrast(actual, expected, 40).endswith('"total": 12}')


@pytest.mark.parametrize(("value", "other"), [("a", "b"), (1, 1.0), ("x" * 100, "x" * 100), (ABSENT, "x" * 100),
                                              ("x" * 100, ABSENT), ([1, 2], [1, 2, 3]), ("x" * 10, "x" * 20),
                                              ("x" * 20, "x" * 10)])
def test_values_whose_previews_differ_or_whose_texts_are_equal_are_shown_as_preview_shows_them(value: object,
                                                                                              other: object) -> None:
    assert contrast(value, other, 12) == preview(value, 12)


def test_each_value_is_written_once_a_contrast(monkeypatch: pytest.MonkeyPatch) -> None:
    """A panel row shows two contrasts of values that may be megabytes of text: each wrote both values twice (as a
    preview, then again for the window), eight ``json.dumps`` a row where four do."""
    import json

    written: list[object] = []
    real = json.dumps

    def counted(value: object, **kwargs: object) -> str:
        written.append(value)
        return real(value, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(json, "dumps", counted)
    a, b = "x" * 1000 + "A", "x" * 1000 + "B"
    assert (contrast(a, b, 12), contrast(b, a, 12)) == ('…xxxxxxxxxA"', '…xxxxxxxxxB"')
    assert written == [a, b, b, a]


@pytest.mark.parametrize(("text", "peer", "at"), [("", "", 0), ("abc", "abc", 3), ("abc", "abd", 2), ("abc", "ab", 2),
                                                  ("b", "a", 0), ("x" * 999 + "y", "x" * 1000, 999)])
def test_the_first_difference_is_found_by_its_index(text: str, peer: str, at: int) -> None:
    from oloproof_nb._display.theme import _first_difference

    assert _first_difference(text, peer) == _first_difference(peer, text) == at


def test_a_text_that_fits_beside_a_longer_one_is_shown_whole() -> None:
    """``"x" * 10`` is 12 characters as JSON, as many as the cut at 12 keeps: shown whole, though its text and the
    longer one's first differ at index 11 (its closing quote), the last the other's preview keeps."""
    assert contrast("x" * 10, "x" * 20, 12) == '"' + "x" * 10 + '"'
    assert contrast("x" * 20, "x" * 10, 12) == '"' + "x" * 10 + "…"


def test_two_texts_that_differ_at_the_first_character_the_cut_drops_are_shown_from_their_difference() -> None:
    """The JSON texts first differ at index 11 (the opening quote and ten ``x``), the first character a cut at 12
    drops: both previews read ``"xxxxxxxxxx…``. The window starts (12 - 2) * 2 // 3 = 6 characters before it."""
    a, b = "x" * 10 + "A" + "y" * 20, "x" * 10 + "B" + "y" * 20
    assert preview(a, 12) == preview(b, 12)
    assert contrast(a, b, 12) == "…" + "x" * 6 + "A" + "y" * 3 + "…"
    assert contrast(b, a, 12) == "…" + "x" * 6 + "B" + "y" * 3 + "…"
