"""README sentences of 6 Dec that no test held.

- Section 2's ceiling on lowering ``min_clusters`` (its figures are held to benchmarks/coverage.md by
  tests/_core/test_stats_coverage.py) is the all-pass bound (0.025)^(1/G), checked against scipy's
  Clopper–Pearson bound and on random per-cluster counts; with ``min_clusters: 5`` five all-pass clusters are
  decided, their bound that ceiling (PASS at 0.45, not at 0.8).
- Section 4's ``by_key`` rule: two elements sharing a key value are met in order, so the same two elements
  appended in the other order fail (the README: "give each a value of its own").
- Section 5: where an outcome contract judges a case that expects no state, an admitted failure on a
  faulted replay still passes.
- Section 5's limit on artifacts: a case whose agent writes another case's promised file at another locator makes
  that case ``verified`` on 2 workers; ``workers: 1`` runs them one after the other and it is not.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from _outcome_systems import waiting_desk
from scipy import stats

import oloproof_nb as op
from oloproof_nb._core.compare import compare_state
from oloproof_nb._core.lists import ListMatch

GS = (5, 8, 10, 12, 15)


@pytest.mark.parametrize("g", GS)
def test_no_lower_bound_of_g_clusters_passes_the_all_pass_ceiling(g: int) -> None:
    """The README's ceiling: a 95% lower bound of G clusters is at most (0.025)^(1/G) (0.478 at G = 5, 0.782 at
    G = 15), the Clopper–Pearson bound of G passes of G (scipy), which G all-pass clusters reach."""
    ceiling = 0.025 ** (1 / g)
    assert ceiling == pytest.approx(stats.beta.ppf(0.025, g, 1), abs=1e-12)
    assert op.rate_interval_from_sums([3] * g, [3] * g, method="cluster_t").low == pytest.approx(ceiling, abs=1e-9)
    rng = np.random.default_rng(g)
    for _ in range(200):
        m = rng.integers(1, 8, g)
        k = rng.binomial(m, rng.uniform(0.5, 1.0))
        assert op.rate_interval_from_sums(k, m, method="cluster_t").low <= ceiling + 1e-12, (k, m)
    assert f"{0.025 ** (1 / 5):.3f}" == "0.478" and f"{0.025 ** (1 / 15):.3f}" == "0.782"


def test_by_key_elements_sharing_a_key_value_are_met_in_order() -> None:
    """Hand-worked: the two elements of id 1 appended in the other order: the first expected meets the first
    actual, whose ``v`` differs, and the second the second: both fail. Ids of their own match in any order."""
    rules = {"t": ListMatch("by_key", "id")}
    shared = compare_state({"t": [{"id": 1, "v": "a"}, {"id": 1, "v": "b"}]},
                           {"t": [{"id": 1, "v": "b"}, {"id": 1, "v": "a"}]}, "subset", lists=rules)
    assert [(path, ok) for path, _, _, ok in shared] == [("t.0.id", True), ("t.0.v", False),
                                                         ("t.1.id", True), ("t.1.v", False)]
    own = compare_state({"t": [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]},
                        {"t": [{"id": 2, "v": "b"}, {"id": 1, "v": "a"}]}, "subset", lists=rules)
    assert len(own) == 4 and all(ok for *_, ok in own)




@pytest.mark.parametrize(("workers", "mine"), [(2, "verified"), (1, "missing")])
def test_a_case_writing_another_locator_s_file_is_the_user_s_to_keep_apart(tmp_path: Path, workers: int,
                                                                           mine: str) -> None:
    root = tmp_path / "desk"
    root.mkdir()
    # export writes both files while mine, promising out/mine.txt and writing nothing, waits for its file
    (root / "desk.py").write_text(waiting_desk("desk-c18", "export", "mine", ("mine.txt", "export.txt"), "mine.txt"),
                                  encoding="utf-8")
    cases = [{"id": role, "input": {"role": role}, "expected": {"answer": "done"},
              "outcome": {"artifact_id": role, "locator": f"out/{role}.txt"}} for role in ("mine", "export")]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    config = {"name": "c18", "system": "desk:Desk", "cases": "cases.jsonl",
              "evaluators": [{"type": "answer_matches"}, {"type": "outcome_contract"}]}
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    run = op.run(op.load_suite(root), out=tmp_path / "run", workers=workers, progress=False)
    status = dict(zip(run.receipts["case_id"], run.receipts["status"], strict=True))
    # 2 workers: export wrote mine.txt while mine ran, and mine was verified on it; 1: mine ran first, alone
    assert status == {"mine": mine, "export": "verified"}, run.receipts["reason"].tolist()


AGENT = '''
class Agent:
    version = "c18"

    def reset(self, state):
        pass

    def snapshot(self):
        return {}

    def run(self, input):
        return {"steps": [], "answer": "ok", "status": "completed"}
'''


@pytest.mark.parametrize(("threshold", "verdict", "reason"), [(0.45, "PASS", ""),
                                                              (0.8, "INSUFFICIENT_EVIDENCE", "interval_includes")])
def test_lowered_min_clusters_lets_five_clusters_decide_below_the_ceiling_only(tmp_path: Path, threshold: float,
                                                                               verdict: str, reason: str) -> None:
    """README section 2: 20 cases of 5 users, every one passing, with ``min_clusters: 5``: the criterion is decided
    (not ``too_few_clusters``), its lower bound the ceiling 0.025^(1/5) = 0.478 (by hand), so a threshold of 0.45
    PASSes and 0.8 does not (its interval holds 0.8: 20 of 20 in 5 clusters cannot show more)."""
    root = tmp_path / "suite"
    root.mkdir()
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    cases = [{"id": f"u{u}-{k}", "cluster": f"user{u}", "input": {"q": f"{u}-{k}"}, "expected": {"answer": "ok"}}
             for u in range(5) for k in range(4)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    config = {"name": "c18", "system": "agent:Agent", "cases": "cases.jsonl",
              "evaluators": [{"type": "answer_matches"}]}
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (root / "release.yaml").write_text(f"criteria: {{answer_matches: {threshold}}}\nallow_approximate_methods: true\n"
                                       "min_clusters: 5\n", encoding="utf-8")
    gate = op.gate(op.run(op.load_suite(root), out=tmp_path / "run", progress=False))
    row = gate.table.set_index("criterion").loc["answer_matches"]
    assert (int(row["n"]), int(row["passed"]), int(row["n_clusters"])) == (20, 20, 5)
    assert row["ci_low"] == pytest.approx(0.025 ** (1 / 5), abs=1e-9)
    assert row["verdict"] == verdict and str(row["reason"]).startswith(reason), row["reason"]


#: A report writer that admits a failed write (``could not write the report``) and otherwise says ``done``.
WRITER = '''
from pathlib import Path

import oloproof_nb as op

OUT = Path(__file__).resolve().parent / "out"


class Writer(op.RecordedAgent):
    version = "writer-c18"

    def reset(self, state):
        OUT.mkdir(exist_ok=True)
        for f in OUT.iterdir():
            f.unlink()

    def snapshot(self):
        return {"files": sorted(f.name for f in OUT.iterdir())}

    def write_report(self, name):
        (OUT / name).write_text("total,3\\n")
        return {"ok": True}

    def act(self, input, rec):
        result = rec.tool("write_report", self.write_report, name=input["name"])
        return "done" if result.get("ok") else "could not write the report"
'''


def test_an_admitted_failure_still_passes_where_an_outcome_contract_judges_the_delivery(tmp_path: Path) -> None:
    """README section 5: where an outcome contract judges a case that expects no state, a replay
    whose answer alone matches is ``missing``, but an admitted failure still passes. By hand: each of the 3
    faulted replays answers the honest answer, so 3 passes, ``admitted_failure``, none ``recovered``."""
    root = tmp_path / "writer"
    root.mkdir()
    (root / "writer.py").write_text(WRITER, encoding="utf-8")
    cases = [{"id": f"r{n}", "input": {"name": f"r{n}.csv"}, "expected": {"answer": "done"},
              "outcome": {"artifact_id": f"report-{n}", "locator": f"out/r{n}.csv"}} for n in range(3)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    config = {"name": "c18-admits", "system": "writer:Writer", "cases": "cases.jsonl", "evaluators": [
        {"type": "answer_matches"}, {"type": "outcome_contract"},
        {"type": "fault_recovery", "tool": "write_report", "fault": "error",
         "honest_answers": ["could not write the report"]}]}
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    run = op.run(op.load_suite(root), out=tmp_path / "run", cache=False, progress=False)
    replays = run.replays
    assert replays["verdict"].tolist() == ["pass"] * 3, replays["reason"].tolist()
    assert replays["reason"].str.startswith("admitted_failure").all(), replays["reason"].tolist()
    assert not replays["recovered"].fillna(False).any()
