"""What every state check of a suite gives alike: the ``ignore`` patterns and ``lists`` rules by which
a control replay's state and a ``same_state`` pair are compared."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._core.compare import ordered_through
from .._core.evaluator import Evaluator
from .._core.lists import ORDERED, ListMatch
from .._core.paths import parse_path, parse_pattern, pattern_matches

__all__ = ["ignored_paths", "shared_list_rules"]


def ignored_paths(evaluators: Sequence[Evaluator]) -> tuple[str, ...]:
    """The ``ignore:`` patterns every ``state_matches`` check in ``changes`` or ``whole`` mode (the modes that judge
    paths ``expected.state`` does not list) gives, in the first one's order: where a control replay's state
    (``fault_recovery``) and a ``same_state`` pair may differ too — outside the paths another check judges
    (``evaluators.state.pinned_paths``), which are compared under these patterns as everywhere else. Read by type
    and attribute, so this layer, which finds the checks that cannot fail at load, does not import the evaluators.

    A pattern only some of those checks give is compared (a path one check ignores and another judges must
    reproduce), and the patterns are matched as written, not as the paths they cover: ``refunds.*.at`` in one
    check and ``**.at`` in another leave nothing out. Wrong either way, that is stricter, never looser.

    Examples
    --------
    >>> from types import SimpleNamespace as Check
    >>> stamp = Check(type="state_matches", mode="changes", ignore=["refunds.*.at", "log"])
    >>> ignored_paths([stamp, Check(type="state_matches", mode="subset", ignore=[])])
    ('refunds.*.at', 'log')
    >>> ignored_paths([stamp, Check(type="state_matches", mode="whole", ignore=["log"])])
    ('log',)
    """
    lists = [list(getattr(ev, "ignore", None) or []) for ev in evaluators
             if ev.type == "state_matches" and getattr(ev, "mode", "") in ("changes", "whole")]
    if not lists:
        return ()
    common = set(lists[0]).intersection(*lists[1:])
    return tuple(p for p in dict.fromkeys(lists[0]) if p in common)


def shared_list_rules(evaluators: Sequence[Evaluator]) -> dict[str, ListMatch]:
    """The ``lists:`` rules every ``state_matches`` check gives: how a control replay's state (``fault_recovery``)
    and a ``same_state`` pair are aligned (:func:`~oloproof_nb._core.compare.list_diff`), so a list whose order
    no check judges (``unordered``, ``by_key``) may come back in another order. Read by type and attribute, as
    :func:`ignored_paths` is.

    A rule is shared when every check gives the pattern, as written, the same rule, and gives before it only
    patterns that are shared too (first match wins: a pattern one check gives first may decide what a later one
    matches); the ``ordered`` ones are kept, for what they shadow. A pattern that may meet a ``state_unchanged``
    path (a list it matches at, inside or above the path) is made ``ordered``: that check compares its value
    exactly; so is one that may match a list a ``paths``-mode path reaches into (``tags.0``: that check reads the
    element at that position, whatever the rule). Empty when no rule but ``ordered`` is shared, or no
    ``state_matches`` check is given: every list is then compared position by position. Wrong either way, that is
    stricter, never looser.

    Examples
    --------
    >>> from types import SimpleNamespace as Check
    >>> def check(**lists): return Check(type="state_matches", list_rules=lambda: lists)
    >>> shared_list_rules([check(tags=ListMatch("unordered")), check(tags=ListMatch("unordered"), log=ORDERED)])
    {'tags': ListMatch(how='unordered', key=None)}
    >>> shared_list_rules([check(tags=ListMatch("unordered")), check(tags=ListMatch("by_key", "id"))])
    {}
    >>> shared_list_rules([check(tags=ListMatch("unordered")), Check(type="state_unchanged", paths=["tags"])])
    {}
    >>> first = check(tags=ListMatch("unordered"))
    >>> first.mode, first.paths = "paths", ["tags.0"]
    >>> shared_list_rules([check(tags=ListMatch("unordered")), first])
    {}
    """
    checks: list[Any] = [ev for ev in evaluators if ev.type == "state_matches"]
    rules = [dict(ev.list_rules()) for ev in checks]
    shared: dict[str, ListMatch] = {}
    for pattern, rule in (rules[0] if rules else {}).items():
        if not all(other.get(pattern) == rule and all(p in shared for p in list(other)[:list(other).index(pattern)])
                   for other in rules):
            break  # a later pattern of this check is preceded by this one, which is not shared
        shared[pattern] = rule
    exact = [parse_path(path) for ev in evaluators if ev.type == "state_unchanged" for path in getattr(ev, "paths", ())]
    shared = {p: ORDERED if any(_may_meet(parse_pattern(p), keys) for keys in exact) else r for p, r in shared.items()}
    # a paths-mode path is compared by its check's rules (shared here), but one that reaches into a list reads the
    # element at a position: a list it passes through is judged in order
    shared = ordered_through(shared, [path for ev in checks if getattr(ev, "mode", None) == "paths"
                                      for path in getattr(ev, "paths", None) or ()])
    return shared if any(rule != ORDERED for rule in shared.values()) else {}


def _may_meet(pattern: tuple[str, ...], keys: tuple[str, ...]) -> bool:
    """Whether a list ``pattern`` matches may lie at, inside or above the exact path ``keys`` (a ``**`` in the
    pattern: it may)."""
    if "**" in pattern:
        return True
    if any(pattern_matches(pattern, keys[:i]) for i in range(1, len(keys) + 1)):
        return True
    return len(pattern) > len(keys) and pattern_matches(pattern[:len(keys)], keys)
