"""What a stopped do-nothing baseline says about finishing it: run it again, never ``resume=True``.

``op.baseline`` takes no ``resume``, and ``op.run(suite, out=..., resume=True)`` refuses a baseline's folder (its
system is the no-op: "the system version changed ('oloproof-noop' → …)"). A baseline stopped by a Ctrl-C or a bug
said to finish it with that very ``op.run(..., resume=True)``, as a stopped run of the suite's system does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._run.store import RunStore
from oloproof_nb.errors import InternalError, RunDirError

CASES = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(4)]
AGAIN = "a baseline cannot be resumed: run op.baseline(suite) again, into a new folder"


def _stop_at(step: int) -> Callable[[int, int], None]:
    def progress(done: int, total: int) -> None:
        if done == step:
            raise KeyboardInterrupt

    return progress


def test_a_baseline_a_bug_stopped_says_to_run_it_again_and_a_resume_of_it_is_refused(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))
    out = tmp_path / "idle"
    real = RunStore.append_case
    appended: list[Any] = []

    def append_case(self: RunStore, record: Any) -> Any:
        if appended:
            raise RuntimeError("a bug")
        appended.append(record)
        return real(self, record)

    monkeypatch.setattr(RunStore, "append_case", append_case)
    with pytest.raises(InternalError) as caught:
        op.baseline(suite, out=out, progress=False)
    monkeypatch.undo()
    assert str(caught.value).endswith(f"; {AGAIN})")
    assert "resume=True" not in str(caught.value)
    with pytest.raises(RunDirError, match="the system version changed"):  # what the message named before
        op.run(suite, out=out, resume=True, progress=False)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the note needs BaseException.add_note")
def test_a_baseline_stopped_by_its_progress_callable_notes_its_folder_and_to_run_it_again(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """A progress callable of the user's that raises stops the baseline in an error naming no folder: its note says
    where the stopped baseline is and to run it again, as for a Ctrl-C."""
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))
    out = tmp_path / "idle"

    def progress(done: int, total: int) -> None:
        if done == 2:
            raise ValueError("the bar is gone")

    with pytest.raises(op.OloproofError, match="progress: the callable given raised") as caught:
        op.baseline(suite, out=out, progress=progress)
    assert getattr(caught.value, "__notes__", None) == [f"the run is in {out}; {AGAIN}"]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the note needs BaseException.add_note")
def test_a_baseline_stopped_by_a_ctrl_c_notes_its_folder_and_to_run_it_again(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))
    out = tmp_path / "idle"
    with pytest.raises(KeyboardInterrupt) as caught:
        op.baseline(suite, out=out, workers=2, progress=_stop_at(2))
    assert getattr(caught.value, "__notes__", None) == [f"the run is in {out}; {AGAIN}"]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the note needs BaseException.add_note")
def test_a_run_of_the_suites_system_stopped_by_a_ctrl_c_still_says_to_resume_it(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt) as caught:
        op.run(suite, out=out, progress=_stop_at(2))
    assert getattr(caught.value, "__notes__", None) == [
        f"the run is in {out}; finish it with op.run(suite, out={str(out)!r}, resume=True)"]
