"""``_core/trajectory.py``: what "compared without case" and "one of status_values" mean."""

from __future__ import annotations

from oloproof_nb._core.trajectory import ToolErrorRule


def test_status_values_are_compared_by_unicode_case_folding() -> None:
    """Without case is Unicode's case folding (``str.casefold``: "ß" folds to "ss"), not ``lower`` (which keeps
    "ß"): a suite's status value "GROSS" meets a result's "groß" and "Gross" alike."""
    rule = ToolErrorRule(status_values=["GROSS"])
    assert rule.is_error({"status": "groß"}) is True
    assert rule.is_error({"status": "Gross"}) is True
    assert rule.is_error({"status": "gros"}) is False


def test_a_status_that_is_no_string_is_no_status_value() -> None:
    """``status_values`` are strings: a number or a flag under ``status`` is data, not the text "500" or "true"."""
    rule = ToolErrorRule(status_values=["500", "true"])
    assert rule.is_error({"status": "500"}) is True
    assert rule.is_error({"status": 500}) is False
    assert rule.is_error({"status": True}) is False
