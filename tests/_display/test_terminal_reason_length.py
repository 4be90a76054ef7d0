"""A criterion's reason under the gate table is cut as a reason in a table or panel is: at
:data:`~oloproof_nb._display.theme.TEXT_SHOWN` characters."""

from __future__ import annotations

from oloproof_nb._analysis.columns import GATE
from oloproof_nb._display.terminal import reason_lines


def test_a_reason_of_ten_thousand_characters_is_shown_to_two_thousand() -> None:
    """Hand count: ``c: `` (3 characters) and the reason's first 1,999 characters and ``…`` (2,000), wrapped at 100
    columns with 4 spaces before each line after the first; 10,000 characters were printed before."""
    reason = "all_missing; every row is missing: " + "x" * 9965
    table = GATE.from_columns({c: [v] for c, v in {
        "criterion": "c", "evaluator": "state_matches", "n": 4, "n_clusters": 4, "passed": 0, "missing": 4,
        "rate": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "method": "clopper_pearson",
        "threshold": 0.8, "verdict": "INSUFFICIENT_EVIDENCE", "reason": reason, "failing_clusters": 0,
        "vacuous": False, "reduce": "mean"}.items()})
    lines = reason_lines(table, 100)
    assert "".join(line.removeprefix("    ") for line in lines) == "c: " + reason[:1999] + "…"
