"""A case run whose ``reset()`` overran ``case_timeout_s`` failed before the agent ran, as one whose
``reset()`` raised: the terminal's case-error lines say so (rows written by hand as ``run.cases`` holds them)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pandas as pd

from oloproof_nb._display.terminal import case_error_lines

HUNG = "timeout: reset() exceeded case_timeout_s=5"
DOWN = "reset() raised ConnectionRefusedError: [Errno 111] Connection refused"


def _run(rows: list[tuple[str, str, str | None]]) -> Any:
    return SimpleNamespace(cases=pd.DataFrame(rows, columns=["case_id", "status", "error"]))


def test_case_runs_whose_reset_hung_or_raised_are_said_to_have_run_no_agent() -> None:
    lines = case_error_lines(_run([("c0", "timeout", HUNG), ("c1", "error", DOWN)]))
    assert lines[0] == "2 of 2 case runs ended in error (1 by timeout): their verdicts are missing"
    assert lines[3].startswith("  every case run failed in the system's reset(), before the agent ran")


def test_a_timeout_of_run_is_the_agent_s() -> None:
    """A bare timeout (``run()`` overran: the agent ran) beside the reset's: no line says no agent ran."""
    lines = case_error_lines(_run([("c0", "timeout", HUNG), ("c1", "timeout", "timeout: exceeded case_timeout_s=5")]))
    assert not any("before the agent ran" in line for line in lines)
