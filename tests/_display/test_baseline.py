"""``op.baseline``'s own part (oloproof_nb._display.baseline): what it takes, and the progress it shows.

The baseline run itself is stubbed (the no-op run and the gate's idle columns are in tests/_run/test_baseline.py
and tests/_analysis/test_baseline.py).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._display import baseline as face


class Stop(Exception):
    """Raised by the stubbed run: what op.baseline does before and after it is all that is looked at."""


@pytest.fixture
def given(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def run_baseline(suite: Any, **kwargs: Any) -> Path:
        seen.update(kwargs, suite=suite)
        raise Stop

    monkeypatch.setattr(face, "load_suite", lambda path: SimpleNamespace(name="desk", path=path))
    monkeypatch.setattr(face, "run_baseline", run_baseline)
    monkeypatch.setattr(face, "stderr_is_tty", lambda: True)
    return seen


def test_a_suite_that_is_neither_a_suite_nor_a_folder_is_one_line() -> None:
    """Mutant caught: the type check dropped (a dict reached load_suite and raised a TypeError)."""
    with pytest.raises(op.OloproofError) as info:
        op.baseline({"cases": []})  # type: ignore[arg-type]
    assert str(info.value) == "baseline: suite must be a Suite (op.load_suite) or a suite folder, got dict"


def test_a_progress_callback_is_used_as_given_and_opens_no_bar(given: dict[str, Any],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutant caught: a callable taken as ``progress=True`` (a bar opened on a terminal, the callback never called)."""
    monkeypatch.setattr(face, "progress_bar", lambda title: pytest.fail("a bar was opened"))

    calls: list[tuple[int, int]] = []

    def mine(done: int, total: int) -> None:
        calls.append((done, total))

    with pytest.raises(Stop):
        face.baseline("suite-folder", out="idle", workers=3, progress=mine)
    given["progress"](1, 4)  # the callable reaches the run (an error it raises is named as the caller's)
    assert calls == [(1, 4)] and (given["out"], given["workers"]) == ("idle", 3)
    assert given["suite"].path == "suite-folder"


def test_the_bar_is_closed_when_the_run_raises(given: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal with ``progress`` not given, a bar titled after the suite opens, and closes though the run
    raised. Mutant caught: the ``finally`` dropped (a bar left drawn under the traceback)."""
    events: list[str] = []

    def bar(title: str) -> tuple[Any, Any]:
        events.append(f"open {title}")
        return (lambda done, total: None), (lambda: events.append("close"))

    monkeypatch.setattr(face, "progress_bar", bar)
    with pytest.raises(Stop):
        face.baseline("suite-folder")
    assert events == ["open desk (no-op)", "close"]
