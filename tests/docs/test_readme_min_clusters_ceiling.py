"""The README's sentence on lowering ``min_clusters`` (section 1, after the release.yaml table), for the
first-hour user of 20 cases of 5 users: its ceiling checked against scipy's Clopper–Pearson bound, and its
example (all 20 pass, threshold 0.8, ``min_clusters: 5``) against the gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from scipy import stats

import oloproof_nb as op
from oloproof_nb._core.stats import rate_interval_from_sums

README = Path(__file__).resolve().parents[2] / "README.md"

ECHO = '''
class Echo:
    version = "echo-f52"

    def run(self, input):
        return {"steps": [], "answer": "ok", "status": "completed"}
'''


@pytest.mark.parametrize(("clusters", "ceiling"), [(5, "0.478"), (15, "0.782")])
def test_the_ceiling_the_readme_gives_is_the_all_pass_bound_and_no_near_all_pass_suite_exceeds_it(
        clusters: int, ceiling: str) -> None:
    bound = stats.beta.ppf(0.025, clusters, 1)  # Clopper–Pearson lower bound of G of G (scipy, not the code)
    assert f"{bound:.3f}" == ceiling and f"{ceiling} at G = {clusters}" in " ".join(README.read_text().split())
    for passes in ([4] * clusters, [4] * (clusters - 1) + [3], [100] * (clusters - 1) + [99]):
        rows = [4] * clusters if passes[0] == 4 else [100] * clusters
        assert rate_interval_from_sums(passes, rows).low <= bound + 1e-12


def test_twenty_cases_of_five_users_that_all_pass_are_insufficient_evidence_at_0_8_with_min_clusters_5(
        tmp_path: Path) -> None:
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert ("so 20 cases of 5 users that all pass are still `INSUFFICIENT_EVIDENCE` at a threshold of 0.8 with "
            "`min_clusters: 5` (0.8 needs at least 17 clusters;") in text
    assert stats.beta.ppf(0.025, 16, 1) < 0.8 <= stats.beta.ppf(0.025, 17, 1)  # 17, by scipy
    root = tmp_path / "u21"
    root.mkdir()
    (root / "echo.py").write_text(ECHO, encoding="utf-8")
    cases = [{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": "ok"}, "cluster": f"user{i % 5}"}
             for i in range(20)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (root / "oloproof.yaml").write_text(yaml.safe_dump({"name": "u21", "system": "echo:Echo", "cases": "cases.jsonl",
                                                        "evaluators": [{"type": "answer_matches"}]}), encoding="utf-8")
    (root / "release.yaml").write_text(yaml.safe_dump({"criteria": {"answer_matches": 0.8}, "min_clusters": 5,
                                                       "allow_approximate_methods": True}), encoding="utf-8")
    gate = op.gate(op.run(root, out=tmp_path / "run", progress=False))
    row = gate.table.set_index("criterion").loc["answer_matches"]
    assert row["rate"] == 1.0 and row["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert stats.beta.ppf(0.025, 16.53, 1) < 0.8 <= stats.beta.ppf(0.025, 16.54, 1)  # n_min in hundredths
    assert "0.8 needs n_min of at least 16.54 (" in row["reason"]
