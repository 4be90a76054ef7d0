"""compare_pairing: merged clusters (moved from test_compare.py with the code it tests)."""

from __future__ import annotations

import pandas as pd

from oloproof_nb._analysis.compare_pairing import _merged_clusters


def test_a_merged_cluster_is_named_after_its_smallest_base_cluster_whatever_the_hash_order() -> None:
    """Clusters the candidate joins are merged and named after their first base cluster in sorted order; named
    after the first one a set yields, the name would change between processes (string hashes are randomised)."""
    base = [f"g{i:02d}" for i in range(30, 0, -1)] + ["solo"]  # 30 base clusters, listed largest first
    candidate = ["joined"] * 30 + ["alone"]  # the candidate puts the 30 in one cluster
    merged = _merged_clusters(pd.Series(base), pd.Series(candidate))
    assert list(merged) == ["g01"] * 30 + ["solo"]
