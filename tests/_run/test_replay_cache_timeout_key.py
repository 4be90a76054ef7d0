"""The run's ``case_timeout_s`` is part of the replay cache key.

A replay cached under a limit of 60 s was served to a run whose limit it would exceed: the fault criterion
passed on the cached replay, where live the replay runs out of time and its verdict is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from _reliability_systems import EVALUATORS, FAULT_EVALUATOR, make_case, write_suite

import oloproof_nb as op


def test_a_replay_cached_under_a_longer_case_timeout_runs_live_under_a_shorter_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The desk's replays block until the release file exists: present, they finish at once (cached under 60 s);
    removed, a replay outlasts a limit of 1 s. Before the limit was in the key, the third run took the replay
    from the cache and the fault criterion passed (it is ``missing`` live)."""
    release = tmp_path / "release"
    release.touch()
    monkeypatch.setenv("RELSYS_RELEASE", str(release))
    mood = tmp_path / "mood"
    mood.write_text("careful", encoding="utf-8")  # the desk escalates a failed payment: it recovers
    root = write_suite(tmp_path / "suite", [make_case("c0", replay_op="hang", mood_file=str(mood))],
                       evaluators=[*EVALUATORS, FAULT_EVALUATOR], system="relsys:VersionedDesk", case_timeout_s=60)
    for name, cached in (("first", False), ("again", True)):
        run = op.run(root, out=tmp_path / name, progress=False)
        assert [bool(c) for c in run.replays["cached"]] == [cached]
        assert list(run.verdicts[run.verdicts["criterion"].str.startswith("recovers")]["verdict"]) == ["pass"]
    suite_file = root / "oloproof.yaml"
    config = yaml.safe_load(suite_file.read_text(encoding="utf-8"))
    suite_file.write_text(yaml.safe_dump({**config, "case_timeout_s": 1}, sort_keys=False), encoding="utf-8")
    release.unlink()
    try:
        short = op.run(root, out=tmp_path / "short", progress=False)
    finally:
        release.touch()  # ends the replay left running on its helper thread
    assert not any(short.replays["cached"])  # was [True]
    recovers = short.verdicts[short.verdicts["criterion"].str.startswith("recovers")]
    assert list(recovers["verdict"]) == ["missing"]  # was ["pass"]
