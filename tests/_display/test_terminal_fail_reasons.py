"""``failed_verdict_lines``: why verdicts fail, said as ``missing_verdict_lines`` says why they are missing (the
commonest kinds first, at most three, each with a case), of ``fail`` verdicts alone."""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pandas as pd

from oloproof_nb._core.case import case_from_mapping
from oloproof_nb._core.pairs import compare_pair
from oloproof_nb._core.trajectory import Trajectory
from oloproof_nb._display.terminal import failed_verdict_lines
from oloproof_nb.evaluators import AnswerMatches, CaseContext, StateMatches
from oloproof_nb.evaluators.python import interpret_check

PYTHON = '  in Python: run.verdicts[run.verdicts.verdict == "fail"] has each reason'


def _run(verdicts: list[tuple[str, int, str, str, Any]]) -> Any:
    """A run whose case runs all completed, with ``verdicts`` (case id, epoch, criterion, verdict, reason)."""
    ids = sorted({(v[0], v[1]) for v in verdicts})
    cases = pd.DataFrame([(c, e, "completed", None) for c, e in ids], columns=["case_id", "epoch", "status", "error"])
    return SimpleNamespace(
        cases=cases,
        verdicts=pd.DataFrame(verdicts, columns=["case_id", "epoch", "criterion", "verdict", "reason"]))


def test_the_commonest_fail_reasons_are_listed_and_the_rest_counted() -> None:
    """By hand: state has 2 fails of kind "paths differ" (c1, c2) and 1 of "expected paths differ" (c3);
    answer 1 fail of "answer differs" (c4) and 1 of "check returned False" (c5); missing and passing rows are no
    fails. Counts 2, 1, 1, 1: the first three listed in the order met, the fourth counted as other."""
    verdicts = [("c1", 1, "state", "fail", "2 of 3 paths differ: a, b"),
                ("c2", 1, "state", "fail", "1 of 3 paths differ: a"),
                ("c3", 1, "state", "fail", "1 of 3 expected paths differ: a"),
                ("c4", 1, "answer", "fail", "answer 'x' != expected 'y'"),
                ("c5", 1, "answer", "fail", "check returned False"),
                ("c6", 1, "answer", "missing", "no_state"),
                ("c6", 1, "state", "pass", "")]
    assert failed_verdict_lines(_run(verdicts)) == [
        "state: 2 of its 4 verdicts fail: paths differ", "  e.g. c1: 2 of 3 paths differ: a, b",
        "state: 1 of its 4 verdicts fail: expected paths differ", "  e.g. c3: 1 of 3 expected paths differ: a",
        "answer: 1 of its 3 verdicts fail: answer differs", "  e.g. c4: answer 'x' != expected 'y'",
        "  and 1 other reason", PYTHON]
    assert failed_verdict_lines(_run([("c1", 1, "state", "pass", ""), ("c2", 1, "state", "missing", "x")])) == []


def test_the_reasons_left_out_are_counted_in_the_singular_or_the_plural() -> None:
    """By hand: five kinds of one fail each (k1 … k5, in that order); the first three are listed and the rest
    counted, "1 other reason" of four kinds, "2 other reasons" of five."""
    verdicts = [(f"c{i}", 1, "answer", "fail", f"k{i}: why") for i in range(1, 6)]
    assert failed_verdict_lines(_run(verdicts[:4]))[-2:] == ["  and 1 other reason", PYTHON]
    assert failed_verdict_lines(_run(verdicts))[-2:] == ["  and 2 other reasons", PYTHON]


def _said(evaluation: Any) -> str:
    (row,) = evaluation.verdicts
    assert row["verdict"] == "fail"
    return str(row["reason"])


