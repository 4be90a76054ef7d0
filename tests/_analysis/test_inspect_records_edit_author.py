"""``_edit_of``: who is named for an Inspect AI score edited by hand.

Built from plain objects shaped as Inspect's ``Score`` (``value``, ``history``) and ``ScoreEdit`` (``value``,
``provenance`` with ``author`` and ``reason``): ``edit_score`` keeps the scorer's score as the first history entry
(no provenance) and appends each edit; an edit of the explanation alone has the value ``"UNCHANGED"``.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from oloproof_nb._analysis.inspect_records import _edit_of


def _entry(value: Any, author: str | None = None, reason: str | None = None) -> SimpleNamespace:
    provenance = None if author is None else SimpleNamespace(author=author, reason=reason)
    return SimpleNamespace(value=value, provenance=provenance)


def test_the_author_of_the_value_change_is_named_not_of_a_later_explanation_edit() -> None:
    """By hand: the scorer gave I; Ann changed it to C ("regraded"); Bob then edited the explanation alone. The
    value the gate reads is Ann's, so the warning names her and her reason, not Bob."""
    score = SimpleNamespace(value="C", history=[_entry("I"), _entry("C", "ann", "regraded"),
                                                _entry("UNCHANGED", "bob", "typo")])
    assert _edit_of(score) == ("I", "C", "ann", " ('regraded')")


def test_an_unsigned_change_after_a_signed_one_names_nobody() -> None:
    """By hand: I (the scorer's) -> P by Ann -> C by an edit with no provenance: the value now, C, is the unsigned
    edit's, so nobody is named (the warning then says "by an edit that names no author"), not Ann."""
    score = SimpleNamespace(value="C", history=[_entry("I"), _entry("P", "ann", "partial"), _entry("C")])
    assert _edit_of(score) == ("I", "C", "", "")


def _edited(score_name: str, values: str) -> Any:
    """The score ``score_name`` of a sample whose scorer gave ``graded`` = I, after Inspect's own ``edit_score``
    gave it each value of ``values`` in turn with no provenance (``ScoreEdit``'s default), as a notebook does."""
    pytest.importorskip("inspect_ai")
    from inspect_ai.log import EvalSample, edit_score
    from inspect_ai.scorer import Score, ScoreEdit

    sample = EvalSample(id="p3", epoch=1, input="Question 3.", target="ok", scores={"graded": Score(value="I")})
    log = SimpleNamespace(samples=[sample])  # all edit_score reads of a log without recomputing its metrics
    for value in values:
        edit_score(log, "p3", score_name, ScoreEdit(value=value), recompute_metrics=False)  # type: ignore[arg-type]
    # as a log file holds it: written to JSON and read back (a None field comes back as ScoreEdit's default)
    return EvalSample.model_validate_json(sample.model_dump_json(exclude_none=True)).scores[score_name]


def test_a_score_added_by_unsigned_inspect_edits_is_said_however_often_it_was_edited() -> None:
    """``review`` is no scorer's: added to p3 as I with no provenance, then edited to C and back to I.
    Its history is three unsigned edits, the first taken for the scorer's own I, so the score read as put back:
    no word, and a criterion made by hand was gated. By hand: from None (no scorer) to I, by nobody named."""
    assert _edit_of(_edited("review", "ICI")) == (None, "I", "", "")
    assert _edit_of(_edited("review", "IC")) == (None, "C", "", "")  # was: from 'I' to 'C', an I no scorer gave
    assert _edit_of(_edited("review", "I")) == (None, "I", "", "")


def test_the_scorers_own_score_edited_and_put_back_by_unsigned_inspect_edits_is_not_said() -> None:
    """The scorer's I kept by ``edit_score`` (its metadata ``{}``), edited to C and back to I: the value is the
    scorer's, nothing to say; edited to C alone: from I to C."""
    assert _edit_of(_edited("graded", "CI")) is None
    assert _edit_of(_edited("graded", "C")) == ("I", "C", "", "")


# -- which names the eval scored a sample under ---------------------------------------------------------------------
def _score_event(scorer: str | None) -> SimpleNamespace:
    return SimpleNamespace(event="score", scorer=scorer)


def test_the_names_an_inspect_eval_scored_under_are_its_scorers_and_its_score_events() -> None:
    """By hand: ``graded`` declared; the solver's ``self_check`` has a score event; ``review`` has only a
    ``score_edit`` event (edit_score's): the eval's names are graded and self_check, not review."""
    from oloproof_nb._analysis.inspect_records import _eval_scores

    sample = SimpleNamespace(events=[SimpleNamespace(event="sample_init"), _score_event("graded"),
                                     _score_event("self_check"), SimpleNamespace(event="score_edit")])
    assert _eval_scores(sample, {"graded"}) == {"graded", "self_check"}
    # a sample that raised before it was scored: its scorers' names, no other
    assert _eval_scores(SimpleNamespace(events=[SimpleNamespace(event="sample_init")]), {"graded"}) == {"graded"}


def test_inspect_events_that_cannot_say_which_scores_the_eval_gave_leave_it_unknown() -> None:
    """No events kept, or a score event naming no scorer (an older Inspect's): None, so a solver's score under an
    undeclared name is not taken for one added by hand (the history decides, as before)."""
    from oloproof_nb._analysis.inspect_records import _eval_scores

    assert _eval_scores(SimpleNamespace(events=[]), {"graded"}) is None
    assert _eval_scores(SimpleNamespace(), {"graded"}) is None
    assert _eval_scores(SimpleNamespace(events=[_score_event("graded"), _score_event(None)]), {"graded"}) is None
