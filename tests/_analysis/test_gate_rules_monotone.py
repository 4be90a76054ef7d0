"""What README's "Monotone by construction" says it does not cover, the other direction: one more
passing case (not a fail turned into a pass) can lower ``ci_low``. Checked by hand (n_min and the all-pass cap from
their formulas), never against the module's own output."""

from __future__ import annotations

import numpy as np
import pytest

import oloproof_nb as op

K = [5, 2, 1, 2, 1, 1, 1, 4, 1, 2, 4, 4, 2, 1, 4, 2, 4, 2, 5, 3]
M = [5, 2, 1, 2, 1, 2, 2, 4, 1, 3, 4, 4, 2, 1, 4, 2, 4, 3, 5, 3]


def _capped(k: list[int], m: list[int]) -> float:
    """(α/2)^(1/n_min)·p̂ at 95%, n_min = (Σm)²/Σm²: the cap of a run in which every cluster passes a row."""
    sizes = np.asarray(m, dtype=float)
    n_min = sizes.sum() ** 2 / (sizes**2).sum()
    return float(0.025 ** (1 / n_min) * sum(k) / sizes.sum())


def test_a_passing_case_added_to_a_cluster_can_lower_ci_low() -> None:
    """20 clusters of 1-5 rows, 51 of 55 passing; a sixth row, passing, in the first cluster (which passes its five)
    raises p̂ (51/55 → 52/56) but makes the sizes more unequal: n_min 16.35 → 16.00, and the cap falls 0.740 → 0.737
    (the README's figures). The gate's bound is that cap in both: it binds below the CR2 logit-t bound."""
    added_k, added_m = [K[0] + 1, *K[1:]], [M[0] + 1, *M[1:]]
    before = op.rate_interval_from_sums(K, M, method="cluster_t")
    added = op.rate_interval_from_sums(added_k, added_m, method="cluster_t")
    assert before.low == pytest.approx(_capped(K, M), abs=1e-12)
    assert added.low == pytest.approx(_capped(added_k, added_m), abs=1e-12)
    assert (round(before.low, 3), round(added.low, 3)) == (0.740, 0.737)
    assert added.estimate > before.estimate and added.low < before.low
    # turning a fail into a pass, on the same rows, still never lowers it
    turned = [K[0], K[1], K[2], K[3], K[4], K[5] + 1, *K[6:]]
    assert op.rate_interval_from_sums(turned, M, method="cluster_t").low >= before.low
