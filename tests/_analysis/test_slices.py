"""Slice tables: spec parsing, bins and labels, supports that add up, the gate's interval per bin.

Every expected count below is written by hand from the case inputs; intervals
are checked against statsmodels/scipy (Clopper–Pearson, the CR1 clustered SE
on the logit scale) and, for the bootstrap, against ``stats.rate_interval`` on
the bin's rows listed by hand.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from _cr2_reference import brute_force_low
from _epoch_systems import flaky_run, scripted_run
from statsmodels.stats.proportion import proportion_confint

import oloproof_nb as op
import oloproof_nb._analysis.gate as gate_module
from oloproof_nb._analysis.slices import SLICE_COLUMNS
from oloproof_nb._core.slicespec import SliceSpec, parse_slice_spec
from oloproof_nb._core.stats import rate_interval
from oloproof_nb.cli import main
from oloproof_nb.errors import SliceSpecError

#: A scripted system: input ``calls`` tool calls then one message; answers "ok" when ``good``; raises on ``boom``.
COUNTER = '''
class Counter:
    version = "counter-1"

    def __init__(self):
        self.state = {}

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        if input.get("boom"):
            raise RuntimeError("boom")
        import os
        calls = input["calls"] * int(os.environ.get("SLICE_TEST_CALLS_TIMES", "1"))
        steps = [{"kind": "tool_call", "tool": "noop", "args": {"i": i}, "result": {"ok": True}}
                 for i in range(calls)]
        steps.append({"kind": "message", "role": "assistant", "content": "done"})
        return {"steps": steps, "answer": "ok" if input["good"] else "bad", "status": "completed"}
'''
EVALUATORS = [{"type": "answer_matches"}, {"type": "state_unchanged", "criterion": "untouched", "paths": ["x"]}]


def case(cid: str, calls: int, good: bool, cluster: str | None = None, boom: bool = False) -> dict[str, Any]:
    row: dict[str, Any] = {"id": cid, "input": {"calls": calls, "good": good, "boom": boom, "case": cid},
                           "initial_state": {"x": 1}, "expected": {"answer": "ok"}}
    if cluster is not None:
        row["cluster"] = cluster
    return row


def make_run(make_suite: Any, tmp_path: Path, cases: list[dict[str, Any]], **kw: Any) -> op.Run:
    root = make_suite(cases, evaluators=EVALUATORS, system="sysmod:Counter", system_code=COUNTER, **kw)
    return op.run(op.load_suite(root), out=tmp_path / f"run-{root.name}", progress=False)


# ----------------------------------------------------------------------------------------- parsing


def test_documented_columns_are_pinned() -> None:
    assert SLICE_COLUMNS[:11] == ["slice", "bin", "lower", "upper", "criterion", "support", "clusters", "passed",
                                  "rate", "ci_low", "ci_high"]
    assert "few_clusters" in SLICE_COLUMNS


@pytest.mark.parametrize(("spec", "labels", "lowers", "uppers"), [
    ("tool_calls:1,2", ["<1", "[1, 2)", "≥2"], [-math.inf, 1, 2], [1, 2, math.inf]),
    ("trajectory_length:4", ["<4", "≥4"], [-math.inf, 4], [4, math.inf]),
    (" tool_calls : 0, 3 ,10 ", ["<0", "[0, 3)", "[3, 10)", "≥10"], [-math.inf, 0, 3, 10], [0, 3, 10, math.inf]),
])
def test_bin_edges_and_labels(spec: str, labels: list[str], lowers: list[float], uppers: list[float]) -> None:
    parsed = parse_slice_spec(spec)
    bins = parsed.bins()
    assert [b[0] for b in bins] == labels
    assert [b[1] for b in bins] == lowers
    assert [b[2] for b in bins] == uppers
    assert parse_slice_spec(parsed.text) == parsed  # the canonical text parses to the same spec


@pytest.mark.parametrize(("spec", "problem"), [
    ("", "no ':'"),
    ("tool_calls", "no ':'"),
    ("tool_calls:", "no edges"),
    ("steps:1,2", "unknown dimension 'steps'"),
    ("tool_calls:1,1", "strictly ascending"),
    ("tool_calls:3,2", "strictly ascending"),
    ("tool_calls:1.5", "'1.5' is not a non-negative integer"),
    ("tool_calls:-1", "'-1' is not a non-negative integer"),
    ("tool_calls:1,,2", "'' is not a non-negative integer"),
    ("tool_calls:one", "'one' is not a non-negative integer"),
    ("tool_calls:1,\u0663", "'\u0663' is not a non-negative integer"),  # ٣, an Arabic-Indic 3: isdigit, not ASCII
    (3, "must be a string"),
])
def test_malformed_specs_are_one_line_errors(spec: Any, problem: str) -> None:
    with pytest.raises(SliceSpecError) as info:
        parse_slice_spec(spec)
    message = str(info.value)
    assert isinstance(info.value, op.OloproofError)
    assert "\n" not in message
    assert repr(spec) in message and problem in message
    assert "tool_calls:<edges>" in message and "trajectory_length:<edges>" in message


def test_a_slice_spec_built_by_hand_is_checked_as_its_text_is() -> None:
    # slice_table takes a SliceSpec too: one with edges out of order would bin every row wrongly, unchecked
    assert parse_slice_spec(SliceSpec("tool_calls", (1, 2))) == SliceSpec("tool_calls", (1, 2))
    with pytest.raises(SliceSpecError, match="strictly ascending, but 1 follows 2"):
        parse_slice_spec(SliceSpec("tool_calls", (2, 1)))
    with pytest.raises(SliceSpecError, match="unknown dimension 'calls'"):
        parse_slice_spec(SliceSpec("calls", (1,)))


def test_an_edge_of_more_than_15_digits_is_refused_and_15_digits_still_bin() -> None:
    """An edge of 400 digits passed load_suite and `oloproof run`, then slice_table and the report stopped with an
    internal OverflowError (the edges become floats); one of 5,000 digits raised int's ValueError."""
    fifteen = "9" * 15
    spec = parse_slice_spec(f"tool_calls:1,{fifteen}")
    assert spec.edges == (1, 10**15 - 1) and [label for label, _, _ in spec.bins()][-1] == f"≥{fifteen}"
    assert parse_slice_spec("tool_calls:" + "0" * 20 + "7").edges == (7,)  # leading zeros are no digits of size
    for edge in ("1" + "0" * 15, "9" * 400, "9" * 5000):
        with pytest.raises(SliceSpecError, match=r"has more than 15 digits; allowed: tool_calls:<edges>"):
            parse_slice_spec(f"tool_calls:1,{edge}")


