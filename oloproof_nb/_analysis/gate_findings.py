"""Checks that cannot fail as configured, found by the gate: from what a run recorded (a ``fault_recovery`` tool no
case called, ``escalate_tools`` or ``honest_answers`` every recorded case run calls or says where nothing failed:
:func:`late_findings`) and from its settings (a threshold of 0). ``load_suite`` finds the others.
"""

from __future__ import annotations

import difflib
import unicodedata
from typing import Any

import pandas as pd

from .._config.release import ReleaseConfig
from .._core.compare import answers_equal
from ..evaluators.answer import AnswerMatches
from ..evaluators.fault import FaultRecovery, replay_judges
from .frames import ended_case_runs
from .inspect_log import is_inspect_run
from .run import Run, case_run_unit, expected_case_runs

__all__ = ["late_findings", "VACUOUS"]


#: What the reason of a criterion whose check cannot fail as configured starts with, where a table has no ``vacuous``
#: column to mark it (the command line's reason lines, a comparison's rows): its PASS says nothing about the agent.
VACUOUS = "vacuous: it cannot fail as configured"


def _fault_findings(run: Run, rows: dict[str, int]) -> dict[str, str]:
    """fault_recovery criteria whose tool no case called: criterion → finding (known only after the run)."""
    idle = [ev for ev in run.config.evaluators if ev.type == "fault_recovery" and rows.get(ev.name, 0) == 0]
    if not idle:
        return {}
    steps = run.steps
    called = sorted(set(steps.loc[steps["kind"] == "tool_call", "tool"].dropna().astype(str)))
    out = {}
    for ev in idle:
        tool = str(getattr(ev, "tool", ""))
        if tool in called:
            continue
        near = difflib.get_close_matches(tool, called, n=1, cutoff=0.6)
        hint = f"did you mean {near[0]}?" if near else f"tools called: {', '.join(called[:5]) or '(none)'}"
        twins = [name for name in called if unicodedata.normalize("NFC", name) == unicodedata.normalize("NFC", tool)]
        if twins:  # the same letters in another Unicode form: "did you mean café?" under café named no difference
            hint = (f"the system called {ascii(twins[0])}, the same letters as {ascii(tool)} in another Unicode form "
                    "(tool names are compared as written); write the name as the system records it")
        if not called:  # the tool's name may be right: the system may have failed before any call
            cases = run.cases
            ended = len(ended_case_runs(cases))
            hint = "no case called any tool" + (f" ({ended} of {len(cases)} case runs ended in error or by timeout)"
                                                if ended else "")
        partial = _partial(run)
        if partial:  # the case runs not recorded may call it: say so, and still name the finding
            out[ev.name] = (f"fault_recovery (criterion {ev.name}): no case recorded so far called tool {tool!r}, so "
                            f"no fault was replayed yet; {partial}, and a case run not recorded may call it; "
                            f"{hint}")
            continue
        out[ev.name] = (f"fault_recovery (criterion {ev.name}): no case called tool {tool!r}, so no fault was "
                        f"replayed; {hint}")
    return out


def _partial(run: Run) -> str:
    """``the run is unfinished (2 of 48 cases recorded)`` when ``run`` holds fewer case runs than it was started
    for (or ``only 2 of 48 … are recorded`` for a finished run whose journal lost records); ``""`` when it holds
    them all. A finding made from the records of such a run is known of those records only."""
    if is_inspect_run(run):  # a log's samples are counted when it is read (unrun_samples)
        return ""
    expected = expected_case_runs(run)
    if run.n_cases >= expected:
        return ""
    unit = case_run_unit(run)
    if not run.finished:
        return f"the run is unfinished ({run.n_cases} of {expected} {unit} recorded)"
    return f"only {run.n_cases} of the run's {expected} {unit} are recorded"


