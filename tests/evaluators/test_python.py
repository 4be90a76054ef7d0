"""``python`` checks: a suite's own success function, imported by the suite loader, called by the run."""

from __future__ import annotations

import decimal
import json
import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import oloproof_nb as op
from oloproof_nb._core.case import case_from_mapping
from oloproof_nb._core.evaluator import CaseContext
from oloproof_nb.cli import main
from oloproof_nb.evaluators.python import PythonCheck, interpret_check

CHECKS = '''
import json
import os
import time


def judge(case, initial_state, final_state, trajectory):
    with open(os.environ["CHECK_LOG"], "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": case.id, "kind": type(case).__name__, "steps": len(trajectory.steps),
                             "tools": [s.tool for s in trajectory.steps if s.kind == "tool_call"],
                             "initial": initial_state, "final": final_state}) + "\\n")
    initial_state["vandalised"] = True  # copies: nothing the run keeps may change
    if final_state is not None:
        final_state.clear()
    how = case.input["check"]
    if how == "raise":
        return helper_that_fails(case.id)
    if how == "hang":
        time.sleep(3)
        return True
    return {"pass": True, "fail": False, "none": None, "pair": (False, "paid the wrong account"),
            "pair_pass": (True, "fine"), "yes": "yes", "np": __import__("numpy").bool_(True), "huge": 10 ** 5000}[how]


def helper_that_fails(case_id):
    raise ValueError(f"cannot judge {case_id}")
'''


def _case(cid: str, check: str, **input_: Any) -> dict[str, Any]:
    return {"id": cid, "input": {"check": check, "case": cid, "answer": "ok", "writes": [{"path": ["a"], "value": 2}],
                                 **input_},
            "initial_state": {"a": 1}, "expected": {"answer": "ok"}, "metadata": {"m": cid}}


@pytest.fixture
def check_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "check.log"
    monkeypatch.setenv("CHECK_LOG", str(log))
    return log


def _suite(make_suite: Any, cases: list[dict[str, Any]], **config: Any) -> Path:
    folder = make_suite(cases, evaluators=[{"type": "answer_matches"},
                                           {"type": "python", "name": "task_done", "check": "checks:judge"}],
                        **config)
    (folder / "checks.py").write_text(CHECKS, encoding="utf-8")
    return folder


def _verdicts(run: op.Run) -> dict[str, tuple[str, str]]:
    v = run.verdicts[run.verdicts["criterion"] == "task_done"]
    return {r.case_id: (r.verdict, r.reason) for r in v.itertuples()}


def test_what_a_check_returns_is_its_verdict(make_suite: Any, tmp_path: Path, check_log: Path) -> None:
    kinds = ["pass", "fail", "none", "pair", "pair_pass", "yes", "np"]
    folder = _suite(make_suite, [_case(f"c-{k}", k) for k in kinds])
    run = op.run(folder, out=tmp_path / "run", progress=False)
    assert _verdicts(run) == {
        "c-pass": ("pass", ""), "c-fail": ("fail", ""), "c-none": ("missing", "check returned None"),
        "c-pair": ("fail", "paid the wrong account"), "c-pair_pass": ("pass", "fine"),
        "c-yes": ("missing", "check returned 'yes'; return True, False, None or a (verdict, reason) pair"),
        "c-np": ("pass", ""),
    }
    assert set(run.verdicts[run.verdicts.criterion == "task_done"]["evaluator"]) == {"python"}


def test_a_check_returning_an_int_too_long_to_print_is_missing_and_the_run_finishes(make_suite: Any, tmp_path: Path,
                                                                                 check_log: Path) -> None:
    """A check returning 10**5000 stopped `oloproof run` with "internal error: ValueError: Exceeds the limit (4300
    digits) for integer string conversion", the run left unfinished: the reason quoted the value with repr."""
    folder = _suite(make_suite, [_case("c-huge", "huge"), _case("c-pass", "pass")])
    run = op.run(folder, out=tmp_path / "run", progress=False)
    assert run.finished
    bits = (10 ** 5000).bit_length()  # 16,610
    assert _verdicts(run) == {"c-huge": ("missing", f"check returned <int of {bits} bits>; {SCORE_HELP}"),
                              "c-pass": ("pass", "")}


