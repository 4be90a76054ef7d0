"""One decision of "clustered" for the gate, slices, reduce_epochs and compare, pinned at its boundary.

Two layouts of the same 24 one-epoch cases (case i fails when i is a multiple of 4): every cluster holds
exactly one case, or cases c00 and c01 share cluster g00 (one cluster of two rows, the rest one each). The
first is not clustered (the unclustered method, Clopper–Pearson, checked against scipy's exact interval),
the second is (``cluster_t``), whichever function reports the interval.
"""

from __future__ import annotations

import copy
import math
import warnings
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

import oloproof_nb as op

N_CASES = 24
RELEASE = {"allow_approximate_methods": True, "min_clusters": 2, "criteria": {"answer_matches": 0.5}}


class Answerer:
    """Answers ``input["answer"]`` (right) except for the tags in ``broken``; epoch e makes ``input["calls"]``
    tool calls and answers wrong when ``input["wrong_in"]`` names e."""

    def __init__(self, broken: frozenset[str] = frozenset()) -> None:
        self.broken, self.state = broken, {}

    def reset(self, state: dict[str, Any]) -> None:
        self.state = copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def run(self, input: dict[str, Any], epoch: int) -> dict[str, Any]:
        wrong = input["tag"] in self.broken or epoch in input.get("wrong_in", [])
        steps = [{"kind": "tool_call", "tool": "t", "args": {"i": i}, "result": {"ok": True}}
                 for i in range(input.get("calls", 0))]
        return {"steps": steps, "answer": "wrong" if wrong else "ok", "status": "completed"}


def _cases(shared: bool) -> list[dict[str, Any]]:
    """The 24 cases; with ``shared`` c01 is in c00's cluster g00."""
    return [{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}", "wrong_in": [1] if i % 4 == 0 else []},
             "expected": {"answer": "ok"}, "cluster": "g00" if shared and i == 1 else f"g{i:02d}"}
            for i in range(N_CASES)]


def _run(make_suite: Any, tmp: Path, cases: list[dict[str, Any]], release: dict[str, Any], name: str,
         broken: frozenset[str] = frozenset(), epochs: int = 1) -> op.Run:
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], release=release, epochs=epochs)
    return op.run(op.load_suite(root), system=lambda: Answerer(broken), out=tmp / name, progress=False)


#: (layout, the method every interval of it reports)
LAYOUTS = [(False, "clopper_pearson"), (True, "cluster_t")]


@pytest.fixture
def runs(make_suite: Any, tmp_path: Path) -> dict[bool, op.Run]:
    return {shared: _run(make_suite, tmp_path, _cases(shared), RELEASE, f"run-{shared}") for shared, _ in LAYOUTS}


def _exact(passed: int, n: int) -> tuple[float, float]:
    ci = stats.binomtest(passed, n).proportion_ci(confidence_level=0.95, method="exact")
    return ci.low, ci.high


@pytest.mark.parametrize(("shared", "method"), LAYOUTS)
def test_gate_at_the_boundary(runs: dict[bool, op.Run], shared: bool, method: str) -> None:
    g = op.gate(runs[shared])
    r = g.table.set_index("criterion").loc["answer_matches"]
    assert (g.clustered, r["method"], r["n"], r["passed"]) == (shared, method, 24, 18)
    assert r["n_clusters"] == (23 if shared else 24)
    if not shared:
        assert (r["ci_low"], r["ci_high"]) == pytest.approx(_exact(18, 24), abs=1e-12)
    strict = op.gate(runs[shared], release={**RELEASE, "allow_approximate_methods": False})
    reason = strict.table.set_index("criterion").loc["answer_matches", "reason"]
    assert reason.startswith("approximate_methods_not_allowed: ") is shared  # the key follows


@pytest.mark.parametrize(("shared", "method"), LAYOUTS)
def test_gate_of_a_reduced_criterion_at_the_boundary(runs: dict[bool, op.Run], shared: bool, method: str) -> None:
    # pass^1 over one epoch: each case one value, so "clustered" is whether a cluster holds two cases
    release = {**RELEASE, "criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^1"}}}
    r = op.gate(runs[shared], release=release).table.set_index("criterion").loc["answer_matches"]
    assert (r["method"], r["reduce"]) == (method, "pass^1")
    if not shared:
        assert (r["ci_low"], r["ci_high"]) == pytest.approx(_exact(18, 24), abs=1e-12)


@pytest.mark.parametrize(("shared", "method"), LAYOUTS)
def test_slice_table_at_the_boundary(runs: dict[bool, op.Run], shared: bool, method: str) -> None:
    table = op.slice_table(runs[shared], "tool_calls:1")  # no case makes a call: every row in bin <1
    row = table[(table["bin"] == "<1") & (table["criterion"] == "answer_matches")].iloc[0]
    assert (row["support"], row["passed"], row["method"]) == (24, 18, method)
    if not shared:
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(_exact(18, 24), abs=1e-12)