def test_reasons_are_counted_by_their_cause_not_by_the_answer_count_or_paths_they_name() -> None:
    """Each wrong answer was a reason of its own, ``1 unexpected change`` and ``2 unexpected changes`` two, and the
    commonest causes were left out as other reasons. Reasons as the evaluators word them; by hand: answer_matches
    fails 3 times with 3 different answers (one holding a ':'), state_matches 4 times, 3 of them with unexpected
    changes (1, 2 and 1 of them) and 1 with an expected path that differs, and fault 1 time at a call of
    ``calls: every``. Counts 3, 3, 1, 1."""
    ask = AnswerMatches(type="answer_matches")
    answers = [_said(ask.evaluate(CaseContext(case=case_from_mapping({"id": "c", "input": {}, "expected": {
        "answer": "refused"}}), status="completed", trajectory=Trajectory(answer=said), state=None)))
        for said in ("refunded", "refunded: 45 days", "escalated")]
    state = StateMatches.model_validate({"type": "state_matches", "mode": "changes"})
    initial = {"refunds": {}, "orders": {"o1": "open"}}
    changed = [_said(state.judge({}, {"refunds": {"o1": 45}, "orders": {"o1": "open"}}, initial=initial)),
               _said(state.judge({}, {"refunds": {"o1": 45, "o2": 9}, "orders": {"o1": "open"}}, initial=initial)),
               _said(state.judge({}, {"refunds": {"o3": 1}, "orders": {"o1": "open"}}, initial=initial))]
    expected = _said(state.judge({"orders": {"o1": "refused"}}, initial, initial=initial))
    assert [changed[1][:20], expected[:31]] == ["2 unexpected changes", "1 of 1 expected paths differ: o"]
    verdicts = [(f"a{i}", 1, "answer_matches", "fail", reason) for i, reason in enumerate(answers)]
    verdicts += [(f"s{i}", 1, "state_matches", "fail", reason) for i, reason in enumerate([*changed, expected])]
    verdicts += [("f0", 1, "fault", "fail", "step 4: false_success; step 6: not_recovered_not_escalated")]
    assert failed_verdict_lines(_run(verdicts), width=200) == [
        "answer_matches: 3 of its 3 verdicts fail: answer differs", f"  e.g. a0: {answers[0]}",
        "state_matches: 3 of its 4 verdicts fail: unexpected changes", f"  e.g. s0: {changed[0]}",
        "state_matches: 1 of its 4 verdicts fail: expected paths differ", f"  e.g. s3: {expected}",
        "  and 1 other reason", PYTHON]
    fault = failed_verdict_lines(_run(verdicts[-1:]))
    assert fault[0] == "fault: 1 of its 1 verdicts fail: false_success"


def test_each_evaluators_reasons_are_of_one_cause_whatever_they_name() -> None:
    """Reasons as the evaluators word them, two of each cause told apart by what they name: by hand, each cause
    is 2 of its criterion's verdicts. A state check's reason with both problems is of both; one whose values differ
    in JSON type only says so (a cause of its own: the case file's numbers written as text)."""
    state = StateMatches.model_validate({"type": "state_matches", "mode": "changes"})
    initial = {"refunds": {}, "orders": {"o1": "open", "o2": "open"}}
    both = [_said(state.judge({"orders": {"o1": "refused"}}, {"refunds": {key: 1}, "orders": initial["orders"]},
                              initial=initial)) for key in ("o1", "o2")]
    typed = [_said(state.judge({"orders": {key: 3}}, {**initial, "orders": {**initial["orders"], key: "3"}},
                               initial=initial)) for key in ("o1", "o2")]
    low = [interpret_check(score, 0.7)[1] for score in (0.25, 0.5)]
    pairs = ["answer 'refunded' differs from ord-011's 'refused'", "answer 'x' differs from ord-012's 'y'",
             "tool call 1 is refund({'id': 'o1'}), ord-011's is escalate({'id': 'o1'})",
             "2 tool calls (lookup, refund), ord-012 made 1 (lookup)",
             "state differs from ord-011's at 2 path(s): a, b", "state differs from ord-012's at 1 path(s): c"]
    verdicts = [(f"s{i}", 1, "state", "fail", reason) for i, reason in enumerate(both + typed)]
    verdicts += [(f"p{i}", 1, "policy", "fail", reason) for i, reason in enumerate(low)]
    verdicts += [(f"m{i}", 1, "pair", "fail", reason) for i, reason in enumerate(pairs)]
    lines = failed_verdict_lines(_run(verdicts), width=300)
    heads = [line for line in lines if not line.startswith("  ")]
    assert heads == ["state: 2 of its 4 verdicts fail: unexpected changes; expected paths differ",
                     "state: 2 of its 4 verdicts fail: expected paths differ, some in type only",
                     "policy: 2 of its 2 verdicts fail: score below pass_threshold"]
    assert lines[-2] == "  and 3 other reasons"  # pair's three causes, 2 verdicts each
    pair = failed_verdict_lines(_run(verdicts[6:]), width=300)
    assert [line for line in pair if not line.startswith("  ")] == [
        "pair: 2 of its 6 verdicts fail: answer differs from the source case's",
        "pair: 2 of its 6 verdicts fail: tool calls differ from the source case's",
        "pair: 2 of its 6 verdicts fail: state differs from the source case's"]