def test_a_check_gets_copies_of_the_case_states_and_trajectory(make_suite: Any, tmp_path: Path,
                                                              check_log: Path) -> None:
    folder = _suite(make_suite, [_case("c1", "pass")])
    run = op.run(folder, out=tmp_path / "run", progress=False)
    seen = json.loads(check_log.read_text(encoding="utf-8"))
    assert seen == {"id": "c1", "kind": "Case", "steps": 2, "tools": ["write"], "initial": {"a": 1},
                    "final": {"a": 2}}
    record = run.record("c1")
    assert record["case"]["initial_state"] == {"a": 1} and record["environment_state"]["state"] == {"a": 2}
    assert run.changes["path"].tolist() == ["a"]  # what the check did to its copies changed nothing stored


def test_a_check_that_edits_the_case_changes_no_other_check_and_nothing_stored(make_suite: Any,
                                                                              tmp_path: Path) -> None:
    """The agent writes 2 where the case expects 3. A check that empties ``case.expected.state`` (as some
    benchmarks' checks tidy their task) got the run's own Case: the ``state_matches`` after it then passed
    with no comparison, the journal kept the emptied expectation, and the Suite kept it for later runs."""
    case = {**_case("c1", "pass"), "expected": {"answer": "ok", "state": {"a": 3}}}
    folder = make_suite([case], evaluators=[{"type": "python", "name": "tidy", "check": "checks:tidy"},
                                            {"type": "state_matches"}])
    (folder / "checks.py").write_text("def tidy(case, initial_state, final_state, trajectory):\n"
                                      "    case.expected.state.clear()\n    case.input.clear()\n"
                                      "    case.metadata['edited'] = True\n    case.initial_state.clear()\n"
                                      "    return True\n", encoding="utf-8")
    suite = op.load_suite(folder)
    run = op.run(suite, out=tmp_path / "run", progress=False)
    verdicts = run.verdicts.set_index("criterion")["verdict"]
    assert (verdicts["tidy"], verdicts["state_matches"]) == ("pass", "fail")
    assert run.comparisons[["path", "ok"]].values.tolist() == [["a", False]]
    stored = run.record("c1")["case"]
    assert (stored["expected"]["state"], stored["input"]["check"], stored["metadata"]) == ({"a": 3}, "pass",
                                                                                           {"m": "c1"})
    assert stored["initial_state"] == {"a": 1}
    kept = suite.kept_cases[0]
    assert (kept.expected.state, kept.input["check"], kept.metadata) == ({"a": 3}, "pass", {"m": "c1"})
    assert kept.initial_state == {"a": 1}


def test_a_checks_initial_state_is_its_own_copy_not_the_cases(make_suite: Any, tmp_path: Path) -> None:
    """Each argument is its own copy, as with ``copy.deepcopy`` before: a check that empties its ``initial_state``
    (to build what it expects) still reads the case's ``initial_state`` as the case gives it. A mutant
    handing the check the case copy's own ``initial_state`` passed every other test."""
    folder = make_suite([_case("c1", "pass")], evaluators=[{"type": "python", "name": "own", "check": "checks:own"}])
    (folder / "checks.py").write_text("def own(case, initial_state, final_state, trajectory):\n"
                                      "    initial_state.clear()\n"
                                      "    return case.initial_state == {'a': 1}\n", encoding="utf-8")
    run = op.run(op.load_suite(folder), out=tmp_path / "run", progress=False)
    assert run.verdicts.set_index("criterion")["verdict"]["own"] == "pass"


