"""run()'s argument checks: the bounds themselves are accepted (README: "epochs ... 1 to
10,000"; a chunk_size "of at least 1"). Each accepted value is shown to pass the check by reaching the next one,
the executor check, which refuses ``executor=4`` before anything runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op

CASES = [{"id": "w00", "input": {"answer": "done", "writes": []}, "initial_state": {"acct": {"a": 0}},
          "expected": {"answer": "done"}}]


@pytest.mark.parametrize("given", [{"epochs": 10_000}, {"epochs": 1}, {"chunk_size": 1}, {"workers": 1}])
def test_the_bounds_pass_the_argument_checks(make_suite: Callable[..., Path], given: dict[str, Any]) -> None:
    """``epochs=10_000`` (the largest allowed, MAX_EPOCHS) and ``chunk_size=1`` (the smallest) were refused by a
    check one off (``epochs < 10_000``, ``chunk_size >= 2``) with no test noticing; here each is refused only by the
    executor check that follows."""
    folder = make_suite(CASES)
    with pytest.raises(op.OloproofError) as refused:
        op.run(op.load_suite(folder), executor=4, out=folder / "o", progress=False, **given)
    assert str(refused.value).startswith("executor=4: must be a concurrent.futures.Executor"), str(refused.value)
    assert not (folder / "o").exists()


@pytest.mark.parametrize("given", [{"epochs": 10_001}, {"epochs": 0}, {"chunk_size": 0}, {"workers": 0}])
def test_one_past_each_bound_is_refused_first(make_suite: Callable[..., Path], given: dict[str, Any]) -> None:
    """The other side of each bound: refused by its own check, before the executor is looked at."""
    folder = make_suite(CASES)
    (name, value), = given.items()
    with pytest.raises(op.OloproofError, match=rf"^{name}={value}: must be an integer"):
        op.run(op.load_suite(folder), executor=4, out=folder / "o", progress=False, **given)
