"""The terminal's case-error lines say when the system's ``reset()`` raised in every case run listed
(a service the sandbox needs is down): no agent ran in them, and what to check. Rows are written by hand as
``run.cases`` holds them (``case_error_lines`` reads nothing else)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pandas as pd

from oloproof_nb._display.terminal import case_error_lines

DOWN = "reset() raised ConnectionRefusedError: [Errno 111] Connection refused"
PYTHON = '  in Python: run.cases["error"] has each; run.panel(case_id) shows a case'


def _run(rows: list[tuple[str, str, str | None]]) -> Any:
    return SimpleNamespace(cases=pd.DataFrame(rows, columns=["case_id", "status", "error"]))


def test_every_case_run_failing_in_reset_is_said_with_what_to_check() -> None:
    lines = case_error_lines(_run([("c0", "error", DOWN), ("c1", "error", DOWN)]))
    assert lines == [
        "2 of 2 case runs ended in error: their verdicts are missing",
        f"  {DOWN} (2 case runs, e.g. c0)",
        "  every case run failed in the system's reset(), before the agent ran: the verdicts say nothing of",
        "  the agent; check that what the sandbox needs (its database, a server, a file) is there and",
        "  reachable, then run again",
        PYTHON,
    ]


def test_the_case_runs_listed_failing_in_reset_beside_completed_ones_are_said_too() -> None:
    lines = case_error_lines(_run([("c0", "completed", None), ("c1", "error", DOWN)]))
    assert lines[2].startswith("  each of these case runs failed in the system's reset(), before the agent ran")


def test_no_such_line_when_one_case_run_ended_otherwise() -> None:
    """One ``run()`` error (no method named: the agent's) among the reset errors: the agent did run somewhere."""
    lines = case_error_lines(_run([("c0", "error", DOWN), ("c1", "error", "ValueError: boom")]))
    assert not any("reset(), before the agent ran" in line for line in lines)
    assert lines[-1] == PYTHON and len(lines) == 4


def test_a_message_naming_reset_elsewhere_is_no_reset_error() -> None:
    """Only a message that begins ``reset() raised`` is the reset's; the agent's ``run()``
    raising ``KeyError: 'reset_token'`` ran the agent, so no line says no agent ran."""
    lines = case_error_lines(_run([("c0", "error", DOWN), ("c1", "error", "KeyError: 'reset_token'")]))
    assert not any("before the agent ran" in line for line in lines)
    assert lines[-1] == PYTHON and len(lines) == 4