def test_an_exception_in_a_check_is_that_cases_missing_with_the_traceback_kept(make_suite: Any, tmp_path: Path,
                                                                             check_log: Path) -> None:
    folder = _suite(make_suite, [_case("c1", "raise"), _case("c2", "pass")])
    run = op.run(folder, out=tmp_path / "run", progress=False)
    assert run.finished
    verdicts = _verdicts(run)
    assert verdicts["c1"] == ("missing", "check_raised: ValueError: cannot judge c1")
    assert verdicts["c2"] == ("pass", "")
    stored = [v for v in op.load_run(tmp_path / "run").record("c1")["verdicts"] if v["criterion"] == "task_done"]
    trace = stored[0]["traceback"]  # type: ignore[typeddict-item]
    assert trace.startswith("Traceback") and "helper_that_fails" in trace and "ValueError: cannot judge c1" in trace
    panel = repr(run.panel("c1"))
    assert "traceback of task_done:" in panel and "helper_that_fails" in panel
    assert "helper_that_fails" in run.panel("c1")._repr_html_()


def test_a_check_that_hangs_times_out_as_missing_and_the_run_goes_on(make_suite: Any, tmp_path: Path,
                                                                    check_log: Path) -> None:
    folder = _suite(make_suite, [_case("c1", "hang"), _case("c2", "pass")], case_timeout_s=0.3)
    run = op.run(folder, out=tmp_path / "run", progress=False)
    verdicts = _verdicts(run)
    assert verdicts["c1"] == ("missing", "check_raised: timeout: exceeded case_timeout_s=0.3")
    assert verdicts["c2"] == ("pass", "")


def test_a_case_that_raised_is_missing_without_calling_the_check(make_suite: Any, tmp_path: Path,
                                                                 check_log: Path) -> None:
    crash = _case("c1", "pass", writes=[{"path": ["a", "b"], "value": 1}])  # writes below an int: the system raises
    folder = _suite(make_suite, [crash, _case("c2", "pass")])
    run = op.run(folder, out=tmp_path / "run", progress=False)
    assert run.cases.set_index("case_id").loc["c1", "status"] == "error"
    assert _verdicts(run)["c1"][0] == "missing"
    assert [json.loads(line)["id"] for line in check_log.read_text(encoding="utf-8").splitlines()] == ["c2"]


def test_a_stateless_system_gives_the_check_no_final_state(make_suite: Any, tmp_path: Path,
                                                         check_log: Path) -> None:
    folder = _suite(make_suite, [_case("c1", "pass")], system="sysmod:Stateless")
    op.run(folder, out=tmp_path / "run", progress=False)
    assert json.loads(check_log.read_text(encoding="utf-8"))["final"] is None


def test_check_rows_join_the_gate_and_slices(make_suite: Any, tmp_path: Path, check_log: Path) -> None:
    folder = _suite(make_suite, [_case(f"c{i}", "pass" if i % 4 else "fail") for i in range(8)],
                    release={"criteria": {"task_done": 0.5}, "min_clusters": 2})
    run = op.run(folder, out=tmp_path / "run", progress=False)
    row = op.gate(run).table.set_index("criterion").loc["task_done"]
    assert (row["n"], row["passed"], row["threshold"]) == (8, 6, 0.5)
    table = op.slice_table(run, "tool_calls:1,2")
    assert table[table.criterion == "task_done"]["passed"].sum() == 6


def test_interpret_check_boundaries() -> None:
    assert interpret_check((None, "could not tell")) == ("missing", "could not tell")
    assert interpret_check(1)[0] == "missing"  # 1 is not True
    assert interpret_check((True, None)) == ("pass", "")
    assert interpret_check((True, "a", "b"))[0] == "missing"


@pytest.mark.parametrize("value", [(True, False), (True, True), (False, 0), (True, ["why"]), (True, 3.5)])
def test_a_pair_whose_second_item_is_no_text_is_not_a_verdict_and_reason(value: tuple[Any, Any]) -> None:
    """`return paid, within_limit` (two conditions) read as a verdict and its reason: (True, False) passed with
    the reason "False". A reason is text (or None); anything else is a return value the check may not give."""
    verdict, reason = interpret_check(value)
    assert verdict == "missing" and reason.startswith(f"check returned {value!r}: the second item of a (verdict, "
                                                      f"reason) pair is its reason, text, not "
                                                      f"{type(value[1]).__name__}")


