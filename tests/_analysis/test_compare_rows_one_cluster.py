"""Compare's ``too_few_clusters`` reason counts one cluster in the singular, as the gate's does."""

from __future__ import annotations

from oloproof_nb._analysis.compare_rows import decide
from oloproof_nb._config.release import parse_release

CFG = parse_release({"allow_approximate_methods": True, "min_clusters": 20})


def test_one_cluster_is_named_in_the_singular() -> None:
    row = {"n": 3, "missing": 0, "n_clusters": 1, "ci_low": -0.2, "ci_high": 0.2}  # 3 case runs of one customer
    verdict, why = decide(row, CFG, clustered=True)
    assert verdict == "INSUFFICIENT_EVIDENCE"
    assert why == "too_few_clusters: its rows fall in 1 cluster, min_clusters is 20"
