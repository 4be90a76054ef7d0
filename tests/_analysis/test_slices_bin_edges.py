"""Slice tables: edges the other tests do not pin, each expected value written by hand or
computed with scipy/statsmodels (and the matrix-definition CR2 reference of ``tests/_cr2_reference.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _cr2_reference import brute_force_low
from _epoch_systems import SCRIPTED
from statsmodels.stats.proportion import proportion_confint

import oloproof_nb as op


def _case(cid: str, plan: list[bool], calls: list[int], cluster: str | None = None) -> dict[str, Any]:
    row: dict[str, Any] = {"id": cid, "input": {"plan": plan, "calls": calls, "id": cid}, "expected": {"answer": "yes"}}
    if cluster is not None:
        row["cluster"] = cluster
    return row


def test_a_reduced_bin_of_lone_cases_gets_the_criterions_clustered_method(make_suite: Any, tmp_path: Path) -> None:
    """pass^3 over 3 epochs. Bin <2 holds s0–s5, each its own cluster (pass^3 by hand 1, 1, 1, 1, 0, 0: s4 and s5
    fail epoch 2); bin ≥2 holds p0 and p1, the two cases of cluster ``pair``. The criterion as the gate reduces it
    has a cluster of two cases, so the gate gives it cluster_t, and every bin takes the gate's method: bin <2 gets
    the CR2 logit-t interval of 4 of 6 (brute-force reference), not the Clopper–Pearson interval it would get
    alone (statsmodels: 4 of 6 exact), which a slice table that decided the method on the bin's own cases gave."""
    cases = [_case(f"s{i}", [True, i < 4, True], [1, 1, 1]) for i in range(6)]
    cases += [_case(f"p{i}", [True, True, True], [3, 3, 3], cluster="pair") for i in range(2)]
    release = {"allow_approximate_methods": True, "min_clusters": 2,
               "criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^3"}}}
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Scripted", system_code=SCRIPTED,
                      release=release, epochs=3)
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    gated = op.gate(run).table.set_index("criterion").loc["answer_matches"]
    assert gated["method"] == "cluster_t"  # the whole criterion: cluster "pair" holds two cases
    row = op.slice_table(run, "tool_calls:2").set_index("bin").loc["<2"]
    assert (row["support"], row["passed"], row["clusters"], row["reduce"]) == (6, 4, 6, "pass^3")
    assert row["method"] == "cluster_t"
    low = brute_force_low([1, 1, 1, 1, 0, 0], [1] * 6)
    high = 1 - brute_force_low([0, 0, 0, 0, 1, 1], [1] * 6)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=1e-9)
    alone = proportion_confint(4, 6, alpha=0.05, method="beta")
    assert abs(row["ci_low"] - alone[0]) > 1e-3  # not the interval the bin's cases would get on their own


def test_a_verdict_row_of_no_recorded_case_run_falls_in_n_a(make_suite: Any, tmp_path: Path) -> None:
    """4 cases of one tool call each (s0–s2 answer right, s3 wrong), then a verdict row of a case ``ghost`` that
    ``run.cases`` does not hold added to ``run.verdicts`` (a frame assigned in a notebook). By hand: bin ≥1 holds
    the 4 recorded rows (3 passed), ``n/a`` the ghost's row alone (it has no measure to bin by), bin <1 none;
    the supports add up to the 5 rows. Before this test nothing checked that such a row goes to ``n/a`` rather
    than to the last numeric bin."""
    cases = [_case(f"s{i}", [i < 3], [1]) for i in range(4)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Scripted", system_code=SCRIPTED)
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)
    v = run.verdicts
    ghost = v[v["case_id"] == "s0"].assign(case_id="ghost", cluster="ghost")
    run.verdicts = pd.concat([v, ghost], ignore_index=True)
    table = op.slice_table(run, "tool_calls:1").set_index("bin")
    assert table["support"].to_dict() == {"<1": 0, "≥1": 4, "n/a": 1}
    assert table["passed"].to_dict() == {"<1": 0, "≥1": 3, "n/a": 1}
