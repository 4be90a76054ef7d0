"""compare_notes: vacuous checks and copies no criterion scores, said once for both runs only when both runs hold
the same (moved from test_compare.py with the code they test)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from oloproof_nb._analysis import compare_notes
from oloproof_nb._analysis.compare_notes import _vacuous_notes


@pytest.mark.parametrize(("base", "candidate", "expected"), [
    ({"c": ["f1"]}, {"c": ["f1"]}, ["vacuous check (both runs): f1"]),
    ({"c": ["f1"]}, {"c": ["f2"]}, ["vacuous check (the base run): f1", "vacuous check (the candidate run): f2"]),
    ({"c": ["f1", "f2"]}, {}, ["vacuous check (the base run): f1", "vacuous check (the base run): f2"]),
    ({}, {"c": ["f2"]}, ["vacuous check (the candidate run): f2"]),
    ({"c": ["f1"], "d": ["g"]}, {"c": ["f1"]}, ["vacuous check (both runs): f1"]),  # d is not compared
    ({"c": ["f1", "f2"]}, {"c": ["f1", "f2"]}, ["vacuous check (both runs): f1", "vacuous check (both runs): f2"]),
], ids=["same", "differ", "two-in-base", "candidate-only", "uncompared", "two-in-both"])
def test_a_vacuous_finding_is_said_once_for_both_runs_only_when_both_have_it(
        base: dict[str, list[str]], candidate: dict[str, list[str]], expected: list[str]) -> None:
    """The finding of one run only is said for that run, each of its findings, and 'both runs'
    only when the two runs' findings are equal (the end-to-end test has the same finding on both sides only)."""
    assert _vacuous_notes({"base": base, "candidate": candidate}, ["c"]) == expected


@pytest.mark.parametrize(("base", "candidate", "expected"), [
    (["a~t"], ["a~t"], ["both runs: 1 copy labeled invalid, scored by no criterion: a~t (see op.validity(run))"]),
    (["a~t"], ["b~t"], ["the base run: 1 copy labeled invalid, scored by no criterion: a~t (see op.validity(run))",
                        "the candidate run: 1 copy labeled invalid, scored by no criterion: b~t (see "
                        "op.validity(run))"]),
    (["a~t"], [], ["the base run: 1 copy labeled invalid, scored by no criterion: a~t (see op.validity(run))"]),
    ([], ["b~t"], ["the candidate run: 1 copy labeled invalid, scored by no criterion: b~t (see op.validity(run))"]),
    ([], [], []),
], ids=["same", "differ", "base-only", "candidate-only", "none"])
def test_copies_no_criterion_scores_are_said_once_for_both_runs_only_when_both_left_out_the_same(
        monkeypatch: pytest.MonkeyPatch, base: list[str], candidate: list[str], expected: list[str]) -> None:
    """The copies of one run only are named for that run; 'both runs' only for the same copies
    (the example runs leave out the same copy in both). Stand-in runs hold the copies each run's labels leave out."""
    monkeypatch.setattr(compare_notes, "unscored_copies", lambda run: run.left_out)
    monkeypatch.setattr(compare_notes, "broken_copies", lambda run: [])
    runs = SimpleNamespace(left_out=base), SimpleNamespace(left_out=candidate)
    assert compare_notes._unscored_notes(*runs) == expected  # type: ignore[arg-type]


def test_one_copy_left_out_by_both_runs_broken_in_one_is_said_for_each_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same copy left out by both runs, its pair broken in the base only: 'both runs' would say one of the two
    things for both, so each run gets its own line (the broken count is part of what must be equal)."""
    monkeypatch.setattr(compare_notes, "unscored_copies", lambda run: run.left_out)
    monkeypatch.setattr(compare_notes, "broken_copies", lambda run: run.broke)
    runs = SimpleNamespace(left_out=["a~t"], broke=["a~t"]), SimpleNamespace(left_out=["a~t"], broke=[])
    line = "1 copy labeled invalid, scored by no criterion: a~t (see op.validity(run))"
    assert compare_notes._unscored_notes(*runs) == [  # type: ignore[arg-type]
        f"the base run: {line}; it broke its pair, so the verdict leans on its label", f"the candidate run: {line}"]
