"""The README's Dask recipe on pooled runs of several epochs: per-cluster sums computed on a Dask
``LocalCluster`` from each run's ``frames/verdicts.parquet`` give exactly the interval ``op.gate(op.load_runs(...))``
shows for a ``mean`` criterion, with the counts taken by hand from the case plans. (The recipe's earlier test pools
three 1-epoch runs; here each case's epochs and its rows in two runs share one cluster.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

import oloproof_nb as op

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

#: Epoch e of a case answers right when ``plan[e-1]``.
PLANNED = '''
class Planned:
    version = "planned-1"

    def reset(self, state):
        self.state = dict(state)

    def snapshot(self):
        return dict(self.state)

    def run(self, input, epoch):
        return {"steps": [], "answer": "yes" if input["plan"][epoch - 1] else "no", "status": "completed"}
'''
#: 12 cases of 3 epochs: case i fails epoch 2 when i % 3 == 0 and epoch 3 when i % 4 == 0.
PLANS = [[True, i % 3 != 0, i % 4 != 0] for i in range(12)]


def test_dask_sums_of_pooled_epoch_runs_give_the_gates_interval(tmp_path: Path) -> None:
    root = tmp_path / "suite"
    root.mkdir()
    (root / "sysmod.py").write_text(PLANNED, encoding="utf-8")
    cases = [{"id": f"c{i:02d}", "input": {"plan": plan, "i": i}, "expected": {"answer": "yes"}}
             for i, plan in enumerate(PLANS)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    (root / "oloproof.yaml").write_text(yaml.safe_dump({"name": "planned", "system": "sysmod:Planned", "epochs": 3,
                                                        "evaluators": [{"type": "answer_matches"}]}), encoding="utf-8")
    (root / "release.yaml").write_text(yaml.safe_dump({"allow_approximate_methods": True, "min_clusters": 2,
                                                       "criteria": {"answer_matches": 0.5}}), encoding="utf-8")
    pool = [str(op.run(op.load_suite(root), out=tmp_path / name, progress=False).directory) for name in ("a", "b")]

    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
    client: Any = distributed.Client(cluster)
    try:  # the README's block, as written there
        v = dd.read_parquet([f"{d}/frames/verdicts.parquet" for d in pool], columns=["criterion", "cluster", "verdict"])
        s = v.assign(k=v.verdict.eq("pass").astype(int)).groupby(["criterion", "cluster"]).k.agg(
            ["sum", "count"]).compute()
        c = dd.read_parquet([f"{d}/frames/cases.parquet" for d in pool], columns=["cluster"]).cluster.value_counts()
        method = "cluster_t" if (c.compute() > 1).any() else "clopper_pearson"
        crit = s.loc["answer_matches"].sort_index()
        iv = op.rate_interval_from_sums(crit["sum"], crit["count"], method=method)
    finally:
        client.close()
        cluster.close()

    # by hand: each case is one cluster of 2 runs x 3 epochs; its passes twice the plan's
    assert crit["count"].tolist() == [6] * 12
    assert crit["sum"].tolist() == [2 * sum(plan) for plan in PLANS]
    assert int(crit["sum"].sum()) == 2 * (36 - 4 - 3)  # 4 fail epoch 2 (i % 3 == 0), 3 epoch 3 (i % 4 == 0)
    row = op.gate(op.load_runs(pool)).table.set_index("criterion").loc["answer_matches"]
    assert method == "cluster_t" == row["method"] == iv.method
    assert (iv.n, iv.n_clusters) == (row["n"], row["n_clusters"]) == (72, 12)
    np.testing.assert_allclose([iv.estimate, iv.low, iv.high], [row["rate"], row["ci_low"], row["ci_high"]],
                               rtol=0, atol=1e-12)
