"""The README's tour, sections 1 to 5, runs as a notebook user pastes it: every Python block in order, in one
namespace, in a folder holding the two examples as the README's commands make them.

The numbers the README states beside those blocks are checked against counts taken from the frames.
"""

from __future__ import annotations

import glob
import itertools
import json
import math
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from scipy import stats

import oloproof_nb as op
from oloproof_nb.cli import main
from oloproof_nb.evaluators import StateMatches
from oloproof_nb.examples import init_example

README = Path(__file__).resolve().parent.parent.parent / "README.md"


def _tour_blocks(first: str, last: str) -> list[str]:
    """The ```python blocks of the README from heading ``first`` up to (not including) heading ``last``."""
    text = README.read_text(encoding="utf-8")
    region = text[text.index(first):text.index(last)]
    return re.findall(r"```python\n(.*?)```", region, re.S)


def _run_blocks(namespace: dict[str, Any], first: str, last: str) -> list[str]:
    """Run the README's ```python blocks between two headings, in order, in ``namespace``; return them."""
    blocks = _tour_blocks(first, last)
    for block in blocks:
        exec(compile(block, "<README>", "exec"), namespace)  # the README's own snippets, as pasted
    return blocks


def _tour(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Sections 1 to 5 as pasted, in a folder where the README's commands made ``demo`` and ``fs``."""
    init_example("stateful-agent", tmp_path / "demo")  # oloproof init --example stateful-agent demo
    init_example("false-success", tmp_path / "fs")  # oloproof init --example false-success fs
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    blocks = _run_blocks(namespace, "## A tour", "### 6. The release gate")
    assert len(blocks) >= 7 and any("classify_outcome" in block for block in blocks)
    return namespace


def test_sections_1_to_5_run_as_pasted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # before: section 5's last line called op.classify_outcome(contract, evidence, run_started_at=t_start)
    # with none of the three defined (NameError)
    namespace = _tour(tmp_path, monkeypatch)

    run, fs, receipt = namespace["run"], namespace["fs"], namespace["receipt"]
    verdicts = run.verdicts
    passed = verdicts[verdicts.verdict == "pass"].groupby("criterion").size()
    scored = verdicts.groupby("criterion").size()
    # §2: refunds_follow_policy 38 of 47; §4: same_state_under_injected 14 of 23; §3: 38 rows of run.replays
    assert (passed["refunds_follow_policy"], scored["refunds_follow_policy"]) == (38, 47)
    assert (passed["same_state_under_injected"], scored["same_state_under_injected"]) == (14, 23)
    assert len(run.replays) == 38
    # §5: six cases, all completed with answer "done"; 2 verified, and one of each failure the table names
    cases = fs.cases
    assert len(cases) == 6 and set(cases.status) == {"completed"} and set(cases.answer) == {"done"}
    assert Counter(fs.receipts.status) == {"verified": 2, "missing": 1, "stale": 1, "hash_mismatch": 1,
                                           "validator_failed": 1}
    summary = namespace["op"].outcome_summary(fs.receipts).iloc[0]
    assert summary[["expected", "verified", "failed"]].tolist() == [6, 2, 4]
    assert summary["verified_share"] == pytest.approx(2 / 6) and summary["check_coverage"] == 1.0
    # the pure classifier: a file modified the day before the run started is stale, whatever its validator said
    assert receipt.status == "stale"
    assert receipt.reason == ("stale: modified at 2026-07-24T09:00:00.000000Z, before the run started at "
                              "2026-07-25T14:00:00.000000Z")


def _readme_table(after: str) -> list[list[str]]:
    """The cells of the README's Markdown table that follows the line ``after`` (header and rule left out)."""
    text = README.read_text(encoding="utf-8")
    lines = text[text.index(after):].splitlines()[1:]
    rows = [line for line in itertools.takewhile(lambda line: line.strip(), lines[1:]) if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def _pass_counts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per criterion, by hand: rows and passing rows."""
    passed = verdicts.assign(ok=verdicts["verdict"] == "pass").groupby("criterion")["ok"]
    return pd.DataFrame({"n": passed.size(), "passed": passed.sum()})


def test_sections_6_to_9_run_as_pasted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sections 6, 6a, 6b, 7 and 9's analysis block, continuing the tour's namespace. Before: 6a's
    runs were made with ``op.run(suite, system=Candidate, out="runs/v2")``, a Candidate defined nowhere
    (NameError), and the figures that close 6a were of a candidate the README only described."""
    namespace = _tour(tmp_path, monkeypatch)
    suite = namespace["suite"]
    release = yaml.safe_load((tmp_path / "demo" / "release.yaml").read_text(encoding="utf-8"))
    thresholds = release["criteria"]

    # §6: the gate, and the do-nothing baseline beside it
    assert len(_run_blocks(namespace, "### 6. The release gate", "### 6a.")) == 2
    run, gate, idle = namespace["run"], namespace["gate"], namespace["idle"]
    assert gate.verdict == "BLOCK"
    assert list(gate.table.columns) == ["criterion", "evaluator", "n", "n_clusters", "passed", "missing", "rate",
                                        "ci_low", "ci_high", "method", "threshold", "verdict", "reason",
                                        "failing_clusters", "vacuous", "reduce"]
    counts, noop = _pass_counts(run.verdicts), _pass_counts(idle.run.verdicts)
    # "recovers... FAILs (0 of 37), same_state_under_injected (14 of 23), answer_matches and state_matches
    # (34 of 47), refunds_follow_policy (38 of 47)"
    assert counts.loc["recovers_from_error_at_issue_refund"].tolist() == [37, 0]
    assert counts.loc["same_state_under_injected"].tolist() == [23, 14]
    assert counts.loc[["answer_matches", "state_matches", "refunds_follow_policy"], "passed"].tolist() == [34, 34, 38]
    with_idle = op.gate(run, baseline=idle).table.set_index("criterion")
    table = _readme_table("On the example (run as above):")
    assert [row[0] for row in table] == list(with_idle.index)
    for criterion, rate, threshold, verdict, noop_rate, passes_when_idle in table:
        n, passed = counts.loc[criterion]
        assert rate == f"{passed / n:.3f}", criterion
        assert threshold == (f"{thresholds[criterion]:.2f}" if criterion in thresholds else "—"), criterion
        assert verdict == with_idle.loc[criterion, "verdict"], criterion
        idle_n, idle_passed = noop.loc[criterion] if criterion in noop.index else (0, 0)
        assert noop_rate == (f"{idle_passed / idle_n:.3f}" if idle_n else "n/a"), criterion
        idle_passes = bool(idle_n) and criterion in thresholds and idle_passed / idle_n >= thresholds[criterion]
        assert passes_when_idle == str(idle_passes) == str(with_idle.loc[criterion, "passes_when_idle"]), criterion
    # the one PASS, by the formula: every row passes, so Clopper–Pearson on n_min = 47² / (23·2² + 1) = 23.75
    assert with_idle.loc["other_order_untouched", "ci_low"] == pytest.approx(stats.beta.ppf(0.025, 2209 / 93, 1))
    assert stats.beta.ppf(0.025, 2209 / 93, 1) >= 0.85
    # "the idle desk passes state_matches on 14 of 47 cases: ord-011 … ord-017 and their injected copies"
    v = idle.run.verdicts
    idle_passes_state = set(v[(v["criterion"] == "state_matches") & (v["verdict"] == "pass")]["case_id"])
    assert idle_passes_state == {f"ord-{i:03d}{copy}" for i in range(11, 18) for copy in ("", "~injected")}

    # §6a: the production version and the candidate, compared case by case
    assert len(_run_blocks(namespace, "### 6a.", "### 6b.")) == 2
    cmp = namespace["cmp"]
    base, candidate = op.load_run("runs/v1"), op.load_run("runs/v2")
    key = ["case_id", "epoch"]
    answers = [frame[frame["criterion"] == "answer_matches"].set_index(key)["verdict"].eq("pass")
               for frame in (base.verdicts, candidate.verdicts)]
    lost = int((answers[0] & ~answers[1]).sum())
    assert (lost, int((~answers[0] & answers[1]).sum()), len(answers[0])) == (22, 0, 47)  # "22 pass→fail"
    diffs = cmp.table.set_index("criterion")
    assert cmp.verdict == "REGRESSION" and diffs.loc["answer_matches", "difference"] == pytest.approx(-22 / 47)
    low, high = diffs.loc["answer_matches", ["ci_low", "ci_high"]]
    assert (math.floor(low * 1000) / 1000, math.ceil(high * 1000) / 1000) == (-0.670, -0.226)
    # an unchanged criterion: ± the exact bound of 0 discordant rows in n_min = 23.75 ("±0.1438 on the example")
    untouched = ["state_matches", "other_order_untouched", "refunds_follow_policy"]
    assert diffs.loc[untouched, "ci_high"].tolist() == pytest.approx([1 - 0.025 ** (93 / 2209)] * 3, abs=1e-12)
    assert round(1 - 0.025 ** (93 / 2209), 4) == 0.1438
    assert diffs.loc["recovers_from_error_at_issue_refund", "n"] == 37  # "(37 rows, ±0.161)"
    assert round(diffs.loc["recovers_from_error_at_issue_refund", "ci_high"], 3) == 0.161
    assert (diffs.drop(index="answer_matches")["verdict"] == "INSUFFICIENT_EVIDENCE").all()  # margin 0.02
    wide = op.compare("runs/v1", "runs/v2", release={**release, "regression": {"margin": 0.15}})
    margins = wide.table.set_index("criterion")["verdict"]
    assert (margins[[*untouched, "same_state_under_injected"]] == "NO_REGRESSION").all()
    assert margins["recovers_from_error_at_issue_refund"] == "INSUFFICIENT_EVIDENCE"

    # §6b: five epochs of every case
    assert len(_run_blocks(namespace, "### 6b.", "### 7.")) == 1
    run = namespace["run"]
    assert run.epochs == 5 and len(run.cases) == 5 * suite.n_cases
    assert all(epochs == [1, 2, 3, 4, 5] for epochs in run.cases.groupby("case_id")["epoch"].apply(sorted))
    reduced = op.reduce_epochs(run)
    assert list(reduced.columns) == ["criterion", "reduce", "k", "cases", "n_clusters", "rate", "ci_low", "ci_high",
                                     "method", "left_out", "reason"]
    assert set(reduced["reduce"]) == {"mean", "pass^5", "pass@5"}
    by_case = op.reduce_epochs(run, reduce=["pass^3", "pass@2"], by_case=True)
    by_hand = [math.comb(c, 3) / math.comb(n, 3) if r == "pass^3" else 1 - math.comb(n - c, 2) / math.comb(n, 2)
               for r, n, c in zip(by_case["reduce"], by_case["epochs"], by_case["passes"], strict=True)]
    assert set(by_case["reduce"]) == {"pass^3", "pass@2"} and by_case["value"].tolist() == pytest.approx(by_hand)

    # §7: plots and the export, whose floats read back bit for bit
    assert len(_run_blocks(namespace, "### 7.", "### 8.")) == 1
    lines = (tmp_path / "gate.md").read_text(encoding="utf-8").splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    for column in ("rate", "ci_low", "ci_high"):
        written = [float(row[header.index(column)]) for row in cells]
        assert written == gate.table[column].tolist(), column  # equal floats, not approximately
    bins = op.slice_table(run, "tool_calls:1,2")
    assert list(dict.fromkeys(bins["bin"])) == ["<1", "[1, 2)", "≥2", "n/a"]

    # §9: per-cluster sums with Dask over the runs named in `pool`, and the gate's interval from them
    blocks = _tour_blocks("### 9. Scale", "### 10. Inspect")
    assert len(blocks) == 2 and "executor=" in blocks[1]  # the executor block: test_section_9_executor_block
    exec(compile(blocks[0], "<README>", "exec"), namespace)
    assert namespace["pool"] == ["runs/v1"]
    sums = namespace["s"]
    rows = base.verdicts
    by_hand_sums = rows.assign(sum=rows["verdict"].eq("pass").astype(int)).groupby(["criterion", "cluster"])["sum"]
    expected = pd.DataFrame({"sum": by_hand_sums.sum(), "count": by_hand_sums.size()})
    pd.testing.assert_frame_equal(sums.sort_index(), expected.sort_index(), check_dtype=False,
                                  check_index_type=False)
    own = op.gate(op.load_runs(["runs/v1"]))
    assert own.reason == ""
    table = own.table.set_index("criterion")
    interval = op.rate_interval_from_sums(sums.loc["answer_matches", "sum"], sums.loc["answer_matches", "count"])
    assert (interval.low, interval.high) == pytest.approx(tuple(table.loc["answer_matches", ["ci_low", "ci_high"]]),
                                                          abs=1e-12)
    # the block's method is the gate's for every criterion, the one-row-per-cluster same_state_under_injected of
    # this clustered run included (the block used method="auto", Clopper–Pearson there)
    assert namespace["method"] == "cluster_t"
    for criterion, row in table.iterrows():
        recipe = op.rate_interval_from_sums(sums.loc[criterion, "sum"], sums.loc[criterion, "count"],
                                            method=namespace["method"])
        assert recipe.method == row["method"], criterion
        assert (recipe.low, recipe.high) == pytest.approx((row["ci_low"], row["ci_high"]), abs=1e-12), criterion
    # "Name the runs": a glob of runs/* pools v1 with the regressed v2 (46 of 94, 0.388–0.601; v2 alone 12 of 47,
    # 0.132–0.423), the interval the pooled gate shows beside BLOCK mixed_systems
    globbed = op.rate_interval_from_sums(*_recipe_sums("runs/*/frames/verdicts.parquet", "answer_matches"))
    mixed = op.gate(op.load_runs(["runs/v1", "runs/v2"]))
    assert mixed.verdict == "BLOCK" and mixed.reason.startswith("mixed_systems:")
    pooled = mixed.table.set_index("criterion").loc["answer_matches"]
    assert (globbed.n, int(pooled["passed"])) == (94, 46)
    assert (globbed.low, globbed.high) == pytest.approx((pooled["ci_low"], pooled["ci_high"]), abs=1e-12)
    assert (_floor3(globbed.low), _ceil3(globbed.high)) == (0.388, 0.601)
    alone = op.gate(candidate).table.set_index("criterion").loc["answer_matches"]
    assert (int(alone["passed"]), int(alone["n"])) == (12, 47)
    assert (_floor3(alone["ci_low"]), _ceil3(alone["ci_high"])) == (0.132, 0.423)
    # "The method": auto on a clustered run's criterion whose clusters hold one row each is Clopper–Pearson, and
    # cluster_t there is capped at it (here equal)
    k, m = _recipe_sums("runs/v1/frames/verdicts.parquet", "same_state_under_injected")
    auto, gated = op.rate_interval_from_sums(k, m), table.loc["same_state_under_injected"]
    assert auto.method == "clopper_pearson" and gated["method"] == "cluster_t"
    assert (_floor3(auto.low), _ceil3(auto.high)) == (0.385, 0.803)
    assert (gated["ci_low"], gated["ci_high"]) == pytest.approx((auto.low, auto.high), abs=1e-12)
    # "22 of its 23 rows passing get 0.780–0.999 from auto (scipy's beta.ppf) and 0.715–0.999 from the gate": the
    # gate's lower end is the monotone CR2 logit-t bound of the matrix reference (tests/_cr2_reference.py, by
    # brute force over every data set with more passes: here the bound of these rows themselves)
    from _cr2_reference import brute_force_low

    k22, m23 = [1] * 22 + [0], [1] * 23
    auto22, gate22 = op.rate_interval_from_sums(k22, m23), op.rate_interval_from_sums(k22, m23, method="cluster_t")
    assert (auto22.low, auto22.high) == pytest.approx((stats.beta.ppf(0.025, 22, 2), stats.beta.ppf(0.975, 23, 1)),
                                                      abs=1e-12)
    assert gate22.low == pytest.approx(brute_force_low(k22, m23, up_to_order=True), abs=1e-9)
    assert gate22.high == pytest.approx(auto22.high, abs=1e-12)  # capped at Clopper–Pearson's
    assert [_floor3(auto22.low), _ceil3(auto22.high), _floor3(gate22.low), _ceil3(gate22.high)] == [
        0.780, 0.999, 0.715, 0.999]
    assert round(auto22.low - gate22.low, 3) == 0.065
    # ... and on an unclustered run: 35 of 50 independent rows, cluster_t equal to Clopper–Pearson
    passes, ones = [1] * 35 + [0] * 15, [1] * 50
    t_iv = op.rate_interval_from_sums(passes, ones, method="cluster_t")
    cp = (stats.beta.ppf(0.025, 35, 16), stats.beta.ppf(0.975, 36, 15))
    exact = op.rate_interval_from_sums(passes, ones)
    assert exact.method == "clopper_pearson"
    assert (exact.low, exact.high) == pytest.approx(cp, abs=1e-12)
    assert (t_iv.low, t_iv.high) == pytest.approx(cp, abs=1e-12)
    assert (_floor3(cp[0]), _ceil3(cp[1])) == (0.553, 0.822)


def test_section_9_dask_sums_of_an_unclustered_run_take_the_gate_s_unclustered_method(
        make_suite: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tour's run is clustered, so the block's ``cluster_t`` branch alone was run; a block
    that chose ``cluster_t`` for every run (``>= 1``) passed. Here ``runs/v1`` is 6 cases, one per cluster, 4
    answering right: the block picks ``clopper_pearson``, as the gate does, and its interval is scipy's
    ``beta.ppf`` for 4 of 6."""
    cases = [{"id": f"c{i}", "input": {"answer": "done" if i < 4 else "no", "n": i}, "expected": {"answer": "done"}}
             for i in range(6)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}])
    monkeypatch.chdir(tmp_path)
    run = op.run(root, out=tmp_path / "runs" / "v1", progress=False)
    (block, _executor) = _tour_blocks("### 9. Scale", "### 10. Inspect")
    namespace: dict[str, Any] = {"__name__": "__main__", "op": op}
    exec(compile(block, "<README>", "exec"), namespace)
    assert namespace["method"] == "clopper_pearson"
    interval = op.rate_interval_from_sums(namespace["crit"]["sum"], namespace["crit"]["count"],
                                          method=namespace["method"])
    assert (interval.low, interval.high) == pytest.approx((stats.beta.ppf(0.025, 4, 3), stats.beta.ppf(0.975, 5, 2)),
                                                          abs=1e-12)
    row = op.gate(run).table.set_index("criterion").loc["answer_matches"]
    assert row["method"] == "clopper_pearson"
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((interval.low, interval.high), abs=1e-12)


def _recipe_sums(pattern: str, criterion: str) -> tuple[Any, Any]:
    """Per-cluster (passes, rows) of ``criterion`` summed over the verdicts files ``pattern`` matches, with pandas."""
    v = pd.concat([pd.read_parquet(f, columns=["criterion", "cluster", "verdict"]) for f in sorted(glob.glob(pattern))])
    s = v.assign(k=v["verdict"].eq("pass").astype(int)).groupby(["criterion", "cluster"])["k"].agg(["sum", "count"])
    return s.loc[criterion, "sum"], s.loc[criterion, "count"]


def _floor3(x: float) -> float:
    return math.floor(x * 1000) / 1000


def _ceil3(x: float) -> float:
    return math.ceil(x * 1000) / 1000


@pytest.mark.slow
def test_section_9_executor_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Section 9's run on a Dask cluster, with the block's own alternative for one machine. Two names
    in it are of an outside resource, and are replaced as the block says: the scheduler ``tcp://scheduler:8786``
    by its comment's ``Client(LocalCluster(n_workers=4))``, and the shared folder ``/shared/suites/stateful-agent``
    by the example's folder here. Before, that alternative was a NameError: the block imported ``Client`` only."""
    init_example("stateful-agent", tmp_path / "demo")
    monkeypatch.chdir(tmp_path)
    (block,) = [b for b in _tour_blocks("### 9. Scale", "### 10. Inspect") if "executor=" in b]
    scheduler, shared = 'Client("tcp://scheduler:8786")', '"/shared/suites/stateful-agent"'
    assert block.count(scheduler) == block.count(shared) == 1
    alternative = re.search(r"# or,?(?: on this machine:)? (Client\(LocalCluster\(.*\)\))", block)
    assert alternative is not None
    block = block.replace(scheduler, alternative.group(1)).replace(shared, repr(str(tmp_path / "demo")))
    namespace: dict[str, Any] = {"__name__": "__main__", "op": op}  # the tour's `import oloproof_nb as op`
    try:
        exec(compile(block, "<README>", "exec"), namespace)
    finally:
        client = namespace.get("client")
        if client is not None:
            cluster = client.cluster
            client.close()
            cluster.close()
    # "the frames are the same as a serial run's"
    serial = op.run(op.load_suite("demo"), progress=False)
    columns = ["case_id", "criterion", "verdict", "reason", "epoch"]
    pd.testing.assert_frame_equal(namespace["run"].verdicts[columns], serial.verdicts[columns])


@pytest.mark.slow
def test_section_10_inspect_block(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Section 10 on a real Inspect AI log in ``logs/`` (tests/_inspect_task.py: four samples over two epochs,
    ``topic`` billing for s1, s2 and shipping for 3, s4; the world kept under ``world``; s4 raises). Before, its
    last line showed ``run.panel("sample-7")``, a sample no log need hold: 'no case 'sample-7' in run …'. The log
    is a copy of the one tests/_analysis/test_inspect_log.py reads, made by the same command once per session."""
    from _inspect_logs import refund_desk, shared_logs

    with shared_logs(tmp_path_factory, "refund-desk", refund_desk) as root:
        shutil.copytree(root / "logs", tmp_path / "logs")
        shutil.copytree(root / "json", tmp_path / "json")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "__main__", "op": op}  # the tour's `import oloproof_nb as op`
    assert len(_run_blocks(namespace, "### 10. Inspect", "## Notebooks")) == 1
    run = namespace["run"]
    # by hand from the task's table: match is C on s1, s2 and 3 in both epochs, none on s4 (raised)
    row = op.gate(run, release={"criteria": {"match": 0.9}, "allow_approximate_methods": True}).table.iloc[0]
    assert row[["criterion", "n", "passed", "missing", "n_clusters"]].tolist() == ["match", 8, 6, 2, 2]
    assert row["verdict"] == "INSUFFICIENT_EVIDENCE" and row["reason"].startswith("too_few_clusters")  # 2 topics < 20
    # the commands beside it, with the thresholds the block gives written as release.yaml: BLOCK, exit 1
    (tmp_path / "release.yaml").write_text("criteria: {match: 0.9}\nallow_approximate_methods: true\n",
                                           encoding="utf-8")
    assert main(["gate", "logs/", "--release", "release.yaml", "--cluster", "topic", "--state-key", "world"]) == 1
    (log,) = (tmp_path / "logs").glob("*.eval")
    assert main(["report", str(log.relative_to(tmp_path)), "--out", "report.html"]) == 1
    assert (tmp_path / "report.html").stat().st_size > 0


def test_section_1a_expected_changes_passes_the_gold_run_on_its_own_case() -> None:
    """1a's ``expected_changes`` (expected.state from a gold run) judged by ``state_matches`` in ``changes`` mode:
    the gold state passes its own expectation — a table empty before that gains rows, a row deleted, a table
    emptied, a value changed — and a do-nothing agent fails it. Before, 1a said to write every ABSENT ``after``
    as ``{"$absent": true}``, and the gold run of a task that wrote the first refund failed (refunds.$absent)."""
    namespace: dict[str, Any] = {"op": op}
    _run_blocks(namespace, "### 1a. Wrapping", "### 2. Run it")
    expected_changes = namespace["expected_changes"]
    judge = StateMatches(type="state_matches", mode="changes").judge
    before = {"refunds": {}, "holds": {"h1": {"sku": "A"}, "h2": {"sku": "B"}}, "carts": {"c1": {"n": 1}},
              "orders": {"1": {"status": "delivered", "total": 40.0}}}
    after = {"refunds": {"21": {"order_id": 1, "amount": 40.0}}, "holds": {"h2": {"sku": "B"}}, "carts": {},
             "orders": {"1": {"status": "refunded", "total": 40.0}}}
    expected = expected_changes(before, after)
    assert expected == {"refunds": {"21": {"order_id": 1, "amount": 40.0}}, "holds": {"h1": {"sku": {"$absent": True}}},
                        "carts": {}, "orders": {"1": {"status": "refunded"}}}
    assert judge(expected, after, initial=before).verdicts[0]["verdict"] == "pass"
    idle = judge(expected, before, initial=before).verdicts[0]
    assert idle["verdict"] == "fail" and idle["reason"].startswith("5 of 5 expected paths differ")
    # a null that became a record, and a deleted record holding an empty list; the recipe skipped an
    # ABSENT ``after`` only where the old value was {} or [], so it wrote refund.$absent beside the new amount and
    # left the deleted record's items unexpected: the gold run failed its own case (3,270 of 20,000 random pairs)
    before = {"o": {"o1": {"refund": None}, "o2": {"status": "open", "items": []}}}
    after = {"o": {"o1": {"refund": {"amount": 40.0}}}}
    expected = expected_changes(before, after)
    assert expected == {"o": {"o1": {"refund": {"amount": 40.0}},
                              "o2": {"status": {"$absent": True}, "items": {"$absent": True}}}}
    assert judge(expected, after, initial=before).verdicts[0]["verdict"] == "pass"
    assert judge(expected, before, initial=before).verdicts[0]["verdict"] == "fail"



def test_section_1a_to_case_writes_a_dataclass_database_as_its_snapshot_stores_it() -> None:
    """1a's ``to_case``: a task's ``initial_db`` and ``expected_db`` of a bank kept in dataclasses with
    ``Decimal`` balances and ``date`` stamps become an ``initial_state`` equal to the stored snapshot of the
    database after ``reset`` (the round trip of section 1), and an ``expected.state`` the gold database passes and a
    transfer of the wrong amount fails, under ``changes`` mode with the README's ``by_key`` rule."""
    import dataclasses
    import datetime as dt
    from decimal import Decimal

    from oloproof_nb._core.case import Case
    from oloproof_nb._core.trajectory import Trajectory
    from oloproof_nb._run.sandbox import run_case

    @dataclasses.dataclass
    class Transfer:
        transfer_id: str
        amount: Decimal
        created: dt.date

    @dataclasses.dataclass
    class Database:
        accounts: dict[str, Decimal]
        transfers: list[Transfer]

        @classmethod
        def from_json(cls, data: dict[str, Any]) -> Database:
            return cls({k: Decimal(str(v)) for k, v in data["accounts"].items()},
                       [Transfer(t["transfer_id"], Decimal(str(t["amount"])), dt.date.fromisoformat(t["created"]))
                        for t in data["transfers"]])

    namespace: dict[str, Any] = {"op": op}
    _run_blocks(namespace, "### 1a. Wrapping", "### 2. Run it")
    row = {"transfer_id": "T1", "amount": 10.0, "created": "2026-01-02"}
    task = {"task_id": 7, "instruction": "Transfer 50.0 from A1 to A2.", "seed": 107, "outputs": ["T2"],
            "initial_db": {"accounts": {"A1": 500.0, "A2": 120.5}, "transfers": [row]},
            "expected_db": {"accounts": {"A1": 450.0, "A2": 170.5},
                            "transfers": [row, {"transfer_id": "T2", "amount": 50.0, "created": "2026-01-15"}]}}
    case = namespace["to_case"](task, Database)
    assert case["id"] == "7" and case["expected"]["state"] == {
        "accounts": {"A1": "450.0", "A2": "170.5"},
        "transfers": [{"transfer_id": "T2", "amount": "50.0", "created": "2026-01-15"}]}

    class Bank:
        def reset(self, state: dict[str, Any]) -> None:
            self.db = Database.from_json(state)

        def snapshot(self) -> Database:
            return self.db

        def run(self, given: dict[str, Any]) -> Trajectory:
            return Trajectory(answer="ok")

    loaded = Case.model_validate({**case, "cluster": "7", "digest": "d", "source_id": "7"})
    stored = run_case(Bank(), loaded, run_id="r", system_version=None, timeout_s=None).env
    assert stored is not None and stored["state"] == case["initial_state"]  # nothing changed by itself
    judge = StateMatches(type="state_matches", mode="changes", lists={"transfers": {"by_key": "transfer_id"}}).judge
    final = namespace["to_jsonable_python"](Database.from_json(task["expected_db"]))
    assert judge(case["expected"]["state"], final, initial=case["initial_state"]).verdicts[0]["verdict"] == "pass"
    wrong = namespace["to_jsonable_python"](Database.from_json(
        {**task["expected_db"], "transfers": [row, {"transfer_id": "T2", "amount": 51.0, "created": "2026-01-15"}]}))
    assert judge(case["expected"]["state"], wrong, initial=case["initial_state"]).verdicts[0]["verdict"] == "fail"

_DRAWING_DESKS = '''
import random

import oloproof_nb as op


class Unseeded(op.RecordedAgent):          # a draw through rec.model after the tool the fault replaces
    version = "draws-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return self.state

    def book(self, slot):
        self.state["bookings"][slot] = "ann"
        return {"ok": True}

    def draw(self, rec, input):
        return rec.model("give_up", random.random)

    def act(self, input, rec):
        out = rec.tool("book", self.book, slot=input["slot"])
        self.draw(rec, input)
        return "booked" if out.get("ok") else "no room"


class Seeded(Unseeded):                    # section 6b's recipe: seeded by the input, the draw and the epoch
    epoch = 1

    def run(self, input, epoch=1):
        self.epoch = epoch
        return super().run(input)

    def replay(self, trajectory, *, checkpoint, change, epoch=1):
        self.epoch = epoch
        return super().replay(trajectory, checkpoint=checkpoint, change=change)

    def draw(self, rec, input):
        n = 0
        return rec.model("give_up", lambda key: random.Random(key).random(), key=f"{input['slot']}#{n}#{self.epoch}")
'''


@pytest.mark.parametrize("system", ["Unseeded", "Seeded"])
def test_section_6b_a_draw_through_rec_model_after_the_checkpoint_is_live(tmp_path: Path, system: str) -> None:
    """Section 6b said a ``RecordedAgent`` routing its random choices through ``rec.model`` needed no
    seed, "model calls are recorded and replayed"; a newcomer's calendar desk drawing ``rec.model("give_up",
    random.random)`` after its booking tool had 21 of 66 fault replays ``missing`` (control_replay_diverged),
    as section 1a says of calls after the checkpoint. 6b now says so, and gives the seeded draw, which reproduces."""
    text = README.read_text(encoding="utf-8")
    section = " ".join(text[text.index("### 6b. Epochs"):text.index("### 7. Slices")].split())
    assert "needs neither: model calls are recorded and replayed" not in section
    assert "its control replay makes every call after the checkpoint live" in section
    assert "lambda key: random.Random(key).random()" in section
    root = tmp_path / "suite"
    root.mkdir()
    (root / "desks.py").write_text(_DRAWING_DESKS, encoding="utf-8")
    cases = [{"id": f"c{n}", "input": {"slot": f"s{n}"}, "initial_state": {"bookings": {}},
              "expected": {"answer": "booked", "state": {"bookings": {f"s{n}": "ann"}}}} for n in range(4)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (root / "oloproof.yaml").write_text(yaml.safe_dump({
        "name": "draws", "system": f"desks:{system}", "epochs": 2, "evaluators": [
            {"type": "answer_matches"}, {"type": "state_matches", "mode": "changes"},
            {"type": "fault_recovery", "tool": "book", "fault": "error", "honest_answers": ["no room"]}]}),
        encoding="utf-8")
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False, cache=False)
    replays = run.replays
    assert len(replays) == 8  # 4 cases x 2 epochs, each calling book once
    if system == "Unseeded":
        assert not replays["control_reproduced"].any() and (replays["verdict"] == "missing").all()
        assert replays["reason"].str.contains(r"^control_replay_diverged: step 1 differs: recorded model call "
                                              r"give_up -> .*; replayed model call give_up -> ").all()
    else:
        assert replays["control_reproduced"].all()
        assert (replays["verdict"] == "pass").all() and (replays["reason"] == "admitted_failure").all()