def _routine_escalations(run: Run) -> dict[str, str]:
    """fault_recovery criteria whose escalation tool the recorded case runs call after the faulted tool anyway:
    criterion → finding (known only after the run).

    A call made where nothing had failed is routine (a receipt sent after every refund, an order looked up again),
    not a case handed over. When every recorded case run that calls ``tool`` also calls, after it and without
    failing, one of ``escalate_tools``, with no call failing from ``tool``'s on before it, a replay that goes on as
    recorded counts as escalated whatever the agent did about the fault: the "recovered or escalated" test cannot
    fail (only a false success or a changed path still can). A recording where ``tool`` itself, or a call after it,
    failed first escalated for that failure, as the fault asks (a sandbox that declines every refund, an agent
    that hands each declined one over: named before, though an agent that did not escalate failed 0 of 6).
    """
    faults = _passed_as(run, [ev for ev in run.config.evaluators
                              if ev.type == "fault_recovery" and getattr(ev, "escalate_tools", [])], "escalated")
    if not faults:
        return {}
    calls, keys = _recorded_calls(run)
    out = {}
    for ev in faults:
        tool, escalate = str(getattr(ev, "tool", "")), list(getattr(ev, "escalate_tools", []))
        at, failed = _checkpoints(calls, keys, tool, every=getattr(ev, "calls", "first") == "every")
        if not len(at):
            continue
        spots = [*keys, "checkpoint"]  # with calls: every, each call's replay must be one that cannot fail
        later = calls.loc[calls["tool"].isin(escalate) & ~calls["is_error"].astype(bool), [*keys, "tool", "step"]]
        later = later.merge(at, on=keys).merge(failed, on=spots, how="left")  # NaN: nothing failed from then on
        later = later[(later["step"] > later["checkpoint"]) & ~(later["failed_at"] < later["step"])]
        if len(later.drop_duplicates(spots)) < len(at):
            continue
        first_at = at.drop_duplicates(keys)
        named = ", ".join(repr(t) for t in escalate if t in set(later["tool"]))
        out[ev.name] = (f"fault_recovery (criterion {ev.name}): escalate_tools {named} called after {tool!r} in "
                        f"each of the {len(first_at)} recorded case runs that call it, where nothing failed: a routine "
                        "call, not a case handed over, so a replay that goes on as recorded passes as escalated "
                        "whatever the agent does about the fault; list only tools that hand a case over")
    return out


def _passed_as(run: Run, faults: list[Any], reason: str) -> list[Any]:
    """The criteria of ``faults`` of which some replay passed with ``reason`` in its reason (``escalated``,
    ``admitted_failure``): only those can be the routine finding, so the steps are read only for them."""
    if not faults:
        return []
    v = run.verdicts
    passed = v[(v["verdict"] == "pass") & v["criterion"].isin([ev.name for ev in faults])]
    named = set(passed.loc[passed["reason"].astype(str).str.contains(reason, regex=False), "criterion"])
    return [ev for ev in faults if ev.name in named]


def _recorded_calls(run: Run) -> tuple[pd.DataFrame, list[str]]:
    """The tool calls of ``run``'s recorded case runs (``run.steps``) and the columns that key a case run."""
    steps = run.steps
    calls = steps[steps["kind"] == "tool_call"]
    return calls, [c for c in ("run_id", "case_id", "epoch") if c in calls.columns]


