"""A number of a case line too large for a float (``1e400``) is refused naming the file and the line: Python's JSON
reads it as infinity without a word, so ``1e400`` and ``1e500`` were one number, and an ``expected.state`` holding
one passed an agent that left the other. The ``Infinity`` token says infinity as written and stays accepted."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from oloproof_nb._config.cases import load_cases
from oloproof_nb.errors import CaseFileError

GOOD = json.dumps({"id": "c1", "input": {"q": 1}})


@pytest.mark.parametrize("number", ["1e400", "-1e400", "1.5E+309", "2e308", "-9.9e9999"])
def test_a_number_past_a_float_is_refused_at_its_line(tmp_path: Path, number: str) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(GOOD + "\n" + '{"id": "c2", "input": {}, "initial_state": {"amount": ' + number + "}}\n",
                    encoding="utf-8")
    with pytest.raises(CaseFileError) as caught:
        load_cases(path)
    assert str(caught.value) == (f"{path}: line 2: the number {number} is too large for a float (it would be read as "
                                 "infinity); write a number within ±1.7976931348623157e308, or Infinity (-Infinity) "
                                 "where infinity is meant")


def test_the_largest_floats_and_the_infinity_tokens_are_taken(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "c1", "input": {}, "initial_state": {"a": 1.7976931348623157e308, '
                    '"b": -1.7976931348623157e308, "c": 1e-400, "d": Infinity, "e": -Infinity, '
                    '"f": ' + "9" * 400 + "}}\n", encoding="utf-8")
    state = load_cases(path)[0].initial_state
    assert state["a"] == 1.7976931348623157e308 and state["b"] == -1.7976931348623157e308
    assert state["c"] == 0.0  # below the smallest float: rounded to 0, as any decimal to its nearest float
    assert state["d"] == math.inf and state["e"] == -math.inf
    assert state["f"] == int("9" * 400)  # a whole number is read exactly, however long (to Python's digit limit)


def test_a_long_number_past_a_float_is_quoted_cut_to_forty_characters(tmp_path: Path) -> None:
    """A number written with 400 digits before its point quotes its first 39 characters and ``…``: the error stays
    one short line."""
    number = "1" + "0" * 400 + ".5"
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "c1", "input": {}, "initial_state": {"amount": ' + number + "}}\n", encoding="utf-8")
    with pytest.raises(CaseFileError) as caught:
        load_cases(path)
    assert str(caught.value) == (f"{path}: line 1: the number 1{'0' * 38}… is too large for a float (it would be "
                                 "read as infinity); write a number within ±1.7976931348623157e308, or Infinity "
                                 "(-Infinity) where infinity is meant")
