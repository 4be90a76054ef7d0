"""op.compare: pairing by (case id, digest), flips by hand, the paired difference against an independent computation
(tests/_cr2_reference.py: CR2 and Bell–McCaffrey from the hat matrix, every data set with more hits by brute force,
Newcombe's square-and-add; or by hand), McNemar against statsmodels, the regression rule and its boundaries, and
the acceptance test on the bundled example."""

from __future__ import annotations

import copy
import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from _cr2_reference import paired_interval
from _metamorphic_systems import relabel
from statsmodels.stats.contingency_tables import mcnemar

import oloproof_nb as op
from oloproof_nb._analysis.compare import COMPARE
from oloproof_nb._analysis.compare_pairing import FLIPS, PAIRED_VERDICTS, UNPAIRED
from oloproof_nb._analysis.run_checks import changed_checks
from oloproof_nb._config.imports import import_system
from oloproof_nb.examples import init_example


class Answerer:
    """Answers ``input["answer"]``, except a wrong answer for the tags in ``broken`` and a crash for ``crash``."""

    def __init__(self, broken: set[str] = frozenset(), crash: set[str] = frozenset(), version: str = "a") -> None:
        self.broken, self.crash, self.version, self.state = set(broken), set(crash), version, {}

    def reset(self, state: dict[str, Any]) -> None:
        self.state = copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def run(self, input: dict[str, Any]) -> dict[str, Any]:
        if input["tag"] in self.crash:
            raise RuntimeError("boom")
        answer = "wrong" if input["tag"] in self.broken else input["answer"]
        return {"steps": [], "answer": answer, "status": "completed"}


def _cases(n: int, cluster_size: int = 1) -> list[dict[str, Any]]:
    return [{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}", "answer": "ok"}, "expected": {"answer": "ok"},
             "cluster": f"g{i // cluster_size:02d}"} for i in range(n)]


def _run(suite: Path, out: Path, **system: Any) -> op.Run:
    return op.run(op.load_suite(suite), system=lambda: Answerer(**system), out=out, progress=False)


ALLOW = {"allow_approximate_methods": True}

# -- unclustered: flips by hand, the difference by direct computation, McNemar as statsmodels -----------------


@pytest.fixture
def unclustered(make_suite: Callable[..., Path], tmp_path: Path) -> tuple[op.Run, op.Run]:
    root = make_suite(_cases(30), evaluators=[{"type": "answer_matches"}])
    base = _run(root, tmp_path / "base", broken={"c00", "c01", "c02"})
    cand = _run(root, tmp_path / "cand", broken={f"c{i:02d}" for i in range(2, 10)}, crash={"c29"}, version="b")
    return base, cand


def test_flips_and_difference_by_hand_unclustered(unclustered: tuple[op.Run, op.Run]) -> None:
    base, cand = unclustered
    cmp = op.compare(base, cand)
    row = cmp.table.set_index("criterion").loc["answer_matches"]
    # by hand: c03..c09 broke (7) and c29 crashed (missing): 8 pass -> not pass; c00, c01 were mended (2)
    assert (row["pass_to_fail"], row["fail_to_pass"], row["missing"], row["n"]) == (8, 2, 1, 30)
    assert row["base_rate"] == 27 / 30 and row["candidate_rate"] == 21 / 30
    assert row["difference"] == pytest.approx((2 - 8) / 30, abs=1e-15)
    flips = cmp.flips
    assert set(flips.loc[flips["change"] == "pass_to_fail", "case_id"]) == {f"c{i:02d}" for i in range(3, 10)} | {
        "c29"}
    assert set(flips.loc[flips["change"] == "fail_to_pass", "case_id"]) == {"c00", "c01"}
    assert flips.set_index("case_id").loc["c29", "candidate"] == "missing"
    # every cluster holds one row: the exact McNemar test, equal to statsmodels'
    expected = mcnemar(np.array([[19, 8], [2, 1]]), exact=True).pvalue
    assert row["mcnemar_p"] == pytest.approx(expected, abs=1e-12)
    # the interval is the paired one on the per-case sums counted here, computed from its definition
    b = [0, 0, 0] + [1] * 27
    k = [1, 1, 0] + [0] * 7 + [1] * 19 + [0]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(paired_interval(b, k, [1] * 30), abs=1e-10)
    assert row["method"] == "cluster_t" and row["n_clusters"] == 30


def test_frames_have_their_columns(unclustered: tuple[op.Run, op.Run]) -> None:
    cmp = op.compare(*unclustered)
    assert list(cmp.table.columns) == COMPARE.names == [
        "criterion", "base_rate", "candidate_rate", "difference", "ci_low", "ci_high", "method", "n", "n_clusters",
        "pass_to_fail", "fail_to_pass", "missing", "mcnemar_p", "margin", "verdict", "reason", "one_sided"]
    assert list(cmp.unpaired.columns) == UNPAIRED.names == ["case_id", "reason", "base_digest", "candidate_digest"]
    # every run carries epoch (1 without epochs), so the paired frames keep it beside the case id
    assert list(cmp.verdicts.columns) == ["case_id", "epoch", *PAIRED_VERDICTS.names[1:]]
    assert PAIRED_VERDICTS.names == [
        "case_id", "cluster", "criterion", "base", "candidate", "base_reason", "candidate_reason"]
    assert list(cmp.flips.columns) == ["case_id", "epoch", *FLIPS.names[1:]]
    assert FLIPS.names == [
        "case_id", "cluster", "criterion", "change", "base", "candidate", "base_reason", "candidate_reason"]
    assert len(cmp.verdicts) == 30 and cmp.n_paired == 30


def test_run_folders_and_swapped_sides(unclustered: tuple[op.Run, op.Run]) -> None:
    base, cand = unclustered
    forward = op.compare(str(base.directory), cand.directory)
    back = op.compare(cand, base).table.iloc[0]
    row = forward.table.iloc[0]
    assert back["difference"] == -row["difference"]
    assert (back["pass_to_fail"], back["fail_to_pass"]) == (row["fail_to_pass"], row["pass_to_fail"])
    assert (back["ci_low"], back["ci_high"]) == pytest.approx((-row["ci_high"], -row["ci_low"]), abs=1e-12)


def test_a_run_compared_with_an_identical_one(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The same behaviour run twice (one run given twice is refused: see test_commands_compare)."""
    root = make_suite(_cases(30), evaluators=[{"type": "answer_matches"}])
    base = _run(root, tmp_path / "base", broken={"c00", "c01", "c02"})
    again = _run(root, tmp_path / "again", broken={"c00", "c01", "c02"})
    cmp = op.compare(base, again, release={"regression": {"margin": 0.2}, "min_clusters": 20})
    row = cmp.table.iloc[0]
    assert row["difference"] == 0 and cmp.flips.empty and cmp.unpaired.empty
    assert row["ci_low"] < 0 < row["ci_high"]  # never zero width: ± the bound of 0 discordant rows in 30
    assert row["ci_high"] == pytest.approx(1 - 0.025 ** (1 / 30), abs=1e-12)
    assert row["ci_low"] == pytest.approx(-(1 - 0.025 ** (1 / 30)), abs=1e-12)
    assert row["mcnemar_p"] == 1.0 and cmp.verdict == "NO_REGRESSION"


def test_a_candidate_that_fails_every_case_the_base_passed(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The other end: 30 singletons, all pass in the base and fail in the candidate. By hand (README §6a): the net
    loss is 30 of 30 rows, whose lower bound is the all-pass bound (α/2)^(1/30) = 1 − u₀ and whose upper end is 1;
    the net gain is 0 of 30, bounds 0 and u₀. So low = −1 − √(0² + 0²) = −1 and high = −1 + √(u₀² + u₀²)."""
    root = make_suite(_cases(30), evaluators=[{"type": "answer_matches"}])
    base = _run(root, tmp_path / "base")
    cand = _run(root, tmp_path / "cand", broken={f"c{i:02d}" for i in range(30)}, version="b")
    cmp = op.compare(base, cand, release={"regression": {"margin": 0.2}, "min_clusters": 20})
    row = cmp.table.iloc[0]
    assert (row["base_rate"], row["candidate_rate"], row["difference"]) == (1.0, 0.0, -1.0)
    assert (row["pass_to_fail"], row["fail_to_pass"], row["n"], row["n_clusters"]) == (30, 0, 30, 30)
    u0 = 1 - 0.025 ** (1 / 30)
    assert row["ci_low"] == pytest.approx(-1.0, abs=1e-12)
    assert row["ci_high"] == pytest.approx(-1.0 + math.sqrt(2) * u0, abs=1e-12)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(paired_interval([1] * 30, [0] * 30, [1] * 30), abs=1e-10)
    assert row["mcnemar_p"] == pytest.approx(mcnemar(np.array([[0, 30], [0, 0]]), exact=True).pvalue, abs=1e-15)
    assert row["method"] == "cluster_t" and row["verdict"] == cmp.verdict == "REGRESSION"


def test_min_clusters_counts_the_paired_clusters(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """Each run has 21 clusters of two cases, but one cluster's cases were edited in the candidate's suite, so 20
    clusters are paired: min_clusters 20 decides on them (the interval is the paired one of those 20 clusters,
    from its definition), min_clusters 21 is too_few_clusters although each run alone has 21."""
    cases = _cases(42, cluster_size=2)
    base = _run(make_suite(cases, evaluators=[{"type": "answer_matches"}]), tmp_path / "base", broken={"c00"})
    edited = copy.deepcopy(cases)
    for case in edited[40:]:  # cluster g20
        case["input"]["answer"] = case["expected"]["answer"] = "new"
    cand = _run(make_suite(edited, evaluators=[{"type": "answer_matches"}]), tmp_path / "cand",
                broken={"c02", "c03", "c05"}, version="b")
    release = {**ALLOW, "regression": {"margin": 0.5}}
    exact = op.compare(base, cand, release={**release, "min_clusters": 20}).table.iloc[0]
    # by hand: g00 mended c00 (1 -> 2), g01 lost both (2 -> 0), g02 lost c05 (2 -> 1), 17 more unchanged
    assert (exact["n"], exact["n_clusters"], exact["pass_to_fail"], exact["fail_to_pass"]) == (40, 20, 3, 1)
    expected = paired_interval([1, 2, 2] + [2] * 17, [2, 0, 1] + [2] * 17, [2] * 20)
    assert (exact["ci_low"], exact["ci_high"]) == pytest.approx(expected, abs=1e-10)
    assert exact["ci_low"] > -0.5 and exact["verdict"] == "NO_REGRESSION"
    assert exact["reason"] == "ci_low_at_or_above_minus_margin"
    short = op.compare(base, cand, release={**release, "min_clusters": 21}).table.iloc[0]
    assert short["verdict"] == "INSUFFICIENT_EVIDENCE" and short["reason"].startswith("too_few_clusters")
    assert (short["ci_low"], short["ci_high"]) == pytest.approx(expected, abs=1e-10)


def test_a_lost_row_never_clears_a_margin_that_no_change_cannot(make_suite: Callable[..., Path],
                                                                 tmp_path: Path) -> None:
    """The reported false pass, through op.compare: 21 clusters of 1–3 cases; a candidate equal to the base
    but for one case turned from pass to fail was NO_REGRESSION at margin 0.1 (ci_low −0.075) while an
    unchanged one was INSUFFICIENT_EVIDENCE (−0.191). Losing a row must never look better than no change."""
    sizes = [1, 1, 3, 3, 1, 2, 2, 1, 1, 1, 3, 1, 2, 3, 3, 1, 1, 3, 2, 3, 2]
    passes = [0, 1, 0, 2, 1, 2, 1, 1, 0, 0, 2, 1, 0, 1, 1, 1, 0, 2, 0, 2, 2]
    cases, fails = [], set()
    for c, (size, passed) in enumerate(zip(sizes, passes, strict=True)):
        for j in range(size):
            tag = f"g{c:02d}r{j}"
            cases.append({"id": tag, "input": {"tag": tag, "answer": "ok"}, "expected": {"answer": "ok"},
                          "cluster": f"g{c:02d}"})
            fails |= {tag} if j >= passed else set()
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}])
    base = _run(root, tmp_path / "base", broken=fails)
    same = _run(root, tmp_path / "same", broken=fails, version="b")
    lost = _run(root, tmp_path / "lost", broken=fails | {"g06r0"}, version="b")
    release = {**ALLOW, "regression": {"margin": 0.1}}
    unchanged = op.compare(base, same, release=release)
    regressed = op.compare(base, lost, release=release)
    u, r = unchanged.table.iloc[0], regressed.table.iloc[0]
    assert (u["pass_to_fail"], r["pass_to_fail"], r["fail_to_pass"], r["n_clusters"]) == (0, 1, 0, 21)
    assert r["ci_low"] <= u["ci_low"] and r["ci_high"] <= u["ci_high"]
    assert u["ci_low"] == pytest.approx(-(1 - 0.025 ** (92 / 1600)), abs=1e-12)  # n_min = 40²/92
    assert unchanged.verdict == regressed.verdict == "INSUFFICIENT_EVIDENCE"


# -- the regression rule --------------------------------------------------------------------------------------


def test_margin_at_the_interval_end_through_compare(unclustered: tuple[op.Run, op.Run], tmp_path: Path) -> None:
    base, _ = unclustered
    assert base.suite_root is not None
    cand = _run(base.suite_root, tmp_path / "worse", broken={f"c{i:02d}" for i in range(15)}, version="c")
    same = _run(base.suite_root, tmp_path / "same", broken={"c00", "c01", "c02"})  # no change: the base again
    low = op.compare(base, same).table.iloc[0]["ci_low"]
    at = op.compare(base, same, release={"regression": {"margin": -low}}).table.iloc[0]
    assert at["verdict"] == "NO_REGRESSION" and at["reason"].startswith("ci_low_at_or_above_minus_margin")
    below = op.compare(base, same, release={"regression": {"margin": math.nextafter(-low, 0)}}).table.iloc[0]
    assert below["verdict"] == "INSUFFICIENT_EVIDENCE"
    high = op.compare(base, cand).table.iloc[0]["ci_high"]
    assert high < 0
    tie = op.compare(base, cand, release={"regression": {"margin": -high}})
    assert tie.table.iloc[0]["verdict"] == "INSUFFICIENT_EVIDENCE" and tie.verdict == "INSUFFICIENT_EVIDENCE"
    past = op.compare(base, cand, release={"regression": {"margin": math.nextafter(-high, 0)}})
    assert past.table.iloc[0]["verdict"] == "REGRESSION" and past.verdict == "REGRESSION"


