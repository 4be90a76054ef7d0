"""Epochs: each case run k times; pass^k and pass@k against hand computation on a seeded stochastic agent.

The agent answers right with probability p, from an RNG seeded by (case, epoch), so every number here
is computed again in the test from the verdict rows with ``math.comb`` (and a few by literal hand count).
"""

from __future__ import annotations

import contextlib
import json
import math
import random
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from _cr2_reference import cr2_matrix
from _epoch_systems import STOCHASTIC, P, coin_answers_right, recovering_desk_suite

import oloproof_nb as op
from oloproof_nb._core.cr2 import bell_mccaffrey_df


def _cases(n: int = 8) -> list[dict[str, Any]]:
    return [{"id": f"c{i}", "input": {"id": f"c{i}", "p": P[i % len(P)]}, "initial_state": {"answered": None},
             "expected": {"answer": "yes", "state": {"answered": "yes"}}} for i in range(n)]


EVALUATORS = [{"type": "answer_matches"}, {"type": "state_matches", "mode": "subset"}]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, op.Run]:
    root = tmp_path_factory.mktemp("epochs")
    suite = _suite(root / "suite")
    return {k: op.run(op.load_suite(suite), epochs=k, out=root / f"run{k}", progress=False) for k in (1, 3, 5)}


def _suite(root: Path, epochs: int | None = None, release: dict[str, Any] | None = None,
           cases: list[dict[str, Any]] | None = None) -> Path:
    import yaml

    root.mkdir(parents=True)
    (root / "sysmod.py").write_text(STOCHASTIC, encoding="utf-8")
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in (cases or _cases())), encoding="utf-8")
    body: dict[str, Any] = {"name": "coin", "system": "sysmod:Coin", "evaluators": EVALUATORS}
    if epochs is not None:
        body["epochs"] = epochs
    (root / "oloproof.yaml").write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
    if release is not None:
        (root / "release.yaml").write_text(yaml.safe_dump(release, sort_keys=False), encoding="utf-8")
    return root


def _hand_counts(run: op.Run, criterion: str = "answer_matches") -> dict[str, tuple[int, int]]:
    v = run.verdicts[run.verdicts["criterion"] == criterion]
    return {cid: (len(g), int((g["verdict"] == "pass").sum())) for cid, g in v.groupby("case_id")}


# -- the runs themselves -----------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 3, 5])
def test_every_case_runs_k_times_with_an_epoch_column(runs: dict[int, op.Run], k: int) -> None:
    run = runs[k]
    assert run.epochs == k and run.manifest.epochs == k
    cases = run.cases
    assert len(cases) == 8 * k
    assert sorted(cases.groupby("case_id")["epoch"].apply(sorted).iloc[0]) == list(range(1, k + 1))
    assert not cases.duplicated(["case_id", "epoch"]).any()
    assert cases["case_id"].isin([f"c{i}" for i in range(8)]).all()  # case_id stays the source id
    # the cluster of every epoch is its case's
    assert (cases["cluster"] == cases["case_id"]).all()
    for name in ("cases", "steps", "snapshots", "changes", "verdicts", "comparisons", "replays", "pairs",
                 "receipts"):
        frame = getattr(run, name)
        assert "epoch" in frame.columns, name
        assert str(frame["epoch"].dtype) == "int64", name
    # the agent's answers are those of the seeded coin, epoch by epoch (each epoch a fresh reset)
    for row in cases.itertuples():
        p = P[int(row.case_id[1:]) % len(P)]
        assert row.answer == ("yes" if coin_answers_right(row.case_id, p, row.epoch) else "no")
    snaps = run.snapshots.set_index(["case_id", "epoch"])["state"]
    assert all(snaps[(r.case_id, r.epoch)] == {"answered": r.answer} for r in cases.itertuples())


def test_literal_hand_count(runs: dict[int, op.Run]) -> None:
    """c2 has p = 0.2: its five coins, computed by hand from the seeding rule, and the estimators on them."""
    flips = [coin_answers_right("c2", 0.2, e) for e in range(1, 6)]
    c = sum(flips)
    v = runs[5].verdicts
    got = v[(v["case_id"] == "c2") & (v["criterion"] == "answer_matches")].sort_values("epoch")
    assert got["verdict"].tolist() == ["pass" if f else "fail" for f in flips]
    table = op.reduce_epochs(runs[5], reduce=["pass^2", "pass@2"], by_case=True)
    row = table[(table["case_id"] == "c2") & (table["criterion"] == "answer_matches")].set_index("reduce")
    # pass^2 = C(c,2)/C(5,2) = c(c−1)/20; pass@2 = 1 − (5−c)(4−c)/20
    assert row.loc["pass^2", "value"] == pytest.approx(c * (c - 1) / 20)
    assert row.loc["pass@2", "value"] == pytest.approx(1 - (5 - c) * (4 - c) / 20)


def test_estimators_by_hand() -> None:
    # 5 epochs, 3 passes: pass^3 = C(3,3)/C(5,3) = 1/10; pass@3 = 1 − C(2,3)/C(5,3) = 1; pass^2 = 3/10
    assert op.pass_hat_k([5], [3], 3).tolist() == [pytest.approx(0.1)]
    assert op.pass_at_k([5], [3], 3).tolist() == [1.0]
    assert op.pass_hat_k([5], [3], 2).tolist() == [pytest.approx(0.3)]
    # pass@2 with 1 pass of 4: 1 − C(3,2)/C(4,2) = 1 − 3/6
    assert op.pass_at_k([4], [1], 2).tolist() == [pytest.approx(0.5)]
    # boundary n == k: all-or-nothing
    assert op.pass_hat_k([3, 3], [3, 2], 3).tolist() == [1.0, 0.0]
    assert op.pass_at_k([3, 3], [0, 1], 3).tolist() == [0.0, 1.0]
    # k = 1 is the mean
    assert op.pass_hat_k([4], [3], 1).tolist() == op.pass_at_k([4], [3], 1).tolist() == [0.75]
    with pytest.raises(ValueError, match="n ≥ k"):
        op.pass_hat_k([2], [1], 3)


@pytest.mark.parametrize("k", [1, 3, 5])
def test_reductions_match_math_comb(runs: dict[int, op.Run], k: int) -> None:
    run = runs[k]
    table = op.reduce_epochs(run)
    expected_reduces = ["mean"] + ([f"pass^{k}", f"pass@{k}"] if k > 1 else [])
    assert table["reduce"].drop_duplicates().tolist() == expected_reduces
    for criterion in ("answer_matches", "state_matches"):
        counts = _hand_counts(run, criterion)
        for j in range(1, k + 1):
            hat = [math.comb(c, j) / math.comb(n, j) for n, c in counts.values()]
            at = [1 - math.comb(n - c, j) / math.comb(n, j) for n, c in counts.values()]
            got = op.reduce_epochs(run, reduce=[f"pass^{j}", f"pass@{j}"]).set_index(["criterion", "reduce"])
            assert got.loc[(criterion, f"pass^{j}"), "rate"] == pytest.approx(np.mean(hat), abs=1e-12)
            assert got.loc[(criterion, f"pass@{j}"), "rate"] == pytest.approx(np.mean(at), abs=1e-12)
            assert got.loc[(criterion, f"pass^{j}"), "cases"] == 8
        mean = table.set_index(["criterion", "reduce"]).loc[(criterion, "mean"), "rate"]
        assert mean == pytest.approx(sum(c for _, c in counts.values()) / (8 * k))


def test_fractional_interval_is_the_monotone_cr2_logit_t(runs: dict[int, op.Run]) -> None:
    """pass^3 of 5 epochs: fractional values. The raw CR2 logit-t interval is recomputed here by hand; the
    reported one is the gate's monotone cluster_t on the same cases as C(5,3) = 10 rows each with
    C(c,3) passing (same rate, SE and degrees of freedom), capped at the all-pass bound of the 8 cases."""
    from scipy import special, stats

    run = runs[5]
    counts = _hand_counts(run)
    v = np.array([math.comb(c, 3) / math.comb(n, 3) for n, c in counts.values()])
    assert not np.isin(v, [0.0, 1.0]).all()  # fractional: the case this test is about
    p = v.mean()
    g = len(v)
    se = math.sqrt(np.sum((v - p) ** 2 / (1 - 1 / g))) / g  # CR2 with singleton clusters
    df = g - 1  # Bell–McCaffrey df of g singleton clusters, by hand (it was the package's own bell_mccaffrey_df)
    assert cr2_matrix(v, np.arange(g)) == pytest.approx((p, se, df))  # the same three from the matrix definitions
    t = stats.t.ppf(0.975, df)
    low = special.expit(special.logit(p) - t * se / (p * (1 - p)))
    high = special.expit(special.logit(p) + t * se / (p * (1 - p)))
    top = 0.025 ** (1 / g)
    row = op.reduce_epochs(run, reduce="pass^3").set_index("criterion").loc["answer_matches"]
    assert row["method"] == "cluster_t"
    assert row["ci_low"] <= min(low, top, p) + 1e-12 and row["ci_high"] >= max(high, 1 - top, p) - 1e-12
    scaled = op.rate_interval_from_sums([math.comb(c, 3) for _, c in counts.values()], [10] * g, method="cluster_t")
    assert bell_mccaffrey_df(np.full(g, 10)) == pytest.approx(df)  # balanced clusters of 10 rows: g − 1 too
    assert row["ci_low"] == pytest.approx(min(scaled.low, top, p), abs=1e-12)
    assert row["ci_high"] == pytest.approx(max(scaled.high, 1 - top, p), abs=1e-12)


