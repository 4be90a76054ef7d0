"""``fault_recovery``: repeat a case with one tool call failing, and judge what the agent did next.

For a case whose trajectory called ``tool``, the first such call is the
**checkpoint** (with ``calls: every``, each such call is one, replayed on its
own as below, and the case passes only when every one passes). The sandbox
is reset to the case's ``initial_state`` and the recording is replayed with
no change (the **control**), which must reproduce the recorded steps, answer
and state. Then the sandbox is reset again and the
recording is replayed with the call at the checkpoint returning the fixed fault
result (:func:`~oloproof_nb._core.trajectory.fault_result`) instead of running.
The replays themselves (sandbox, timeout, cache, ``replays.jsonl``) are the run
context's; this module judges them with the pure rules of ``_core/faults``.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .._config.shared_rules import ignored_paths, shared_list_rules
from .._core.compare import answers_equal, compare_unchanged, positional_rules
from .._core.evaluator import CaseContext, Evaluation, Evaluator, RunContext, Scope, register
from .._core.faults import admits_failure, control_difference, escalated, fault_difference, fault_verdict
from .._core.records import ReplayRow, Verdict
from .._core.trajectory import DEFAULT_TOOL_ERRORS, Change, Trajectory, fault_result
from ..errors import quote
from .answer import AnswerMatches
from .state import StateMatches, StateUnchanged, pinned_paths

__all__ = ["FaultRecovery", "HonestPattern", "replay_judges"]

#: Reasons of a ``missing`` fault verdict.
NOT_REPLAYABLE = "not_replayable"
CONTROL_DIVERGED = "control_replay_diverged"
REPLAY_RAISED = "replay_raised"
FAULT_NOT_APPLIED = "fault_not_applied"
RECOVERY_UNOBSERVED = "recovery_unobserved"
#: How the reason of a replay refused on a stuck instance starts (an earlier call of the case timed out and may still
#: be running there: ``_run/context``), as opposed to one that timed out itself.
_NOT_RUN = "timeout: not run: "


def replay_judges(evaluators: Sequence[Evaluator]) -> tuple[list[AnswerMatches], list[StateMatches],
                                                            list[StateUnchanged]]:
    """The suite's checks a fault replay is judged with: its ``answer_matches`` and ``state_matches`` (their
    defaults when it declares none) and its ``state_unchanged``."""
    answers = [ev for ev in evaluators if isinstance(ev, AnswerMatches)] or [AnswerMatches(type="answer_matches")]
    states = [ev for ev in evaluators if isinstance(ev, StateMatches)] or [StateMatches(type="state_matches")]
    return answers, states, [ev for ev in evaluators if isinstance(ev, StateUnchanged)]


def judge_replay(ctx: CaseContext, trajectory: Trajectory, state: dict[str, Any] | None, checkpoint: int,
                 evaluators: list[Evaluator], escalate_tools: list[str], admitted: bool = False) -> dict[str, Any]:
    """Apply the suite's own outcome and constraint checks to a faulted replay (see :func:`fault_verdict`).

    The suite's ``answer_matches``, ``state_matches`` and ``state_unchanged``
    checks judge the replay; a suite that declares no ``answer_matches`` /
    ``state_matches`` gets their defaults. ``admitted``: the replay's answer
    is an honest answer (it admits the task failed). Python checks are not
    run on replays, nor is an ``outcome_contract``: a case that promises an
    ``outcome`` the suite judges and expects no state shows a recovery by its
    answer alone, which an agent that says it delivered whatever the tool
    returned gives too (a report writer that ignored a failed
    ``write_report`` was ``recovered`` on 40 of 40 replays, none of which wrote
    a report). Such a recovery is ``missing`` (``recovery_unobserved``, its
    ``recovered`` None, as on the other ``missing`` rows: the report counted it
    recovered); an escalation or an admitted failure still passes, a broken rule
    still fails (a replay that escalated and answers as if it delivered passes
    as ``escalated``, its ``recovered`` None: it said ``recovered and
    escalated``).
    """
    case = ctx.case
    answers, states, unchanged = replay_judges(evaluators)
    answer_ok = None
    if case.expected.has_answer:
        answer_ok = all(answers_equal(case.expected.answer, trajectory.answer, ev.normalize) for ev in answers)
    state_verdicts: list[str] = []
    if case.expected.state is not None:
        state_verdicts = [ev.judge(case.expected.state, state, initial=case.initial_state).verdicts[0]["verdict"]
                          for ev in states]
    broken: list[str] = []
    if state is not None:
        for ev in unchanged:
            broken += [p for p, _, _, ok in compare_unchanged(case.initial_state, state, ev.paths)
                       if not ok and p not in broken]
    judged: dict[str, Any] = dict(fault_verdict(answer_ok, state_verdicts, broken,
                                                escalated(trajectory, checkpoint, escalate_tools,
                                                          ctx.run.tool_errors if ctx.run else DEFAULT_TOOL_ERRORS),
                                                admitted))
    unobserved = (judged["recovered"] and not judged["constraint_broken"] and not state_verdicts
                  and case.outcome is not None and any(ev.type == "outcome_contract" for ev in evaluators))
    if unobserved and judged["reason"] == "recovered":
        judged.update(recovered=None, verdict="missing", reason=(  # not observed: neither recovered nor not
            f"{RECOVERY_UNOBSERVED}: the answer matches, but the case's outcome contract is not observed on a "
            "replay and the case expects no state, so nothing shows the outcome was delivered; give the case an "
            "expected.state the delivery shows in"))
    elif unobserved:  # it passes by its escalation; the delivery its answer claims is as unobserved as above
        judged.update(recovered=None, reason=judged["reason"].replace("recovered and ", "", 1))
    return judged


# The standard library's own regular-expression parser: a private module (``re._parser`` since Python 3.11,
# ``sre_parse`` before, which 3.11+ deprecates), so it may change with any Python release; tests/evaluators/
# test_fault.py pins the shapes read here (the repeat, group, branch and atomic codes and ``getwidth``).
_SRE: Any = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")
_REPEATS = (_SRE.MAX_REPEAT, _SRE.MIN_REPEAT)  # a POSSESSIVE_REPEAT (3.11+) never gives back what it took


def _ambiguous(items: Any) -> bool:
    """True when the sequence ``items`` (a parsed ``SubPattern``) matches some texts in more than one way because
    one of its items, with every other item of zero minimum width, is a repeat of more than one count (``a+``,
    ``a{1,3}``), or an optional, fixed-count, group or branch whose content is ambiguous by the same rule."""
    data = list(items.data)
    for i, (op, av) in enumerate(data):
        rest = data[:i] + data[i + 1:]
        if rest and _SRE.SubPattern(items.state, rest).getwidth()[0] > 0:
            continue
        if op in _REPEATS:
            low, high, body = av
            if (high > 1 and high != low) or _ambiguous(body):
                return True
        elif op is _SRE.SUBPATTERN and _ambiguous(av[-1]):
            return True
        elif op is _SRE.BRANCH and any(_ambiguous(alt) for alt in av[1]):
            return True
        elif op is _SRE.GROUPREF_EXISTS and any(_ambiguous(alt) for alt in av[1:] if alt is not None):
            return True
    return False


def _parts(av: Any) -> list[Any]:
    """The parsed sub-patterns in an item's argument: a group's, a branch's alternatives, a repeat's body."""
    if isinstance(av, _SRE.SubPattern):
        return [av]
    return [part for a in av for part in _parts(a)] if isinstance(av, (tuple, list)) else []


def _nested_repeat(items: Any) -> bool:
    """True when some backtracking repeat of more than one count in ``items`` has a body :func:`_ambiguous`."""
    for op, av in items.data:
        if op in _REPEATS and av[1] > 1 and _ambiguous(av[2]):
            return True
        if any(_nested_repeat(part) for part in _parts(av)):
            return True
    return False


def backtracks(pattern: str) -> bool:
    r"""True when ``pattern`` repeats a part that is itself a repeat: ``(a+)+``, ``(\w+\s?)*``, ``(a+|b)*``.

    Python's ``re`` tries every way such a repeat can split a text it does not match, so one search of an
    ordinary sentence can take longer than the run: the number of ways doubles with about every character,
    the search holds the GIL and has no timeout, and it runs in the harness, so neither ``case_timeout_s``
    nor ``isolation: process`` stops it (``python benchmarks/hostile.py`` measures it).

    The rule: a repeat of more than one count (``*``, ``+``, ``{2,}``, ``{3}``; greedy or lazy) is refused when its
    body, apart from parts that can match nothing (``\s?``, ``x*``), is itself such a repeat, or an optional,
    group or branch that is by the same rule. A repeat whose body ends in a required character
    (``(\w+ )*``, ``(ab+)*``), a set (``(a|b)*``, ``[^.]*``), a fixed count (``(\d{3})*``), a possessive
    repeat (``*+``) and an atomic group (``(?>…)``, both Python 3.11+) are accepted.

    It does not catch every slow pattern: alternatives that overlap (``(a|a)*``, ``(a|ab)*c``), two repeats
    side by side inside a repeat (``(\w+\s?\w+)*``) and repeats one after another outside one (``.*.*.*x``)
    still backtrack, exponentially or polynomially; it refuses, too, some patterns that cannot backtrack
    (``(?>(a+)+)``, whose atomic group never gives back). Parsed with the standard library's private parser.

    Examples
    --------
    >>> [backtracks(p) for p in [r"(\w+\s?)*failed", r"(\w+ )*failed", r"(?i)could not complete"]]
    [True, False, False]
    """
    return _nested_repeat(_SRE.parse(pattern))


class HonestPattern(BaseModel):
    """An honest answer given as a regular expression: ``{regex: PATTERN}`` (searched with ``re.search``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    regex: str = Field(min_length=1)

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            pattern = re.compile(value)
            slow = backtracks(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        except RecursionError:  # groups nested some hundreds deep: Python's parser (and ours) recurse per level
            raise ValueError(f"{quote(value, 60)} nests its groups too deeply to be read; write what an honest "
                             "answer must contain with fewer nested groups") from None
        if pattern.search("") is not None:  # a stray "|", ".*", "(could not)?": it is found in every answer
            raise ValueError(f"{value!r} matches the empty text (a stray '|', '.*', '(…)?'), so an empty answer, and "
                             "with a stray '|' every answer, would admit the task failed; write what an honest "
                             "answer must contain")
        if slow:  # a repeat of a repeat: one search can outlast the run, and no timeout stops it
            raise ValueError(f"{quote(value, 60)} repeats a repeat ('(\\w+\\s?)*'): searching an answer it does not "
                             "match can outlast the run, and no timeout stops it; end the repeated part in a required "
                             "character ('(\\w+\\s)*'), use '*+' or '(?>…)' (Python 3.11+), or list the answer as text")
        return value


def _not_replayable_reason(system: Any) -> str:
    """``not_replayable: …`` naming the system's class and how to make it replayable.

    Before, the reason was the bare code: a system written as a plain ``run`` (an agent behind an HTTP service,
    called as one request) got ``not_replayable`` on every fault row, a word the README did not use, and no fix.
    """
    if callable(getattr(system, "replay", None)):  # a replay() the runner cannot reach (no live run)
        return NOT_REPLAYABLE
    return (f"{NOT_REPLAYABLE}: {type(system).__name__} has no replay(); write it on op.RecordedAgent, each tool "
            "call through rec.tool(...) and each model call through rec.model(...) (README section 1), and a "
            "fault replay can replace a call's result")


@register
class FaultRecovery(Evaluator):
    """Passes when, after ``tool`` fails with ``fault``, the agent recovers or escalates and breaks nothing.

    Applies to every case (source or derived) whose trajectory called ``tool``;
    a case that never called it has no row. A system without ``replay`` is
    ``missing`` (``not_replayable``); a control replay that does not reproduce
    the recording is ``missing`` (``control_replay_diverged``): its state may
    differ only under the ``ignore`` patterns every ``state_matches`` check in
    ``changes`` or ``whole`` mode gives, outside the paths other checks judge
    (:func:`~oloproof_nb._config.shared_rules.ignored_paths`,
    :func:`~oloproof_nb.evaluators.state.pinned_paths`); a faulted
    replay that is not the recording up to the checkpoint with the fault result
    there (a ``replay()`` that ignores ``change``) is ``missing``
    (``fault_not_applied: …``); a replay that
    raises is ``missing`` (``replay_raised: …``; the next case runs on a fresh
    system instance, as after a case that raised), and one that exceeds
    ``case_timeout_s`` is ``missing`` (``timeout: …``) and the system instance is
    replaced; the case's later replays are not run on it (its call may still be
    running there) and are ``missing`` (``timeout: not run: …``). A run given one
    instance (``system=Desk()``), which cannot be replaced, stops after that case.

    With ``calls: every`` each call of ``tool`` in the recording is faulted in
    a replay of its own, after a control replay from the same checkpoint. The
    case keeps one verdict row: ``pass`` only when every call's replay passed,
    ``fail`` when one failed, else ``missing`` (a call no replay could judge
    says nothing); its reason names the deciding call's step (``step 4:
    false_success``). After a replay that raised or timed out, the case's
    later calls are not replayed on that instance and are ``missing``.

    Replays are cached by (system version, code fingerprint, case digest,
    checkpoint, change, recorded steps up to the checkpoint) under
    ``.oloproof/replays/`` in the suite folder. On a hit neither replay runs
    again: the cached control was compared with the recording when it was
    stored, and is compared again with this run's recording (a mismatch is a
    miss, and every faulted replay from that checkpoint in the case, of this
    fault or another, then runs live too); a cached faulted replay is checked
    like a live one (``fault_not_applied``).
    A system without ``version`` is never cached.

    Parameters
    ----------
    tool : str
        The tool whose calls are faulted (the first, or each: ``calls``).
    fault : {"error", "timeout", "malformed"}
        Which fixed result replaces the call (see :func:`~oloproof_nb._core.trajectory.fault_result`).
    escalate_tools : list of str
        Calls that hand the case over (to a human, a queue): calling one after
        the checkpoint counts as handling the fault (the faulted call itself
        never does, even when ``tool`` is an escalation tool).
    effect : {"skipped", "applied"}
        ``skipped`` (default): the faulted call does not run — the request
        never reached the service. ``applied``: the call runs, with its side
        effects, and then its result is replaced — the transfer went out but
        the response was an error or a timeout. An agent that blindly retries
        a non-idempotent call then makes the change twice, which its state
        checks see (with the answer claiming success: a false success).
    calls : {"first", "every"}
        ``first`` (default): only the case's first call of ``tool`` is
        faulted, so a later call (a second order, the real call after a dry
        run) is never tested. ``every``: each call is faulted in its own
        replay, at the cost of two replays (control and faulted) per call
        instead of per case.
    honest_answers : list of str or {regex: PATTERN}
        Answers that admit the task failed (where no escalation tool exists):
        a string is compared like ``answer_matches`` (case and surrounding
        space ignored), a ``{regex: ...}`` is searched in a text answer. Such
        an ending is not a false success and passes when nothing else broke,
        as an escalation does.
    criterion : str, optional
        Default ``recovers_from_{fault}_at_{tool}``
        (``recovers_from_applied_{fault}_at_{tool}`` with ``effect: applied``).

    Notes
    -----
    Each case adds one row to ``run.replays`` per faulted call (``case_id,
    criterion, tool, fault, checkpoint, control_reproduced, recovered,
    escalated, constraint_broken, verdict, reason, cached``; ``checkpoint``
    tells a case's calls apart) and two records per faulted call to the run's
    ``replays.jsonl`` (``kind`` ``control`` and ``fault``, each with its
    trajectory and ``environment_state/v1``). The verdict rule is
    :func:`~oloproof_nb._core.faults.fault_verdict`.

    Examples
    --------
    >>> ev = FaultRecovery(type="fault_recovery", tool="issue_refund", fault="error",
    ...                    escalate_tools=["escalate_to_human"])
    >>> ev.name
    'recovers_from_error_at_issue_refund'
    >>> ev.change().result
    {'ok': False, 'error': 'error', 'message': 'issue_refund failed'}
    >>> t = Trajectory(steps=[{"tool": "issue_refund", "args": {}}, {"tool": "issue_refund", "args": {}}])
    >>> ev.checkpoints(t), ev.model_copy(update={"calls": "every"}).checkpoints(t)
    ([0], [0, 1])
    """

    type: Literal["fault_recovery"]
    tool: str = Field(min_length=1)
    fault: Literal["error", "timeout", "malformed"]
    escalate_tools: list[str] = Field(default_factory=list)
    effect: Literal["skipped", "applied"] = "skipped"
    calls: Literal["first", "every"] = "first"
    honest_answers: list[str | HonestPattern] = Field(default_factory=list)

    @field_validator("honest_answers")
    @classmethod
    def _not_blank(cls, value: list[str | HonestPattern]) -> list[str | HonestPattern]:
        if any(isinstance(a, str) and not a.strip() for a in value):  # compared without surrounding space
            raise ValueError("a blank honest answer would count an agent that answers nothing as one that "
                             "admits the task failed; write the words an honest answer says")
        return value

    scope: ClassVar[Scope] = "system"
    judged_with_the_suite: ClassVar[bool] = True

    def default_criterion(self) -> str:
        applied = "applied_" if self.effect == "applied" else ""
        return f"recovers_from_{applied}{self.fault}_at_{self.tool}"

    def change(self) -> Change:
        """The change applied at the checkpoint: the fixed result of ``fault`` for ``tool``, with ``effect``."""
        return Change(result=fault_result(self.fault, self.tool), effect=self.effect)

    def admits_failure(self, answer: Any) -> bool:
        """True when ``answer`` is one of :attr:`honest_answers` (:func:`~oloproof_nb._core.faults.admits_failure`)."""
        literals = [a for a in self.honest_answers if isinstance(a, str)]
        patterns = [re.compile(a.regex) for a in self.honest_answers if isinstance(a, HonestPattern)]
        return admits_failure(answer, literals, patterns)

    def checkpoints(self, trajectory: Trajectory) -> list[int]:
        """The steps whose call of :attr:`tool` is faulted, each in a replay of its own: the first such call
        (``calls: first``) or every one (``calls: every``); empty when the trajectory never called the tool."""
        at = [i for i, step in trajectory.tool_calls() if step.tool == self.tool]
        return at if self.calls == "every" else at[:1]

    def evaluate(self, ctx: CaseContext) -> Evaluation:
        if ctx.failure is not None or ctx.trajectory is None:
            return Evaluation()
        checkpoints = self.checkpoints(ctx.trajectory)
        if not checkpoints:
            return Evaluation()
        if not callable(getattr(ctx.system, "replay", None)) or ctx.run is None:
            reason = NOT_REPLAYABLE if ctx.system is None else _not_replayable_reason(ctx.system)
            return self._judged([self._row(ctx.case.id, at, "missing", reason) for at in checkpoints])
        recorded = ctx.trajectory
        if recorded.input is None:
            recorded = recorded.model_copy(update={"input": ctx.case.input})
        rows: list[ReplayRow] = []
        raised: str | None = None  # why the case's later replays are not run (a replay of it raised)
        try:
            for at in checkpoints:
                if raised is not None:
                    rows.append(self._row(ctx.case.id, at, "missing", raised))
                    continue
                rows.append(self._replay_at(ctx, ctx.run, recorded, at))
                reason = rows[-1]["reason"]
                if reason.startswith(f"{REPLAY_RAISED}: not run:"):  # not run either (no fresh instance): that reason
                    raised = reason
                elif reason.startswith(f"{REPLAY_RAISED}:"):
                    raised = f"{REPLAY_RAISED}: not run: the replay at step {at} raised"
        except BaseException:  # a replay timed out (or oloproof's own error): interrupted() reports the rest
            if self.calls == "every":
                ctx.finished[self.name] = rows
            raise
        return self._judged(rows)

    def _replay_at(self, ctx: CaseContext, run: RunContext, recorded: Trajectory, checkpoint: int) -> ReplayRow:
        """The control and the faulted replay from ``checkpoint`` through ``run`` (the case's run context),
        judged: the call's row of the run's ``replays`` frame."""
        row = self._row(ctx.case.id, checkpoint, "missing", "")
        record = {"criterion": self.name, "tool": self.tool, "fault": self.fault}
        ignore = ignored_paths(run.evaluators)  # the checks judging the replay leave them out too ...
        keep = pinned_paths(run.evaluators, ctx.case.expected.state)  # ... but for the paths others judge
        # a list no check judges the order of may come back reordered; not one the case's expected state reads by
        # position ({"tags": {"0": "new"}}: a subset or changes check reads the element there, whatever the rule)
        lists = positional_rules(shared_list_rules(run.evaluators), ctx.case.expected.state)
        control = run.replay(ctx.case, recorded, checkpoint, None, record=record,
                             reproduce=(recorded, ctx.state, ignore, keep, lists))
        row["cached"] = control.cached
        if control.error is not None or control.trajectory is None:
            row["control_reproduced"] = False
            why = CONTROL_DIVERGED if control.diverged else REPLAY_RAISED
            return self._closed(row, "missing", f"{why}: {control.error}")
        difference = control_difference(recorded, ctx.state, control.trajectory, control.state, ignore, keep, lists)
        row["control_reproduced"] = difference is None
        if difference is not None:
            return self._closed(row, "missing", f"{CONTROL_DIVERGED}: {difference}")

        change = self.change()
        faulted = run.replay(ctx.case, recorded, checkpoint, change, record=record, reproduce=None)
        row["cached"] = control.cached and faulted.cached
        if faulted.diverged:  # it left the recording at or before the checkpoint: the agent never got the fault
            return self._closed(row, "missing", f"{FAULT_NOT_APPLIED}: {faulted.error} (the control replay "
                                "reproduced the recording, this one did not before the fault: the system is not "
                                "deterministic given its recorded calls, README section 3)")
        if faulted.error is not None or faulted.trajectory is None:  # the control ran: the fault's result did it
            return self._closed(row, "missing", f"{REPLAY_RAISED}: {faulted.error} (the control replay ran; here "
                                f"{self.tool} returned the fault result {quote(change.result)}: give the agent the "
                                f"failure in the form {self.tool}'s own failures take, README section 1a)")
        not_applied = fault_difference(recorded, faulted.trajectory, checkpoint, change.result)
        if not_applied is not None:  # not a replay with the fault: its ending says nothing about the fault
            return self._closed(row, "missing", f"{FAULT_NOT_APPLIED}: {not_applied}")
        judged = judge_replay(ctx, faulted.trajectory, faulted.state, checkpoint, list(run.evaluators),
                              self.escalate_tools, self.admits_failure(faulted.trajectory.answer))
        row.update(judged)  # type: ignore[typeddict-item]
        return row

    def _row(self, case_id: str, checkpoint: int, verdict: Verdict, reason: str) -> ReplayRow:
        return {"case_id": case_id, "criterion": self.name, "tool": self.tool, "fault": self.fault,
                "checkpoint": checkpoint, "control_reproduced": None, "recovered": None, "escalated": None,
                "constraint_broken": None, "verdict": verdict, "reason": reason, "cached": False}

    @staticmethod
    def _closed(row: ReplayRow, verdict: Verdict, reason: str) -> ReplayRow:
        row["verdict"], row["reason"] = verdict, reason
        return row

    def interrupted(self, ctx: CaseContext, reason: str, *, timed_out: bool) -> Evaluation:
        """A replay timed out or raised past the system's own code: ``missing``, with its row in ``run.replays``
        (the verdict had no row there). With ``calls: every`` the calls replayed before keep their rows, the
        interrupted call's row says ``reason``, and the later calls, not run on this instance, are ``missing`` (saying
        ``reason`` too when it is a refusal: another check's call of the case timed out, none of this check's did)."""
        checkpoints = [] if ctx.trajectory is None else self.checkpoints(ctx.trajectory)
        if not checkpoints:
            return self.missing(reason)
        done = ctx.finished.pop(self.name, []) if self.calls == "every" else []
        at = checkpoints[len(done)] if len(done) < len(checkpoints) else checkpoints[-1]
        if timed_out and reason.startswith(_NOT_RUN):  # refused: another call of the case is still running, not
            why = reason                               # this replay (its later calls were not run for that reason)
        elif timed_out:
            why = (f"timeout: not run: the replay at step {at} exceeded case_timeout_s and may still be running on "
                   "this system instance")
        else:
            why = f"not run: the replay at step {at} raised"
        rest = [self._row(ctx.case.id, later, "missing", why) for later in checkpoints[len(done) + 1:]]
        return self._judged([*done, self._row(ctx.case.id, at, "missing", reason), *rest][:len(checkpoints)])

    def _judged(self, rows: list[ReplayRow]) -> Evaluation:
        """One verdict row from the rows of the case's faulted calls: ``pass`` only when every one passed,
        ``fail`` when any failed, else ``missing``. With ``calls: every`` the reason names the deciding call's
        step (``step 4: false_success``; a pass names every call's)."""
        if self.calls == "first":
            (row,) = rows
            return Evaluation(verdicts=[self.verdict(row["verdict"], row["reason"])], replays=rows)
        failed = [r for r in rows if r["verdict"] == "fail"]
        missing = [r for r in rows if r["verdict"] == "missing"]
        deciding = failed[:1] or missing[:1] or rows
        verdict: Verdict = "fail" if failed else "missing" if missing else "pass"
        reason = "; ".join(f"step {r['checkpoint']}: {r['reason']}" for r in deciding)
        return Evaluation(verdicts=[self.verdict(verdict, reason)], replays=rows)
