"""``_analysis/run_checks``: which checks two runs judged otherwise, edges the compare and pooling tests leave unpinned.

Each expectation is counted by hand from the sets given.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from oloproof_nb._analysis.run import Run
from oloproof_nb._analysis.run_checks import changed_checks, unscored_difference, validity_check_difference
from oloproof_nb._config.suite_config import parse_suite_config


def _left_out(*ids: str) -> Run:
    """A stand-in of a Run: ``unscored_difference`` reads only its ``unscored_ids``."""
    stand_in: Any = SimpleNamespace(unscored_ids=frozenset(ids))
    return cast(Run, stand_in)


def _checking(**minimum: float) -> Run:
    """A stand-in of a Run whose suite declares transforms ``name=minimum_validity``: ``validity_check_difference``
    reads only those."""
    transforms = [SimpleNamespace(name=name, minimum_validity=value) for name, value in minimum.items()]
    stand_in: Any = SimpleNamespace(config=SimpleNamespace(metamorphic=SimpleNamespace(transforms=transforms)))
    return cast(Run, stand_in)


def test_copies_left_out_by_either_run_are_counted_from_both_sides() -> None:
    """A copy the *second* run leaves out and the first scores counts as much as one the first
    leaves out (by hand: {a~i, b~i} ^ {b~i, c~i, d~i} = {a~i, c~i, d~i}, 3, first in sorted order 'a~i'), in either
    order; the same sets are no difference."""
    first, second = _left_out("b~i", "a~i"), _left_out("d~i", "b~i", "c~i")
    assert unscored_difference(first, second) == "3 scored in one of the two only, first 'a~i'"
    assert unscored_difference(second, first) == "3 scored in one of the two only, first 'a~i'"
    assert unscored_difference(_left_out(), second) == "3 scored in one of the two only, first 'b~i'"
    assert unscored_difference(second, _left_out("c~i", "b~i", "d~i")) == ""


def test_a_difference_no_shared_transform_explains_is_still_named() -> None:
    """Runs whose verdicts leave out other copies though no transform both declare checks
    its labels against another minimum (a transform renamed, the case file changed) are told so in words, never
    with an empty reason (``load_runs`` printed "leave out other copies labeled invalid (: 1 scored ...)");
    a shared transform whose minimum differs is named with both values."""
    assert validity_check_difference(_checking(injected=0.85), _checking(renamed=0.85)) == (
        "other transforms or another case file")
    assert validity_check_difference(_checking(injected=0.85), _checking(injected=0.85)) == (
        "other transforms or another case file")
    assert validity_check_difference(_checking(injected=0.85, other=0.5), _checking(other=0.5, injected=0.99)) == (
        "transform injected: minimum_validity 0.99, not 0.85")


def _suite_run(normalize: bool, fault: bool = True) -> Run:
    """A stand-in of a Run of a suite whose answer check has ``normalize`` and whose fault criterion (where
    ``fault``) judges its replays with it: ``changed_checks`` reads the suite's settings and the code digests the
    run recorded (none)."""
    evaluators: list[dict[str, Any]] = [{"type": "answer_matches", "normalize": normalize}]
    if fault:
        evaluators.insert(0, {"type": "fault_recovery", "tool": "write_report", "fault": "error"})
    config = parse_suite_config({"name": "s", "system": "m:S", "cases": "cases.jsonl", "evaluators": evaluators})
    stand_in: Any = SimpleNamespace(config=config, manifest=SimpleNamespace(digests={}))
    return cast(Run, stand_in)


def test_a_fault_criterion_whose_replays_answer_checks_normalize_otherwise_is_changed() -> None:
    """A replay's answer is judged by the suite's answer checks (``judge_replay``), so an answer
    check with ``normalize`` turned on changes what recovers: the fault criterion is named beside the answer check,
    and the same settings name neither."""
    changed = changed_checks(_suite_run(normalize=False), _suite_run(normalize=True))
    assert changed == {"answer_matches": "configured differently",
                       "recovers_from_error_at_write_report": "the answer, state and outcome checks its replays "
                                                              "are judged with differ"}
    assert changed_checks(_suite_run(normalize=True), _suite_run(normalize=True)) == {}


def test_a_criterion_only_one_run_judges_hides_no_later_change() -> None:
    """The first run's first criterion (the fault one) is not in the second run at all; the
    answer check after it, configured otherwise, is still named (1 of 1 shared criteria, by hand)."""
    assert changed_checks(_suite_run(normalize=False), _suite_run(normalize=True, fault=False)) == {
        "answer_matches": "configured differently"}
