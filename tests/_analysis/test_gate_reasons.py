"""The notes a gate's reasons are read with (``_analysis/gate_reasons.py``): unit tests, each expected text written
by hand or from scipy; the reasons as the gate gives them are in test_gate.py and test_gate_rules.py."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats


@pytest.mark.parametrize(("ends", "reruns", "said"), [
    (1, 1, "resumed after 1 abrupt end of the run's process (killed); the 1 case run in flight was run again: "),
    (1, 2, "resumed after 1 abrupt end of the run's process (killed); the 2 case runs in flight were run again: "),
    (2, 2, "resumed after 2 abrupt ends of the run's process (killed); the 2 case runs in flight were run again: "),
])
def test_the_abrupt_ends_line_counts_ends_and_case_runs_in_english(ends: int, reruns: int, said: str) -> None:
    """The line's singular and plural at one and two (the README test has 2 ends and 3 case
    runs, so a plural that began at three was not caught). By hand: one case run 'was', two 'were'."""
    from oloproof_nb._analysis.gate_reasons import abrupt_ends_note
    from oloproof_nb._core.records import AbruptEnd

    keys = [(f"c{i}", 1) for i in range(reruns)]
    split = [keys] if ends == 1 else [keys[:1], keys[1:]]
    assert abrupt_ends_note([AbruptEnd(how="killed", rerun=part) for part in split]).startswith(said)


def test_the_readmes_abrupt_ends_line_is_the_one_the_gate_prints() -> None:
    """README's table of what a system may do quotes the line under the gate's table after a resume ran case runs
    in flight again (``resumed after N abrupt ends of the run's process (…); the M case runs in flight were run
    again: …``); with N and M above one it is the plural line ``abrupt_ends_note`` makes (a quoted line
    no test read)."""
    from oloproof_nb._analysis.gate_reasons import abrupt_ends_note
    from oloproof_nb._core.records import AbruptEnd

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    quoted = re.search(r"the gate prints under its table `(resumed after N [^`]*)`", readme)
    assert quoted is not None
    pattern = re.escape(quoted.group(1)).replace("N", r"\d+").replace("M", r"\d+").replace("…", ".+")
    line = abrupt_ends_note([AbruptEnd(how="killed by signal SIGKILL", rerun=[("c1", 1), ("c2", 1)]),
                             AbruptEnd(how=None, rerun=[("c3", 2)])])
    assert re.fullmatch(pattern + r".*", line), (pattern, line)
    assert line.startswith("resumed after 2 abrupt ends of the run's process (killed by signal SIGKILL; not seen by "
                           "oloproof run); the 3 case runs in flight were run again: cases 'c1', 'c2', 'c3' (epoch 2)")


def test_all_missing_quotes_the_commonest_reason_given_when_more_rows_give_none() -> None:
    """Missing rows without a reason (NaN or "") outnumbering the one reason given hid it: the reason said "every
    row is missing" and no more. The blank rows are counted beside the other reasons."""
    from oloproof_nb._analysis.gate_reasons import missing_why

    reasons = [None, None, None, "score 9 is not in [0, 1]", "", "score 9 is not in [0, 1]", "raised"]
    verdicts = pd.DataFrame({"criterion": "c", "verdict": "missing", "reason": reasons})
    assert missing_why(verdicts, "c") == ('every row is missing: "score 9 is not in [0, 1]" (2 of 7 rows; 1 other '
                                           'reason, 4 with none, each in run.verdicts)')
    assert missing_why(verdicts.iloc[:3], "c") == "every row is missing"
    assert missing_why(verdicts.iloc[:4], "c") == ('every row is missing: "score 9 is not in [0, 1]" (1 of 4 rows; '
                                                    '3 with none, each in run.verdicts)')
    assert missing_why(verdicts.iloc[3:4], "c") == 'every row is missing: "score 9 is not in [0, 1]" (all 1 rows)'