def test_a_coroutine_or_generator_a_check_hands_on_is_missing_and_closed() -> None:
    """A plain def handing on an async check's result (a decorator's wrapper) passes the suite's load: its coroutine
    was "check returned <coroutine object …>", left for Python to warn "never awaited". It is said as what it is,
    and closed without running."""
    async def refunded_once() -> bool:
        raise AssertionError("never run")

    def steps() -> Any:
        yield True

    made = refunded_once(), steps()
    got = [interpret_check(value) for value in made]
    assert got == [
        ("missing", "check returned a coroutine, never awaited (of 'refunded_once'); return True, False, None or a "
                    "(verdict, reason) pair"),
        ("missing", "check returned a generator, never iterated (of 'steps'); return True, False, None or a (verdict, "
                    "reason) pair")]
    assert made[0].cr_frame is None and made[1].gi_frame is None  # closed: no "never awaited" warning to come


SCORE_HELP = ("a number is no verdict: give the check pass_threshold: (the lowest score that passes, 1 for full "
              "credit only), or return True, False, None or a (verdict, reason) pair")


@pytest.mark.parametrize("score", [0.5, 1.0, 1, 0, np.float64(1.0), np.int64(1)])
def test_a_score_without_pass_threshold_is_missing_and_says_to_give_one(score: Any) -> None:
    """Before, a benchmark's reward (τ-bench's 0.0/1.0, partial credit 0.5) returned by a check made every row
    missing, the reason listing what to return but not what to do with a score."""
    assert interpret_check(score) == ("missing", f"check returned {score!r}; {SCORE_HELP}")


@pytest.mark.parametrize(("value", "threshold", "expected"), [
    (0.5, 0.5, ("pass", "")),  # the threshold itself passes
    (0.49999, 0.5, ("fail", "score 0.49999 is below pass_threshold 0.5")),
    (1.0, 1, ("pass", "")), (0.5, 1, ("fail", "score 0.5 is below pass_threshold 1")),
    (1, 1.0, ("pass", "")), (0, 1.0, ("fail", "score 0 is below pass_threshold 1")),
    (np.float64(0.75), 0.5, ("pass", "")), (np.int64(0), 1, ("fail", "score np.int64(0) is below pass_threshold 1")),
    (-2, -3, ("pass", "")),
    ((0.5, "db right, outputs missing"), 1, ("fail", "db right, outputs missing")),  # the pair's reason is kept
    ((1.0, "full"), 1, ("pass", "full")),
    (float("nan"), 1, ("missing", "check returned nan, not a finite score")),
    (float("inf"), 1, ("missing", "check returned inf, not a finite score")),
    (np.float64("-inf"), -1, ("missing", "check returned np.float64(-inf), not a finite score")),
    (True, 2, ("pass", "")), (False, 0, ("fail", "")),  # a bool stays a verdict, whatever the threshold
    (None, 1, ("missing", "check returned None")), ("1.0", 1, ("missing", "check returned '1.0'; return True, False, "
                                                                "None or a (verdict, reason) pair")),
])
def test_a_score_passes_at_or_above_pass_threshold(value: Any, threshold: float,
                                                       expected: tuple[str, str]) -> None:
    assert interpret_check(value, threshold) == expected


@pytest.mark.parametrize(("value", "threshold", "shown"), [
    (0.1234564, 0.12345649, "0.12345649"),  # six significant digits, 0.123456, read as below the score
    (1234564, 1234564.5, "1234564.5"),  # 1.23456e+06 is 1234560, below the score
    (0.9999994, 0.9999995, "0.9999995"),  # not 1
])
def test_a_failed_score_names_its_threshold_with_every_digit(value: Any, threshold: float, shown: str) -> None:
    assert interpret_check(value, threshold) == ("fail", f"score {value!r} is below pass_threshold {shown}")


