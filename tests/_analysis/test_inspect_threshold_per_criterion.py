"""``pass_threshold=`` per criterion when reading Inspect AI logs, against hand counts on a real log.

The log (``tests/_inspect_rated_log.py``, ``ROWS``): eight samples scored by ``rating`` (1-10), ``exact`` (0-1) and
the dict-valued ``checks`` (criteria ``correct`` and ``quality``, a 1-10 number). One number is every criterion's:
``pass_threshold=7`` for the rating failed every one of ``exact``'s full marks. A mapping gives each criterion
named its own threshold; the others keep the default rule.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _inspect_rated_log import ROWS, shared_rated

import oloproof_nb as op
from oloproof_nb._analysis.run_checks import changed_checks

LOOSE = {"min_clusters": 2, "allow_approximate_methods": True}


@pytest.fixture(scope="module")
def rated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with shared_rated(tmp_path_factory) as file:
        yield file


def _read(path: Path, **kwargs: Any) -> tuple[op.Run, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = op.from_inspect(path, **kwargs)
    return run, list(caught)


def _counts(run: op.Run, criterion: str) -> dict[str, int]:
    rows = run.verdicts[run.verdicts["criterion"] == criterion]
    return {str(k): int(v) for k, v in rows["verdict"].value_counts().items()}


def _verdict(run: op.Run, criterion: str) -> dict[str, str]:
    rows = run.verdicts[run.verdicts["criterion"] == criterion]
    return dict(zip(rows["case_id"].astype(str), rows["verdict"], strict=True))


def test_the_log_holds_the_rows_by_hand(rated: Path) -> None:
    """The log's scores are ``ROWS`` as written (read with Inspect itself, not oloproof)."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(rated))
    got = {str(s.id): (s.scores["rating"].value, s.scores["exact"].value, s.scores["checks"].value)
           for s in log.samples or []}
    assert got == {f"q{i}": (r, e, {"correct": c, "quality": q}) for i, (r, e, c, q) in enumerate(ROWS)}


def test_a_rating_threshold_leaves_the_0_to_1_scorer_at_full_marks(rated: Path) -> None:
    """``{"rating": 7}``: rating passes where the hand count says (9, 7, 10, 7.0: 4 of 8; 6.9, 3, 1, 2 fail); exact,
    not named, keeps the default (its five 1.0s pass, three 0.0s fail), where the one number 7 failed all eight.
    quality, not named, is a 1-10 number read by the default rule: missing. No warning: nothing is vacuous and
    nothing cannot pass."""
    run, caught = _read(rated, pass_threshold={"rating": 7})
    hand_rating = sum(r >= 7 for r, _, _, _ in ROWS)
    hand_exact = sum(e == 1.0 for _, e, _, _ in ROWS)
    assert (hand_rating, hand_exact) == (4, 5)
    assert _counts(run, "rating") == {"pass": hand_rating, "fail": 8 - hand_rating}
    assert _counts(run, "exact") == {"pass": hand_exact, "fail": 8 - hand_exact}
    assert _counts(run, "quality") == {"missing": 8}
    assert _counts(run, "correct") == {"pass": 5, "fail": 3}  # C five times: letter codes, no threshold
    assert caught == []
    table = op.gate(run, release={**LOOSE, "criteria": {"rating": 0.1, "exact": 0.1}}).table.set_index("criterion")
    assert (table.loc["rating", "passed"], table.loc["exact", "passed"]) == (4, 5)
    # the one number, as before: exact cannot pass (warned), rating's passes the same 4
    scalar, said = _read(rated, pass_threshold=7)
    assert _counts(scalar, "exact") == {"fail": 8} and _counts(scalar, "rating") == _counts(run, "rating")
    assert [str(w.message) for w in said if "exact's 8 scores" in str(w.message) and "cannot pass" in str(w.message)]


def test_the_boundary_is_at_or_above_the_criterions_own_threshold(rated: Path) -> None:
    """At exactly 7 the ratings 7 and 7.0 pass and 6.9 fails; just above 7 they fail (2 pass: 9, 10); at 6.9 it
    passes (5)."""
    at = _verdict(_read(rated, pass_threshold={"rating": 7})[0], "rating")
    assert (at["q1"], at["q6"], at["q2"]) == ("pass", "pass", "fail")  # 7, 7.0, 6.9
    above = _read(rated, pass_threshold={"rating": 7.000001})[0]
    assert _counts(above, "rating") == {"pass": 2, "fail": 6}
    below = _read(rated, pass_threshold={"rating": 6.9})[0]
    assert _counts(below, "rating") == {"pass": 5, "fail": 3}


