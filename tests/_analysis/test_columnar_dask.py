"""Beyond one machine: a folder of runs read with ``dask.dataframe.read_parquet``, per-cluster sums computed
on a Dask ``LocalCluster``, and the interval from those sums equal to the gate's for the same criterion."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import oloproof_nb as op
from oloproof_nb._core.stats import Interval, is_clustered
from oloproof_nb.examples import init_example

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client() -> Any:
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(scope="module")
def runs_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three runs of the refund desk example (pairs, replays, metamorphic labels), each with its columnar copy."""
    root = tmp_path_factory.mktemp("dask")
    suite = init_example("stateful-agent", root / "suite")
    for i in range(3):
        op.run(suite, out=root / "runs" / f"r{i}", progress=False)
    return root / "runs"


def interval_from_sums(passes: np.ndarray, rows: np.ndarray, release: Any, clustered: bool) -> Interval:
    """The gate's interval for one criterion from its per-cluster sums (passes k_c, rows m_c)."""
    method = release.method if clustered else release.unclustered_method
    return op.rate_interval_from_sums(passes, rows, method=method, confidence=release.confidence)


def test_dask_sums_over_a_folder_of_runs_give_the_gates_interval(client: Any, runs_folder: Path) -> None:
    # the README's recipe: read every run's verdicts, one row per case x criterion, and sum per cluster
    verdicts = dd.read_parquet(str(runs_folder / "*" / "frames" / "verdicts.parquet"),
                               columns=["criterion", "cluster", "verdict"])
    sums = (verdicts.assign(passed=(verdicts["verdict"] == "pass").astype("int64"))
            .groupby(["criterion", "cluster"])["passed"].agg(["sum", "count"]).compute())
    assert verdicts.npartitions >= 3  # one file per run at least: the work is split

    pooled = op.load_runs(sorted(runs_folder.iterdir()))
    table = op.gate(pooled).table.set_index("criterion")
    release = pooled.release
    assert release is not None
    clustered = is_clustered(pooled.cases["cluster"].to_numpy())
    assert clustered  # the same case in three runs shares a cluster
    checked = 0
    for criterion, group in sums.groupby(level="criterion"):
        passes = group["sum"].to_numpy()
        rows = group["count"].to_numpy()
        # the sums, counted by hand from the pooled frame
        frame = pooled.verdicts[pooled.verdicts["criterion"] == criterion]
        by_hand = frame.assign(p=frame["verdict"].eq("pass")).groupby("cluster")["p"].agg(["sum", "count"])
        got = pd.DataFrame({"sum": passes, "count": rows}, index=group.index.get_level_values("cluster"))
        pd.testing.assert_frame_equal(got.sort_index(), by_hand.astype("int64").sort_index(), check_names=False,
                                      check_index_type=False)

        iv = interval_from_sums(passes, rows, release, clustered)
        row = table.loc[criterion]
        assert (int(rows.sum()), int(passes.sum()), len(rows)) == (row["n"], row["passed"], row["n_clusters"])
        assert iv.method == row["method"]
        np.testing.assert_allclose([iv.estimate, iv.low, iv.high], [row["rate"], row["ci_low"], row["ci_high"]],
                                   rtol=0, atol=1e-12)
        checked += 1
    assert checked == len(table) == len(pooled.criteria)