def test_a_long_reason_naming_many_differences_is_classified_at_once() -> None:
    """A reason is classified by patterns; one tried every ``differs from`` of a reason against every ``'s `` after
    it, and a 4 MB reason holding many and none after them (a check quoting an agent's looping answer) held the
    terminal's summary for minutes. By hand: without ``'s `` after a ``differs from`` the reason is of its code (all
    of it: it holds no ``:``); with one, of the metamorphic cause."""
    many = "answer" + " differs from" * 320_000
    script = ("import json, sys\nfrom oloproof_nb._display.terminal import _cause\n"
              "print(json.dumps([_cause(r) for r in json.load(sys.stdin)]))\n")
    done = subprocess.run([sys.executable, "-c", script], input=json.dumps([many, many + " ord-1's 'x'"]),
                          capture_output=True, text=True, timeout=120, check=False)
    assert json.loads(done.stdout or "null") == [many, "answer differs from the source case's"], done.stderr[-500:]


def test_a_python_checks_own_reason_is_of_its_code_not_of_a_cause_another_evaluator_words() -> None:
    """A check's reason is its author's text: one that reads as a pair's or an answer check's was counted as that
    cause ("tool calls differ from the source case's" for a check with no source case). By hand: each row's cause
    from its evaluator (one that is no built-in, a log's scorer, may have any); the same texts with no
    ``evaluator`` column keep the causes they read as."""
    rows = [("c1", 1, "calls", "fail", "3 tool calls (lookup, refund, refund): at most 2", "python"),
            ("c2", 1, "pair", "fail", "3 tool calls (lookup, refund, refund), ord-1 made 2 (lookup, refund)",
             "metamorphic_relation"),
            ("c3", 1, "scorer", "fail", "answer 'ok' != expected 'no'", "a_logs_scorer"),
            ("c4", 1, "own", "fail", "answer 'ok' != expected 'no': said twice", "python")]

    def heads(chosen: list[tuple[str, int, str, str, str, str]], named: bool = True) -> list[str]:
        run = _run([row[:5] for row in chosen])
        if named:
            run.verdicts["evaluator"] = [row[5] for row in chosen]
        return [line for line in failed_verdict_lines(run, width=200) if not line.startswith("  ")]

    assert heads(rows[:3]) == ["calls: 1 of its 1 verdicts fail: 3 tool calls (lookup, refund, refund)",
                               "pair: 1 of its 1 verdicts fail: tool calls differ from the source case's",
                               "scorer: 1 of its 1 verdicts fail: answer differs"]
    assert heads(rows[3:]) == ["own: 1 of its 1 verdicts fail: answer 'ok' != expected 'no'"]
    assert heads([rows[0], rows[3]], named=False) == [
        "calls: 1 of its 1 verdicts fail: tool calls differ from the source case's",
        "own: 1 of its 1 verdicts fail: answer differs"]


def test_an_answer_quoting_the_other_evaluators_words_keeps_its_own_evaluators_cause() -> None:
    """answer_matches' reason and a same_output pair's both start ``answer`` and go on with the answer as given: a
    pair whose answer held `` != expected `` was counted as answer_matches' "answer differs", and an answer_matches
    reason whose answer held ``differs from c1's`` as the pair's. The verdict's evaluator decides whose cause it is.
    By hand: 2 pair fails (one answer quoting answer_matches' words), 2 answer_matches fails (one quoting the
    pair's), each criterion one cause."""
    def record(cid: str, answer: str) -> dict[str, Any]:
        return {"case": {"id": cid}, "status": "completed", "trajectory": {"answer": answer, "steps": []}}

    pairs = [compare_pair("same_output", record("ord-1", "refused"), record("ord-1~x", said))[1]
             for said in ("refunded != expected refused", "refunded")]
    ask = AnswerMatches(type="answer_matches")
    answers = [_said(ask.evaluate(CaseContext(case=case_from_mapping({"id": "c", "input": {}, "expected": {
        "answer": "refused"}}), status="completed", trajectory=Trajectory(answer=said), state=None)))
        for said in ("it differs from ord-1's 'refused'", "refunded")]
    assert pairs[0].startswith('answer "refunded != expected refused" differs from ord-1\'s ')
    verdicts = [(f"m{i}", 1, "pair", "metamorphic_relation", "fail", reason) for i, reason in enumerate(pairs)]
    verdicts += [(f"a{i}", 1, "answer", "answer_matches", "fail", reason) for i, reason in enumerate(answers)]
    run = SimpleNamespace(
        cases=pd.DataFrame([(c[0], 1, "completed", None) for c in verdicts],
                           columns=["case_id", "epoch", "status", "error"]),
        verdicts=pd.DataFrame(verdicts, columns=["case_id", "epoch", "criterion", "evaluator", "verdict", "reason"]))
    heads = [line for line in failed_verdict_lines(run, width=300) if not line.startswith("  ")]
    assert heads == ["pair: 2 of its 2 verdicts fail: answer differs from the source case's",
                     "answer: 2 of its 2 verdicts fail: answer differs"]
