"""What README's "Monotone by construction" says it does not cover, the other direction: one more
passing case (not a fail turned into a pass) can lower ``ci_low``. Checked by hand (n_min and the all-pass cap from
their formulas), never against the module's own output. And what it does cover, through ``op.run`` and ``op.gate``:
on the same cases, a verdict row turned from fail or missing into a pass never takes a criterion's PASS away, nor
lowers its ``ci_low``, whatever the reduction, epochs, clusters and release settings (a seeded random search)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

import oloproof_nb as op

K = [5, 2, 1, 2, 1, 1, 1, 4, 1, 2, 4, 4, 2, 1, 4, 2, 4, 2, 5, 3]
M = [5, 2, 1, 2, 1, 2, 2, 4, 1, 3, 4, 4, 2, 1, 4, 2, 4, 3, 5, 3]


def _capped(k: list[int], m: list[int]) -> float:
    """(α/2)^(1/n_min)·p̂ at 95%, n_min = (Σm)²/Σm²: the cap of a run in which every cluster passes a row."""
    sizes = np.asarray(m, dtype=float)
    n_min = sizes.sum() ** 2 / (sizes**2).sum()
    return float(0.025 ** (1 / n_min) * sum(k) / sizes.sum())


def test_a_passing_case_added_to_a_cluster_can_lower_ci_low() -> None:
    """20 clusters of 1-5 rows, 51 of 55 passing; a sixth row, passing, in the first cluster (which passes its five)
    raises p̂ (51/55 → 52/56) but makes the sizes more unequal: n_min 16.35 → 16.00, and the cap falls 0.740 → 0.737
    (the README's figures). The gate's bound is that cap in both: it binds below the CR2 logit-t bound."""
    added_k, added_m = [K[0] + 1, *K[1:]], [M[0] + 1, *M[1:]]
    before = op.rate_interval_from_sums(K, M, method="cluster_t")
    added = op.rate_interval_from_sums(added_k, added_m, method="cluster_t")
    assert before.low == pytest.approx(_capped(K, M), abs=1e-12)
    assert added.low == pytest.approx(_capped(added_k, added_m), abs=1e-12)
    assert (round(before.low, 3), round(added.low, 3)) == (0.740, 0.737)
    assert added.estimate > before.estimate and added.low < before.low
    # turning a fail into a pass, on the same rows, still never lowers it
    turned = [K[0], K[1], K[2], K[3], K[4], K[5] + 1, *K[6:]]
    assert op.rate_interval_from_sums(turned, M, method="cluster_t").low >= before.low


#: The answer of epoch e is ``input["v"][e - 1]``: one letter per criterion, p(ass) / f(ail) / m(issing).
SYSTEM = '''
class Scripted:
    def reset(self, state):
        self.state = dict(state)
    def snapshot(self):
        return dict(self.state)
    def run(self, input, epoch):
        return {"steps": [], "answer": input["v"][epoch - 1], "status": "completed"}
'''

CHECKS = """
def _read(i, trajectory):
    return {"p": True, "f": False, "m": None}[trajectory.answer[i]]
def crit_a(case, initial_state, final_state, trajectory):
    return _read(0, trajectory)
def crit_b(case, initial_state, final_state, trajectory):
    return _read(1, trajectory)
"""


def _run(folder: Path, clusters: list[str], letters: list[list[str]], epochs: int) -> op.Run:
    folder.mkdir(parents=True)
    (folder / "scripted.py").write_text(SYSTEM)
    (folder / "checks.py").write_text(CHECKS)
    cases = [{"id": f"c{i:03d}", "cluster": cl, "input": {"v": v}, "initial_state": {}, "expected": {}}
             for i, (cl, v) in enumerate(zip(clusters, letters, strict=True))]
    (folder / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    evaluators = [{"type": "python", "name": n, "check": f"checks:{n}"} for n in ("crit_a", "crit_b")]
    (folder / "oloproof.yaml").write_text(yaml.safe_dump({"name": "monotone", "system": "scripted:Scripted",
                                                          "evaluators": evaluators, "epochs": epochs}))
    return op.run(op.load_suite(folder), out=folder / "runs" / "r", progress=False)


def _releases(rng: random.Random, epochs: int, n_clusters: int) -> list[dict[str, Any]]:
    """Release settings around the run: every reduction its epochs allow, ``min_clusters`` at the run's clusters
    and one either side, both unclustered methods, confidences on both sides of 0.75."""
    out = []
    for _ in range(8):
        reduce = rng.choice(["mean", *(f"pass{kind}{k}" for kind in "^@" for k in range(1, epochs + 1))])
        threshold = rng.choice([0.5, rng.random(), 0.3 + 0.7 * rng.random()])
        rule: Any = threshold if reduce == "mean" else {"threshold": threshold, "reduce": reduce}
        out.append({"criteria": {"crit_a": rule, "crit_b": 0.5}, "allow_approximate_methods": rng.random() < 0.9,
                    "min_clusters": max(2, n_clusters + rng.choice([-1, 0, 0, 1])),
                    "confidence": rng.choice([0.6, 0.8, 0.9, 0.95]),
                    "unclustered_method": rng.choice(["clopper_pearson", "wilson"])})
    return out


@pytest.mark.filterwarnings("ignore::UserWarning")  # a tiny run's notes (too few clusters, thresholds near 0)
@pytest.mark.parametrize("seed", range(6))
def test_a_fail_turned_into_a_pass_never_takes_a_pass_away(tmp_path: Path, seed: int) -> None:
    """Two runs of the same cases, the second with one row of ``crit_a`` (a fail or a missing) turned into a pass:
    under every release setting drawn, a PASS of the first stays a PASS, and ``ci_low`` does not fall. The counts
    are the letters planted, counted here."""
    rng = random.Random(seed)
    sizes = [rng.choice([1, 1, 2, 3]) for _ in range(rng.randint(3, 12))]
    epochs = rng.choice([1, 2, 3])
    clusters = [f"k{c:02d}" for c, size in enumerate(sizes) for _ in range(size)]
    alphabet = rng.choice(["pppf", "ppppppf", "ppfm"])
    letters = [["".join(rng.choice(alphabet) for _ in range(2)) for _ in range(epochs)] for _ in clusters]
    spots = [(c, e) for c in range(len(clusters)) for e in range(epochs) if letters[c][e][0] != "p"]
    if not spots:
        letters[0][0], spots = "f" + letters[0][0][1:], [(0, 0)]
    case, epoch = rng.choice(spots)
    better = [list(words) for words in letters]
    better[case][epoch] = "p" + better[case][epoch][1:]
    worse_run, better_run = _run(tmp_path / "worse", clusters, letters, epochs), _run(tmp_path / "better", clusters,
                                                                                       better, epochs)
    planted = sum(word[0] == "p" for words in letters for word in words)
    for release in _releases(rng, epochs, len(sizes)):
        worse = op.gate(worse_run, release=release).table.set_index("criterion").loc["crit_a"]
        after = op.gate(better_run, release=release).table.set_index("criterion").loc["crit_a"]
        if worse["reduce"] == "mean":
            assert (int(worse["passed"]), int(after["passed"])) == (planted, planted + 1)
        where = f"{release}: {worse.to_dict()} then {after.to_dict()}"
        if worse["verdict"] == "PASS":
            assert after["verdict"] == "PASS", where
        if not math.isnan(worse["ci_low"]):
            assert after["ci_low"] >= worse["ci_low"], where
