"""The boolean options of the evaluators are strict, like ``allow_approximate_methods`` of release.yaml and
``require_fresh`` of an outcome contract: ``normalize: "no"`` or ``absent_ok: 1`` is a mistake, named
at ``load_suite`` with the file and the key, not read as a boolean."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import oloproof_nb as op
from oloproof_nb.cli import main

SYSTEM = '''
class Desk:
    def __init__(self):
        self.state = {}
    def reset(self, state):
        self.state = dict(state)
    def snapshot(self):
        return dict(self.state)
    def run(self, input):
        return {"steps": [], "answer": "Yes ", "status": "completed"}
'''


def suite(tmp: Path, evaluator: dict[str, Any]) -> Path:
    (tmp / "desk.py").write_text(SYSTEM)
    case = {"id": "c1", "input": {"q": 1}, "initial_state": {"a": 1}, "expected": {"answer": "yes", "state": {"a": 1}}}
    (tmp / "cases.jsonl").write_text(json.dumps(case) + "\n")
    (tmp / "oloproof.yaml").write_text(yaml.safe_dump({"name": "b", "system": "desk:Desk", "evaluators": [evaluator]}))
    return tmp


OPTIONS = [({"type": "answer_matches"}, "normalize"),
           ({"type": "state_matches", "mode": "paths", "paths": ["a"]}, "absent_ok"),
           ({"type": "state_unchanged", "paths": ["a"]}, "absent_ok")]


@pytest.mark.parametrize(("evaluator", "key"), OPTIONS)
@pytest.mark.parametrize("value", ["no", "yes", "false", 0, 1, 1.0])
def test_a_boolean_option_refuses_text_and_numbers(tmp_path: Path, evaluator: dict[str, Any], key: str,
                                                   value: object) -> None:
    # before: pydantic's lax booleans read "no", "off", 0 as false and "yes", 1 as true without a word
    folder = suite(tmp_path, {**evaluator, key: value})
    with pytest.raises(op.ConfigError) as err:
        op.load_suite(folder)
    message = str(err.value)
    assert message.startswith(f"{folder / 'oloproof.yaml'}: evaluators[0].{key}: Input should be a valid boolean")
    assert "\n" not in message


@pytest.mark.parametrize(("evaluator", "key"), OPTIONS)
def test_true_and_false_are_read(tmp_path: Path, evaluator: dict[str, Any], key: str) -> None:
    for value in (True, False):
        folder = suite(tmp_path, {**evaluator, key: value})
        assert getattr(op.load_suite(folder).config.evaluators[0], key) is value


def test_normalize_false_still_compares_exactly(tmp_path: Path) -> None:
    # the system answers "Yes " for "yes": equal when normalised, not when compared as written (a hand count: 1, 0)
    passed = []
    for normalize in (True, False):
        (tmp_path / str(normalize)).mkdir()
        folder = suite(tmp_path / str(normalize), {"type": "answer_matches", "normalize": normalize})
        run = op.run(op.load_suite(folder), out=folder / "runs" / "r", progress=False)
        passed.append(int((run.verdicts["verdict"] == "pass").sum()))
    assert passed == [1, 0]


def test_the_command_line_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = suite(tmp_path, {"type": "answer_matches", "normalize": "no"})
    assert main(["run", str(folder), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "evaluators[0].normalize: Input should be a valid boolean (got 'no')" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
