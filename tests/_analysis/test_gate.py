"""The release gate: its three outcomes, every INSUFFICIENT_EVIDENCE reason, REPORT_ONLY, the CLI.

Expected intervals come from outside references: scipy's exact binomial interval
(unclustered runs) and, for clustered runs, the CR2 logit-t interval computed from the
matrices (Bell–McCaffrey degrees of freedom) and the brute-force monotone lower bound
of tests/_cr2_reference.py, which does not import oloproof_nb.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from _cr2_reference import brute_force_low, cr2_matrix, never_pass_cap_by_hand
from _hostile_files import bounded, make_special
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

import oloproof_nb as op
import oloproof_nb._analysis.gate as gate_module
import oloproof_nb._analysis.gate_drift as gate_drift
from oloproof_nb._analysis.gate import GATE_COLUMNS
from oloproof_nb.cli import main

SYSTEM = '''
class Echo:
    """Answers whatever the case's input says: the test decides pass or fail per case."""
    def run(self, input):
        return {"steps": [], "answer": input["say"], "status": "completed"}
'''


def make_suite(tmp: Path, outcomes: list[bool], *, clusters: list[str] | None = None,
               release: dict | None = None, extra_evaluators: list[dict] | None = None) -> Path:
    """A suite whose case i passes answer_matches exactly when outcomes[i]."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "echo.py").write_text(SYSTEM)
    lines = []
    for i, ok in enumerate(outcomes):
        case = {"id": f"c{i:03d}", "input": {"say": "yes" if ok else "no", "case": i},  # each a case of its own
                "expected": {"answer": "yes"}}
        if clusters is not None:
            case["cluster"] = clusters[i]
        lines.append(json.dumps(case))
    (tmp / "cases.jsonl").write_text("\n".join(lines) + "\n")
    evaluators = [{"type": "answer_matches"}] + (extra_evaluators or [])
    (tmp / "oloproof.yaml").write_text(yaml.safe_dump({"name": "gate-test", "system": "echo:Echo",
                                                       "evaluators": evaluators}))
    if release is not None:
        (tmp / "release.yaml").write_text(yaml.safe_dump(release))
    return tmp


def run_suite(folder: Path) -> op.Run:
    return op.run(op.load_suite(folder), out=folder / "runs" / "r")


def row(g: op.Gate, criterion: str = "answer_matches") -> pd.Series:
    return g.table.set_index("criterion").loc[criterion]


def test_columns_pinned(tmp_path: Path) -> None:
    g = op.gate(run_suite(make_suite(tmp_path, [True] * 5, release={"criteria": {"answer_matches": 0.5}})))
    assert list(g.table.columns) == GATE_COLUMNS == [
        "criterion", "evaluator", "n", "n_clusters", "passed", "missing", "rate", "ci_low", "ci_high", "method",
        "threshold", "verdict", "reason", "failing_clusters", "vacuous", "reduce"]


def test_pass_unclustered_matches_scipy_exact_interval(tmp_path: Path) -> None:
    # 60 of 60 pass: Clopper-Pearson lower bound (0.025)^(1/60) = 0.9404 clears 0.90.
    g = op.gate(run_suite(make_suite(tmp_path, [True] * 60, release={"criteria": {"answer_matches": 0.90}})))
    r = row(g)
    ci = stats.binomtest(60, 60).proportion_ci(confidence_level=0.95, method="exact")
    assert r["ci_low"] == pytest.approx(ci.low, abs=1e-12)
    assert r["ci_low"] == pytest.approx(0.025 ** (1 / 60), abs=1e-12)
    assert (r["verdict"], r["method"], r["n"], r["passed"]) == ("PASS", "clopper_pearson", 60, 60)
    assert g.verdict == "PASS"


def test_fail_when_interval_is_below(tmp_path: Path) -> None:
    outcomes = [i % 2 == 0 for i in range(40)]  # 20 of 40
    g = op.gate(run_suite(make_suite(tmp_path, outcomes, release={"criteria": {"answer_matches": 0.9}})))
    r = row(g)
    ci = stats.binomtest(20, 40).proportion_ci(confidence_level=0.95, method="exact")
    assert r["ci_high"] == pytest.approx(ci.high, abs=1e-12) and ci.high < 0.9
    assert r["verdict"] == "FAIL" and g.verdict == "BLOCK"


def test_interval_includes_threshold(tmp_path: Path) -> None:
    outcomes = [True] * 22 + [False] * 2
    g = op.gate(run_suite(make_suite(tmp_path, outcomes, release={"criteria": {"answer_matches": 0.9}})))
    r = row(g)
    ci = stats.binomtest(22, 24).proportion_ci(method="exact")
    assert ci.low < 0.9 <= ci.high
    assert (r["verdict"], r["reason"]) == ("INSUFFICIENT_EVIDENCE", "interval_includes_threshold")
    assert g.verdict == "BLOCK"


def clustered_outcomes(g: int = 24) -> tuple[list[bool], list[str]]:
    rng = np.random.default_rng(3)
    outcomes, clusters = [], []
    for c in range(g):
        for _ in range(int(rng.integers(1, 4))):
            outcomes.append(bool(rng.random() < 0.85))
            clusters.append(f"k{c}")
    return outcomes, clusters


def test_clustered_uses_cluster_t_equal_to_the_public_interval(tmp_path: Path) -> None:
    """The interval is checked against the matrix definitions (tests/_cr2_reference.py), not against the package's
    own rate_interval, which the gate calls: before, a wrong CR2 standard error or degrees of freedom passed here."""
    outcomes, clusters = clustered_outcomes()
    release = {"allow_approximate_methods": True, "min_clusters": 20, "criteria": {"answer_matches": 0.5}}
    r = row(op.gate(run_suite(make_suite(tmp_path, outcomes, clusters=clusters, release=release))))
    y = np.array(outcomes, dtype=float)
    p, se, df = cr2_matrix(y, np.array(clusters))  # CR2 and Bell–McCaffrey df from the hat matrix
    half = stats.t.ppf(0.975, df) * se / (p * (1 - p))
    passes = pd.Series(y).groupby(clusters).sum().to_numpy().astype(int)
    rows = pd.Series(y).groupby(clusters).size().to_numpy()
    low = brute_force_low(passes.tolist(), rows.tolist())  # the monotone bound: 16 better data sets searched
    # the better data sets do not bind; what the clusters can vouch for does: some clusters pass
    # nothing, and the cap on their share is below (α/2)^(1/n_min)·p̂, the cap when none does
    vouched = never_pass_cap_by_hand(passes, rows)
    assert (passes == 0).any()
    assert vouched < 0.025 ** (1 / (rows.sum() ** 2 / (rows.astype(float) ** 2).sum())) * p
    assert vouched < special.expit(special.logit(p) - half)
    assert low == pytest.approx(vouched, abs=1e-12)
    assert r["method"] == "cluster_t"
    assert r["rate"] == pytest.approx(y.mean(), abs=1e-12)
    assert r["ci_low"] == pytest.approx(low, abs=1e-12)
    # the upper end, the mirror image: the clusters that pass every row cap what the failures' lower end can be
    mirror = 1 - never_pass_cap_by_hand(rows - passes, rows)
    assert mirror > special.expit(special.logit(p) + half)
    assert r["ci_high"] == pytest.approx(mirror, abs=1e-12)
    expected = op.rate_interval(y, clusters, method="cluster_t")  # the public interval gives the gate's numbers
    assert (r["ci_low"], r["ci_high"]) == (expected.low, expected.high)
    assert op.rate_interval_from_sums(passes, rows) == expected
    assert r["n_clusters"] == len(set(clusters)) and r["verdict"] == "PASS"
    failing = {c for c, ok in zip(clusters, outcomes, strict=True) if not ok}
    assert r["failing_clusters"] == len(failing) > 0


def test_approximate_methods_not_allowed(tmp_path: Path) -> None:
    outcomes, clusters = clustered_outcomes()
    release = {"allow_approximate_methods": False, "criteria": {"answer_matches": 0.5}}
    run = run_suite(make_suite(tmp_path, outcomes, clusters=clusters, release=release))
    g = op.gate(run)
    # the code first, then the key that decides it: the code alone named nothing a library user could set
    why = ("the run is clustered (a case's epochs, a copy and its source, or cases given one cluster share a "
           "cluster), and {} does not allow clustered (approximate) intervals: `allow_approximate_methods: true` "
           "decides them (README section 6)")
    assert (row(g)["verdict"], row(g)["reason"]) == ("INSUFFICIENT_EVIDENCE", "approximate_methods_not_allowed: "
        + why.format("the run's release.yaml (stored when it started: give one that does with "
                     "op.gate(run, release=...) to gate this run, or set it for the next run)"))
    assert g.verdict == "BLOCK" and g.clustered
    given = tmp_path / "strict.yaml"  # a file given: named as given
    given.write_text(yaml.safe_dump(release), encoding="utf-8")
    assert row(op.gate(run, release=given))["reason"] == f"approximate_methods_not_allowed: {why.format(given)}"
    assert row(op.gate(run, release=release))["reason"] == (
        f"approximate_methods_not_allowed: {why.format('the release configuration given')}")
    # a note after the code (the bootstrap replaced) keeps the key right after the code (only a
    # bare code was followed by the key in any test)
    noted = row(op.gate(run, release={**release, "method": "cluster_bootstrap"}))["reason"]
    assert noted.startswith(f"approximate_methods_not_allowed: {why.format('the release configuration given')}; "
                            "cluster_t instead of cluster_bootstrap")


def test_too_few_clusters(tmp_path: Path) -> None:
    outcomes, clusters = clustered_outcomes(g=8)
    release = {"allow_approximate_methods": True, "min_clusters": 20, "criteria": {"answer_matches": 0.5}}
    g = op.gate(run_suite(make_suite(tmp_path, outcomes, clusters=clusters, release=release)))
    assert (row(g)["verdict"], row(g)["reason"]) == (
        "INSUFFICIENT_EVIDENCE", "too_few_clusters: its rows fall in 8 clusters, min_clusters is 20")
    assert g.n_source_clusters == 8


def test_no_evidence(tmp_path: Path) -> None:
    # state_matches applies only to cases with expected.state: here none has one.
    release = {"criteria": {"answer_matches": 0.5, "state_matches": 0.5}}
    run = run_suite(make_suite(tmp_path, [True] * 30, release=release,
                               extra_evaluators=[{"type": "state_matches"}]))
    g = op.gate(run)
    r = row(g, "state_matches")
    assert (r["n"], r["verdict"], r["reason"]) == (0, "INSUFFICIENT_EVIDENCE", "no_evidence")
    assert math.isnan(r["rate"]) and g.verdict == "BLOCK"


def test_report_only_rows_and_missing_counts(tmp_path: Path) -> None:
    # a system without reset/snapshot: state_unchanged is missing on every case and never passes
    release = {"criteria": {"answer_matches": 0.5}}
    run = run_suite(make_suite(tmp_path, [True] * 30, release=release,
                               extra_evaluators=[{"type": "state_unchanged", "paths": ["x"]}]))
    g = op.gate(run)
    r = row(g, "state_unchanged")
    assert r["verdict"] == "REPORT_ONLY" and math.isnan(r["threshold"])
    assert (r["n"], r["passed"], r["missing"], r["rate"]) == (30, 0, 30, 0.0)
    assert r["ci_high"] > 0  # never a zero-width interval
    assert g.verdict == "PASS"  # REPORT_ONLY rows never block
    assert g.blocking.empty  # nor are they listed as blocking


def test_no_listed_criteria_blocks(tmp_path: Path) -> None:
    g = op.gate(run_suite(make_suite(tmp_path, [True] * 30, release={})))
    assert (g.table["verdict"] == "REPORT_ONLY").all() and g.verdict == "BLOCK"


def test_degenerate_clustered_rows_fall_back_and_say_so(tmp_path: Path) -> None:
    outcomes, clusters = clustered_outcomes()
    outcomes = [True] * len(outcomes)
    release = {"allow_approximate_methods": True, "criteria": {"answer_matches": 0.5}}
    r = row(op.gate(run_suite(make_suite(tmp_path, outcomes, clusters=clusters, release=release))))
    counts = pd.Series(clusters).value_counts().to_numpy()
    n_min = counts.sum() ** 2 / (counts**2).sum()
    assert r["method"] == "clopper_pearson" and "degenerate" in r["reason"]
    assert r["ci_low"] == pytest.approx(0.025 ** (1 / n_min), abs=1e-9)
    assert r["ci_high"] == 1.0


def test_bootstrap_same_seed_same_interval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outcomes, clusters = clustered_outcomes()
    release = {"allow_approximate_methods": True, "method": "cluster_bootstrap",
               "bootstrap": {"resamples": 2000, "seed": 7}, "criteria": {"answer_matches": 0.5}}
    run = run_suite(make_suite(tmp_path, outcomes, clusters=clusters, release=release))
    monkeypatch.setattr(gate_module, "BOOTSTRAP_MIN_CLUSTERS", 20)  # 24 clusters: let the bootstrap decide
    a, b = row(op.gate(run)), row(op.gate(run))
    assert a["method"] == "cluster_bootstrap"
    assert (a["ci_low"], a["ci_high"]) == (b["ci_low"], b["ci_high"])
    other = row(op.gate(run, release={**release, "bootstrap": {"resamples": 2000, "seed": 8}}))
    assert (other["ci_low"], other["ci_high"]) != (a["ci_low"], a["ci_high"])
    fewer = row(op.gate(run, release={**release, "bootstrap": {"resamples": 500, "seed": 7}}))  # resamples count
    assert (fewer["ci_low"], fewer["ci_high"]) != (a["ci_low"], a["ci_high"])


def test_release_argument_unknown_criterion(tmp_path: Path) -> None:
    run = run_suite(make_suite(tmp_path, [True] * 3, release={}))
    with pytest.raises(op.ConfigError, match=r"criteria\.nope: no such criterion.*answer_matches"):
        op.gate(run, release={"criteria": {"nope": 0.5}})


def test_release_yaml_unknown_criterion_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = make_suite(tmp_path, [True] * 3, release={"criteria": {"answer_match": 0.9}})
    assert main(["run", str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "release.yaml" in err and "answer_matches" in err


def test_cli_run_and_gate_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = make_suite(tmp_path / "good", [True] * 60, release={"criteria": {"answer_matches": 0.9}})
    assert main(["run", str(good), "--out", str(tmp_path / "r1")]) == 0
    out = capsys.readouterr().out
    assert "gate: PASS" in out and "answer_matches" in out
    assert main(["gate", str(tmp_path / "r1")]) == 0
    bad = make_suite(tmp_path / "bad", [False] * 30, release={"criteria": {"answer_matches": 0.9}})
    assert main(["run", str(bad), "--out", str(tmp_path / "r2")]) == 1
    assert "gate: BLOCK" in capsys.readouterr().out
    assert main(["gate", str(tmp_path / "r2")]) == 1
    assert main(["gate", str(tmp_path / "nowhere")]) == 2


def test_gate_of_loaded_run_equals_live(tmp_path: Path) -> None:
    outcomes, clusters = clustered_outcomes()
    release = {"allow_approximate_methods": True, "criteria": {"answer_matches": 0.5}}
    run = run_suite(make_suite(tmp_path, outcomes, clusters=clusters, release=release))
    pd.testing.assert_frame_equal(op.gate(run).table, op.gate(op.load_run(run.directory)).table)


def metamorphic_suite(tmp: Path, labeled: int, n: int = 24) -> Path:
    """n source cases with an `echoed` transform; the first `labeled` pairs get a valid label."""
    folder = make_suite(tmp, [True] * n, release={"allow_approximate_methods": True, "min_clusters": 20,
                                                  "criteria": {"answer_matches": 0.5,
                                                               "same_output_under_echoed": 0.5}})
    config = yaml.safe_load((folder / "oloproof.yaml").read_text())
    config["evaluators"].append({"type": "metamorphic_relation", "relation": "same_output", "transform": "echoed"})
    config["metamorphic"] = {"transforms": [{"name": "echoed", "field": "note", "template": "{value} (please)",
                                             "validity_labels": "labels/echoed.jsonl", "minimum_validity": 0.8}]}
    (folder / "oloproof.yaml").write_text(yaml.safe_dump(config))
    cases = [json.loads(line) for line in (folder / "cases.jsonl").read_text().splitlines()]
    for case in cases:  # a field the echo ignores, rewritten: the relation holds (an identity template is refused)
        case["input"]["note"] = "thanks"
    (folder / "cases.jsonl").write_text("".join(json.dumps(case) + "\n" for case in cases))
    (folder / "labels").mkdir()
    lines = [json.dumps({"case_id": f"c{i:03d}~echoed", "valid": True, "labeler": "t"}) for i in range(labeled)]
    (folder / "labels" / "echoed.jsonl").write_text("".join(line + "\n" for line in lines))
    return folder


def test_transform_not_checked_until_every_pair_is_labeled(tmp_path: Path) -> None:
    partial = op.gate(run_suite(metamorphic_suite(tmp_path / "a", labeled=23)))
    r = row(partial, "same_output_under_echoed")
    assert r["verdict"] == "INSUFFICIENT_EVIDENCE" and r["reason"].startswith("transform_not_checked")
    assert r["n"] == 24 and r["passed"] == 24  # the rows are shown, but they cannot pass the gate
    assert partial.verdict == "BLOCK"
    full = op.gate(run_suite(metamorphic_suite(tmp_path / "b", labeled=24)))
    assert row(full, "same_output_under_echoed")["verdict"] == "PASS"
    assert full.clustered and full.n_source_clusters == 24 and full.verdict == "PASS"


# -- the per-cluster sums every interval starts from, against a plain pandas groupby ---------------------

Sums = dict[tuple[Any, ...], tuple[list[int], list[int], int]]


def _groupby_oracle(verdicts: pd.DataFrame, by: list[np.ndarray]) -> Sums:
    """(passes per cluster, rows per cluster, missing) per (criterion, *by), clusters in first-seen order
    of their codes — as criterion_sums orders them — counted by hand, one row at a time in plain Python (a
    pandas groupby with a per-group apply did the same count at 50 times the cost: most of this test's time)."""
    cluster_code = {c: i for i, c in enumerate(dict.fromkeys(verdicts["cluster"]))}
    counts: dict[tuple[Any, ...], tuple[dict[int, list[int]], list[int]]] = {}
    columns = [verdicts["criterion"].tolist(), verdicts["cluster"].tolist(), verdicts["verdict"].tolist(),
               *[b.tolist() for b in by]]
    for criterion, cluster, verdict, *bins in zip(*columns, strict=True):
        per, missing = counts.setdefault((criterion, *[int(b) for b in bins]), ({}, [0]))
        tally = per.setdefault(cluster_code[cluster], [0, 0])
        tally[0] += verdict == "pass"
        tally[1] += 1
        missing[0] += verdict == "missing"
    return {key: ([per[code][0] for code in sorted(per)], [per[code][1] for code in sorted(per)], missing[0])
            for key, (per, missing) in counts.items()}


@settings(max_examples=60, deadline=None, derandomize=True)
@given(data=st.data(), n=st.integers(1, 300), n_clusters=st.integers(1, 40), n_by=st.integers(0, 2),
       bins=st.integers(1, 70))
def test_criterion_sums_equal_a_groupby(data: Any, n: int, n_clusters: int, n_by: int, bins: int) -> None:
    """Both counting paths (a dense key space counted directly; a sparse one through np.unique: many
    clusters times many bins) give each group's per-cluster passes and rows and its missing rows."""
    draw = data.draw
    verdicts = pd.DataFrame({
        "criterion": draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n)),
        "cluster": [f"k{i}" for i in draw(st.lists(st.integers(0, n_clusters - 1), min_size=n, max_size=n))],
        "verdict": draw(st.lists(st.sampled_from(["pass", "fail", "missing"]), min_size=n, max_size=n)),
    }).astype("str")
    by = [np.array(draw(st.lists(st.integers(0, bins - 1), min_size=n, max_size=n)), dtype=np.int64)
          for _ in range(n_by)]
    got = gate_module.criterion_sums(verdicts, by=by or None)
    expected = _groupby_oracle(verdicts, by)
    assert set(got) == set(expected)
    for key, (passes, rows, missing) in expected.items():
        sums = got[key]
        assert (sums.passes.tolist(), sums.rows.tolist(), sums.missing) == (passes, rows, missing), key
        assert sums.passes.dtype == np.int64 and sums.rows.dtype == np.int64


@pytest.mark.parametrize("sparse", [False, True])
def test_criterion_sums_take_both_paths(sparse: bool) -> None:
    """The dense count and the np.unique count, each chosen for sure (300 rows; 3 criteria × 60 clusters ×
    70 bins is a key space of 12,600 > 4 × 300 + 1,024: sparse)."""
    rng = np.random.default_rng(7)
    n = 300
    verdicts = pd.DataFrame({"criterion": rng.choice(["a", "b", "c"], n),
                             "cluster": [f"k{i}" for i in rng.integers(0, 60, n)],
                             "verdict": rng.choice(["pass", "fail", "missing"], n)}).astype("str")
    by = [rng.integers(0, 70 if sparse else 2, n)]
    space = verdicts["cluster"].nunique() * 3 * (int(by[0].max()) + 1)
    assert (space > 4 * n + 1024) is sparse
    got = gate_module.criterion_sums(verdicts, by=by)
    expected = _groupby_oracle(verdicts, by)
    assert {k: (v.passes.tolist(), v.rows.tolist(), v.missing) for k, v in got.items()} == expected


def test_a_release_yaml_changed_since_the_run_is_named_and_the_stored_one_decides(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The threshold raised from 0.6 to 0.95 in the suite's release.yaml after the run, `oloproof
    gate` still said PASS on 0.6 and nothing said the file had changed. The run's copy still decides (the run is
    the evidence); now a warning names the keys that differ and how to gate with the file as it is."""
    import warnings

    folder = make_suite(tmp_path / "s", [True] * 10, release={"criteria": {"answer_matches": 0.6}})
    run = run_suite(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # unchanged: no word
        assert op.gate(run).verdict == "PASS"
    (folder / "release.yaml").write_text(yaml.safe_dump({"criteria": {"answer_matches": 0.95}}))
    with pytest.warns(UserWarning, match=r"release\.yaml differs from the release settings run .* was made with "
                                         r"\(criteria\.answer_matches 0\.6 → 0\.95\); this gate uses the run's") \
            as caught:
        g = op.gate(run)
    # warned at this line, not at the package's own frame that called the gate (oloproof_nb/_display/notebook.py)
    assert [w.filename for w in caught if "differs" in str(w.message)] == [__file__]
    assert g.verdict == "PASS" and row(g)["threshold"] == 0.6  # 10 of 10: ci_low 0.692 ≥ 0.6
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # given the file, it decides, and there is nothing to warn about
        assert op.gate(run, release=folder / "release.yaml").verdict == "BLOCK"  # 0.692 < 0.95
    assert main(["gate", str(run.directory)]) == 0
    assert "criteria.answer_matches 0.6 → 0.95" in capsys.readouterr().err
    # a file that does not read is no setting either, but is named (a tightened threshold under a key
    # with a typo, or a duplicate key, was passed over without a word, as if the gate had taken it)
    for broken, says in (("criteria: {answer_matches: [", "release.yaml"),
                         ("criteria: {answer_matches: 0.95}\ncriteria: {answer_matches: 0.9}\n", "criteria"),
                         ("criterias: {answer_matches: 0.95}\n", "criterias")):
        (folder / "release.yaml").write_text(broken)
        with pytest.warns(UserWarning, match=r"\(the suite folder's release\.yaml, which cannot be read now\); this "
                                             r"gate uses the release settings run .* was made with") as caught:
            assert op.gate(run).verdict == "PASS"
        message = str(caught[0].message)
        assert str(folder / "release.yaml") in message and says in message and "\n" not in message
        assert main(["gate", str(run.directory)]) == 0 and "cannot be read now" in capsys.readouterr().err
    (folder / "release.yaml").unlink()  # a moved suite folder, a run copied elsewhere
    with warnings.catch_warnings():  # (a CI artifact): no file to compare with, no "differs … → null"
        warnings.simplefilter("error")
        assert op.gate(run).verdict == "PASS"
    (folder / "release.yaml").mkdir()  # a folder where the file was: no setting either, and named as one
    with pytest.warns(UserWarning, match=r"release\.yaml: is a directory, not a regular file \(the suite folder's"):
        assert op.gate(run).verdict == "PASS"


def test_a_release_yaml_changed_since_pooled_runs_is_named_too(tmp_path: Path) -> None:
    """Two runs made with answer_matches 0.6, the file then tightened to 0.95: the single run
    warned, the pooled runs said PASS on 0.6 without a word. Pooled runs share one stored release (load_runs
    refuses others), so the file is compared with it the same way."""
    import warnings

    release = {"allow_approximate_methods": True, "criteria": {"answer_matches": 0.6}}  # a case in both: clustered
    folder = make_suite(tmp_path / "s", [True] * 25, release=release)
    a, b = (op.run(op.load_suite(folder), out=folder / "runs" / name) for name in "ab")
    pooled = op.load_runs([a.directory, b.directory])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # unchanged: no word
        assert op.gate(pooled).verdict == "PASS"
    (folder / "release.yaml").write_text(yaml.safe_dump({**release, "criteria": {"answer_matches": 0.95}}))
    with pytest.warns(UserWarning, match=r"\(criteria\.answer_matches 0\.6 → 0\.95\); this gate uses the run's"):
        g = op.gate(pooled)
    assert row(g)["threshold"] == 0.6 and row(g)["n"] == 50  # the stored setting still decides, on both runs


def test_a_release_drift_names_the_first_three_keys_in_order_and_counts_the_rest(tmp_path: Path) -> None:
    """By hand, four settings differ: allow_approximate_methods (default false), confidence (default 0.95), the
    threshold of answer_matches, and a threshold for `again`, a criterion the stored file did not list (null).
    Sorted (criteria.again before criteria.answer_matches), the first three are named in the file's words (true,
    null) and the fourth is counted."""
    import re

    folder = make_suite(tmp_path / "s", [True] * 10, release={"criteria": {"answer_matches": 0.6}},
                        extra_evaluators=[{"type": "answer_matches", "criterion": "again"}])
    run = run_suite(folder)
    (folder / "release.yaml").write_text(yaml.safe_dump({"allow_approximate_methods": True, "confidence": 0.9,
                                                         "criteria": {"answer_matches": 0.8, "again": 0.5}}))
    drift = "allow_approximate_methods false → true, confidence 0.95 → 0.9, criteria.again null → 0.5 and 1 more"
    with pytest.warns(UserWarning, match=rf"was made with \({re.escape(drift)}\); this gate uses the run's"):
        op.gate(run)


def test_a_release_yaml_written_after_a_run_made_without_one_is_named(tmp_path: Path) -> None:
    """The run was made with no release.yaml (no criterion gated); one listing answer_matches appeared since. The
    stored settings (none) still decide, and the warning says what the file would change: null → 0.95."""
    folder = make_suite(tmp_path / "s", [True] * 10)
    run = run_suite(folder)
    (folder / "release.yaml").write_text(yaml.safe_dump({"criteria": {"answer_matches": 0.95}}))
    with pytest.warns(UserWarning, match=r"was made with \(criteria\.answer_matches null → 0\.95\); this gate"):
        g = op.gate(run)
    assert g.reason.startswith("no_criteria")


def _cases(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "cases.jsonl").read_text().splitlines() if line.strip()]


def _write_cases(folder: Path, cases: list[dict[str, Any]], end: str = "\n") -> None:
    (folder / "cases.jsonl").write_text("\n".join(json.dumps(c) for c in cases) + end)


def test_a_case_file_changed_since_the_run_is_named_and_the_run_decides(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """After a run, c000 expected another answer, c009 was removed and c010 added; `oloproof gate` of
    the stored run still said PASS and nothing said the case file had changed, though the suite as it is now
    BLOCKs: 9 of its 10 cases pass, and by hand (scipy's beta quantile) the exact lower bound is 0.555 < 0.6.
    The run's verdicts still decide (it is the evidence, as for release.yaml); a warning names what differs. A
    file whose bytes changed but not its cases (the lines reordered, a blank line) is no difference."""
    import warnings

    folder = make_suite(tmp_path / "s", [True] * 10, release={"criteria": {"answer_matches": 0.6}})
    run = run_suite(folder)
    cases = _cases(folder)
    _write_cases(folder, cases[::-1], end="\n\n")  # the same cases, other bytes
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert op.gate(run).verdict == "PASS"
    cases[0]["expected"]["answer"] = "no"
    _write_cases(folder, [*cases[:9], {**cases[9], "id": "c010"}])
    changed = (r"1 case\(s\) added \(first 'c010'\), 1 case\(s\) removed \(first 'c009'\), "
               r"1 case\(s\) edited \(first 'c000'\)")
    with pytest.warns(UserWarning, match=rf"cases\.jsonl differs from the one run .* was made with \({changed}\); "
                                         "this gate judges the cases and checks the run recorded") as caught:
        g = op.gate(run)
    assert [w.filename for w in caught if "differs" in str(w.message)] == [__file__]
    assert g.verdict == "PASS" and row(g)["passed"] == 10  # the run's verdicts decide
    assert main(["gate", str(run.directory)]) == 0
    out = capsys.readouterr()
    assert "1 case(s) edited (first 'c000')" in out.err
    # said where the PASS is read too, as compare's last line says it: one file, cases.jsonl
    assert out.out.splitlines()[-1] == ("gate: PASS — exit 0: the 1 gated criterion passes; the suite folder has "
                                        "changed since the run (1 file(s): see the warning above)")
    now = op.gate(op.run(op.load_suite(folder), out=folder / "runs" / "now"))  # the suite as it is now
    assert (row(now)["passed"], row(now)["n"]) == (9, 10) and now.verdict == "BLOCK"
    assert row(now)["ci_low"] == pytest.approx(stats.beta.ppf(0.025, 9, 2)) and stats.beta.ppf(0.025, 9, 2) < 0.6
    cluster = _cases(folder)
    cluster[1]["cluster"] = "c002"  # the same content in another cluster: other statistics
    _write_cases(folder, cluster)
    with pytest.warns(UserWarning, match=r"1 case\(s\) moved to another cluster \(first 'c001'\)"):
        op.gate(op.load_run(folder / "runs" / "now"))
    for kind in ("fifo", "device"):  # no file to read whole without waiting: not read, no word
        (folder / "cases.jsonl").unlink()
        special = make_special(folder / "cases.jsonl", kind)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert bounded(lambda: op.gate(run).verdict, 30, unblock=[special]) == "PASS"


def test_a_suite_moved_since_the_run_is_compared_where_its_run_folder_is_now(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The gate compared a run with the suite files at its manifest's root, the path the suite had when
    the run was made. release.yaml loosened to 0.5, the suite run (9 of 10 pass: the exact lower bound, scipy's beta
    quantile, 0.555 clears 0.5 but not 0.6), the suite moved to another path (another checkout, a CI job's
    workspace) where release.yaml is back at 0.6 and c000 expects another answer: `oloproof gate` of the run said
    `gate: PASS — exit 0: the 1 gated criterion passes` without a word — with the old folder left at the old path (a
    stale checkout) it was compared with that, and with no folder there with nothing. The run's settings still
    decide; the suite the run folder sits in is named as an unmoved one is. A run folder kept outside any suite is
    compared with the suite it was made from, as before."""
    import shutil
    import warnings

    old = make_suite(tmp_path / "s", [True] * 9 + [False], release={"criteria": {"answer_matches": 0.5}})
    run_suite(old)
    moved = Path(shutil.copytree(old, tmp_path / "moved"))
    (moved / "release.yaml").write_text(yaml.safe_dump({"criteria": {"answer_matches": 0.6}}))
    cases = _cases(moved)
    cases[0]["expected"]["answer"] = "no"
    _write_cases(moved, cases)
    assert stats.beta.ppf(0.025, 9, 2) == pytest.approx(0.555, abs=5e-4)
    for stale in (True, False):  # the run's suite at the old path as the run was made, then no folder there
        if not stale:
            shutil.rmtree(old)
        with pytest.warns(UserWarning) as caught:
            g = op.gate(op.load_run(moved / "runs" / "r"))
        said = [str(w.message) for w in caught]
        assert any(m.startswith(f"{moved / 'release.yaml'} differs from the release settings run ") for m in said)
        assert any(m.startswith(f"{moved / 'cases.jsonl'} differs from the one run ")
                   and "(1 case(s) edited (first 'c000'))" in m for m in said)
        assert g.verdict == "PASS" and row(g)["ci_low"] == pytest.approx(stats.beta.ppf(0.025, 9, 2))
        assert g.relaxed == ("criteria.answer_matches 0.6 → 0.5",)
        assert g.weaker_than == f"{moved / 'release.yaml'} as it is now"
        assert main(["gate", str(moved / "runs" / "r")]) == 0
        assert capsys.readouterr().out.splitlines()[-1] == (
            "gate: PASS — exit 0: the 1 gated criterion passes, by 1 setting weaker than "
            f"{moved / 'release.yaml'} as it is now; the suite folder has changed since the run (2 file(s): see the "
            "warnings above)")  # release.yaml and cases.jsonl
    kept = op.run(op.load_suite(moved), out=tmp_path / "kept" / "r")  # no suite folder around it: its own suite's
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert op.gate(kept).relaxed == ()
    (moved / "release.yaml").write_text(yaml.safe_dump({"criteria": {"answer_matches": 0.7}}))
    with pytest.warns(UserWarning, match="differs from the release settings run"):
        assert op.gate(kept).weaker_than == f"{moved / 'release.yaml'} as it is now"


def test_a_run_of_another_suite_linked_into_a_suite_s_runs_is_compared_with_its_own_suite(tmp_path: Path) -> None:
    """A link in suite b's runs/ to a run of suite a (another name) was compared with b's files, as a
    moved suite is: b's release.yaml (0.6, where a's is 0.5) made its gate say it was by settings
    weaker than b's file, and warn that b's files differ from those the run was made with. A run folder sitting in
    a suite of another name is compared with the suite it was made from, as one kept outside any suite is."""
    import warnings

    made = make_suite(tmp_path / "a", [True] * 9 + [False], release={"criteria": {"answer_matches": 0.5}})
    run = run_suite(made)
    other = make_suite(tmp_path / "b", [True] * 3, release={"criteria": {"answer_matches": 0.6}})
    config = yaml.safe_load((other / "oloproof.yaml").read_text())
    (other / "oloproof.yaml").write_text(yaml.safe_dump({**config, "name": f"not-{config['name']}"}))
    (other / "runs").mkdir()
    (other / "runs" / "linked").symlink_to(run.directory)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = op.gate(op.load_run(other / "runs" / "linked"))
    assert g.relaxed == () and g.drift == ()
    (made / "release.yaml").write_text(yaml.safe_dump({"criteria": {"answer_matches": 0.6}}))  # its own suite's
    with pytest.warns(UserWarning, match=f"^{made / 'release.yaml'} differs from the release settings run "):
        assert op.gate(op.load_run(other / "runs" / "linked")).relaxed == ("criteria.answer_matches 0.6 → 0.5",)


def test_a_suite_moved_and_renamed_since_the_run_is_compared_where_its_run_folder_is_now(tmp_path: Path) -> None:
    """The rule that a run folder in a suite of another name is compared with the suite it was made
    from also took a suite moved and renamed since its run (and given a new ``name``) for another suite,
    and compared the run with the folder it was made in, where nothing is any more: the run made while release.yaml
    was loosened (0.5), the file put back (0.6), gated ``PASS`` with no word (before that rule it was named). A run is
    compared with the suite it was made from only while that folder holds a suite."""
    import shutil

    old = make_suite(tmp_path / "s", [True] * 9 + [False], release={"criteria": {"answer_matches": 0.5}})
    run_suite(old)
    moved = Path(shutil.move(old, tmp_path / "moved"))
    (moved / "release.yaml").write_text(yaml.safe_dump({"criteria": {"answer_matches": 0.6}}))
    config = yaml.safe_load((moved / "oloproof.yaml").read_text())
    (moved / "oloproof.yaml").write_text(yaml.safe_dump({**config, "name": f"{config['name']}-v2"}))
    with pytest.warns(UserWarning, match=f"^{moved / 'release.yaml'} differs from the release settings run "):
        g = op.gate(op.load_run(moved / "runs" / "r"))
    assert g.verdict == "PASS" and g.relaxed == ("criteria.answer_matches 0.6 → 0.5",)


@pytest.mark.parametrize("suite_file", ["name: [unclosed\n", "system: sysmod:System\n"], ids=["torn", "no-name"])
def test_a_moved_suite_whose_suite_file_names_no_suite_is_still_the_one_compared(tmp_path: Path,
                                                                                suite_file: str) -> None:
    """A moved suite whose oloproof.yaml is being edited (torn YAML, or no ``name``
    yet) names no other suite, so the run folder's suite is still the one its files are compared with, not the
    folder the run was made in."""
    import shutil

    from oloproof_nb._analysis.gate_drift import suite_folder

    old = make_suite(tmp_path / "s", [True] * 3)
    run_suite(old)
    moved = Path(shutil.copytree(old, tmp_path / "moved"))
    run = op.load_run(moved / "runs" / "r")
    assert suite_folder(run) == moved and Path(str(run.suite_root)).resolve() == old.resolve()
    (moved / "oloproof.yaml").write_text(suite_file, encoding="utf-8")
    assert suite_folder(run) == moved


def _labeled_run(root: Path) -> Path:
    """A suite of five sources and their copies under transform ``t`` (c1~t labeled invalid, the rest valid), run
    into ``root/runs/r``; ``root`` returned."""
    from _metamorphic_systems import DIRECTED, case, transform, write_labels

    root.mkdir()
    (root / "sysmod.py").write_text(DIRECTED, encoding="utf-8")
    ids = ["c1", "c2", "c3", "c4", "c5"]
    (root / "cases.jsonl").write_text("".join(json.dumps(case(i)) + "\n" for i in ids), encoding="utf-8")
    (root / "oloproof.yaml").write_text(yaml.safe_dump({
        "name": "labels", "system": "sysmod:Directed", "evaluators": [{"type": "answer_matches"}],
        "metamorphic": {"transforms": [transform("t", "!answer", minimum_validity=0.5)]}}), encoding="utf-8")
    (root / "release.yaml").write_text(yaml.safe_dump({"criteria": {"answer_matches": 0.1}}), encoding="utf-8")
    write_labels(root, "t", [{"case_id": f"{i}~t", "valid": i != "c1"} for i in ids])
    run_suite(root)
    return root


def test_a_moved_suite_s_label_file_is_compared_where_the_run_folder_is_now(tmp_path: Path) -> None:
    """The label check of a moved suite: c1~t labeled invalid when the run was made, the suite copied
    to another path (the old one left as it was) and c1~t relabeled valid there: the gate of the run in the copy
    names the copy's label file, not the unchanged one where the run was made."""
    import shutil

    from _metamorphic_systems import relabel

    root = _labeled_run(tmp_path / "s")
    moved = Path(shutil.copytree(root, tmp_path / "moved"))
    relabel(moved / "labels" / "t.jsonl", {"c1~t": True})
    with pytest.warns(UserWarning) as caught:
        op.gate(op.load_run(moved / "runs" / "r"))
    said = [str(w.message) for w in caught if "differs from the validity labels" in str(w.message)]
    assert len(said) == 1, said
    assert said[0].startswith(f"{moved / 'labels' / 't.jsonl'} differs from the validity labels run ")
    assert "(transform t: c1~t is labeled otherwise)" in said[0]


def test_a_moved_suite_of_no_release_yaml_is_compared_where_its_run_folder_is(tmp_path: Path) -> None:
    """The suite file (oloproof.yaml) makes the folder around a run folder a suite, not a
    release.yaml: a suite that has none, moved and its case file edited there, is named."""
    import shutil

    old = make_suite(tmp_path / "s", [True] * 4)
    run_suite(old)
    moved = Path(shutil.copytree(old, tmp_path / "moved"))
    cases = _cases(moved)
    cases[0]["expected"]["answer"] = "no"
    _write_cases(moved, cases)
    with pytest.warns(UserWarning, match=f"^{re.escape(str(moved / 'cases.jsonl'))} differs from the one run "):
        op.gate(op.load_run(moved / "runs" / "r"), release={"criteria": {"answer_matches": 0.1}})


def test_a_run_folder_beside_a_folder_named_like_the_suite_file_is_compared_with_its_own_suite(
        tmp_path: Path) -> None:
    """A run folder kept at ``x/runs/r`` where ``x/oloproof.yaml`` is a folder, not a suite file:
    ``x`` is no suite, and the gate compares the run with the suite it was made from (release.yaml tightened there
    since), as for any run folder kept outside a suite."""
    suite = make_suite(tmp_path / "s", [True] * 9 + [False], release={"criteria": {"answer_matches": 0.5}})
    (tmp_path / "x" / "oloproof.yaml").mkdir(parents=True)
    kept = op.run(op.load_suite(suite), out=tmp_path / "x" / "runs" / "r")
    (suite / "release.yaml").write_text(yaml.safe_dump({"criteria": {"answer_matches": 0.6}}))
    with pytest.warns(UserWarning, match=f"^{re.escape(str(suite / 'release.yaml'))} differs from the release"):
        assert op.gate(op.load_run(kept.directory)).relaxed == ("criteria.answer_matches 0.6 → 0.5",)


def test_a_suite_reached_through_a_link_is_named_as_its_run_names_it(tmp_path: Path) -> None:
    """The run folder read through a link to its suite (``l`` → ``s``) sits in the very folder
    the run was made in: the gate names that folder's release.yaml as the manifest names it (``s``), once."""
    suite = make_suite(tmp_path / "s", [True] * 9 + [False], release={"criteria": {"answer_matches": 0.5}})
    run_suite(suite)
    (tmp_path / "l").symlink_to(suite, target_is_directory=True)
    (suite / "release.yaml").write_text(yaml.safe_dump({"criteria": {"answer_matches": 0.6}}))
    run = op.load_run(tmp_path / "l" / "runs" / "r")
    assert run.directory.parent.parent != suite  # read through the link
    with pytest.warns(UserWarning, match="differs from the release") as caught:
        g = op.gate(run)
    assert [str(w.message).split(" differs")[0] for w in caught] == [str(suite / "release.yaml")]
    assert g.weaker_than == f"{suite / 'release.yaml'} as it is now"


def test_a_suite_moved_whose_old_path_is_a_loop_of_links_is_compared_where_its_run_folder_is(
        tmp_path: Path) -> None:
    """A bug: the suite moved, its release.yaml tightened there, and where it was made a link
    to itself. ``resolve`` of that path raised RuntimeError before Python 3.13 (3.13 resolves a loop as it is),
    and the gate compared the run with the loop, that is with nothing: PASS without a word on 3.11 and 3.12, the
    warning and the 'weaker than' line on 3.13. The loop is not the folder the run sits in: compared with that."""
    import shutil

    old = make_suite(tmp_path / "s", [True] * 9 + [False], release={"criteria": {"answer_matches": 0.5}})
    run_suite(old)
    moved = Path(shutil.copytree(old, tmp_path / "moved"))
    shutil.rmtree(old)
    old.symlink_to(old)
    try:
        (moved / "release.yaml").write_text(yaml.safe_dump({"criteria": {"answer_matches": 0.6}}))
        with pytest.warns(UserWarning, match=f"^{re.escape(str(moved / 'release.yaml'))} differs from the release"):
            g = op.gate(op.load_run(moved / "runs" / "r"))
        assert g.verdict == "PASS" and g.weaker_than == f"{moved / 'release.yaml'} as it is now"
    finally:  # the suite's module stays imported from that path: a loop there broke hypothesis's later scans
        old.unlink()


def test_an_oloproof_yaml_changed_since_the_run_is_named_but_not_a_comment_or_the_slices(tmp_path: Path) -> None:
    """The answer check made case-sensitive (``normalize: false``) and a criterion added after the run:
    `oloproof gate` of the run said PASS without a word. A comment, the slices a report shows or the suite's name
    decide no verdict: no word for them."""
    import warnings

    folder = make_suite(tmp_path / "s", [True] * 10, release={"criteria": {"answer_matches": 0.6}})
    run = run_suite(folder)
    suite = yaml.safe_load((folder / "oloproof.yaml").read_text())
    (folder / "oloproof.yaml").write_text(yaml.safe_dump({**suite, "name": "renamed", "slices": ["tool_calls:1"]})
                                          + "# a comment\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert op.gate(run).verdict == "PASS"
    suite["evaluators"] = [{"type": "answer_matches", "normalize": False},
                           {"type": "answer_matches", "criterion": "again"}]
    (folder / "oloproof.yaml").write_text(yaml.safe_dump(suite))
    with pytest.warns(UserWarning, match=r"oloproof\.yaml differs from the one run .* was made with \(criterion "
                                         r"answer_matches configured otherwise, criterion again added\); this gate"):
        assert op.gate(run).verdict == "PASS"


def test_an_oloproof_yaml_changed_in_many_ways_names_the_first_three_and_counts_the_rest(tmp_path: Path) -> None:
    """suite_drift's promise: each criterion added, removed or configured otherwise, then each other key
    that differs (``tool_errors``, ``case_timeout_s``), the first three named and how many more counted (five
    changes by hand: answer_matches, again and twice added, then the two keys)."""
    folder = make_suite(tmp_path / "s", [True] * 10, release={"criteria": {"answer_matches": 0.6}})
    run = run_suite(folder)
    suite = yaml.safe_load((folder / "oloproof.yaml").read_text())
    suite["evaluators"] = [{"type": "answer_matches", "normalize": False},
                           {"type": "answer_matches", "criterion": "again"},
                           {"type": "answer_matches", "criterion": "twice"}]
    suite["tool_errors"] = {"status_values": ["error", "failed"]}
    suite["case_timeout_s"] = 7
    (folder / "oloproof.yaml").write_text(yaml.safe_dump(suite))
    with pytest.warns(UserWarning, match=r"oloproof\.yaml differs from the one run .* was made with \(criterion "
                                         r"answer_matches configured otherwise, criterion again added, criterion "
                                         r"twice added and 2 more\); this gate"):
        assert op.gate(run).verdict == "PASS"
    suite["evaluators"] = [{"type": "answer_matches"}]
    (folder / "oloproof.yaml").write_text(yaml.safe_dump(suite))
    with pytest.warns(UserWarning, match=r"was made with \(case_timeout_s, tool_errors\); "):
        op.gate(run)

# -- gaps mutants showed --------------------------------------------------------------------------------------


def _drift(run: op.Run) -> list[str]:
    """The suite-drift warnings a gate of ``run`` gives (any other warning is let through)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        op.gate(run)
    return [str(w.message) for w in caught if "differs from the one run" in str(w.message)]


def test_an_oloproof_yaml_change_of_exactly_three_keys_names_them_all_and_not_isolation(tmp_path: Path) -> None:
    """``isolation`` (how workers run) decides no verdict: no word for it alone, and not counted beside others.
    Three differences that decide verdicts (a check configured otherwise, the timeout, the epochs) are named, all
    three, with nothing counted after them (``and 0 more`` would be wrong): written by hand."""
    folder = make_suite(tmp_path / "s", [True] * 4, release={"criteria": {"answer_matches": 0.5}})
    run = run_suite(folder)
    suite = yaml.safe_load((folder / "oloproof.yaml").read_text())
    (folder / "oloproof.yaml").write_text(yaml.safe_dump({**suite, "isolation": "process"}))
    assert _drift(run) == []
    (folder / "oloproof.yaml").write_text(yaml.safe_dump({
        **suite, "isolation": "process", "case_timeout_s": 5.0, "epochs": 2,
        "evaluators": [{"type": "answer_matches", "normalize": False}]}))
    (message,) = _drift(run)
    assert "was made with (criterion answer_matches configured otherwise, case_timeout_s, epochs); " in message


def test_an_oloproof_yaml_or_case_file_caught_mid_edit_is_no_word(tmp_path: Path) -> None:
    """A file that does not parse now (an edit in progress) is not compared: the gate of the stored run gives its
    verdict and no drift warning, rather than an error about a file the run does not read. (4 of 4: the exact
    lower bound 0.025 ** (1/4) = 0.398 clears 0.3.)"""
    folder = make_suite(tmp_path / "s", [True] * 4, release={"criteria": {"answer_matches": 0.3}})
    run = run_suite(folder)
    suite_text = (folder / "oloproof.yaml").read_text()
    (folder / "oloproof.yaml").write_text("evaluators: [\n")
    assert _drift(run) == [] and op.gate(run).verdict == "PASS"
    (folder / "oloproof.yaml").write_text(suite_text)
    with (folder / "cases.jsonl").open("a") as fh:
        fh.write('{"id": "c004", "input": {"say": \n')
    assert _drift(run) == [] and op.gate(run).verdict == "PASS"


def test_a_case_file_of_another_name_is_compared_and_counted_by_hand(tmp_path: Path) -> None:
    """The suite's ``cases:`` is ``tasks.jsonl``. After the run, two cases are added (written c011 before c010),
    two removed (c008, c009), three edited (c002, c005, and c003, which also moved to another cluster: an
    edited case is counted as edited only); the counts and the first id of each (the smallest) are written by
    hand."""
    folder = make_suite(tmp_path / "s", [True] * 10, release={"criteria": {"answer_matches": 0.5}})
    (folder / "cases.jsonl").rename(folder / "tasks.jsonl")
    suite = yaml.safe_load((folder / "oloproof.yaml").read_text())
    (folder / "oloproof.yaml").write_text(yaml.safe_dump({**suite, "cases": "tasks.jsonl"}))
    run = run_suite(folder)
    cases = [json.loads(line) for line in (folder / "tasks.jsonl").read_text().splitlines() if line.strip()]
    for i in (2, 3, 5):
        cases[i]["expected"]["answer"] = "no"
    cases[3]["cluster"] = "elsewhere"
    cases = [*cases[:8], {**cases[0], "id": "c011"}, {**cases[0], "id": "c010"}]
    (folder / "tasks.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (message,) = _drift(run)
    assert message.startswith(f"{folder / 'tasks.jsonl'} differs from the one run {run.run_id} was made with "
                              "(2 case(s) added (first 'c010'), 2 case(s) removed (first 'c008'), 3 case(s) edited "
                              "(first 'c002')); ")


def test_the_copies_a_transform_derives_are_not_read_as_removed_cases(example_suite: Path, tmp_path: Path) -> None:
    """The example derives copies (``ord-018~injected``) that its case file does not hold: a case file whose bytes
    changed but not its cases (a blank line added) is no difference, copies and all."""
    run = op.run(op.load_suite(example_suite), out=tmp_path / "out", progress=False)
    assert run.cases["transform"].notna().any()
    with (example_suite / run.config.cases).open("a") as fh:
        fh.write("\n")
    assert _drift(run) == []


# -- verdict rows without a cluster or criterion: refused, never counted in another group -----------------


@pytest.mark.parametrize("column", ["cluster", "criterion"])
def test_criterion_sums_refuse_a_row_without_its_key(column: str) -> None:
    """A missing key was coded -1 by pd.factorize and read as the group before's last cluster: b's row counted
    as a's (a: 2 rows of 1 pass became 3 rows of 2 passes, b lost its row)."""
    verdicts = pd.DataFrame({"case_id": ["c0", "c1", "c2", "c3"], "criterion": ["a", "a", "b", "b"],
                             "cluster": ["x", "y", "x", "y"], "verdict": ["fail", "pass", "pass", "pass"]})
    verdicts.loc[2, column] = None
    with pytest.raises(op.OloproofError, match=rf"verdicts: 1 row\(s\) have no {column} \(the first: case_id 'c2'"):
        gate_module.criterion_sums(verdicts)


def test_a_failing_row_that_lost_its_cluster_is_no_pass(tmp_path: Path) -> None:
    """The failing rows of criterion ``again`` without a cluster (a frame edited in a notebook) were counted in
    the criterion before it: ``again`` passed on its 36 passing rows alone (PASS at 0.85) where its 40 rows hold
    4 failures (by hand: 36 of 40, exact lower bound 0.76), and answer_matches had 44 rows."""
    outcomes = [i % 10 != 0 for i in range(40)]  # c000, c010, c020, c030 fail
    run = run_suite(make_suite(tmp_path, outcomes, extra_evaluators=[{"type": "answer_matches", "criterion": "again"}],
                               release={"criteria": {"answer_matches": 0.5, "again": 0.85}}))
    assert row(op.gate(run), "again")["verdict"] == "INSUFFICIENT_EVIDENCE"
    v = run.verdicts
    v.loc[(v["criterion"] == "again") & (v["verdict"] != "pass"), "cluster"] = None
    run.verdicts = v
    with pytest.raises(op.OloproofError, match=r"verdicts: 4 row\(s\) have no cluster \(the first: case_id 'c000', "
                                               r"criterion 'again'\)"):
        op.gate(run)


def test_verdict_rows_regrouped_in_a_notebook_get_a_clustered_interval(tmp_path: Path) -> None:
    """run.verdicts regrouped into 6 topics of 10 cases (run.cases left as it was, each case its own cluster):
    the gate showed n_clusters 6 and still took the 60 rows for independent ones — Clopper-Pearson, lower bound
    0.677 (scipy: 48 of 60), PASS at 0.65 — where 6 clusters are too few for any interval (DESIGN: a cluster
    holding more than one case makes the run clustered; min_clusters 20)."""
    outcomes = [i >= 12 for i in range(60)]  # the 12 failures fill topics 0 and 1
    release = {"allow_approximate_methods": True, "min_clusters": 20, "criteria": {"answer_matches": 0.65}}
    run = run_suite(make_suite(tmp_path, outcomes, release=release))
    plain = row(op.gate(run))
    assert plain["method"] == "clopper_pearson" and plain["verdict"] == "PASS"
    assert plain["ci_low"] == pytest.approx(stats.binomtest(48, 60).proportion_ci(method="exact").low, abs=1e-12)
    v = run.verdicts
    v["cluster"] = "topic" + (v["case_id"].str[1:].astype(int) // 10).astype(str)
    run.verdicts = v
    g = op.gate(run)
    r = row(g)
    assert (r["n_clusters"], r["method"], r["verdict"], r["reason"]) == (6, "cluster_t", "INSUFFICIENT_EVIDENCE",
                                                                       "too_few_clusters: its rows fall in 6 clusters, "
                                                                       "min_clusters is 20")
    assert g.clustered and g.verdict == "BLOCK"
    table = op.slice_table(run, "trajectory_length:1")  # the slices and reduce_epochs take the gate's choice too
    assert set(table.loc[table["support"] > 0, "method"]) == {"cluster_t"}
    assert op.reduce_epochs(run, "mean")["method"].tolist() == ["cluster_t"]


def test_a_cluster_split_by_an_invisible_character_is_refused_not_passed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """20 clusters of two cases (g00's two fail together) written with a zero-width space after the second
    case's cluster name were 40 clusters of one: the gate took them for 40 independent cases, Clopper-Pearson
    38 of 40 (scipy: 0.8308 >= 0.80), PASS, exit 0, where the 20 clusters are INSUFFICIENT_EVIDENCE."""
    outcomes = [g != 0 for g in range(20) for _ in range(2)]
    release = {"allow_approximate_methods": True, "criteria": {"answer_matches": 0.80}}
    plain = [f"g{g:02d}" for g in range(20) for _ in range(2)]
    r = row(op.gate(run_suite(make_suite(tmp_path / "plain", outcomes, clusters=plain, release=release))))
    assert (r["n_clusters"], r["verdict"]) == (20, "INSUFFICIENT_EVIDENCE")
    assert stats.binomtest(38, 40).proportion_ci(method="exact").low >= 0.80  # what the split run was given
    split = [name + "\u200b" * (i % 2) for i, name in enumerate(plain)]
    folder = make_suite(tmp_path / "split", outcomes, clusters=split, release=release)
    assert main(["run", str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "cases.jsonl: line 2: cluster 'g00\\u200b' reads as the cluster 'g00'" in err
    assert not (folder / "runs").exists()


class _Steady:
    """Answers 'yes': every case of make_suite([True] * n) passes."""

    version = "1"

    def run(self, input: dict) -> dict:
        return {"steps": [], "answer": "yes", "status": "completed"}


class _Regressed(_Steady):
    """Version 2: answers 'no' on every fourth case (30 of 40 pass)."""

    version = "2"

    def run(self, input: dict) -> dict:
        return {"steps": [], "answer": "no" if input["case"] % 4 == 0 else "yes", "status": "completed"}


class _Edited(_Regressed):
    """The regressed code under the steady version's name."""

    version = "1"


def test_a_pool_of_runs_of_different_systems_has_no_release_decision(tmp_path: Path) -> None:
    """A regressed run pooled with three runs of the version before it: 30 of 40 alone (Clopper-Pearson upper
    bound 0.873 by scipy, no PASS at 0.8), but 150 of 160 rows pooled, and the pool said PASS. A pool of one
    system's runs still gates as before."""
    folder = make_suite(tmp_path / "s", [True] * 40, release={"allow_approximate_methods": True,
                                                               "criteria": {"answer_matches": 0.80}})
    suite = op.load_suite(folder)

    def made(system: type, name: str) -> op.Run:
        return op.run(suite, system=system, out=tmp_path / name, progress=False)

    steady = [made(_Steady, f"steady{i}") for i in range(3)]
    bad = made(_Regressed, "regressed")
    assert row(op.gate(bad))["verdict"] != "PASS" and stats.binomtest(30, 40).proportion_ci().high > 0.80
    assert op.gate(op.load_runs([r.directory for r in steady])).verdict == "PASS"  # one system: pooled as before
    pooled = op.gate(op.load_runs([bad.directory, *(r.directory for r in steady)]))
    assert pooled.verdict == "BLOCK" and pooled.reason.startswith("mixed_systems: runs ")
    assert "system version '2' → '1'" in pooled.reason
    edited = op.gate(op.load_runs([steady[0].directory, made(_Edited, "edited").directory]))  # one version name
    assert edited.verdict == "BLOCK" and "the system's code differs" in edited.reason


class _Careful:
    """Answers 'yes' when careful, else 'no' on every fourth case (30 of 40 pass): one code, two settings."""

    version = "1"

    def __init__(self, careful: bool = True) -> None:
        self.careful = careful

    def run(self, input: dict) -> dict:
        sloppy = not self.careful and input["case"] % 4 == 0
        return {"steps": [], "answer": "no" if sloppy else "yes", "status": "completed"}


def test_a_pool_of_runs_of_one_system_built_with_other_settings_has_no_release_decision(tmp_path: Path) -> None:
    """The code fingerprint covers files, not the values a system is built with: a run of
    ``partial(Desk, careful=False)`` (30 of 40, no PASS alone) pooled with three of ``careful=True`` was one system
    to the gate, 150 of 160, PASS. The manifest records the settings' fingerprint; the pool is mixed_systems. Runs
    of one setting still pool."""
    import functools

    folder = make_suite(tmp_path / "s", [True] * 40, release={"allow_approximate_methods": True,
                                                               "criteria": {"answer_matches": 0.80}})
    suite = op.load_suite(folder)

    def made(careful: bool, name: str) -> op.Run:
        return op.run(suite, system=functools.partial(_Careful, careful=careful), out=tmp_path / name, progress=False)

    careful = [made(True, f"careful{i}") for i in range(3)]
    sloppy = made(False, "sloppy")
    assert row(op.gate(sloppy))["passed"] == 30 and row(op.gate(sloppy))["verdict"] != "PASS"
    prints = {r.manifest.settings_fingerprint for r in careful}
    assert len(prints) == 1 and None not in prints and sloppy.manifest.settings_fingerprint not in prints
    assert {r.manifest.code_fingerprint for r in [*careful, sloppy]} == {sloppy.manifest.code_fingerprint}
    assert op.gate(op.load_runs([r.directory for r in careful])).verdict == "PASS"  # one setting: pooled as before
    pooled = op.gate(op.load_runs([*(r.directory for r in careful), sloppy.directory]))
    assert pooled.verdict == "BLOCK" and pooled.reason.startswith("mixed_systems: runs ")
    assert "built with other settings" in pooled.reason


def test_a_pool_with_a_run_that_records_no_settings_fingerprint_says_so(tmp_path: Path) -> None:
    """A run made before manifests recorded ``settings_fingerprint`` pooled with a run of the same
    system built the same way was 'made by different systems (the system was built with other settings …)'. Nothing
    tells its settings, so the pool still has no release decision, and the reason says why instead."""
    import functools
    import json

    folder = make_suite(tmp_path / "s", [True] * 8, release={"criteria": {"answer_matches": 0.5}})
    suite = op.load_suite(folder)
    runs = [op.run(suite, system=functools.partial(_Careful, careful=True), out=tmp_path / f"r{i}", progress=False)
            for i in range(2)]
    path = runs[0].directory / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    del manifest["settings_fingerprint"]  # as a run made before the field
    path.write_text(json.dumps(manifest), encoding="utf-8")
    pooled = op.gate(op.load_runs([r.directory for r in runs]))
    assert pooled.verdict == "BLOCK" and pooled.reason.startswith("mixed_systems: ")
    assert "records no settings fingerprint" in pooled.reason and "other settings" not in pooled.reason


def test_a_pool_whose_code_changed_says_the_code_though_the_settings_digest_changed_with_it(tmp_path: Path) -> None:
    """The settings fingerprint digests the code with the settings, so an edit of a class built
    with settings changes both; the pool's reason names the code (the settings may be the same), not the settings.
    The second run's manifest is given another code and settings fingerprint, as an edit of the file would."""
    import functools

    folder = make_suite(tmp_path / "s", [True] * 4)
    suite = op.load_suite(folder)
    runs = [op.run(suite, system=functools.partial(_Careful, careful=True), out=tmp_path / f"r{i}", progress=False)
            for i in range(2)]
    path = runs[1].directory / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    assert manifest["settings_fingerprint"] not in (None, manifest["code_fingerprint"])
    manifest.update(code_fingerprint="0" * 64, settings_fingerprint="1" * 64)
    path.write_text(json.dumps(manifest), encoding="utf-8")
    pooled = op.gate(op.load_runs([r.directory for r in runs]))
    assert pooled.verdict == "BLOCK" and "the system's code differs" in pooled.reason
    assert "built with other settings" not in pooled.reason


def test_a_pool_whose_other_system_comes_after_runs_of_the_first_has_no_release_decision(tmp_path: Path) -> None:
    """Each run of a pool is held against the first, not only the second: two runs of version 1
    then the regressed version 2 (150 of 160 rows, PASS at 0.8 by the rows alone) is mixed_systems, naming the
    first run and the third."""
    folder = make_suite(tmp_path / "s", [True] * 40, release={"allow_approximate_methods": True,
                                                               "criteria": {"answer_matches": 0.80}})
    suite = op.load_suite(folder)
    runs = [op.run(suite, system=system, out=tmp_path / name, progress=False)
            for system, name in ((_Steady, "a"), (_Steady, "b"), (_Regressed, "c"))]
    pooled = op.gate(op.load_runs([r.directory for r in runs]))
    assert (int(row(pooled)["passed"]), int(row(pooled)["n"])) == (40 + 40 + 30, 120)  # by hand: 10 of c fail
    assert pooled.verdict == "BLOCK"
    assert pooled.reason.startswith(f"mixed_systems: runs {runs[0].run_id} and {runs[2].run_id} were made by "
                                    "different systems (system version '1' → '2')"), pooled.reason


def test_a_pool_of_runs_of_other_cases_has_no_release_decision(tmp_path: Path) -> None:
    """Three runs of a 40-case file pooled with one run of the file with 15 failing cases added (the same system):
    a case counts once per run that holds it, so the new cases weighed a quarter of the others, and the system
    that FAILs the new file alone (40 of 55) passed the pool, 160 of 175 at 0.85 (now the
    row is INSUFFICIENT_EVIDENCE, and the pool is refused still). A pool of runs of
    one case file, here the three, gates as before."""
    release = {"allow_approximate_methods": True, "criteria": {"answer_matches": 0.85}}
    folder = make_suite(tmp_path / "s", [True] * 40, release=release)
    old = [op.run(op.load_suite(folder), out=tmp_path / f"old{i}", progress=False) for i in range(3)]
    make_suite(tmp_path / "s", [True] * 40 + [False] * 15, release=release)  # 15 cases added, the system the same
    new = op.run(op.load_suite(folder), out=tmp_path / "new", progress=False)
    assert new.manifest.code_fingerprint == old[0].manifest.code_fingerprint
    assert row(op.gate(new))["verdict"] == "FAIL" and stats.binomtest(40, 55).proportion_ci().high < 0.85
    pooled = op.gate(op.load_runs([*(r.directory for r in old), new.directory]))
    assert (int(row(pooled)["passed"]), int(row(pooled)["n"])) == (160, 175)
    # its row no longer PASSes either: 40 clusters of 4 rows that pass every row and 15 of one that
    # pass none vouch for no more than 1 − the Clopper–Pearson upper bound of the 15 rows' share in n_min =
    # 175²/(40·4² + 15) = 46.76 effective clusters (n_min·15/175 successes), times the others' rate 160/160:
    # 0.795 < 0.85, by hand (0.845 before the cap counted the clusters that pass nothing)
    n_min = 175**2 / (40 * 4**2 + 15)
    assert row(pooled)["ci_low"] == pytest.approx(1 - stats.beta.ppf(0.975, n_min * 15 / 175 + 1,
                                                                      n_min - n_min * 15 / 175), abs=1e-12)
    assert row(pooled)["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert pooled.verdict == "BLOCK" and pooled.reason.startswith(
        f"mixed_cases: runs {old[0].run_id} and {new.run_id} ran other cases (15 case(s) added, removed or edited "
        "between them, first 'c040')")
    same = op.gate(op.load_runs([r.directory for r in old]))
    assert same.verdict == "PASS" and same.reason == ""
    # two runs, the later one holding fewer cases (15 removed, not added): the pool is of no one case file either
    two = op.gate(op.load_runs([new.directory, old[0].directory]))
    assert two.verdict == "BLOCK" and two.reason.startswith(
        f"mixed_cases: runs {new.run_id} and {old[0].run_id} ran other cases (15 case(s) added, removed or edited "
        "between them, first 'c040')"), two.reason
    # the same ids, one case edited (c000 now says no): its digest tells the runs apart
    make_suite(tmp_path / "s", [False] + [True] * 39, release=release)
    edited = op.run(op.load_suite(folder), out=tmp_path / "edited", progress=False)
    assert set(edited.cases["case_id"]) == set(old[0].cases["case_id"])
    one = op.gate(op.load_runs([old[0].directory, edited.directory]))
    assert one.verdict == "BLOCK" and one.reason.startswith(
        f"mixed_cases: runs {old[0].run_id} and {edited.run_id} ran other cases (1 case(s) added, removed or edited "
        "between them, first 'c000')"), one.reason


def _cell_class(source: str) -> type:
    """A class as a notebook cell defines it: its module has no file, so no code fingerprint."""
    namespace: dict[str, Any] = {"__name__": "g11_notebook_cell"}
    exec(compile(source, "<ipython-input-7-g11>", "exec"), namespace)  # noqa: S102 - a cell's class
    return namespace["Agent"]


_CELL_STEADY = "class Agent:\n    def run(self, input):\n        return {'steps': [], 'answer': 'yes'}\n"
#: The cell edited: 'no' on every fourth case (30 of 40), the same (absent) version.
_CELL_EDITED = ("class Agent:\n    def run(self, input):\n"
                "        return {'steps': [], 'answer': 'no' if input['case'] % 4 == 0 else 'yes'}\n")


def test_a_pool_of_runs_whose_system_no_file_defines_has_no_release_decision(tmp_path: Path) -> None:
    """A class typed into a notebook cell records no code fingerprint, and an edit of the cell keeps its version
    (here none): the regressed run pooled with three runs of the cell before it read as one system's, 150 of 160,
    and passed. Nothing tells the runs apart, so the pool has no release decision; a fingerprint()
    that names the code tells them apart, and one system's runs pool as before."""
    folder = make_suite(tmp_path / "s", [True] * 40, release={"allow_approximate_methods": True,
                                                               "criteria": {"answer_matches": 0.80}})
    suite = op.load_suite(folder)

    def made(system: type, name: str) -> op.Run:
        return op.run(suite, system=system, out=tmp_path / name, progress=False)

    steady, edited = _cell_class(_CELL_STEADY), _cell_class(_CELL_EDITED)
    runs = [made(steady, f"steady{i}") for i in range(3)] + [made(edited, "edited")]
    assert {r.manifest.code_fingerprint for r in runs} == {None} and {r.system_version for r in runs} == {None}
    assert row(op.gate(runs[3]))["passed"] == 30 and stats.binomtest(30, 40).proportion_ci().high > 0.80
    pooled = op.gate(op.load_runs([r.directory for r in runs]))
    assert int(row(pooled)["passed"]) == 150 and row(pooled)["verdict"] == "PASS"  # the rows alone say PASS
    assert pooled.verdict == "BLOCK" and pooled.reason.startswith("mixed_systems: runs ")
    assert "record no code fingerprint" in pooled.reason and "fingerprint()" in pooled.reason
    pinned = _cell_class(_CELL_STEADY + "    def fingerprint(self):\n        return 'agent@1'\n")
    named = [made(pinned, f"pinned{i}") for i in range(2)]
    assert op.gate(op.load_runs([r.directory for r in named])).verdict == "PASS"
    # a cell's run pooled with a run of a class in a file, of the same version name: the first records no code
    # fingerprint, the second one, so they differ (read as one system when the first had none)
    versioned = _cell_class(_CELL_EDITED.replace("class Agent:\n", "class Agent:\n    version = '1'\n"))
    mixed = op.gate(op.load_runs([made(versioned, "cell_v1").directory, made(_Steady, "file_v1").directory]))
    assert mixed.verdict == "BLOCK" and mixed.reason.startswith("mixed_systems: ") and \
        "(the system's code differs: another code fingerprint)" in mixed.reason, mixed.reason


def test_an_unfinished_run_names_no_case_it_has_not_reached_as_added(tmp_path: Path) -> None:
    """A run stopped after 6 of its 10 cases, whose case file then gained a blank line (other bytes,
    the same cases), was said to differ by "4 case(s) added": the cases it had not reached yet. An edit to a
    case it recorded is still named."""
    import warnings

    folder = make_suite(tmp_path / "s", [True] * 10)
    run = run_suite(folder)
    journal = run.directory / "cases.jsonl"
    journal.write_text("".join(journal.read_text().splitlines(keepends=True)[:6]))
    manifest = json.loads((run.directory / "manifest.json").read_text())
    del manifest["finished_at"]
    (run.directory / "manifest.json").write_text(json.dumps(manifest))
    cases = _cases(folder)
    _write_cases(folder, cases, end="\n\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stopped = op.gate(op.load_run(run.directory))
    assert stopped.verdict == "BLOCK" and stopped.reason.startswith("unfinished")
    cases[2]["expected"]["answer"] = "no"
    _write_cases(folder, cases)
    with pytest.warns(UserWarning, match=r"differs from the one run .* was made with \(1 case\(s\) edited "
                                         r"\(first 'c002'\)\)"):
        op.gate(op.load_run(run.directory))


def test_a_pool_holding_an_unfinished_or_incomplete_run_names_that_run(tmp_path: Path) -> None:
    """A finished run pooled with one stopped after 6 of its 10 cases said "unfinished: the run did not
    finish (16 of 20 cases recorded)", naming none of the two runs, in either order; it now names the one to finish
    (by hand: 10 + 6 of 10 + 10 cases recorded). Pooled with a finished run that lost 3 of its 10 records, it said
    "the run finished with 20 case runs, but its cases.jsonl holds 17", a file no run has; it now names that run
    and its own counts. A run of its own keeps its words."""
    folder = make_suite(tmp_path / "s", [True] * 10)
    done = op.run(op.load_suite(folder), out=folder / "runs" / "done")
    stopped = op.run(op.load_suite(folder), out=folder / "runs" / "stopped")
    journal = stopped.directory / "cases.jsonl"
    journal.write_text("".join(journal.read_text().splitlines(keepends=True)[:6]))
    manifest = json.loads((stopped.directory / "manifest.json").read_text())
    del manifest["finished_at"]
    (stopped.directory / "manifest.json").write_text(json.dumps(manifest))
    for order in ([done, stopped], [stopped, done]):
        g = op.gate(op.load_runs([r.directory for r in order]))
        assert g.verdict == "BLOCK" and g.reason == (
            f"unfinished: run {stopped.run_id} of the 2 pooled did not finish (16 of 20 cases recorded in all), so it "
            "has no release decision")
    assert op.gate(op.load_run(stopped.directory)).reason == (
        "unfinished: the run did not finish (6 of 10 cases recorded), so it has no release decision")
    lost = op.run(op.load_suite(folder), out=folder / "runs" / "lost")
    journal = lost.directory / "cases.jsonl"
    journal.write_text("".join(journal.read_text().splitlines(keepends=True)[:7]))
    assert op.gate(op.load_runs([done.directory, lost.directory])).reason == (
        f"incomplete: run {lost.run_id} of the 2 pooled finished with 10 case runs, but its cases.jsonl holds 7: "
        "records are missing (a truncated or edited copy of the folder?), so it has no release decision")



def _cut_journal(run: op.Run, keep: int, *, unfinished: bool) -> None:
    """Keep the first ``keep`` records of ``run``'s cases.jsonl; ``unfinished``: as a run stopped there."""
    journal = run.directory / "cases.jsonl"
    journal.write_text("".join(journal.read_text().splitlines(keepends=True)[:keep]))
    if unfinished:
        manifest = json.loads((run.directory / "manifest.json").read_text())
        del manifest["finished_at"]
        (run.directory / "manifest.json").write_text(json.dumps(manifest))


def test_a_pool_with_two_unfinished_or_incomplete_runs_names_the_first_and_counts_the_rest(tmp_path: Path) -> None:
    """Of a pool of three runs, two stopped (after 6 and 4 of their 10 cases), the reason names
    the first of them and how many more did not finish (by hand: 10 + 6 + 4 = 20 of 30 recorded; "(and 1 more)",
    never "(and 2 more)" or nothing); of two finished runs that lost records (7 and 8 of 10 kept), the first is
    named with its own counts, not the last."""
    folder = make_suite(tmp_path / "s", [True] * 10)
    done, first, second = (op.run(op.load_suite(folder), out=folder / "runs" / name)
                           for name in ("done", "first", "second"))
    _cut_journal(first, 6, unfinished=True)
    _cut_journal(second, 4, unfinished=True)
    g = op.gate(op.load_runs([done.directory, first.directory, second.directory]))
    assert g.verdict == "BLOCK" and g.reason == (
        f"unfinished: run {first.run_id} of the 3 pooled (and 1 more) did not finish (20 of 30 cases recorded in "
        "all), so it has no release decision")
    assert op.gate(op.load_runs([done.directory, first.directory])).reason == (  # one open run: no "(and 0 more)"
        f"unfinished: run {first.run_id} of the 2 pooled did not finish (16 of 20 cases recorded in all), so it has "
        "no release decision")
    lost_a, lost_b = (op.run(op.load_suite(folder), out=folder / "runs" / name) for name in ("lost_a", "lost_b"))
    _cut_journal(lost_a, 7, unfinished=False)
    _cut_journal(lost_b, 8, unfinished=False)
    assert op.gate(op.load_runs([done.directory, lost_a.directory, lost_b.directory])).reason == (
        f"incomplete: run {lost_a.run_id} of the 3 pooled finished with 10 case runs, but its cases.jsonl holds 7: "
        "records are missing (a truncated or edited copy of the folder?), so it has no release decision")


def test_a_pool_holding_a_run_with_an_extra_record_names_that_run(tmp_path: Path) -> None:
    """The pooled run named in ``incomplete`` is the one whose count is off either way; a run whose
    cases.jsonl holds a record more than its manifest says (by hand: 10 + 1 of a case the suite lacks) is named,
    not said of "the run" with the pool's 20 of 21."""
    folder = make_suite(tmp_path / "s", [True] * 10)
    done = op.run(op.load_suite(folder), out=folder / "runs" / "done")
    more = op.run(op.load_suite(folder), out=folder / "runs" / "more")
    journal = more.directory / "cases.jsonl"
    lines = journal.read_text().splitlines(keepends=True)
    extra = json.loads(lines[0])
    extra["index"], extra["case"]["id"] = 10, "extra"
    journal.write_text("".join(lines) + json.dumps(extra) + "\n")
    assert op.gate(op.load_runs([done.directory, more.directory])).reason == (
        f"incomplete: run {more.run_id} of the 2 pooled finished with 10 case runs, but its cases.jsonl holds 11: "
        "it holds more records than the manifest says (a truncated or edited copy of the folder?), so it has no "
        "release decision")
    assert op.gate(op.load_run(more.directory)).reason == (  # a run of its own keeps its words
        "incomplete: the run finished with 10 case runs, but its cases.jsonl holds 11: it holds more records than "
        "the manifest says (a truncated or edited copy of the folder?), so it has no release decision")

def test_a_release_yaml_that_is_a_dangling_link_or_fails_to_read_is_named(tmp_path: Path) -> None:
    """The suite's release.yaml a link to a file since moved (a shared settings file): it is there and cannot be
    read, as a folder in its place cannot; named, the run's settings decide (looked for as a
    file that exists, the link to nothing was no file at all, and the gate said nothing). An I/O error reading it is
    named too (its branch returned nothing, and no test reached it)."""
    import errno

    folder = make_suite(tmp_path / "s", [True] * 10, release={"criteria": {"answer_matches": 0.6}})
    run = run_suite(folder)
    (folder / "release.yaml").unlink()
    (folder / "release.yaml").symlink_to(tmp_path / "moved.yaml")
    with pytest.warns(UserWarning, match=r"release\.yaml.*\(the suite folder's release\.yaml, which cannot be read "
                                         r"now\); this gate uses the release settings run .* was made with") as caught:
        assert op.gate(run).verdict == "PASS"
    assert str(folder / "release.yaml") in str(caught[0].message)

    def fails(path: Path) -> None:
        raise OSError(errno.EIO, "Input/output error")

    (folder / "release.yaml").unlink()
    (folder / "release.yaml").write_text("criteria: {answer_matches: 0.6}\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gate_drift, "load_release", fails)
        assert gate_drift.release_unreadable(run) == f"{folder / 'release.yaml'}: Input/output error"


_TEXT_IDS = [["a", "b", "c"], ["a", "b", "a"], [], ["x"], ["a", "b"] * 3]


@pytest.mark.parametrize(("ids", "dtype"), [(ids, dtype) for ids in _TEXT_IDS for dtype in ("str", "string", "object")]
                         + [(["1", 1, "b"], "object"), ([1, 1.0, 2], "object")])  # a text column holds text alone
def test_run_cluster_ids_are_counted_in_c_as_is_clustered_counts_them(ids: list[Any], dtype: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate's test of a run's cluster column: is_clustered made a Python string of each of the
    run's ids and counted them in a Counter (0.06 s of CPU at 250,000 case runs); ``_ids_repeat`` counts the
    codes of ``pd.factorize``. Same answer, and is_clustered is not reached for a column of ids."""
    column = pd.Series(ids, dtype=dtype)
    expected = len(set(ids)) < len(ids)  # by hand: an id seen twice (1 and 1.0 are one key, as in a dict)

    def not_reached(clusters: Any) -> bool:
        raise AssertionError("is_clustered was called for a column of ids without a missing one")

    monkeypatch.setattr(gate_module, "is_clustered", not_reached)
    assert gate_module._ids_repeat(column) is expected
    assert gate_module.run_is_clustered(SimpleNamespace(cases=pd.DataFrame({"cluster": column}))) is expected  # type: ignore[arg-type]


@pytest.mark.parametrize("column", [pd.Series(["a", None, "b"], dtype="str"), pd.Series(["a", pd.NA], dtype="string"),
                                    pd.Series(["a", None], dtype=object), pd.Series([["a"], ["a"]], dtype=object)])
def test_run_cluster_ids_missing_or_unhashable_go_to_is_clustered(column: pd.Series) -> None:
    """A missing id is refused with is_clustered's message; unhashable ids are counted by is_clustered's codes."""
    if column.hasnans:
        with pytest.raises(ValueError, match="every row needs a cluster id"):
            gate_module._ids_repeat(column)
    else:
        assert gate_module._ids_repeat(column) is True


def test_the_gate_works_out_the_stored_pair_labels_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The majorities of the labels a run stored (``pair_labels``) were worked out four times a gate
    (``op.validity``, the copies the verdicts leave out, twice, and the label-drift check), each a pass over 50,000
    judgements at 100,000 cases. Counted, not timed: once for the stored labels of each transform, once for the
    label file as it is now (the drift check), with the gate's verdicts and its drift line unchanged."""
    import sys

    from _metamorphic_systems import relabel

    import oloproof_nb._core.labels as core_labels

    root = _labeled_run(tmp_path / "s")
    relabel(root / "labels" / "t.jsonl", {"c1~t": True})  # the drift check reads the file and compares
    run = op.load_run(root / "runs" / "r")
    stored = run.labels["t"]
    counted = core_labels.pair_labels
    seen: list[bool] = []

    def counting(judgements: Any) -> Any:
        judgements = list(judgements)
        seen.append(judgements == stored)  # the stored labels, or the file's as it is now
        return counted(judgements)

    for module in list(sys.modules.values()):
        ours = getattr(module, "__name__", "").startswith("oloproof_nb")
        if ours and getattr(module, "pair_labels", None) is counted:
            monkeypatch.setattr(module, "pair_labels", counting)
    with pytest.warns(UserWarning, match=r"\(transform t: c1~t is labeled otherwise\)"):
        g = op.gate(run)
    assert sorted(seen) == [False, True]  # once each: the stored labels, the file now
    assert run.unscored_ids == {"c1~t"} and g.unscored == ("c1~t",)
    assert list(op.validity(run)[["labeled", "valid", "checked"]].iloc[0]) == [5, 4, True]
    assert sorted(seen) == [False, True]  # op.validity and the copies left out: the Run's, not worked out again
