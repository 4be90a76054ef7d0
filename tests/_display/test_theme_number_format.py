"""The number format for the eye (``_display/theme``): each expected text is Python's own ``format``/``repr`` of the
value or a hand count, never the module's output."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from oloproof_nb._display.theme import fmt_bound, fmt_cell, fmt_interval, fmt_level, fmt_number, fmt_threshold


@pytest.mark.parametrize("confidence", [0.9999999, 0.99999999, 0.999999999])
def test_a_level_of_seven_nines_or_more_is_not_shown_as_100_percent(confidence: float) -> None:
    """Six significant digits showed 0.9999999 as ``100%``: a level no interval has (release.yaml allows < 1)."""
    shown = fmt_level(confidence)
    assert shown != "100%"
    assert Decimal(shown.removesuffix("%")) == Decimal(repr(confidence)) * 100


@pytest.mark.parametrize(("confidence", "text"),
                         [(0.95, "95%"), (0.995, "99.5%"), (0.5, "50%"), (np.float64(0.9), "90%")])
def test_a_level_keeps_whole_percents_whole(confidence: float, text: str) -> None:
    assert fmt_level(confidence) == text


@pytest.mark.parametrize("value", [False, np.bool_(False)])
def test_a_false_flag_is_a_blank_cell(value: object) -> None:
    """A flag shows ``yes`` when set and nothing when not (a False ``few_clusters`` is no "yes")."""
    assert fmt_number(value) == ""
    assert fmt_number(not value) == "yes"


def test_a_threshold_a_ten_thousandth_off_a_thousandth_keeps_every_digit() -> None:
    """0.8500001 is the user's number: shown as ``0.850`` it reads as 0.85 (a tolerance near a thousandth's
    noise, not 1e-4, decides it is a whole thousandth)."""
    assert fmt_threshold(0.8500001) == repr(0.8500001)
    assert fmt_threshold(0.85) == format(0.85, ".3f")


def test_an_infinite_end_shows_as_infinity() -> None:
    """An unbounded end is ``∞``/``−∞`` (math.floor of an infinity raises OverflowError)."""
    assert fmt_interval(float("-inf"), float("inf")) == "[−∞, ∞]"
    assert fmt_bound(np.float64("inf"), "high") == "∞"


def test_a_signed_infinite_end_or_difference_carries_its_plus() -> None:
    """A table of differences writes each end with its sign (``-0.021``, ``+0.032``); an unbounded upper end was the
    one without (``[-0.021, ∞]``), as was an infinite difference. The lower infinity keeps its ``−∞``."""
    inf = float("inf")
    assert fmt_interval(-0.0204, inf, sign=True) == "[-0.021, +∞]"
    assert fmt_interval(-inf, 0.0311, sign=True) == "[−∞, +0.032]"
    assert fmt_bound(np.float64(inf), "high", sign=True, threshold=-0.02) == "+∞"
    assert fmt_cell("ci_high", inf, sign=True) == "+∞" and fmt_cell("difference", inf, sign=True) == "+∞"
    assert fmt_cell("difference", np.float32(-inf), sign=True) == "−∞"
    assert fmt_cell("difference", float("nan"), sign=True) == ""  # missing stays blank
    assert fmt_interval(-inf, inf) == "[−∞, ∞]"  # unsigned: as before


def test_an_end_a_float_step_under_its_threshold_is_shown_whole() -> None:
    """No 17 decimals put a ci_high of 1.2345678901234567e-05 under a threshold one float above it (rounded up it
    reaches the threshold, the other side of it): the end is shown as Python writes it, still under it."""
    end = 1.2345678901234567e-05
    threshold = float(np.nextafter(end, 1.0))
    shown = fmt_bound(end, "high", threshold=threshold)
    assert shown == repr(end)
    assert float(shown) < threshold


def test_only_a_signed_tables_difference_carries_a_plus() -> None:
    # the rule of fmt_cell's docstring: a table of differences signs its difference and interval ends, nothing else;
    # a float32 difference (a frame's column of them) as a float64 one
    assert fmt_cell("difference", 0.25, sign=True) == "+0.250"
    assert fmt_cell("difference", np.float32(0.25), sign=True) == "+0.250"
    assert fmt_cell("difference", 0.25) == "0.250"  # an unsigned table: as fmt_number writes it
    assert fmt_cell("base_rate", 0.25, sign=True) == "0.250"  # a rate beside a difference: no sign
