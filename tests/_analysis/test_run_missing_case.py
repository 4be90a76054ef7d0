"""A case id typed with a slip of the finger (``run.panel("ord-21")`` for ``ord-021``): the line said ``no case
'ord-21' in run …`` and nothing of the id it was meant to be. It names the nearest id now, and none when no id is
near or the run holds more ids than are searched."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb._analysis import run as run_module


def _run(make_suite: Callable[..., Path]) -> op.Run:
    cases = [{"id": f"ord-{i:03d}", "input": {"answer": f"ok {i}"}, "initial_state": {},
              "expected": {"answer": f"ok {i}"}} for i in (1, 21, 22)]
    return op.run(op.load_suite(make_suite(cases, evaluators=[{"type": "answer_matches"}])), progress=False)


def test_a_missing_case_id_names_the_id_it_was_likely_meant_to_be(make_suite: Callable[..., Path]) -> None:
    run = _run(make_suite)
    with pytest.raises(op.OloproofError) as raised:
        run.panel("ord-21")
    assert str(raised.value) == f"no case 'ord-21' in run {run.run_id}; did you mean 'ord-021'?"
    with pytest.raises(op.OloproofError) as raised:
        run.record("ord021")
    assert str(raised.value).endswith("; did you mean 'ord-021'?")


def test_an_id_near_none_or_a_run_of_more_ids_than_searched_names_none(make_suite: Callable[..., Path],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    run = _run(make_suite)
    with pytest.raises(op.OloproofError) as raised:
        run.panel("refund")
    assert str(raised.value) == f"no case 'refund' in run {run.run_id}"
    monkeypatch.setattr(run_module, "_NEAR_IDS", 2)
    with pytest.raises(op.OloproofError) as raised:
        run.panel("ord-21")
    assert str(raised.value) == f"no case 'ord-21' in run {run.run_id}"


def test_an_id_that_reads_as_one_of_the_runs_says_how_it_differs(make_suite: Callable[..., Path]) -> None:
    """An id typed in other case or width, or pasted with a zero-width space: quoted as Python quotes it, the line
    read ``no case 'ord-021\u200b' …; did you mean 'ord-021'?`` without saying why two ids that look the same differ
    (an accent encoded otherwise looked the same in both quotes), and ``ORD-021`` was named nothing."""
    run = _run(make_suite)
    how = ("? It differs from it only in case, width, blank space, invisible characters or how an accent is "
           "encoded: copy the id as run.cases shows it")
    for typed in ("ORD-021", "ord-021\u200b", "\uff4f\uff52\uff44-021"):
        with pytest.raises(op.OloproofError) as raised:
            run.panel(typed)
        assert str(raised.value) == f"no case {typed!r} in run {run.run_id}; did you mean 'ord-021'{how}"


def test_a_run_of_as_many_ids_as_are_searched_still_names_the_nearest(make_suite: Callable[..., Path],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Up to ``_NEAR_IDS`` ids are searched: a run of exactly that many (3 here) is searched."""
    run = _run(make_suite)
    monkeypatch.setattr(run_module, "_NEAR_IDS", 3)
    with pytest.raises(op.OloproofError) as raised:
        run.panel("ord-21")
    assert str(raised.value) == f"no case 'ord-21' in run {run.run_id}; did you mean 'ord-021'?"


def test_a_slip_of_two_keys_still_names_the_id(make_suite: Callable[..., Path]) -> None:
    """``ord21`` for ``ord-021``: its 5 characters are all in the id in order, a similarity of 2 * 5 / (5 + 7) =
    0.83, above difflib's cutoff of 0.6; ``ord-022`` and ``ord-001`` share 4 (``ord``, one digit): 8 / 12 = 0.67."""
    run = _run(make_suite)
    with pytest.raises(op.OloproofError) as raised:
        run.panel("ord21")
    assert str(raised.value) == f"no case 'ord21' in run {run.run_id}; did you mean 'ord-021'?"


def test_pooled_runs_name_the_id_or_the_epoch_none_of_them_holds(make_suite: Callable[..., Path]) -> None:
    """Pooled runs (``op.load_runs``) holding no such case run said ``case 'ord-21' is in none of the pooled runs;
    pick one run: run.panel('ord-21', run_id=...)``: a run_id= that no run could answer, for a slip of the finger
    or an epoch the runs did not make. They name the id it was likely meant to be, or the epochs the case has."""
    first = _run(make_suite)
    second = op.run(op.load_suite(first.suite_root), progress=False)
    pooled = op.load_runs([first.directory, second.directory])
    runs = f"{first.run_id}, {second.run_id}"
    with pytest.raises(op.OloproofError) as raised:
        pooled.panel("ord-21")
    assert str(raised.value) == f"no case 'ord-21' in the pooled runs {runs}; did you mean 'ord-021'?"
    with pytest.raises(op.OloproofError) as raised:
        pooled.record("refund")
    assert str(raised.value) == f"no case 'refund' in the pooled runs {runs}"
    with pytest.raises(op.OloproofError) as raised:
        pooled.record("ord-021", epoch=2)
    assert str(raised.value) == f"case 'ord-021' has no epoch 2 in the pooled runs {runs} (its epochs: 1)"
    with pytest.raises(op.OloproofError) as raised:  # in both: which one is still the user's to say
        pooled.record("ord-021")
    assert "pick one run" in str(raised.value)


def test_an_epoch_given_as_text_is_refused_as_no_integer(make_suite: Callable[..., Path]) -> None:
    """``run.record("ord-001", "1")``: the text "1" is no epoch 1, and the line said ``has no epoch 1 (its epochs:
    1)``, a contradiction; pooled runs said it too. A NumPy integer, read from a frame, is an epoch as ever."""
    import numpy as np

    run = _run(make_suite)
    pooled = op.load_runs([run.directory, op.run(op.load_suite(run.suite_root), progress=False).directory])
    for given in ("1", 1.0, True):
        for where in (run, pooled.runs[0], pooled):
            with pytest.raises(op.OloproofError) as raised:
                where.record("ord-001", given)  # type: ignore[arg-type]
            assert str(raised.value) == f"epoch={given!r}: must be an integer (1 for the first epoch)"
    with pytest.raises(op.OloproofError, match=r"^epoch='1': must be an integer"):
        run.panel("ord-001", epoch="1")  # type: ignore[arg-type]
    assert run.record("ord-001", np.int64(1))["case"]["id"] == "ord-001"
