"""A ``progress`` callable of the caller's that raises stops the run as the caller's error, not oloproof's.

``op.run(suite, progress=mine)`` (and ``op.baseline``) calls ``mine(done, total)`` in the run's loop; an error it
raised was taken for a bug in oloproof_nb: ``internal error: ValueError: … (a bug in oloproof_nb, not in your
system; the traceback is in …/internal-error.txt …)``, on one worker or several. It is one line naming the
callable and the call, the callable's own error chained; the run folder keeps the records made and resumes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.errors import InternalError, OloproofError

CASES = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(4)]


class BarBroke(ValueError):
    pass


def _breaks_at(step: int) -> Callable[[int, int], None]:
    def progress(done: int, total: int) -> None:
        if done == step:
            raise BarBroke("the bar's widget is gone")

    return progress


@pytest.mark.parametrize("workers", [1, 2])
def test_a_progress_callable_that_raises_stops_the_run_in_one_line_naming_it_and_the_run_resumes(
        make_suite: Callable[..., Path], tmp_path: Path, workers: int) -> None:
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))
    out = tmp_path / "run"
    with pytest.raises(OloproofError) as caught:
        op.run(suite, out=out, workers=workers, progress=_breaks_at(2))
    assert not isinstance(caught.value, InternalError)
    assert str(caught.value) == ("progress: the callable given raised BarBroke: the bar's widget is gone when called "
                                 "with (2, 4); the run stopped there")
    assert isinstance(caught.value.__cause__, BarBroke)
    assert not (out / "internal-error.txt").exists()
    recorded = [json.loads(line)["case"]["id"] for line in (out / "cases.jsonl").read_text().splitlines()]
    assert len(recorded) == 2
    run = op.run(suite, out=out, resume=True, workers=workers, progress=False)
    assert sorted(run.cases.case_id) == ["c0", "c1", "c2", "c3"]


def test_a_progress_callable_that_raises_an_error_of_any_kind_is_named_the_same_way(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """A bar closed under the run (an ``AttributeError`` of its own), not only a ``ValueError``."""
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))

    def progress(done: int, total: int) -> None:
        if done == 1:
            raise AttributeError("'NoneType' object has no attribute 'update'")

    with pytest.raises(OloproofError) as caught:
        op.run(suite, out=tmp_path / "run", progress=progress)
    assert not isinstance(caught.value, InternalError)
    assert str(caught.value) == ("progress: the callable given raised AttributeError: 'NoneType' object has no "
                                 "attribute 'update' when called with (1, 4); the run stopped there")


def test_a_progress_callable_of_the_baseline_that_raises_is_named_the_same_way(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))
    with pytest.raises(OloproofError, match=r"^progress: the callable given raised BarBroke") as caught:
        op.baseline(suite, out=tmp_path / "idle", progress=_breaks_at(0))
    assert not isinstance(caught.value, InternalError)


def test_a_ctrl_c_in_the_progress_callable_stops_the_run_as_a_ctrl_c(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))

    def progress(done: int, total: int) -> None:
        if done == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        op.run(suite, out=tmp_path / "run", progress=progress)
