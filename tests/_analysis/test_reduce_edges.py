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


def test_cases_all_in_one_cluster_are_summed_in_it() -> None:
    """Cases a and b in cluster B alone (b's rows of the table above, a moved there): pass^2 is 1 for a, 0 for b, so
    one cluster of sum 1 over 2 cases, by hand; a single cluster is a cluster, not none."""
    one = VERDICTS[VERDICTS["case_id"].isin(["a", "b"])].assign(cluster="B")
    rs = reduced_sums(epoch_counts(one), parse_reduce("pass^2"))
    assert rs.sums.tolist() == [1.0] and rs.sizes.tolist() == [2]
    assert (rs.cases, rs.cases_at_one, rs.failing_clusters) == (2, 1, 1)


def test_a_part_of_a_clustered_criterion_gets_the_criterions_clustered_interval() -> None:
    """A slice bin holding a and d (one case per cluster) of a criterion whose cluster B holds two cases: alone the
    bin would get the unclustered Clopper–Pearson interval; decided by the whole criterion it gets the clustered
    method the gate gives that criterion."""
    from oloproof_nb._analysis.gate import reduced_interval
    from oloproof_nb._config.release import ReleaseConfig

    cfg = ReleaseConfig()
    whole = reduced_sums(epoch_counts(VERDICTS), parse_reduce("pass^2"))
    part = reduced_sums(epoch_counts(VERDICTS[VERDICTS["case_id"].isin(["a", "d"])]), parse_reduce("pass^2"))
    assert part.sizes.tolist() == [1, 1] and part.sums.tolist() == [1.0, 0.0]
    alone, _, alone_clustered = reduced_interval(part, cfg)
    assert (alone.method, alone_clustered) == ("clopper_pearson", False)
    decided, _, clustered = reduced_interval(part, cfg, decided_by=whole)
    assert (decided.method, clustered, decided.estimate) == ("cluster_t", True, 0.5)  # release.yaml's default
