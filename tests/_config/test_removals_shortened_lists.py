"""A list of ``expected.state`` shorter than ``initial_state``'s, each element as it was, in ``changes`` mode.

``changes`` mode reads an expected list by position: ``{"cart": ["A"]}`` on an ``initial_state`` of ``["A", "B"]``
asks that ``cart.0`` be ``"A"``, as it is, and names nothing past it. A case written so, meaning that ``B`` is
removed, passed an agent that did nothing and failed one that removed ``B`` (``1 unexpected change: cart.1``), and
``op.load_suite`` said nothing. It is named there now, as a removal of what the state never held is.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._core.compare import shortened_lists
from oloproof_nb._core.lists import ListMatch

DESK = '''
import copy


class Desk:
    def reset(self, state):
        self.state = copy.deepcopy(state)

    def snapshot(self):
        return self.state

    def run(self, input):
        if input["remove"]:
            self.state["cart"] = self.state["cart"][:1]
        return {"steps": [], "answer": "done", "status": "completed"}
'''


def _suite(root: Path, check: str, expected: Any, initial: Any = None) -> Path:
    root.mkdir()
    (root / "desk.py").write_text(DESK, encoding="utf-8")
    (root / "oloproof.yaml").write_text(f"name: cart\nsystem: desk:Desk\nevaluators:\n  - {check}\n",
                                        encoding="utf-8")
    lines = [{"id": case_id, "input": {"remove": remove},
              "initial_state": {"cart": ["A", "B"]} if initial is None else initial, "expected": {"state": expected}}
             for case_id, remove in (("removes", True), ("idle", False))]
    (root / "cases.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return root


def _warnings(root: Path) -> tuple[op.Suite, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        suite = op.load_suite(root)
    return suite, [str(w.message) for w in caught if issubclass(w.category, op.VacuousCheckWarning)]


def test_a_shorter_list_that_asks_for_no_change_is_named_at_load(tmp_path: Path) -> None:
    suite, found = _warnings(_suite(tmp_path / "suite", "{type: state_matches, mode: changes}", {"cart": ["A"]}))

    assert len(found) == 1
    assert found[0].startswith(f"{tmp_path / 'suite' / 'cases.jsonl'}: 2 list(s) of expected.state name fewer "
                               "elements than initial_state holds there, each as it holds it: line 1, case 'removes': "
                               "cart (1 of the 2 elements initial_state holds); line 2, case 'idle': cart (1 of the 2 "
                               "elements initial_state holds). In mode: changes a list names positions")
    assert "passes it in state_matches" in found[0]
    assert '{"cart": {"1": {"$absent": true}}}' in found[0]
    # what the warning says, as the run finds it: the idle agent passes, the one that removed B fails
    run = op.run(suite, out=tmp_path / "run", progress=False)
    verdicts = run.verdicts.set_index("case_id")
    assert verdicts["verdict"].to_dict() == {"removes": "fail", "idle": "pass"}
    assert verdicts.loc["removes", "reason"] == "1 unexpected change: cart.1"


def test_the_removal_written_by_position_is_not_named_and_judges_right(tmp_path: Path) -> None:
    suite, found = _warnings(_suite(tmp_path / "suite", "{type: state_matches, mode: changes}",
                                    {"cart": {"1": {"$absent": True}}}))

    assert found == []
    run = op.run(suite, out=tmp_path / "run", progress=False)
    assert run.verdicts.set_index("case_id")["verdict"].to_dict() == {"removes": "pass", "idle": "fail"}


@pytest.mark.parametrize(("check", "expected"), [
    ("{type: state_matches, mode: changes}", {"cart": ["C"]}),  # asks for a change: the idle agent fails it
    ("{type: state_matches, mode: changes}", {"cart": ["A", "B"]}),  # as long as the state's
    ("{type: state_matches, mode: changes}", {"cart": []}),  # an empty list asks for an empty one
    ("{type: state_matches, mode: subset}", {"cart": ["A"]}),  # subset names elements that must be there (README)
    ("{type: state_matches, mode: changes, lists: {cart: unordered}}", {"cart": ["A"]}),  # not by position
    ("{type: state_matches, mode: changes, ignore: [cart]}", {"cart": ["A"]}),  # named as an ignore pattern's
])
def test_a_list_read_otherwise_is_not_named(tmp_path: Path, check: str, expected: Any) -> None:
    found = _warnings(_suite(tmp_path / "suite", check, expected))[1]
    assert [message for message in found if "list(s) of expected.state" in message] == []


def test_lists_are_followed_as_the_comparison_reads_them() -> None:
    initial = {"orders": {"o1": {"lines": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}]}}, "log": [["x", "y"]]}
    # counted by hand: o1's lines name the first of two, as it is; log.0 names the first of two inside a list
    assert list(shortened_lists(initial, {"orders": {"o1": {"lines": [{"sku": "A"}]}}, "log": [["x"]]})) == [
        (("log", "0"), 1, 2), (("orders", "o1", "lines"), 1, 2)]
    assert list(shortened_lists(initial, {"orders": {"o1": {"lines": [{"qty": 5}]}}})) == []  # a change
    assert list(shortened_lists(initial, {"orders": {"o1": {"lines": {"0": {"sku": "A"}}}}})) == []  # by position
    by_key = {"orders.*.lines": ListMatch("by_key", "sku")}
    assert list(shortened_lists(initial, {"orders": {"o1": {"lines": [{"sku": "A"}]}}}, lists=by_key)) == []
    assert list(shortened_lists(initial, {"log": [["x"]]}, ignore=["log.*"])) == []


def test_a_list_whose_elements_past_it_are_ignored_is_not_named(tmp_path: Path) -> None:
    # ignore: [cart.1] hides B: the agent that leaves ["A"] passes as the idle one does; the line asks for no change
    suite, found = _warnings(_suite(tmp_path / "suite", '{type: state_matches, mode: changes, ignore: ["cart.1"]}',
                                    {"cart": ["A"]}))

    assert [message for message in found if "list(s) of expected.state" in message] == []
    run = op.run(suite, out=tmp_path / "run", progress=False)
    assert run.verdicts.set_index("case_id")["verdict"].to_dict() == {"removes": "pass", "idle": "pass"}
    # one element past it not hidden: named
    assert list(shortened_lists({"cart": ["A", "B", "C"]}, {"cart": ["A"]}, ignore=["cart.1"])) == [
        (("cart",), 1, 3)]


def test_a_list_that_asks_for_a_change_is_told_from_its_first_changed_element(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import oloproof_nb._core.compare as compare

    compared: list[object] = []
    subset = compare._subset

    def counted(exp: Any, *args: Any) -> None:
        compared.append(exp)
        subset(exp, *args)

    monkeypatch.setattr(compare, "_subset", counted)
    initial = {"cart": [{"sku": f"s{i}", "qty": i} for i in range(1000)]}
    # the first element changed: the other 998 need not be compared to tell that the line asks for a change
    expected = {"cart": [{"sku": "s0", "qty": 5}, *initial["cart"][1:999]]}

    assert list(shortened_lists(initial, expected)) == []
    assert len(compared) <= 3  # the element, its sku and its qty
def test_a_list_two_checks_read_alike_is_named_once_with_both_checks(tmp_path: Path) -> None:
    """Two ``changes`` checks that read expected.state in two ways (one ignores a key the case does not name) both
    read ``cart`` as asking for no change: each case's list is named once, and the warning names both checks."""
    root = _suite(tmp_path / "suite", "{type: state_matches, mode: changes, criterion: plain}", {"cart": ["A"]})
    (root / "oloproof.yaml").write_text(
        "name: cart\nsystem: desk:Desk\nevaluators:\n  - {type: state_matches, mode: changes, criterion: plain}\n"
        "  - {type: state_matches, mode: changes, criterion: stamped, ignore: [stamp]}\n", encoding="utf-8")
    found = _warnings(root)[1]
    assert len(found) == 1
    assert found[0].startswith(f"{root / 'cases.jsonl'}: 2 list(s) of expected.state name fewer elements than "
                               "initial_state holds there, each as it holds it: line 1, case 'removes': cart (1 of the "
                               "2 elements initial_state holds); line 2, case 'idle': cart (1 of the 2 elements "
                               "initial_state holds). In mode")
    assert "passes it in plain, stamped," in found[0]


