"""State evaluators: each state_matches mode, tolerance, state_unchanged with absent paths, missing state.

Expected verdicts and compared rows are written by hand from the rules in DESIGN.md.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._core.case import Case, case_digest
from oloproof_nb._core.compare import answers_equal
from oloproof_nb._core.paths import ABSENT
from oloproof_nb._core.trajectory import Trajectory
from oloproof_nb.evaluators import AnswerMatches, CaseContext, StateMatches, StateUnchanged

EXPECTED = {"orders": {"o1": {"status": "refunded", "amount": 40.0}}, "refunds": {"o1": {"amount": 40.0}}}


def sm(**kw: Any) -> StateMatches:
    return StateMatches.model_validate({"type": "state_matches", **kw})


def su(paths: list[str], **kw: Any) -> StateUnchanged:
    return StateUnchanged.model_validate({"type": "state_unchanged", "paths": paths, **kw})


def verdict(ev: Any, *args: Any) -> tuple[str, list[tuple[str, Any, Any, bool]]]:
    result = ev.judge(*args)
    assert len(result.verdicts) == 1
    rows = [(c["path"], c["expected"], c["actual"], c["ok"]) for c in result.comparisons]
    assert all(c["criterion"] == ev.name for c in result.comparisons)
    return result.verdicts[0]["verdict"], rows


# -- subset --------------------------------------------------------------------------------------------


def test_subset_pass_ignores_extra_leaves() -> None:
    actual = copy.deepcopy(EXPECTED)
    actual["orders"]["o1"]["note"] = "x"
    actual["orders"]["o999"] = {"status": "delivered"}
    v, rows = verdict(sm(mode="subset"), EXPECTED, actual)
    assert v == "pass"
    assert rows == [("orders.o1.status", "refunded", "refunded", True), ("orders.o1.amount", 40.0, 40.0, True),
                    ("refunds.o1.amount", 40.0, 40.0, True)]


def test_subset_fail_on_wrong_and_on_absent_leaf() -> None:
    actual = {"orders": {"o1": {"status": "delivered", "amount": 40.0}}}  # no refunds table
    v, rows = verdict(sm(mode="subset"), EXPECTED, actual)
    assert v == "fail"
    assert rows == [("orders.o1.status", "refunded", "delivered", False), ("orders.o1.amount", 40.0, 40.0, True),
                    ("refunds.o1.amount", 40.0, ABSENT, False)]


def test_subset_null_is_not_absent() -> None:
    v, rows = verdict(sm(), {"o": {"note": None}}, {"o": {}})
    assert v == "fail" and rows == [("o.note", None, ABSENT, False)]
    v, _ = verdict(sm(), {"o": {"note": None}}, {"o": {"note": None}})
    assert v == "pass"


def test_subset_subtree_where_leaf_expected() -> None:
    v, rows = verdict(sm(), {"o": 1}, {"o": {"x": 1}})
    assert v == "fail" and rows == [("o", 1, {"x": 1}, False)]


# -- whole ---------------------------------------------------------------------------------------------


def test_whole_pass_only_when_equal_entirely() -> None:
    v, rows = verdict(sm(mode="whole"), EXPECTED, copy.deepcopy(EXPECTED))
    assert v == "pass" and len(rows) == 3 and all(ok for *_, ok in rows)


def test_whole_fails_on_an_extra_leaf() -> None:
    actual = copy.deepcopy(EXPECTED)
    actual["orders"]["o999"] = {"status": "delivered"}
    v, rows = verdict(sm(mode="whole"), EXPECTED, actual)
    assert v == "fail"
    assert ("orders.o999.status", ABSENT, "delivered", False) in rows
    assert sum(not ok for *_, ok in rows) == 1


def test_whole_fails_on_a_missing_leaf() -> None:
    actual = copy.deepcopy(EXPECTED)
    del actual["refunds"]
    v, rows = verdict(sm(mode="whole"), EXPECTED, actual)
    assert v == "fail" and ("refunds.o1.amount", 40.0, ABSENT, False) in rows


def test_whole_fails_on_an_element_appended_to_a_list() -> None:
    """StateMatches whole: an actual list with one element more than expected fails (a spurious second
    refund in a log), even when the expected elements all match."""
    v, rows = verdict(sm(mode="whole"), {"log": ["a"]}, {"log": ["a", "b"]})
    assert v == "fail" and ("log.1", ABSENT, "b", False) in rows


@pytest.mark.parametrize(("ignore", "expected_verdict"), [(["updated_at"], "pass"), ([], "fail")])
def test_whole_mode_passes_ignore_on(ignore: list[str], expected_verdict: str) -> None:
    """StateMatches whole with ignore=["updated_at"]: a state that differs only at updated_at passes, and fails
    without it. An evaluator that dropped ignore= on its way to compare_state failed the first."""
    v, _ = verdict(sm(mode="whole", ignore=ignore), {"s": "closed", "updated_at": "t0"},
                   {"s": "closed", "updated_at": "t1"})
    assert v == expected_verdict


def test_whole_with_dotted_keys() -> None:
    expected = {"files": {"report.csv": {"size": 10}}}
    v, rows = verdict(sm(mode="whole"), expected, {"files": {"report.csv": {"size": 10}}})
    assert v == "pass" and rows == [('files["report.csv"].size', 10, 10, True)]


# -- paths ---------------------------------------------------------------------------------------------


def test_paths_only_compares_declared_paths() -> None:
    ev = sm(mode="paths", paths=["orders.o1.status", "refunds.o1"])
    actual = {"orders": {"o1": {"status": "refunded", "amount": 999.0}}, "refunds": {"o1": {"amount": 40.0}}}
    v, rows = verdict(ev, EXPECTED, actual)  # amount differs but is not declared
    assert v == "pass"
    assert rows == [("orders.o1.status", "refunded", "refunded", True),
                    ("refunds.o1", {"amount": 40.0}, {"amount": 40.0}, True)]


def test_paths_fail_and_absent_both_sides() -> None:
    ev = sm(mode="paths", paths=["orders.o1.status", "escalations.o1"])
    actual = {"orders": {"o1": {"status": "delivered"}}}
    v, rows = verdict(ev, EXPECTED, actual)  # escalations.o1 absent in both: equal
    assert v == "fail"
    assert rows == [("orders.o1.status", "refunded", "delivered", False), ("escalations.o1", ABSENT, ABSENT, True)]
    v, _ = verdict(ev, EXPECTED, {"orders": {"o1": {"status": "refunded"}}, "escalations": {"o1": {}}})
    assert v == "fail"  # absent in expected, present in actual


# -- tolerance -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["subset", "whole"])
def test_tolerance_numeric_leaves(mode: str) -> None:
    expected = {"acct": {"balance": 100.0, "count": 3, "open": True, "name": "a"}}
    within = {"acct": {"balance": 100.004, "count": 3, "open": True, "name": "a"}}  # |diff| 0.004 <= 0.01
    outside = {"acct": {"balance": 100.02, "count": 3, "open": True, "name": "a"}}  # 0.02 > 0.01
    assert verdict(sm(mode=mode, tolerance=0.01), expected, within)[0] == "pass"
    assert verdict(sm(mode=mode), expected, within)[0] == "fail"  # no tolerance: exact
    assert verdict(sm(mode=mode, tolerance=0.01), expected, outside)[0] == "fail"


def test_tolerance_never_makes_booleans_numbers() -> None:
    ev = sm(tolerance=1.0)
    assert verdict(ev, {"flag": True}, {"flag": 1})[0] == "fail"
    assert verdict(ev, {"flag": 1}, {"flag": True})[0] == "fail"
    assert verdict(ev, {"flag": False}, {"flag": 0.0})[0] == "fail"
    assert verdict(ev, {"n": 1}, {"n": 1.9})[0] == "pass"  # 0.9 <= 1.0
    assert verdict(ev, {"n": "1"}, {"n": 1})[0] == "fail"  # strings are not numbers


@pytest.mark.parametrize("mode", ["subset", "whole", "changes"])
def test_a_huge_integer_against_a_float_with_tolerance_fails_and_does_not_crash(mode: str) -> None:
    """The agent left an int beyond float range: |90.0 - 10**400| raised OverflowError and stopped the whole run
    (no verdict for any later case, and a resume hit the same case again). It is simply far from 90."""
    expected = {"balance": 90.0}
    assert verdict(sm(mode=mode, tolerance=0.01), expected, {"balance": 10**400})[0] == "fail"
    assert verdict(sm(mode=mode, tolerance=0.01), {"balance": 10**400}, {"balance": 10**400})[0] == "pass"


def test_an_infinite_or_nan_tolerance_is_refused() -> None:
    """`tolerance: .inf` made every numeric leaf equal to every other (100 expected, 0 left: pass)."""
    with pytest.raises(ValueError, match="finite number"):
        sm(tolerance=float("inf"))
    with pytest.raises(ValueError, match=r"not NaN \(\.nan\), which is no number"):
        sm(tolerance=float("nan"))
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        sm(tolerance=-0.1)


def test_tolerance_in_paths_mode() -> None:
    ev = sm(mode="paths", paths=["a.x"], tolerance=0.5)
    assert verdict(ev, {"a": {"x": 2}}, {"a": {"x": 2.5}})[0] == "pass"
    assert verdict(ev, {"a": {"x": 2}}, {"a": {"x": 2.6}})[0] == "fail"


# -- state_unchanged -----------------------------------------------------------------------------------


INITIAL = {"orders": {"o1": {"status": "delivered"}, "o999": {"status": "delivered", "amount": 25.0}}}


def test_unchanged_pass_and_fail() -> None:
    ev = su(["orders.o999"])
    after = copy.deepcopy(INITIAL)
    after["orders"]["o1"]["status"] = "refunded"  # not a declared path
    assert verdict(ev, INITIAL, after) == ("pass", [("orders.o999", INITIAL["orders"]["o999"],
                                                     INITIAL["orders"]["o999"], True)])
    after["orders"]["o999"]["amount"] = 0.0
    v, rows = verdict(ev, INITIAL, after)
    assert v == "fail" and rows[0][3] is False


def test_unchanged_absent_stays_absent() -> None:
    ev = su(["refunds.o999"])
    assert verdict(ev, INITIAL, copy.deepcopy(INITIAL)) == ("pass", [("refunds.o999", ABSENT, ABSENT, True)])


def test_unchanged_absent_to_present_fails() -> None:
    ev = su(["refunds.o999"])
    after = {**copy.deepcopy(INITIAL), "refunds": {"o999": {"amount": 25.0}}}
    assert verdict(ev, INITIAL, after) == ("fail", [("refunds.o999", ABSENT, {"amount": 25.0}, False)])
    after_null = {**copy.deepcopy(INITIAL), "refunds": {"o999": None}}
    assert verdict(ev, INITIAL, after_null)[0] == "fail"  # null is present


def test_unchanged_present_to_absent_fails() -> None:
    ev = su(["orders.o999"])
    after = {"orders": {"o1": {"status": "delivered"}}}
    assert verdict(ev, INITIAL, after) == ("fail", [("orders.o999", INITIAL["orders"]["o999"], ABSENT, False)])


def test_unchanged_several_paths_reason_names_the_bad_ones() -> None:
    ev = su(["orders.o999.status", "orders.o999.amount", "refunds"])
    after = copy.deepcopy(INITIAL)
    after["orders"]["o999"]["amount"] = 1.0
    result = ev.judge(INITIAL, after)
    assert result.verdicts[0]["verdict"] == "fail"
    assert "orders.o999.amount" in result.verdicts[0]["reason"]
    assert "orders.o999.status" not in result.verdicts[0]["reason"]
    assert [c["ok"] for c in result.comparisons] == [True, False, True]


# -- no recorded state: missing, never passes ----------------------------------------------------------


def _case(**kw: Any) -> Case:
    raw = {"id": "c1", "input": {}, **kw}
    return Case.model_validate({**raw, "cluster": "c1", "digest": case_digest(raw), "source_id": "c1",
                                "expected": op.Expected.model_validate(
                                    {**kw.get("expected", {}), "has_answer": "answer" in kw.get("expected", {})})})


@pytest.mark.parametrize("ev", [sm(), sm(mode="whole"), sm(mode="paths", paths=["a"]), su(["a"])])
def test_no_state_is_missing(ev: Any) -> None:
    result = ev.judge({"a": 1}, None)
    assert [v["verdict"] for v in result.verdicts] == ["missing"]
    assert result.verdicts[0]["reason"] == "no_state_recorded"
    assert result.comparisons == []


def test_evaluate_context_without_state() -> None:
    case = _case(initial_state={"a": 1}, expected={"answer": "ok", "state": {"a": 2}})
    ctx = CaseContext(case=case, status="completed", trajectory=Trajectory(answer="ok"), state=None)
    for ev in (sm(), su(["a"])):
        (row,) = ev.evaluate(ctx).verdicts
        assert row["verdict"] == "missing" and row["reason"] == "no_state_recorded"
    (row,) = AnswerMatches(type="answer_matches").evaluate(ctx).verdicts
    assert row["verdict"] == "pass"  # the answer does not need a state


def test_evaluate_context_after_a_failure() -> None:
    case = _case(initial_state={"a": 1}, expected={"answer": "ok", "state": {"a": 1}})
    ctx = CaseContext(case=case, status="error", trajectory=None, state=None, failure="RuntimeError: boom")
    for ev in (sm(), su(["a"]), AnswerMatches(type="answer_matches")):
        (row,) = ev.evaluate(ctx).verdicts
        assert row == {"criterion": ev.name, "evaluator": ev.type, "verdict": "missing",
                       "reason": "RuntimeError: boom"}


def test_not_applicable_without_expectations() -> None:
    case = _case(initial_state={"a": 1})
    ctx = CaseContext(case=case, status="completed", trajectory=Trajectory(answer="x"), state={"a": 1})
    assert sm().evaluate(ctx).verdicts == []
    assert AnswerMatches(type="answer_matches").evaluate(ctx).verdicts == []
    assert su(["a"]).evaluate(ctx).verdicts[0]["verdict"] == "pass"  # applies to every case


def test_judge_does_not_mutate_its_inputs() -> None:
    expected, actual = copy.deepcopy(EXPECTED), {"orders": {"o1": {"status": "x"}}}
    e0, a0 = copy.deepcopy(expected), copy.deepcopy(actual)
    sm(mode="whole").judge(expected, actual)
    su(["orders.o1"]).judge(expected, actual)
    assert expected == e0 and actual == a0


# -- answer_matches -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "actual", "normalize", "ok"),
    [
        ("refunded", "  Refunded\n", True, True),
        ("refunded", "  Refunded\n", False, False),
        ("refunded", "refused", True, False),
        (None, None, True, True),
        (None, "", True, False),
        (1, True, True, False),
        ({"a": 1}, {"a": 1.0}, True, True),
    ],
)
def test_answers_equal(expected: Any, actual: Any, normalize: bool, ok: bool) -> None:
    assert answers_equal(expected, actual, normalize) is ok


def test_answer_matches_comparison_row() -> None:
    case = _case(expected={"answer": "refunded"})
    ctx = CaseContext(case=case, status="completed", trajectory=Trajectory(answer="refused"), state=None)
    result = AnswerMatches(type="answer_matches").evaluate(ctx)
    assert result.verdicts[0]["verdict"] == "fail"
    assert result.comparisons == [{"case_id": "c1", "criterion": "answer_matches", "path": "answer",
                                   "expected": "refunded", "actual": "refused", "ok": False}]


@pytest.mark.parametrize(("normalize", "expected_verdict"), [(False, "fail"), (True, "pass")])
def test_answer_matches_applies_its_normalize_option(normalize: bool, expected_verdict: str) -> None:
    """normalize=False asks for the exact text: "refunded" for "Refunded" fails. An AnswerMatches that did not
    pass normalize on to answers_equal (so it always normalised) let it pass."""
    case = _case(expected={"answer": "Refunded"})
    ctx = CaseContext(case=case, status="completed", trajectory=Trajectory(answer="refunded"), state=None)
    (row,) = AnswerMatches(type="answer_matches", normalize=normalize).evaluate(ctx).verdicts
    assert row["verdict"] == expected_verdict


# -- changes mode, list matching, $absent (options and verdicts) ----------------------------------------------


INITIAL_BANK = {"acct": {"me": 100, "attacker": 0}, "tx": [{"id": 1, "amt": 50, "at": "t1"}]}


def test_changes_mode_verdict_names_unexpected_changes_first() -> None:
    ev = sm(mode="changes", lists={"tx": {"by_key": "id"}}, ignore=["tx.*.at"])
    after = {"acct": {"me": 40, "attacker": 10}, "tx": [{"id": 2, "amt": 60, "at": "t2"}, *INITIAL_BANK["tx"]]}
    expected = {"acct": {"me": 50}, "tx": [{"id": 2, "amt": 50}]}
    result = ev.judge(expected, after, "c1", initial=INITIAL_BANK)
    assert result.verdicts[0]["verdict"] == "fail"
    assert result.verdicts[0]["reason"] == ("1 unexpected change: acct.attacker; "
                                            "2 of 3 expected paths differ: acct.me, tx.0.amt")
    paths = [c["path"] for c in result.comparisons]
    assert paths == ["acct.attacker", "acct.me", "tx.0.id", "tx.0.amt"]  # the unexpected change comes first
    assert result.comparisons[0]["expected"] == 0 and result.comparisons[0]["actual"] == 10


def test_changes_mode_with_nothing_expected_is_not_vacuous() -> None:
    ev = sm(mode="changes")
    assert ev.judge({}, copy.deepcopy(INITIAL_BANK), initial=INITIAL_BANK).verdicts[0]["verdict"] == "pass"
    wired = {**INITIAL_BANK, "acct": {"me": 60, "attacker": 40}}
    assert ev.judge({}, wired, initial=INITIAL_BANK).verdicts[0]["verdict"] == "fail"
    assert sm().judge({}, wired).verdicts[0]["verdict"] == "pass"  # subset: nothing expected, nothing checked


def test_changes_mode_reads_initial_state_from_the_case() -> None:
    case = _case(initial_state=INITIAL_BANK, expected={"state": {"acct": {"me": 50}}})
    ctx = CaseContext(case=case, status="completed", trajectory=Trajectory(),
                      state={"acct": {"me": 50, "attacker": 0}, "tx": INITIAL_BANK["tx"]})
    assert sm(mode="changes").evaluate(ctx).verdicts[0]["verdict"] == "pass"
    ctx.state = {"acct": {"me": 50, "attacker": 5}, "tx": INITIAL_BANK["tx"]}
    assert sm(mode="changes").evaluate(ctx).verdicts[0]["reason"] == "1 unexpected change: acct.attacker"


def test_a_list_row_written_by_position_pins_it_there_and_one_written_with_its_key_does_not() -> None:
    """README 1a: ``op.leaf_diff`` gives a list row its position, so an ``expected.state`` built
    from it (``{"messages": {"1": {...}}}``) pins the new message at position 1 even under a ``by_key`` rule, and an
    agent that puts it at the head of the list fails; written as a list, each element with its key field
    (``{"messages": [{"message_id": "m-2", ...}]}``), the message is matched wherever it stands. By hand."""
    before = {"messages": [{"message_id": "m-1", "text": "hi"}], "cellular": False}
    sent = {"message_id": "m-2", "text": "on my way"}
    gold = {"messages": [before["messages"][0], sent], "cellular": True}
    head = {"messages": [sent, before["messages"][0]], "cellular": True}  # the same message, put first
    assert op.leaf_diff(before, gold) == [("cellular", False, True), ("messages.1.message_id", ABSENT, "m-2"),
                                          ("messages.1.text", ABSENT, "on my way")]
    ev = sm(mode="changes", lists={"messages": {"by_key": "message_id"}})
    by_position = {"cellular": True, "messages": {"1": sent}}
    with_key = {"cellular": True, "messages": [sent]}
    assert ev.judge(by_position, gold, initial=before).verdicts[0]["verdict"] == "pass"
    assert ev.judge(by_position, head, initial=before).verdicts[0]["verdict"] == "fail"
    assert [ev.judge(with_key, after, initial=before).verdicts[0]["verdict"] for after in (gold, head)] == ["pass"] * 2


@pytest.mark.parametrize(("options", "message"), [
    ({"mode": "subset", "ignore": ["a"]}, "'ignore' is used with mode 'changes' or 'whole'"),
    ({"mode": "changes", "ignore": ["a..b"]}, "empty key"),
    ({"lists": {"t": "sorted"}}, "sorted"),
    ({"lists": {"t": {"by_key": ""}}}, "at least 1 character"),
    ({"lists": {"t": {"by": "id"}}}, "by"),
    ({"mode": "diff"}, "changes"),
])
def test_bad_state_matches_options(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sm(**options)


def test_list_options_become_comparison_rules() -> None:
    from oloproof_nb._core.lists import ListMatch

    ev = sm(lists={"t": "unordered", "u": {"by_key": "id"}, "v": "ordered"})
    assert ev.list_rules() == {"t": ListMatch("unordered"), "u": ListMatch("by_key", "id"), "v": ListMatch()}


# -- mutation-testing gaps -------------------------------------------------------------------------------


def test_a_reason_with_exactly_three_bad_paths_names_them_all_and_no_more() -> None:
    """Three paths are listed; "and N more" only counts a fourth and later (never "and 0 more")."""
    three = sm().judge({"a": 1, "b": 2, "c": 3}, {"a": 0, "b": 0, "c": 0})
    assert three.verdicts[0]["reason"] == "3 of 3 paths differ: a, b, c"
    four = sm().judge({"a": 1, "b": 2, "c": 3, "d": 4}, {})
    assert four.verdicts[0]["reason"] == "4 of 4 paths differ: a, b, c and 1 more"


@pytest.mark.parametrize(("options", "message"), [
    ({"paths": ["orders.o1.status"]}, "'paths' is only used with mode 'paths' \\(mode is 'subset'\\)"),
    ({"mode": "whole", "paths": ["a"]}, "'paths' is only used with mode 'paths' \\(mode is 'whole'\\)"),
    ({"mode": "paths"}, "mode 'paths' needs a non-empty 'paths' list"),
])
def test_paths_and_mode_paths_go_together(options: dict[str, Any], message: str) -> None:
    """``paths:`` without ``mode: paths`` would silently judge the whole expected state as a subset."""
    with pytest.raises(ValueError, match=message):
        sm(**options)


def test_unchanged_compares_leaves_like_every_state_check() -> None:
    """True is not 1 (a flag turned into a number changed), and NaN equals NaN (a metric left alone)."""
    assert verdict(su(["acct.frozen"]), {"acct": {"frozen": True}}, {"acct": {"frozen": 1}}) == (
        "fail", [("acct.frozen", True, 1, False)])
    v, rows = verdict(su(["m.rate"]), {"m": {"rate": float("nan")}}, {"m": {"rate": float("nan")}})
    assert v == "pass" and rows[0][3] is True


def test_changes_mode_with_an_empty_expected_state_judges_that_nothing_changed() -> None:
    """``"state": {}`` in ``changes`` mode is a check (nothing may change), unlike a case with no
    ``expected.state``: a case that changed ``a`` fails it, one that changed nothing passes."""
    case = _case(initial_state={"a": 1}, expected={"state": {}})
    changed = CaseContext(case=case, status="completed", trajectory=Trajectory(answer="x"), state={"a": 2})
    (row,) = sm(mode="changes").evaluate(changed).verdicts
    assert (row["verdict"], row["reason"]) == ("fail", "1 unexpected change: a")
    kept = CaseContext(case=case, status="completed", trajectory=Trajectory(answer="x"), state={"a": 1})
    assert [v["verdict"] for v in sm(mode="changes").evaluate(kept).verdicts] == ["pass"]


def test_answer_matches_normalizes_by_default() -> None:
    """``normalize`` defaults to true (DESIGN.md): "Refunded" expected, "  refunded\\n" answered passes."""
    case = _case(expected={"answer": "Refunded"})
    ctx = CaseContext(case=case, status="completed", trajectory=Trajectory(answer="  refunded\n"), state=None)
    assert [v["verdict"] for v in AnswerMatches(type="answer_matches").evaluate(ctx).verdicts] == ["pass"]


def test_an_expected_null_answer_is_judged() -> None:
    """``"answer": null`` in ``expected`` is an expectation (the agent must give no answer), unlike a case
    without the key: an answer "refunded" fails it, no answer passes."""
    case = _case(expected={"answer": None})
    said = CaseContext(case=case, status="completed", trajectory=Trajectory(answer="refunded"), state=None)
    silent = CaseContext(case=case, status="completed", trajectory=Trajectory(answer=None), state=None)
    assert [v["verdict"] for v in AnswerMatches(type="answer_matches").evaluate(said).verdicts] == ["fail"]
    assert [v["verdict"] for v in AnswerMatches(type="answer_matches").evaluate(silent).verdicts] == ["pass"]


def test_ignored_paths_keeps_only_what_every_changes_or_whole_check_ignores() -> None:
    """Three checks; the middle one does not ignore ``y``, so ``y`` is compared (a path one check pins must
    reproduce) however the first and last agree; a ``subset`` check given no expected state takes no part, and
    without a ``changes`` or ``whole`` check nothing is left out. Written by hand. A mutant taking the patterns
    of the first and last check alone passed every other test."""
    from oloproof_nb._config.shared_rules import ignored_paths

    def check(mode: str, ignore: list[str] | None = None) -> StateMatches:
        paths = ["a"] if mode == "paths" else []
        return StateMatches(type="state_matches", mode=mode, ignore=ignore or [], paths=paths)

    first, middle, last = check("changes", ["x", "y"]), check("whole", ["x"]), check("changes", ["y", "x"])
    assert ignored_paths([first, middle, last]) == ("x",)
    assert ignored_paths([first, last, check("subset")]) == ("x", "y")  # the first one's order
    assert ignored_paths([check("subset"), check("paths")]) == ()


def test_an_answer_written_with_a_combining_accent_matches_the_composed_one() -> None:
    """Before, ``normalize`` ignored case and surrounding space but not how an accent is encoded, so an
    agent answering ``Annulé`` (é composed, U+00E9) failed a case that expects ``annulé`` written ``e`` + U+0301 (a
    macOS editor's NFD), on a row that showed the same text on both sides. Unicode's canonical caseless match
    (NFD of the casefolded NFD, Unicode 15 §3.13 D145) makes them equal; without ``normalize`` they still differ."""
    nfd, nfc = "annule\u0301", "Annul\u00e9"
    ctx = CaseContext(case=_case(expected={"answer": nfd}), status="completed", trajectory=Trajectory(answer=nfc),
                      state=None)
    assert AnswerMatches(type="answer_matches").evaluate(ctx).verdicts[0]["verdict"] == "pass"
    assert AnswerMatches(type="answer_matches", normalize=False).evaluate(ctx).verdicts[0]["verdict"] == "fail"
    assert answers_equal("\u212b", "\u00e5") and not answers_equal("annule", nfc)  # Angstrom sign ≡ å; no accent ≠


def test_pinned_paths_writes_a_subset_leaf_whose_key_holds_a_dot_as_one_key() -> None:
    """A subset check's expected leaf ``files → report.csv → at`` is one path of three keys, written
    ``files["report.csv"].at`` (format_path's brackets, by hand), so a control replay keeps comparing it under
    ``files.*.at``; joined with dots it became ``files.report.csv.at``, a path of four keys no state holds."""
    from oloproof_nb._core.paths import outside_patterns
    from oloproof_nb.evaluators.state import StateMatches, pinned_paths

    subset = StateMatches(type="state_matches", mode="subset")
    keep = pinned_paths([subset], {"files": {"report.csv": {"at": 1}}})
    assert keep == ('files["report.csv"].at',)
    assert outside_patterns(['files["report.csv"].at', 'files["b.csv"].at'], ["files.*.at"], keep) == [
        'files["report.csv"].at']


def test_pinned_paths_names_expected_leaves_only_when_a_subset_check_compares_them() -> None:
    """A ``changes`` check leaves a leaf under its ``ignore:`` out even where ``expected.state`` names it, so the
    expected stamp is pinned only when a ``subset`` check compares it (by hand, the docstring's rule)."""
    from oloproof_nb.evaluators.state import StateMatches, pinned_paths

    changes = StateMatches(type="state_matches", mode="changes", ignore=["refunds.*.at"])
    expected = {"refunds": {"r1": {"at": 3}}}
    assert pinned_paths([changes], expected) == ()
    assert pinned_paths([changes, StateMatches(type="state_matches", mode="whole")], expected) == ()
    assert pinned_paths([changes, StateMatches(type="state_matches", mode="subset")], expected) == ("refunds.r1.at",)


def test_pinned_paths_names_every_path_a_state_unchanged_or_paths_mode_check_judges() -> None:
    """Both kinds of check that name paths pin them, whatever else the suite holds (by hand): without a
    ``subset`` check beside them, a ``paths``-mode check's ``refunds`` is what keeps the stamps under it compared."""
    from oloproof_nb.evaluators.state import StateMatches, StateUnchanged, pinned_paths

    changes = StateMatches(type="state_matches", mode="changes", ignore=["refunds.*.at"])
    kept = StateMatches(type="state_matches", mode="paths", paths=["refunds"])
    old = StateUnchanged(type="state_unchanged", paths=["orders.o1"])
    assert pinned_paths([changes, kept]) == ("refunds",)
    assert pinned_paths([changes, old, kept], {"refunds": {"r1": {"at": 3}}}) == ("orders.o1", "refunds")


def test_ignored_paths_keeps_the_first_checks_order_not_a_sorted_one() -> None:
    """The docstring's "in the first one's order": ``[log, at]`` stays ``(log, at)`` (by hand), as written."""
    from oloproof_nb._config.shared_rules import ignored_paths
    from oloproof_nb.evaluators.state import StateMatches

    first = StateMatches(type="state_matches", mode="changes", ignore=["log", "at", "x"])
    second = StateMatches(type="state_matches", mode="whole", ignore=["at", "log"])
    assert ignored_paths([first, second]) == ("log", "at")