def test_too_few_clusters_and_report_only(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    root = make_suite(_cases(6), evaluators=[{"type": "answer_matches"}, {"type": "state_matches",
                                                                            "mode": "subset"}])
    base, cand = _run(root, tmp_path / "b"), _run(root, tmp_path / "c", broken={"c00"})
    cmp = op.compare(base, cand, release={"regression": {"criteria": ["answer_matches"]}})
    t = cmp.table.set_index("criterion")
    assert t.loc["answer_matches", "verdict"] == "INSUFFICIENT_EVIDENCE"
    assert t.loc["answer_matches", "reason"].startswith("too_few_clusters")
    assert t.loc["state_matches", "verdict"] == "REPORT_ONLY" and math.isnan(t.loc["state_matches", "margin"])
    assert t.loc["state_matches", "n"] == 0  # the cases expect no state
    loose = op.compare(base, cand, release={"min_clusters": 2, "regression": {"margin": 0.9}})
    assert loose.table.set_index("criterion").loc["state_matches", "reason"] == "no_evidence"
    assert loose.verdict == "INSUFFICIENT_EVIDENCE"
    one = op.compare(base, cand, release={"min_clusters": 2, "regression": {"margin": 0.9,
                                                                            "criteria": ["answer_matches"]}})
    assert one.verdict == "NO_REGRESSION"


def test_clustered_needs_approximate_methods_and_bootstrap_is_replaced(make_suite: Callable[..., Path],
                                                                      tmp_path: Path) -> None:
    root = make_suite(_cases(48, cluster_size=2), evaluators=[{"type": "answer_matches"}])
    broken = {f"c{i:02d}" for i in range(0, 12)}
    base, cand = _run(root, tmp_path / "b"), _run(root, tmp_path / "c", broken=broken)
    strict = op.compare(base, cand)
    # the code, then the key that decides it and whose settings (as the gate's): the code alone named nothing to set
    assert strict.clustered and strict.table.iloc[0]["reason"] == (
        "approximate_methods_not_allowed: the paired runs are clustered (a case's epochs, a copy and its source, or "
        "cases given one cluster share a cluster), and the default release configuration (the candidate run has no "
        "release.yaml: give one that does with op.compare(base, candidate, release=...) to compare these runs) "
        "does not allow clustered (approximate) intervals: `allow_approximate_methods: true` decides them (README "
        "section 6)")
    assert strict.verdict == "INSUFFICIENT_EVIDENCE"
    given = op.compare(base, cand, release={"allow_approximate_methods": False})
    assert "and the release configuration given does not allow" in given.table.iloc[0]["reason"]
    cmp = op.compare(base, cand, release={**ALLOW, "method": "cluster_bootstrap"})
    row = cmp.table.iloc[0]
    assert row["method"] == "cluster_t" and "instead of cluster_bootstrap" in row["reason"]
    assert math.isnan(row["mcnemar_p"])  # clusters of two rows: McNemar does not apply
    # the cluster sums by hand: clusters g00..g05 lost both rows
    assert (row["n_clusters"], row["pass_to_fail"], row["difference"]) == (24, 12, -0.25)
    expected = paired_interval([2] * 24, [0] * 6 + [2] * 18, [2] * 24)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(expected, abs=1e-10)
    assert cmp.verdict == "REGRESSION"


# -- pairing ---------------------------------------------------------------------------------------------------


def test_unpaired_and_changed_cases_are_listed_and_left_out(make_suite: Callable[..., Path],
                                                            tmp_path: Path) -> None:
    cases = _cases(8)
    base_root = make_suite(cases, evaluators=[{"type": "answer_matches"}])
    edited = copy.deepcopy(cases[:7])  # c07 dropped
    edited[2]["input"]["answer"] = "new"  # c02's digest changes
    edited[2]["expected"]["answer"] = "new"
    edited[5]["cluster"] = "g04"  # c05 joins c04's cluster: the digest does not cover the cluster
    edited.append({"id": "c99", "input": {"tag": "c99", "answer": "ok"}, "expected": {"answer": "ok"}})
    cand_root = make_suite(edited, evaluators=[{"type": "answer_matches"}])
    base = _run(base_root, tmp_path / "b", broken={"c02"})
    cand = _run(cand_root, tmp_path / "c")
    cmp = op.compare(base, cand)
    got = dict(zip(cmp.unpaired["case_id"], cmp.unpaired["reason"], strict=True))
    assert got == {"c02": "digest_changed", "c07": "only_in_base", "c99": "only_in_candidate"}
    digests = cmp.unpaired.set_index("case_id")
    assert pd.isna(digests.loc["c99", "base_digest"]) and pd.isna(digests.loc["c07", "candidate_digest"])
    assert digests.loc["c02", "base_digest"] != digests.loc["c02", "candidate_digest"]
    assert "c02" not in set(cmp.verdicts["case_id"])  # never paired: its flip would be the edit, not the system
    row = cmp.table.iloc[0]
    assert (row["n"], row["fail_to_pass"], row["pass_to_fail"]) == (6, 0, 0)
    assert row["n_clusters"] == 5  # c04 and c05 share a cluster in the candidate: merged
    clusters = cmp.verdicts.set_index("case_id")["cluster"]
    assert clusters["c05"] == clusters["c04"] == "g04"
    assert any("3 cases left out" in note for note in cmp.notes)


def test_runs_that_share_no_case_are_an_error(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """Two different suites gave "0 paired cases", INSUFFICIENT_EVIDENCE, exit 1: a verdict about nothing.
    One case id in common, even with its digest changed, is a comparison (of nothing paired, said so)."""
    a = _run(make_suite(_cases(4), evaluators=[{"type": "answer_matches"}]), tmp_path / "a")
    others = [dict(c, id=f"x{i}") for i, c in enumerate(_cases(4))]
    b = _run(make_suite(others, evaluators=[{"type": "answer_matches"}]), tmp_path / "b")
    with pytest.raises(op.OloproofError, match=r"share no case id, so there is nothing to pair"):
        op.compare(a, b)
    edited = copy.deepcopy(_cases(4))
    edited[0]["input"]["answer"] = edited[0]["expected"]["answer"] = "new"
    c = _run(make_suite(edited[:1], evaluators=[{"type": "answer_matches"}]), tmp_path / "c")
    cmp = op.compare(a, c)
    assert cmp.n_paired == 0 and set(cmp.unpaired["reason"]) == {"digest_changed", "only_in_base"}
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE"


def test_a_run_that_recorded_nothing_yet_is_unfinished_not_another_suite(make_suite: Callable[..., Path],
                                                                         tmp_path: Path) -> None:
    """A candidate killed before its first case shares no case id with the base: it was told to compare two runs
    of one suite; it is a run that did not finish (INSUFFICIENT_EVIDENCE, the reason says so)."""
    import json

    root = make_suite(_cases(4), evaluators=[{"type": "answer_matches"}])
    base = _run(root, tmp_path / "b")
    shutil.copytree(base.directory, tmp_path / "c")
    (tmp_path / "c" / "cases.jsonl").write_text("", encoding="utf-8")
    shutil.rmtree(tmp_path / "c" / "frames", ignore_errors=True)
    manifest = json.loads((tmp_path / "c" / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (tmp_path / "c" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    cmp = op.compare(base, tmp_path / "c")
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE" and cmp.n_paired == 0
    assert "unfinished: the run did not finish (0 of 4 cases recorded)" in cmp.reason


class Shouter(Answerer):
    """Answers in capitals for the tags in ``broken``: ``answer_matches`` (normalized) passes, an exact check fails."""

    def run(self, input: dict[str, Any]) -> dict[str, Any]:
        answer = input["answer"].upper() if input["tag"] in self.broken else input["answer"]
        return {"steps": [], "answer": answer, "status": "completed"}


EXACT = {"type": "answer_matches", "criterion": "answer_exact", "normalize": False}


def test_a_rule_given_without_a_check_the_candidate_dropped_says_it_is_weaker(
        make_suite: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The base run's release.yaml lists answer_exact in regression.criteria; the candidate's suite
    dropped that check (its system now fails it on 12 of 60 cases: by hand 48/60 − 60/60 = −0.2) and its own
    release.yaml lists answer_matches alone. By default that is release_changed; given with --release (as that
    reason says to), the rule decided NO_REGRESSION, exit 0 (answer_matches unchanged: 0 ± u₀, u₀ = 1 − 0.025^(1/60)
    = 0.0597 < margin 0.1), and nothing said it was weaker than the base run's own: the comparison weighed the
    base's criteria among those both runs judge only, which the dropped check is not. The verdict stays the rule
    given's; the criterion it leaves out is named, as a margin loosened is."""
    from oloproof_nb.cli import main

    listed = {"regression": {"margin": 0.1, "criteria": ["answer_matches", "answer_exact"]}}
    base = op.run(op.load_suite(make_suite(_cases(60), evaluators=[{"type": "answer_matches"}, EXACT],
                                           release=listed)), system=Answerer, out=tmp_path / "base", progress=False)
    cand_root = make_suite(_cases(60), evaluators=[{"type": "answer_matches"}],
                           release={"regression": {"margin": 0.1, "criteria": ["answer_matches"]}})
    cand = op.run(op.load_suite(cand_root), system=lambda: Shouter(broken={f"c{i:02d}" for i in range(12)}),
                  out=tmp_path / "cand", progress=False)
    assert op.compare(base, cand).reason.startswith("release_changed: ")
    given = op.compare(base, cand, release=cand_root / "release.yaml")
    row = given.table.iloc[0]
    assert (row["criterion"], row["difference"], given.verdict) == ("answer_matches", 0.0, "NO_REGRESSION")
    assert row["ci_low"] == pytest.approx(-(1 - 0.025 ** (1 / 60)), abs=1e-12)
    assert given.relaxed == ("regression.criteria leaves out answer_exact",)
    assert given.notes[0] == (f"compared with {cand_root / 'release.yaml'}: 1 setting weaker than the base run's own "
                              "release settings: regression.criteria leaves out answer_exact")
    assert main(["compare", str(base.directory), str(cand.directory), "--release",
                 str(cand_root / "release.yaml")]) == 0
    assert capsys.readouterr().out.rstrip().endswith(", by 1 setting weaker than the base run's own release settings")
    # a base run made without release.yaml gates every criterion it judges (the defaults), the dropped one included
    bare = op.run(op.load_suite(make_suite(_cases(60), evaluators=[{"type": "answer_matches"}, EXACT])),
                  system=Answerer, out=tmp_path / "bare", progress=False)
    assert op.compare(bare, cand, release=cand_root / "release.yaml").relaxed == (
        "regression.margin 0.02 → 0.1", "regression.criteria leaves out answer_exact")
    # no regression.criteria given: the dropped check gets its own row (not_in_both_runs), so nothing is weaker
    every = op.compare(base, cand, release={"regression": {"margin": 0.1}})
    assert every.relaxed == () and every.verdict == "INSUFFICIENT_EVIDENCE"


def test_criteria_in_one_run_only(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    a = make_suite(_cases(4), evaluators=[{"type": "answer_matches"}])
    b = make_suite(_cases(4), evaluators=[{"type": "state_matches", "mode": "subset"}])
    cmp = op.compare(_run(a, tmp_path / "a"), _run(b, tmp_path / "b"))
    assert cmp.table["criterion"].tolist() == ["answer_matches"] and cmp.verdict == "INSUFFICIENT_EVIDENCE"
    assert cmp.table["reason"].iloc[0].startswith("not_in_both_runs; the base run judges it")
    assert "criterion answer_matches is judged only in the base run" in cmp.notes


def test_a_pooled_run_is_refused(unclustered: tuple[op.Run, op.Run]) -> None:
    base, cand = unclustered
    with pytest.raises(op.OloproofError, match="more than once"):
        op.compare(op.load_runs([base.directory, cand.directory]), cand)


def test_a_pool_of_one_run_is_that_run(unclustered: tuple[op.Run, op.Run]) -> None:
    """``op.load_runs([dir])`` of the candidate's own folder, given as the base, was compared with the
    candidate (its frames carry a ``run_id`` column the run's own lack): every difference 0, NO_REGRESSION at a
    margin the ±bound clears. One run given twice is refused, pooled or not, on either side."""
    base, cand = unclustered
    release = {"regression": {"margin": 0.2}}
    for pair in ((op.load_runs([cand.directory]), cand), (cand, op.load_runs([cand.directory])),
                 (op.load_runs([cand.directory]), op.load_runs([cand.directory]))):
        with pytest.raises(op.OloproofError, match=f"the same run {cand.run_id}"):
            op.compare(*pair, release=release)
    pooled = op.compare(op.load_runs([base.directory]), cand, release=release)  # another run, pooled: compared
    assert pooled.table.equals(op.compare(base, cand, release=release).table)


class EpochAnswerer(Answerer):
    """An Answerer that answers wrong on every case in the epochs of ``wrong_epochs``."""

    def __init__(self, wrong_epochs: set[int] = frozenset(), version: str = "a") -> None:
        super().__init__(version=version)
        self.wrong_epochs = set(wrong_epochs)

    def run(self, input: dict[str, Any], epoch: int) -> dict[str, Any]:  # type: ignore[override]
        out = super().run(input)
        return {**out, "answer": "wrong"} if epoch in self.wrong_epochs else out


def test_a_pooled_run_is_paired_by_the_epochs_of_its_runs(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """A pooled run's ``epochs`` is the sum of its runs' (two 1-epoch shards of 20 cases each: "2 epochs"), but
    each of its cases has epoch 1 only. Against a 2-epoch candidate failing every epoch 2 (rate 40/80 against
    the base's 40/40) the epochs check passed (2 == 2), epoch 1 was paired and epoch 2 left unseen:
    NO_REGRESSION at margin 0.2. The epochs that must match are each run's own; shards of one epoch against a
    1-epoch candidate pair every case run."""
    cases = _cases(40)
    shards = [make_suite(cases[:20], evaluators=[{"type": "answer_matches"}]),
              make_suite(cases[20:], evaluators=[{"type": "answer_matches"}])]
    full = make_suite(cases, evaluators=[{"type": "answer_matches"}])
    pooled = op.load_runs([_run(root, tmp_path / f"shard{i}").directory for i, root in enumerate(shards)])
    assert pooled.epochs == 2 and set(pooled.cases["epoch"]) == {1}
    worse = op.run(op.load_suite(full), system=lambda: EpochAnswerer({2}, version="b"), out=tmp_path / "worse",
                   progress=False, epochs=2)
    v = worse.verdicts
    assert ((v["verdict"] == "pass").sum(), len(v)) == (40, 80)  # by hand: every epoch-2 row fails
    release = {**ALLOW, "regression": {"margin": 0.2}}
    with pytest.raises(op.OloproofError, match=r"has 1 epoch\(s\) and the candidate run .* 2; .*same epochs"):
        op.compare(pooled, worse, release=release)
    with pytest.raises(op.OloproofError, match=r"has 2 epoch\(s\) and the candidate run .* 1; .*same epochs"):
        op.compare(worse, pooled, release=release)
    one = _run(full, tmp_path / "one", version="b")
    cmp = op.compare(pooled, one, release=release)  # one epoch on each side: every case run paired
    assert cmp.n_paired == 40 and cmp.unpaired.empty and cmp.table.iloc[0]["n"] == 40
    mixed = op.load_runs([pooled.runs[0].directory, op.run(op.load_suite(shards[1]), system=lambda: Answerer(),
                                                           out=tmp_path / "two", progress=False,
                                                           epochs=2).directory])
    with pytest.raises(op.OloproofError, match=r"pools runs made with different epochs \(1, 2\)"):
        op.compare(mixed, worse, release=release)


class Scheduled(Answerer):
    """Answers right on case ``c<i>`` in epoch e when ``plan(i, e)``."""

    def __init__(self, plan: Callable[[int, int], bool], version: str) -> None:
        super().__init__(version=version)
        self.plan = plan

    def run(self, input: dict[str, Any], epoch: int) -> dict[str, Any]:  # type: ignore[override]
        ok = self.plan(int(input["tag"][1:]), epoch)
        return {"steps": [], "answer": input["answer"] if ok else "wrong", "status": "completed"}


def _pass3_runs(make_suite: Callable[..., Path], tmp_path: Path) -> tuple[op.Run, op.Run, dict[str, Any]]:
    """Two runs of 100 cases × 3 epochs gated by pass^3: the base passes c00–c49 in every epoch and c50–c99 in
    epoch 1 only (by hand: mean 200/300, pass^3 50/100), the candidate every case in epochs 1 and 2 only (mean
    200/300, pass^3 0/100); and their release settings."""
    release = {**ALLOW, "criteria": {"answer_matches": {"threshold": 0.4, "reduce": "pass^3"}},
               "regression": {"margin": 0.15}}
    root = make_suite(_cases(100), evaluators=[{"type": "answer_matches"}], release=release, epochs=3)
    suite = op.load_suite(root)
    base = op.run(suite, system=lambda: Scheduled(lambda i, e: i < 50 or e == 1, "a"), out=tmp_path / "b",
                  progress=False)
    cand = op.run(suite, system=lambda: Scheduled(lambda i, e: e < 3, "b"), out=tmp_path / "c", progress=False)
    return base, cand, release


def test_a_reduced_criterion_is_compared_on_its_reduced_values(make_suite: Callable[..., Path],
                                                               tmp_path: Path) -> None:
    """release.yaml gates answer_matches with pass^3 over 3 epochs. The base passes c00–c49 in every epoch and
    c50–c99 in epoch 1 only (by hand: mean 200/300, pass^3 50/100); the candidate passes every case in epochs
    1 and 2 only (mean 200/300, pass^3 0/100). The rows were compared, not the reduced values: difference 0,
    NO_REGRESSION at margin 0.15 (exit 0) while the gated pass^3 fell from 0.5 to 0 (its gate FAILs). Now
    each case is one row of its pass^3 value: −0.5, 50 cases pass to fail, REGRESSION."""
    base, cand, release = _pass3_runs(make_suite, tmp_path)
    for run, passed in ((base, 200), (cand, 200)):
        assert ((run.verdicts["verdict"] == "pass").sum(), len(run.verdicts)) == (passed, 300)
    assert op.gate(cand).table.iloc[0]["verdict"] == "FAIL"
    cmp = op.compare(base, cand)
    row = cmp.table.iloc[0]
    assert (row["base_rate"], row["candidate_rate"], row["difference"]) == (0.5, 0.0, -0.5)
    assert (row["n"], row["n_clusters"], row["pass_to_fail"], row["fail_to_pass"]) == (100, 100, 50, 0)
    expected = paired_interval([1] * 50 + [0] * 50, [0] * 100, [1] * 100)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(expected, abs=1e-10)
    assert row["verdict"] == cmp.verdict == "REGRESSION" and "pass^3: n counts cases" in row["reason"]
    assert len(cmp.flips) == 100  # the rows that changed are still listed: epoch 3 of c00–c49, epoch 2 of c50–c99
    # the same runs with the mean: the rows' difference, as before
    mean = op.compare(base, cand, release={**release, "criteria": {"answer_matches": 0.4}}).table.iloc[0]
    assert (mean["difference"], mean["n"], mean["pass_to_fail"], mean["fail_to_pass"]) == (0.0, 300, 50, 50)
    # pass^2 over 3 epochs: fractional values, no paired interval; pass^4: more than the runs' 3 epochs, a mistake
    # in the rule refused as the gate refuses it (tests/_analysis/test_compare_reductions.py)
    for text, why in (("pass^2", "reduce_not_paired"), ("pass@2", "reduce_not_paired")):
        other = {**release, "criteria": {"answer_matches": {"threshold": 0.4, "reduce": text}}}
        got = op.compare(base, cand, release=other)
        assert (got.table.iloc[0]["verdict"], got.table.iloc[0]["reason"].split(";")[0]) == (
            "INSUFFICIENT_EVIDENCE", why)
    with pytest.raises(op.ConfigError, match=r"criteria\.answer_matches\.reduce: pass\^4 needs at least 4 epochs"):
        op.compare(base, cand, release={**release, "criteria": {"answer_matches": {"threshold": 0.4,
                                                                                  "reduce": "pass^4"}}})
    # one case per cluster: the pass^3 rows are unclustered, as in the gate (exact Clopper–Pearson there), so
    # allow_approximate_methods is not needed; the case runs made it look clustered (approximate_methods_not_allowed)
    strict = {key: value for key, value in release.items() if key != "allow_approximate_methods"}
    assert op.gate(cand, release=strict).table.iloc[0]["method"] == "clopper_pearson"
    assert op.compare(base, cand, release=strict).table.iloc[0]["verdict"] == "REGRESSION"


def test_pass_1_over_equal_epochs_is_compared_as_the_mean(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """pass^1 and pass@1 of a case are its pass rate over its epochs; with 3 paired epochs in every case
    they were never decided (``reduce_not_paired``: fractional values), though their mean over cases is the mean
    over case runs (by hand, the runs above: 200/300 in both, 50 rows pass to fail and 50 fail to pass). Now the
    mean's paired row, decided as the mean is (NO_REGRESSION at margin 0.15)."""
    base, cand, release = _pass3_runs(make_suite, tmp_path)
    mean = op.compare(base, cand, release={**release, "criteria": {"answer_matches": 0.4}}).table.iloc[0]
    assert (mean["difference"], mean["n"], mean["pass_to_fail"], mean["fail_to_pass"]) == (0.0, 300, 50, 50)
    for text in ("pass^1", "pass@1"):
        got = op.compare(base, cand, release={**release, "criteria": {"answer_matches": {"threshold": 0.4,
                                                                                          "reduce": text}}})
        row = got.table.iloc[0]
        assert (row["base_rate"], row["candidate_rate"]) == (200 / 300, 200 / 300)
        assert (row["n"], row["pass_to_fail"], row["fail_to_pass"], row["missing"]) == (300, 50, 50, 0)
        assert (row["ci_low"], row["ci_high"], row["n_clusters"]) == (mean["ci_low"], mean["ci_high"], 100)
        assert (row["verdict"], got.verdict) == (mean["verdict"], "NO_REGRESSION") and "n counts case runs" in (
            row["reason"])


def test_a_rule_given_without_the_runs_reduction_says_it_is_weaker(make_suite: Callable[..., Path],
                                                                  tmp_path: Path) -> None:
    """The runs of the test above (pass^3 0.5 → 0, the mean 2/3 in both) compared with a rule given
    as ``oloproof compare --release rule.yaml`` holding only ``regression`` and ``allow_approximate_methods``, as a
    file written for comparing does: the reduction fell back to the mean, NO_REGRESSION, exit 0, and neither
    ``relaxed`` nor a note said the runs' own release.yaml reduced by pass^3 (its margin and allow_approximate_methods
    are the runs' own). The verdict stays the one the rule given decides; the weaker setting is named."""
    base, cand, release = _pass3_runs(make_suite, tmp_path)
    rule = tmp_path / "rule.yaml"
    rule.write_text(yaml.safe_dump({**ALLOW, "regression": {"margin": 0.15}}), encoding="utf-8")
    cmp = op.compare(base, cand, release=rule)
    assert (cmp.verdict, cmp.table.iloc[0]["difference"], cmp.table.iloc[0]["n"]) == ("NO_REGRESSION", 0.0, 300)
    assert cmp.relaxed == ('reductions.answer_matches "pass^3" → "mean"',)
    assert cmp.notes[0] == (f"compared with {rule}: 1 setting weaker than the base run's own release settings: "
                            'reductions.answer_matches "pass^3" → "mean"')
    assert op.compare(base, cand, release=release).relaxed == ()  # the runs' own rule: REGRESSION, nothing weaker


def test_a_rule_given_is_weighed_against_the_defaults_when_the_base_had_no_release(make_suite: Callable[..., Path],
                                                                                    tmp_path: Path) -> None:
    """A base run made without release.yaml and a candidate whose suite added one with margin 0.9. By
    default that is release_changed (the base's rule is the defaults); given with --release, the candidate's own
    file was taken as the base's own rule, so its NO_REGRESSION (12 of 24 cases lost) named nothing weaker."""
    loose = {"regression": {"margin": 0.9}}
    base = _run(make_suite(_cases(24), evaluators=[{"type": "answer_matches"}]), tmp_path / "b")
    root = make_suite(_cases(24), evaluators=[{"type": "answer_matches"}], release=loose)
    cand = _run(root, tmp_path / "c", broken={f"c{i:02d}" for i in range(12)}, version="b")
    assert op.compare(base, cand).reason.startswith("release_changed: ")
    cmp = op.compare(base, cand, release=root / "release.yaml")
    assert cmp.verdict == "NO_REGRESSION"  # the rule given decides
    assert cmp.relaxed == ("regression.margin 0.02 → 0.9",)
    # the base stored no settings: the defaults it is weighed against are named so, not as "its own"
    assert cmp.weaker_than == "the default release settings (the base run has none of its own)"
    assert cmp.notes[0].endswith("1 setting weaker than the default release settings (the base run has none of its "
                                 "own): regression.margin 0.02 → 0.9")
    assert op.compare(base, cand, release={"regression": {"margin": 0.02}}).relaxed == ()
    stored = op.compare(cand, base, release={"regression": {"margin": 0.95}})  # a base that stored its file
    assert (stored.relaxed, stored.weaker_than) == (("regression.margin 0.9 → 0.95",),
                                                    "the base run's own release settings")

def test_a_run_resumed_after_an_abrupt_end_says_so_in_the_comparison(tmp_path: Path) -> None:
    """A candidate whose process was killed as it started c4 (a kill from outside, or the system's own
    shell tool: not blamed on it) ran c4 again on --resume; its gate says so under the table, but ``oloproof
    compare`` of it with an uninterrupted run said NO_REGRESSION, exit 0, without a word of the second try. The
    comparison's notes carry the gate's line, naming the side; an uninterrupted pair has none."""
    from _reliability_systems import EVALUATORS, killed_then_resumed, standard_cases, write_suite

    root = write_suite(tmp_path / "suite", standard_cases(6), evaluators=EVALUATORS,
                       release={"criteria": {"answer_matches": 0.2}})
    clean = op.run(root, out=tmp_path / "clean", progress=False)
    resumed = killed_then_resumed(root, tmp_path / "resumed", "c4")
    line = ("was resumed after 1 abrupt end of the run's process (not seen by oloproof run); the 1 case run in "
            "flight was run again: case 'c4'; isolation: process judges a crash as the case's error")
    notes = op.compare(clean, resumed).notes
    assert [n for n in notes if "abrupt" in n] == [f"the candidate run {resumed.run_id} {line}"]
    assert [n for n in op.compare(resumed, clean).notes if "abrupt" in n] == [f"the base run {resumed.run_id} {line}"]
    again = op.run(root, out=tmp_path / "again", progress=False)
    assert op.compare(clean, again).notes == ()  # no line for a run never stopped, not even an empty one


# -- release.yaml: regression ---------------------------------------------------------------------------------


def test_release_regression_settings(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    root = make_suite(_cases(4), evaluators=[{"type": "answer_matches"}],
                      release={"criteria": {"answer_matches": 0.5}, "regression": {"margin": 0.3}})
    run, again = _run(root, tmp_path / "r"), _run(root, tmp_path / "again")
    assert op.compare(run, again).margin == 0.3  # the candidate's release.yaml
    assert op.compare(run, again, release={}).margin == 0.02  # the default
    with pytest.raises(op.ConfigError, match=r"regression\.criteria.*'nope' is not judged by both runs"):
        op.compare(run, again, release={"regression": {"criteria": ["nope"]}})
    with pytest.raises(op.ConfigError, match=r"regression\.margin"):
        op.compare(run, again, release={"regression": {"margin": 1.5}})
    with pytest.raises(op.ConfigError, match=r"regression.*allowed: margin, criteria"):
        op.compare(run, again, release={"regression": {"margins": 0.1}})
    bad = tmp_path / "release.yaml"
    bad.write_text(yaml.safe_dump({"regression": {"criteria": []}}), encoding="utf-8")
    with pytest.raises(op.ConfigError, match=r"release\.yaml.*regression\.criteria"):
        op.compare(run, again, release=bad)


@pytest.mark.parametrize("release", [5, ["release.yaml"]])
def test_a_release_of_another_type_is_refused_as_the_gate_refuses_it(make_suite: Callable[..., Path],
                                                                      tmp_path: Path, release: Any) -> None:
    # release=5 was a TypeError from the file reading ("expected str, bytes or os.PathLike object"); op.gate says
    # what it takes
    root = make_suite(_cases(4), evaluators=[{"type": "answer_matches"}])
    run, again = _run(root, tmp_path / "r"), _run(root, tmp_path / "again")
    with pytest.raises(op.OloproofError, match=r"^compare: release must be a ReleaseConfig, a dict or the path of a "
                                               rf"release\.yaml, got {type(release).__name__}$"):
        op.compare(run, again, release=release)


# -- acceptance: the bundled example with a planted regression ------------------------------------------------

#: The planted regression: the candidate answers "done" on these orders (their injected copies too), so
#: answer_matches fails there; its state, its tool calls and everything else stay the same.
BROKEN = {f"ord-{i:03d}" for i in range(1, 13)}
#: 24 source clusters (23 of two scored rows, ord-018 of one: its copy is labeled invalid): with no row changed
#: the interval is ±(1 − 0.025^(1/23.75)) = ±0.144, so only a margin of at least that can be cleared; 0.15 is the
#: honest margin for this suite.
MARGIN = 0.15


@pytest.fixture(scope="module")
def example_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, op.Run]:
    tmp = tmp_path_factory.mktemp("compare-example")
    suite = init_example("stateful-agent", tmp / "suite")
    desk = import_system(suite, "refund_desk:RefundDesk")

    class Broken(desk):  # type: ignore[misc, valid-type]
        version = "refund-desk-1.1-broken"

        def act(self, input: dict[str, Any], rec: Any) -> str:
            answer = str(super().act(input, rec))
            return "done" if input.get("order_id") in BROKEN else answer

    loaded = op.load_suite(suite)
    runs = {"base": op.run(loaded, out=tmp / "base", progress=False),
            "again": op.run(loaded, out=tmp / "again", progress=False),
            "broken": op.run(loaded, system=Broken, out=tmp / "broken", progress=False)}
    yield runs
    shutil.rmtree(tmp, ignore_errors=True)


def test_planted_regression_on_the_example(example_runs: dict[str, op.Run]) -> None:
    base, broken = example_runs["base"], example_runs["broken"]
    cmp = op.compare(base, broken, release={**ALLOW, "regression": {"margin": MARGIN}})
    t = cmp.table.set_index("criterion")
    assert t.loc["answer_matches", "verdict"] == "REGRESSION"
    for criterion in ("state_matches", "other_order_untouched", "refunds_follow_policy", "same_state_under_injected"):
        assert t.loc[criterion, "verdict"] == "NO_REGRESSION", criterion
        assert t.loc[criterion, "difference"] == 0 and t.loc[criterion, "pass_to_fail"] == 0
    # 37 scored fault replays in 23 clusters (n_min 21.06): ±0.161, wider than the margin
    assert t.loc["recovers_from_error_at_issue_refund", "verdict"] == "INSUFFICIENT_EVIDENCE"
    assert cmp.verdict == "REGRESSION"
    # the flips by hand: every answer_matches row of a broken order that passed in the base run
    v, cases = base.verdicts, base.cases
    order_of = {cid: cid.split("~")[0] for cid in cases["case_id"]}
    passed = v[(v["criterion"] == "answer_matches") & (v["verdict"] == "pass")]
    expected = {cid for cid in passed["case_id"] if order_of[cid] in BROKEN}
    assert len(expected) == 22
    assert set(cmp.flips["case_id"]) == expected and set(cmp.flips["criterion"]) == {"answer_matches"}
    assert (cmp.flips["change"] == "pass_to_fail").all()
    # the difference, directly: (candidate passes − base passes) / rows
    cv = broken.verdicts[broken.verdicts["criterion"] == "answer_matches"]
    direct = ((cv["verdict"] == "pass").sum() - (passed.shape[0])) / len(cv)
    assert t.loc["answer_matches", "difference"] == pytest.approx(direct, abs=1e-15) == -22 / 47
    # README §6a's figures: −0.468 [−0.670, −0.226] (rounded outward); the untouched criteria ±0.1438, the
    # exact bound of 0 in n_min = 47²/(23·2² + 1) = 23.75 (2209/93); the fault replays ±0.161
    low, high = t.loc["answer_matches", ["ci_low", "ci_high"]]
    assert (math.floor(low * 1000) / 1000, math.ceil(high * 1000) / 1000) == (-0.670, -0.226)
    assert t.loc["state_matches", "ci_high"] == pytest.approx(1 - 0.025 ** (93 / 47**2), abs=1e-12)
    assert round(t.loc["state_matches", "ci_high"], 4) == 0.1438
    assert round(t.loc["recovers_from_error_at_issue_refund", "ci_high"], 3) == 0.161
    # with the default margin of 0.02, 24 source cases cannot rule out a small regression: insufficient evidence
    strict = op.compare(base, broken).table.set_index("criterion")
    assert strict.loc["answer_matches", "verdict"] == "REGRESSION"
    assert (strict.drop(index="answer_matches")["verdict"] == "INSUFFICIENT_EVIDENCE").all()


def test_the_example_compared_with_a_rerun_and_not_with_itself(example_runs: dict[str, op.Run]) -> None:
    release = {**ALLOW, "regression": {"margin": MARGIN}}
    cmp = op.compare(example_runs["base"], example_runs["again"], release=release)
    assert (cmp.table["difference"] == 0).all() and cmp.flips.empty and cmp.unpaired.empty
    assert (cmp.table["pass_to_fail"] == 0).all() and (cmp.table["fail_to_pass"] == 0).all()
    assert cmp.n_paired == 48 and cmp.table.set_index("criterion").loc["answer_matches", "n"] == 47  # ord-018~inj.
    with pytest.raises(op.OloproofError, match="the base and the candidate are the same run"):  # a
        op.compare(example_runs["base"], example_runs["base"], release=release)  # trivial NO_REGRESSION before


def test_runs_of_different_epochs_are_refused(make_suite: Callable[..., Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Each case run is paired with the same epoch of the other run: a 1-epoch base against a 3-epoch
    candidate paired epoch 1 only and left the candidate's other epochs unseen, so a candidate failing
    epochs 2 and 3 of every case was NO_REGRESSION (exit 0)."""
    root = make_suite(_cases(4), evaluators=[{"type": "answer_matches"}])
    one = _run(root, tmp_path / "one")
    three = op.run(op.load_suite(root), system=lambda: Answerer(), out=tmp_path / "three", progress=False,
                   epochs=3)
    with pytest.raises(op.OloproofError, match=r"has 1 epoch\(s\) and the candidate run .* 3; .*same epochs"):
        op.compare(one, three)
    from _reliability_systems import main_in_process, one_error_line

    out = main_in_process(capsys, "compare", str(one.directory), str(three.directory))
    assert out.returncode == 2 and "same epochs" in one_error_line(out.stderr)
    again = op.run(op.load_suite(root), system=lambda: Answerer(), out=tmp_path / "again", progress=False,
                   epochs=3)
    assert op.compare(three, again).n_paired == 12  # the same epochs: every case run paired


def test_a_metamorphic_criterion_whose_transform_is_not_checked_is_not_decided(
        example_runs: dict[str, op.Run], tmp_path: Path) -> None:
    """As in the gate: until a transform is checked its relation's rows hold every pair, the ones labeled
    invalid among them. Half the example's labels set invalid (validity 0.5 < 0.85): compare decided
    NO_REGRESSION on all 24 pairs; now transform_not_checked, in whichever run it is not checked."""
    suite = Path(shutil.copytree(example_runs["base"].suite_root, tmp_path / "suite"))
    labels = suite / "labels" / "injected.jsonl"
    lines = labels.read_text(encoding="utf-8").splitlines()
    halved = [line.replace('"valid": true', '"valid": false') if i % 2 else line for i, line in enumerate(lines)]
    labels.write_text("\n".join(halved) + "\n", encoding="utf-8")
    unchecked = op.run(op.load_suite(suite), out=tmp_path / "unchecked", progress=False)
    release = {**ALLOW, "regression": {"margin": MARGIN}}
    for base, cand in ((example_runs["base"], unchecked), (unchecked, example_runs["base"])):
        row = op.compare(base, cand, release=release).table.set_index("criterion").loc["same_state_under_injected"]
        assert (row["verdict"], row["reason"].split(";")[0]) == ("INSUFFICIENT_EVIDENCE", "transform_not_checked")
    checked = op.compare(example_runs["base"], example_runs["again"], release=release).table
    assert checked.set_index("criterion").loc["same_state_under_injected", "verdict"] == "NO_REGRESSION"


# -- a check dropped or changed between the two suites ---------------------------------------------------------

AGAIN = {"type": "answer_matches", "criterion": "answer_again"}


def test_a_check_the_base_gates_and_the_candidate_dropped_is_never_no_regression(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The candidate's suite dropped `answer_again`, the check its system fails: compare judged the criteria both
    runs judge, so only `answer_matches` (unchanged) was compared and the candidate got NO_REGRESSION."""
    base_root = make_suite(_cases(24), evaluators=[{"type": "answer_matches"}, AGAIN],
                           release={"criteria": {"answer_matches": 0.5, "answer_again": 0.5},
                                    "regression": {"margin": 0.2}})
    cand_root = make_suite(_cases(24), evaluators=[{"type": "answer_matches"}],
                           release={"criteria": {"answer_matches": 0.5}, "regression": {"margin": 0.2}})
    base, cand = _run(base_root, tmp_path / "b"), _run(cand_root, tmp_path / "c")
    cmp = op.compare(base, cand)
    table = cmp.table.set_index("criterion")
    assert table.loc["answer_matches", "verdict"] == "NO_REGRESSION"
    assert table.loc["answer_again", "verdict"] == "INSUFFICIENT_EVIDENCE" and table.loc["answer_again", "n"] == 0
    assert table.loc["answer_again", "reason"].startswith("not_in_both_runs; the base run judges it")
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE"
    assert " answer_again: n/a n=0 " in repr(cmp)  # no difference to show
    listed = op.compare(base, cand, release={"regression": {"margin": 0.2, "criteria": ["answer_matches"]}})
    assert listed.verdict == "NO_REGRESSION" and list(listed.table["criterion"]) == ["answer_matches"]  # on purpose


def test_a_check_configured_differently_is_never_no_regression(make_suite: Callable[..., Path],
                                                               tmp_path: Path) -> None:
    """The candidate's suite loosened `answer_again` (normalize on): its flips mix the check's change with the
    system's, and only a note said so while the verdict read NO_REGRESSION."""
    release = {"criteria": {"answer_again": 0.5}, "regression": {"margin": 0.2}}
    base_root = make_suite(_cases(24), evaluators=[{**AGAIN, "normalize": False}], release=release)
    cand_root = make_suite(_cases(24), evaluators=[AGAIN], release=release)
    same_root = make_suite(_cases(24), evaluators=[{**AGAIN, "normalize": False}], release=release)
    base = _run(base_root, tmp_path / "b")
    assert op.compare(base, _run(same_root, tmp_path / "s")).verdict == "NO_REGRESSION"
    cmp = op.compare(base, _run(cand_root, tmp_path / "c"))
    row = cmp.table.set_index("criterion").loc["answer_again"]
    assert (row["verdict"], row["reason"].split(";")[0]) == ("INSUFFICIENT_EVIDENCE", "check_changed")
    assert row["n"] == 24 and row["difference"] == 0  # the interval is still shown
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE"


def test_a_check_written_differently_but_the_same_is_not_changed(make_suite: Callable[..., Path],
                                                                 tmp_path: Path) -> None:
    """Writing out the criterion name a check already had, or listing its paths in another order, changes
    nothing: it read as check_changed (INSUFFICIENT_EVIDENCE) on a harmless edit of the suite."""
    release = {"criteria": {"answer_matches": 0.5}, "regression": {"margin": 0.2}}
    state = {"type": "state_unchanged", "paths": ["a", "b"], "absent_ok": True}
    base_root = make_suite(_cases(24), evaluators=[{"type": "answer_matches"}, state], release=release)
    cand_root = make_suite(_cases(24), evaluators=[{"type": "answer_matches", "criterion": "answer_matches"},
                                                   {**state, "paths": ["b", "a"]}], release=release)
    cmp = op.compare(_run(base_root, tmp_path / "b"), _run(cand_root, tmp_path / "c"))
    assert "check_changed" not in " ".join(cmp.table["reason"]) and cmp.verdict == "NO_REGRESSION"


def test_a_fault_criterion_with_calls_every_against_calls_first_is_check_changed(tmp_path: Path) -> None:
    """README §3: runs with ``calls: first`` and with ``calls: every`` judge the fault criterion
    differently, so ``op.compare`` calls it ``check_changed``; ``calls: first`` written out is the default: no
    change."""
    from _fault_systems import write_suite as write_fault_suite

    runs = {calls: op.run(write_fault_suite(tmp_path / str(calls), calls=calls), out=tmp_path / f"run-{calls}",
                          progress=False) for calls in (None, "first", "every")}

    def reasons(candidate: str) -> dict[str, str]:
        table = op.compare(runs[None], runs[candidate]).table
        return {c: r.split(";")[0] for c, r in zip(table["criterion"], table["reason"], strict=True)}

    fault = "recovers_from_error_at_issue_refund"
    every = reasons("every")
    assert every[fault] == "check_changed" and [c for c, r in every.items() if r == "check_changed"] == [fault]
    assert "check_changed" not in reasons("first").values()


# -- the code of a check: python checks and registered validators ---------------------------------------------

STRICT_CHECK = "def done(case, initial_state, final_state, trajectory):\n    return trajectory.answer == 'ok'\n"
LOOSE_CHECK = "def done(case, initial_state, final_state, trajectory):\n    return True\n"


def _check_suite(make_suite: Callable[..., Path], code: str) -> Path:
    root = make_suite(_cases(24), evaluators=[{"type": "python", "check": "checks:done"}],
                      release={"criteria": {"done": 0.5}, "regression": {"margin": 0.2}})
    (root / "checks.py").write_text(code, encoding="utf-8")
    return root


def test_a_python_check_whose_code_was_edited_is_check_changed(make_suite: Callable[..., Path],
                                                                tmp_path: Path) -> None:
    """The same oloproof.yaml, but checks.py loosened between the runs (`return True`): the candidate breaks 12
    cases and the loosened check still passes them all. The evaluator's settings are the same, so compare read
    the runs as comparable and said NO_REGRESSION."""
    root = _check_suite(make_suite, STRICT_CHECK)
    base = _run(root, tmp_path / "b")
    again = _run(root, tmp_path / "again")  # the same code: comparable
    assert op.compare(base, again).verdict == "NO_REGRESSION"
    (root / "checks.py").write_text(LOOSE_CHECK, encoding="utf-8")
    broken = {f"c{i:02d}" for i in range(12)}
    cand = _run(root, tmp_path / "c", broken=broken)
    assert (cand.verdicts["verdict"] == "pass").all()  # the loosened check is what the candidate ran
    cmp = op.compare(base, cand)
    row = cmp.table.set_index("criterion").loc["done"]
    assert (row["verdict"], row["reason"].split(";")[0]) == ("INSUFFICIENT_EVIDENCE", "check_changed")
    assert "the code of checks:done differs" in row["reason"]
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE"
    assert "checks:done" in changed_checks(base, cand)["done"]


METADATA_CHECK = ("def done(case, initial_state, final_state, trajectory):\n"
                  "    return trajectory.answer == case.metadata['want']\n")


def test_a_python_check_given_other_metadata_is_check_changed(make_suite: Callable[..., Path],
                                                              tmp_path: Path) -> None:
    """A python check compares with what the case's metadata holds (the README's way to check a reply's required
    outputs); the digest leaves metadata out. The candidate's case file wrote its own wrong answer into the
    metadata of the 12 cases it breaks: every case stayed paired, the check passed them all, NO_REGRESSION. A
    check never given the metadata (answer_matches) still shows the regression; a rerun with the same
    metadata is comparable."""
    cases = [{**case, "metadata": {"want": "ok", "tag": "t"}} for case in _cases(24)]
    evaluators = [{"type": "python", "check": "checks:done"}, {"type": "answer_matches"}]
    release = {"criteria": {"done": 0.5}, "regression": {"margin": 0.2, "criteria": ["done"]}}
    root = make_suite(cases, evaluators=evaluators, release=release, folder="b")
    (root / "checks.py").write_text(METADATA_CHECK, encoding="utf-8")
    base, again = _run(root, tmp_path / "base"), _run(root, tmp_path / "again")
    assert op.compare(base, again).verdict == "NO_REGRESSION"
    broken = {f"c{i:02d}" for i in range(12)}
    edited = [{**case, "metadata": {"want": "wrong" if case["id"] in broken else "ok", "tag": "t"}} for case in cases]
    other = make_suite(edited, evaluators=evaluators, release=release, folder="c")
    (other / "checks.py").write_text(METADATA_CHECK, encoding="utf-8")
    cand = _run(other, tmp_path / "cand", broken=broken)
    assert cand.verdicts.query("criterion == 'done'")["verdict"].eq("pass").all()
    cmp = op.compare(base, cand)
    assert cmp.n_paired == 24 and cmp.unpaired.empty  # the digest cannot see the metadata
    table = cmp.table.set_index("criterion")
    assert (table.loc["done", "verdict"], table.loc["done", "reason"].split(";")[0]) == ("INSUFFICIENT_EVIDENCE",
                                                                                         "check_changed")
    assert "metadata" in table.loc["done", "reason"] and "'c00'" in table.loc["done", "reason"]
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE"
    assert table.loc["answer_matches", "pass_to_fail"] == 12 and "check_changed" not in table.loc["answer_matches",
                                                                                                   "reason"]
    tagged = [{**case, "metadata": {"want": "ok", "tag": "u"}} for case in cases]  # no check is given it: comparable
    plain = {"regression": {"margin": 0.2}}
    runs = [_run(make_suite(c, evaluators=[{"type": "answer_matches"}], release=plain, folder=f), tmp_path / f"r{f}")
            for c, f in ((cases, "e"), (tagged, "f"))]
    assert op.compare(*runs).verdict == "NO_REGRESSION"

def test_only_a_paired_case_whose_metadata_says_something_else_makes_a_python_check_changed(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The metadata rule (a python check given the case metadata) at its edges. The base ran 25 cases; a candidate that
    left c24 out and wrote each case's metadata keys in another order gives its python check the same metadata for every
    paired case: comparable (an unpaired case's metadata belongs to no pair, and key order is no content). A
    candidate that retagged c11, c03 and c07 is check_changed, the reason counting them (3, by hand) and naming the
    first in order (c03); one whose check's code was edited as well keeps the code's reason, said first."""
    def with_metadata(n: int, metadata: Callable[[str], dict[str, str]]) -> list[dict[str, Any]]:
        return [{**case, "metadata": metadata(case["id"])} for case in _cases(n)]

    retag = {"c11", "c03", "c07"}
    release = {"criteria": {"done": 0.5}, "regression": {"margin": 0.2}}

    def run(cases: list[dict[str, Any]], name: str, check: str = METADATA_CHECK) -> op.Run:
        root = make_suite(cases, evaluators=[{"type": "python", "check": "checks:done"}], release=release,
                          folder=name)
        (root / "checks.py").write_text(check, encoding="utf-8")
        return _run(root, tmp_path / f"run-{name}")

    def reason(candidate: op.Run) -> str:
        return str(op.compare(base, candidate).table.set_index("criterion").loc["done", "reason"])

    base = run(with_metadata(25, lambda cid: {"want": "ok", "tag": "t"}), "base")
    fewer = run(with_metadata(24, lambda cid: {"tag": "t", "want": "ok"}), "fewer")
    retagged = with_metadata(25, lambda cid: {"want": "ok", "tag": "u" if cid in retag else "t"})
    cmp = op.compare(base, fewer)
    assert cmp.n_paired == 24 and "check_changed" not in reason(fewer)
    retagged_reason = reason(run(retagged, "retagged"))
    assert retagged_reason.startswith("check_changed;")
    assert "(the metadata it is given differs in 3 paired case(s), first 'c03')" in retagged_reason
    edited = reason(run(retagged, "edited", METADATA_CHECK.replace("return ", "return True and ")))
    assert edited.startswith("check_changed;") and "the code of checks:done differs" in edited
    assert "metadata" not in edited


def test_a_run_without_recorded_code_is_not_called_changed(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """A run written before runs recorded their checks' code cannot tell; it is compared on its settings alone
    (a digest on one side only is not a difference), but a digest that differs on both sides is."""
    root = _check_suite(make_suite, STRICT_CHECK)
    base, cand = _run(root, tmp_path / "b"), _run(root, tmp_path / "c")
    assert changed_checks(base, cand) == {}
    manifest = tmp_path / "b" / "manifest.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    assert data["digests"]["code:checks:done"] == op.load_suite(root).digests["code:checks:done"]
    del data["digests"]["code:checks:done"]
    manifest.write_text(json.dumps(data), encoding="utf-8")
    assert changed_checks(op.load_run(tmp_path / "b"), cand) == {}
    data["digests"]["code:checks:done"] = "0" * 64
    manifest.write_text(json.dumps(data), encoding="utf-8")
    assert changed_checks(op.load_run(tmp_path / "b"), cand) == {"done": "the code of checks:done differs"}


VALIDATOR_CODE = "def strict(path):\n    return open(path).read() == 'ok'\n\ndef lax(path):\n    return True\n"


def test_a_validator_whose_code_or_function_changed_is_check_changed(make_suite: Callable[..., Path],
                                                                     tmp_path: Path) -> None:
    """An outcome_contract's verdicts depend on the validators it may run: another function registered under
    the same name, or the same function edited, is another check; a validator it may not run is not."""
    def suite(folder: str, registered: dict[str, str], allowed: list[str]) -> op.Run:
        root = make_suite(_cases(4), folder=folder, validators=registered,
                          evaluators=[{"type": "answer_matches"},
                                      {"type": "outcome_contract", "validators": allowed}])
        (root / "vals.py").write_text(VALIDATOR_CODE, encoding="utf-8")
        return _run(root, tmp_path / "runs" / folder)

    base = suite("base", {"file": "vals:strict", "other": "vals:lax"}, ["file"])
    assert changed_checks(base, suite("same", {"file": "vals:strict", "other": "vals:lax"}, ["file"])) == {}
    # another function under the same name
    assert changed_checks(base, suite("lax", {"file": "vals:lax", "other": "vals:lax"}, ["file"])) == {
        "outcome_verified": "validators.file is vals:lax, not vals:strict"}
    # two names swapping their functions (the same set of functions and digests): a case's contract names the
    # validator, so its contracts now run the other function
    every_base = suite("every_base", {"file": "vals:strict", "other": "vals:lax"}, [])
    assert changed_checks(every_base, suite("swapped", {"file": "vals:lax", "other": "vals:strict"}, [])) == {
        "outcome_verified": "validators.file is vals:lax, not vals:strict"}
    # a validator the evaluator may not run changed: not its check
    assert changed_checks(base, suite("oth", {"file": "vals:strict", "other": "vals:strict"}, ["file"])) == {}
    # every registered validator may run (an empty list): then it is its check
    every = suite("every", {"file": "vals:strict", "other": "vals:lax"}, [])
    assert changed_checks(every, suite("every2", {"file": "vals:strict", "other": "vals:strict"}, [])) == {
        "outcome_verified": "validators.other is vals:strict, not vals:lax"}
    assert changed_checks(every, suite("more", {"file": "vals:strict", "other": "vals:lax", "new": "vals:lax"},
                                       [])) == {"outcome_verified": "it may run other validators"}
    edited_root = tmp_path / "edited"
    shutil.copytree(tmp_path / "base", edited_root)
    (edited_root / "vals.py").write_text(VALIDATOR_CODE.replace("== 'ok'", "!= ''"), encoding="utf-8")
    edited = _run(edited_root, tmp_path / "runs" / "edited")
    assert changed_checks(base, edited) == {"outcome_verified": "the code of vals:strict differs"}


def test_a_code_digest_only_one_run_recorded_does_not_count(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """A run written before runs recorded code has no digest of it: it cannot tell, so the check is not changed
    for that (the code itself differs here; with both digests it is "the code of vals:strict differs")."""
    from oloproof_nb._config.imports import CODE_KEY

    root = make_suite(_cases(4), folder="base", validators={"file": "vals:strict"},
                      evaluators=[{"type": "answer_matches"}, {"type": "outcome_contract", "validators": ["file"]}])
    (root / "vals.py").write_text(VALIDATOR_CODE, encoding="utf-8")
    base = _run(root, tmp_path / "runs" / "base")
    edited_root = tmp_path / "edited"
    shutil.copytree(root, edited_root)
    (edited_root / "vals.py").write_text(VALIDATOR_CODE.replace("== 'ok'", "!= ''"), encoding="utf-8")
    edited = _run(edited_root, tmp_path / "runs" / "edited")
    assert changed_checks(base, edited) == {"outcome_verified": "the code of vals:strict differs"}
    del edited.manifest.digests[CODE_KEY + "vals:strict"]  # as a run written before runs recorded code
    assert changed_checks(base, edited) == {} and changed_checks(edited, base) == {}


def test_a_fault_check_under_another_tool_errors_rule_is_check_changed(make_suite: Callable[..., Path],
                                                                       tmp_path: Path) -> None:
    """fault_recovery decides with the suite's tool_errors rule whether an escalation failed: two suites that
    differ only in that rule judge the same replays differently, and compare called them the same check."""
    evaluators = [{"type": "answer_matches"}, {"type": "fault_recovery", "tool": "t", "fault": "error"}]
    base = _run(make_suite(_cases(4), folder="rule-a", evaluators=evaluators), tmp_path / "a")
    same = _run(make_suite(_cases(4), folder="rule-b", evaluators=evaluators), tmp_path / "b")
    strict = _run(make_suite(_cases(4), folder="rule-c", evaluators=evaluators,
                             tool_errors={"status_values": ["error", "failed"]}), tmp_path / "c")
    assert changed_checks(base, same) == {}
    assert changed_checks(base, strict) == {"recovers_from_error_at_t": "the suite's tool_errors rule differs"}
    same_rule = _run(make_suite(_cases(4), folder="rule-f", evaluators=evaluators,  # the same rule, written
                                tool_errors={"status_values": ["ERROR"], "ok_keys": ["ok", "ok"],  # differently
                                             "error_keys": ["isError", "error"]}), tmp_path / "f")
    assert changed_checks(base, same_rule) == {}
    # a replay is judged with the suite's answer and state checks: other settings of those, another fault check
    guarded = [*evaluators, {"type": "state_unchanged", "paths": ["a"], "absent_ok": True}]
    other_guard = [*evaluators, {"type": "state_unchanged", "paths": ["b"], "absent_ok": True}]
    one = _run(make_suite(_cases(4), folder="rule-g", evaluators=guarded), tmp_path / "g")
    two = _run(make_suite(_cases(4), folder="rule-h", evaluators=other_guard), tmp_path / "h")
    assert changed_checks(one, two) == {
        "state_unchanged": "configured differently",
        "recovers_from_error_at_t": "the answer, state and outcome checks its replays are judged with differ"}
    # ... but only as the replay uses them: the default answer check written out, a second identical one, the
    # kept paths split over two state_unchanged checks, or absent_ok (a load-time warning) change nothing there
    split = [*evaluators, {"type": "answer_matches", "criterion": "again"},
             {"type": "state_unchanged", "paths": ["a"], "criterion": "keep_a"},
             {"type": "state_unchanged", "paths": ["a"], "criterion": "keep_a2", "absent_ok": True}]
    three = _run(make_suite(_cases(4), folder="rule-i", evaluators=split), tmp_path / "i")
    assert "recovers_from_error_at_t" not in changed_checks(one, three)
    only_answers = [{"type": "answer_matches"}]  # no check that reads the rule: the rule is no part of it
    plain = _run(make_suite(_cases(4), folder="rule-d", evaluators=only_answers), tmp_path / "d")
    plain_strict = _run(make_suite(_cases(4), folder="rule-e", evaluators=only_answers,
                                   tool_errors={"status_values": ["error", "failed"]}), tmp_path / "e")
    assert changed_checks(plain, plain_strict) == {}


def test_a_case_whose_epochs_differ_between_the_runs_is_refused(tmp_path: Path) -> None:
    """A run's epochs is its largest; two Inspect AI tasks of 1 and 3 epochs pooled into one run, compared with
    the same tasks of 3 and 1 epochs, passed the run-level check, and the epochs one side lacked were left out
    (the candidate's failing epochs 2 and 3 of every case: NO_REGRESSION). Cases in both runs must now have run
    the same epochs."""
    folder = init_example("false-success", tmp_path / "suite")
    base = op.run(folder, out=tmp_path / "base", progress=False, epochs=3)
    cand = op.run(folder, out=tmp_path / "cand", progress=False, epochs=3)
    assert op.compare(base, cand).n_paired == 18  # as run: every case's three epochs paired
    short = cand.cases["case_id"].eq("fs-02") & cand.cases["epoch"].gt(1)
    cand._frames["cases"] = cand.cases[~short].reset_index(drop=True)  # fs-02 ran epoch 1 only there
    vshort = cand.verdicts["case_id"].eq("fs-02") & cand.verdicts["epoch"].gt(1)
    cand._frames["verdicts"] = cand.verdicts[~vshort].reset_index(drop=True)
    with pytest.raises(op.OloproofError, match=r"^compare: case 'fs-02' ran epochs 1–3 in the base run and 1 in the "
                                               r"candidate \(1 such case\(s\)\)"):
        op.compare(base, cand)


def test_a_run_still_being_written_with_epochs_is_compared_as_unfinished(make_suite: Callable[..., Path],
                                                                          tmp_path: Path) -> None:
    """A 3-epoch candidate read while it runs has recorded some epochs of the case in flight only: op.compare
    refused it as runs "whose cases ran the" other "epochs", where an unfinished run is compared on what it holds
    and never says NO_REGRESSION. The epochs not yet recorded are unpaired, the reason says the run did not
    finish."""
    root = make_suite(_cases(30), evaluators=[{"type": "answer_matches"}], epochs=3)
    base = _run(root, tmp_path / "base")
    _run(root, tmp_path / "cand", version="b")
    journal = (tmp_path / "cand" / "cases.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(journal) == 90
    (tmp_path / "cand" / "cases.jsonl").write_text("".join(journal[:50]), encoding="utf-8")  # c16: epochs 1 and 2
    manifest = json.loads((tmp_path / "cand" / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (tmp_path / "cand" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    shutil.rmtree(tmp_path / "cand" / "frames", ignore_errors=True)
    cand = op.load_run(tmp_path / "cand")
    assert sorted(cand.cases.loc[cand.cases["case_id"] == "c16", "epoch"]) == [1, 2]
    cmp = op.compare(base, cand, release=MARGIN_20)
    assert cmp.n_paired == 50 and len(cmp.unpaired) == 40 and set(cmp.unpaired["reason"]) == {"only_in_base"}
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE"
    assert "unfinished: the run did not finish (50 of 90 case runs recorded)" in cmp.reason


def test_base_cases_the_candidate_did_not_run_hold_back_no_regression(make_suite: Callable[..., Path],
                                                                      tmp_path: Path) -> None:
    """A candidate run on a subset that skips the cases it fails (``--limit``, a sample-id filter, a case file
    that dropped them) got NO_REGRESSION and exit 0, with a note. The criterion's own row still says what the
    paired cases show; the overall verdict is INSUFFICIENT_EVIDENCE (cases_not_in_both_runs). New cases of the
    candidate do not hold it back."""
    release = {"regression": {"margin": 0.2}, "min_clusters": 20}
    cases = _cases(40)
    base = _run(make_suite(cases, evaluators=[{"type": "answer_matches"}]), tmp_path / "base")
    subset = _run(make_suite(cases[5:], evaluators=[{"type": "answer_matches"}]), tmp_path / "subset",
                  broken={f"c{i:02d}" for i in range(5)})  # it would fail c00–c04: they are not in its run
    cmp = op.compare(base, subset, release=release)
    assert cmp.table.iloc[0]["verdict"] == "NO_REGRESSION"  # on the 35 paired cases
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE"
    assert cmp.reason == ("cases_not_in_both_runs: 5 case run(s) of the base run are not paired (only_in_base: 5): "
                          "the cases the candidate did not run, or ran changed, may be the regressions; compare "
                          "runs of the same cases")
    grown = _run(make_suite([*cases, *_cases(45)[40:]], evaluators=[{"type": "answer_matches"}]), tmp_path / "grown")
    more = op.compare(base, grown, release=release)  # the candidate's five new cases are not the base's
    assert set(more.unpaired["reason"]) == {"only_in_candidate"} and more.verdict == "NO_REGRESSION"


class Refunder(op.RecordedAgent):
    """Refunds the orders of ``refunds`` through the ``refund`` tool; a refund that failed is neither retried nor
    escalated, and the answer is then wrong (a faulted refund is never recovered from)."""

    def __init__(self, refunds: set[str], version: str) -> None:
        super().__init__()
        self.refunds, self.version, self.state = refunds, version, {}

    def reset(self, state: dict[str, Any]) -> None:
        self.state = copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def refund(self, order: str) -> dict[str, Any]:
        self.state[order] = "refunded"
        return {"ok": True}

    def act(self, input: dict[str, Any], rec: Any) -> str:
        if input["tag"] in self.refunds and not rec.tool("refund", self.refund, order=input["tag"]).get("ok"):
            return "gave up"
        return "ok"


def test_failures_only_the_candidate_was_judged_on_hold_back_no_regression(make_suite: Callable[..., Path],
                                                                          tmp_path: Path) -> None:
    """A fault replay exists only where the system called the tool. A candidate that now
    refunds 4 more orders, and fails to recover on each, had those failing rows left out of the paired
    difference (counted in ``one_sided`` only): NO_REGRESSION. They now hold it back; rows only the base run
    judged do not (the candidate no longer reaching a check is not a failure of it)."""
    evaluators = [{"type": "answer_matches"}, {"type": "fault_recovery", "tool": "refund", "fault": "error"}]
    release = {"criteria": {"answer_matches": 0.5}, "regression": {"margin": 0.3}}
    root = make_suite(_cases(24), evaluators=evaluators, release=release)
    some = {f"c{i:02d}" for i in range(20)}
    more = some | {f"c{i:02d}" for i in range(20, 24)}

    def run(refunds: set[str], version: str, name: str) -> op.Run:
        return op.run(op.load_suite(root), system=lambda: Refunder(refunds, version), out=tmp_path / name,
                      progress=False)

    base, cand = run(some, "base", "base"), run(more, "cand", "cand")
    row = op.compare(base, cand).table.set_index("criterion").loc["recovers_from_error_at_refund"]
    assert (row["n"], row["one_sided"], row["difference"]) == (20, 4, 0.0)
    assert row["ci_low"] >= -0.3 and row["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert row["reason"].startswith("unpaired_failures: 4 row(s) of the candidate do not pass")
    back = op.compare(cand, base).table.set_index("criterion").loc["recovers_from_error_at_refund"]
    assert (back["one_sided"], back["verdict"]) == (4, "NO_REGRESSION")  # rows the candidate lost
    same = run(more, "cand2", "cand2")
    assert op.compare(cand, same).table.set_index("criterion").loc["recovers_from_error_at_refund",
                                                                   "verdict"] == "NO_REGRESSION"


class Retrier(Refunder):
    """A Refunder that calls ``refund`` again when the first call failed: it recovers from every fault."""

    def act(self, input: dict[str, Any], rec: Any) -> str:
        if input["tag"] in self.refunds and not rec.tool("refund", self.refund, order=input["tag"]).get("ok"):
            rec.tool("refund", self.refund, order=input["tag"])
        return "ok"


def test_passes_the_candidate_has_no_row_for_hold_back_no_regression(make_suite: Callable[..., Path],
                                                                     tmp_path: Path) -> None:
    """Rows only the base run judged were counted in ``one_sided`` and dropped. A candidate that
    stops reaching a check the base passed (it no longer calls the tool whose fault the base recovered from;
    an outcome it leaves ``waiting``) lost those passes unseen: NO_REGRESSION, exit 0. The base's passing
    rows without a candidate row now hold it back, as the candidate's failing lone rows do; lone base rows that
    did not pass still do not (a check the candidate no longer reaches is not one it fails)."""
    evaluators = [{"type": "answer_matches"}, {"type": "fault_recovery", "tool": "refund", "fault": "error"}]
    release = {"criteria": {"answer_matches": 0.5}, "regression": {"margin": 0.3}}
    root = make_suite(_cases(24), evaluators=evaluators, release=release)
    some = {f"c{i:02d}" for i in range(20)}
    more = some | {f"c{i:02d}" for i in range(20, 24)}

    def run(agent: type[Refunder], refunds: set[str], name: str) -> op.Run:
        return op.run(op.load_suite(root), system=lambda: agent(refunds, name), out=tmp_path / name, progress=False)

    base, cand = run(Retrier, more, "base"), run(Retrier, some, "cand")
    row = op.compare(base, cand).table.set_index("criterion").loc["recovers_from_error_at_refund"]
    assert (row["n"], row["one_sided"], row["difference"], row["pass_to_fail"]) == (20, 4, 0.0, 0)
    assert row["ci_low"] >= -0.3 and row["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert row["reason"].startswith("unpaired_passes: 4 row(s) the base run passed have no row in the candidate")
    assert op.compare(cand, base).table.set_index("criterion").loc[  # gained passes: nothing lost
        "recovers_from_error_at_refund", "verdict"] == "NO_REGRESSION"
    failing = run(Refunder, more, "failing")  # the base's four lone rows fail to recover: nothing lost either
    assert op.compare(failing, run(Refunder, some, "fewer")).table.set_index("criterion").loc[
        "recovers_from_error_at_refund", "verdict"] == "NO_REGRESSION"


def test_a_candidate_whose_release_yaml_loosens_the_rule_gets_no_no_regression(
        make_suite: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The candidate's release.yaml is the default rule: a suite that raised regression.margin to 0.4 turned
    12 cases lost of 60 (difference -0.20, interval [-0.325, -0.096]) into NO_REGRESSION, exit 0, saying nothing."""
    from oloproof_nb.cli import main

    root = make_suite(_cases(60), evaluators=[{"type": "answer_matches"}],
                      release={"criteria": {"answer_matches": 0.8}})
    base = _run(root, tmp_path / "base")
    (root / "release.yaml").write_text("criteria: {answer_matches: 0.75}\nregression: {margin: 0.4}\n",
                                       encoding="utf-8")
    cand = _run(root, tmp_path / "cand", broken={f"c{i:02d}" for i in range(12)}, version="b")
    loose = op.compare(base, cand)
    row = loose.table.iloc[0]
    assert (round(row["difference"], 3), row["verdict"]) == (-0.2, "NO_REGRESSION")  # by the candidate's margin
    assert loose.verdict == "INSUFFICIENT_EVIDENCE"
    assert loose.reason.startswith("release_changed: ") and "regression.margin 0.02 → 0.4" in loose.reason
    # no rule given: the rule used is the candidate's, which release.yaml still gives, so nothing is called weaker
    # (release_changed says how it differs from the base's)
    assert (loose.relaxed, loose.weaker_than) == ((), "")
    assert main(["compare", str(base.directory), str(cand.directory)]) == 1
    assert "release_changed" in capsys.readouterr().out
    # the rule given: decided by it, whichever it is (the gate threshold alone does not decide a comparison)
    assert op.compare(base, cand, release={"regression": {"margin": 0.02}}).verdict == "REGRESSION"
    assert op.compare(base, cand, release={"regression": {"margin": 0.4}}).verdict == "NO_REGRESSION"
    (root / "release.yaml").write_text("criteria: {answer_matches: 0.5}\n", encoding="utf-8")
    same_rule = _run(root, tmp_path / "same", version="c")
    assert op.compare(base, same_rule).reason == ""  # thresholds differ, the rule does not: no release_changed
    # settings that do not decide a comparison: the unclustered method (the paired interval is always the
    # clustered one), the bootstrap (never used by compare so far), a reduce written as the default mean
    (root / "release.yaml").write_text("criteria: {answer_matches: {threshold: 0.8, reduce: mean}}\n"
                                       "unclustered_method: wilson\nmethod: cluster_bootstrap\n"
                                       "bootstrap: {resamples: 500, seed: 3}\n", encoding="utf-8")
    assert op.compare(base, _run(root, tmp_path / "inert", version="d")).reason == ""


def test_the_order_of_regression_criteria_is_no_change_of_rule(make_suite: Callable[..., Path],
                                                              tmp_path: Path) -> None:
    evaluators = [{"type": "answer_matches"}, {"type": "answer_matches", "criterion": "again"}]
    root = make_suite(_cases(30), evaluators=evaluators,
                      release={"regression": {"criteria": ["answer_matches", "again"]}})
    base = _run(root, tmp_path / "base")
    (root / "release.yaml").write_text("regression: {criteria: [again, answer_matches]}\n", encoding="utf-8")
    assert op.compare(base, _run(root, tmp_path / "cand", version="b")).reason == ""
    (root / "release.yaml").write_text("regression: {criteria: [again]}\n", encoding="utf-8")
    fewer = op.compare(base, _run(root, tmp_path / "fewer", version="c"))
    assert fewer.reason.startswith("release_changed: ") and "regression.criteria" in fewer.reason


def test_a_candidate_row_missing_where_the_base_judged_nothing_holds_back_no_regression(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """Only the candidate reaches the refund on 4 cases, and their replays cannot be judged (the control replay
    does not reproduce the recording: missing). A missing row is not a pass: NO_REGRESSION is held back as for a
    failing one (unpaired_failures), not only when the row failed."""
    import itertools

    ticks = itertools.count()
    new = {f"c{i:02d}" for i in range(20, 24)}

    class Drifting(Refunder):
        def refund(self, order: str) -> dict[str, Any]:  # the 4 new refunds never come out the same twice
            self.state[order] = f"refunded-{next(ticks)}" if order in new else "refunded"
            return {"ok": True}

    evaluators = [{"type": "answer_matches"}, {"type": "fault_recovery", "tool": "refund", "fault": "error"}]
    release = {"criteria": {"answer_matches": 0.5}, "regression": {"margin": 0.3}}
    root = make_suite(_cases(24), evaluators=evaluators, release=release)
    some = {f"c{i:02d}" for i in range(20)}
    base = op.run(op.load_suite(root), system=lambda: Refunder(some, "base"), out=tmp_path / "base", progress=False)
    cand = op.run(op.load_suite(root), system=lambda: Drifting(some | new, "cand"), out=tmp_path / "cand",
                  progress=False)
    replays = cand.replays[cand.replays["criterion"] == "recovers_from_error_at_refund"].set_index("case_id")
    assert set(replays.loc[sorted(new), "verdict"]) == {"missing"}  # the candidate's 4 new rows, none judged
    assert set(replays.loc[sorted(some), "verdict"]) == {"fail"}  # the 20 paired rows fail on both sides
    row = op.compare(base, cand).table.set_index("criterion").loc["recovers_from_error_at_refund"]
    assert (row["n"], row["one_sided"], row["difference"]) == (20, 4, 0.0)
    assert row["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert row["reason"].startswith("unpaired_failures: 4 row(s) of the candidate do not pass")


# -- edges found by mutation testing; expected values are hand counts ---------------------------

MARGIN_20 = {"regression": {"margin": 0.2}, "min_clusters": 20}


def test_base_cases_the_candidate_ran_changed_hold_back_no_regression(make_suite: Callable[..., Path],
                                                                      tmp_path: Path) -> None:
    """Five base cases edited in the candidate's suite (digest_changed) are not paired: like cases the candidate
    did not run, they may be the regressions, so the overall verdict is not NO_REGRESSION."""
    cases = _cases(40)
    base = _run(make_suite(cases, evaluators=[{"type": "answer_matches"}]), tmp_path / "base")
    edited = copy.deepcopy(cases)
    for case in edited[:5]:
        case["input"]["answer"] = case["expected"]["answer"] = "new"
    cand = _run(make_suite(edited, evaluators=[{"type": "answer_matches"}]), tmp_path / "cand")
    cmp = op.compare(base, cand, release=MARGIN_20)
    assert sorted(cmp.unpaired["reason"]) == ["digest_changed"] * 5
    assert cmp.table.iloc[0]["verdict"] == "NO_REGRESSION"  # the 35 paired cases by themselves
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE"
    assert cmp.reason.startswith("cases_not_in_both_runs: 5 case run(s) of the base run are not paired "
                                 "(digest_changed: 5)")


def test_an_unfinished_candidate_is_never_no_regression(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """Every case paired and no flip, but the candidate's manifest says it did not finish: its verdict must not be
    NO_REGRESSION (the gate would give it no decision)."""
    root = make_suite(_cases(40), evaluators=[{"type": "answer_matches"}])
    base = _run(root, tmp_path / "base")
    _run(root, tmp_path / "cand", version="b")
    manifest = json.loads((tmp_path / "cand" / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (tmp_path / "cand" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    shutil.rmtree(tmp_path / "cand" / "frames", ignore_errors=True)
    cmp = op.compare(base, tmp_path / "cand", release=MARGIN_20)
    assert cmp.n_paired == 40 and cmp.table.iloc[0]["verdict"] == "NO_REGRESSION"
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE"
    assert "candidate run" in cmp.reason and "did not finish" in cmp.reason


def test_every_paired_row_missing_is_all_missing(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """Both runs crashed on every case: 40 paired rows, all missing, no flip. With margin 0.2 the interval of no
    change (± 1 − 0.025^(1/40) = ±0.088) would clear the margin; rule 2 says all_missing first."""
    root = make_suite(_cases(40), evaluators=[{"type": "answer_matches"}])
    every = {f"c{i:02d}" for i in range(40)}
    base = _run(root, tmp_path / "base", crash=every)
    cand = _run(root, tmp_path / "cand", crash=every, version="b")
    row = op.compare(base, cand, release=MARGIN_20).table.iloc[0]
    assert (row["n"], row["missing"], row["pass_to_fail"], row["fail_to_pass"]) == (40, 40, 0, 0)
    assert row["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert row["reason"].startswith("all_missing")


def test_a_run_judged_again_under_its_own_id_is_compared_not_refused(make_suite: Callable[..., Path],
                                                                      tmp_path: Path) -> None:
    """Same run id and manifest but other verdicts (a copy of the run whose record of c00 was judged fail): two
    versions of the judging, not one run given twice."""
    base = _run(make_suite(_cases(30), evaluators=[{"type": "answer_matches"}]), tmp_path / "base")
    shutil.copytree(base.directory, tmp_path / "again")
    shutil.rmtree(tmp_path / "again" / "frames", ignore_errors=True)
    journal = tmp_path / "again" / "cases.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["verdicts"][0]["verdict"] = "fail"
    journal.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    cmp = op.compare(base, tmp_path / "again")
    row = cmp.table.iloc[0]
    assert (row["n"], row["pass_to_fail"], row["fail_to_pass"]) == (30, 1, 0)


# -- edges found by mutation testing; expected values are hand counts ---------------------------


def test_a_pooled_candidate_is_refused_as_pooled_naming_the_candidate(unclustered: tuple[op.Run, op.Run]) -> None:
    """A pooled run given as the candidate (each case in it twice) must be refused as what it is, naming the
    candidate side, as a pooled base is; it was refused only by a later check, for epochs that differ (1 and 1, 1).
    Three runs of each version, pooled by op.load_runs, were refused without a word of what to do
    instead; the message now names the epochs, which pair a case's tries."""
    base, cand = unclustered
    with pytest.raises(op.OloproofError, match=r"compare: case 'c00' is in the candidate run .* more than once \(a "
                                               r"pooled run\?\); compare one run on each side: for several tries "
                                               r"of each case, run each version once with the epochs \(oloproof run "
                                               r"SUITE --epochs K\), whose case runs are paired epoch by epoch$"):
        op.compare(base, op.load_runs([base.directory, cand.directory]))


class EpochCrasher(Answerer):
    """Raises on case ``c<i>`` in epoch e when ``crash_at(i, e)``; answers right otherwise."""

    def __init__(self, crash_at: Callable[[int, int], bool], version: str) -> None:
        super().__init__(version=version)
        self.crash_at = crash_at

    def run(self, input: dict[str, Any], epoch: int) -> dict[str, Any]:  # type: ignore[override]
        if self.crash_at(int(input["tag"][1:]), epoch):
            raise RuntimeError("boom")
        return {"steps": [], "answer": input["answer"], "status": "completed"}


def test_a_reduced_case_missing_in_some_epochs_only_is_not_a_missing_case(make_suite: Callable[..., Path],
                                                                         tmp_path: Path) -> None:
    """pass^2 over 2 epochs; the candidate crashed on every case in epoch 1, and on c00 in epoch 2 as well. Only c00
    has every epoch missing (missing 1), and every case lost its pass^2: REGRESSION. Counted as missing when any
    epoch was, all 20 cases were missing and the candidate that fails every case read all_missing (no decision)."""
    release = {"min_clusters": 2, "criteria": {"answer_matches": {"threshold": 0.5, "reduce": "pass^2"}},
               "regression": {"margin": 0.2}}
    suite = op.load_suite(make_suite(_cases(20), evaluators=[{"type": "answer_matches"}], release=release, epochs=2))
    base = op.run(suite, system=lambda: Scheduled(lambda i, e: True, "a"), out=tmp_path / "b", progress=False)
    cand = op.run(suite, system=lambda: EpochCrasher(lambda i, e: e == 1 or i == 0, "b"), out=tmp_path / "c",
                  progress=False)
    assert (cand.verdicts["verdict"] == "missing").sum() == 21  # by hand: 20 rows of epoch 1, c00's of epoch 2
    row = op.compare(base, cand).table.iloc[0]
    assert (row["n"], row["missing"], row["pass_to_fail"], row["fail_to_pass"]) == (20, 1, 20, 0)
    assert row["verdict"] == "REGRESSION"


def test_the_paired_bootstrap_decides_from_bootstrap_min_clusters_on(make_suite: Callable[..., Path], tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The boundary of the bootstrap's replacement ("below PAIRED_BOOTSTRAP_MIN_CLUSTERS clusters"), pinned for when a
    simulation validates some number (it is infinite until then): 24 clusters keep cluster_bootstrap at a minimum
    of 24, and are replaced by cluster_t, with the note, at a minimum of 25."""
    from oloproof_nb._analysis import compare_rows

    root = make_suite(_cases(48, cluster_size=2), evaluators=[{"type": "answer_matches"}])
    base, cand = _run(root, tmp_path / "b"), _run(root, tmp_path / "c", broken={f"c{i:02d}" for i in range(12)})
    release = {**ALLOW, "method": "cluster_bootstrap"}
    monkeypatch.setattr(compare_rows, "PAIRED_BOOTSTRAP_MIN_CLUSTERS", 24)
    row = op.compare(base, cand, release=release).table.iloc[0]
    assert row["n_clusters"] == 24
    assert row["method"] == "cluster_bootstrap" and "instead of cluster_bootstrap" not in row["reason"]
    monkeypatch.setattr(compare_rows, "PAIRED_BOOTSTRAP_MIN_CLUSTERS", 25)
    row = op.compare(base, cand, release=release).table.iloc[0]
    assert row["method"] == "cluster_t" and "instead of cluster_bootstrap" in row["reason"]


def test_runs_made_with_different_labels_are_compared_with_a_note(example_suite: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Gap left open: op.compare of runs whose validity labels differ said nothing, though each run left out the
    copies its own labels held invalid. Run a: the example's labels (ord-018~injected invalid). Before run b,
    ord-001~injected (passes answer_matches in a) and ord-020~injected (fails it) are labeled invalid too: 21 of 24
    valid, still checked at 0.85, so b leaves both out. By hand, answer_matches: a judges 47 rows (48 cases less
    ord-018~injected), b 45; 45 paired, 2 one-sided; the same agent, so no flip; at margin 0.2 the interval clears
    -margin, and the pass of ord-001~injected that b has no row for holds back NO_REGRESSION (unpaired_passes)."""
    from oloproof_nb.cli import main

    label_file = example_suite / "labels" / "injected.jsonl"
    a = op.run(op.load_suite(example_suite), out=tmp_path / "a", progress=False)
    relabel(label_file, {"ord-001~injected": False, "ord-020~injected": False})
    b = op.run(op.load_suite(example_suite), out=tmp_path / "b", progress=False)
    cmp = op.compare(a, b, release={**ALLOW, "regression": {"margin": 0.2}})
    note = ("the runs were made with different validity labels (transform injected: ord-001~injected is labeled "
            "otherwise): 2 paired copies are scored in one run only (ord-001~injected, ord-020~injected), and left "
            "out of the paired difference (one_sided)")
    assert sum(n.startswith(note) for n in cmp.notes) == 1
    row = cmp.table.set_index("criterion").loc["answer_matches"]
    assert (row["n"], row["one_sided"], row["pass_to_fail"], row["fail_to_pass"]) == (45, 2, 0, 0)
    assert row["ci_low"] >= -0.2 and row["reason"].startswith("unpaired_passes: 1 row(s)")
    assert note in repr(cmp) and "different validity labels" in cmp._repr_html_()
    assert main(["compare", str(a.directory), str(b.directory)]) == 1
    assert f"note: {note}" in " ".join(map(str.strip, capsys.readouterr().out.splitlines()))  # wrapped to the width
    # the same labels: no note
    c = op.run(op.load_suite(example_suite), out=tmp_path / "c", progress=False)
    assert not any("validity labels" in n for n in op.compare(b, c).notes)
    # labels that differ where no transform is checked leave no copy out in either run: said, with no effect
    relabel(label_file, {"ord-001~injected": True, "ord-020~injected": True, "ord-024~injected": None})
    d = op.run(op.load_suite(example_suite), out=tmp_path / "d", progress=False)
    relabel(label_file, {"ord-023~injected": None})
    e = op.run(op.load_suite(example_suite), out=tmp_path / "e", progress=False)
    assert not op.validity(d)["checked"].any() and not op.validity(e)["checked"].any()  # 23 and 22 of 24 labeled
    quiet = op.compare(d, e)
    assert (f"the runs were made with different validity labels (transform injected: ord-023~injected is labeled "
            f"valid in the base run {d.run_id} and not labeled in the candidate {e.run_id}): every paired copy is "
            "scored in both runs or in neither, so the labels change no paired row") in quiet.notes
    assert (quiet.table["one_sided"] == 0).all()


def test_the_labels_note_names_only_the_paired_copies_scored_in_one_run(example_suite: Path, tmp_path: Path) -> None:
    """Run b leaves out ord-001~injected and ord-020~injected (labeled invalid before
    it), but ord-020 was also edited before b (its message), so ord-020~injected is not paired at all
    (digest_changed) and no paired row of it moves. By hand the note names 1 paired copy, ord-001~injected."""
    label_file = example_suite / "labels" / "injected.jsonl"
    a = op.run(op.load_suite(example_suite), out=tmp_path / "a", progress=False)
    relabel(label_file, {"ord-001~injected": False, "ord-020~injected": False})
    cases = example_suite / "cases.jsonl"
    text = cases.read_text(encoding="utf-8")
    assert text.count("the laptop overheats.") == 1
    cases.write_text(text.replace("the laptop overheats.", "the laptop overheats badly."), encoding="utf-8")
    b = op.run(op.load_suite(example_suite), out=tmp_path / "b", progress=False)
    cmp = op.compare(a, b, release=ALLOW)
    unpaired = cmp.unpaired.set_index("case_id")["reason"].to_dict()
    assert unpaired == {"ord-020": "digest_changed", "ord-020~injected": "digest_changed"}
    assert ("the runs were made with different validity labels (transform injected: ord-001~injected is labeled "
            "otherwise): 1 paired copy is scored in one run only (ord-001~injected), and left out of the paired "
            "difference (one_sided)") in " ".join(cmp.notes)


def test_a_candidate_whose_cases_join_base_clusters_gets_no_no_regression(
        make_suite: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The case digest leaves the cluster out, and clusters the candidate joins are merged. A merge is
    not always wider: the paired interval splits each cluster's net change into a loss and a gain, so a lost case
    and a gained one put into one cluster cancel. 40 singletons, base passing c00–c19; the candidate loses c00–c07
    and gains c20–c25 (difference −2/40). Same clusters: ci_low −0.275 (−0.235 before the two directions'
    correlation was counted), INSUFFICIENT_EVIDENCE at margin 0.21; its case file moving c20–c25 into the
    clusters of c00–c05 (34 clusters): ci_low −0.194, NO_REGRESSION, exit 0.
    The overall verdict is now held back (clusters_changed); a candidate that only splits a base cluster is not."""
    from oloproof_nb.cli import main

    release = {"allow_approximate_methods": True, "regression": {"margin": 0.21}}
    cases = _cases(40)
    joined = copy.deepcopy(cases)
    for i in range(6):
        joined[20 + i]["cluster"] = f"g{i:02d}"
    base = _run(make_suite(cases, evaluators=[{"type": "answer_matches"}], release=release), tmp_path / "base",
                broken={f"c{i:02d}" for i in range(20, 40)})
    worse = {f"c{i:02d}" for i in [*range(8), *range(26, 40)]}
    same = _run(make_suite(cases, evaluators=[{"type": "answer_matches"}], release=release), tmp_path / "same",
                broken=worse, version="b")
    cand = _run(make_suite(joined, evaluators=[{"type": "answer_matches"}], release=release), tmp_path / "cand",
                broken=worse, version="b")
    b = [1] * 20 + [0] * 20
    k = [0] * 8 + [1] * 12 + [1] * 6 + [0] * 14
    honest = op.compare(base, same)
    row = honest.table.iloc[0]
    assert (row["pass_to_fail"], row["fail_to_pass"], row["n_clusters"]) == (8, 6, 40)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(paired_interval(b, k, [1] * 40), abs=1e-10)
    assert row["ci_low"] < -0.21 and honest.verdict == "INSUFFICIENT_EVIDENCE" and honest.reason == ""
    assert round(row["ci_low"], 3) == -0.275  # README §6a: "from ci_low −0.275 to −0.194"
    cmp = op.compare(base, cand)
    row = cmp.table.iloc[0]
    # by hand: g00–g05 each hold a lost and a gained case (net 0), c06, c07 lost alone, 26 clusters unchanged
    merged = paired_interval([1] * 6 + [1] * 14 + [0] * 14, [1] * 6 + [0, 0] + [1] * 12 + [0] * 14,
                             [2] * 6 + [1] * 28)
    assert (row["n_clusters"], row["difference"]) == (34, pytest.approx(-2 / 40, abs=1e-15))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(merged, abs=1e-10)
    assert row["ci_low"] > -0.21 and row["verdict"] == "NO_REGRESSION"  # the criterion's row, on joined clusters
    assert round(row["ci_low"], 3) == -0.194
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE"
    assert cmp.reason.startswith("clusters_changed: the candidate's case file puts paired cases of 12 clusters of "
                                 "the base run into 6 (first: g00, g20)")
    assert main(["compare", str(base.directory), str(cand.directory)]) == 1
    assert "clusters_changed" in capsys.readouterr().out
    pairs = [{**c, "cluster": f"p{int(c['id'][1:]) // 2:02d}"} for c in cases]  # a base of 20 clusters of 2
    split_base = _run(make_suite(pairs, evaluators=[{"type": "answer_matches"}], release=release), tmp_path / "pairs")
    split = op.compare(split_base, _run(make_suite(cases, evaluators=[{"type": "answer_matches"}], release=release),
                                        tmp_path / "split", version="b"))
    assert split.table.iloc[0]["n_clusters"] == 20 and not split.reason  # a split is undone, nothing joined
    assert split.verdict == "NO_REGRESSION"


def test_runs_made_while_the_margin_was_loosened_are_told_against_release_yaml_as_it_is_now(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """regression.margin set to 0.5, both runs made, the file put back to 0.02. The runs
    agree (no release_changed) and the default rule is theirs, so 15 of 60 cases lost (−0.25, interval −0.379 to
    −0.131, REGRESSION by the file's 0.02) read NO_REGRESSION with no word but the header's "margin 0.5". The
    verdict stays the runs' (the runs are the evidence); the drift is warned of, as the gate's, and the rule used
    is named weaker than the file as it is now, in ``relaxed``, ``weaker_than`` and a note."""
    import warnings

    root = make_suite(_cases(60), evaluators=[{"type": "answer_matches"}], release={"regression": {"margin": 0.5}})
    base = _run(root, tmp_path / "base")
    cand = _run(root, tmp_path / "cand", broken={f"c{i:02d}" for i in range(15)}, version="b")
    (root / "release.yaml").write_text("regression: {margin: 0.02}\n", encoding="utf-8")
    now = f"{root / 'release.yaml'} as it is now"
    with pytest.warns(UserWarning, match=r"release\.yaml differs from the release settings run .* was made with "
                                         r"\(regression\.margin 0\.5 → 0\.02\); this comparison uses the candidate"):
        cmp = op.compare(base, cand)
    row = cmp.table.iloc[0]
    assert (row["pass_to_fail"], row["fail_to_pass"], row["n"], row["difference"]) == (15, 0, 60, -0.25)
    # by definition (tests/_cr2_reference.py), and the figures the command printed
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        paired_interval([1] * 60, [0] * 15 + [1] * 45, [1] * 60), abs=1e-10)
    assert (round(row["ci_low"], 3), round(row["ci_high"], 3)) == (-0.379, -0.131)
    assert (cmp.verdict, cmp.reason, cmp.margin) == ("NO_REGRESSION", "", 0.5)  # the runs' own rule decides
    assert cmp.relaxed == ("regression.margin 0.02 → 0.5",)
    assert cmp.weaker_than == now
    note = f"compared with the settings stored with the runs: 1 setting weaker than {now}: regression.margin 0.02 → 0.5"
    assert cmp.notes[0] == note
    assert f"  note: {note}" in repr(cmp).splitlines() and "1 setting weaker than" in cmp._repr_html_()
    # the file as it is now, given, decides: ci_high −0.131 < −0.02
    assert op.compare(base, cand, release=root / "release.yaml").verdict == "REGRESSION"
    # a file that does not read (the margin tightened under a misspelt key): named, the runs' rule decides
    (root / "release.yaml").write_text("regresion: {margin: 0.02}\n", encoding="utf-8")
    with pytest.warns(UserWarning, match=r"release\.yaml.*regresion.*\(the suite folder's release\.yaml, which "
                                         r"cannot be read now\); this comparison uses the release settings the "
                                         r"candidate run .* was made with"):
        assert op.compare(base, cand).verdict == "NO_REGRESSION"
    (root / "release.yaml").write_text("regression: {margin: 0.02}\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # settings given: no drift warning, so the note is all the reader gets
        given = op.compare(base, cand, release={"regression": {"margin": 0.5}})  # the runs' own, given back
        assert given.verdict == "NO_REGRESSION"
        assert (given.relaxed, given.weaker_than) == (("regression.margin 0.02 → 0.5",), now)
        assert given.notes[0] == f"compared with the settings given: 1 setting weaker than {now}: " \
                                 "regression.margin 0.02 → 0.5"
        # weaker than the base run's own still comes first, and is named so
        looser = op.compare(base, cand, release={"regression": {"margin": 0.9}})
        assert (looser.relaxed, looser.weaker_than) == (("regression.margin 0.5 → 0.9",),
                                                        "the base run's own release settings")
        assert looser.notes[0].startswith("compared with the settings given: 1 setting weaker than the base run's")
        # given tighter than the file: nothing weaker
        assert op.compare(base, cand, release={"regression": {"margin": 0.01}}).relaxed == ()
        (root / "release.yaml").write_text("regression: {margin: 0.5}\n", encoding="utf-8")  # put back: the runs'
        same = op.compare(base, cand)
        assert (same.relaxed, same.weaker_than, same.verdict) == ((), "", "NO_REGRESSION")
        assert not any("weaker" in n for n in same.notes)
    (root / "release.yaml").write_text("regression: {margin: 0.9}\n", encoding="utf-8")  # the runs' rule is tighter
    with pytest.warns(UserWarning, match=r"regression\.margin 0\.5 → 0\.9"):  # the drift is told, as the gate's
        tighter = op.compare(base, cand)
    assert (tighter.relaxed, tighter.weaker_than) == ((), "")
    assert not any("weaker" in n for n in tighter.notes)


def test_runs_made_without_release_yaml_are_not_said_to_have_stored_settings(make_suite: Callable[..., Path],
                                                                             tmp_path: Path) -> None:
    """Two runs made with no release.yaml (the defaults decide, margin 0.02), compared after a file with
    margin 0.01 appeared, are told against it, but the note read 'compared with the settings stored with the runs',
    which stored none. It names the defaults."""
    import warnings

    root = make_suite(_cases(30), evaluators=[{"type": "answer_matches"}])
    base, cand = _run(root, tmp_path / "base"), _run(root, tmp_path / "cand", version="b")
    assert base.release is None and cand.release is None
    (root / "release.yaml").write_text("regression: {margin: 0.01}\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the drift warning (tested above)
        cmp = op.compare(base, cand)
    now = f"{root / 'release.yaml'} as it is now"
    assert (cmp.relaxed, cmp.weaker_than) == (("regression.margin 0.01 → 0.02",), now)
    assert cmp.notes[0].startswith("compared with the default settings (the runs were made without release.yaml): "
                                   "1 setting weaker than ")


def test_no_rule_is_called_weaker_than_a_release_yaml_that_is_gone(make_suite: Callable[..., Path],
                                                                    tmp_path: Path) -> None:
    """A base run made with release.yaml (margin 0.01), the file then deleted and the candidate
    made without one (the defaults, margin 0.02). The candidate's rule differs from the base's (release_changed, no
    NO_REGRESSION), but no file is there now, so nothing is weaker than "<suite>/release.yaml as it is now" (a second
    look weighing the rule against no file named the deleted file)."""
    import warnings

    root = make_suite(_cases(30), evaluators=[{"type": "answer_matches"}], release={"regression": {"margin": 0.01}})
    base = _run(root, tmp_path / "base")
    (root / "release.yaml").unlink()
    cand = _run(root, tmp_path / "cand", version="b")
    assert base.release is not None and cand.release is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        cmp = op.compare(base, cand)
    assert cmp.reason.startswith("release_changed") and cmp.verdict == "INSUFFICIENT_EVIDENCE"
    assert (cmp.relaxed, cmp.weaker_than) == ((), "")
    assert not any("weaker than" in note for note in cmp.notes)


def test_the_note_names_the_candidate_s_stored_rule_when_only_the_base_had_no_release_yaml(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """The rule used without ``release`` is the candidate run's. A base made without
    release.yaml, a candidate made with margin 0.5, the file then set to 0.02: the candidate's stored 0.5 is weaker
    than the file as it is now, and the note says the settings stored with the runs, not the defaults (which the
    base alone had)."""
    import warnings

    root = make_suite(_cases(30), evaluators=[{"type": "answer_matches"}])
    base = _run(root, tmp_path / "base")
    (root / "release.yaml").write_text("regression: {margin: 0.5}\n", encoding="utf-8")
    cand = _run(root, tmp_path / "cand", version="b")
    (root / "release.yaml").write_text("regression: {margin: 0.02}\n", encoding="utf-8")
    assert base.release is None and cand.release is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the drift warning
        cmp = op.compare(base, cand)
    now = f"{root / 'release.yaml'} as it is now"
    assert cmp.reason.startswith("release_changed")  # the candidate's rule is not the base's (the defaults)
    assert (cmp.relaxed, cmp.weaker_than) == (("regression.margin 0.02 → 0.5",), now)
    assert cmp.notes[0] == f"compared with the settings stored with the runs: 1 setting weaker than {now}: " \
                           "regression.margin 0.02 → 0.5"


def test_a_criterion_no_run_judges_listed_in_release_yaml_now_is_no_weaker_rule(make_suite: Callable[..., Path],
                                                                                  tmp_path: Path) -> None:
    """``regression.criteria`` is weighed among the criteria the base run judges. release.yaml
    now lists ``later`` besides ``answer_matches`` (a check the suite has not got yet): neither run judges it, so
    the runs' rule, which lists ``answer_matches`` alone, decides every row the file's would and is not weaker
    than the file (counting ``later`` named a weaker rule that decides nothing)."""
    import warnings

    root = make_suite(_cases(30), evaluators=[{"type": "answer_matches"}],
                      release={"regression": {"criteria": ["answer_matches"]}})
    base, cand = _run(root, tmp_path / "base"), _run(root, tmp_path / "cand", version="b")
    assert base.criteria == cand.criteria == ["answer_matches"]
    (root / "release.yaml").write_text("regression: {criteria: [answer_matches, later]}\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the drift warning
        cmp = op.compare(base, cand)
    assert (cmp.relaxed, cmp.weaker_than) == ((), "")


def test_a_gate_threshold_changed_since_is_no_drift_of_the_comparison_rule(make_suite: Callable[..., Path],
                                                                          tmp_path: Path) -> None:
    """A threshold decides no comparison: edited in release.yaml after the runs, compare neither warns nor names
    it (the gate does, for its thresholds)."""
    import warnings

    root = make_suite(_cases(30), evaluators=[{"type": "answer_matches"}],
                      release={"criteria": {"answer_matches": 0.9}})
    base = _run(root, tmp_path / "base")
    cand = _run(root, tmp_path / "cand", version="b")
    (root / "release.yaml").write_text("criteria: {answer_matches: 0.95}\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cmp = op.compare(base, cand)
    assert (cmp.relaxed, cmp.weaker_than) == ((), "")


def test_a_vacuous_check_is_marked_as_the_gate_marks_it(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """A check that cannot fail (a ``state_unchanged`` path no case's state holds) is ``vacuous`` in the gate of
    either run; compared, its NO_REGRESSION said nothing of it: its reason and a note now do."""
    cases = [{**case, "initial_state": {"orders": {"o1": {"status": "open"}}}} for case in _cases(30)]
    evaluators = [{"type": "answer_matches"},
                  {"type": "state_unchanged", "criterion": "other_order_kept", "paths": ["orders.o2"]}]
    root = make_suite(cases, evaluators=evaluators)
    with pytest.warns(op.VacuousCheckWarning, match="orders.o2"):
        suite = op.load_suite(root)
    base = op.run(suite, system=lambda: Answerer(), out=tmp_path / "base", progress=False)
    again = op.run(suite, system=lambda: Answerer(), out=tmp_path / "again", progress=False)
    assert bool(op.gate(base).table.set_index("criterion").loc["other_order_kept", "vacuous"])
    cmp = op.compare(base, again, release={"regression": {"margin": 0.2}, "min_clusters": 20})
    rows = cmp.table.set_index("criterion")
    assert rows.loc["other_order_kept", "verdict"] == "NO_REGRESSION"
    assert "vacuous: it cannot fail as configured in both runs" in rows.loc["other_order_kept", "reason"]
    assert "vacuous" not in rows.loc["answer_matches", "reason"]
    vacuous = [note for note in cmp.notes if note.startswith("vacuous check (both runs): ")]
    assert len(vacuous) == 1 and "'orders.o2'" in vacuous[0] and "other_order_kept" in vacuous[0]


@pytest.mark.parametrize("side", ["base", "candidate"])
def test_a_row_vacuous_in_one_run_only_names_that_run(example_runs: dict[str, op.Run], monkeypatch: pytest.MonkeyPatch,
                                                      side: str) -> None:
    """A criterion whose check cannot fail in one of the two runs only (a suite edited between
    them) is marked on its row for that run, not for 'both runs', which the end-to-end test above alone exercised.
    Stand-in findings: ``answer_matches`` is vacuous in the ``side`` run, nothing in the other."""
    from oloproof_nb._analysis import compare

    base, again = example_runs["base"], example_runs["again"]
    held = (base if side == "base" else again).run_id
    monkeypatch.setattr(compare, "vacuous_findings",
                        lambda run: {"answer_matches": ["stand-in finding"]} if run.run_id == held else {})
    cmp = op.compare(base, again, release={**ALLOW, "regression": {"margin": MARGIN}})
    reasons = cmp.table.set_index("criterion")["reason"]
    assert f"vacuous: it cannot fail as configured in the {side} run" in reasons["answer_matches"]
    assert "both runs" not in reasons["answer_matches"]
    assert not reasons.drop("answer_matches").str.contains("vacuous").any()
    assert [n for n in cmp.notes if n.startswith("vacuous check")] == [f"vacuous check (the {side} run): stand-in "
                                                                       "finding"]


def test_copies_no_criterion_scores_are_named_as_the_gate_names_them(example_runs: dict[str, op.Run]) -> None:
    """``oloproof gate`` of either example run says ``1 copy labeled invalid, scored by no criterion:
    ord-018~injected``; a comparison of the two left the copy out of every row (n 47 of 48 paired cases) with no
    word of it. Runs made with the same labels now get the gate's line, once."""
    base, again = example_runs["base"], example_runs["again"]
    line = ("1 copy labeled invalid, scored by no criterion: ord-018~injected (see op.validity(run)); it broke its "
            "pair, so the verdict leans on its label")  # its same_state pair does not hold in either run
    assert line in repr(op.gate(base))
    cmp = op.compare(base, again, release={**ALLOW, "regression": {"margin": MARGIN}})
    assert cmp.table.set_index("criterion").loc["answer_matches", "n"] == 47
    assert [note for note in cmp.notes if "scored by no criterion" in note] == [f"both runs: {line}"]


def test_too_few_clusters_names_its_numbers_and_a_loss_below_the_margin(make_suite: Callable[..., Path],
                                                                      tmp_path: Path) -> None:
    """30 tasks of 6 customers said only ``too_few_clusters`` of a candidate failing every case."""
    root = make_suite(_cases(30, cluster_size=5), evaluators=[{"type": "answer_matches"}], release=ALLOW)
    base = _run(root, tmp_path / "b")
    worse = _run(root, tmp_path / "w", broken={f"c{i:02d}" for i in range(30)}, version="b")
    row = op.compare(base, worse).table.iloc[0]
    assert row["verdict"] == "INSUFFICIENT_EVIDENCE" and row["n_clusters"] == 6 and row["difference"] == -1.0
    assert row["ci_high"] < -0.05
    assert row["reason"].startswith("too_few_clusters: its rows fall in 6 clusters, min_clusters is 20; its interval "
                                    "lies below −margin, but from so few clusters an interval is not trusted")
    one = _run(root, tmp_path / "o", broken={"c00"}, version="c")  # 1 of 30: the interval reaches above -margin
    row = op.compare(base, one).table.iloc[0]
    assert row["ci_high"] >= -0.05
    assert row["reason"].split(";")[0] == "too_few_clusters: its rows fall in 6 clusters, min_clusters is 20"
    assert "below −margin" not in row["reason"]


class _RaisesOnce(Scheduled):
    """Scheduled, and raises on case c00 in epoch 1 (a case run ended in error: its verdicts ``missing``)."""

    def run(self, input: dict[str, Any], epoch: int) -> dict[str, Any]:  # type: ignore[override]
        if input["tag"] == "c00" and epoch == 1:
            raise RuntimeError("sandbox down")
        return super().run(input, epoch)


def test_pass_1_is_the_mean_row_with_its_flips_each_way_and_its_missing_rows(make_suite: Callable[..., Path],
                                                                             tmp_path: Path) -> None:
    """pass^1 over 2 paired epochs in every case is compared as the mean is (README: the mean, over the case runs).
    By hand, 10 cases × 2 epochs: the base passes every case run; the candidate errs on c00 epoch 1 (missing, and
    not a pass) and answers c01 wrong in both epochs: 3 pass to fail, 0 fail to pass, 1 missing, n 20. Mutants it
    kills (the flips swapped, or missing counted only where both sides miss) still passed the symmetric
    test above."""
    root = make_suite(_cases(10), evaluators=[{"type": "answer_matches"}], epochs=2,
                      release={**ALLOW, "criteria": {"answer_matches": 0.4}})
    suite = op.load_suite(root)
    base = op.run(suite, system=lambda: Scheduled(lambda i, e: True, "a"), out=tmp_path / "b", progress=False)
    cand = op.run(suite, system=lambda: _RaisesOnce(lambda i, e: i != 1, "b"), out=tmp_path / "c", progress=False)
    mean = op.compare(base, cand).table.iloc[0]
    assert (mean["n"], mean["pass_to_fail"], mean["fail_to_pass"], mean["missing"]) == (20, 3, 0, 1)
    columns = ["base_rate", "candidate_rate", "difference", "ci_low", "ci_high", "n", "n_clusters", "pass_to_fail",
               "fail_to_pass", "missing", "mcnemar_p"]
    for text in ("pass^1", "pass@1"):
        row = op.compare(base, cand, release={**ALLOW, "criteria": {"answer_matches": {
            "threshold": 0.4, "reduce": text}}}).table.iloc[0]
        pd.testing.assert_series_equal(row[columns], mean[columns], check_names=False, obj=text)


def test_all_missing_quotes_each_runs_commonest_reason(make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """``all_missing`` said nothing of why, where the gate of each run quotes its rows' commonest reason: the base
    crashed on c00–c19 (one reason, by hand: the system's RuntimeError), the candidate on c20–c39, so every paired
    row is missing in one run or the other; each run's reason is quoted with its count (20 each, by hand)."""
    root = make_suite(_cases(40), evaluators=[{"type": "answer_matches"}])
    first, last = {f"c{i:02d}" for i in range(20)}, {f"c{i:02d}" for i in range(20, 40)}
    base = _run(root, tmp_path / "base", crash=first)
    cand = _run(root, tmp_path / "cand", crash=last, version="b")
    (why,) = set(base.verdicts.loc[base.verdicts["verdict"] == "missing", "reason"])
    assert "boom" in why and set(cand.verdicts.loc[cand.verdicts["verdict"] == "missing", "reason"]) == {why}
    row = op.compare(base, cand, release=MARGIN_20).table.iloc[0]
    assert (row["n"], row["missing"], row["verdict"]) == (40, 40, "INSUFFICIENT_EVIDENCE")
    assert row["reason"] == (f'all_missing; every paired row is missing in a run: in the base run "{why}" (all 20 '
                             f'rows) and in the candidate run "{why}" (all 20 rows)')


def test_a_release_given_as_the_text_of_its_path_is_read_as_the_path_is(make_suite: Callable[..., Path],
                                                                       tmp_path: Path) -> None:
    # "the path of a release.yaml": a str as a Path (only other types are refused)
    root = make_suite(_cases(4), evaluators=[{"type": "answer_matches"}])
    run, again = _run(root, tmp_path / "r"), _run(root, tmp_path / "again")
    release = tmp_path / "release.yaml"
    release.write_text("regression:\n  margin: 0.2\nmin_clusters: 20\n", encoding="utf-8")
    as_text, as_path = op.compare(run, again, release=str(release)), op.compare(run, again, release=release)
    assert as_text.notes == as_path.notes
    assert as_text.table.equals(as_path.table)


def test_a_base_run_still_being_written_with_epochs_is_compared_as_unfinished(make_suite: Callable[..., Path],
                                                                               tmp_path: Path) -> None:
    """As the candidate above, the base: read while it runs, it holds epochs 1 and 2 of c16 only (50 of 90 case
    runs); the 40 case runs it has not recorded are unpaired, not a refusal of runs that ran other epochs."""
    root = make_suite(_cases(30), evaluators=[{"type": "answer_matches"}], epochs=3)
    _run(root, tmp_path / "base")
    cand = _run(root, tmp_path / "cand", version="b")
    journal = (tmp_path / "base" / "cases.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "base" / "cases.jsonl").write_text("".join(journal[:50]), encoding="utf-8")
    manifest = json.loads((tmp_path / "base" / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (tmp_path / "base" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    shutil.rmtree(tmp_path / "base" / "frames", ignore_errors=True)
    base = op.load_run(tmp_path / "base")
    assert sorted(base.cases.loc[base.cases["case_id"] == "c16", "epoch"]) == [1, 2]
    cmp = op.compare(base, cand, release=MARGIN_20)
    assert cmp.n_paired == 50 and len(cmp.unpaired) == 40 and set(cmp.unpaired["reason"]) == {"only_in_candidate"}
    assert cmp.verdict == "INSUFFICIENT_EVIDENCE"