def test_two_criteria_on_two_scales_and_a_dict_scores_key(rated: Path) -> None:
    """``{"rating": 7, "exact": 0.5, "quality": 7}``: each by its own cut. quality (a key of checks, named as the
    verdicts name it) at 7: 8, 7, 10, 7 pass (4 of 8); exact at 0.5: the five 1.0s."""
    run, caught = _read(rated, pass_threshold={"rating": 7, "exact": 0.5, "quality": 7})
    assert caught == []
    hand_quality = sum(q >= 7 for _, _, _, q in ROWS)
    assert hand_quality == 4
    assert _counts(run, "quality") == {"pass": hand_quality, "fail": 8 - hand_quality}
    assert _counts(run, "exact") == {"pass": 5, "fail": 3}
    assert _counts(run, "rating") == {"pass": 4, "fail": 4}


def test_a_name_no_criterion_has_is_one_error_listing_the_criteria(rated: Path) -> None:
    with pytest.raises(op.OloproofError) as info:
        op.from_inspect(rated, pass_threshold={"rating": 7, "ratings": 7})
    assert str(info.value) == ("pass_threshold['ratings']=7: these logs have no criterion 'ratings'; their criteria: "
                               "rating, exact, correct, quality")
    # a dict-valued scorer's name: its keys are the criteria, said so
    with pytest.raises(op.OloproofError, match=r"scorer 'checks' gives dict scores: its criteria are correct, "
                                               r"quality\); their criteria: rating, exact, correct, quality$"):
        op.from_inspect(rated, pass_threshold={"checks": 7})


@pytest.mark.parametrize("given", [{"rating": float("inf")}, {"rating": float("-inf")}, {"rating": float("nan")},
                                   {"rating": True}, {"rating": "7"}, {"rating": None}, {7: 7}, {"": 7}])
def test_a_mapping_is_checked_as_the_number_is(rated: Path, given: dict[Any, Any]) -> None:
    with pytest.raises(op.OloproofError, match=r"^pass_threshold(\[.*\]=.*: give a finite number|: key .* is no "
                                               r"criterion name)"):
        op.from_inspect(rated, pass_threshold=given)


def test_an_empty_mapping_is_the_default_rule(rated: Path) -> None:
    default, empty = _read(rated)[0], _read(rated, pass_threshold={})[0]
    assert default.verdicts.equals(empty.verdicts) and default.config == empty.config
    assert _counts(empty, "rating") == {"missing": 8}


def test_the_findings_are_each_criterions_own(rated: Path) -> None:
    """``exact`` (every score in [0, 1]) given 7 cannot pass, given 0 cannot fail; ``rating`` (scores off [0, 1]) is
    no finding at either; a criterion the mapping leaves out is no finding. Each finding names the criterion's own
    threshold."""
    run, caught = _read(rated, pass_threshold={"rating": 0, "exact": 7})
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and not issubclass(caught[0].category, op.VacuousCheckWarning)
    assert ("pass_threshold['exact']=7: each of criterion exact's 8 scores is a number in [0, 1], below the threshold "
            "given for it, so the criterion cannot pass") in messages[0]
    assert _counts(run, "exact") == {"fail": 8} and _counts(run, "rating") == {"pass": 8}
    assert run.manifest.suite_config.vacuous == {}
    run, caught = _read(rated, pass_threshold={"rating": 7, "exact": 0})
    assert [w.category for w in caught] == [op.VacuousCheckWarning]
    assert "pass_threshold['exact']=0: each of criterion exact's 8 scores is a number in [0, 1]" in \
        str(caught[0].message)
    assert list(run.manifest.suite_config.vacuous) == ["exact"]
    table = op.gate(run, release={**LOOSE, "criteria": {"exact": 0.1, "rating": 0.1}}).table.set_index("criterion")
    assert bool(table.loc["exact", "vacuous"]) and not bool(table.loc["rating", "vacuous"])


