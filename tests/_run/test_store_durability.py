"""``_run/store`` (resume, durability): edges the nearest tests leave open.

Each expectation is taken from outside the code under test: the bytes of a file read directly, the size of a file
at the moment it is forced to the disk (``os.fstat`` on the descriptor given to ``fsync``), a hand count.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from oloproof_nb._core.records import Manifest
from oloproof_nb._run.store import MANIFEST, REPLAYS, RunStore

RUN = Manifest(suite="s", run_id="x", started_at="2026-01-01T00:00:00.000000Z", oloproof_nb="0", n_cases=0)


def test_the_manifest_is_whole_in_its_file_when_it_is_forced_to_the_disk(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """``write_manifest(durable=True)`` flushes Python's buffer before ``fsync``: without the flush, forced
    while the text still sits in the buffer, the file on the disk is empty and a power loss right after the
    rename leaves an empty ``manifest.json``. At each ``fsync`` of a regular file the file holds every byte the
    finished manifest holds (read back directly)."""
    sizes: list[int] = []
    real_fsync = os.fsync

    def measuring(fd: int) -> None:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):  # the folder is forced too, after the rename
            sizes.append(info.st_size)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", measuring)  # the os module the store calls
    store = RunStore.create(tmp_path / "r", RUN)
    written = len((tmp_path / "r" / MANIFEST).read_bytes())
    store.close()
    assert written > 0 and sizes == [written]  # one file forced: the manifest's temporary file, whole


def _case(epoch: int) -> dict[str, object]:
    case: dict[str, object] = {"id": "c0", "input": {}, "initial_state": {"paid": False}, "cluster": "c0"}
    if epoch != 1:
        case["epoch"] = epoch
    return {"index": 0, "case": case, "status": "completed", "environment_state": None}


def _replay_line(epoch: int, result: str) -> dict[str, object]:
    line: dict[str, object] = {"case_id": "c0"}
    if epoch != 1:
        line["epoch"] = epoch
    return {**line, "kind": "fault", "checkpoint": 1, "change": {"result": result}, "trajectory": None,
            "environment_state": None, "cached": False, "error": None}


def test_a_resume_drops_the_replays_of_an_epoch_the_crash_cut_short_not_only_of_a_case(tmp_path: Path) -> None:
    """Epoch 1 of ``c0`` was recorded with its replay; epoch 2 appended its replay, then the process died before
    its case record. The resume runs epoch 2 again, so its earlier replay goes (a replay keyed by its
    case id alone would look recorded through epoch 1, and stay beside the one the rerun appends: two replays of one
    fault for epoch 2). Read back directly: one line, epoch 1's."""
    directory = tmp_path / "r"
    store = RunStore.create(directory, RUN.model_copy(update={"epochs": 2}))
    store.append_replay(_replay_line(1, "declined"))  # type: ignore[arg-type]  # a record is a dict
    store.append_case(_case(1))  # type: ignore[arg-type]
    store.append_replay(_replay_line(2, "timeout"))  # type: ignore[arg-type]
    store.close()  # killed here: epoch 2 has no record
    RunStore.resume(directory).close()
    kept = [json.loads(line) for line in (directory / REPLAYS).read_text(encoding="utf-8").splitlines()]
    assert [(line["case_id"], line.get("epoch", 1), line["change"]["result"]) for line in kept] == [
        ("c0", 1, "declined")]
