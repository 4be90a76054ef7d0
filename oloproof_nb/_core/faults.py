"""The pure rules of a fault replay: did the control reproduce the recording, and how did the agent end?"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

from ..errors import quote_value
from .compare import answers_equal, list_diff
from .jsonsafe import to_json
from .lists import ListMatch
from .paths import (
    format_path,
    get_path,
    leaf_diff,
    list_index,
    outside_patterns,
    parse_path,
    parse_pattern,
    pattern_matches,
    values_equal,
)
from .trajectory import DEFAULT_TOOL_ERRORS, ToolCall, ToolErrorRule, Trajectory, same_raise

__all__ = ["control_difference", "fault_difference", "fault_verdict", "escalated", "admits_failure",
           "FaultJudgement"]


def _json(trajectory: Trajectory) -> dict[str, Any]:
    return trajectory.model_dump(mode="json", exclude={"input"})


def _same_step(recorded: dict[str, Any], replayed: dict[str, Any]) -> bool:
    """Whether a replayed step (its JSON form) repeats a recorded one: equal, or the same call raising an exception
    of the same class on both sides (its text is not compared, as the Recorder does not: it may hold a time or an
    address).

    Examples
    --------
    >>> at = {"kind": "tool_call", "tool": "refund", "args": {}}
    >>> def raised(text): return {**at, "result": {"ok": False, "error": text, "raised": "Refused"}}
    >>> _same_step(raised("Refused: [10:01] no"), raised("Refused: [10:02] no"))
    True
    >>> _same_step(raised("Refused: no"), {**at, "result": {"ok": False, "error": "x", "raised": "KeyError"}})
    False
    """
    if values_equal(recorded, replayed):
        return True
    rec, rep = recorded.get("result"), replayed.get("result")
    if not same_raise(rec, rep):
        return False
    return values_equal({k: v for k, v in recorded.items() if k != "result"},
                        {k: v for k, v in replayed.items() if k != "result"})


def _step_text(step: dict[str, Any] | None) -> str:
    """One recorded step (its JSON form) in a few words, for a divergence message."""
    if step is None:
        return "no step"
    if step.get("kind") == "tool_call":
        return f"tool {step.get('tool')}({quote_value(step.get('args') or {})}) -> {quote_value(step.get('result'))}"
    if step.get("name"):
        return f"model call {step['name']} -> {quote_value(step.get('content'))}"
    return f"{step.get('role')} message {quote_value(step.get('content'))}"


def control_difference(recorded: Trajectory, recorded_state: dict[str, Any] | None, replayed: Trajectory,
                       replayed_state: dict[str, Any] | None, ignore: Sequence[str] = (),
                       keep: Sequence[str] = (), lists: Mapping[str, ListMatch] | None = None) -> str | None:
    """How a control replay differs from the recording, or None when it reproduces it.

    Steps (tool, arguments, results; model calls and their outputs), the final
    answer, the status and the recorded state are compared after JSON
    normalisation, with :func:`~oloproof_nb._core.paths.values_equal`; a tool call
    that raised must raise an exception of the same class, whatever its text. A state leaf
    under one of the ``ignore`` path patterns (the ``state_matches`` ``ignore:``
    patterns no check judges, ``_config.shared_rules.ignored_paths``; e.g. a
    timestamp a database stamps with its own clock) is not compared: no check
    reads it, and no replay could reproduce it; unless it lies at, inside or
    above one of the ``keep`` paths (``evaluators.state.pinned_paths``: a
    path another check judges), which must reproduce. The state also reproduces when it does so once the lists
    the ``lists`` rules match (the ``unordered`` and ``by_key`` rules every state check gives,
    ``_config.shared_rules.shared_list_rules``) are aligned by them (:func:`~oloproof_nb._core.compare.list_diff`): such
    a list may come back in another order; a ``keep`` path that reaches into such a list is then kept at every
    position of it (:func:`_kept_anywhere`: it names an element by position). (Position by position is tried
    first; aligned, an ``unordered`` list meets equal elements first, then elements equal but for what the
    ``ignore`` patterns hide, so one whose elements hold an ignored stamp may come back in another order.)

    Returns
    -------
    str or None
        e.g. ``"step 3 differs: recorded tool pay({'amount': 5}) -> {'ok': True}; replayed no step"``
        (each side in a few words, values cut to 200 characters), ``"answer differs"``,
        ``"state differs at orders.ord-001.status"``.

    Examples
    --------
    >>> a = Trajectory(steps=[ToolCall(tool="t", result=1)], answer="ok")
    >>> control_difference(a, {"x": 1}, a, {"x": 1}) is None
    True
    >>> control_difference(a, {"x": 1}, a, {"x": 2})
    'state differs at x'
    >>> control_difference(a, {"x": 1, "at": "t0"}, a, {"x": 1, "at": "t1"}, ignore=["at"]) is None
    True
    >>> unordered = {"x": ListMatch("unordered")}
    >>> control_difference(a, {"x": [1, 2]}, a, {"x": [2, 1]}, lists=unordered) is None
    True
    >>> control_difference(a, {"x": [{"at": 1}]}, a, {"x": [{"at": 2}]}, ["x.*.at"], lists=unordered) is None
    True
    """
    rec, rep = _json(recorded), _json(replayed)
    for i in range(max(len(rec["steps"]), len(rep["steps"]))):
        if i >= len(rec["steps"]) or i >= len(rep["steps"]) or not _same_step(rec["steps"][i], rep["steps"][i]):
            recorded_step = rec["steps"][i] if i < len(rec["steps"]) else None
            replayed_step = rep["steps"][i] if i < len(rep["steps"]) else None
            return f"step {i} differs: recorded {_step_text(recorded_step)}; replayed {_step_text(replayed_step)}"
    for key in ("answer", "status"):
        if not values_equal(rec[key], rep[key]):
            return f"{key} differs"
    if (recorded_state is None) != (replayed_state is None):
        return "state differs (recorded on one side only)"
    if recorded_state is not None and not values_equal(recorded_state, replayed_state):
        diff = outside_patterns([path for path, _, _ in leaf_diff(recorded_state, replayed_state)], ignore, keep)
        if diff and lists and not outside_patterns(  # a kept element may have moved: kept at every position
                [path for path, _, _ in list_diff(recorded_state, replayed_state, lists, ignore)], ignore,
                _kept_anywhere(lists, keep, recorded_state, replayed_state)):
            return None  # aligned by the rules, the lists hold the same elements (an ignored stamp aside)
        if diff or not ignore:
            return f"state differs at {diff[0]}" if diff else "state differs"
    return None


def _kept_anywhere(lists: Mapping[str, ListMatch], keep: Sequence[str], *states: Any) -> list[str]:
    """``keep`` with each position in a list ``lists`` aligns (``unordered`` or ``by_key``) spread to every
    position that list has in either of ``states``.

    A kept path names an element by its position (a leaf of the case's expected state a ``subset`` check compares,
    ``refunds.0.at``), but the rows of the aligned lists (:func:`~oloproof_nb._core.compare.list_diff`) name each
    element at its new position: the kept element, moved, would fall under an ``ignore:`` pattern and a change a
    check judges pass as reproduced. Kept at every position, whatever element a check reads there is compared
    (stricter than the check itself, which reads one element: never looser).

    Examples
    --------
    >>> refunds = {"refunds": ListMatch("by_key", "id")}
    >>> _kept_anywhere(refunds, ["refunds.0.at", "refunds.1.at", "log"], {"refunds": [{}, {}]}, {"refunds": [{}] * 3})
    ['refunds.0.at', 'refunds.1.at', 'refunds.2.at', 'log']
    """
    rules = [(parse_pattern(p), rule) for p, rule in lists.items()]
    seen: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()

    def aligned(keys: tuple[str, ...]) -> bool:
        rule = next((rule for pattern, rule in rules if pattern_matches(pattern, keys)), None)
        return rule is not None and rule.how != "ordered"

    def spread(done: tuple[str, ...], rest: tuple[str, ...], nodes: list[Any]) -> list[tuple[str, ...]]:
        if not rest:
            return [done]
        key, lists_here = rest[0], [n for n in nodes if isinstance(n, list)]
        if lists_here and list_index(key) is not None and aligned(done):
            if (done, rest[1:]) in seen:  # refunds.1.at after refunds.0.at: every position is kept already
                return []
            seen.add((done, rest[1:]))
            return [path for i in range(max(len(n) for n in lists_here))
                    for path in spread((*done, str(i)), rest[1:], [n[i] for n in lists_here if i < len(n)])]
        return spread((*done, key), rest[1:], [get_path(n, (key,)) for n in nodes])

    out = [format_path(path) for k in keep for path in spread((), parse_path(k), list(states))]
    return list(dict.fromkeys(out))


def fault_difference(recorded: Trajectory, faulted: Trajectory, checkpoint: int, result: Any) -> str | None:
    """How a faulted replay fails to be the recording with the fault at the checkpoint, or None when it is one.

    A faulted replay must repeat the recorded steps before the checkpoint, then
    make the recorded call at the checkpoint (same tool, same arguments) and
    get ``result`` (the change's result) back. A replay that does not — a
    ``replay()`` that ignores the change, or re-runs the case from scratch — says
    nothing about how the agent handles a failure: its ending would be judged as
    if the fault had happened.

    Parameters
    ----------
    recorded, faulted : Trajectory
        The recording and the faulted replay.
    checkpoint : int
        Index of the faulted call in ``recorded.steps``.
    result : Any
        The change's result (compared as JSON, with :func:`~oloproof_nb._core.paths.values_equal`).

    Returns
    -------
    str or None
        e.g. ``"step 0 differs from the recording"``, ``"step 1 returned {'ok': True}, not the fault result"``.

    Examples
    --------
    >>> rec = Trajectory(steps=[ToolCall(tool="look", result=1), ToolCall(tool="pay", result={"ok": True})])
    >>> fault = {"ok": False}
    >>> fault_difference(rec, Trajectory(steps=[rec.steps[0], ToolCall(tool="pay", result=fault)]), 1, fault) is None
    True
    >>> fault_difference(rec, rec, 1, fault)
    "step 1 returned {'ok': True}, not the fault result"
    """
    rec, rep = _json(recorded), _json(faulted)
    if len(rep["steps"]) <= checkpoint:
        return f"the replay ended after {len(rep['steps'])} steps, before the checkpoint (step {checkpoint})"
    for i in range(checkpoint):
        if not _same_step(rec["steps"][i], rep["steps"][i]):
            return f"step {i} differs from the recording"
    want = {k: v for k, v in rec["steps"][checkpoint].items() if k != "result"}
    got = rep["steps"][checkpoint]
    if not values_equal(want, {k: v for k, v in got.items() if k != "result"}):
        return f"step {checkpoint} is not the recorded call"
    if not values_equal(to_json(result, what="the fault result"), got.get("result")):
        return f"step {checkpoint} returned {got.get('result')!r}, not the fault result"
    return None


class FaultJudgement(TypedDict):
    """The judged columns of a ``run.replays`` row."""

    recovered: bool
    escalated: bool
    constraint_broken: bool
    verdict: Literal["pass", "fail"]
    reason: str


def escalated(trajectory: Trajectory, checkpoint: int, escalate_tools: Sequence[str],
              tool_errors: ToolErrorRule = DEFAULT_TOOL_ERRORS) -> bool:
    """True when a call of one of ``escalate_tools`` after the checkpoint succeeds.

    The call at the checkpoint is the faulted one: when the faulted tool is
    itself an escalation tool, its failed call hands nothing over. Nor does a
    later escalation whose own result reports a failure under ``tool_errors``
    (the suite's rule): the case was not handed over.

    Examples
    --------
    >>> t = Trajectory(steps=[ToolCall(tool="refund"), ToolCall(tool="escalate_to_human")])
    >>> escalated(t, 0, ["escalate_to_human"]), escalated(t, 0, [])
    (True, False)
    >>> escalated(t, 1, ["escalate_to_human"])   # the faulted escalation itself
    False
    >>> failed = Trajectory(steps=[ToolCall(tool="refund"),
    ...                            ToolCall(tool="escalate_to_human", result={"ok": False, "error": "queue_down"})])
    >>> escalated(failed, 0, ["escalate_to_human"])   # the escalation failed: nothing was handed over
    False
    """
    return any(isinstance(step, ToolCall) and step.tool in escalate_tools and not tool_errors.is_error(step.result)
               for step in trajectory.steps[checkpoint + 1:])


def admits_failure(answer: Any, answers: Sequence[Any], patterns: Sequence[re.Pattern[str]]) -> bool:
    """True when ``answer`` is one of the honest ``answers`` or a text one of ``patterns`` finds.

    ``answers`` are compared like ``answer_matches`` (strings without case and
    surrounding space); ``patterns`` are searched (``re.search``) in a text answer.

    Examples
    --------
    >>> admits_failure("I could NOT complete the transfer.", [], [re.compile(r"(?i)could not complete")])
    True
    >>> admits_failure("Failed ", ["failed"], []), admits_failure("done", ["failed"], [])
    (True, False)
    """
    if any(answers_equal(honest, answer) for honest in answers):
        return True
    return isinstance(answer, str) and any(p.search(answer) for p in patterns)


def fault_verdict(answer_ok: bool | None, state_verdicts: Sequence[str], broken: Sequence[str],
                  escalated: bool, admitted: bool = False) -> FaultJudgement:
    """Judge how an agent ended after a fault, from the suite's own checks applied to the faulted replay.

    Parameters
    ----------
    answer_ok : bool or None
        Whether the replay's answer equals ``expected.answer`` (None: the case expects no answer).
    state_verdicts : sequence of str
        The verdicts (``pass``/``fail``/``missing``) of the suite's ``state_matches`` checks on the
        replay's state (empty: the case expects no state).
    broken : sequence of str
        ``state_unchanged`` paths the replay changed.
    escalated : bool
        A call of an escalation tool after the checkpoint whose result reports no failure (:func:`escalated`).
    admitted : bool
        The replay's answer is one of ``fault_recovery``'s ``honest_answers``
        (it admits the task failed; see :func:`admits_failure`).

    Returns
    -------
    FaultJudgement
        ``recovered, escalated, constraint_broken, verdict, reason``.

    Notes
    -----
    recovered = every applicable outcome check passes (no applicable check: not
    recovered). A **false success** is an answer equal to ``expected.answer``
    while a state check fails. constraint_broken = false success or a broken
    path. An honest answer (``admitted``) that is not ``expected.answer`` is
    never a false success: it ends the case the way an escalation does.
    verdict = pass iff (recovered or escalated or admitted) and not
    constraint_broken.

    Examples
    --------
    >>> fault_verdict(True, ["fail"], [], False)["reason"]
    'false_success'
    >>> fault_verdict(False, [], [], True)["verdict"]
    'pass'
    >>> fault_verdict(False, ["fail"], [], False, admitted=True)["reason"]
    'admitted_failure'
    """
    checks = ([answer_ok] if answer_ok is not None else []) + [v == "pass" for v in state_verdicts]
    recovered = bool(checks) and all(checks)
    false_success = bool(answer_ok) and any(v == "fail" for v in state_verdicts)
    admitted = admitted and not answer_ok
    reasons = (["false_success"] if false_success else []) + (
        [f"constraint_broken: {', '.join(broken)}"] if broken else [])
    verdict: Literal["pass", "fail"]
    if reasons:
        verdict, reason = "fail", "; ".join(reasons)
    elif recovered or escalated or admitted:
        verdict = "pass"
        reason = " and ".join(w for w, ok in (("recovered", recovered), ("escalated", escalated),
                                              ("admitted_failure", admitted)) if ok)
    else:
        verdict, reason = "fail", "not_recovered_not_escalated"
    return {"recovered": recovered, "escalated": escalated, "constraint_broken": bool(reasons),
            "verdict": verdict, "reason": reason}
