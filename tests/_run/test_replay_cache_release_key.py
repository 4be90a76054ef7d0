"""oloproof_nb's own version is part of the replay cache key.

A new release that makes replays otherwise (how a fault is injected, how the sandbox is reset or snapshotted)
reused the replays an older release made, unless someone remembered to bump ``CACHE_SCHEMA``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from _reliability_systems import EVALUATORS, FAULT_EVALUATOR, make_case, write_suite

import oloproof_nb as op
from oloproof_nb import _version
from oloproof_nb._run.replay_cache import CACHE_SCHEMA, ReplayCache, replay_key

KEY_ARGS = ("v1", "f" * 64, "d" * 64, 2, {"result": {"ok": False}}, "r" * 64)


def _cached(run: op.Run) -> list[bool]:
    return [bool(c) for c in run.replays["cached"]]


def test_the_key_holds_the_package_version_read_when_the_key_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """The key, recomputed with hashlib and json from the parts, names the version in force at the call; another
    version is another key (without the version the two keys were equal)."""
    now = replay_key(*KEY_ARGS)
    parts = {"schema": CACHE_SCHEMA, "oloproof_nb": op.__version__, "system_version": "v1",
             "code_fingerprint": "f" * 64, "case_digest": "d" * 64, "checkpoint": 2,
             "change": {"result": {"ok": False}}, "recording": "r" * 64, "case_timeout_s": None}
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert now == hashlib.sha256(text.encode("utf-8")).hexdigest()
    monkeypatch.setattr(_version, "__version__", "99.0.0")
    assert replay_key(*KEY_ARGS) != now
    monkeypatch.setattr(_version, "__version__", op.__version__)
    assert replay_key(*KEY_ARGS) == now


def test_an_entry_stored_under_another_release_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ReplayCache(tmp_path / "replays")
    monkeypatch.setattr(_version, "__version__", "0.0.9")
    cache.put(replay_key(*KEY_ARGS), {"trajectory": {"steps": []}, "state": {"old": 1}})
    assert cache.get(replay_key(*KEY_ARGS)) == {"trajectory": {"steps": []}, "state": {"old": 1}}  # same release
    monkeypatch.setattr(_version, "__version__", "0.1.0")
    assert cache.get(replay_key(*KEY_ARGS)) is None  # the next release makes the replay again


def test_a_run_under_another_version_replays_live_and_the_same_version_reuses(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A real suite (2 cases, a control and a faulted replay each): run, run again under another version (all
    live), again under that version (all cached), and under the first version (its entries are still there)."""
    root = write_suite(tmp_path / "suite", [make_case(f"c{i}") for i in range(2)],
                       evaluators=[*EVALUATORS, FAULT_EVALUATOR], system="relsys:VersionedDesk")
    first = op.run(root, out=tmp_path / "first", progress=False)
    assert _cached(first) == [False, False]
    monkeypatch.setattr(_version, "__version__", "99.0.0")
    upgraded = op.run(root, out=tmp_path / "upgraded", progress=False)
    assert _cached(upgraded) == [False, False]  # before: [True, True], the old release's replays
    again = op.run(root, out=tmp_path / "again", progress=False)
    assert _cached(again) == [True, True]
    monkeypatch.setattr(_version, "__version__", op.__version__)
    back = op.run(root, out=tmp_path / "back", progress=False)
    assert _cached(back) == [True, True]
    assert list(first.replays["verdict"]) == list(upgraded.replays["verdict"]) == list(back.replays["verdict"])
