"""Mutation round M41 on compare's ``base_missing`` rule (review R40): it only ever holds a NO_REGRESSION back."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op


class Desk:
    """Answers ``ok``; ``down``: cases whose sandbox raises (error), ``wrong``: cases answered wrong."""

    def __init__(self, down: frozenset[int] = frozenset(), wrong: frozenset[int] = frozenset(),
                 version: str = "a") -> None:
        self.down, self.wrong, self.version, self.state = down, wrong, version, {}

    def reset(self, state: dict[str, Any]) -> None:
        self.state = copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def run(self, input: dict[str, Any]) -> dict[str, Any]:
        if input["n"] in self.down:
            raise ConnectionError("sandbox database unreachable")
        return {"steps": [], "answer": "no" if input["n"] in self.wrong else "ok", "status": "completed"}


def test_a_regression_with_base_missing_rows_stays_a_regression(make_suite: Callable[..., Path],
                                                                tmp_path: Path) -> None:
    """Base down on c50 … c59; the candidate answers c00 … c29 and c50 … c59 wrong. By hand: 60 paired rows, base
    passes 50, candidate 20, pass_to_fail 30, d̂ = (20 − 50)/60 = −0.5, and counting the 10 unmeasured rows as base
    passes only makes it worse (−40/60). REGRESSION, not held back as ``base_missing`` (which would turn a decided
    regression into INSUFFICIENT_EVIDENCE: the rule applies to a NO_REGRESSION only)."""
    cases = [{"id": f"c{i:02d}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(60)]
    suite = op.load_suite(make_suite(cases, evaluators=[{"type": "answer_matches"}]))
    base = op.run(suite, system=lambda: Desk(down=frozenset(range(50, 60))), out=tmp_path / "base", progress=False)
    cand = op.run(suite, system=lambda: Desk(wrong=frozenset([*range(30), *range(50, 60)]), version="b"),
                  out=tmp_path / "cand", progress=False)
    cmp = op.compare(base, cand, release={"regression": {"margin": 0.1}})
    row = cmp.table.iloc[0]
    assert (row["n"], row["pass_to_fail"], row["fail_to_pass"], row["missing"]) == (60, 30, 0, 10)
    assert row["difference"] == pytest.approx(-0.5, abs=1e-15) and row["ci_high"] < -0.1
    assert row["verdict"] == "REGRESSION" and "base_missing" not in row["reason"]
    assert cmp.verdict == "REGRESSION"


def test_each_criterion_is_bounded_on_its_own_rows(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """Two criteria; the base's sandbox was down on c00 (both missing there), the candidate passes every case.
    Counted as a base pass, c00 ties, so each criterion's 60 rows all tie: by hand d̂ = 0 ± (1 − 0.025^(1/60)),
    inside margin 0.1, NO_REGRESSION with the note, for each criterion alone (the bound of one criterion is taken
    on its rows, not on the 120 rows of both)."""
    cases = [{"id": f"c{i:02d}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(60)]
    suite = op.load_suite(make_suite(cases, evaluators=[{"type": "answer_matches"},
                                                        {"type": "answer_matches", "criterion": "answer_again"}]))
    base = op.run(suite, system=lambda: Desk(down=frozenset({0})), out=tmp_path / "base", progress=False)
    cand = op.run(suite, system=lambda: Desk(version="b"), out=tmp_path / "cand", progress=False)
    table = op.compare(base, cand, release={"regression": {"margin": 0.1}}).table.set_index("criterion")
    bound = -(1 - 0.025 ** (1 / 60))
    assert sorted(table.index) == ["answer_again", "answer_matches"]
    for criterion in table.index:
        row = table.loc[criterion]
        assert (row["n"], row["missing"], row["fail_to_pass"]) == (60, 1, 1)
        assert row["verdict"] == "NO_REGRESSION"
        assert "1 paired row(s) are missing in the base run" in row["reason"]
        assert f"ci_low is {bound:.4g}: NO_REGRESSION holds either way" in row["reason"]


EPOCHS = '''
class Sys:
    version = "base"
    def reset(self, state): self.state = dict(state)
    def snapshot(self): return dict(self.state)
    def run(self, input, epoch):
        if input["n"] == 0 and epoch == 2:
            raise ConnectionError("sandbox database unreachable")
        return {"steps": [], "answer": "ok", "status": "completed"}

class Cand(Sys):
    version = "cand"
    def run(self, input, epoch):
        return {"steps": [], "answer": "ok", "status": "completed"}
'''


def test_the_mean_over_two_epochs_is_bounded_row_by_row(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """30 cases of 2 epochs reduced by the mean (rows clustered by case); the base's sandbox was down in epoch 2 of
    c00, the candidate passes every row. As recorded: one gain, cluster_t ci_low −0.100 ≥ −0.2, NO_REGRESSION.
    Counted as a base pass that row ties, so every case's two rows tie: no change in 30 clusters, by hand
    d̂ = 0 with ci_low −(1 − 0.025^(1/30)) = −0.1157: NO_REGRESSION holds either way. The bound is the mean's over
    the 60 rows, not a per-case reduction (which has no interval for 2 epochs reduced by the mean)."""
    import sys

    cases = [{"id": f"c{i:02d}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(30)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Sys", system_code=EPOCHS,
                      epochs=2)
    suite = op.load_suite(root)
    base = op.run(suite, out=tmp_path / "base", progress=False)
    cand = op.run(suite, system=sys.modules[suite.resolve_system().__module__].Cand, out=tmp_path / "cand",
                  progress=False)
    row = op.compare(base, cand, release={"allow_approximate_methods": True,
                                          "regression": {"margin": 0.2}}).table.iloc[0]
    assert (row["n"], row["missing"], row["fail_to_pass"], row["pass_to_fail"]) == (60, 1, 1, 0)
    assert row["verdict"] == "NO_REGRESSION"
    assert "1 paired row(s) are missing in the base run" in row["reason"]
    bound = -(1 - 0.025 ** (1 / 30))  # no change in any of 30 clusters: Clopper-Pearson's bound of 0 in 30
    assert f"ci_low is {bound:.4g}: NO_REGRESSION holds either way" in row["reason"] and f"{bound:.4g}" == "-0.1157"