def test_a_worse_agent_never_gets_a_higher_reduced_bound(tmp_path: Path) -> None:
    """pass^2 of 5 epochs, 24 cases passing every epoch. c24 passes 2 epochs (agent A) or 1 (agent B, worse in
    every epoch). B's values happened to be all 0 or 1, so it got Clopper–Pearson on 25 cases (ci_low 0.797:
    PASS at 0.78) while A got the raw CR2 logit-t (0.759: INSUFFICIENT_EVIDENCE). The method now follows the
    design (a case with more than k epochs), and its bound is monotone."""
    release = {"allow_approximate_methods": True, "min_clusters": 20,
               "criteria": {"answer_matches": {"threshold": 0.78, "reduce": "pass^2"}}}
    import zlib

    draws = sorted(random.Random(zlib.crc32(f"c24/{e}".encode())).random() for e in range(1, 6))
    lows = {}  # c24 answers right where its epoch's draw is below p: the worse agent's passes are the better's less one
    for name, p_last in (("better", (draws[1] + draws[2]) / 2), ("worse", (draws[0] + draws[1]) / 2)):
        cases = [{"id": f"c{i:02d}", "input": {"id": f"c{i:02d}", "p": 1.0}, "initial_state": {"answered": None},
                  "expected": {"answer": "yes", "state": {"answered": "yes"}}} for i in range(24)]
        cases.append({"id": "c24", "input": {"id": "c24", "p": p_last}, "initial_state": {"answered": None},
                      "expected": {"answer": "yes", "state": {"answered": "yes"}}})
        run = op.run(op.load_suite(_suite(tmp_path / name, cases=cases, release=release)), epochs=5,
                     out=tmp_path / f"run-{name}", progress=False)
        assert _hand_counts(run)["c24"] == (5, 2 if name == "better" else 1)
        gate = op.gate(run)
        row = gate.table.set_index("criterion").loc["answer_matches"]
        assert gate.verdict == "BLOCK", (name, row["ci_low"], row["method"])
        assert row["method"] == "cluster_t"
        lows[name] = row["ci_low"]
    assert lows["worse"] <= lows["better"]


def test_fractional_bounds_are_monotone_at_low_confidence() -> None:
    """Below confidence 0.75 too: values whose clusters share one mean used to fall back to Clopper–Pearson on
    n_min when the monotone bounds met, so one epoch fewer raised ci_low (1,036 of 10,975 seeded checks)."""
    from oloproof_nb._core.epochs import fractional_interval

    rng = random.Random(3)
    checks = 0
    for _ in range(600):
        confidence, d = rng.choice([0.4, 0.5, 0.6, 0.7]), rng.choice([2, 3, 4, 6])
        m = [rng.randint(1, 3) for _ in range(rng.randint(2, 6))]
        share = rng.randint(1, d - 1)
        rows = [share * mc for mc in m] if rng.random() < 0.5 else [rng.randint(0, d * mc) for mc in m]
        if sum(rows) in (0, d * sum(m)):
            continue
        base = fractional_interval([r / d for r in rows], m, confidence, denominator=d)
        assert base.low < base.estimate < base.high
        for i in np.flatnonzero(rows):
            worse = [r - (j == i) for j, r in enumerate(rows)]
            if sum(worse):
                iv = fractional_interval([r / d for r in worse], m, confidence, denominator=d)
                assert iv.low <= base.low + 1e-12 and iv.high <= base.high + 1e-12, (confidence, m, rows, i)
                checks += 1
    assert checks > 1_500


