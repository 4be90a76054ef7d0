"""``_analysis/reduce.py``: the per-cluster sums set against a count written apart from it
(pandas ``groupby`` over the verdict rows and ``math.comb``), and a left-out case's missing rows."""

from __future__ import annotations

from math import comb, lcm

import numpy as np
import pandas as pd
import pytest

from oloproof_nb._analysis.reduce import epoch_counts, reduced_sums
from oloproof_nb._core.epochs import parse_reduce


def test_a_case_left_out_for_too_few_rows_is_not_counted_all_missing() -> None:
    """pass^2: case a has 2 rows (pass, fail), case b 1 row, missing. b has fewer than 2 rows, so it is left out,
    not reduced: by hand left_out 1, all_missing 0 (a reduced case none of whose rows is missing), one case of
    value C(1, 2)/C(2, 2) = 0. Mutant: all_missing counted over every case, the left-out one included, read 1."""
    rows = pd.DataFrame({"criterion": ["k"] * 3, "case_id": ["a", "a", "b"], "cluster": ["A", "A", "B"],
                         "verdict": ["pass", "fail", "missing"]})
    rs = reduced_sums(epoch_counts(rows), parse_reduce("pass^2"))
    assert (rs.cases, rs.left_out, rs.all_missing, rs.cases_at_one) == (1, 1, 0, 0)
    assert rs.sums.tolist() == [0.0] and rs.sizes.tolist() == [1]


def _by_hand(rows: pd.DataFrame, kind: str, k: int) -> pd.DataFrame:
    """Per cluster: Σ of the cases' values and cases, from the rows, by pandas and math.comb alone."""
    per_case = rows.assign(passed=rows["verdict"].eq("pass")).groupby("case_id").agg(
        cluster=("cluster", "first"), n=("passed", "size"), c=("passed", "sum"))
    per_case = per_case[per_case["n"] >= k]
    if kind == "pass^":
        value = [comb(int(c), k) / comb(int(n), k) for n, c in zip(per_case["n"], per_case["c"], strict=True)]
    else:
        value = [1 - comb(int(n - c), k) / comb(int(n), k) for n, c in zip(per_case["n"], per_case["c"], strict=True)]
    return per_case.assign(value=value).groupby("cluster").agg(sum=("value", "sum"), size=("value", "size"))


@pytest.mark.parametrize("text", ["pass^1", "pass^2", "pass^3", "pass@2", "pass@3"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cluster_sums_match_a_groupby_written_apart(text: str, seed: int) -> None:
    """40 cases in 9 clusters, 1 to 5 rows each of pass, fail or missing (rows shuffled): each cluster's sum and
    size, the cases left out (fewer than k rows) and the cases at 1 are those of the independent count."""
    rng = np.random.default_rng(seed)
    reduction = parse_reduce(text)
    cases = [(f"c{i}", f"g{rng.integers(9)}", int(rng.integers(1, 6))) for i in range(40)]
    rows = pd.DataFrame([{"criterion": "k", "case_id": case, "cluster": cluster,
                          "verdict": rng.choice(["pass", "pass", "fail", "missing"])}
                         for case, cluster, n in cases for _ in range(n)]).sample(frac=1, random_state=seed)
    rs = reduced_sums(epoch_counts(rows), reduction)
    want = _by_hand(rows, reduction.kind, reduction.k)
    # each cluster a (sum, cases) pair, in no particular order (the sums carry no cluster label)
    assert sorted(zip(np.round(rs.sums, 9).tolist(), rs.sizes.tolist(), strict=True)) == sorted(
        zip(np.round(want["sum"].to_numpy(), 9).tolist(), want["size"].tolist(), strict=True))
    assert len(want) > 1 and rs.left_out == sum(n < reduction.k for _, _, n in cases)
    per_case = rows.assign(p=rows["verdict"].eq("pass")).groupby("case_id")["p"].agg(["size", "sum"])
    per_case = per_case[per_case["size"] >= reduction.k]
    at_one = ((per_case["sum"] == per_case["size"]) if reduction.kind == "pass^"
              else (per_case["size"] - per_case["sum"] < reduction.k))
    assert rs.cases_at_one == int(at_one.sum())
    # binary only when every reduced case has exactly k rows; D the least common multiple of the C(n, k)
    assert rs.binary == bool((per_case["size"] == reduction.k).all())
    assert rs.denominator == lcm(*(comb(int(n), reduction.k) for n in per_case["size"]))
    missing = rows.assign(m=rows["verdict"].eq("missing")).groupby("case_id")["m"].agg(["size", "sum"])
    assert rs.all_missing == int(((missing["size"] >= reduction.k) & (missing["sum"] == missing["size"])).sum())
    failing = per_case.join(rows.groupby("case_id")["cluster"].first())[~at_one]["cluster"].nunique()
    assert rs.failing_clusters == failing
