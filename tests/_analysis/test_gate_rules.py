"""The gate's boundaries and the routes to a false PASS closed by issue 13 §2–3 (through op.gate)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import oloproof_nb as op
from oloproof_nb.cli import main

SYSTEM = '''
class Desk:
    """Answers what the input says and leaves the state the input names (a test decides each verdict)."""
    def __init__(self):
        self.state = {}
    def reset(self, state):
        self.state = dict(state)
    def snapshot(self):
        return dict(self.state)
    def run(self, input):
        self.state.update(input.get("set", {}))
        return {"steps": [], "answer": input["say"], "status": "completed"}
'''


def write_suite(tmp: Path, cases: list[dict], evaluators: list[dict], release: dict | None) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "desk.py").write_text(SYSTEM)
    (tmp / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp / "oloproof.yaml").write_text(yaml.safe_dump({"name": "rules", "system": "desk:Desk",
                                                       "evaluators": evaluators}))
    if release is not None:
        (tmp / "release.yaml").write_text(yaml.safe_dump(release))
    return tmp


def answer_cases(outcomes: list[bool], clusters: list[str]) -> list[dict]:
    return [{"id": f"c{i:03d}", "cluster": cl, "input": {"say": "yes" if ok else "no", "case": i},  # distinct cases
             "expected": {"answer": "yes"}, "initial_state": {"orders": {"ord-999": {"status": "open"}}}}
            for i, (ok, cl) in enumerate(zip(outcomes, clusters, strict=True))]


def run_of(tmp: Path, cases: list[dict], evaluators: list[dict] | None = None, release: dict | None = None,
           **run_options: object) -> op.Run:
    folder = write_suite(tmp, cases, evaluators or [{"type": "answer_matches"}], release)
    return op.run(op.load_suite(folder), out=folder / "runs" / "r", progress=False, **run_options)


def layout(g: int, sizes: int = 2, fail_every: int = 5) -> tuple[list[bool], list[str]]:
    outcomes, clusters = [], []
    for c in range(g):
        for j in range(sizes):
            outcomes.append((c * sizes + j) % fail_every != 0)
            clusters.append(f"k{c:03d}")
    return outcomes, clusters


CLUSTERED = {"allow_approximate_methods": True, "min_clusters": 20}


def gate_row(g: op.Gate, criterion: str = "answer_matches"):
    return g.table.set_index("criterion").loc[criterion]


# ---------------------------------------------------------------- boundaries


def test_threshold_equal_to_ci_low_passes_and_equal_to_ci_high_is_insufficient(tmp_path: Path) -> None:
    run = run_of(tmp_path, answer_cases(*layout(24)), release={**CLUSTERED, "criteria": {"answer_matches": 0.5}})
    r = gate_row(op.gate(run))
    low, high = float(r["ci_low"]), float(r["ci_high"])
    at_low = op.gate(run, release={**CLUSTERED, "criteria": {"answer_matches": low}})
    assert gate_row(at_low)["verdict"] == "PASS" and at_low.verdict == "PASS"
    above_low = op.gate(run, release={**CLUSTERED, "criteria": {"answer_matches": float(np.nextafter(low, 1))}})
    assert gate_row(above_low)["verdict"] == "INSUFFICIENT_EVIDENCE"
    at_high = gate_row(op.gate(run, release={**CLUSTERED, "criteria": {"answer_matches": high}}))
    assert at_high["verdict"] == "INSUFFICIENT_EVIDENCE" and at_high["reason"].startswith("interval_includes")
    above = float(np.nextafter(high, 2))
    above_high = gate_row(op.gate(run, release={**CLUSTERED, "criteria": {"answer_matches": above}}))
    assert above_high["verdict"] == "FAIL"


def test_min_clusters_is_checked_per_criterion_at_equality(tmp_path: Path) -> None:
    outcomes, clusters = layout(24)
    cases = answer_cases(outcomes, clusters)
    for case in cases[:12]:  # state_matches applies to the cases with an expected state: 6 clusters of 2
        case["expected"]["state"] = {"orders": {"ord-999": {"status": "open"}}}
    evaluators = [{"type": "answer_matches"}, {"type": "state_matches"}]
    crit = {"answer_matches": 0.1, "state_matches": 0.1}
    run = run_of(tmp_path, cases, evaluators, {**CLUSTERED, "criteria": crit})
    g = op.gate(run)
    assert gate_row(g, "state_matches")["n_clusters"] == 6
    assert gate_row(g, "state_matches")["reason"].startswith("too_few_clusters")  # the run has 24 clusters
    exactly = op.gate(run, release={**CLUSTERED, "min_clusters": 6, "criteria": crit})
    assert gate_row(exactly, "state_matches")["verdict"] == "PASS"  # 12/12 pass, judged at exactly 6 clusters
    one_more = op.gate(run, release={**CLUSTERED, "min_clusters": 7, "criteria": crit})
    assert gate_row(one_more, "state_matches")["reason"].startswith("too_few_clusters")
    assert gate_row(one_more, "answer_matches")["verdict"] == "PASS"  # 24 clusters ≥ 7


def test_slice_bin_exactly_at_min_clusters(tmp_path: Path) -> None:
    run = run_of(tmp_path, answer_cases(*layout(24)), release={**CLUSTERED, "min_clusters": 24})
    t = op.slice_table(run, "tool_calls:1")  # every case makes 0 calls: one bin holds all 24 clusters
    full = t[(t["criterion"] == "answer_matches") & (t["support"] > 0)].iloc[0]
    assert full["clusters"] == 24 and not full["few_clusters"]
    t25 = op.slice_table(run, "tool_calls:1", release={**CLUSTERED, "min_clusters": 25})
    assert t25[(t25["criterion"] == "answer_matches") & (t25["support"] > 0)].iloc[0]["few_clusters"]


def test_failing_clusters_counts_clusters_with_a_non_pass(tmp_path: Path) -> None:
    outcomes, clusters = layout(24, sizes=3, fail_every=7)
    run = run_of(tmp_path, answer_cases(outcomes, clusters), release={**CLUSTERED, "criteria": {"answer_matches": 0.5}})
    expected = len({c for c, ok in zip(clusters, outcomes, strict=True) if not ok})
    assert gate_row(op.gate(run))["failing_clusters"] == expected


# ---------------------------------------------------------------- monotone through the gate


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_turning_a_fail_into_a_pass_never_lowers_ci_low_through_the_gate(tmp_path_factory, data) -> None:
    g = data.draw(st.integers(3, 14), label="clusters")
    sizes = data.draw(st.lists(st.integers(1, 4), min_size=g, max_size=g), label="sizes")
    clusters = [f"k{c:02d}" for c, s in enumerate(sizes) for _ in range(s)]
    outcomes = data.draw(st.lists(st.booleans(), min_size=len(clusters), max_size=len(clusters)), label="rows")
    if all(outcomes):
        outcomes[0] = False
    flip = data.draw(st.sampled_from([i for i, ok in enumerate(outcomes) if not ok]), label="flip")
    release = {"allow_approximate_methods": True, "min_clusters": 2, "criteria": {"answer_matches": 0.5}}
    base = tmp_path_factory.mktemp("mono")
    before = gate_row(op.gate(run_of(base / "a", answer_cases(outcomes, clusters), release=release)))
    after_outcomes = list(outcomes)
    after_outcomes[flip] = True
    after = gate_row(op.gate(run_of(base / "b", answer_cases(after_outcomes, clusters), release=release)))
    assert after["ci_low"] >= before["ci_low"]
    m = np.bincount(np.unique(clusters, return_inverse=True)[1])
    assert before["ci_low"] <= 0.025 ** (1 / (m.sum() ** 2 / (m**2).sum())) + 1e-15


# ---------------------------------------------------------------- evidence that is not evidence


def test_monotone_holds_for_the_same_rows_and_a_case_added_can_raise_ci_low() -> None:
    """What README's "Monotone by construction" says it does not cover, with its figures: 21 clusters (sizes
    1-4, 39 rows, 3 failures, one cluster failing both its rows) at threshold 0.65, then one more failing case in a
    cluster of its own. The second failing cluster gives the Bell-McCaffrey degrees of freedom more to go on, and
    the interval narrows more than the rate falls. Turning that added failure into a pass still never lowers
    ci_low. (The first example, 0.799 -> 0.805 at 0.80 with one failure, was a bound above the 0.780 its 21
    clusters can vouch for at p-hat 43/44; capped there, the added case lowers it.)"""
    k = [1, 1, 3, 2, 1, 3, 1, 2, 1, 2, 0, 1, 3, 2, 3, 1, 1, 4, 1, 1, 1]
    m = [1, 1, 3, 2, 1, 3, 1, 2, 1, 2, 2, 1, 3, 2, 3, 1, 1, 4, 1, 1, 1]
    before = op.rate_interval_from_sums(k, m, method="cluster_t")
    added = op.rate_interval_from_sums([*k, 0], [*m, 1], method="cluster_t")
    assert (round(before.low, 3), round(added.low, 3)) == (0.647, 0.656)
    assert before.low < 0.65 <= added.low and added.estimate < before.estimate
    assert op.rate_interval_from_sums([*k, 1], [*m, 1], method="cluster_t").low >= added.low


def test_a_pass_needs_no_more_than_the_clusters_can_vouch_for(tmp_path: Path) -> None:
    """20 cases of 10 rows each (a run's epochs), drawn from a population where one case in ten never
    passes and the others pass 9 tries in 10 (rate 0.81), in a sample that drew no such case: 185 of 200, every
    case passing 7 to 10. The CR2 spread saw only the tries and gave [0.831, 0.962], ``gate: PASS`` at 0.82.
    A sample of 20 clusters cannot rule out a share 1 − (α/2)^(1/20) of cases it never drew that pass nothing,
    so ci_low is at most (α/2)^(1/20)·185/200 = 0.769 (by hand): INSUFFICIENT_EVIDENCE; at 0.76 it PASSes."""
    passes = [10, 9, 10, 10, 9, 9, 10, 7, 10, 9, 10, 10, 8, 8, 9, 10, 9, 10, 9, 9]
    outcomes = [j < k for k in passes for j in range(10)]
    clusters = [f"k{c:02d}" for c in range(20) for _ in range(10)]
    run = run_of(tmp_path / "a", answer_cases(outcomes, clusters),
                 release={**CLUSTERED, "criteria": {"answer_matches": 0.82}})
    r = gate_row(op.gate(run))
    assert (r["n"], r["passed"], r["n_clusters"], r["method"]) == (200, 185, 20, "cluster_t")
    assert r["ci_low"] == pytest.approx(0.025 ** (1 / 20) * 185 / 200, abs=1e-12)
    assert r["ci_low"] < 0.81 and r["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert op.gate(run, criteria={"answer_matches": 0.76}).verdict == "PASS"


def test_a_criterion_of_one_row_gets_its_interval(tmp_path: Path) -> None:
    """One case, passing: Clopper–Pearson of 1 in 1 is [(α/2)^(1/1), 1] = [0.025, 1] by hand, a PASS at 0.02 and a
    FAIL nowhere; a criterion with a single row is evidence, not ``no_evidence``."""
    run = run_of(tmp_path, answer_cases([True], ["k0"]), release={"criteria": {"answer_matches": 0.02}})
    r = gate_row(op.gate(run))
    assert (r["n"], r["passed"], r["method"], r["verdict"]) == (1, 1, "clopper_pearson", "PASS")
    assert (r["ci_low"], r["ci_high"]) == (pytest.approx(0.025, abs=1e-15), 1.0)


def test_a_clustered_interval_is_at_the_release_confidence(tmp_path: Path) -> None:
    """24 clusters of 2 rows, every row passing: the clustered interval falls back to Clopper–Pearson on
    n_min = 48²/(24·2²) = 24, whose lower end is (α/2)^(1/24) by hand: 0.05^(1/24) at confidence 0.9, not the
    0.025^(1/24) of the default 0.95."""
    run = run_of(tmp_path, answer_cases([True] * 48, [f"k{i // 2:02d}" for i in range(48)]),
                 release={**CLUSTERED, "confidence": 0.9, "criteria": {"answer_matches": 0.5}})
    r = gate_row(op.gate(run))
    assert (r["n"], r["n_clusters"], r["method"]) == (48, 24, "clopper_pearson")
    assert "degenerate: all 48 rows pass" in r["reason"] and r["ci_low"] == pytest.approx(0.05 ** (1 / 24), abs=1e-15)


def test_a_reduced_criterion_without_rows_follows_the_run_s_clustering(tmp_path: Path) -> None:
    """No case reduced: the row is clustered when the run is, as a mean criterion without rows (the docstring of
    _reduced_row). A run of 2 epochs is clustered, so without allow_approximate_methods both are held back by
    rule 1, before no_evidence."""
    folder = write_suite(tmp_path, answer_cases(*layout(4, sizes=1)), [{"type": "answer_matches"},
                                                                      {"type": "state_matches"}], None)
    run = op.run(op.load_suite(folder), out=folder / "runs" / "r", epochs=2, progress=False)
    assert not (run.verdicts["criterion"] == "state_matches").any()  # no case expects a state
    for reduce in ("mean", "pass^2"):
        r = gate_row(op.gate(run, release={"criteria": {"state_matches": {"threshold": 0.5, "reduce": reduce}}}),
                     "state_matches")
        assert (r["n"], r["verdict"]) == (0, "INSUFFICIENT_EVIDENCE")
        assert r["reason"].startswith("approximate_methods_not_allowed: ")
    allowed = {"allow_approximate_methods": True, "criteria": {"state_matches": {"threshold": 0.5, "reduce": "pass^2"}}}
    assert gate_row(op.gate(run, release=allowed), "state_matches")["reason"] == "no_evidence"


def test_a_method_given_where_no_criterion_has_an_interval_is_no_error(tmp_path: Path) -> None:
    """gate(method=) is refused when it names an interval no criterion gets while others get one; with no
    criterion judged at all there is nothing it would be ignored by, and the row says no_evidence."""
    folder = write_suite(tmp_path, answer_cases(*layout(3, sizes=1)), [{"type": "state_matches"}], None)
    run = op.run(op.load_suite(folder), out=folder / "runs" / "r", progress=False)
    for method in ("wilson", "cluster_t"):
        r = gate_row(op.gate(run, criteria={"state_matches": 0.5}, method=method), "state_matches")
        assert (r["n"], r["method"], r["reason"]) == (0, "", "no_evidence")


def test_a_reduced_criterion_is_marked_vacuous_as_a_mean_one_is(tmp_path: Path) -> None:
    """A pass^k row carries the vacuous marks a mean row does: the check load_suite found vacuous (kept in the
    manifest) and the threshold of 0 the gate finds."""
    typo = {"type": "state_unchanged", "criterion": "untouched", "paths": ["orders.ord-99"]}  # ord-999 exists
    folder = write_suite(tmp_path, answer_cases(*layout(4, sizes=1)), [{"type": "answer_matches"}, typo], None)
    with pytest.warns(op.VacuousCheckWarning, match="orders.ord-99") as at_load:
        run = op.run(op.load_suite(folder), out=folder / "runs" / "r", epochs=2, progress=False)
    release = {"criteria": {"answer_matches": {"threshold": 0, "reduce": "pass^2"},
                            "untouched": {"threshold": 0.1, "reduce": "pass^2"}}}
    with pytest.warns(op.VacuousCheckWarning, match="threshold 0 passes whatever") as at_gate:
        g = op.gate(run, release=release)
    table = g.table.set_index("criterion")
    # the findings: each criterion's, in the run's order, the load's warning and the gate's
    assert g.findings == (str(at_gate[0].message), str(at_load[0].message))
    assert table.loc["answer_matches", "reduce"] == table.loc["untouched", "reduce"] == "pass^2"
    assert bool(table.loc["answer_matches", "vacuous"]) and bool(table.loc["untouched", "vacuous"])
    plain = op.gate(run, release={"criteria": {"answer_matches": {"threshold": 0.1, "reduce": "pass^2"}}}).table
    assert not bool(plain.set_index("criterion").loc["answer_matches", "vacuous"])


def test_all_missing_is_insufficient_with_its_reason(tmp_path: Path) -> None:
    cases = answer_cases(*layout(5, sizes=1))
    for case in cases:
        case["expected"]["state"] = {"orders": {"ord-999": {"status": "open"}}}
    folder = write_suite(tmp_path, cases, [{"type": "state_matches"}], {"criteria": {"state_matches": 0.1}})
    (folder / "desk.py").write_text(SYSTEM.replace("    def snapshot(self):\n        return dict(self.state)\n", ""))
    run = op.run(op.load_suite(folder), out=folder / "runs" / "r", progress=False)
    r = gate_row(op.gate(run), "state_matches")
    assert r["missing"] == r["n"] == 5
    assert r["verdict"] == "INSUFFICIENT_EVIDENCE" and r["reason"].startswith("all_missing")
    # and why, which says what would decide it (it said `all_missing` alone): each row's own reason
    assert set(run.verdicts["reason"]) == {"no_state_recorded"}
    assert r["reason"].startswith('all_missing; every row is missing: "no_state_recorded" (all 5 rows)')


def test_a_criterion_of_one_missing_row_is_all_missing_not_an_interval(tmp_path: Path) -> None:
    """One case, its row missing: ``all_missing`` (not the Clopper-Pearson interval of 0 passes in 1 row, which
    holds the threshold and said ``interval_includes_threshold``)."""
    cases = answer_cases(*layout(1, sizes=1))
    cases[0]["expected"]["state"] = {"orders": {"ord-999": {"status": "open"}}}
    folder = write_suite(tmp_path, cases, [{"type": "state_matches"}], {"criteria": {"state_matches": 0.1}})
    (folder / "desk.py").write_text(SYSTEM.replace("    def snapshot(self):\n        return dict(self.state)\n", ""))
    run = op.run(op.load_suite(folder), out=folder / "runs" / "r", progress=False)
    r = gate_row(op.gate(run), "state_matches")
    assert r["missing"] == r["n"] == 1
    assert r["verdict"] == "INSUFFICIENT_EVIDENCE" and r["reason"].startswith("all_missing")


def test_a_reduced_criterion_all_missing_is_insufficient_with_its_reason(tmp_path: Path) -> None:
    """pass^2 over 2 epochs of 5 cases whose every state row is missing (a system without snapshot()): 5 cases all
    missing by hand, so all_missing, as the mean row of the same rows says; not a FAIL of five values of 0."""
    cases = answer_cases(*layout(5, sizes=1))
    for case in cases:
        case["expected"]["state"] = {"orders": {"ord-999": {"status": "open"}}}
    folder = write_suite(tmp_path, cases, [{"type": "state_matches"}], None)
    (folder / "desk.py").write_text(SYSTEM.replace("    def snapshot(self):\n        return dict(self.state)\n", ""))
    run = op.run(op.load_suite(folder), out=folder / "runs" / "r", epochs=2, progress=False)
    assert set(run.verdicts["verdict"]) == {"missing"}
    r = gate_row(op.gate(run, release={"criteria": {"state_matches": {"threshold": 0.1, "reduce": "pass^2"}}}),
                 "state_matches")
    assert (r["reduce"], r["n"], r["missing"], r["passed"]) == ("pass^2", 5, 5, 0)
    assert r["verdict"] == "INSUFFICIENT_EVIDENCE" and r["reason"].startswith("all_missing;")
    assert r["reason"].startswith('all_missing; every row is missing: "no_state_recorded" (all 10 rows)')  # 5 × 2


def test_a_threshold_of_zero_is_a_vacuous_check(tmp_path: Path) -> None:
    """Every case fails, yet ci_low ≥ 0 always holds: the gate rule says PASS, and that criterion is marked
    vacuous, named in the findings and warned about (it was silent before). The smallest threshold above 0
    is judged as usual."""
    run = run_of(tmp_path, answer_cases([False] * 30, [f"k{i}" for i in range(30)]))
    with pytest.warns(op.VacuousCheckWarning, match="criterion answer_matches: threshold 0 passes whatever"):
        zero = op.gate(run, release={"criteria": {"answer_matches": 0.0}})
    r = gate_row(zero)
    assert (r["passed"], r["ci_low"], r["verdict"], bool(r["vacuous"])) == (0, 0.0, "PASS", True)
    assert zero.findings == (r["reason"].split("; ", 1)[1],) and "leave it out of release.yaml" in r["reason"]
    tiny = op.gate(run, release={"criteria": {"answer_matches": 1e-9}})
    r = gate_row(tiny)
    assert (r["verdict"], bool(r["vacuous"]), tiny.findings) == ("INSUFFICIENT_EVIDENCE", False, ())


def test_no_criteria_blocks_with_a_reason_shown_everywhere(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    run = run_of(tmp_path, answer_cases(*layout(5, sizes=1)), release={})
    g = op.gate(run)
    assert g.verdict == "BLOCK" and g.reason == "no_criteria: nothing was gated"
    assert "no_criteria" in repr(g) and "no_criteria" in g._repr_html_()
    assert "no_criteria" in op.plots.gate(g).get_title(loc="left")
    listed = op.gate(run, release={"criteria": {"answer_matches": 0.1}})
    assert listed.reason == ""


def test_bootstrap_tie_with_threshold_is_not_a_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import oloproof_nb._analysis.gate as gate_module

    monkeypatch.setattr(gate_module, "BOOTSTRAP_MIN_CLUSTERS", 2)
    release = {**CLUSTERED, "method": "cluster_bootstrap", "bootstrap": {"resamples": 1000, "seed": 1},
               "criteria": {"answer_matches": 0.5}}
    run = run_of(tmp_path, answer_cases(*layout(24)), release=release)
    r = gate_row(op.gate(run))
    assert r["method"] == "cluster_bootstrap"
    tie = gate_row(op.gate(run, release={**release, "criteria": {"answer_matches": float(r["ci_low"])}}))
    assert tie["verdict"] == "INSUFFICIENT_EVIDENCE"
    monkeypatch.setattr(gate_module, "BOOTSTRAP_MIN_CLUSTERS", 100)
    below = gate_row(op.gate(run))
    assert below["method"] == "cluster_t" and "cluster_t instead of cluster_bootstrap" in below["reason"]
    monkeypatch.undo()  # as shipped: the bootstrap is validated at no number of clusters, so 24 do not let it decide
    assert gate_row(op.gate(run))["method"] == "cluster_t"


def test_a_pass_names_the_rule_it_met(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reason of a PASS is the rule met, as the gate docstring words it: ci_low ≥ threshold for cluster_t
    (a tie passes, so ``at_or_above``), ci_low > threshold for a bootstrap bound (a tie is no PASS, so
    ``above``); the two were interchangeable in every test."""
    import oloproof_nb._analysis.gate as gate_module

    run = run_of(tmp_path, answer_cases(*layout(24)), release={**CLUSTERED, "criteria": {"answer_matches": 0.5}})
    low = float(gate_row(op.gate(run))["ci_low"])
    tie = gate_row(op.gate(run, release={**CLUSTERED, "criteria": {"answer_matches": low}}))
    assert (tie["method"], tie["verdict"], tie["reason"]) == ("cluster_t", "PASS", "ci_low_at_or_above_threshold")
    monkeypatch.setattr(gate_module, "BOOTSTRAP_MIN_CLUSTERS", 2)
    boot = {**CLUSTERED, "method": "cluster_bootstrap", "bootstrap": {"resamples": 1000, "seed": 1}}
    below = gate_row(op.gate(run, release={**boot, "criteria": {"answer_matches": 0.5}}))
    assert below["method"] == "cluster_bootstrap" and below["ci_low"] > 0.5
    assert (below["verdict"], below["reason"]) == ("PASS", "ci_low_above_threshold")


def test_cli_gate_prints_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = run_of(tmp_path, answer_cases(*layout(5, sizes=1)), release={})
    assert main(["gate", str(run.directory)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "gate: BLOCK — exit 1: no_criteria: nothing was gated"
    # the line above names the file that lists no criterion: the suite's, or the one given
    suite_release = Path(run.manifest.suite_config.root or "") / "release.yaml"
    assert suite_release.is_file() and lines[-2].startswith(f"{suite_release} names no criterion to gate")
    empty = tmp_path / "empty.yaml"
    empty.write_text("", encoding="utf-8")
    assert main(["gate", str(run.directory), "--release", str(empty)]) == 1
    assert capsys.readouterr().out.splitlines()[-2].startswith(f"{empty} names no criterion to gate")
    listed = tmp_path / "listed.yaml"
    listed.write_text("criteria: {answer_matches: 0.1}\n", encoding="utf-8")
    main(["gate", str(run.directory), "--release", str(listed)])
    assert "names no criterion" not in capsys.readouterr().out
    # with no release.yaml at all, the line named a file that did not exist as listing none
    bare = run_of(tmp_path / "bare", answer_cases(*layout(5, sizes=1)))
    assert main(["gate", str(bare.directory)]) == 1
    missing = Path(bare.manifest.suite_config.root or "") / "release.yaml"
    assert not missing.exists() and capsys.readouterr().out.splitlines()[-2] == (
        f"{missing}: there was none when the run started, so no criterion is gated; write one listing "
        "`criteria: {<criterion>: <threshold>}`, or give it with --release")
    # written since the run: it said "write one" of the file the user had written; it names it for --release now,
    # and the gate still takes none of its thresholds without it
    missing.write_text("criteria: {answer_matches: 0.1}\n", encoding="utf-8")
    assert main(["gate", str(bare.directory)]) == 1
    out, err = capsys.readouterr()
    assert "differs from the release settings" in err
    assert out.splitlines()[-2] == (
        f"{missing}: there was none when the run started, so no criterion is gated; it is there now: give it with "
        f"--release {missing} to gate this run with it")
    assert main(["gate", str(bare.directory), "--release", str(missing)]) == 0  # 4 of 5: ci_low 0.284 clears 0.1


def test_gate_path_never_imports_statsmodels(tmp_path: Path) -> None:
    import subprocess
    import sys

    run = run_of(tmp_path, answer_cases(*layout(24)), release={**CLUSTERED, "criteria": {"answer_matches": 0.5}})
    code = ("import sys, oloproof_nb as op\n"
            f"g = op.gate(op.load_run({str(run.directory)!r}))\n"
            "op.slice_table(op.load_run(" + repr(str(run.directory)) + "), 'tool_calls:1')\n"
            "op.rate_interval([1, 0, 1], method='wilson'); op.rate_interval([1, 0, 1])\n"
            "assert 'statsmodels' not in sys.modules, sorted(m for m in sys.modules if 'statsmodels' in m)[:3]\n"
            "print(g.verdict)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "PASS"


# -- each test kills a mutant of _analysis/gate.py the other tests let live -----------------------------------


def _row(g: op.Gate, criterion: str = "answer_matches") -> Any:
    return g.table.set_index("criterion").loc[criterion]


def test_a_threshold_of_one_is_gated_and_fails_on_one_failure(tmp_path: Path) -> None:
    """``threshold: 1.0`` (every case must pass) is a gated criterion like any other: 9 of 10 unclustered cases pass,
    so ci_high is the Clopper–Pearson upper end Beta⁻¹(0.975; 10, 1) = 0.975^(1/10) = 0.99747 < 1 (SciPy): FAIL and
    BLOCK. With all 10 passing, ci_high is 1 and ci_low 0.025^(1/10) < 1: INSUFFICIENT_EVIDENCE, never PASS. Kills
    a mutant that took a threshold of 1 for "not gated" (``REPORT_ONLY``)."""
    run = run_of(tmp_path / "a", answer_cases([True] * 9 + [False], [f"k{i}" for i in range(10)]))
    g = op.gate(run, release={"criteria": {"answer_matches": 1.0}})
    r = _row(g)
    assert r["ci_high"] == pytest.approx(stats.beta.ppf(0.975, 10, 1), abs=1e-12)
    assert r["ci_high"] == pytest.approx(0.975 ** 0.1, abs=1e-12) and r["ci_high"] < 1.0
    assert (r["threshold"], r["verdict"], r["reason"], g.verdict) == (1.0, "FAIL", "ci_high_below_threshold", "BLOCK")
    perfect = _row(op.gate(run_of(tmp_path / "b", answer_cases([True] * 10, [f"k{i}" for i in range(10)])),
                          release={"criteria": {"answer_matches": 1.0}}))
    assert perfect["ci_low"] == pytest.approx(0.025 ** 0.1, abs=1e-12) and perfect["ci_high"] == 1.0
    assert (perfect["verdict"], perfect["reason"]) == ("INSUFFICIENT_EVIDENCE", "interval_includes_threshold; every "
                                                       "row passes, and no number of rows gives a lower bound of 1: "
                                                       "lower the threshold")


def test_a_pass_k_criterion_of_one_case_gets_its_interval(tmp_path: Path) -> None:
    """One case passing both of its 2 epochs, reduced with pass^2: one value of 1 in its own cluster, so
    Clopper–Pearson of 1 in 1, [(α/2)^(1/1), 1] = [0.025, 1] by hand: a PASS at 0.02, as the mean row of one case
    gets (``test_a_criterion_of_one_row_gets_its_interval``). Kills a mutant that gave a criterion of one reduced
    case no interval."""
    run = run_of(tmp_path, answer_cases([True], ["k0"]), epochs=2)
    r = _row(op.gate(run, release={"criteria": {"answer_matches": {"threshold": 0.02, "reduce": "pass^2"}}}))
    assert (r["n"], r["passed"], r["method"]) == (1, 1, "clopper_pearson")
    assert (r["ci_low"], r["ci_high"]) == (pytest.approx(0.025, abs=1e-15), 1.0)
    assert r["verdict"] == "PASS"


def test_every_row_passing_below_the_threshold_says_how_many_would_clear_it(tmp_path: Path) -> None:
    """20 independent cases, every one passing, at threshold 0.9: the all-pass bound 0.025^(1/20) = 0.832 does not
    clear it, INSUFFICIENT_EVIDENCE (interval_includes_threshold), and the reason said no more; it now says how many
    would. By scipy: 36 is the least n whose Clopper–Pearson bound of n of n reaches 0.9 (35 gives
    0.8999). Clustered, 24 clusters of 2 rows each passing (n_min = 48² / (24·4) = 24 by hand), at 0.95: 72
    (71 gives 0.94998). A threshold the rows cannot reach with a failure among them gets no such note, nor does a
    PASS."""
    def least_n(threshold: float) -> int:
        return next(n for n in range(1, 1000) if stats.beta.ppf(0.025, n, 1) >= threshold)

    assert (least_n(0.9), least_n(0.95)) == (36, 72)
    assert stats.beta.ppf(0.025, 35, 1) < 0.9 and stats.beta.ppf(0.025, 71, 1) < 0.95
    run = run_of(tmp_path / "flat", answer_cases([True] * 20, [f"k{i}" for i in range(20)]),
                 release={"criteria": {"answer_matches": 0.9}})
    r = gate_row(op.gate(run))
    assert r["verdict"] == "INSUFFICIENT_EVIDENCE" and r["ci_low"] == pytest.approx(0.025 ** (1 / 20))
    assert r["reason"] == ("interval_includes_threshold; every row passes: with 20 independent rows no lower bound "
                           "is above 0.025^(1/20); 0.9 needs at least 36 (README section 6, How big must a suite "
                           "be?)")
    assert gate_row(op.gate(run, criteria={"answer_matches": 0.83}))["reason"] == "ci_low_at_or_above_threshold"
    paired = run_of(tmp_path / "pairs", answer_cases([True] * 48, [f"k{i // 2:02d}" for i in range(48)]),
                    release={**CLUSTERED, "criteria": {"answer_matches": 0.95}})
    r = gate_row(op.gate(paired))
    assert r["verdict"] == "INSUFFICIENT_EVIDENCE" and r["ci_low"] == pytest.approx(0.025 ** (1 / 24))
    assert "every row passes: its clusters count as n_min = 24 equal-sized ones" in r["reason"]
    # n_min in hundredths: scipy puts 0.95 between the bounds of 71.91 and 71.92
    assert stats.beta.ppf(0.025, 71.91, 1) < 0.95 <= stats.beta.ppf(0.025, 71.92, 1)
    assert "0.95 needs n_min of at least 71.92 (more clusters" in r["reason"]
    one_fails = run_of(tmp_path / "fail", answer_cases([False] + [True] * 19, [f"k{i}" for i in range(20)]),
                       release={"criteria": {"answer_matches": 0.8}})
    r = gate_row(op.gate(one_fails))
    assert r["verdict"] == "INSUFFICIENT_EVIDENCE" and r["reason"] == "interval_includes_threshold"


def test_the_all_pass_note_names_an_n_whose_float_bound_the_gate_would_pass(tmp_path: Path) -> None:
    """The note's n was ⌈ln(α/2)/ln(threshold) − 1e-9⌉, exact arithmetic, while the gate decides on the float bound:
    at confidence 0.68 and threshold 0.4 the decimal n is 2 (0.4² = 0.16 = α/2), but α/2 from the float 0.68 is
    0.15999999999999998 and scipy's Beta(2, 1) quantile there, like the gate's bound, is 0.39999999999999997, so 2
    passing rows were INSUFFICIENT with a note saying 0.4 needed 2; 3 is the least n that clears it (scipy: 0.543).
    A threshold one float above the bound of 20 rows at 0.95 likewise said 20 where scipy puts 21."""
    half = (1 - 0.68) / 2
    assert stats.beta.ppf(half, 2, 1) < 0.4 <= stats.beta.ppf(half, 3, 1)
    two = run_of(tmp_path / "two", answer_cases([True] * 2, ["k0", "k1"]),
                 release={"confidence": 0.68, "criteria": {"answer_matches": 0.4}})
    r = gate_row(op.gate(two))
    assert r["verdict"] == "INSUFFICIENT_EVIDENCE" and r["ci_low"] < 0.4
    assert r["reason"].endswith("0.4 needs at least 3 (README section 6, How big must a suite be?)"), r["reason"]
    three = run_of(tmp_path / "three", answer_cases([True] * 3, ["k0", "k1", "k2"]),
                   release={"confidence": 0.68, "criteria": {"answer_matches": 0.4}})
    assert gate_row(op.gate(three))["verdict"] == "PASS"  # the n the note names decides
    half = (1 - 0.95) / 2  # 0.025000000000000022, as the gate computes it
    above = float(np.nextafter(half ** (1 / 20), 1.0))
    assert stats.beta.ppf(half, 20, 1) < above <= stats.beta.ppf(half, 21, 1)
    twenty = run_of(tmp_path / "twenty", answer_cases([True] * 20, [f"k{i}" for i in range(20)]))
    r = gate_row(op.gate(twenty, criteria={"answer_matches": above}))
    assert r["verdict"] == "INSUFFICIENT_EVIDENCE" and "needs at least 21 (README" in r["reason"], r["reason"]
    r = gate_row(op.gate(twenty, criteria={"answer_matches": half ** (1 / 20)}))
    assert r["verdict"] == "PASS"  # at the bound itself: 20 decide


def test_the_all_pass_note_of_a_pass_k_criterion_counts_cases(tmp_path: Path) -> None:
    """pass^2 over 2 epochs of 10 passing cases: the interval is Clopper–Pearson on the 10 reduced cases (scipy:
    0.025^(1/10) = 0.692 < 0.9), and the note said "with 10 independent rows" of a run of 20 rows; it says cases.
    36 cases by scipy's Beta(n, 1) quantile, as for 36 rows."""
    half = (1 - 0.95) / 2
    assert stats.beta.ppf(half, 35, 1) < 0.9 <= stats.beta.ppf(half, 36, 1)
    run = run_of(tmp_path, answer_cases([True] * 10, [f"k{i}" for i in range(10)]), epochs=2)
    r = gate_row(op.gate(run, release={"criteria": {"answer_matches": {"threshold": 0.9, "reduce": "pass^2"}}}))
    assert (r["verdict"], r["n"], r["ci_low"]) == ("INSUFFICIENT_EVIDENCE", 10, pytest.approx(half ** 0.1))
    assert r["reason"].endswith("every case passes: with 10 independent cases no lower bound is above "
                                "0.025^(1/10); 0.9 needs at least 36 (README section 6, How big must a suite be?)")


def test_a_criterion_the_stored_release_gates_and_no_check_judges_blocks(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A run of a suite whose checks were narrowed in code keeps release.yaml's criteria: those it never judged are
    ``no_evidence`` rows, not left out of the table (``gate: PASS — exit 0: the 1 gated criterion
    passes`` with answer_matches, failed by every case, listed in release.yaml)."""
    run = _narrowed_run(tmp_path, passes=False)  # every answer fails, each case its own cluster
    g = op.gate(run)
    rows = g.table.set_index("criterion")
    assert rows.loc["untouched", "verdict"] == "PASS"  # 20 of 20 independent cases: ci_low 0.832
    assert rows.loc["answer_matches", ["verdict", "n", "threshold"]].tolist() == ["INSUFFICIENT_EVIDENCE", 0, 0.5]
    assert rows.loc["answer_matches", "reason"].startswith("no_evidence; no check of run")
    assert g.verdict == "BLOCK"
    capsys.readouterr()
    assert main(["gate", str(run.directory)]) == 1
    assert "answer_matches" in capsys.readouterr().out


def test_gate_keywords_keep_the_stored_criterion_no_check_judges_as_a_no_evidence_row(tmp_path: Path) -> None:
    """``op.gate(run, confidence=0.9)`` (or ``criteria=`` naming another criterion) on such a run was
    refused, naming the stored criterion as the caller's (``criteria.answer_matches: no such criterion in the
    run``), where ``op.gate(run)`` BLOCKs on it; a name the keywords add is still refused."""
    run = _narrowed_run(tmp_path, passes=True)
    for keywords in ({"confidence": 0.9}, {"criteria": {"untouched": 0.6}}):
        g = op.gate(run, **keywords)
        rows = g.table.set_index("criterion")
        assert rows.loc["answer_matches", "verdict"] == "INSUFFICIENT_EVIDENCE"
        assert rows.loc["answer_matches", "reason"].startswith("no_evidence; no check of run")
        assert (g.verdict, rows.loc["untouched", "verdict"]) == ("BLOCK", "PASS")
    with pytest.raises(op.ConfigError, match=r"criteria\.other: no such criterion in the run"):
        op.gate(run, criteria={"other": 0.5})


def test_a_criterion_no_check_judges_is_decided_as_any_row_of_a_clustered_run(tmp_path: Path) -> None:
    """The unjudged row of a clustered run without ``allow_approximate_methods`` gives
    ``approximate_methods_not_allowed`` first, as the judged one beside it does (its docstring), keeps the reduction
    release.yaml gives it, and names the checks the run has. 20 cases in 10 clusters of 2 (by hand: clustered)."""
    import dataclasses

    cases = answer_cases([True] * 20, [f"k{i // 2}" for i in range(20)])
    untouched = {"type": "state_unchanged", "criterion": "untouched", "paths": ["orders.ord-999"]}
    folder = write_suite(tmp_path, cases, [{"type": "answer_matches"}, untouched],
                         {"criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass@1"}, "untouched": 0.5}})
    suite = op.load_suite(folder)
    narrowed = suite.config.model_copy(update={"evaluators": [ev for ev in suite.config.evaluators
                                                              if ev.type == "state_unchanged"]})
    run = op.run(dataclasses.replace(suite, config=narrowed), out=folder / "runs" / "r", progress=False)
    rows = op.gate(run).table.set_index("criterion")
    assert rows.loc["untouched", "reason"].startswith("approximate_methods_not_allowed")
    unjudged = rows.loc["answer_matches"]
    assert unjudged["reason"].startswith("approximate_methods_not_allowed: ")  # not no_evidence
    assert "; no check of run" in unjudged["reason"]
    assert "(its criteria: untouched)" in unjudged["reason"]
    assert (unjudged["verdict"], unjudged["reduce"], unjudged["n"]) == ("INSUFFICIENT_EVIDENCE", "pass@1", 0)
    assert not unjudged["vacuous"]  # no check of it ran, so none was found vacuous


def _narrowed_run(tmp_path: Path, passes: bool) -> op.Run:
    """A run of 20 one-case clusters whose release.yaml gates answer_matches and untouched at 0.5, made by a suite
    narrowed in code to its state_unchanged check: answer_matches is stored in its release and judged by no check."""
    import dataclasses

    cases = answer_cases([passes] * 20, [f"k{i}" for i in range(20)])
    untouched = {"type": "state_unchanged", "criterion": "untouched", "paths": ["orders.ord-999"]}
    folder = write_suite(tmp_path, cases, [{"type": "answer_matches"}, untouched],
                         {"criteria": {"answer_matches": 0.5, "untouched": 0.5}})
    suite = op.load_suite(folder)
    narrowed = suite.config.model_copy(update={"evaluators": [ev for ev in suite.config.evaluators
                                                              if ev.type == "state_unchanged"]})
    return op.run(dataclasses.replace(suite, config=narrowed), out=folder / "runs" / "r", progress=False)
