"""Per-case epoch counts and reduced cluster sums (``_analysis/reduce.py``), counted by hand."""

from __future__ import annotations

import pandas as pd

from oloproof_nb._analysis.reduce import epoch_counts, reduced_sums
from oloproof_nb._core.epochs import parse_reduce

# case a (cluster A): pass, pass; b (cluster B): pass, fail; c (cluster B): pass, pass; d (cluster C): missing twice
ROWS = [("a", "A", "pass"), ("a", "A", "pass"), ("b", "B", "pass"), ("b", "B", "fail"),
        ("c", "B", "pass"), ("c", "B", "pass"), ("d", "C", "missing"), ("d", "C", "missing")]
VERDICTS = pd.DataFrame({"criterion": ["k"] * len(ROWS), "case_id": [r[0] for r in ROWS],
                         "cluster": [r[1] for r in ROWS], "verdict": [r[2] for r in ROWS]})


def test_a_missing_epoch_is_no_pass() -> None:
    """Only ``pass`` rows are passes: d's two missing epochs count 0 passes and 2 missing, b's fail 1 pass."""
    counts = epoch_counts(VERDICTS).set_index("case_id")
    assert counts.loc[["a", "b", "c", "d"], "passes"].tolist() == [2, 1, 2, 0]
    assert counts.loc[["a", "b", "c", "d"], "missing"].tolist() == [0, 0, 0, 2]
    assert counts.loc[["a", "b", "c", "d"], "epochs"].tolist() == [2, 2, 2, 2]


def test_pass_hat_2_sums_per_cluster_by_hand() -> None:
    """pass^2 of each case is 1 only when both epochs passed: a 1, b 0, c 1, d 0. Cluster sums A 1, B 1, C 0
    over sizes 1, 2, 1; two cases at 1; d all missing; clusters B (b) and C (d) each hold one case that did not
    reach 1, so two failing clusters."""
    rs = reduced_sums(epoch_counts(VERDICTS), parse_reduce("pass^2"))
    assert rs.sums.tolist() == [1.0, 1.0, 0.0] and rs.sizes.tolist() == [1, 2, 1]
    assert (rs.cases_at_one, rs.all_missing, rs.left_out, rs.failing_clusters) == (2, 1, 0, 2)
    assert rs.binary
