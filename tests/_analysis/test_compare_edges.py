"""op.compare: edges the other compare tests leave unpinned, each test killing a mutant they let live.

Each test names the mutant it kills; expected values are hand counts, never the code's own output.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op

FAULT = [{"type": "answer_matches"}, {"type": "fault_recovery", "tool": "refund", "fault": "error"}]
RECOVERS = "recovers_from_error_at_refund"


def _cases(n: int) -> list[dict[str, Any]]:
    return [{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}"}, "expected": {"answer": "ok"}} for i in range(n)]


class Refunder(op.RecordedAgent):
    """Refunds the orders of ``refunds``; a failed refund is retried (recovered from), except for the orders of
    ``crash``, where the agent raises (the fault replay is then ``missing``: ``replay_raised``)."""

    def __init__(self, refunds: set[str], crash: set[str], version: str) -> None:
        super().__init__()
        self.refunds, self.crash, self.version, self.state = refunds, crash, version, {}

    def reset(self, state: dict[str, Any]) -> None:
        self.state = copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def refund(self, order: str) -> dict[str, Any]:
        self.state[order] = "refunded"
        return {"ok": True}

    def act(self, input: dict[str, Any], rec: Any) -> str:
        tag = input["tag"]
        if tag in self.refunds and not rec.tool("refund", self.refund, order=tag).get("ok"):
            if tag in self.crash:
                raise RuntimeError("refund failed")
            rec.tool("refund", self.refund, order=tag)
        return "ok"


def test_base_rows_left_missing_without_a_candidate_row_are_no_lost_passes(make_suite: Callable[..., Path],
                                                                           tmp_path: Path) -> None:
    """Mutant ``lone["verdict_b"] == "pass"`` → ``!= "fail"``: rule 7 holds back NO_REGRESSION for rows the base
    *passed* that have no candidate row. Base rows that are ``missing`` (its replay raised) passed nothing, so a
    candidate that no longer reaches them lost no pass: 20 paired rows all pass in both runs, 4 base-only rows
    missing → NO_REGRESSION, not ``unpaired_passes``."""
    release = {"criteria": {"answer_matches": 0.5}, "regression": {"margin": 0.3}}
    root = make_suite(_cases(24), evaluators=FAULT, release=release)
    some = {f"c{i:02d}" for i in range(20)}
    lone = {f"c{i:02d}" for i in range(20, 24)}

    def run(refunds: set[str], crash: set[str], name: str) -> op.Run:
        return op.run(op.load_suite(root), system=lambda: Refunder(refunds, crash, name), out=tmp_path / name,
                      progress=False)

    base, cand = run(some | lone, lone, "base"), run(some, set(), "cand")
    v = base.verdicts[base.verdicts["criterion"] == RECOVERS].set_index("case_id")["verdict"]
    assert (v[sorted(lone)] == "missing").all() and (v[sorted(some)] == "pass").all()  # the design, by hand
    row = op.compare(base, cand).table.set_index("criterion").loc[RECOVERS]
    assert (row["n"], row["one_sided"], row["pass_to_fail"], row["fail_to_pass"]) == (20, 4, 0, 0)
    assert row["verdict"] == "NO_REGRESSION", row["reason"]


def _answers(n: int, cluster_size: int) -> list[dict[str, Any]]:
    return [{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}"}, "expected": {"answer": "ok"},
             "cluster": f"g{i // cluster_size:02d}"} for i in range(n)]


class Answerer:
    def __init__(self, broken: set[str], version: str) -> None:
        self.broken, self.version, self.state = broken, version, {}

    def reset(self, state: dict[str, Any]) -> None:
        self.state = copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def run(self, input: dict[str, Any]) -> dict[str, Any]:
        return {"steps": [], "answer": "wrong" if input["tag"] in self.broken else "ok", "status": "completed"}


@pytest.mark.parametrize(("cluster_size", "named"), [(2, True), (1, False)])
def test_allowing_approximate_methods_is_named_weaker_only_for_clustered_runs(
        make_suite: Callable[..., Path], tmp_path: Path, cluster_size: int, named: bool) -> None:
    """Mutant dropping ``clustered or`` in :func:`relaxed_rule`: a rule given with ``allow_approximate_methods:
    true`` decides a clustered comparison the base run's own settings (the defaults: false) leave undecided
    (``approximate_methods_not_allowed``), so it is weaker there and must be named; unclustered, the setting decides
    nothing and is not named."""
    root = make_suite(_answers(48, cluster_size), evaluators=[{"type": "answer_matches"}])

    def run(broken: set[str], name: str) -> op.Run:
        return op.run(op.load_suite(root), system=lambda: Answerer(broken, name), out=tmp_path / name, progress=False)

    base, cand = run(set(), "base"), run({"c00"}, "cand")
    own = op.compare(base, cand)
    assert own.clustered is named
    assert own.table.iloc[0]["reason"].startswith("approximate_methods_not_allowed:") is named
    given = op.compare(base, cand, release={"allow_approximate_methods": True})
    assert not given.table.iloc[0]["reason"].startswith("approximate_methods_not_allowed")
    assert any("allow_approximate_methods" in r for r in given.relaxed) is named, given.relaxed


class EpochCrasher(Answerer):
    """Answers right, but raises in epoch 2 of the cases in ``broken`` (their row there is ``missing``)."""

    def run(self, input: dict[str, Any], epoch: int) -> dict[str, Any]:  # type: ignore[override]
        if epoch == 2 and input["tag"] in self.broken:
            raise RuntimeError("boom")
        return {"steps": [], "answer": "ok", "status": "completed"}


def test_a_reduced_base_epoch_left_missing_is_no_pass(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """Mutant reading the base's reduced passes as ``verdict != "fail"``: a ``missing`` epoch counts as not passed
    (as in the gate), so a base whose epoch 2 of c00–c04 crashed has pass^2 = 0 there. By hand, 20 cases × 2
    epochs: base pass^2 15/20, candidate 20/20, difference +0.25, 5 fail_to_pass, 5 missing."""
    release = {"criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^2"}}}
    root = make_suite(_answers(20, 1), evaluators=[{"type": "answer_matches"}], release=release)
    crashed = {f"c{i:02d}" for i in range(5)}

    def run(broken: set[str], name: str) -> op.Run:
        return op.run(op.load_suite(root), system=lambda: EpochCrasher(broken, name), out=tmp_path / name,
                      epochs=2, progress=False)

    base, cand = run(crashed, "base"), run(set(), "cand")
    v = base.verdicts
    assert sorted(v.loc[v["verdict"] == "missing", "case_id"]) == sorted(crashed)  # the design
    row = op.compare(base, cand).table.set_index("criterion").loc["answer_matches"]
    assert (row["n"], row["pass_to_fail"], row["fail_to_pass"]) == (20, 0, 5)
    assert (row["base_rate"], row["candidate_rate"]) == (15 / 20, 1.0)
    assert row["difference"] == pytest.approx(0.25, abs=1e-15)
