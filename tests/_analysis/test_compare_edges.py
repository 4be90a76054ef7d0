"""Edges the other tests did not pin (found by mutation testing) for op.compare: rules the suite does not pin.
Expected values are hand counts."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import oloproof_nb as op


class Answerer:
    """Answers ``input["answer"]``; a crash for the tags in ``crash``."""

    def __init__(self, crash: set[str] = frozenset(), version: str = "a") -> None:
        self.crash, self.version, self.state = set(crash), version, {}

    def reset(self, state: dict[str, Any]) -> None:
        self.state = copy.deepcopy(state)

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(self.state)

    def run(self, input: dict[str, Any]) -> dict[str, Any]:
        if input["tag"] in self.crash:
            raise RuntimeError("boom")
        return {"steps": [], "answer": input["answer"], "status": "completed"}


def _cases(n: int) -> list[dict[str, Any]]:
    return [{"id": f"c{i:02d}", "input": {"tag": f"c{i:02d}", "answer": "ok"}, "expected": {"answer": "ok"},
             "cluster": f"g{i:02d}"} for i in range(n)]


def _run(suite: Path, out: Path, **system: Any) -> op.Run:
    return op.run(op.load_suite(suite), system=lambda: Answerer(**system), out=out, progress=False)


RELEASE = {"regression": {"margin": 0.2}, "min_clusters": 20}


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
    cmp = op.compare(base, cand, release=RELEASE)
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
    cmp = op.compare(base, tmp_path / "cand", release=RELEASE)
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
    row = op.compare(base, cand, release=RELEASE).table.iloc[0]
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


def test_a_merged_cluster_is_named_after_its_smallest_base_cluster_whatever_the_hash_order() -> None:
    """Clusters the candidate joins are merged and named after their first base cluster in sorted order; named
    after the first one a set yields, the name would change between processes (string hashes are randomised)."""
    import pandas as pd

    from oloproof_nb._analysis.compare import _merged_clusters

    base = [f"g{i:02d}" for i in range(30, 0, -1)] + ["solo"]  # 30 base clusters, listed largest first
    candidate = ["joined"] * 30 + ["alone"]  # the candidate puts the 30 in one cluster
    merged = _merged_clusters(pd.Series(base), pd.Series(candidate))
    assert list(merged) == ["g01"] * 30 + ["solo"]
