"""The pure comparison rules of the state and answer checks.

``answers_equal`` is ``answer_matches``; ``compare_state`` is ``state_matches``
(whole / paths / subset, numeric tolerance); ``compare_unchanged`` is
``state_unchanged``. Each returns plain values, so replays, pairs and the
evaluators judge with the same rules.
"""

from __future__ import annotations

from typing import Any

from .paths import ABSENT, flatten, get_path, values_equal

__all__ = ["answers_equal", "compare_state", "compare_unchanged", "Row", "NO_STATE"]

#: Reason of a state verdict when the system recorded no state.
NO_STATE = "no_state_recorded"

def _norm(value: Any) -> Any:
    return value.strip().casefold() if isinstance(value, str) else value


def answers_equal(expected: Any, actual: Any, normalize: bool = True) -> bool:
    """True when ``actual`` equals ``expected``; strings compared without case and surrounding space.

    Examples
    --------
    >>> answers_equal("Refunded", "  refunded\\n"), answers_equal("refunded", "refused")
    (True, False)
    """
    if normalize:
        expected, actual = _norm(expected), _norm(actual)
    return values_equal(expected, actual)


Row = tuple[str, Any, Any, bool]


def compare_state(expected: dict[str, Any], actual: dict[str, Any], mode: str = "subset",
                  paths: list[str] | None = None, tolerance: float | None = None) -> list[Row]:
    """Compare a recorded state with an expected one, leaf by leaf.

    Parameters
    ----------
    expected, actual : dict
        ``expected.state`` of the case and the state the case left.
    mode : {"whole", "paths", "subset"}
        ``whole``: every leaf of either state must be equal (absent on one side
        fails); ``paths``: only the declared ``paths`` (absent must stay absent);
        ``subset``: every leaf of ``expected`` must be present and equal.
    tolerance : float, optional
        Absolute tolerance for numeric leaves.

    Returns
    -------
    list of (path, expected, actual, ok)
        One row per compared path, :data:`~oloproof_nb.paths.ABSENT` where a
        path does not exist.

    Examples
    --------
    >>> compare_state({"o": {"s": "refunded"}}, {"o": {"s": "refunded", "n": 1}})
    [('o.s', 'refunded', 'refunded', True)]
    """
    if mode == "paths":
        rows = []
        for path in paths or []:
            e, a = get_path(expected, path), get_path(actual, path)
            rows.append((path, e, a, values_equal(e, a, tolerance)))
        return rows
    exp_leaves = flatten(expected)
    rows = []
    act_leaves = flatten(actual) if mode == "whole" else None  # subset: look up only the expected paths
    for path, e in exp_leaves.items():
        a = ABSENT if act_leaves is None else act_leaves.get(path, ABSENT)
        if a is ABSENT:
            a = get_path(actual, path)  # subset mode, or a non-leaf subtree where a leaf was expected
        rows.append((path, e, a, values_equal(e, a, tolerance)))
    if act_leaves is not None:  # whole mode: leaves found but not expected fail too
        for path, a in act_leaves.items():
            if path not in exp_leaves:
                rows.append((path, get_path(expected, path), a, False))
    return rows


def compare_unchanged(initial: dict[str, Any], actual: dict[str, Any], paths: list[str]) -> list[Row]:
    """For each path, compare its value in ``initial`` with its value after the case.

    A path absent before must stay absent; a subtree must stay equal as a whole.

    Examples
    --------
    >>> compare_unchanged({"o": {"x": 1}}, {"o": {"x": 1, "y": 2}}, ["o.x", "o.y"])
    [('o.x', 1, 1, True), ('o.y', <absent>, 2, False)]
    """
    rows = []
    for path in paths:
        before, after = get_path(initial, path), get_path(actual, path)
        rows.append((path, before, after, values_equal(before, after)))
    return rows
