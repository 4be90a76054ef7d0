"""A case line's ``"expected": {"state": null}`` is refused, naming the file and the line; so is a key
of ``expected.state`` that differs from the key ``initial_state`` holds there only by a surrounding space.

Before, it read as "no expected state": the case left every state check without a word. On a three-case suite
whose third case zeroes a balance (``run.changes`` shows ``balance 100 -> 0``), ``state_matches`` in ``changes``
mode counted n = 2, 2 passed, rate 1.0: the case that did the damage was simply not counted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb._config.cases import load_cases
from oloproof_nb._core.case import case_from_mapping
from oloproof_nb.cli import main
from oloproof_nb.errors import CaseFileError
from oloproof_nb.evaluators import StateMatches

DESK = """\
import oloproof_nb as op

class Desk(op.RecordedAgent):
    version = "wire-1"
    def reset(self, state): self.state = state
    def snapshot(self): return self.state
    def act(self, input, rec):
        if input.get("wire"):
            self.state["balance"] = 0
        return "ok"
"""


def _suite(folder: Path, third_state: object) -> Path:
    """Three cases that must change nothing; the third one's desk zeroes the balance."""
    folder.mkdir()
    (folder / "oloproof.yaml").write_text(
        "name: wire\nsystem: desk:Desk\nevaluators:\n  - {type: state_matches, mode: changes}\n", encoding="utf-8")
    (folder / "release.yaml").write_text("criteria: {state_matches: 0.5}\n", encoding="utf-8")
    (folder / "desk.py").write_text(DESK, encoding="utf-8")
    cases = [{"id": "c1", "input": {}, "initial_state": {"balance": 100}, "expected": {"state": {}}},
             {"id": "c2", "input": {"n": 2}, "initial_state": {"balance": 100}, "expected": {"state": {}}},
             {"id": "c3", "input": {"wire": True}, "initial_state": {"balance": 100},
              "expected": {"answer": "ok", "state": third_state}}]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return folder


def test_a_null_expected_state_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    folder = _suite(tmp_path / "wire", None)
    before = (folder / "cases.jsonl").read_bytes()
    with pytest.raises(CaseFileError) as caught:
        load_cases(folder / "cases.jsonl")
    message = str(caught.value)
    assert str(folder / "cases.jsonl") in message and "line 3:" in message
    assert "'state' is null" in message and "leave 'state' out" in message
    assert (folder / "cases.jsonl").read_bytes() == before  # the input is not modified


def test_the_command_line_refuses_it_in_one_line_with_exit_2(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    folder = _suite(tmp_path / "wire", None)
    code = main(["run", str(folder)])
    out, err = capsys.readouterr()
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "line 3:" in lines[0] and "'state' is null" in lines[0], err
    assert "Traceback" not in err + out
    assert not (folder / "runs").exists() or not any((folder / "runs").iterdir())


def test_the_same_case_with_an_empty_state_is_judged_and_fails(tmp_path: Path) -> None:
    """What the message offers instead: ``{}`` under ``mode: changes`` counts the third case, which fails (hand count:
    3 judged, 2 pass — the wired balance is the one unexpected change)."""
    run = op.run(op.load_suite(_suite(tmp_path / "wire", {})), progress=False)
    state = run.verdicts[run.verdicts["criterion"] == "state_matches"].set_index("case_id")
    assert sorted(state.index) == ["c1", "c2", "c3"]
    assert list(state["verdict"]) == ["pass", "pass", "fail"]
    assert state.loc["c3", "reason"] == "1 unexpected change: balance"
    row = op.gate(run).table.set_index("criterion").loc["state_matches"]
    assert (row["n"], row["passed"]) == (3, 2)


def test_a_null_answer_is_still_an_answer_and_a_missing_state_still_allowed() -> None:
    """Only ``state: null`` is refused: ``answer: null`` stays an expected answer (a pinned rule of the case
    model), and leaving ``state`` out stays "no state check judges this case"."""
    case = case_from_mapping({"id": "c", "input": {}, "expected": {"answer": None}})
    assert case.expected.has_answer and case.expected.state is None
    with pytest.raises(ValueError, match="'state' is null"):
        case_from_mapping({"id": "c", "input": {}, "expected": {"answer": "ok", "state": None}})


# -- a key of expected.state that differs from the state's key only by a space before or after it -----------------


@pytest.mark.parametrize(("held", "named"), [("ord-7", "ord-7 "), ("ord-7 ", "ord-7"), ("ord-7", " ord-7"),
                                             ("ord-7", "ord-7\u00a0")])
@pytest.mark.parametrize("compact", [False, True])
def test_an_expected_key_that_differs_only_by_a_surrounding_space_is_refused(tmp_path: Path, held: str, named: str,
                                                                            compact: bool) -> None:
    """``{"orders": {"ord-7 ": {"$absent": true}}}`` where initial_state holds ``ord-7``: every table shows the same
    name, and the removal is judged at a key the state never held, so an agent that deleted nothing passed it
    (before: loaded without a word; on three such cases an idle desk scored state_matches 3 of 3 in changes mode).
    The line reads as written (ASCII, no escape; U+00A0 is printable), which used to skip the walk for look-alikes."""
    case = {"id": "c1", "input": {}, "initial_state": {"orders": {held: {"status": "open"}, "ord-8": {}}},
            "expected": {"state": {"orders": {named: {"$absent": True}}}}}
    idle = StateMatches(type="state_matches", mode="changes").judge(case["expected"]["state"], case["initial_state"],
                                                                    initial=case["initial_state"])
    assert idle.verdicts[0]["verdict"] == "pass"  # what the check says of an agent that did nothing
    path = tmp_path / "cases.jsonl"
    line = json.dumps(case, ensure_ascii=False, separators=(",", ":") if compact else None)
    path.write_text(json.dumps({"id": "c0", "input": {}}) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(CaseFileError) as err:
        load_cases(path)
    message = str(err.value)
    assert message.startswith(f"{path}: line 2: expected.state names ") and "\n" not in message
    assert f"whose key {named!r} reads as the key {held!r} initial_state holds there" in message
    assert "surrounding spaces" in message


def test_keys_with_spaces_written_alike_or_both_named_still_load(tmp_path: Path) -> None:
    """A key with a space that initial_state writes the same way, both spellings named (the key respelt), and a
    value (not a key) with surrounding spaces are not look-alike keys."""
    rows = [{"id": "c1", "input": {}, "initial_state": {"o": {"a ": 1}}, "expected": {"state": {"o": {"a ": 2}}}},
            {"id": "c2", "input": {}, "initial_state": {"o": {"a": 1}},
             "expected": {"state": {"o": {"a": {"$absent": True}, "a ": 1}}}},
            {"id": "c3", "input": {}, "initial_state": {"o": {"a": " x "}}, "expected": {"state": {"o": {"b": " x "}}}}]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert [c.expected.state for c in load_cases(path)] == [r["expected"]["state"] for r in rows]
