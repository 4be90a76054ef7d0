"""Texts a plot draws: a difference tick in percentage points, and the note beside an interval end at its threshold."""

from __future__ import annotations

import pytest

from oloproof_nb._display.plots import _near_note, _points


@pytest.mark.parametrize(("x", "text"), [(0.025, "+2.5 pp"), (-0.125, "−12.5 pp"), (0.1, "+10 pp"), (0.0, "0 pp")])
def test_a_difference_tick_keeps_its_fraction_of_a_point(x: float, text: str) -> None:
    """2.5 points is 0.025 × 100 (a hand count); rounded to whole points it read as +2 pp beside a +3 pp tick."""
    assert _points(x) == text


def test_an_end_equal_to_its_threshold_is_noted_as_at_least_it() -> None:
    """A ci_low equal to the threshold passes (ci_low ≥ threshold, DESIGN.md's gate rule): the note says ``≥``."""
    assert _near_note(0.85, 0.95, 0.85) == "  ci_low 0.850 ≥ 0.85"
    assert _near_note(0.84, 0.95, 0.85) == "  ci_low 0.840 < 0.85"


@pytest.mark.parametrize(("lowest", "step"), [(0.6, 0.1), (0.55, 0.2)])
def test_a_rate_axis_from_a_half_up_ticks_every_tenth(lowest: float, step: float) -> None:
    """The axis starts a tenth under the lowest end, floored (0.6 → 0.5, 0.55 → 0.4); from 0.5 up the ticks are
    a tenth apart, below it a fifth (hand counts)."""
    import matplotlib.pyplot as plt
    import numpy as np

    from oloproof_nb._display.plots import _rate_axis

    fig, ax = plt.subplots()
    try:
        _rate_axis(ax, "x", lowest)
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert np.allclose(np.diff(ticks), step)
    finally:
        plt.close(fig)
