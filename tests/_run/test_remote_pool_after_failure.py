"""A batch whose last case left its instance stale pools nothing: the instance is released and none is built to
replace it (a next batch builds its own), so the worker's pool holds no placeholder either.

A ``None`` pooled in its place was taken by the next batch as an instance checked against the run: its replay
cache key was then computed from no instance (:func:`~oloproof_nb._run.systems.replay_fingerprint` reads the
instance's settings), before the batch built the instance its case ran on.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _reliability_systems import make_case, read_log, write_suite

import oloproof_nb as op
from oloproof_nb._run import remote
from oloproof_nb._run.systems import identity_of


def test_a_batch_whose_last_case_failed_leaves_the_pool_empty(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "log"
    monkeypatch.setenv("RELSYS_LOG", str(log))
    root = write_suite(tmp_path / "suite", [make_case("c0"), make_case("c1", op="raise")],
                       system="relsys:VersionedDesk")
    suite = op.load_suite(root)
    version, fingerprint = identity_of(suite.resolve_system()(), suite.system_target, root=suite.root,
                                       spec=suite.config.system, timeout_s=None)
    cases = list(enumerate(suite.iter_cases()))
    try:
        records, _ = remote._remote_batch(str(root), dict(suite.digests), cases, "run-1", version, fingerprint,
                                          False)
        assert [(r["case"]["id"], r["status"]) for r in records] == [("c0", "completed"), ("c1", "error")]
        pools = [held.pool for key, held in remote._REMOTE_SUITES.items() if key[0] == str(root)]
        assert len(pools) == 1 and pools[0].empty()
    finally:
        remote._release_here(str(root), None)
    inits = [event for event, *_ in read_log(log) if event == "init"]
    assert len(inits) == 2  # the identity's instance and the batch's: none built after c1
