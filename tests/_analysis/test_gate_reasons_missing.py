"""The gate's reasons (``_analysis/gate.py``'s use of ``gate_reasons.missing_why``): each
expected text written out by hand."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op

CASES = [{"id": f"c{i}", "input": {"answer": "done", "writes": [{"path": ["acct", "n"], "value": i}]},
          "initial_state": {"acct": {"n": -1}}, "expected": {"answer": "done", "state": {"acct": {"n": i}}}}
         for i in range(4)]


def test_each_all_missing_reason_quotes_its_own_criterions_rows(make_suite: Callable[..., Path]) -> None:
    """A mutant (the why of an ``all_missing`` row read from the first row's criterion) passed every other gate
    test: none had an all-missing criterion after another criterion with missing rows of another reason. Here
    answer_matches (first) has 1 missing row of 4 ("judge raised"), state_matches all 4 missing ("no state
    recorded"): the second's reason quotes its own rows, counted by hand."""
    root = make_suite(CASES, evaluators=[{"type": "answer_matches"}, {"type": "state_matches"}],
                      release={"criteria": {"answer_matches": 0.1, "state_matches": 0.1}})
    run = op.run(op.load_suite(root), out=root / "run", progress=False)
    assert run.criteria[:2] == ["answer_matches", "state_matches"]
    v = run.verdicts.copy()
    first = v.index[v["criterion"] == "answer_matches"][:1]
    v.loc[first, ["verdict", "reason"]] = ["missing", "judge raised"]
    v.loc[v["criterion"] == "state_matches", ["verdict", "reason"]] = ["missing", "no state recorded"]
    run.verdicts = v
    table = op.gate(run).table.set_index("criterion")
    assert (table.loc["answer_matches", "n"], table.loc["answer_matches", "missing"]) == (4, 1)
    assert not table.loc["answer_matches", "reason"].startswith("all_missing")
    assert table.loc["state_matches", "verdict"] == "INSUFFICIENT_EVIDENCE"
    assert table.loc["state_matches", "reason"] == 'all_missing; every row is missing: "no state recorded" (all 4 rows)'


def _all_pass(make_suite: Callable[..., Path], singletons: int) -> op.Run:
    """``singletons`` one-case clusters and one cluster of two cases, every answer right; threshold 0.9."""
    cases = [{"id": f"c{i:02d}", "cluster": f"k{min(i, singletons):02d}", "input": {"answer": "done", "n": i},
              "expected": {"answer": "done"}} for i in range(singletons + 2)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}],
                      release={"criteria": {"answer_matches": 0.9}, "allow_approximate_methods": True,
                               "min_clusters": 20})
    return op.run(op.load_suite(root), out=root / "run", progress=False)


def test_the_all_pass_note_names_the_least_n_min_not_the_least_whole_one(make_suite: Callable[..., Path]) -> None:
    """The note of an all-pass clustered criterion said "0.9 needs n_min of at least 36" (the least whole
    n), but n_min = (Σm)²/Σm² is whole only for clusters of one size: 35 singletons and a pair (n_min = 37²/39 =
    35.10) pass 0.9, their lower bound 0.025^(1/35.10) = 0.90024 (scipy). So 34 singletons and a pair (n_min =
    36²/38 = 34.11) were told to reach 36 where 35.1 passes. The note gives the least n_min in hundredths, as it
    shows n_min: 35.02 (scipy: the bound of 35.01 is below 0.9, that of 35.02 above)."""
    from scipy import stats

    assert stats.beta.ppf(0.025, 35.01, 1) < 0.9 <= stats.beta.ppf(0.025, 35.02, 1)
    short = op.gate(_all_pass(make_suite, 34)).table.iloc[0]
    assert short["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert short["ci_low"] == pytest.approx(stats.beta.ppf(0.025, 36**2 / 38, 1), abs=1e-12)
    assert ("every row passes: its clusters count as n_min = 34.1 equal-sized ones, and no lower bound is above "
            "0.025^(1/n_min); 0.9 needs n_min of at least 35.02 (more clusters") in short["reason"]
    enough = op.gate(_all_pass(make_suite, 35)).table.iloc[0]  # n_min 35.10: below 36, and it passes
    assert enough["ci_low"] == pytest.approx(stats.beta.ppf(0.025, 37**2 / 39, 1), abs=1e-12)
    assert (enough["verdict"], enough["ci_low"] >= 0.9) == ("PASS", True)
