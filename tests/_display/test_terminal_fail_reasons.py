"""``failed_verdict_lines``: why verdicts fail, said as ``missing_verdict_lines`` says why they are missing (the
commonest kinds first, at most three, each with a case), of ``fail`` verdicts alone."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pandas as pd

from oloproof_nb._display.terminal import failed_verdict_lines

PYTHON = '  in Python: run.verdicts[run.verdicts.verdict == "fail"] has each reason'


def _run(verdicts: list[tuple[str, int, str, str, Any]]) -> Any:
    """A run whose case runs all completed, with ``verdicts`` (case id, epoch, criterion, verdict, reason)."""
    ids = sorted({(v[0], v[1]) for v in verdicts})
    cases = pd.DataFrame([(c, e, "completed", None) for c, e in ids], columns=["case_id", "epoch", "status", "error"])
    return SimpleNamespace(
        cases=cases,
        verdicts=pd.DataFrame(verdicts, columns=["case_id", "epoch", "criterion", "verdict", "reason"]))


def test_the_commonest_fail_reasons_are_listed_and_the_rest_counted() -> None:
    """By hand: state has 2 fails of kind "2 of 3 paths differ" (c1, c2) and 1 of "1 of 3 paths differ" (c3);
    answer 1 fail of its own (c4) and 1 of "check returned False" (c5); missing and passing rows are no fails.
    Counts 2, 1, 1, 1: the first three listed in the order met, the fourth counted as other."""
    verdicts = [("c1", 1, "state", "fail", "2 of 3 paths differ: a, b"),
                ("c2", 1, "state", "fail", "2 of 3 paths differ: a, c"),
                ("c3", 1, "state", "fail", "1 of 3 paths differ: a"),
                ("c4", 1, "answer", "fail", "answer 'x'"),
                ("c5", 1, "answer", "fail", "check returned False"),
                ("c6", 1, "answer", "missing", "no_state"),
                ("c6", 1, "state", "pass", "")]
    assert failed_verdict_lines(_run(verdicts)) == [
        "state: 2 of its 4 verdicts fail: 2 of 3 paths differ", "  e.g. c1: 2 of 3 paths differ: a, b",
        "state: 1 of its 4 verdicts fail: 1 of 3 paths differ", "  e.g. c3: 1 of 3 paths differ: a",
        "answer: 1 of its 3 verdicts fail: answer 'x'", "  e.g. c4: answer 'x'",
        "  and 1 other reason", PYTHON]
    assert failed_verdict_lines(_run([("c1", 1, "state", "pass", ""), ("c2", 1, "state", "missing", "x")])) == []


def test_the_reasons_left_out_are_counted_in_the_singular_or_the_plural() -> None:
    """By hand: five kinds of one fail each (k1 … k5, in that order); the first three are listed and the rest
    counted, "1 other reason" of four kinds, "2 other reasons" of five."""
    verdicts = [(f"c{i}", 1, "answer", "fail", f"k{i}: why") for i in range(1, 6)]
    assert failed_verdict_lines(_run(verdicts[:4]))[-2:] == ["  and 1 other reason", PYTHON]
    assert failed_verdict_lines(_run(verdicts))[-2:] == ["  and 2 other reasons", PYTHON]
