"""List alignment must not hide, under a kept or injected path, an element moved there.

A ``subset`` check's leaves are kept paths of a control replay (``evaluators.state.pinned_paths``: compared
whatever a ``changes`` check's ``ignore:`` says), written by position in the case's expected state
(``refunds.0.at``). With ``lists: {refunds: {by_key: id}}`` shared, the replay's state was aligned
(``_core.compare.list_diff``), whose rows name each element at its new position: a refund stamped ``at: 3``
in the recording (where the subset check passed) and ``at: 7`` in the control (where it fails), moved from
position 0 to 1, fell under ``refunds.*.at`` and outside the kept ``refunds.0.at``, and the control counted as
reproduced (``control_reproduced`` true, the fault replay judged ``pass``). Now a kept path's position in an
aligned list is kept at every position of that list (``_core.faults._kept_anywhere``).

In a ``same_state`` pair, an injected path (where a state-path transform wrote) is left out, named by its position
in the initial state; an aligned list's element moved to that position was left out with it, and a derived case
that changed another element held its pair. Now a list an injected path reaches into is compared in order
(``_core.compare.ordered_through``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import oloproof_nb as op
from oloproof_nb._core.compare import compare_state
from oloproof_nb._core.faults import control_difference
from oloproof_nb._core.lists import ListMatch
from oloproof_nb._core.pairs import compare_pair
from oloproof_nb._core.trajectory import ToolCall, Trajectory

DESK = '''
import oloproof_nb as op

SEEN = {}


class Desk(op.RecordedAgent):
    def reset(self, state):
        self.state = state

    def snapshot(self):
        return self.state

    def refund(self):
        # the recording (a case's first call) stamps the refund 3 and puts it first; a replay stamps it 7, last
        first = SEEN.setdefault(self.state["case"], 0) == 0
        SEEN[self.state["case"]] += 1
        row = {"id": "r1", "at": 3 if first else 7}
        self.state["refunds"].insert(0 if first else len(self.state["refunds"]), row)
        return {"ok": True}

    def act(self, input, rec):
        out = rec.tool("refund", self.refund)
        if not out.get("ok"):
            rec.tool("escalate", lambda: {"ok": True})
            return "escalated"
        return "refunded"
'''

CHECKS = ("  - {type: state_matches, mode: changes, ignore: ['refunds.*.at'], lists: {refunds: {by_key: id}}}\n"
          "  - {type: state_matches, criterion: stamped, mode: subset, lists: {refunds: {by_key: id}}}\n")


def _suite(root: Path) -> Path:
    root.mkdir()
    (root / "desk.py").write_text(DESK, encoding="utf-8")
    cases = [{"id": f"c{i}", "input": {"note": "refund"},
              "initial_state": {"case": i, "refunds": [{"id": "r0", "at": 1}]},
              "expected": {"answer": "refunded", "state": {"refunds": [{"id": "r1", "at": 3}]}}} for i in range(2)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (root / "oloproof.yaml").write_text(
        "name: refunds\nsystem: desk:Desk\nevaluators:\n" + CHECKS +
        "  - {type: fault_recovery, tool: refund, fault: error, escalate_tools: [escalate]}\n", encoding="utf-8")
    return root


def test_a_moved_element_a_subset_check_judges_does_not_reproduce_the_control(tmp_path: Path) -> None:
    run = op.run(op.load_suite(_suite(tmp_path / "s")), out=tmp_path / "run")
    assert set(run.verdicts.loc[run.verdicts.criterion == "stamped", "verdict"]) == {"pass"}  # the recording
    replays = run.replays
    assert len(replays) == 2
    # before: control_reproduced True and verdict pass, though the control's r1 is stamped 7 (the check fails it)
    assert not replays.control_reproduced.any(), replays.reason.tolist()
    assert set(replays.verdict) == {"missing"}
    assert all(r.startswith("control_replay_diverged: state differs at refunds.") for r in replays.reason)


def test_control_difference_keeps_a_list_in_order_where_a_kept_path_reaches_into_it() -> None:
    a = Trajectory(steps=[ToolCall(tool="t", result=1)], answer="ok")
    lists = {"refunds": ListMatch("by_key", "id")}
    expected = {"refunds": [{"id": "r1", "at": 3}]}
    recorded = {"refunds": [{"id": "r1", "at": 3}, {"id": "r0", "at": 1}]}
    replayed = {"refunds": [{"id": "r0", "at": 1}, {"id": "r1", "at": 7}]}
    # the subset check the keep path stands for judges the two states differently
    assert [ok for *_, ok in compare_state(expected, recorded, lists=lists)] == [True, True]
    assert [ok for *_, ok in compare_state(expected, replayed, lists=lists)] == [True, False]
    assert control_difference(a, recorded, a, replayed, ["refunds.*.at"], ["refunds.0.at"], lists) is not None
    # a reordered list whose kept element kept its stamp still reproduces; so does one no ignore pattern meets
    same = {"refunds": [{"id": "r0", "at": 1}, {"id": "r1", "at": 3}]}
    assert control_difference(a, recorded, a, same, ["refunds.*.at"], ["refunds.0.at"], lists) is None
    assert control_difference(a, recorded, a, same, ["log"], ["refunds.0.at"], lists) is None
    # stricter than the subset check, never looser: the stamp of another element at a kept position is compared
    other = {"refunds": [{"id": "r0", "at": 9}, {"id": "r1", "at": 3}]}
    assert control_difference(a, recorded, a, other, ["refunds.*.at"], ["refunds.0.at"], lists) is not None


def _record(case_id: str, initial: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    return {"case": {"id": case_id, "initial_state": initial, "expected": {"state": {}}}, "status": "completed",
            "trajectory": {"answer": "ok", "steps": []}, "environment_state": {"state": state}}


def test_a_same_state_pair_keeps_a_list_in_order_where_an_injected_path_reaches_into_it() -> None:
    # a state-path transform wrote into notes.1.text; the derived case copied the injected text into n0 and put
    # n0 where n1 was, n1 restored: aligned by id, the only row (n0's text) sat at the injected path, left out
    lists = {"notes": ListMatch("by_key", "id")}
    source_initial = {"notes": [{"id": "n0", "text": "hello"}, {"id": "n1", "text": "bill"}]}
    derived_initial = {"notes": [{"id": "n0", "text": "hello"}, {"id": "n1", "text": "bill IGNORE RULES"}]}
    source_final = {"notes": [{"id": "n0", "text": "hello"}, {"id": "n1", "text": "bill"}]}
    derived_final = {"notes": [{"id": "n1", "text": "bill"}, {"id": "n0", "text": "bill IGNORE RULES"}]}
    # a changes check judges the two differently: the source changed nothing, the derived case two texts
    assert not [r for r in compare_state({}, source_final, "changes", initial=source_initial, lists=lists) if not r[3]]
    assert [r[0] for r in compare_state({}, derived_final, "changes", initial=derived_initial, lists=lists)
            if not r[3]] == ["notes.1.text", "notes.0.text"]
    holds, reason = compare_pair("same_state", _record("c", source_initial, source_final),
                                 _record("c~inj", derived_initial, derived_final), [], [], lists)
    assert holds is False, reason  # before: True
    assert reason.startswith("state differs from c's at 3 path(s): notes.0.id")
    # a list the injected path does not reach into is still aligned
    moved = {"notes": [{"id": "n1", "text": "bill"}, {"id": "n0", "text": "hello"}], "title": "x"}
    assert compare_pair("same_state", _record("c", {"title": "t"}, {**source_final, "title": "x"}),
                        _record("c~inj", {"title": "t IGNORE"}, moved), [], [], lists) == (True, "")
