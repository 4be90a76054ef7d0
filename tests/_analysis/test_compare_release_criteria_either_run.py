"""compare: a release given may name a criterion only one of the two runs judges, and the refusal of a name
neither judges lists the criteria of both runs, the base run's first.

The base run's suite judged answer_matches and state_matches; the candidate's suite dropped state_matches. A
release.yaml written for the base (both criteria) is the one a team gives to compare the two: refusing it for the
criterion the candidate lost would hold back the comparison of the one criterion both judge.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op


class _Echo:
    def __init__(self) -> None:
        self.state: dict[str, Any] = {}

    def reset(self, state: dict[str, Any]) -> None:
        self.state = copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def run(self, input: dict[str, Any]) -> dict[str, Any]:  # noqa: A002 - the system protocol's parameter name
        return {"steps": [], "answer": input["answer"], "status": "completed"}


def test_a_criterion_the_base_alone_judges_is_kept(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    cases = [{"id": f"c{i:02d}", "input": {"answer": f"ok {i}"}, "initial_state": {}, "expected": {"answer": f"ok {i}"}}
             for i in range(6)]
    old = op.load_suite(make_suite(cases, evaluators=[{"type": "answer_matches"}, {"type": "state_matches"}]))
    new = op.load_suite(make_suite(cases, evaluators=[{"type": "answer_matches"}]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = op.run(old, system=lambda: _Echo(), out=tmp_path / "b", progress=False)
        cand = op.run(new, system=lambda: _Echo(), out=tmp_path / "c", progress=False)
        rule = {"criteria": {"answer_matches": 0.5, "state_matches": 0.5}}
        table = op.compare(base, cand, release=rule).table
    row = table.set_index("criterion").loc["answer_matches"]  # the one criterion both judge
    assert (row["n"], row["pass_to_fail"]) == (6, 0)  # by hand: 6 paired case runs, each answered right in both
    with pytest.raises(op.ConfigError, match=r"criteria\.state_match: no such criterion in either run; their "
                                             r"criteria: answer_matches, state_matches$"):
        op.compare(base, cand, release={"criteria": {"state_match": 0.5}})
    with pytest.raises(op.ConfigError, match=r"their criteria: answer_matches, state_matches$"):
        op.compare(cand, base, release={"criteria": {"state_match": 0.5}})  # the candidate's own, then the base's