def test_each_criterion_records_the_threshold_that_judged_it(rated: Path) -> None:
    """The reading each criterion's check records: its own threshold, or none for a criterion the mapping leaves out
    (judged by the default rule, as with no threshold). One number stays every criterion's, as before. A second
    reading that adds a threshold for exact changed exact's check only."""
    run = _read(rated, pass_threshold={"rating": 7, "quality": 6.5})[0]
    readings = {ev.criterion: ev.reading for ev in run.config.evaluators}  # type: ignore[attr-defined]
    assert readings == {"rating": '{"pass_threshold":7.0}', "exact": "", "correct": "",
                        "quality": '{"pass_threshold":6.5}'}
    scalar = _read(rated, pass_threshold=7)[0]
    assert {ev.reading for ev in scalar.config.evaluators} == {'{"pass_threshold":7.0}'}  # type: ignore[attr-defined]
    more = _read(rated, pass_threshold={"rating": 7, "quality": 6.5, "exact": 1})[0]
    assert list(changed_checks(run, more)) == ["exact"]
    assert changed_checks(run, _read(rated, pass_threshold={"quality": 6.5, "rating": 7})[0]) == {}


def test_a_numpy_number_is_a_threshold_and_a_bool_is_not() -> None:
    """``pass_threshold=np.int64(7)`` (a cut computed from an array) was refused as "give a finite number", one
    ``{"rating": np.int64(7)}`` too; np.float32 as well. Checked before any log is read."""
    import numpy as np

    from oloproof_nb._analysis.inspect_log import _thresholds

    assert _thresholds(np.int64(7)) == 7.0 and type(_thresholds(np.int64(7))) is float
    assert _thresholds({"rating": np.int64(7), "exact": np.float32(0.5)}) == {"rating": 7.0, "exact": 0.5}
    for bad in (True, np.bool_(True), np.float64("nan"), {"rating": np.int64(7), "exact": False}, "7"):
        with pytest.raises(op.OloproofError, match="give a finite number"):
            _thresholds(bad)  # type: ignore[arg-type]


def test_a_rating_read_without_its_threshold_says_what_would_decide_it(rated: Path) -> None:
    """Read with no ``pass_threshold``, the 1-10 ``rating`` is missing on all 8 samples (a number off [0, 1] puts
    the whole criterion on another scale), and the gate is INSUFFICIENT_EVIDENCE (all_missing). Its reason said
    ``all_missing`` and nothing of what would decide it; it now quotes why its rows are missing, naming
    ``pass_threshold=``. Each score's reason names its score, and by hand from ``ROWS`` the eight print differently
    (7 and 7.0 too): seven are off [0, 1], one reason of one kind, quoted without its score (7 of 8 rows), and the
    rating 1, in [0, 1], is missing for another (its scorer's other scores are off the scale); told apart by their
    scores, the reason quoted one rating's row and counted 7 others."""
    run, _ = _read(rated)
    assert _counts(run, "rating") == {"missing": 8}
    assert len({repr(r) for r, _, _, _ in ROWS}) == 8
    row = op.gate(run, release={**LOOSE, "criteria": {"rating": 0.5}}).table.set_index("criterion").loc["rating"]
    assert row["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert row["reason"].startswith('all_missing; every row is missing: "score ')
    assert "pass_threshold=" in row["reason"]
    assert '"score … is not in [0, 1]; ' in row["reason"]
    assert "(7 of 8 rows; 1 other reason, each in run.verdicts)" in row["reason"]
    plain = op.gate(run, release={**LOOSE, "criteria": {"correct": 0.5}}).table.set_index("criterion").loc["correct"]
    assert "every row is missing" not in plain["reason"]  # a criterion with verdicts says nothing of the kind


def test_a_threshold_is_named_with_every_digit(rated: Path) -> None:
    """1.0000001 is not 1: ``:g`` kept six significant digits, and the finding read "pass_threshold['exact']=1: … below
    the threshold …, so the criterion cannot pass; give it … 1 for full marks", which a score of 1 would pass."""
    _, caught = _read(rated, pass_threshold={"exact": 1.0000001})
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1
    assert "pass_threshold['exact']=1.0000001: each of criterion exact's 8 scores" in messages[0]
    with pytest.raises(op.OloproofError) as info:
        op.from_inspect(rated, pass_threshold={"ratings": 0.1234567})
    assert str(info.value).startswith("pass_threshold['ratings']=0.1234567: these logs have no criterion 'ratings'")
