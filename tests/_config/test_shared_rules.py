"""The ``lists`` rules every state check shares (oloproof_nb._config.shared_rules)."""

from __future__ import annotations

from oloproof_nb.evaluators import StateMatches, StateUnchanged


def test_a_double_star_list_rule_meets_a_state_unchanged_path_above_its_deeper_lists() -> None:
    """``**.tags`` matches a list at any depth: ``m.x.tags`` lies inside the ``state_unchanged`` path ``m.x``,
    which compares it exactly, so the rule is not shared (``_may_meet``: a ``**`` in the pattern may meet any
    path). Its own prefix does not reach below ``m.x`` (without the ``**`` rule it was
    shared)."""
    from oloproof_nb._config.shared_rules import shared_list_rules
    from oloproof_nb._core.lists import ListMatch

    rule = StateMatches(type="state_matches", mode="changes", lists={"**.tags": "unordered"})
    assert shared_list_rules([rule]) == {"**.tags": ListMatch("unordered")}
    assert shared_list_rules([rule, StateUnchanged(type="state_unchanged", paths=["m.x"])]) == {}
