"""Lists nested deeper than the comparison can match under an ``unordered`` or ``by_key`` rule (each level of
matching takes several of Python's stack frames) leave the check ``missing`` with a reason naming where and how
deep, and the run goes on. Before, a case whose state nested 150 lists (within ``MAX_DEPTH``, so it loaded) under
``lists: {"**": unordered}`` stopped the run: ``internal error: RecursionError ... (a bug in oloproof_nb ...)``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb.evaluators.state import StateMatches

DESK = '''
import oloproof_nb as op


class Desk(op.RecordedAgent):
    def reset(self, state):
        self.state = state

    def snapshot(self):
        return self.state

    def act(self, input, rec):
        return "done"
'''


def _nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def _suite(root: Path, depth: int, checks: str) -> Path:
    root.mkdir()
    (root / "desk.py").write_text(DESK, encoding="utf-8")
    cases = [{"id": "deep", "input": {"q": "x"}, "initial_state": {"t": _nested(depth, {"a": 1, "b": 2})},
              "expected": {"state": {"t": _nested(depth, {"a": 1})}}},
             {"id": "flat", "input": {"q": "x"}, "initial_state": {"t": [{"a": 1, "b": 2}]},
              "expected": {"state": {"t": [{"a": 1}]}}}]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (root / "oloproof.yaml").write_text("name: deep\nsystem: desk:Desk\nevaluators:\n" + checks, encoding="utf-8")
    return root


def test_a_run_with_unordered_lists_nested_150_deep_judges_the_case_missing(tmp_path: Path) -> None:
    limit = sys.getrecursionlimit()
    root = _suite(tmp_path / "s", 150, "  - {type: state_matches, mode: subset, lists: {'**': unordered}}\n")
    run = op.run(op.load_suite(root), out=tmp_path / "run")
    verdicts = run.verdicts.set_index("case_id")
    assert verdicts.loc["flat", "verdict"] == "pass"  # the run went on past the deep case
    assert verdicts.loc["deep", "verdict"] == "missing"
    reason = verdicts.loc["deep", "reason"]
    assert reason.startswith("state_too_deep: expected.state nests lists 150 deep at t, too deep to match by an "
                             "unordered or by_key rule")
    assert "match the deeper lists ordered" in reason and "\n" not in reason
    assert sys.getrecursionlimit() == limit  # the process is left as found


@pytest.mark.parametrize("mode", ["subset", "whole", "changes"])
def test_each_mode_gives_the_reason_when_matching_runs_out_of_stack(mode: str) -> None:
    ev = StateMatches(type="state_matches", mode=mode, lists={"**": "unordered"})
    expected = {"x": 1, "t": {"u": _nested(199, {"a": 1})}}
    state = {"x": 1, "t": {"u": _nested(199, {"a": 1, "b": 2} if mode != "whole" else {"a": 2})}}
    result = ev.judge(expected, state, "deep", initial={"x": 1, "t": {"u": []}})
    [verdict] = result.verdicts
    assert verdict["verdict"] == "missing"
    assert verdict["reason"].startswith("state_too_deep: expected.state nests lists 199 deep at t.u,")
    assert result.comparisons == []


def test_ordered_lists_as_deep_are_still_compared() -> None:
    # by hand: one leaf under 199 lists, compared position by position (no matching): t.0.0…0.a, equal
    ev = StateMatches(type="state_matches", mode="subset")
    result = ev.judge({"t": _nested(199, {"a": 1})}, {"t": _nested(199, {"a": 1, "b": 2})}, "deep")
    assert [v["verdict"] for v in result.verdicts] == ["pass"]
    assert [row["path"] for row in result.comparisons] == ["t" + ".0" * 199 + ".a"]


@pytest.mark.parametrize("check", [
    "{type: state_matches, mode: subset, tolerance: 0.5, lists: {'**': unordered}}",
    "{type: state_matches, mode: whole, tolerance: 0.5, lists: {'**': unordered}}",
    "{type: state_matches, mode: whole, ignore: ['**.b'], lists: {'**': unordered}}",
])
def test_a_suite_whose_check_load_compares_the_idle_agent_loads_and_runs(tmp_path: Path, check: str) -> None:
    # with a tolerance, or ignore patterns in whole mode, op.load_suite compares each case's expected.state with
    # its initial_state (does an agent that changes nothing pass?): that comparison ran out of stack too
    root = _suite(tmp_path / "s", 150, f"  - {check}\n")
    run = op.run(op.load_suite(root), out=tmp_path / "run")
    verdicts = run.verdicts.set_index("case_id")
    assert verdicts.loc["deep", "verdict"] == "missing"
    assert verdicts.loc["deep", "reason"].startswith("state_too_deep: expected.state nests lists 150 deep at t,")


def test_the_reason_names_the_depth_of_the_expected_lists_not_of_the_state() -> None:
    # by hand: expected.state holds 199 lists at t.u; the state 203 there (4 more inside its element) and 199 at z
    ev = StateMatches(type="state_matches", mode="subset", lists={"**": "unordered"})
    expected = {"t": {"u": _nested(199, {"a": 1})}}
    state = {"t": {"u": _nested(199, {"a": 1, "b": _nested(4, 0)})}, "z": _nested(199, 0)}
    [verdict] = ev.judge(expected, state, "deep").verdicts
    assert verdict["verdict"] == "missing"
    assert verdict["reason"].startswith("state_too_deep: expected.state nests lists 199 deep at t.u,")