def test_the_warning_shows_five_lists_and_counts_the_others(tmp_path: Path) -> None:
    root = _suite(tmp_path / "suite", "{type: state_matches, mode: changes}", {"cart": ["A"]})
    lines = [{"id": f"c{i}", "input": {"remove": False}, "initial_state": {"cart": ["A", "B"]},
              "expected": {"state": {"cart": ["A"]}}} for i in range(7)]
    (root / "cases.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    found = _warnings(root)[1]
    assert len(found) == 1 and found[0].count(" (1 of the 2 elements initial_state holds)") == 5
    assert "7 list(s) of expected.state" in found[0]
    assert "line 5, case 'c4': cart (1 of the 2 elements initial_state holds); and 2 more. In mode" in found[0]


def test_a_list_named_as_a_whole_is_not_named_again_by_its_elements() -> None:
    """``log`` names the first of two elements as they are; its first element is itself a shorter list, which the
    comparison never reads on its own (``log`` asks for no change already): one finding, ``log``, by hand."""
    initial = {"log": [["x", "y"], ["z"]]}
    assert list(shortened_lists(initial, {"log": [["x"]]})) == [(("log",), 1, 2)]


def test_a_shorter_list_that_changes_one_of_its_elements_is_not_named() -> None:
    """``["A", "X"]`` on ``["A", "B", "C"]`` asks that position 1 become ``"X"``: a change, which the idle agent
    fails, though position 0 holds already."""
    assert list(shortened_lists({"cart": ["A", "B", "C"]}, {"cart": ["A", "X"]})) == []
    assert list(shortened_lists({"cart": ["A", "B", "C"]}, {"cart": ["A", "B"]})) == [(("cart",), 2, 3)]


def test_a_list_beside_other_keys_is_found() -> None:
    initial = {"cart": ["A", "B"], "total": 2, "owner": {"name": "m1"}}
    assert list(shortened_lists(initial, {"cart": ["A"], "total": 1, "owner": {"name": "m2"}})) == [
        (("cart",), 1, 2)]
    # a number where initial_state holds a list, and an expected list longer than initial_state's, by hand
    assert list(shortened_lists({"cart": ["A", "B"], "n": [1, 2]}, {"cart": ["A"], "n": 3})) == [(("cart",), 1, 2)]
    assert list(shortened_lists({"log": [["x", "z"]]}, {"log": [["x"], ["y"]]})) == [(("log", "0"), 1, 2)]