@pytest.mark.parametrize(("shared", "method"), LAYOUTS)
def test_reduce_epochs_at_the_boundary(runs: dict[bool, op.Run], shared: bool, method: str) -> None:
    table = op.reduce_epochs(runs[shared], reduce=["mean", "pass^1"]).set_index("reduce")
    assert table.loc["mean", "method"] == table.loc["pass^1", "method"] == method
    if not shared:
        assert (table.loc["pass^1", "ci_low"], table.loc["pass^1", "ci_high"]) == pytest.approx(_exact(18, 24),
                                                                                                abs=1e-12)


@pytest.mark.parametrize(("shared", "method"), LAYOUTS)
def test_compare_at_the_boundary(make_suite: Any, tmp_path: Path, shared: bool, method: str) -> None:
    # every case right in the base run but the multiples of 4 (their input says so); the candidate also breaks
    # c12, c16, c20 and fixes nothing: pass_to_fail 3, fail_to_pass 0
    cases = [{**c, "input": {**c["input"], "wrong_in": []}} for c in _cases(shared)]
    base = _run(make_suite, tmp_path, cases, RELEASE, "base", broken=frozenset({"c00", "c04", "c08"}))
    cand = _run(make_suite, tmp_path, cases, RELEASE, "cand", broken=frozenset({"c00", "c04", "c08", "c12", "c16",
                                                                               "c20"}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = op.compare(base, cand, release={**RELEASE, "allow_approximate_methods": False})
    row = cmp.table.set_index("criterion").loc["answer_matches"]
    assert cmp.clustered is shared
    assert (row["reason"].startswith("approximate_methods_not_allowed")) is shared
    assert (row["pass_to_fail"], row["fail_to_pass"], row["method"]) == (3, 0, "cluster_t")
    if shared:  # McNemar is given only when every cluster holds one paired row
        assert math.isnan(row["mcnemar_p"])
    else:
        assert row["mcnemar_p"] == pytest.approx(stats.binomtest(0, 3, 0.5).pvalue, abs=1e-12)


# ------------------------------------------------------------------- where the copies disagreed


def test_a_reduced_criterion_without_rows_is_decided_as_a_mean_one(make_suite: Any, tmp_path: Path) -> None:
    # state_matches judges no case here (none has expected.state); one epoch, one case per cluster: the run is
    # not clustered, so the criterion has no evidence whether it is reduced with mean or pass^1 (it was said to
    # need allow_approximate_methods when reduced)
    reasons = {}
    for reduce in ("mean", "pass^1"):
        release = {"criteria": {"answer_matches": 0.5, "state_matches": {"threshold": 0.5, "reduce": reduce}}}
        root = make_suite(_cases(False), evaluators=[{"type": "answer_matches"}, {"type": "state_matches"}],
                          release=release)
        run = op.run(op.load_suite(root), system=lambda: Answerer(), out=tmp_path / f"run-{reduce[-1]}",
                     progress=False)
        g = op.gate(run)
        row = g.table.set_index("criterion").loc["state_matches"]
        assert not g.clustered and row["n"] == 0
        reasons[reduce] = (row["verdict"], row["reason"])
    assert reasons["mean"] == reasons["pass^1"] == ("INSUFFICIENT_EVIDENCE", "no_evidence")


def test_the_slice_bins_of_a_reduced_criterion_get_the_gates_method(make_suite: Any, tmp_path: Path) -> None:
    # pass^2 over 2 epochs; x1 and x2 share cluster X, and x2 makes 3 calls, so the slice tool_calls:2 puts
    # them in different bins: no bin holds a cluster of two cases, but the criterion does, so the gate uses
    # cluster_t, and so must every bin (bin <2 was given Clopper–Pearson)
    cases = [{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}", "calls": 1, "wrong_in": [2] if i % 5 == 0 else []},
              "expected": {"answer": "ok"}} for i in range(24)]
    cases += [{"id": "x1", "cluster": "X", "input": {"tag": "x1", "calls": 1}, "expected": {"answer": "ok"}},
              {"id": "x2", "cluster": "X", "input": {"tag": "x2", "calls": 3, "wrong_in": [2]},
               "expected": {"answer": "ok"}}]
    release = {"allow_approximate_methods": True, "min_clusters": 2,
               "criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^2"}}}
    run = _run(make_suite, tmp_path, cases, release, "run", epochs=2)
    gated = op.gate(run).table.set_index("criterion").loc["answer_matches"]
    assert (gated["method"], gated["n"], gated["n_clusters"]) == ("cluster_t", 26, 25)
    table = op.slice_table(run, "tool_calls:2").set_index("bin")
    assert (table.loc["<2", "support"], table.loc["<2", "clusters"], table.loc["≥2", "support"]) == (25, 25, 1)
    assert table.loc["<2", "method"] == "cluster_t"