def _checkpoints(calls: pd.DataFrame, keys: list[str], tool: str,
                 every: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Where a fault on ``tool`` would be replayed in each recorded case run that calls it: ``keys`` + ``checkpoint``
    (its first call; each call with ``every``, as ``calls: every`` replays them), and, for those where a call
    failed from there on, ``keys`` + ``checkpoint`` + ``failed_at`` (the first such)."""
    made = calls.loc[calls["tool"] == tool, [*keys, "step"]].rename(columns={"step": "checkpoint"})
    at = made.drop_duplicates() if every else made.groupby(keys, sort=False, as_index=False)["checkpoint"].min()
    failed = calls.loc[calls["is_error"].astype(bool), [*keys, "step"]].merge(at, on=keys)
    failed = (failed[failed["step"] >= failed["checkpoint"]].groupby([*keys, "checkpoint"], sort=False,
                                                                     as_index=False)["step"]
              .min().rename(columns={"step": "failed_at"}))
    return at, failed


def _routine_admissions(run: Run) -> dict[str, str]:
    """fault_recovery criteria whose ``honest_answers`` admit the answer every recorded case run gives where nothing
    failed: criterion → finding (known only after the run).

    An honest answer ends a faulted replay as an escalation does, unless it is the case's ``expected.answer``. When
    each recorded case run that calls ``tool`` calls nothing that fails from there on and still ends with an answer
    the honest answers admit (a pattern that finds the agent's own success message, ``(?i)refund`` in "Refund
    issued for o3"), and that answer is not its case's ``expected.answer``, a replay that goes on as recorded
    claims success and passes as ``admitted_failure`` whatever the agent does about the fault: on cases that judge
    the state alone, no false success is seen (it needs the expected answer), so the check cannot fail (only a
    changed ``state_unchanged`` path still can). A recording where a call failed answers that failure.
    """
    faults = _passed_as(run, [ev for ev in run.config.evaluators
                              if isinstance(ev, FaultRecovery) and ev.honest_answers], "admitted_failure")
    if not faults:
        return {}
    calls, keys = _recorded_calls(run)
    cases = run.cases[[*keys, "answer"]]
    out = {}
    for ev in faults:
        # the first call alone, with calls: every too: nothing failing from it on, no later call's replay that
        # goes on as recorded fails either, and each ends with the recorded answer
        first_at, failed = _checkpoints(calls, keys, ev.tool)
        if not len(first_at) or len(failed):
            continue
        said = first_at[keys].merge(cases, on=keys, how="left")
        answers = said["answer"].tolist()  # a text is looked at once, however many case runs give it
        distinct = [*dict.fromkeys(a for a in answers if isinstance(a, str)),
                    *(a for a in answers if not isinstance(a, str))]
        if not all(ev.admits_failure(answer) for answer in distinct):
            continue
        if _expected_answer_given(run, said, keys):
            continue  # that answer is the success the case expects: a replay that gives it is judged, not admitted
        out[ev.name] = (f"fault_recovery (criterion {ev.name}): honest_answers admit the answer each of the "
                        f"{len(said)} recorded case runs that call {ev.tool!r} gives where nothing failed (the "
                        f"first: {said['answer'].iloc[0]!r}), so a replay that goes on as recorded and claims success "
                        "passes as admitted_failure whatever the agent does about the fault; write what only an "
                        "answer that admits the failure says")
    return out


def _expected_answer_given(run: Run, said: pd.DataFrame, keys: list[str]) -> bool:
    """Whether, in some case run of ``said`` (``keys`` + ``answer``, its recorded answer), that answer is the case's
    ``expected.answer`` as a fault replay's answer checks compare it (:func:`~..evaluators.fault.replay_judges`).

    The suite's own ``answer_matches`` checks, when it declares any, are those: their comparison rows (path
    ``answer``) hold that very comparison. Otherwise the default check compares: the expected answers are read
    from the case records, one per case (every epoch and run of a case expects the same), the ``case`` object
    alone (:meth:`~.journal.Journal.stored_cases`; a record read whole decodes its trajectory, states and rows too).
    """
    judges = replay_judges(run.config.evaluators)[0]
    if any(isinstance(ev, AnswerMatches) for ev in run.config.evaluators):  # the judges are the suite's own
        rows = run.comparisons
        rows = rows[(rows["path"] == "answer") & rows["criterion"].isin([ev.name for ev in judges])]
        given = rows.groupby(keys, sort=False)["ok"].all()  # a case that expects no answer has no row
        return bool(said[keys].merge(given[given].reset_index(), on=keys).shape[0])
    for member in run.runs:
        mine = said[said["run_id"] == member.run_id] if "run_id" in keys else said
        epochs = mine["epoch"].astype(int).tolist() if "epoch" in keys else [1] * len(mine)
        first = dict(zip(mine["case_id"].astype(str), epochs, strict=True))  # one key a case: any of its epochs
        expected = {cid: (case.get("expected") or {}) for (cid, _), case in
                    member._journal.stored_cases(first.items()).items()}
        for cid, answer in zip(mine["case_id"].astype(str), mine["answer"], strict=True):
            want = expected.get(cid, {})
            if "answer" in want and all(answers_equal(want["answer"], answer, ev.normalize) for ev in judges):
                return True
    return False


def late_findings(run: Run, rows: dict[str, int]) -> dict[str, str]:
    """The checks of ``run`` that cannot fail as configured, found only from what the run recorded (``load_suite``
    finds the others, kept in the manifest's ``suite_config.vacuous``): criterion → finding. A ``fault_recovery``
    whose tool no case called (``rows``: each criterion's number of rows), or whose ``escalate_tools`` or
    ``honest_answers`` every recorded case run calls or says where nothing failed. Settings of a gate (a threshold
    of 0) are not read: :func:`gate` adds those."""
    return with_findings(_fault_findings(run, rows), _routine_escalations(run), _routine_admissions(run))


def with_findings(late: dict[str, str], *more: dict[str, str]) -> dict[str, str]:
    """``late`` (criterion → finding) with each of ``more``'s findings joined to its criterion's (``; ``)."""
    for found in more:
        for criterion, message in found.items():
            late[criterion] = f"{late[criterion]}; {message}" if criterion in late else message
    return late


def by_criterion(run: Run, late: dict[str, str]) -> dict[str, list[str]]:
    """Each criterion's findings, in the run's order: the manifest's (found by ``load_suite``), then ``late``'s."""
    stored = dict(run.manifest.suite_config.vacuous)
    return {c: found for c in run.criteria if (found := stored.get(c, []) + ([late[c]] if c in late else []))}


def zero_thresholds(cfg: ReleaseConfig, criteria: list[str]) -> dict[str, str]:
    """Criteria gated at threshold 0: criterion → finding. Every lower bound is at least 0, so such a
    criterion passes whatever its rows say (a check that cannot fail)."""
    return {c: (f"criterion {c}: threshold 0 passes whatever the rows say (a lower bound is never below 0); "
                "to report it without gating, leave it out of release.yaml")
            for c in criteria if cfg.criteria.get(c) == 0}