def test_all_missing_counts_a_ratings_reasons_as_one_whatever_the_score() -> None:
    """A 1–10 rating read without a pass_threshold: each rating's rows have a reason naming the rating. By hand, 2
    rows of 3 and 2 of 7 beside 3 rows that raised: the rating's reason is the commonest, 4 of 7 rows, quoted
    without a score; told apart by their scores, "raised" was quoted as the commonest (3 of 7 rows; 2 other
    reasons). One rating alone is quoted as it is."""
    from oloproof_nb._analysis.gate_reasons import missing_why

    off = "is not in [0, 1]; say which scores pass with pass_threshold= (--pass-threshold)"
    reasons = [f"score 3 {off}", "raised", f"score 7 {off}", "raised", f"score 3 {off}", "raised", f"score 7 {off}"]
    verdicts = pd.DataFrame({"criterion": "c", "verdict": "missing", "reason": reasons})
    assert missing_why(verdicts, "c") == (f'every row is missing: "score … {off}" (4 of 7 rows; 1 other reason, each '
                                          'in run.verdicts)')
    assert missing_why(verdicts.iloc[[0, 1, 4]], "c") == (f'every row is missing: "score 3 {off}" (2 of 3 rows; 1 '
                                                          'other reason, each in run.verdicts)')


def test_all_missing_counts_a_checks_rewards_as_one_whatever_the_reward() -> None:
    """A python check's partial-credit rewards without a pass_threshold: each reward's rows have a reason naming
    it. By hand, 2 rows of 0.5, 1 of 0.25 and 1 of 1.0 beside 3 rows that raised: the reward's reason is the
    commonest, 4 of 7 rows, quoted without a reward; told apart by their rewards, "raised" was quoted as the
    commonest (3 of 7 rows; 3 other reasons)."""
    from oloproof_nb._analysis.gate_reasons import missing_why
    from oloproof_nb._core.scoremap import A_SCORE
    from oloproof_nb.evaluators.python import interpret_check

    reasons = [interpret_check(value)[1] for value in (0.5, 0.25, 0.5, 1.0)] + ["raised"] * 3
    verdicts = pd.DataFrame({"criterion": "c", "verdict": "missing", "reason": reasons})
    assert missing_why(verdicts, "c") == (f'every row is missing: "check returned …; {A_SCORE}" (4 of 7 rows; 1 other '
                                          'reason, each in run.verdicts)')


def test_the_all_pass_note_shows_every_digit_of_the_threshold_and_n_min_rounded_down() -> None:
    """The note wrote the threshold with :g (0.9999995 as "1 needs at least …") and n_min with .4g: 1,000
    singletons and 300 pairs have n_min = 1600²/2200 = 1163.64 by hand, shown as 1164 beside "needs n_min of at
    least 1164" at a threshold that 1,163.64 does not reach. scipy's Beta(n, 1) quantiles give the
    n each threshold needs."""
    from oloproof_nb._analysis.gate_reasons import all_pass_note

    half = (1 - 0.95) / 2
    sizes = np.array([1] * 1000 + [2] * 300)
    assert 1600**2 / 2200 == pytest.approx(1163.636, abs=1e-3)
    threshold = half ** (1 / 1163.8)  # reached at n_min 1163.8: not by 1163.64, by 1164
    assert stats.beta.ppf(half, 1600**2 / 2200, 1) < threshold <= stats.beta.ppf(half, 1164, 1)
    row = {"n": 1600, "passed": 1600, "method": "clopper_pearson", "reduce": "mean"}
    note = all_pass_note(row, sizes, threshold, 0.95, clustered=True)
    # the least n_min in hundredths (not the whole 1,164): 1,163.8 by construction of the threshold
    assert stats.beta.ppf(half, 1163.79, 1) < threshold <= stats.beta.ppf(half, 1163.8, 1)
    assert "n_min = 1,163.63 equal-sized ones" in note and "needs n_min of at least 1,163.8 (" in note, note
    assert stats.beta.ppf(half, 7_377_757, 1) < 0.9999995 <= stats.beta.ppf(half, 7_377_758, 1)
    flat = {"n": 20, "passed": 20, "method": "clopper_pearson", "reduce": "mean"}
    assert all_pass_note(flat, np.ones(20), 0.9999995, 0.95, clustered=False).endswith(
        "0.9999995 needs at least 7,377,758 (README section 6, How big must a suite be?)")


def test_case_runs_names_exactly_most_without_a_count_of_zero_more() -> None:
    """``case_runs`` names up to ``most`` (5) case runs: five are all named (no "and 0 more"), a sixth is counted."""
    from oloproof_nb._analysis.gate_reasons import case_runs

    five = [(f"c{i}", 1) for i in range(1, 6)]
    assert case_runs(five) == "cases 'c1', 'c2', 'c3', 'c4', 'c5'"
    assert case_runs([*five, ("c6", 2)]) == "cases 'c1', 'c2', 'c3', 'c4', 'c5' and 1 more"
