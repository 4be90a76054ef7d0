"""``errors.cut_middle``, which keeps every error line within ``MESSAGE_LIMIT``: the boundary at the limit itself."""

from __future__ import annotations

from pathlib import Path

from oloproof_nb.errors import MESSAGE_LIMIT, OloproofError, cut_middle


def test_a_message_of_exactly_the_limit_is_kept_one_more_is_cut() -> None:
    """2,000 characters are kept whole; 2,001 are cut to 2,000 (a hand count: 999 head, "…", 1,000 tail)."""
    assert MESSAGE_LIMIT == 2000
    exact = "a" * 1000 + "b" * 1000
    assert cut_middle(exact) == exact and str(OloproofError(exact)) == exact
    over = "a" * 1000 + "b" * 1001
    assert cut_middle(over) == "a" * 999 + "…" + "b" * 1000
    assert str(OloproofError(over)) == "a" * 999 + "…" + "b" * 1000


def test_an_error_of_no_text_or_of_several_arguments_is_kept_as_given() -> None:
    """Only one text argument is cut: ``OloproofError()`` (raised bare) and one of a path or of two arguments
    are built as ``ValueError`` builds them (cutting them raised IndexError or TypeError instead)."""
    assert str(OloproofError()) == "" and OloproofError().args == ()
    assert str(OloproofError(Path("/suite/cases.jsonl"))) == "/suite/cases.jsonl"
    assert OloproofError("x" * 3000, 7).args == ("x" * 3000, 7)
