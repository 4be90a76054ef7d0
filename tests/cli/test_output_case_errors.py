"""``print_case_errors``, edges a mutant would break: above the gate's table, the case runs that ended in error come
first, then why verdicts of the case runs that completed are missing (its docstring's order; the second block's
lines leave the ended case runs to the first)."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from oloproof_nb.cli.output import print_case_errors


def test_ended_case_runs_are_said_before_the_missing_verdicts_of_completed_ones(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """By hand: c1 raised (its one verdict is missing, said by the first block); c2 completed but its check
    returned None (the second block); c3 passed. 1 of 3 case runs ended; answer has 3 verdicts, 1 missing
    that the second block counts."""
    monkeypatch.delenv("COLUMNS", raising=False)
    run = SimpleNamespace(
        cases=pd.DataFrame([("c1", 1, "error", "KeyError: 'x'"), ("c2", 1, "completed", None),
                            ("c3", 1, "completed", None)], columns=["case_id", "epoch", "status", "error"]),
        verdicts=pd.DataFrame([("c1", 1, "answer", "missing", "case_error"),
                               ("c2", 1, "answer", "missing", "check returned None"), ("c3", 1, "answer", "pass", "")],
                              columns=["case_id", "epoch", "criterion", "verdict", "reason"]))
    print_case_errors(run)  # type: ignore[arg-type]
    lines = capsys.readouterr().out.splitlines()
    ended = lines.index("1 of 3 case runs ended in error: their verdicts are missing")
    missing = lines.index("answer: 1 of its 3 verdicts are missing: check returned None")
    assert ended == 0 < missing and lines[missing + 1] == "  e.g. c2: check returned None"
