"""``missing_verdict_lines``: the order of reasons with equal counts, and a reason of None.

The lines are the only place a terminal says why a criterion's verdicts are missing; which kinds are listed (three)
and which one is counted as "other" depends on the order of kinds with equal counts: the order met in the frame
(the docstring's "the commonest first", then first met), not the criteria's alphabetical order.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pandas as pd

from oloproof_nb._display.terminal import missing_verdict_lines
from oloproof_nb.evaluators.python import interpret_check

PYTHON = '  in Python: run.verdicts[run.verdicts.verdict == "missing"] has each reason'


def _run(verdicts: list[tuple[str, int, str, str, Any]]) -> Any:
    """A run whose case runs all completed, with ``verdicts`` (case id, epoch, criterion, verdict, reason)."""
    ids = sorted({(v[0], v[1]) for v in verdicts})
    cases = pd.DataFrame([(c, e, "completed", None) for c, e in ids], columns=["case_id", "epoch", "status", "error"])
    return SimpleNamespace(
        cases=cases,
        verdicts=pd.DataFrame(verdicts, columns=["case_id", "epoch", "criterion", "verdict", "reason"]))


def test_kinds_of_equal_count_are_listed_in_the_order_met_not_by_name() -> None:
    """By hand: zeta has 2 missing as zz (c1, c2), then 1 as yy (c3); alpha has 1 as aa (c4) and 1 as bb (c5).
    Counts 2, 1, 1, 1: zz first, then the 1s in the order met (yy, aa, bb), so bb is the one "other"; sorted by
    name, alpha's aa and bb would come before zeta's yy and yy would be dropped."""
    verdicts = [("c1", 1, "zeta", "missing", "zz: first"), ("c2", 1, "zeta", "missing", "zz: second"),
                ("c3", 1, "zeta", "missing", "yy: third"), ("c4", 1, "alpha", "missing", "aa: fourth"),
                ("c5", 1, "alpha", "missing", "bb: fifth"), ("c6", 1, "alpha", "pass", "")]
    assert missing_verdict_lines(_run(verdicts)) == [
        "zeta: 2 of its 3 verdicts are missing: zz", "  e.g. c1: zz: first",
        "zeta: 1 of its 3 verdicts are missing: yy", "  e.g. c3: yy: third",
        "alpha: 1 of its 3 verdicts are missing: aa", "  e.g. c4: aa: fourth",
        "  and 1 other reason", PYTHON]


def test_a_reason_of_none_is_said_as_no_reason_not_as_the_word_none() -> None:
    """A frame set in the session (``run.verdicts = frame``) may hold None where the run writes "": by hand, the
    one missing verdict has no reason, and the line says ``(no reason)``, not ``None``."""
    lines = missing_verdict_lines(_run([("c1", 1, "answer", "missing", None), ("c2", 1, "answer", "pass", "")]))
    assert lines == ["answer: 1 of its 2 verdicts are missing: (no reason)", "  e.g. c1: ", PYTHON]


OFF_SCALE = "is not in [0, 1]; say which scores pass with pass_threshold= (--pass-threshold)"
#: No option of the command line maps a score: the reason names the Python call that does, and says so.
NO_VERDICT = ("has no verdict; map it with score_map= in Python, op.from_inspect(path, score_map=…); the command line "
              "has none")


def test_a_ratings_reasons_are_one_kind_whatever_the_score() -> None:
    """A 1–10 rating read without a pass_threshold is missing with one reason per rating. By hand: rated has 5 such
    rows (3, 3, 7, 7, 9), words 1 row of a word no table reads, letter 1 row its scorer gave no score. One kind of 5
    for rated, then words and letter: told apart by the score, rated's ratings were three kinds (2, 2 and 1 of its 5)
    and the other two criteria's reasons were left out as "2 other reasons"."""
    verdicts = [(f"r{i}", 1, "rated", "missing", f"score {value} {OFF_SCALE}")
                for i, value in enumerate([3, 3, 7, 7, 9])]
    verdicts += [("r0", 1, "words", "missing", f"score 'maybe' {NO_VERDICT}"),
                 ("r1", 1, "words", "pass", ""), ("r2", 1, "letter", "missing", "the scorer gave no score"),
                 ("r3", 1, "letter", "pass", "")]
    assert missing_verdict_lines(_run(verdicts), width=200) == [
        f"rated: 5 of its 5 verdicts are missing: score … {OFF_SCALE}", f"  e.g. r0: score 3 {OFF_SCALE}",
        f"words: 1 of its 2 verdicts are missing: score … {NO_VERDICT}", f"  e.g. r0: score 'maybe' {NO_VERDICT}",
        "letter: 1 of its 2 verdicts are missing: the scorer gave no score", "  e.g. r2: the scorer gave no score",
        PYTHON]


def test_a_python_checks_rewards_without_a_threshold_are_one_kind_whatever_the_reward() -> None:
    """A check returning partial-credit rewards (0.25, 0.5, 0.75) without a pass_threshold is missing with one
    reason per reward. By hand: reward has 6 such rows (0.25, 0.5, 0.75, 0.25, 0.5, 0.5), ask 2 rows whose check
    returned None. One kind of 6 for reward, then ask's: told apart by the reward, reward's rows were three kinds
    (3, 2 and 1 of its 6) and ask's reason was left out as "1 other reason"."""
    said = {value: interpret_check(value)[1] for value in (0.25, 0.5, 0.75)}
    verdicts = [(f"r{i}", 1, "reward", "missing", said[value])
                for i, value in enumerate([0.25, 0.5, 0.75, 0.25, 0.5, 0.5])]
    verdicts += [("r0", 1, "ask", "missing", "check returned None"), ("r1", 1, "ask", "missing", "check returned None"),
                 ("r2", 1, "ask", "pass", "")]
    lines = missing_verdict_lines(_run(verdicts), width=300)
    assert lines == [
        "reward: 6 of its 6 verdicts are missing: check returned …; a number is no verdict", f"  e.g. r0: {said[0.25]}",
        "ask: 2 of its 3 verdicts are missing: check returned None", "  e.g. r0: check returned None", PYTHON]