def test_a_score_too_large_for_a_float_is_compared_exactly() -> None:
    assert interpret_check(10**5000, 1.0) == ("pass", "")
    assert interpret_check(-(10**5000), 1.0)[0] == "fail"


@pytest.mark.parametrize(("given", "why"), [
    (True, "must be a score (a number), not true"), ("1", "must be a score (a number), not the text '1'"),
    (float("nan"), "must be a score (a number), not NaN (.nan), which is no number"), (float("inf"), "finite number"),
])
def test_pass_threshold_is_a_finite_number(given: Any, why: str) -> None:
    with pytest.raises(ValueError, match=re.escape(why)):
        PythonCheck.model_validate({"type": "python", "check": "checks:f", "pass_threshold": given})
    assert PythonCheck.model_validate({"type": "python", "check": "checks:f"}).pass_threshold is None


def test_a_checks_scores_are_judged_at_its_pass_threshold_in_a_run(make_suite: Any, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Two checks over one reward, at 1 (full credit) and at 0.5; a pass_threshold written as text is refused
    in one line naming the file and the key, exit 2."""
    cases = [{"id": str(i), "input": {"reward": r}, "initial_state": {}} for i, r in enumerate([1.0, 0.5, 0.0])]
    folder = make_suite(cases, evaluators=[
        {"type": "python", "name": "full", "check": "checks:reward", "pass_threshold": 1},
        {"type": "python", "name": "half", "check": "checks:reward", "pass_threshold": 0.5}])
    (folder / "checks.py").write_text("def reward(case, initial_state, final_state, trajectory):\n"
                                      "    return case.input['reward']\n", encoding="utf-8")
    run = op.run(folder, out=tmp_path / "run", progress=False)
    v = run.verdicts
    got = {(r.criterion, r.case_id): r.verdict for r in v.itertuples()}
    assert got == {("full", "0"): "pass", ("full", "1"): "fail", ("full", "2"): "fail",
                   ("half", "0"): "pass", ("half", "1"): "pass", ("half", "2"): "fail"}
    config = (folder / "oloproof.yaml").read_text(encoding="utf-8")
    (folder / "oloproof.yaml").write_text(config.replace("pass_threshold: 1\n", "pass_threshold: '1'\n"),
                                          encoding="utf-8")
    assert main(["run", str(folder), "--out", str(tmp_path / "refused")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "oloproof.yaml: evaluators[0].pass_threshold: must be a score (a number), " \
                                     "not the text '1'" in err


def test_a_reason_that_utf8_cannot_hold_is_stored_as_its_escape() -> None:
    """A reason built from a file name read from bytes that are not UTF-8 (a lone surrogate) is written as its
    backslash escape, as every stored text is: the verdict record could not be written otherwise."""
    verdict, reason = interpret_check((False, "no file report-\udce9.txt"))
    assert (verdict, reason) == ("fail", "no file report-\\udce9.txt")
    reason.encode("utf-8")  # storable
    assert interpret_check((None, "gone \ud800"))[1] == "gone \\ud800"


def test_name_and_an_equal_criterion_may_both_be_given_but_not_two_names() -> None:
    """``name`` is the criterion's other spelling: both given and equal is one name; two different ones refused."""
    both = PythonCheck.model_validate({"type": "python", "name": "done", "criterion": "done", "check": "checks:f"})
    assert both.name == "done"
    with pytest.raises(ValueError, match="give 'name' or 'criterion', not both"):
        PythonCheck.model_validate({"type": "python", "name": "done", "criterion": "other", "check": "checks:f"})


def test_a_case_without_a_trajectory_is_missing_without_calling_the_check() -> None:
    """No failure recorded, yet no trajectory (nothing to hand the check): ``missing`` with ``no_trajectory``, and
    the run is never asked to call the check."""
    class NoCalls:
        def call_check(self, *args: Any) -> Any:
            raise AssertionError("the check was called")

    ctx = CaseContext(case=case_from_mapping({"id": "c1", "input": {}}), status="completed", trajectory=None,
                      state=None, run=NoCalls())
    rows = PythonCheck(type="python", check="checks:f").evaluate(ctx).verdicts
    assert [(r["verdict"], r["reason"]) for r in rows] == [("missing", "no_trajectory")]


# -- gaps a mutant showed ----------------------------------------------------------------------------------


def test_a_check_that_edits_its_trajectory_changes_no_other_check_and_nothing_stored(make_suite: Any,
                                                                                        tmp_path: Path) -> None:
    """The trajectory handed to a check is its own deep copy, like the case and the states: a check that clears
    the steps and rewrites the answer leaves ``answer_matches`` after it, and the stored record, as the agent left
    them (the agent answers "ok" in two steps: the log of the copies test above)."""
    case = {**_case("c1", "pass"), "expected": {"answer": "ok"}}
    folder = make_suite([case], evaluators=[{"type": "python", "name": "scrub", "check": "checks:scrub"},
                                            {"type": "answer_matches"}])
    (folder / "checks.py").write_text("def scrub(case, initial_state, final_state, trajectory):\n"
                                      "    trajectory.steps.clear()\n    trajectory.answer = 'tampered'\n"
                                      "    return True\n", encoding="utf-8")
    run = op.run(op.load_suite(folder), out=tmp_path / "run", progress=False)
    verdicts = run.verdicts.set_index("criterion")["verdict"]
    assert (verdicts["scrub"], verdicts["answer_matches"]) == ("pass", "pass")
    stored = run.record("c1")["trajectory"]
    assert (len(stored["steps"]), stored["answer"]) == (2, "ok")


# Scores the reward tests above let through.


@pytest.mark.parametrize(("value", "threshold", "expected"), [
    (np.float32(0.75), 0.5, ("pass", "")), (np.float32(0.25), 0.5, ("fail", "score np.float32(0.25) is below "
                                                                     "pass_threshold 0.5")),
    (np.float32("nan"), 0.5, ("missing", "check returned np.float32(nan), not a finite score")),
    (np.float16("inf"), 0.5, ("missing", "check returned np.float16(inf), not a finite score")),
    (0, 0, ("pass", "")), (-0.5, 0, ("fail", "score -0.5 is below pass_threshold 0")),  # a threshold of 0 is one
    ((float("nan"), "no reward recorded"), 1, ("missing", "check returned nan, not a finite score; its reason: no "
                                                          "reward recorded")),  # the pair's reason is kept, after
])
def test_numpy_floats_a_zero_threshold_and_a_pairs_reason(value: Any, threshold: float,
                                                              expected: tuple[str, str]) -> None:
    """A NumPy float that is no Python float (float32, float16) is a score too, NaN and inf among them missing; a
    pass_threshold of 0 is a threshold (not "none given"); a pair's own reason is kept when its score is NaN."""
    assert interpret_check(value, threshold) == expected


@pytest.mark.parametrize(("value", "threshold", "expected"), [
    (np.float32(0.7), 0.7, ("pass", "")), (np.float16(0.7), 0.7, ("pass", "")), (np.float32(0.3), 0.3, ("pass", "")),
    ((np.float32(0.7), "7 of 10 outputs"), 0.7, ("pass", "7 of 10 outputs")),
    (np.float32(0.69), 0.7, ("fail", "score np.float32(0.69) is below pass_threshold 0.7")),
    # NumPy's repr of float16's largest value: np.float16(65500.0) on NumPy 2.0 (.ci/oldest), np.float16(6.55e+04) later
    (np.float16(65504), 70000, ("fail", f"score {np.float16(65504)!r} is below pass_threshold 70000")),
])
def test_a_float32_score_equal_to_the_threshold_passes(value: Any, threshold: float,
                                                       expected: tuple[str, str]) -> None:
    """A reward computed in float32 (``np.float32(0.7)``, 0.699999988 as a Python float) at pass_threshold 0.7
    failed, its reason ``score np.float32(0.7) is below pass_threshold 0.7``: the threshold is read at the score's
    own precision, as numpy compares two float32 values (a threshold past float16's range still fails its
    largest value)."""
    assert np.float32(0.7).item() < 0.7  # what the comparison met before
    assert interpret_check(value, threshold) == expected


@pytest.mark.parametrize(("value", "expected"), [
    (Decimal("0.7"), ("pass", "")), (Fraction(7, 10), ("pass", "")),
    (Decimal("0.69"), ("fail", "score Decimal('0.69') is below pass_threshold 0.7")),
    (Fraction(1, 3), ("fail", "score Fraction(1, 3) is below pass_threshold 0.7")),
    ((Decimal("0.5"), "half the outputs"), ("fail", "half the outputs")),
    (Decimal("NaN"), ("missing", "check returned Decimal('NaN'), not a finite score")),
    (Decimal("sNaN"), ("missing", "check returned Decimal('sNaN'), not a finite score")),
    (Decimal("-Infinity"), ("missing", "check returned Decimal('-Infinity'), not a finite score")),
])
def test_a_decimal_or_fraction_reward_is_a_score(value: Any, expected: tuple[str, str]) -> None:
    """A reward kept exact, as a benchmark keeps its balances (``Decimal``) or its share of outputs said
    (``Fraction(7, 10)``), is a number read at pass_threshold like a float; it was ``missing``, told to return True or
    False, pass_threshold given or not. A Decimal NaN, which refuses to be compared, and ±Infinity are missing."""
    assert interpret_check(value, 0.7) == expected
    assert interpret_check(Decimal("0.5")) == ("missing", f"check returned Decimal('0.5'); {SCORE_HELP}")


def test_a_decimal_reward_at_the_threshold_passes() -> None:
    """At or above pass_threshold passes, a Decimal as a float: 0.75 is 3/4, exact in binary, and the exact value of
    the float 0.7 (0.6999999999999999555910790149937383830547332763671875) is the threshold itself; one unit of its
    last digit below it fails."""
    at = Decimal("0.6999999999999999555910790149937383830547332763671875")
    assert interpret_check(Decimal("0.75"), 0.75) == ("pass", "")
    assert interpret_check(at, 0.7) == ("pass", "")
    assert interpret_check(Decimal("0.6999999999999999555910790149937383830547332763671874"), 0.7)[0] == "fail"


@pytest.mark.parametrize(("value", "threshold", "expected"), [
    (np.float32(0.0), 1e-300, ("fail", "score np.float32(0.0) is below pass_threshold 0." + "0" * 299 + "1")),
    (np.float16(0.0), 1e-9, ("fail", "score np.float16(0.0) is below pass_threshold 0.000000001")),
    (np.float16(6e-8), 1e-9, ("pass", "")), (np.float32(0.0), 0.0, ("pass", "")),
    (np.float32(0.0), -1e-300, ("pass", "")),
])
def test_a_threshold_above_zero_never_reads_as_zero_at_a_scores_precision(value: Any, threshold: float,
                                                                          expected: tuple[str, str]) -> None:
    """A threshold too small for the score's type (float32 flushes 1e-300 to 0.0, float16 1e-9) is no zero: a
    reward of 0.0 passed ``pass_threshold: 1e-300``, written to mean "any reward above nothing", while the same 0.0 as
    a Python float failed it."""
    assert interpret_check(value, threshold) == expected
    assert interpret_check(float(value), threshold)[0] == expected[0]  # as the same reward read as a Python float


@pytest.mark.parametrize("value", [np.timedelta64(5, "s"), np.timedelta64("NaT")])
def test_a_numpy_duration_is_no_score(value: Any) -> None:
    """``np.timedelta64`` is an ``np.integer`` to NumPy: read as a score, it was told to give pass_threshold, and
    with one the comparison raised TypeError, which stopped the run with an internal error."""
    shown = repr(value)
    assert interpret_check(value) == ("missing", f"check returned {shown}; return True, False, None or a (verdict, "
                                                 "reason) pair")
    assert interpret_check(value, 0.5) == interpret_check(value)


CHECKS_IN_DECIMALS = '''
import decimal

decimal.getcontext().traps[decimal.FloatOperation] = True  # no float may slip into a balance


def judge(case, initial_state, final_state, trajectory):
    return decimal.Decimal(case.input["reward"])
'''


def test_a_decimal_reward_is_read_where_floats_in_decimals_are_trapped(make_suite: Any, tmp_path: Path) -> None:
    """A check module that traps ``decimal.FloatOperation`` (mixing a float into a Decimal raises) and returns a
    Decimal reward: the comparison with the float pass_threshold raised it, and the run stopped with ``internal
    error: FloatOperation`` on every resume. The threshold is read as the Decimal it is."""
    cases = [{"id": f"c-{r}", "input": {"reward": r}, "expected": {"answer": "ok"}} for r in ("0.8", "0.7", "0.69")]
    folder = make_suite(cases, evaluators=[{"type": "python", "name": "task_done", "check": "checks:judge",
                                            "pass_threshold": 0.7}])
    (folder / "checks.py").write_text(CHECKS_IN_DECIMALS, encoding="utf-8")
    with decimal.localcontext():  # the trap the check's import sets stays in this test
        run = op.run(folder, out=tmp_path / "run", progress=False)
    assert not decimal.getcontext().traps[decimal.FloatOperation]
    assert run.finished
    assert _verdicts(run) == {"c-0.8": ("pass", ""), "c-0.7": ("pass", ""),
                              "c-0.69": ("fail", "score Decimal('0.69') is below pass_threshold 0.7")}
    with decimal.localcontext() as context:
        context.traps[decimal.FloatOperation] = True
        assert interpret_check(Decimal("1E+999999999"), 0.7) == ("pass", "")


def test_a_score_in_a_pair_without_pass_threshold_says_to_give_one() -> None:
    """The pair's reason does not hide what to do: a score is no verdict until a threshold says so."""
    assert interpret_check((0.5, "half the outputs")) == ("missing", f"check returned (0.5, 'half the outputs'); "
                                                                     f"{SCORE_HELP}")  # the pair as returned


@pytest.mark.parametrize(("value", "threshold", "expected"), [
    ((float("nan"), "partial credit"), 1, "check returned nan, not a finite score; its reason: partial credit"),
    ((np.float64("inf"), "over the cap"), 0.5,
     "check returned np.float64(inf), not a finite score; its reason: over the cap"),
    ((float("nan"), None), 1, "check returned nan, not a finite score"),
])
def test_a_pair_whose_score_is_not_finite_says_so_before_its_reason(value: Any, threshold: float,
                                                                       expected: str) -> None:
    """Before, ``(nan, "partial credit")`` at a pass_threshold was missing with the reason "partial credit"
    alone, as if the check had judged the case missing itself; the score that was not finite comes first."""
    assert interpret_check(value, threshold) == ("missing", expected)


@pytest.mark.parametrize("value", [(0.5, "partial credit"), (np.int64(1), "full"), (1.0, None)])
def test_a_score_and_reason_without_pass_threshold_shows_the_pair_and_what_to_do(value: Any) -> None:
    """Before, ``(0.5, "partial credit")`` without pass_threshold said "check returned 0.5", the reason and that
    it was a pair gone; it shows what was returned, then what to do (give pass_threshold:)."""
    assert interpret_check(value) == ("missing", f"check returned {value!r}; {SCORE_HELP}")


@pytest.mark.parametrize("value", [((True, "paid"), "checked twice"), (("yes", "paid"), "checked"), ("pass", "fine")])
def test_a_pair_whose_verdict_is_no_verdict_is_shown_whole_and_not_blamed_on_its_reason(value: tuple[Any, Any]
                                                                                        ) -> None:
    verdict, reason = interpret_check(value, pass_threshold=1)
    assert verdict == "missing"
    assert reason == f"check returned {value!r}; return True, False, None or a (verdict, reason) pair"
