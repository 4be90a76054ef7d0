"""The user's Ctrl-C while the run waits for a Python validator stops the run: the validator's ``except
BaseException`` (every crash of the validator's is evidence) took it as the validator's own and reported
``validator v raised KeyboardInterrupt``, so the case was judged on and the run went on after the Ctrl-C. A
``KeyboardInterrupt`` the validator's own code raises stays evidence."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import pytest

from oloproof_nb._run import observe
from oloproof_nb._run.observe import _run_callable


def test_ctrl_c_while_waiting_for_a_validator_stops_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(fn: Any, timeout_s: Any, **kwargs: Any) -> NoReturn:
        raise KeyboardInterrupt  # what the wait raises on a Ctrl-C: not marked as the validator's

    monkeypatch.setattr(observe, "call_with_timeout", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _run_callable(lambda path: True, tmp_path / "report.csv", "v", 5.0)


def test_a_keyboard_interrupt_the_validator_raises_is_evidence(tmp_path: Path) -> None:
    def raises(path: Path) -> NoReturn:
        raise KeyboardInterrupt

    assert _run_callable(raises, tmp_path / "report.csv", "v", 5.0) == (None, "validator v raised KeyboardInterrupt")