def test_a_declared_slice_of_more_than_50_edges_is_refused_and_50_still_bin(make_suite: Any,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """1,000 edges in oloproof.yaml passed, and the report took 16 s to embed a plot 143,480 pixels wide
    (51 bins is already more than a reader compares). At load_suite, 50 edges give 51 bins; 51 are refused in one
    line, exit 2. A run stored before the rule still opens (its configuration read again), and a table asked for
    in Python is not refused."""
    fifty = "tool_calls:" + ",".join(str(i) for i in range(1, 51))
    root = make_suite([case("a", 1, True)], evaluators=EVALUATORS, system="sysmod:Counter", system_code=COUNTER,
                      slices=[fifty])
    assert op.load_suite(root).config.slices == [fifty] and len(parse_slice_spec(fifty).bins()) == 51
    for count in (51, 1000):
        spec = "trajectory_length:" + ",".join(str(i) for i in range(1, count + 1))
        (root / "oloproof.yaml").write_text(yaml.safe_dump({**yaml.safe_load((root / "oloproof.yaml").read_text(
            encoding="utf-8")), "slices": ["tool_calls:1", spec]}), encoding="utf-8")
        with pytest.raises(op.ConfigError, match=rf"slices\[1\]: .* has {count} edges; a slice has at most 50 \(51 "
                                                 r"bins\), as a table or plot of more cannot be read: give fewer "
                                                 r"edges$"):
            op.load_suite(root)
        assert main(["run", str(root), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"has {count} edges" in err
    from oloproof_nb._config.suite_config import parse_suite_config

    text = (root / "oloproof.yaml").read_text(encoding="utf-8")
    assert len(parse_slice_spec(parse_suite_config(yaml.safe_load(text), root / "oloproof.yaml").slices[1]).edges) \
        == 1000


def test_suite_slices_are_validated_at_load(make_suite: Any, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_suite([case("a", 1, True)], evaluators=EVALUATORS, system="sysmod:Counter", system_code=COUNTER,
                      slices=["tool_calls:1,2", "tool_calls:2,1"])
    with pytest.raises(op.ConfigError) as info:
        op.load_suite(root)
    assert "oloproof.yaml" in str(info.value) and "slices[1]" in str(info.value)
    assert "strictly ascending" in str(info.value)
    assert main(["run", str(root), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "slices[1]" in err


def test_a_slice_listed_twice_is_refused(make_suite: Any) -> None:
    """``["tool_calls:1", "tool_calls:01"]`` gave the report the same table twice (one headed
    ``tool_calls:01``), both written to the same file."""
    root = make_suite([case("a", 1, True)], evaluators=EVALUATORS, system="sysmod:Counter", system_code=COUNTER,
                      slices=["tool_calls:1,2", "trajectory_length:1", "tool_calls:01,2"])
    with pytest.raises(op.ConfigError) as info:
        op.load_suite(root)
    assert str(info.value).endswith("slices[2]: 'tool_calls:01,2' is slices[0] again (tool_calls:1,2); list each "
                                    "slice once")
    # a run stored before the rule (its configuration read again) must still open and gate
    from oloproof_nb._config.suite_config import parse_suite_config

    text = (root / "oloproof.yaml").read_text(encoding="utf-8")
    assert parse_suite_config(yaml.safe_load(text), root / "oloproof.yaml").slices[2] == "tool_calls:01,2"


# ----------------------------------------------------------------------------------------- tables

#: calls per case (c5 raises: no trajectory); good = answer "ok"
CASES = [case("c0", 0, True), case("c1", 1, True), case("c2", 1, False), case("c3", 2, True), case("c4", 3, False),
         case("c5", 5, True, boom=True), case("c6", 5, True)]


@pytest.fixture
def unclustered(make_suite: Any, tmp_path: Path) -> op.Run:
    return make_run(make_suite, tmp_path, CASES)


def test_bins_supports_and_empty_bins_by_hand(unclustered: op.Run) -> None:
    t = op.slice_table(unclustered, "tool_calls:1,2,4,8")
    assert list(t.columns) == SLICE_COLUMNS
    assert list(t["criterion"].unique()) == ["answer_matches", "untouched"]
    a = t[t["criterion"] == "answer_matches"].set_index("bin")
    assert list(a.index) == ["<1", "[1, 2)", "[2, 4)", "[4, 8)", "≥8", "n/a"]
    # hand count: c0 | c1 c2 | c3 c4 | c6 | (none) | c5 (raised: no trajectory)
    assert list(a["support"]) == [1, 2, 2, 1, 0, 1]
    assert list(a["passed"]) == [1, 1, 1, 1, 0, 0]  # c2, c4 answer "bad"; c5 is missing, never a pass
    assert list(a["clusters"]) == [1, 2, 2, 1, 0, 1]
    assert list(a["lower"][:-1]) == [-math.inf, 1, 2, 4, 8] and math.isnan(a.loc["n/a", "lower"])
    assert list(a["upper"][:-1]) == [1, 2, 4, 8, math.inf] and math.isnan(a.loc["n/a", "upper"])
    empty = a.loc["≥8"]
    assert empty["support"] == 0 and empty["passed"] == 0 and empty["clusters"] == 0
    assert math.isnan(empty["rate"]) and math.isnan(empty["ci_low"]) and math.isnan(empty["ci_high"])
    assert a.loc["[1, 2)", "rate"] == 0.5 and a.loc["n/a", "rate"] == 0.0


def test_supports_add_up_to_each_criterions_rows(unclustered: op.Run) -> None:
    v = unclustered.verdicts
    for spec in ("tool_calls:1,2,4,8", "trajectory_length:2,3", "tool_calls:100"):
        t = op.slice_table(unclustered, spec)
        assert sorted(t["criterion"].unique()) == ["answer_matches", "untouched"]  # an empty table added up too
        for criterion, sub in t.groupby("criterion"):
            assert sub["support"].sum() == (v["criterion"] == criterion).sum() == 7
            assert sub["passed"].sum() == ((v["criterion"] == criterion) & (v["verdict"] == "pass")).sum()


def test_trajectory_length_counts_every_step(unclustered: op.Run) -> None:
    # steps = calls + 1 message: c0 1 | c1 c2 2 | c3 3 | c4 4 | c6 6 | c5 none
    t = op.slice_table(unclustered, "trajectory_length:2,3,5")
    u = t[t["criterion"] == "untouched"].set_index("bin")
    assert list(u.index) == ["<2", "[2, 3)", "[3, 5)", "≥5", "n/a"]
    assert list(u["support"]) == [1, 2, 2, 1, 1]
    assert list(u["passed"]) == [1, 2, 2, 1, 0]


def test_unclustered_interval_is_clopper_pearson_per_bin(unclustered: op.Run) -> None:
    t = op.slice_table(unclustered, "tool_calls:1,2,4,8")
    for r in t[t["support"] > 0].itertuples():
        low, high = proportion_confint(r.passed, r.support, alpha=0.05, method="beta")
        assert r.method == "clopper_pearson"
        assert r.ci_low == pytest.approx(low, abs=1e-12) and r.ci_high == pytest.approx(high, abs=1e-12)
        assert r.rate == r.passed / r.support


def test_no_fitted_columns_and_inputs_untouched(unclustered: op.Run) -> None:
    before = unclustered.verdicts.copy()
    t = op.slice_table(unclustered, "tool_calls:1,2")
    fitted = re.compile(r"slope|trend|fit|pred|curve|coef|regress|intercept", re.I)
    assert not [c for c in t.columns if fitted.search(c)]
    pd.testing.assert_frame_equal(unclustered.verdicts, before)


def _cluster_t_reference(values: list[int], clusters: list[str], confidence: float = 0.95) -> tuple[float, float]:
    """The monotone CR2 logit-t interval by brute force from the matrix definitions (tests/_cr2_reference.py, which
    does not import oloproof_nb): the lower bound over every better data set, the upper one over every worse.
    Before, this "reference" was the package's own rate_interval, the code the slice table calls."""
    ids = list(dict.fromkeys(clusters))
    m = [clusters.count(c) for c in ids]
    k = [sum(v for v, c in zip(values, clusters, strict=True) if c == cid) for cid in ids]
    mirror = [size - passed for passed, size in zip(k, m, strict=True)]
    return brute_force_low(k, m, confidence), 1 - brute_force_low(mirror, m, confidence)


#: 12 clusters of two cases each (a source and its copy): calls 1 for k00–k05, 3 for k06–k11.
CLUSTERED = [case(f"k{i:02d}{s}", 1 if i < 6 else 3, good, cluster=f"k{i:02d}")
             for i, pattern in enumerate(["11", "10", "11", "01", "11", "00", "11", "10", "11", "11", "00", "11"])
             for s, good in zip("ab", (pattern[0] == "1", pattern[1] == "1"), strict=True)]


def test_clustered_run_uses_the_gates_method_per_bin(make_suite: Any, tmp_path: Path) -> None:
    release = {"allow_approximate_methods": True, "min_clusters": 5, "criteria": {"answer_matches": 0.5}}
    run = make_run(make_suite, tmp_path, CLUSTERED, release=release)
    t = op.slice_table(run, "tool_calls:2")
    a = t[t["criterion"] == "answer_matches"].set_index("bin")
    # by hand: k00–k05 → 1,1 1,0 1,1 0,1 1,1 0,0 ; k06–k11 → 1,1 1,0 1,1 1,1 0,0 1,1
    low_values = [1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0]
    high_values = [1, 1, 1, 0, 1, 1, 1, 1, 0, 0, 1, 1]
    clusters_low = [f"k{i:02d}" for i in range(6) for _ in "ab"]
    clusters_high = [f"k{i:02d}" for i in range(6, 12) for _ in "ab"]
    for label, values, clusters in (("<2", low_values, clusters_low), ("≥2", high_values, clusters_high)):
        row = a.loc[label]
        assert row["support"] == 12 and row["clusters"] == 6 and row["passed"] == sum(values)
        assert row["method"] == "cluster_t"
        low, high = _cluster_t_reference(values, clusters)
        assert row["ci_low"] == pytest.approx(low, abs=1e-9) and row["ci_high"] == pytest.approx(high, abs=1e-9)
        assert not row["few_clusters"]  # 6 clusters ≥ min_clusters 5
    # the untouched criterion passes everywhere: a degenerate bin falls back to Clopper–Pearson on n_min
    u = t[(t["criterion"] == "untouched") & (t["bin"] == "<2")].iloc[0]
    n_min = 12**2 / (6 * 2**2)
    assert u["method"] == "clopper_pearson"
    assert u["ci_low"] == pytest.approx(proportion_confint(n_min, n_min, method="beta")[0], abs=1e-12)
    # with the default min_clusters (20) every bin of 6 clusters is flagged
    t20 = op.slice_table(run, "tool_calls:2", release={"allow_approximate_methods": True})
    assert t20.loc[t20["support"] > 0, "few_clusters"].all()


def test_bootstrap_release_is_used_per_bin(make_suite: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release = {"allow_approximate_methods": True, "min_clusters": 5, "method": "cluster_bootstrap",
               "bootstrap": {"resamples": 2000, "seed": 7}}
    run = make_run(make_suite, tmp_path, CLUSTERED, release=release)
    row = op.slice_table(run, "tool_calls:2").iloc[0]
    values = [1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0]
    clusters = [f"k{i:02d}" for i in range(6) for _ in "ab"]
    # 6 clusters: below BOOTSTRAP_MIN_CLUSTERS the bootstrap may not decide, cluster_t stands in
    low, high = _cluster_t_reference(values, clusters)
    assert row["bin"] == "<2" and row["method"] == "cluster_t"
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=1e-12)
    monkeypatch.setattr(gate_module, "BOOTSTRAP_MIN_CLUSTERS", 6)
    row = op.slice_table(run, "tool_calls:2").iloc[0]
    expected = rate_interval(values, clusters, method="cluster_bootstrap", resamples=2000, seed=7)
    assert row["method"] == "cluster_bootstrap"
    assert (row["ci_low"], row["ci_high"]) == (expected.low, expected.high)


def test_example_suite_declares_slices_that_fit_its_data(example_suite: Path, tmp_path: Path) -> None:
    suite = op.load_suite(example_suite)
    assert suite.config.slices, "the example should declare slices for its report"
    run = op.run(suite, out=tmp_path / "run", progress=False)
    for spec in suite.config.slices:
        t = op.slice_table(run, spec)
        filled = t[t["criterion"] == "answer_matches"]
        assert (filled["support"] > 0).sum() >= 2, f"{spec} should split the example's cases into several bins"


def test_a_pooled_run_bins_each_row_by_its_own_runs_case(make_suite: Any, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runs of one suite whose cases make 1× and 3× the tool calls: a case id (and epoch) names two case
    runs in the pooled Run. Looking rows up by (case_id, epoch) alone raised InvalidIndexError; each row must
    fall in the bin of its own run's case, so the pooled table is the sum of the two runs' tables."""
    root = make_suite(CASES, evaluators=EVALUATORS, system="sysmod:Counter", system_code=COUNTER)
    op.run(op.load_suite(root), out=tmp_path / "a", progress=False)
    monkeypatch.setenv("SLICE_TEST_CALLS_TIMES", "3")
    op.run(op.load_suite(root), out=tmp_path / "b", progress=False)
    runs = [op.load_run(tmp_path / name) for name in ("a", "b")]
    spec = "tool_calls:1,2,4,8"
    keys = ["criterion", "bin"]
    one, other = (op.slice_table(r, spec).set_index(keys)[["support", "passed"]] for r in runs)
    assert not one.equals(other)  # the runs bin their cases differently, else this test could not tell
    pooled = op.slice_table(op.load_runs([r.directory for r in runs]), spec).set_index(keys)
    pd.testing.assert_frame_equal(pooled[["support", "passed"]], one + other)


def test_a_pool_of_two_systems_says_its_bins_are_of_no_one_system(make_suite: Any, tmp_path: Path) -> None:
    """``op.load_runs`` of v1's and v2's runs, sliced, gave each bin one rate of the two agents (v1's
    answers 4 of 7, v2's 7 of 7: 11 of 14) without a word, where ``op.gate`` of the same pool BLOCKs
    (``mixed_systems``). It still gives the table, and warns; a pool of one system's runs does not."""
    root = make_suite(CASES, evaluators=EVALUATORS, system="sysmod:Counter", system_code=COUNTER)
    suite = op.load_suite(root)
    Counter = suite.resolve_system()

    class Fixed(Counter):  # type: ignore[misc,valid-type]
        version = "counter-2"

        def run(self, input: dict[str, Any]) -> dict[str, Any]:
            return {**super().run({**input, "good": True, "boom": False}), "answer": "ok"}

    for name, system in (("v1-a", None), ("v1-b", None), ("v2", Fixed)):
        op.run(suite, system=system, out=tmp_path / name, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one system's runs: no warning
        op.slice_table(op.load_runs([tmp_path / "v1-a", tmp_path / "v1-b"]), "tool_calls:1")
    mixed = op.load_runs([tmp_path / "v1-a", tmp_path / "v2"])
    with pytest.warns(op.SliceWarning, match=r"^slice tool_calls:1: the pooled run's rows are of no one system or "
                                             r"case file \(mixed_systems: runs .* were made by different systems "
                                             r"\(system version 'counter-1' → 'counter-2'\)\), so each bin's rate "
                                             r"is of none: slice one version's runs") as caught:
        table = op.slice_table(mixed, "tool_calls:1")
    assert len(caught) == 1 and caught[0].filename == __file__  # pointed at the caller's line
    rows = table[table["criterion"] == "answer_matches"]
    assert (rows["support"].sum(), rows["passed"].sum()) == (14, 11)  # hand count: 4 of 7 and 7 of 7
    assert op.gate(mixed).reason.startswith("mixed_systems:")


def test_a_pool_of_two_case_files_says_its_bins_are_of_no_one_case_file(make_suite: Any, tmp_path: Path) -> None:
    """The same for runs of one system on the case file before and after an edit (``mixed_cases``): c6 left out."""
    root = make_suite(CASES, evaluators=EVALUATORS, system="sysmod:Counter", system_code=COUNTER)
    op.run(op.load_suite(root), out=tmp_path / "before", progress=False)
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES[:-1]), encoding="utf-8")
    op.run(op.load_suite(root), out=tmp_path / "after", progress=False)
    with pytest.warns(op.SliceWarning, match=r"rows are of no one system or case file \(mixed_cases: runs .* ran "
                                             r"other cases \(1 case\(s\) added, removed or edited between them, "
                                             r"first 'c6'\)\)"):
        op.slice_table(op.load_runs([tmp_path / "before", tmp_path / "after"]), "tool_calls:1")


def test_a_cases_frame_holding_a_case_run_twice_is_one_line_not_a_pandas_error(unclustered: op.Run) -> None:
    """Two runs' cases concatenated by hand into ``run.cases`` (instead of op.load_runs) hold each case run
    twice, and the two rows may bin it apart; the lookup raised pandas' InvalidIndexError ("Reindexing only valid with
    uniquely valued Index objects"). It is now one line naming the case run."""
    cases = unclustered.cases
    unclustered.cases = pd.concat([cases, cases.iloc[[3]].assign(n_tool_calls=9)], ignore_index=True)
    with pytest.raises(op.OloproofError, match=r"^slice_table: run.cases holds the case run \(case_id 'c3', epoch 1\) "
                                               r"more than once .*op.load_runs"):
        op.slice_table(unclustered, "tool_calls:1,2")


def test_a_reduced_slice_names_the_cases_no_bin_can_hold(tmp_path: Path) -> None:
    """Under pass^3 the 4 flaky cases have 2 epochs in ``<2`` and 1 in ``≥2``: no bin holds 3 of their epochs,
    so no bin reduces them. The table showed pass^3 = 1.0 on 20 cases and nothing else, silently, while the
    gate's pass^3 is 20/24; now a SliceWarning says how many cases no bin holds."""
    from oloproof_nb import SliceWarning

    run = flaky_run(tmp_path)
    assert op.gate(run).table.loc[0, "n"] == 24 and op.gate(run).table.loc[0, "passed"] == 20  # by hand: 20 of 24
    with pytest.warns(SliceWarning, match=r"slice tool_calls:2: 4 case\(s\) of answer_matches are in no pass\^3 bin") \
            as caught:
        table = op.slice_table(run, "tool_calls:2").set_index("bin")
    assert {w.filename for w in caught if issubclass(w.category, SliceWarning)} == {__file__}  # this line's file
    # called by a frame of the package (as the report calls it), the warning still names the line outside it that
    # called in: stacklevel=2 named the package's file
    inside = str(Path(op.__file__).parent / "_display" / "_a_caller.py")
    with pytest.warns(SliceWarning) as caught:
        exec(compile("slice_table(run, 'tool_calls:2')", inside, "exec"), {"slice_table": op.slice_table, "run": run})
    assert {w.filename for w in caught if issubclass(w.category, SliceWarning)} == {__file__}
    assert table.loc["<2", "support"] == 20 and table.loc["<2", "rate"] == 1.0 and table.loc["≥2", "support"] == 0
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", SliceWarning)  # a mean criterion bins each epoch's row: nothing left out
        op.slice_table(run, "tool_calls:2", release={"criteria": {"answer_matches": 0.5}})


def test_a_single_case_no_bin_can_hold_is_named_too(tmp_path: Path) -> None:
    """The boundary of the warning: one such case (not only several) is left out of every bin and said."""
    from oloproof_nb import SliceWarning

    with pytest.warns(SliceWarning, match=r"slice tool_calls:2: 1 case\(s\) of answer_matches are in no pass\^3 bin"):
        table = op.slice_table(flaky_run(tmp_path, flaky=1), "tool_calls:2").set_index("bin")
    assert table.loc["<2", "support"] == 20 and table.loc["≥2", "support"] == 0


def test_a_reduced_case_is_never_reduced_over_part_of_its_epochs(tmp_path: Path) -> None:
    """Under pass^2 a flaky case's 2 passing epochs (1 call) sit in ``<2`` and its failing one
    (2 calls) in ``≥2``. Each bin reduced the epochs it held, so ``<2`` counted the 4 flaky cases as sure
    passes (24 of 24, pass^2 1.0; supports adding to 28 for 24 cases) where the gate gives each 1/3, without a
    warning. A case is reduced over all its epochs: with them in two bins it fits none, and is named."""
    from oloproof_nb import SliceWarning

    run = flaky_run(tmp_path)
    release = {"criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^2"}}}
    row = op.gate(run, release=release).table.iloc[0]
    assert row["rate"] == pytest.approx((20 + 4 / 3) / 24)  # by hand: C(2,2)/C(3,2) = 1/3 for each flaky case
    with pytest.warns(SliceWarning, match=r"4 case\(s\) of answer_matches are in no pass\^2 bin"):
        table = op.slice_table(run, "tool_calls:2", release=release).set_index("bin")
    assert (table.loc["<2", "support"], table.loc["<2", "passed"], table.loc["≥2", "support"]) == (20, 20, 0)


def test_cases_the_gate_leaves_out_are_not_counted_as_in_no_bin(tmp_path: Path) -> None:
    """Three steady cases keep one row of three (a fault replay made in one epoch only): the gate leaves them
    out of pass^3 (``left_out``) and so does every bin. The warning counted them with the 4 flaky cases (7)
    and said the gate counts them."""
    import re
    import warnings

    from oloproof_nb import SliceWarning

    run = flaky_run(tmp_path)
    v = run.verdicts
    short = v["case_id"].isin(["ok00", "ok01", "ok02"]) & (v["epoch"] > 1)
    run._frames["verdicts"] = v[~short].reset_index(drop=True)
    row = op.gate(run).table.iloc[0]
    assert (row["n"], row["passed"]) == (21, 17)  # by hand: 24 − 3 cases, of them 4 flaky fail pass^3
    assert "3 case(s) with fewer than 3 rows left out" in row["reason"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SliceWarning)
        table = op.slice_table(run, "tool_calls:2").set_index("bin")
    said = [str(w.message) for w in caught if issubclass(w.category, SliceWarning)]
    assert len(said) == 1 and re.search(r"\b4 case\(s\) of answer_matches are in no pass\^3 bin", said[0])
    assert table.loc["<2", "support"] == 17 and table.loc["≥2", "support"] == 0


def test_rows_of_another_criterion_never_make_a_case_count_as_in_no_bin(tmp_path: Path) -> None:
    """Beside answer_matches (pass^3), answer_again judges every epoch of every case; three steady cases keep one
    answer_matches row of three (a check made in one epoch only). Those three are left out of answer_matches as
    the gate leaves them out, whatever answer_again holds: counted with answer_again's rows, the warning said 7."""
    import warnings

    from oloproof_nb import SliceWarning

    run = scripted_run(tmp_path, "flaky", 20, 4, [1, 2, 1],
                       evaluators=[{"type": "answer_matches"}, {"type": "answer_matches", "criterion": "answer_again"}],
                       release={"criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^3"}}})
    v = run.verdicts
    short = (v["criterion"] == "answer_matches") & v["case_id"].isin(["ok00", "ok01", "ok02"]) & (v["epoch"] > 1)
    run._frames["verdicts"] = v[~short].reset_index(drop=True)
    row = op.gate(run).table.set_index("criterion").loc["answer_matches"]
    assert (row["n"], row["passed"]) == (21, 17)  # by hand: 24 − 3 cases, of them 4 flaky fail pass^3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SliceWarning)
        table = op.slice_table(run, "tool_calls:2")
    said = [str(w.message) for w in caught if issubclass(w.category, SliceWarning)]
    assert [re.findall(r"(\d+) case\(s\) of (\w+) are in no pass\^3 bin", s) for s in said] == [
        [("4", "answer_matches")]]  # the 4 flaky cases only
    mine = table[table["criterion"] == "answer_matches"].set_index("bin")
    assert mine.loc["<2", "support"] == 17 and mine.loc["≥2", "support"] == 0