def test_reduced_bounds_are_monotone_by_construction() -> None:
    """One fewer passing epoch in any case never raises ci_low or ci_high (seeded search over designs: singleton
    and paired clusters, one large cluster, epochs n and n+1 mixed); the raw CR2 bound fails this."""
    from oloproof_nb._analysis.gate import reduced_interval
    from oloproof_nb._analysis.reduce import reduced_sums
    from oloproof_nb._config.release import ReleaseConfig
    from oloproof_nb._core.epochs import parse_reduce

    cfg = ReleaseConfig(allow_approximate_methods=True, min_clusters=2)

    def interval(cs: list[int], ns: list[int], red: Any, clusters: list[int]) -> op.Interval:
        counts = pd.DataFrame({"cluster": [f"g{c}" for c in clusters], "epochs": ns, "passes": cs, "missing": 0})
        return reduced_interval(reduced_sums(counts, red), cfg)[0]

    rng = random.Random(11)
    checks = 0
    for _ in range(150):
        n = rng.choice([2, 3, 5, 6])
        red = parse_reduce(f"{rng.choice(['pass^', 'pass@'])}{rng.randint(1, n)}")
        g = rng.choice([5, 20, 25])
        clusters = rng.choice([list(range(g)), [i // 2 for i in range(2 * g)], [0] * 6 + list(range(1, g))])
        ns = [n] * len(clusters) if rng.random() < 0.8 else [rng.choice([n, n + 1]) for _ in clusters]
        q = rng.random()
        cs = [m if rng.random() < q else rng.randint(0, m) for m in ns]
        base = interval(cs, ns, red, clusters)
        for i in rng.sample(range(len(cs)), 4):
            if cs[i]:
                worse = interval([c - (j == i) for j, c in enumerate(cs)], ns, red, clusters)
                assert worse.low <= base.low + 1e-12 and worse.high <= base.high + 1e-12, (red, cs, i)
                checks += 1
    assert checks > 400
    # the 19-at-1, one-at-0 example of the docstring: one more failing epoch raised the raw bound by 0.03
    raw = [op.pass_hat_k([6] * 20, [6] * 19 + [0], 2), op.pass_hat_k([6] * 20, [6] * 18 + [5, 0], 2)]
    from oloproof_nb._core.epochs import fractional_interval

    lows = [fractional_interval(v, np.ones(20, np.int64)).low for v in raw]
    assert lows[1] > lows[0] + 0.03  # the raw bound: not monotone
    mono = [fractional_interval(v, np.ones(20, np.int64), denominator=15).low for v in raw]
    assert mono[1] <= mono[0]


def test_boundary_n_equals_k_uses_the_gates_interval(runs: dict[int, op.Run]) -> None:
    """pass^5 of 5 epochs: each case is all-or-nothing, so the gate's (binary) interval applies."""
    run = runs[5]
    counts = _hand_counts(run)
    all_pass = sum(1 for n, c in counts.values() if c == n)
    row = op.reduce_epochs(run, reduce="pass^5").set_index("criterion").loc["answer_matches"]
    assert row["rate"] == pytest.approx(all_pass / 8)
    from scipy import stats

    ref = stats.binomtest(all_pass, 8).proportion_ci(0.95, method="exact")  # Clopper–Pearson, outside the package
    assert (row["ci_low"], row["ci_high"], row["method"]) == (pytest.approx(ref.low, abs=1e-12),
                                                             pytest.approx(ref.high, abs=1e-12), "clopper_pearson")
    # the release given is the one used: an 80% Clopper–Pearson interval
    narrow = op.reduce_epochs(run, reduce="pass^5", release={"confidence": 0.8}).set_index("criterion")
    ref80 = stats.binomtest(all_pass, 8).proportion_ci(0.8, method="exact")
    assert (narrow.loc["answer_matches", "ci_low"], narrow.loc["answer_matches", "ci_high"]) == (
        pytest.approx(ref80.low, abs=1e-12), pytest.approx(ref80.high, abs=1e-12))
    # the mean of the same rows is cluster_t (a case's epochs are one cluster): the reason says why they differ
    mean = op.reduce_epochs(run, reduce="mean").set_index("criterion").loc["answer_matches"]
    assert mean["method"] == "cluster_t"
    why = "clopper_pearson on 8 cases: once reduced, each case is one value of 0 or 1 and each source cluster holds"
    assert row["reason"].startswith(why)
    gated = op.gate(run, release={"criteria": {"answer_matches": {"threshold": 0.2, "reduce": "pass^5"}}})
    assert why in gated.table.set_index("criterion").loc["answer_matches", "reason"]


def test_by_case_keeps_the_cases_of_exactly_k_epochs(runs: dict[int, op.Run]) -> None:
    """pass^3 of 3 epochs: every case has exactly k rows and is reduced; its value is 1 only when all 3 passed
    (a hand count of the verdict rows)."""
    got = op.reduce_epochs(runs[3], reduce="pass^3", by_case=True)
    got = got[got["criterion"] == "answer_matches"].set_index("case_id")
    counts = _hand_counts(runs[3])
    assert sorted(got.index) == sorted(counts) and len(counts) == 8
    for case_id, (n, c) in counts.items():
        assert (got.loc[case_id, "epochs"], got.loc[case_id, "passes"]) == (n, c)
        assert got.loc[case_id, "value"] == (1.0 if c == n == 3 else 0.0)


def test_by_case_of_a_run_without_verdict_rows_is_an_empty_frame(runs: dict[int, op.Run]) -> None:
    """No rows to reduce (every verdict row dropped in a notebook): the per-case frame is empty with its columns,
    as the criterion table says no_evidence."""
    run = op.load_run(runs[3].directory)
    run.verdicts = run.verdicts.iloc[0:0]
    by_case = op.reduce_epochs(run, reduce="pass^2", by_case=True)
    assert list(by_case.columns) == ["case_id", "cluster", "criterion", "epochs", "passes", "missing", "reduce",
                                     "value"]
    assert len(by_case) == 0
    # the dtypes of a frame with rows (every column was float64): a concat or a merge on case_id keeps them
    with_rows = op.reduce_epochs(runs[3], reduce="pass^2", by_case=True)
    assert len(with_rows) > 0 and by_case.dtypes.to_dict() == with_rows.dtypes.to_dict()
    assert set(op.reduce_epochs(run, reduce="pass^2")["reason"]) == {"no_evidence"}


def test_a_reduction_counts_cases_and_their_source_clusters_apart(tmp_path: Path) -> None:
    """8 cases in 4 clusters of 2 (the case file's ``cluster``), 2 epochs: every reduction reduces 8 cases held
    in 4 clusters, the mean as pass^2."""
    cases = [{**c, "cluster": f"k{i // 2}"} for i, c in enumerate(_cases())]
    run = op.run(op.load_suite(_suite(tmp_path / "suite", cases=cases)), epochs=2, out=tmp_path / "run",
                 progress=False)
    table = op.reduce_epochs(run, reduce=["mean", "pass^2"])
    assert table[["reduce", "cases", "n_clusters"]].drop_duplicates().to_dict("records") == [
        {"reduce": "mean", "cases": 8, "n_clusters": 4}, {"reduce": "pass^2", "cases": 8, "n_clusters": 4}]
    release = {"allow_approximate_methods": True, "min_clusters": 2,  # the gate's row counts them apart too
               "criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^2"}}}
    row = op.gate(run, release=release).table.set_index("criterion").loc["answer_matches"]
    assert (row["reduce"], row["n"], row["n_clusters"]) == ("pass^2", 8, 4)
    counts = _hand_counts(run)  # a cluster fails pass^2 when one of its cases did not pass both epochs
    assert row["failing_clusters"] == len({f"k{int(cid[1:]) // 2}" for cid, (n, c) in counts.items() if c < n}) > 0


def test_fractional_values_are_clustered_even_one_case_a_cluster(runs: dict[int, op.Run]) -> None:
    """Every case its own cluster: pass^3 over 5 epochs gives values in steps of 1/10, judged by the clustered
    (approximate) CR2 interval, so rule 1 holds it back without allow_approximate_methods; over exactly 3 epochs the
    values are 0 or 1 and Clopper–Pearson decides (reduced_is_clustered)."""
    release = {"min_clusters": 2, "criteria": {"answer_matches": {"threshold": 0.2, "reduce": "pass^3"}}}
    five = op.gate(runs[5], release=release).table.set_index("criterion").loc["answer_matches"]
    assert (five["n"], five["n_clusters"], five["method"]) == (8, 8, "cluster_t")
    assert five["verdict"] == "INSUFFICIENT_EVIDENCE" and five["reason"].startswith("approximate_methods_not_allowed: ")
    three = op.gate(runs[3], release=release).table.set_index("criterion").loc["answer_matches"]
    assert three["method"] == "clopper_pearson" and not three["reason"].startswith("approximate")


def test_mean_reduction_is_the_gate_on_epoch_rows(runs: dict[int, op.Run]) -> None:
    run = runs[3]
    gate = op.gate(run).table.set_index("criterion")
    mean = op.reduce_epochs(run, reduce="mean").set_index("criterion")
    assert (gate["reduce"] == "mean").all()
    for c in ("answer_matches", "state_matches"):
        assert mean.loc[c, "rate"] == gate.loc[c, "rate"]
        assert mean.loc[c, "ci_low"] == gate.loc[c, "ci_low"]
        # epochs share their case's cluster: 8 clusters of 3 rows
        assert gate.loc[c, "n"] == 24 and gate.loc[c, "n_clusters"] == 8
    assert op.gate(run).clustered


# -- release.yaml: reduce --------------------------------------------------------------------------------


def test_gate_applies_the_release_reduction(runs: dict[int, op.Run]) -> None:
    run = runs[5]
    release = {"allow_approximate_methods": True, "min_clusters": 2,
               "criteria": {"answer_matches": {"threshold": 0.2, "reduce": "pass^3"}, "state_matches": 0.2}}
    table = op.gate(run, release=release).table.set_index("criterion")
    counts = _hand_counts(run)
    hat = np.mean([math.comb(c, 3) / math.comb(n, 3) for n, c in counts.values()])
    assert table.loc["answer_matches", "reduce"] == "pass^3"
    assert table.loc["answer_matches", "rate"] == pytest.approx(hat)
    assert table.loc["answer_matches", "n"] == 8  # cases, not epoch rows
    assert table.loc["answer_matches", "passed"] == sum(1 for n, c in counts.values() if c == n)
    assert table.loc["state_matches", "reduce"] == "mean" and table.loc["state_matches", "n"] == 40
    assert table.loc["answer_matches", "threshold"] == 0.2


def test_a_bootstrap_asked_for_and_replaced_is_named_for_pass_k_too(runs: dict[int, op.Run]) -> None:
    """``method: cluster_bootstrap`` with a pass^3 criterion over 5 epochs: the fractional values get the monotone
    CR2 logit-t interval, and the reason says so as the mean criterion's does (DESIGN: the gate "uses cluster_t
    and says so"); before, the mean row said "cluster_t instead of cluster_bootstrap" and the pass^3 row nothing
    (found by the gate oracle in tests/_analysis/test_gate_oracle.py)."""
    release = {"allow_approximate_methods": True, "min_clusters": 2, "method": "cluster_bootstrap",
               "criteria": {"answer_matches": {"threshold": 0.2, "reduce": "pass^3"}, "state_matches": 0.2}}
    table = op.gate(runs[5], release=release).table.set_index("criterion")
    for c in ("answer_matches", "state_matches"):
        assert table.loc[c, "method"] == "cluster_t"
        assert "cluster_t instead of cluster_bootstrap" in table.loc[c, "reason"], table.loc[c, "reason"]
    reduced = op.reduce_epochs(runs[5], release=release, reduce="pass^3").set_index("criterion")
    assert "cluster_t instead of cluster_bootstrap" in reduced.loc["answer_matches", "reason"]
    plain = op.gate(runs[5], release={**release, "method": "cluster_t"}).table.set_index("criterion")
    assert "instead of" not in plain.loc["answer_matches", "reason"]


def test_release_reduce_syntax_and_k_errors(tmp_path: Path, runs: dict[int, op.Run]) -> None:
    bad = {"criteria": {"answer_matches": {"threshold": 0.8, "reduce": "pass^x"}}}
    with pytest.raises(op.ConfigError, match=r"criteria\.answer_matches\.reduce.*not a reduction"):
        op.gate(runs[3], release=bad)
    with pytest.raises(op.ConfigError, match=r"criteria\.answer_matches\.colour: unknown key; allowed: threshold"):
        op.gate(runs[3], release={"criteria": {"answer_matches": {"threshold": 0.8, "colour": 1}}})
    with pytest.raises(op.ConfigError, match=r"criteria\.answer_matches\.reduce: pass\^5 needs at least 5 epochs"):
        op.gate(runs[3], release={"criteria": {"answer_matches": {"threshold": 0.8, "reduce": "pass^5"}}})
    # k == epochs is fine (boundary)
    op.gate(runs[3], release={"criteria": {"answer_matches": {"threshold": 0.8, "reduce": "pass@3"}}})
    with pytest.raises(op.OloproofError, match="needs at least 4 epochs"):
        op.reduce_epochs(runs[3], reduce="pass^4")
    with pytest.raises(op.OloproofError, match="not a reduction"):
        op.reduce_epochs(runs[3], reduce="best^2")


@pytest.mark.parametrize("value", [3, None, ["pass^2"], "pass ^2"])
def test_a_reduce_that_is_not_text_names_the_key_written(runs: dict[int, op.Run], value: Any) -> None:
    """``reduce: 3`` (or null, or a list) was reported as ``reductions.answer_matches: Input should be a valid
    string``, a key release.yaml does not have; a bad text as ``reductions: criteria.answer_matches.reduce: …``."""
    release = {"criteria": {"answer_matches": {"threshold": 0.8, "reduce": value}}}
    with pytest.raises(op.ConfigError) as err:
        op.gate(runs[3], release=release)
    assert str(err.value).startswith("release: criteria.answer_matches.reduce: ")
    assert "reductions" not in str(err.value) and "allowed: mean, pass^K or pass@K" in str(err.value)


@pytest.mark.parametrize("value", [3, {"pass^2"}])
def test_reduce_epochs_refuses_a_reduce_that_is_not_text(runs: dict[int, op.Run], value: Any) -> None:
    with pytest.raises(op.OloproofError, match="reduce="):  # was TypeError: 'int' object is not iterable
        op.reduce_epochs(runs[3], reduce=value)


def test_reduce_epochs_takes_a_tuple_of_reductions_as_a_list(runs: dict[int, op.Run]) -> None:
    # the docstring allows a list of reductions; a tuple is one too
    table = op.reduce_epochs(runs[3], reduce=("mean", "pass^2"))
    assert list(table["reduce"].unique()) == ["mean", "pass^2"]
    pd.testing.assert_frame_equal(table, op.reduce_epochs(runs[3], reduce=["mean", "pass^2"]))


def test_cli_names_the_file_and_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from oloproof_nb.cli import main

    release = {"criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^4"}}}
    suite = _suite(tmp_path / "s", epochs=2, release=release, cases=_cases(3))
    out = tmp_path / "r"
    assert main(["run", str(suite), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(suite / "release.yaml") in err[0], err
    assert "criteria.answer_matches.reduce: pass^4 needs at least 4 epochs" in err[0]
    assert not out.exists()  # refused before any case ran
    op.run(op.load_suite(suite), out=out, epochs=4, progress=False)
    other = tmp_path / "other.yaml"
    other.write_text("criteria:\n  answer_matches: {threshold: 0.5, reduce: 'pass@5'}\n")
    assert main(["gate", str(out), "--release", str(other)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(other) in err[0] and "criteria.answer_matches.reduce" in err[0], err
    other.write_text("criteria:\n  answer_matches: {threshold: 0.5, reduce: 'pass^'}\n")
    assert main(["gate", str(out), "--release", str(other)]) == 2
    err = capsys.readouterr().err
    assert "criteria.answer_matches.reduce" in err and "not a reduction" in err and "Traceback" not in err
    assert main(["gate", str(out)]) in (0, 1)  # pass^4 of 4 epochs: fine
    assert "pass^4" in capsys.readouterr().out
    assert main(["run", str(suite), "--epochs", "0", "--quiet"]) == 2
    assert "--epochs 0" in capsys.readouterr().err
    # the same bound as epochs: in oloproof.yaml (100,000 was accepted, and the run could not finish)
    assert main(["run", str(suite), "--epochs", "10001", "--quiet"]) == 2
    assert "--epochs 10001: must be 1 to 10,000" in capsys.readouterr().err
    with pytest.raises(op.OloproofError, match="epochs=10001: must be an integer from 1 to 10,000"):
        op.run(suite, epochs=10_001, progress=False)


def test_suite_epochs_key_is_strict(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "s", epochs=2, cases=_cases(2))
    assert op.load_suite(suite).config.epochs == 2
    text = (suite / "oloproof.yaml").read_text().replace("epochs: 2", "epochs: '2'")
    (suite / "oloproof.yaml").write_text(text)
    with pytest.raises(op.ConfigError, match="epochs"):
        op.load_suite(suite)
    (suite / "oloproof.yaml").write_text(text.replace("epochs: '2'", "epochs: 0"))
    with pytest.raises(op.ConfigError, match="epochs"):
        op.load_suite(suite)


def test_suite_epochs_default_and_override(tmp_path: Path) -> None:
    suite = op.load_suite(_suite(tmp_path / "s", epochs=2, cases=_cases(2)))
    assert len(op.run(suite, out=tmp_path / "a", progress=False).cases) == 4
    assert len(op.run(suite, out=tmp_path / "b", epochs=1, progress=False).cases) == 2
    with pytest.raises(op.OloproofError, match="epochs"):
        op.run(suite, out=tmp_path / "c", epochs=0, progress=False)


# -- resume ----------------------------------------------------------------------------------------------


def test_resume_after_a_cut_finishes_the_missing_epochs(tmp_path: Path) -> None:
    suite = op.load_suite(_suite(tmp_path / "s", cases=_cases(4)))
    full = op.run(suite, out=tmp_path / "full", epochs=3, progress=False)
    # an interrupted run: the first 5 records (c0 e1..e3, c1 e1..e2) and a torn sixth line
    cut = tmp_path / "cut"
    cut.mkdir()
    for name in ("manifest.json", "states.jsonl"):
        (cut / name).write_bytes((tmp_path / "full" / name).read_bytes())
    manifest = json.loads((cut / "manifest.json").read_text())
    del manifest["finished_at"]
    (cut / "manifest.json").write_text(json.dumps(manifest))
    lines = (tmp_path / "full" / "cases.jsonl").read_bytes().splitlines(keepends=True)
    (cut / "cases.jsonl").write_bytes(b"".join(lines[:5]) + lines[5][:40])
    assert not op.load_run(cut).finished and len(op.load_run(cut).cases) == 5
    with pytest.raises(op.RunDirError, match="epochs=3, not 2"):
        op.run(suite, out=cut, resume=True, epochs=2, progress=False)
    resumed = op.run(suite, out=cut, resume=True, progress=False)  # the manifest's epochs
    assert resumed.finished and resumed.epochs == 3
    keep = ["case_id", "epoch", "answer", "status"]
    pd.testing.assert_frame_equal(resumed.cases[keep], full.cases[keep])
    cols = ["case_id", "epoch", "criterion", "verdict"]
    pd.testing.assert_frame_equal(resumed.verdicts[cols], full.verdicts[cols])
    assert resumed.record("c1", epoch=3)["case"]["epoch"] == 3
    assert resumed.record("c1")["case"].get("epoch", 1) == 1
    with pytest.raises(op.OloproofError, match="no epoch 4"):
        resumed.record("c1", epoch=4)


# -- fault replays and metamorphic pairs per epoch -------------------------------------------------------


def test_replays_and_pairs_are_made_per_epoch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from oloproof_nb._analysis import run_copy
    from oloproof_nb.examples import init_example

    root = init_example("stateful-agent", tmp_path / "demo")
    run = op.run(op.load_suite(root), out=tmp_path / "run", epochs=2, progress=False)
    replays, pairs, cases = run.replays, run.pairs, run.cases
    assert set(replays["epoch"]) == {1, 2} and set(pairs["epoch"]) == {1, 2}
    per_epoch = replays.groupby("epoch").size()
    assert per_epoch[1] == per_epoch[2] > 0
    assert not pairs.duplicated(["derived_id", "relation", "epoch"]).any()
    assert len(pairs) == 2 * len(pairs[pairs["epoch"] == 1])
    # a derived case's epochs stay in its source's cluster
    derived = cases[cases["transform"].notna()]
    assert (derived["cluster"] == derived["source_id"]).all()
    # each epoch's replays are stored under that epoch
    first = run.replays.iloc[0]
    records = run.case_replay_records(first["case_id"], epoch=2)
    assert records and all(r.get("epoch") == 2 for r in records)
    epoch_one = run.case_replay_records(first["case_id"])  # the default epoch, whose records carry no epoch key
    assert len(epoch_one) == len(records) and all("epoch" not in r for r in epoch_one)  # before: all() of none
    # the same pair verdicts, epoch by epoch (the example agent is deterministic)
    v = run.verdicts
    assert (v[v["epoch"] == 1]["verdict"].tolist() == v[v["epoch"] == 2]["verdict"].tolist())
    # validity counts each derived pair once, not once per epoch
    validity = op.validity(run).set_index("transform")
    assert validity.iloc[0]["derived"] == len(derived[derived["epoch"] == 1])
    # the journal's pairs, judged on packed views across chunks of 5 cases, equal those of the live copy
    monkeypatch.setattr(run_copy, "CHUNK", 5)
    shutil.rmtree(run.directory / "frames")
    rebuilt = op.load_run(run.directory)
    for name in ("pairs", "verdicts"):
        pd.testing.assert_frame_equal(getattr(rebuilt, name), getattr(run, name), obj=name)


# -- slices, panel, plots --------------------------------------------------------------------------------


def test_slices_reduce_each_bin_with_the_release_reduction(runs: dict[int, op.Run]) -> None:
    run = runs[5]
    release = {"criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass@2"}}}
    table = op.slice_table(run, "tool_calls:1,2", release=release)
    reduced = table[table["criterion"] == "answer_matches"].set_index("bin")
    assert set(reduced["reduce"]) == {"pass@2"}
    counts = _hand_counts(run)  # every epoch makes exactly one tool call: all in [1, 2)
    at = np.mean([1 - math.comb(n - c, 2) / math.comb(n, 2) for n, c in counts.values()])
    assert reduced.loc["[1, 2)", "support"] == 8  # cases, not epoch rows
    assert reduced.loc["[1, 2)", "rate"] == pytest.approx(at)
    assert reduced.loc["<1", "support"] == 0 and math.isnan(reduced.loc["<1", "rate"])
    plain = table[table["criterion"] == "state_matches"].set_index("bin")
    assert set(plain["reduce"]) == {"mean"} and plain.loc["[1, 2)", "support"] == 40


def test_the_case_panel_shows_the_epochs_side_by_side(runs: dict[int, op.Run]) -> None:
    run = runs[3]
    panel = run.panel("c1", epoch=2)
    assert panel.epoch == 2 and panel.record["case"]["epoch"] == 2
    assert panel.epochs["epoch"].tolist() == [1, 2, 3]
    v = run.verdicts
    mine = v[(v["case_id"] == "c1") & (v["criterion"] == "answer_matches")].sort_values("epoch")
    assert panel.epochs["answer_matches"].tolist() == mine["verdict"].tolist()
    assert (panel.verdicts["epoch"] == 2).all() and len(panel.verdicts) == 2
    text = repr(panel)
    assert "epoch 2 of 3" in text and "[3]" in text
    assert "<b>Epochs</b>" in panel._repr_html_()
    assert len(runs[1].panel("c1").epochs) == 0  # a run without epochs shows no epochs table


def test_the_gate_plot_names_the_reduction(runs: dict[int, op.Run]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    release = {"criteria": {"answer_matches": {"threshold": 0.2, "reduce": "pass^3"}}}
    ax = op.plots.gate(op.gate(runs[3], release=release))
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "answer_matches (pass^3)" in labels and "state_matches" in labels


def test_resume_drops_the_replays_of_epochs_not_recorded(tmp_path: Path) -> None:
    """A kill after an epoch's replays were written but before its record: resume replays that epoch again,
    and never mixes its replays up with another epoch's of the same case."""
    from oloproof_nb.examples import init_example

    root = init_example("stateful-agent", tmp_path / "demo")
    suite = op.load_suite(root)
    full = op.run(suite, out=tmp_path / "full", epochs=2, cache=False, progress=False)
    cut = tmp_path / "cut"
    cut.mkdir()
    for name in ("states.jsonl", "replays.jsonl"):
        (cut / name).write_bytes((tmp_path / "full" / name).read_bytes())
    manifest = json.loads((tmp_path / "full" / "manifest.json").read_text())
    del manifest["finished_at"]
    (cut / "manifest.json").write_text(json.dumps(manifest))
    lines = (tmp_path / "full" / "cases.jsonl").read_bytes().splitlines(keepends=True)
    first = json.loads(lines[0])
    assert first["case"]["id"] == "ord-001" and "epoch" not in first["case"]
    (cut / "cases.jsonl").write_bytes(lines[0])  # ord-001 epoch 1 only; epoch 2's replays are orphans
    resumed = op.run(suite, out=cut, resume=True, cache=False, progress=False)
    cols = ["case_id", "epoch", "criterion", "verdict", "reason"]
    pd.testing.assert_frame_equal(resumed.replays[cols], full.replays[cols])
    stored = [json.loads(line) for line in (cut / "replays.jsonl").read_text().splitlines()]
    keys = [(r["case_id"], r.get("epoch", 1), r["criterion"], r["kind"]) for r in stored]
    assert len(keys) == len(set(keys))  # each (case, epoch) replayed once in the final journal


def test_pooled_runs_of_a_system_given_its_epoch_count_each_epoch_once(runs: dict[int, op.Run]) -> None:
    """The coin is given its epoch and seeds itself by (case, epoch), so the 1-epoch run's epoch 1 is
    the 3-epoch run's epoch 1 again, the same try. Pooled, the frames hold 4 rows a case, and pass^4 read the
    4 rows as 4 tries (each case's pass^4 its pass^3). Now each (case, epoch) counts once: pass^4 has no case of
    4 tries, and pass^3 of the pool is the 3-epoch run's own, counted here from the seeding rule by hand."""
    pooled = op.load_runs([runs[1].directory, runs[3].directory])
    assert pooled.epochs == 4 and {n for n, _ in _hand_counts(pooled).values()} == {4}  # the frames keep every row
    assert [r.manifest.epoch_given for r in pooled.runs] == [["run"], ["run"]]
    four = op.reduce_epochs(pooled, reduce="pass^4").set_index("criterion").loc["answer_matches"]
    assert math.isnan(four["rate"]) and (four["cases"], four["left_out"]) == (0, 8)
    assert four["reason"].startswith("no case has 4 rows; 8 row(s) repeat a try another run of the pool holds")
    three = op.reduce_epochs(pooled, reduce="pass^3").set_index("criterion").loc["answer_matches"]
    by_hand = [all(coin_answers_right(f"c{i}", P[i], e) for e in (1, 2, 3)) for i in range(8)]
    assert three["rate"] == pytest.approx(np.mean(by_hand))
    release = {"allow_approximate_methods": True, "min_clusters": 2,
               "criteria": {"answer_matches": {"threshold": 0.01, "reduce": "pass^4"}}}
    gated = op.gate(pooled, release=release).table.set_index("criterion").loc["answer_matches"]
    assert (gated["verdict"], gated["n"]) == ("INSUFFICIENT_EVIDENCE", 0) and "too_few_epochs" in gated["reason"]


EPOCH_TWO = '''
class Desk:
    """Answers wrong in epoch 2 of cases 0-5, right otherwise: seeded by its epoch, as README 6b advises."""
    version = "desk-1"

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def run(self, input, epoch):
        return {"answer": "no" if epoch == 2 and input["n"] < 6 else "ok", "status": "completed"}
'''


def _desk_suite(tmp_path: Path, code: str) -> op.Suite:
    """The suite of a desk (``code``, class ``Desk``) over 30 cases ``c00`` … ``c29`` expecting the answer ``ok``,
    judged by ``answer_matches``."""
    root = tmp_path / "suite"
    root.mkdir()
    (root / "desk.py").write_text(code, encoding="utf-8")
    (root / "cases.jsonl").write_text("".join(json.dumps({"id": f"c{n:02d}", "input": {"n": n}, "initial_state": {},
                                                          "expected": {"answer": "ok"}}) + "\n" for n in range(30)),
                                      encoding="utf-8")
    (root / "oloproof.yaml").write_text("name: desk\nsystem: desk:Desk\nevaluators:\n  - type: answer_matches\n",
                                        encoding="utf-8")
    return op.load_suite(root)


def test_two_one_epoch_runs_of_a_desk_seeded_by_epoch_are_not_pass_2(tmp_path: Path) -> None:
    """README 6b's figures: a desk that fails 6 of 30 cases in epoch 2 only. Two 1-epoch runs pooled
    read pass^2 30 of 30, a PASS at 0.7 (each run's epoch 1 is the same try); one 2-epoch run reads 24 of 30 (by
    hand: cases 0-5 fail epoch 2), no PASS. The pool now holds one try a case: too_few_epochs, BLOCK."""
    suite = _desk_suite(tmp_path, EPOCH_TWO)
    a, b = (op.run(suite, out=tmp_path / name, progress=False) for name in ("a", "b"))
    two = op.run(suite, out=tmp_path / "two", epochs=2, progress=False)
    release = {"criteria": {"answer_matches": {"threshold": 0.7, "reduce": "pass^2"}}}
    alone = op.gate(two, release=release)
    assert alone.table.loc[0, ["n", "passed"]].tolist() == [30, 24] and alone.verdict == "BLOCK"
    pooled = op.gate(op.load_runs([a.directory, b.directory]), release=release)
    row = pooled.table.set_index("criterion").loc["answer_matches"]
    assert pooled.verdict == "BLOCK" and (row["n"], row["passed"]) == (0, 0)
    assert "30 row(s) repeat a try another run of the pool holds" in row["reason"]
    assert "30 case(s) with fewer than 2 rows left out of pass^2" in row["reason"]


REPLAY_ONLY = EPOCH_TWO.replace("def run(self, input, epoch):", """made = 0

    def replay(self, trajectory, *, checkpoint, change, epoch):
        return trajectory

    def run(self, input):
        type(self).made += 1  # draws afresh: the second run's case runs (31-60) answer cases 0-5 wrong""").replace(
    "epoch == 2 and input", "type(self).made > 30 and input")


def test_a_pool_of_runs_whose_replay_alone_is_given_the_epoch_keeps_every_case_run(tmp_path: Path) -> None:
    """``epoch_given: [replay]`` (a system whose ``run`` takes no epoch, so draws afresh) made every row
    of the second run read as a repeat of the first's: pooled pass^2 read no case of 2 rows (too_few_epochs), where
    the rows are two tries a case. By hand: cases 0-5 pass in the first run and fail in the second, so pass^2 is
    24 of 30."""
    suite = _desk_suite(tmp_path, REPLAY_ONLY)
    a, b = (op.run(suite, out=tmp_path / name, progress=False) for name in ("a", "b"))
    assert a.manifest.epoch_given == b.manifest.epoch_given == ["replay"]
    assert int((b.verdicts["verdict"] == "pass").sum()) == 24 and int((a.verdicts["verdict"] == "pass").sum()) == 30
    pooled = op.reduce_epochs(op.load_runs([a.directory, b.directory]), reduce="pass^2")
    row = pooled.set_index("criterion").loc["answer_matches"]
    assert (row["cases"], row["left_out"]) == (30, 0) and row["rate"] == pytest.approx(24 / 30)


UNSEEDED = STOCHASTIC.replace("def run(self, input, epoch):", "def run(self, input):").replace(
    'f"{input[\'id\']}/{epoch}"', 'f"{input[\'id\']}/{self.draw}"').replace(
    "    def reset(self, state):", "    draw = 0\n\n    def reset(self, state):\n        type(self).draw += 1")


def test_pooled_runs_of_a_system_not_given_its_epoch_keep_every_row(tmp_path: Path) -> None:
    """A system whose ``run`` takes no ``epoch`` draws afresh at every reset (here a counter of the class): the
    manifest records no ``epoch_given`` and a pool of its runs counts each of its rows as a try (hand count)."""
    root = _suite(tmp_path / "suite")
    (root / "sysmod.py").write_text(UNSEEDED, encoding="utf-8")
    suite = op.load_suite(root)
    one, three = (op.run(suite, epochs=k, out=tmp_path / f"run{k}", progress=False) for k in (1, 3))
    assert "epoch_given" not in json.loads((one.directory / "manifest.json").read_text())
    pooled = op.load_runs([one.directory, three.directory])
    counts = _hand_counts(pooled)
    assert {n for n, _ in counts.values()} == {4} and len({c for _, c in counts.values()}) > 1
    got = op.reduce_epochs(pooled, reduce="pass^4").set_index("criterion").loc["answer_matches"]
    assert got["rate"] == pytest.approx(np.mean([math.comb(c, 4) for _, c in counts.values()]))
    assert "repeat" not in got["reason"]


def test_the_repeat_of_a_given_epoch_is_the_row_of_the_run_later_in_the_pools_order(runs: dict[int, op.Run]) -> None:
    """Of two runs given their epoch, the row left out is the one of the run placed later in the
    pool (``load_runs``' order), whatever the run ids and the order of the frame's rows; only the criteria asked
    for are marked. The pool is put in the order opposite to its run ids, and the rows are counted by hand: the
    later run's epoch-1 rows of answer_matches, one a case (8), and none of state_matches."""
    from oloproof_nb._analysis.reduce import repeated_rows

    first, second = sorted((runs[1], runs[3]), key=lambda r: r.run_id, reverse=True)
    pooled = op.load_runs([first.directory, second.directory])
    assert [r.run_id for r in pooled.runs] == [first.run_id, second.run_id]
    by_hand = {(second.run_id, f"c{i}", 1, "answer_matches") for i in range(8)}
    for verdicts in (pooled.verdicts, pooled.verdicts.sort_values("case_id", kind="stable"), pooled.verdicts[::-1]):
        marked = verdicts[repeated_rows(pooled, verdicts, ["answer_matches"])]  # rows in any order: a frame set
        assert set(zip(marked["run_id"], marked["case_id"], marked["epoch"], marked["criterion"],
                       strict=True)) == by_hand
        assert len(marked) == 8


@pytest.mark.parametrize("given_first", [True, False])
def test_a_run_not_given_its_epoch_pooled_with_one_given_it_keeps_every_row(runs: dict[int, op.Run],
                                                                            tmp_path: Path, given_first: bool) -> None:
    """A run whose system takes no ``epoch`` draws afresh, so its epoch-1 rows are tries of their
    own beside a run given the epoch, and the given run's rows are not its tries again, whichever comes first in
    the pool (placed second, the given run's rows were left out). Nothing is left out of the pool
    (pass^2: each of the 8 cases has its 2 rows, the passes counted by hand)."""
    from oloproof_nb._analysis.reduce import repeated_rows

    root = _suite(tmp_path / "suite")
    (root / "sysmod.py").write_text(UNSEEDED, encoding="utf-8")
    fresh = op.run(op.load_suite(root), out=tmp_path / "fresh", progress=False)
    assert runs[1].manifest.epoch_given == ["run"] and fresh.manifest.epoch_given is None
    order = [runs[1].directory, fresh.directory]
    pooled = op.load_runs(order if given_first else order[::-1])
    assert not repeated_rows(pooled, pooled.verdicts, pooled.criteria).any()
    counts = _hand_counts(pooled)
    assert {n for n, _ in counts.values()} == {2}
    got = op.reduce_epochs(pooled, reduce="pass^2").set_index("criterion").loc["answer_matches"]
    assert got["rate"] == pytest.approx(np.mean([c == 2 for _, c in counts.values()]))
    assert "repeat" not in got["reason"]


def test_a_case_with_fewer_than_k_rows_leaves_no_verdict(runs: dict[int, op.Run], tmp_path: Path) -> None:
    """Pooled: the 3-epoch run of 8 cases and a 1-epoch run whose suite gained c8, which always fails. Under
    pass^2, c8 (one row) cannot be reduced and was left out, so the gate passed on the 8 others with only a
    note; now that criterion is INSUFFICIENT_EVIDENCE (too_few_epochs). Under pass^1 every case has enough."""
    cases = [*_cases(), {"id": "c8", "input": {"id": "c8", "p": 0.0}, "initial_state": {"answered": None},
                         "expected": {"answer": "yes", "state": {"answered": "yes"}}}]
    grown = op.run(op.load_suite(_suite(tmp_path / "suite", cases=cases)), out=tmp_path / "grown", progress=False)
    pooled = op.load_runs([runs[3].directory, grown.directory])
    assert _hand_counts(pooled)["c8"] == (1, 0)

    def row(reduce: str) -> pd.Series:
        release = {"allow_approximate_methods": True, "min_clusters": 2,
                   "criteria": {"answer_matches": {"threshold": 0.01, "reduce": reduce}}}
        return op.gate(pooled, release=release).table.set_index("criterion").loc["answer_matches"]

    left_out = row("pass^2")
    assert left_out["n"] == 8 and left_out["ci_low"] > 0.01  # the interval of the 8 others alone would PASS
    assert left_out["verdict"] == "INSUFFICIENT_EVIDENCE"
    # grown's epoch 1 of c0–c7 is the 3-epoch run's epoch 1 again (the coin is seeded by it): one try each
    assert left_out["reason"] == ("too_few_epochs; 8 row(s) repeat a try another run of the pool holds (a fault "
                                  "replay taken from the replay cache, or a case's epoch run by a system given its "
                                  "epoch), so they are one try of the agent each and are counted once; 1 case(s) "
                                  "with fewer than 2 rows left out of pass^2 (any of them may fail, so no verdict): "
                                  "each case needs 2 rows, one per epoch it was judged in (a fault criterion's in "
                                  "the epochs that called its tool); run more epochs, or gate it with reduce: mean")
    enough = row("pass^1")
    assert enough["n"] == 9 and "too_few_epochs" not in enough["reason"]
    # per case, c8's one row is not reduced under pass^2 either: the 8 others are
    by_case = op.reduce_epochs(pooled, reduce="pass^2", by_case=True)
    assert sorted(by_case.loc[by_case["criterion"] == "answer_matches", "case_id"]) == [f"c{i}" for i in range(8)]
    table = op.reduce_epochs(pooled, reduce="pass^2").set_index("criterion").loc["answer_matches"]
    assert (table["cases"], table["left_out"]) == (8, 1)  # c8 counted as left out


def test_all_missing_counts_only_cases_whose_every_epoch_is_missing() -> None:
    """pass@2 over case a (3 epochs: 2 pass, 1 missing) and case b (3 epochs, all 3 missing): only b is all
    missing (hand count: 1). Counting cases with any missing epoch gave 2, and a gate that withholds its
    decision when every case is all missing would do so for a run where each case lost one try."""
    from oloproof_nb._analysis.reduce import reduced_sums
    from oloproof_nb._core.epochs import parse_reduce

    counts = pd.DataFrame({"cluster": ["a", "b"], "epochs": [3, 3], "passes": [2, 0], "missing": [1, 3]})
    assert reduced_sums(counts, parse_reduce("pass@2")).all_missing == 1


def test_a_design_too_large_to_scale_rounds_the_values_down(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above MAX_SCALED_ROWS the values go to a coarser D rounded down (a worse data set), so the lower bound
    only gets lower. Rounding to nearest instead took 0.4 at D=2 up to 0.5 and raised it above the exact one.
    20 cases, pass^3 over 5 epochs (D = C(5, 3) = 10): 20·10 > 40 rows, so D becomes 40 // 20 = 2."""
    from oloproof_nb._core import epochs
    from oloproof_nb._core.epochs import fractional_interval

    values, sizes = np.array([0.4] * 10 + [1.0] * 10), np.ones(20, np.int64)
    exact = fractional_interval(values, sizes, 0.95, denominator=10)
    floored = fractional_interval(np.floor(values * 2) / 2, sizes, 0.95, denominator=2)  # 0.4 → 0, 1 → 1
    monkeypatch.setattr(epochs, "MAX_SCALED_ROWS", 40)
    coarse = fractional_interval(values, sizes, 0.95, denominator=10)
    assert coarse.estimate == exact.estimate  # the estimate is the values' mean, never rounded
    assert coarse.low <= exact.low and coarse.high >= exact.high
    assert coarse.low == floored.low
    # the coarser D is 40 // 20 = 2, not 1: 0.6 rounds down to 0.5 in halves (to 0 in wholes), by hand
    sixes = np.array([0.6] * 10 + [1.0] * 10)
    halves = fractional_interval(np.array([0.5] * 10 + [1.0] * 10), sizes, 0.95, denominator=2)
    wholes = fractional_interval(np.array([0.0] * 10 + [1.0] * 10), sizes, 0.95, denominator=1)
    assert fractional_interval(sixes, sizes, 0.95, denominator=10).low == halves.low > wholes.low


def test_a_reduction_over_many_epoch_counts_keeps_an_informative_interval():
    # 100 cases with 5-12 epochs each (a fault criterion called in some epochs only), pass^3: the common
    # denominator of the values is lcm C(n, 3) = 9,240, so the monotone bound works on 924,000 scaled rows
    # where a cluster holds thousands of failing rows. The Lagrangian bound once let a cluster keep more
    # failures than a data set had, and the interval was [0.0, 1.0] against the raw [0.505, 0.614].
    from oloproof_nb._core.epochs import fractional_interval, reduce_counts, value_denominator

    rng = np.random.default_rng(0)
    n = rng.integers(5, 13, 100)
    c = rng.binomial(n, 0.85)
    values = reduce_counts(n, c, "pass^3")
    cluster = rng.integers(0, 50, 100)
    sums, sizes = np.bincount(cluster, weights=values), np.bincount(cluster)
    used = sizes > 0
    denominator = value_denominator(n, "pass^3")
    assert denominator == 9240
    mono = fractional_interval(sums[used], sizes[used], 0.95, denominator=denominator)
    raw = fractional_interval(sums[used], sizes[used], 0.95)
    assert mono.low <= raw.low + 1e-12 and mono.high >= raw.high - 1e-12  # never narrower than the raw bound
    # and not much wider: the raw interval (no denominator) keeps the plain all-pass cap, the monotone one the cap
    # on clusters that pass nothing (binomial.never_pass_cap), here 0.012 lower
    assert raw.low - mono.low < 0.02 and mono.high - raw.high < 0.01


SEEDED = '''
import random

import oloproof_nb as op


class Seeded(op.RecordedAgent):
    """Pays one of six payees, chosen at random from a seed of (case, epoch)."""

    version = "seeded-1"

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def _pay(self, to):
        self.state["paid"] = to
        return {"ok": True}

    def act(self, input, rec):
        result = rec.tool("pay", self._pay, to=self.rng.choice("abcdef"))
        return "failed" if isinstance(result, dict) and result.get("ok") is False else "paid"

    def run(self, input, epoch):
        self.rng = random.Random(f"{input['n']}-{epoch}")
        return super().run(input)


class SeededReplays(Seeded):
    def replay(self, trajectory, *, checkpoint, change, epoch):
        self.rng = random.Random(f"{trajectory.input['n']}-{epoch}")
        return super().replay(trajectory, checkpoint=checkpoint, change=change)


class SeededRunOnly(Seeded):
    def replay(self, trajectory, *, checkpoint, change):
        self.rng = random.Random(f"{trajectory.input['n']}-1")  # the only seed it can know
        return super().replay(trajectory, checkpoint=checkpoint, change=change)
'''


@pytest.mark.parametrize("system", ["SeededReplays", "SeededRunOnly"])
def test_a_replay_that_declares_epoch_is_given_the_case_epoch(tmp_path: Path, system: str) -> None:
    """``replay`` was never given the epoch, so an agent seeded per epoch, as the README
    suggests for ``run``, could not reproduce its epoch-2 recordings: every fault replay of epoch 2 was
    ``missing`` (control_replay_diverged). A ``replay`` that declares ``epoch`` now gets it."""
    root = tmp_path / "suite"
    root.mkdir()
    (root / "seeded.py").write_text(SEEDED, encoding="utf-8")
    cases = [{"id": f"c{n}", "input": {"n": n}, "expected": {"answer": "paid"}} for n in range(8)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (root / "oloproof.yaml").write_text(yaml.safe_dump({
        "name": "seeded", "system": f"seeded:{system}", "epochs": 2, "evaluators": [
            {"type": "answer_matches"},
            {"type": "fault_recovery", "tool": "pay", "fault": "error", "honest_answers": ["failed"]}]}),
        encoding="utf-8")
    (root / "release.yaml").write_text(yaml.safe_dump({"criteria": {"answer_matches": 0.5}}), encoding="utf-8")
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False, cache=False)
    paid = run.snapshots.assign(paid=[s["paid"] for s in run.snapshots["state"]]).pivot(
        index="case_id", columns="epoch", values="paid")
    assert (paid[1] != paid[2]).sum() >= 4  # the seed differs by epoch: most cases pay someone else in epoch 2
    replays = run.replays.set_index(["case_id", "epoch"]).sort_index()
    assert len(replays) == 16
    first = replays.xs(1, level="epoch")
    assert first["control_reproduced"].all() and (first["verdict"] == "pass").all()
    second = replays.xs(2, level="epoch")
    if system == "SeededReplays":
        assert second["control_reproduced"].all()
        assert (second["verdict"] == "pass").all() and (second["reason"] == "admitted_failure").all()
    else:  # seeded for epoch 1 in its replays: the README's warning, as it reads
        diverged = paid[1] != paid[2]
        assert (second.loc[diverged[diverged].index, "verdict"] == "missing").all()
        assert second.loc[diverged[diverged].index, "reason"].str.startswith("control_replay_diverged").all()
        assert (second.loc[diverged[~diverged].index, "verdict"] == "pass").all()


def test_a_reduced_gate_imports_neither_statsmodels_nor_scipy_stats(runs: dict[int, op.Run]) -> None:
    """The fractional interval took its t quantile from scipy.stats (a costly import on the gate's
    cold path) where the CR2 code uses scipy.special.stdtrit, the routine stats.t.ppf itself calls."""
    import subprocess
    import sys

    release = {"allow_approximate_methods": True, "min_clusters": 2,
               "criteria": {"answer_matches": {"threshold": 0.2, "reduce": "pass^3"}}}
    code = ("import sys, oloproof_nb as op\n"
            f"g = op.gate(op.load_run({str(runs[5].directory)!r}), release={release!r})\n"
            "row = g.table.set_index('criterion').loc['answer_matches']\n"
            "assert row['reduce'] == 'pass^3' and row['method'] == 'cluster_t', row\n"
            "print(sorted(m for m in ('scipy.stats', 'statsmodels') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# -- pooled runs and the replay cache ---------------------------------------------------------------------

RECOVERS = "recovers_from_error_at_pay"


def _recovers(n: int, epoch: int) -> bool:
    """Whether the desk recovers in epoch ``epoch`` of case ``n``, computed here from the rule it follows."""
    return (n + epoch) % 3 != 0


@contextlib.contextmanager
def _epoch_given_unrecorded() -> Iterator[None]:
    """Runs made inside record no ``epoch_given`` in their manifest, as runs made before it was recorded: the desk
    is given its epoch and recovers by it, which keeps the hand counts simple, but what these tests pin is the
    replay cache's repeats alone (a pool of runs that record it counts each (case, epoch) once whatever made its
    replays: tested above)."""
    import oloproof_nb._run.runner as runner

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(runner, "epoch_given", lambda system: None)
        yield


@pytest.fixture(scope="module")
def desk_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, op.Run]:
    """Three runs of 2 epochs of 8 cases: ``first`` fills the suite's replay cache, ``cached`` takes every fault
    replay from it, ``live`` makes its own (cache=False)."""
    root = recovering_desk_suite(tmp_path_factory.mktemp("desk") / "suite")
    suite = op.load_suite(root)
    out = root.parent
    with _epoch_given_unrecorded():
        return {"first": op.run(suite, out=out / "first", progress=False),
                "cached": op.run(suite, out=out / "cached", progress=False),
                "live": op.run(suite, out=out / "live", progress=False, cache=False)}


def _reduced_row(run: op.Run, reduce: str) -> pd.Series:
    release = {"allow_approximate_methods": True, "min_clusters": 2,
               "criteria": {RECOVERS: {"threshold": 0.05, "reduce": reduce}}}
    return op.gate(run, release=release).table.set_index("criterion").loc[RECOVERS]


def test_a_replay_the_cache_gave_two_pooled_runs_is_one_try(desk_runs: dict[str, op.Run]) -> None:
    """The replay cache gives a later run the very fault replay an earlier run
    made of a case's epoch, so a pool of the two held each try twice and pass^4 was the pass^2 of 2 tries:
    here 3 of 8 cases recover in both epochs (b0, b3, b6: (n + e) % 3 != 0 for e = 1, 2), and pass^4 read 3/8
    with a PASS at 0.05 from 2 tries per case. Each try now counts once: pass^4 has no case of 4 tries
    (too_few_epochs), pass^2 is the 2 tries' (the hand count), and a pool of runs that replayed live keeps its 4."""
    assert desk_runs["cached"].replays["cached"].all() and not desk_runs["first"].replays["cached"].any()
    both = [n for n in range(8) if _recovers(n, 1) and _recovers(n, 2)]
    assert both == [0, 3, 6]
    pooled = op.load_runs([desk_runs["first"].directory, desk_runs["cached"].directory])

    four = _reduced_row(pooled, "pass^4")
    assert (four["verdict"], four["n"]) == ("INSUFFICIENT_EVIDENCE", 0)
    assert four["reason"].startswith(
        "too_few_epochs; 16 row(s) repeat a try another run of the pool holds")
    two = _reduced_row(pooled, "pass^2")
    assert (two["n"], two["passed"], two["rate"]) == (8, 3, 3 / 8)
    assert "16 row(s) repeat a try" in two["reason"]
    table = op.reduce_epochs(pooled, reduce=["mean", "pass^2"]).set_index(["criterion", "reduce"])
    assert table.loc[(RECOVERS, "pass^2"), "rate"] == 3 / 8
    assert "16 row(s) repeat a try" in table.loc[(RECOVERS, "pass^2"), "reason"]
    assert table.loc[(RECOVERS, "mean"), "rate"] == sum(_recovers(n, e) for n in range(8) for e in (1, 2)) / 16
    by_case = op.reduce_epochs(pooled, reduce="pass^2", by_case=True).set_index(["criterion", "case_id"])
    assert by_case.loc[RECOVERS, "epochs"].tolist() == [2] * 8
    bins = op.slice_table(pooled, "tool_calls:2", release={"criteria": {RECOVERS: {"threshold": 0.1,
                                                                                     "reduce": "pass^2"}}})
    assert bins.loc[bins["criterion"] == RECOVERS, ["support", "passed"]].sum().tolist() == [8, 3]

    fresh = op.load_runs([desk_runs["first"].directory, desk_runs["live"].directory])
    assert fresh.repeated_replays() == set()
    own = _reduced_row(fresh, "pass^4")  # 4 tries of each case, the two runs' own: 3 cases pass all 4
    assert (own["n"], own["passed"], own["rate"], own["verdict"]) == (8, 3, 3 / 8, "PASS")
    assert "repeat" not in own["reason"]


@pytest.fixture
def one_time_runs(desk_runs: dict[str, op.Run], tmp_path: Path,
                  monkeypatch: pytest.MonkeyPatch) -> tuple[op.Run, op.Run]:
    """Two live runs (cache=False) of the desk suite whose every replay was made at one time: a clock that ticks
    every 15.6 ms (Windows' timer before Python 3.13) gives a case's back-to-back epochs one time, two runs
    made at once share it; frozen here so the test does not depend on timing."""
    import oloproof_nb._run.sandbox as sandbox

    at = datetime(2026, 12, 3, 12, 0, tzinfo=timezone.utc)
    monkeypatch.setattr(sandbox, "utc_now", lambda: at)
    suite = op.load_suite(desk_runs["first"].directory.parent / "suite")
    with _epoch_given_unrecorded():
        return (op.run(suite, out=tmp_path / "a", progress=False, cache=False),
                op.run(suite, out=tmp_path / "b", progress=False, cache=False))


def test_a_pool_of_runs_given_their_epoch_counts_a_live_replay_once_beside_one_the_cache_gave(
        tmp_path: Path) -> None:
    """Three runs of the desk, which is given its epoch and recorded so (``epoch_given``): the
    first fills the replay cache, the second replays live (cache=False), the third takes its replays from the
    cache. Both later runs repeat the first's tries, the live one as much as the cached one, so by hand 2 runs ×
    8 cases × 2 epochs = 32 rows of the fault criterion are left out; the cache's repeats alone (16) must not
    replace the epoch's."""
    suite = op.load_suite(recovering_desk_suite(tmp_path / "suite"))
    made = [op.run(suite, out=tmp_path / name, progress=False, cache=name != "live")
            for name in ("first", "live", "cached")]
    assert [r.manifest.epoch_given for r in made] == [["run", "replay"]] * 3
    assert made[2].replays["cached"].all() and not made[1].replays["cached"].any()
    pooled = op.load_runs([r.directory for r in made])
    row = _reduced_row(pooled, "pass^2")
    assert (row["n"], row["passed"]) == (8, sum(_recovers(n, 1) and _recovers(n, 2) for n in range(8)))
    assert "32 row(s) repeat a try another run of the pool holds" in row["reason"]


def test_a_pool_of_runs_given_their_epoch_counts_each_replay_once_in_either_order(tmp_path: Path) -> None:
    """Two runs of the desk, which is given its epoch and recorded so: the first fills the replay cache, the second
    takes every fault replay from it. Pooled with the second listed first, the cache rule left out its rows (copies
    of the first run's) and the epoch rule the first run's (the second, earlier in the pool, holds the case's
    epoch): no row of the fault criterion was left, its gate row read no_evidence and op.reduce_epochs raised
    KeyError. Each try now counts once in either order: by hand, 3 of 8 cases recover in both epochs."""
    suite = op.load_suite(recovering_desk_suite(tmp_path / "suite"))
    first, cached = (op.run(suite, out=tmp_path / name, progress=False) for name in ("first", "cached"))
    assert first.manifest.epoch_given == cached.manifest.epoch_given == ["run", "replay"]
    assert cached.replays["cached"].all() and not first.replays["cached"].any()
    hand = sum(_recovers(n, 1) and _recovers(n, 2) for n in range(8))
    for order in ((first, cached), (cached, first)):
        pooled = op.load_runs([r.directory for r in order])
        row = _reduced_row(pooled, "pass^2")
        assert (row["n"], row["passed"], row["rate"]) == (8, hand, hand / 8)
        assert "16 row(s) repeat a try another run of the pool holds" in row["reason"]
        table = op.reduce_epochs(pooled, reduce="pass^2").set_index("criterion")
        assert (table.loc[RECOVERS, "cases"], table.loc[RECOVERS, "rate"]) == (8, hand / 8)


def test_a_live_replay_is_never_a_repeat_whatever_its_time(desk_runs: dict[str, op.Run],
                                                           one_time_runs: tuple[op.Run, op.Run]) -> None:
    """A replay was told apart by (case, criterion, captured_at) alone, so live replays that share a
    time — a case's two epochs under a coarse clock, two runs made at once — were named repeats of each other,
    even within one run: pooled with a cached run, the live run's epoch-2 rows were left out and pass^2 read
    `too_few_epochs` over a pool that holds each case's 2 tries. Only a replay taken from the cache repeats
    another now, and of the same epoch (the cache key holds it)."""
    a, b = one_time_runs
    made = {(rec["environment_state"]["captured_at"], rec["cached"]) for rec in a.replay_records}
    assert made == {("2026-12-03T12:00:00.000000Z", False)}  # one time, every replay live
    cached = desk_runs["cached"]
    pool = op.load_runs([a.directory, desk_runs["first"].directory, cached.directory])
    copies = {(cached.run_id, f"b{n}", e, RECOVERS) for n in range(8) for e in (1, 2)}
    assert pool.repeated_replays() == copies  # the cached run's 16 copies of the first run's replays, no more
    four = _reduced_row(pool, "pass^4")  # each case's 4 tries: a's 2 and first's 2 (cached's are first's again)
    hand = sum(_recovers(n, 1) and _recovers(n, 2) for n in range(8))
    assert (four["n"], four["passed"]) == (8, hand)
    assert "16 row(s) repeat a try" in four["reason"]

    apart = op.load_runs([a.directory, b.directory, cached.directory])  # cached's originals are in no run here
    assert apart.repeated_replays() == set()
    assert (_reduced_row(apart, "pass^6")["n"], _reduced_row(apart, "pass^6")["passed"]) == (8, hand)


def test_copies_of_replays_made_outside_the_pool_count_once_each(desk_runs: dict[str, op.Run], tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runs that took every fault replay from a cache a run outside the pool filled hold one try
    of each (case, epoch) between them, in whichever order they are pooled. The filler's replays share one time
    (a coarse clock): matched without the epoch, each case's epoch 2 was a repeat of its epoch 1, within one run
    too, and pass^2 read `too_few_epochs`."""
    import shutil

    import oloproof_nb._run.sandbox as sandbox

    root = tmp_path / "suite"  # a suite of its own: a replay cache of its own
    root.mkdir()
    for name in ("desk.py", "cases.jsonl", "oloproof.yaml"):
        shutil.copy(desk_runs["first"].directory.parent / "suite" / name, root / name)
    suite = op.load_suite(root)
    with monkeypatch.context() as frozen:
        frozen.setattr(sandbox, "utc_now", lambda: datetime(2026, 12, 3, 12, 0, tzinfo=timezone.utc))
        op.run(suite, out=tmp_path / "filler", progress=False)
    with _epoch_given_unrecorded():
        x, y = (op.run(suite, out=tmp_path / name, progress=False) for name in ("x", "y"))
    assert x.replays["cached"].all() and y.replays["cached"].all()
    hand = sum(_recovers(n, 1) and _recovers(n, 2) for n in range(8))
    for first, second in ((x, y), (y, x)):
        pool = op.load_runs([first.directory, second.directory])
        assert pool.repeated_replays() == {(second.run_id, f"b{n}", e, RECOVERS) for n in range(8) for e in (1, 2)}
        row = _reduced_row(pool, "pass^2")
        assert (row["n"], row["passed"]) == (8, hand)


def test_the_replay_records_are_read_once_and_only_for_a_reduced_fault_criterion(
        desk_runs: dict[str, op.Run], monkeypatch: pytest.MonkeyPatch) -> None:
    """Telling a cached replay from its original reads each run's replays.jsonl whole (about 2.5 s for 50,000 cases'
    replays): the gate, op.reduce_epochs and op.slice_table each read it again on a pooled run, and a pool whose
    pass^k criteria hold no fault criterion read it for nothing. Now it is read once per pooled Run, and only when a
    fault criterion is reduced with pass^k or pass@k; the counts are the same."""
    from oloproof_nb._analysis.journal import Journal

    reads: list[Path] = []
    real = Journal.fault_replay_times
    monkeypatch.setattr(Journal, "fault_replay_times", lambda self: reads.append(self.directory) or real(self))
    pooled = op.load_runs([desk_runs["first"].directory, desk_runs["cached"].directory])
    answers = {"allow_approximate_methods": True, "min_clusters": 2,
               "criteria": {"answer_matches": {"threshold": 0.05, "reduce": "pass^2"}}}
    assert op.gate(pooled, release=answers).table.set_index("criterion").loc["answer_matches", "n"] == 8
    assert reads == []  # no fault criterion reduced: no replay record read
    two = _reduced_row(pooled, "pass^2")
    assert (two["n"], two["passed"]) == (8, 3) and "16 row(s) repeat a try" in two["reason"]
    assert sorted(reads) == sorted([desk_runs["first"].directory, desk_runs["cached"].directory])
    table = op.reduce_epochs(pooled, reduce="pass^2").set_index("criterion")
    assert table.loc[RECOVERS, "rate"] == 3 / 8
    _reduced_row(pooled, "pass^2")
    assert len(reads) == 2  # the second gate and reduce_epochs read nothing again


def test_a_case_s_mean_keeps_every_row_of_a_pool_where_pass_k_counts_a_try_once(
        desk_runs: dict[str, op.Run]) -> None:
    """op.reduce_epochs(by_case=True) asked for mean and pass^2 together: pass^2 counts each of a case's 2 tries
    once (the cached run's rows are the first run's replays again), mean keeps every row as the gate's mean does
    (2 runs x 2 epochs = 4 rows a case, the recoveries counted by hand from the desk's rule, twice)."""
    pooled = op.load_runs([desk_runs["first"].directory, desk_runs["cached"].directory])
    by_case = op.reduce_epochs(pooled, reduce=["mean", "pass^2"], by_case=True)
    rows = by_case[by_case["criterion"] == RECOVERS].set_index(["reduce", "case_id"])
    assert rows.loc["mean", "epochs"].tolist() == [4] * 8
    assert rows.loc["mean", "passes"].tolist() == [2 * (_recovers(n, 1) + _recovers(n, 2)) for n in range(8)]
    assert rows.loc["pass^2", "epochs"].tolist() == [2] * 8


def test_the_repeated_replays_are_worked_out_again_after_the_copy_is_rebuilt(
        desk_runs: dict[str, op.Run], monkeypatch: pytest.MonkeyPatch) -> None:
    """A pooled Run drops what it read when its members' columnar copies are rebuilt (a resumed member holds other
    replays then): the repeated replays are read again with the frames, not kept from before."""
    from oloproof_nb._analysis.journal import Journal

    reads: list[Path] = []
    real = Journal.fault_replay_times
    monkeypatch.setattr(Journal, "fault_replay_times", lambda self: reads.append(self.directory) or real(self))
    pooled = op.load_runs([desk_runs["first"].directory, desk_runs["cached"].directory])
    assert len(pooled.repeated_replays()) == 16 and len(reads) == 2
    pooled.write_columnar()
    assert len(pooled.repeated_replays()) == 16 and len(reads) == 4


def test_a_slice_s_pass_k_rate_counts_a_try_once(desk_runs: dict[str, op.Run]) -> None:
    """op.slice_table reduces each bin's cases from their own tries: in the pool of the first run and the run that
    took its replays from the cache, pass^2 of each case is 1 when it recovers in both epochs (b0, b3, b6 by the
    desk's rule) and 0 otherwise, so the bins' rates weigh up to 3 of 8. Read over the repeated rows as 4 tries,
    a case that recovers once read pass^2 = C(2,2)/C(4,2) = 1/6 instead of 0."""
    pooled = op.load_runs([desk_runs["first"].directory, desk_runs["cached"].directory])
    bins = op.slice_table(pooled, "tool_calls:2", release={"criteria": {RECOVERS: {"threshold": 0.1,
                                                                                     "reduce": "pass^2"}}})
    mine = bins[(bins["criterion"] == RECOVERS) & (bins["support"] > 0)]
    hand = sum(_recovers(n, 1) and _recovers(n, 2) for n in range(8))
    assert hand == 3 and (mine["rate"] * mine["support"]).sum() == pytest.approx(hand)


def test_the_mean_of_a_run_of_one_epoch_is_the_gates_unclustered_interval(runs: dict[int, op.Run]) -> None:
    """epochs=1, one row per case and criterion: no clusters, so the gate takes Clopper–Pearson on the rows, and
    the mean reduction is the gate's (its Notes): the bounds are statsmodels' on the hand-counted passes."""
    from statsmodels.stats.proportion import proportion_confint

    run = runs[1]
    mean = op.reduce_epochs(run, reduce="mean").set_index("criterion")
    assert not op.gate(run).clustered
    for c in ("answer_matches", "state_matches"):
        counts = _hand_counts(run, c)
        n, passed = len(counts), sum(p for _, p in counts.values())
        assert mean.loc[c, "method"] == "clopper_pearson" and mean.loc[c, "rate"] == passed / n
        assert (mean.loc[c, "ci_low"], mean.loc[c, "ci_high"]) == pytest.approx(
            proportion_confint(passed, n, alpha=0.05, method="beta"), abs=1e-12)


def test_reduce_epochs_of_a_pool_of_two_systems_says_its_rates_are_of_no_one_system(tmp_path: Path) -> None:
    """``op.reduce_epochs`` of v1's and v2's runs pooled by ``op.load_runs`` gave one rate of the two
    agents without a word, where ``op.gate`` of the same pool has no decision (``mixed_systems``) and
    ``op.slice_table`` warns. It still gives the table, and warns once, at the caller's line; a pool
    of one system's runs does not warn."""
    import warnings

    root = _suite(tmp_path / "suite", epochs=2)
    v1 = [op.run(op.load_suite(root), out=tmp_path / name, progress=False).directory for name in ("v1-a", "v1-b")]
    code = root / "sysmod.py"
    code.write_text(code.read_text(encoding="utf-8").replace('"coin-1"', '"coin-2"'), encoding="utf-8")
    v2 = op.run(op.load_suite(root), out=tmp_path / "v2", progress=False).directory
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one system's runs: no warning
        op.reduce_epochs(op.load_runs(v1))
    mixed = op.load_runs([v1[0], v2])
    with pytest.warns(UserWarning, match=r"^reduce_epochs: the pooled run's rows are of no one system or case file "
                                         r"\(mixed_systems: runs .* \(system version 'coin-1' → 'coin-2'\)\), so "
                                         r"each rate is of none") as caught:
        table = op.reduce_epochs(mixed, reduce="mean")
    assert len(caught) == 1 and caught[0].filename == __file__  # pointed at the caller's line
    assert table["cases"].tolist() == [8, 8]  # still the table: 8 cases, each over its 2 epochs in each run
    with pytest.warns(UserWarning, match=r"^reduce_epochs: the pooled run's rows are of no one system"):
        op.reduce_epochs(mixed, by_case=True)
    assert op.gate(mixed).reason.startswith("mixed_systems:")
