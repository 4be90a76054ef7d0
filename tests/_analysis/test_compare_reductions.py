"""compare: a release whose pass^k / pass@k asks more epochs than the runs made is a mistake in the file.

Two runs of 24 one-case clusters, 1 epoch each, the candidate answering wrong on c00-c03 (by hand: 4 of 24 rows
pass to fail). A release.yaml gating answer_matches with ``pass^2`` needs 2 tries of each case: ``op.gate`` of
either run refuses it (exit 2, naming ``criteria.answer_matches.reduce``), but ``op.compare`` read it as a
comparison that cannot decide, INSUFFICIENT_EVIDENCE with ``too_few_epochs`` (``oloproof compare`` exit 1, as for
a regression that is not ruled out), so a sound candidate was held back by a typo in the rule, and nothing said
which key was wrong. Now the comparison refuses it as the gate does, before either run is opened.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

import oloproof_nb as op
from oloproof_nb.cli import main

RULE = {"allow_approximate_methods": True, "criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^2"}}}
SAYS = (r"criteria\.answer_matches\.reduce: pass\^2 needs at least 2 epochs; run \S+ has epochs=1 .*"
        r"or reduce with k ≤ 1\)")


class _Answerer:
    """Answers ``input["answer"]``, and ``"wrong"`` for the tags in ``broken``."""

    def __init__(self, broken: frozenset[str] = frozenset(), version: str = "a") -> None:
        self.broken, self.version, self.state = broken, version, {}

    def reset(self, state: dict[str, Any]) -> None:
        self.state = copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def run(self, input: dict[str, Any]) -> dict[str, Any]:  # noqa: A002 - the system protocol's parameter name
        answer = "wrong" if input["tag"] in self.broken else input["answer"]
        return {"steps": [], "answer": answer, "status": "completed"}


@pytest.fixture
def runs(make_suite: Callable[..., Path], tmp_path: Path) -> tuple[op.Run, op.Run]:
    cases = [{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}", "answer": "ok"}, "expected": {"answer": "ok"}}
             for i in range(24)]
    suite = op.load_suite(make_suite(cases, evaluators=[{"type": "answer_matches"}]))
    base = op.run(suite, system=lambda: _Answerer(), out=tmp_path / "base", progress=False)
    cand = op.run(suite, system=lambda: _Answerer(frozenset({"c00", "c01", "c02", "c03"}), "b"),
                  out=tmp_path / "cand", progress=False)
    return base, cand


def test_a_reduction_above_the_runs_epochs_is_refused_as_the_gate_refuses_it(runs: tuple[op.Run, op.Run]) -> None:
    base, cand = runs
    with pytest.raises(op.ConfigError, match=SAYS):  # the gate's own message for this file
        op.gate(cand, release=RULE)
    with pytest.raises(op.ConfigError, match="^release: " + SAYS):  # was INSUFFICIENT_EVIDENCE, too_few_epochs
        op.compare(base, cand, release=RULE)
    # k within the runs' epochs is compared as before: pass^1 of one epoch is the mean (4 of 24 pass to fail)
    one = {**RULE, "criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^1"}}}
    row = op.compare(base, cand, release=one).table.iloc[0]
    assert (row["n"], row["pass_to_fail"], row["fail_to_pass"], row["difference"]) == (24, 4, 0, -4 / 24)


def test_oloproof_compare_exits_2_naming_the_file_and_the_key(runs: tuple[op.Run, op.Run], tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    base, cand = runs
    rule = tmp_path / "rule.yaml"
    rule.write_text(yaml.safe_dump(RULE), encoding="utf-8")
    before = rule.read_bytes()
    assert main(["compare", str(base.directory), str(cand.directory), "--release", str(rule)]) == 2  # was 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert err.startswith(f"oloproof: error: {rule}: criteria.answer_matches.reduce: pass^2 needs at least 2 epochs")
    assert rule.read_bytes() == before


class _Scheduled(_Answerer):
    """Answers right on case ``c<i>`` in epoch e when ``plan(i, e)``."""

    def __init__(self, plan: Callable[[int, int], bool], version: str) -> None:
        super().__init__(version=version)
        self.plan = plan

    def run(self, input: dict[str, Any], epoch: int) -> dict[str, Any]:  # type: ignore[override]  # noqa: A002
        ok = self.plan(int(input["tag"][1:]), epoch)
        return {"steps": [], "answer": input["answer"] if ok else "wrong", "status": "completed"}


def test_a_criterion_neither_run_judges_is_refused_not_compared_by_the_mean(make_suite: Callable[..., Path],
                                                                            tmp_path: Path) -> None:
    """40 cases × 3 epochs. The base passes c00-c19 in every epoch and c20-c39 in epoch 1 only; the candidate every
    case in epochs 1 and 2 only. By hand: the mean is 80/120 in both (20 rows pass to fail, 20 fail to pass), pass^3
    falls from 20/40 to 0/40. A rule reducing ``answer_matches`` with pass^3 finds the regression; the same rule with
    the name mistyped (``answer_match``, which the gate refuses: no such criterion) compared the mean and read
    NO_REGRESSION, exit 0. Now refused, naming the key and the criteria of the runs."""
    cases = [{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}", "answer": "ok"}, "expected": {"answer": "ok"}}
             for i in range(40)]
    suite = op.load_suite(make_suite(cases, evaluators=[{"type": "answer_matches"}], epochs=3))
    base = op.run(suite, system=lambda: _Scheduled(lambda i, e: i < 20 or e == 1, "a"), out=tmp_path / "b",
                  progress=False)
    cand = op.run(suite, system=lambda: _Scheduled(lambda i, e: e < 3, "b"), out=tmp_path / "c", progress=False)
    rule = {"allow_approximate_methods": True, "regression": {"margin": 0.25},
            "criteria": {"answer_matches": {"threshold": 0.4, "reduce": "pass^3"}}}
    right = op.compare(base, cand, release=rule).table.iloc[0]
    assert (right["difference"], right["pass_to_fail"], right["n"]) == (-0.5, 20, 40)
    assert right["verdict"] == "REGRESSION"
    mean = op.compare(base, cand, release={**rule, "criteria": {"answer_matches": 0.4}}).table.iloc[0]
    assert (mean["difference"], mean["pass_to_fail"], mean["fail_to_pass"], mean["n"]) == (0.0, 20, 20, 120)
    assert mean["verdict"] == "NO_REGRESSION"  # what the mistyped rule gave, exit 0
    typo = {**rule, "criteria": {"answer_match": {"threshold": 0.4, "reduce": "pass^3"}}}
    with pytest.raises(op.ConfigError, match=r"^release: criteria\.answer_match: no such criterion in either run; "
                                             r"their criteria: answer_matches$"):
        op.compare(base, cand, release=typo)
