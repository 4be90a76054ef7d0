"""Edges the other tests did not pin (found by mutation testing) for slice tables of a reduced (pass^k) criterion:
support, bounds, few_clusters."""

from __future__ import annotations

import math
from pathlib import Path

from _epoch_systems import scripted_run

import oloproof_nb as op


def _run(tmp_path: Path) -> op.Run:
    """3 cases right in all 3 epochs, 2 wrong in epoch 2; every epoch makes 1 tool call (all in bin <2)."""
    return scripted_run(tmp_path, "bad", 3, 2, [1, 1, 1])


RELEASE = {"min_clusters": 5, "criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^3"}}}


def test_a_reduced_bin_counts_its_cases_and_keeps_its_bounds(tmp_path: Path) -> None:
    table = op.slice_table(_run(tmp_path), "tool_calls:2", release=RELEASE).set_index("bin")
    low = table.loc["<2"]
    # by hand: 5 cases reduced in <2, 3 of them pass^3 = 1, the other 2 pass^3 = C(2,3)/C(3,3) = 0
    assert (low["support"], low["passed"], low["clusters"]) == (5, 3, 5)
    assert low["rate"] == 3 / 5
    assert low["lower"] == -math.inf and low["upper"] == 2.0  # the bin is x < 2
    high = table.loc["≥2"]
    assert (high["support"], high["lower"], high["upper"]) == (0, 2.0, math.inf)


def test_a_reduced_bin_with_exactly_min_clusters_is_not_flagged(tmp_path: Path) -> None:
    # few_clusters means clusters < min_clusters: 5 clusters with min_clusters 5 are enough
    table = op.slice_table(_run(tmp_path), "tool_calls:2", release=RELEASE).set_index("bin")
    assert table.loc["<2", "clusters"] == 5 and not table.loc["<2", "few_clusters"]
    assert table.loc["≥2", "few_clusters"]  # 0 clusters


def test_a_mean_bin_with_exactly_min_clusters_is_not_flagged(tmp_path: Path) -> None:
    # the mean criterion: 15 epoch rows of 5 cases (each case its own cluster, its epochs in it), min_clusters 5
    table = op.slice_table(_run(tmp_path), "tool_calls:2", release={"min_clusters": 5}).set_index("bin")
    assert (table.loc["<2", "support"], table.loc["<2", "clusters"]) == (15, 5)
    assert not table.loc["<2", "few_clusters"]
