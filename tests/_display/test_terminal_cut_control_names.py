"""A long criterion name holding a control character, cut in the narrow gate table and given whole under it."""

from __future__ import annotations

from oloproof_nb._analysis.columns import GATE
from oloproof_nb._analysis.gate import Gate
from oloproof_nb._config.release import ReleaseConfig
from oloproof_nb._display.terminal import gate_table_text


def test_a_cut_name_given_whole_under_the_table_shows_its_escape_not_the_control() -> None:
    """The name (an ESC that clears the screen, then 80 characters) is cut in the table and given whole under it:
    in both places the ESC is written as the four characters ``\\x1b``, and no ESC reaches the terminal."""
    name = "\x1b[2J" + "recovers_from_error_" * 4
    row = {"criterion": name, "evaluator": "state_matches", "n": 48, "n_clusters": 48, "passed": 47, "missing": 0,
           "rate": 47 / 48, "ci_low": 0.9, "ci_high": 0.99, "method": "clopper_pearson", "threshold": 0.8,
           "verdict": "PASS", "reason": "ci_low_at_or_above_threshold", "failing_clusters": 1, "vacuous": False,
           "reduce": "mean"}
    table = GATE.from_columns({c: [row[c]] for c in GATE.names})
    gate = Gate(table=table, verdict="PASS", release=ReleaseConfig(), clustered=False, n_source_clusters=48,
                reason="")
    text = gate_table_text(gate, width=60)
    assert "\x1b" not in text
    # the lines under the table, wrapped at 60 columns (the name has no space: a wrap is where one appears)
    under = "".join(line.strip() for line in text.splitlines() if not line.startswith("|")).replace(" ", "")
    assert under.endswith("=\\x1b[2J" + "recovers_from_error_" * 4)  # the whole name, its ESC as written


def test_a_reason_line_shows_the_escape_of_a_control_in_a_name_or_reason() -> None:
    """``criterion: reason`` under the table: a name or reason quoting an ESC sequence (an Inspect log's scorer
    name, an exception's text) is written as its escape."""
    from oloproof_nb._display.terminal import reason_lines

    table = GATE.from_columns({c: [v] for c, v in {
        "criterion": "a\x1b[2J", "evaluator": "state_matches", "n": 4, "n_clusters": 4, "passed": 0, "missing": 0,
        "rate": 0.0, "ci_low": 0.0, "ci_high": 0.6, "method": "clopper_pearson", "threshold": 0.8,
        "verdict": "INSUFFICIENT_EVIDENCE", "reason": "too_few_clusters\x07", "failing_clusters": 4,
        "vacuous": False, "reduce": "mean"}.items()})
    assert reason_lines(table, 100) == ["a\\x1b[2J: too_few_clusters\\x07"]


def test_a_missing_verdicts_example_is_its_escaped_id_cut_at_40_and_its_escaped_reason() -> None:
    """By hand: the id's ESC is the four characters ``\\x1b``, then 35 of its ``x`` and ``…`` make 40; the
    reason's BEL is ``\\x07``."""
    from types import SimpleNamespace

    import pandas as pd

    from oloproof_nb._display.terminal import missing_verdict_lines

    case_id = "\x1b" + "x" * 50
    run = SimpleNamespace(
        cases=pd.DataFrame([(case_id, 1, "completed", None)], columns=["case_id", "epoch", "status", "error"]),
        verdicts=pd.DataFrame([(case_id, 1, "chk", "missing", "check returned None\x07")],
                              columns=["case_id", "epoch", "criterion", "verdict", "reason"]))
    lines = missing_verdict_lines(run)
    assert lines[1] == "  e.g. \\x1b" + "x" * 35 + "…: check returned None\\x07"
