""":meth:`RunStore.resume` itself refuses an unfinished run whose journal another folder shares (``cp -al``), before
anything is run: the refusal is not left to the first append, which comes after the system was built and a case
ran (its record then lost), and after the folder's ``started.jsonl`` was replaced.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from oloproof_nb._core.records import Manifest
from oloproof_nb._run.store import CASES, STATES, RunStore
from oloproof_nb.errors import RunDirError

pytestmark = pytest.mark.skipif(not hasattr(os, "link"), reason="no hard links on this platform")

MANIFEST = Manifest(suite="s", run_id="x", started_at="2026-01-01T00:00:00.000000Z", oloproof_nb="0", n_cases=2)


@pytest.mark.parametrize("name", [CASES, STATES])
def test_the_resume_of_an_unfinished_run_with_a_shared_journal_is_refused_up_front(tmp_path: Path,
                                                                                   name: str) -> None:
    store = RunStore.create(tmp_path / "A", MANIFEST)
    store._append(CASES, {"case": {"id": "a"}})
    store._append(STATES, {"ref": "r"})
    store.close()  # stopped, not finished
    shutil.copytree(tmp_path / "A", tmp_path / "B", copy_function=os.link)  # cp -al
    for other in {CASES, STATES} - {name}:  # only ``name`` is shared
        data = (tmp_path / "B" / other).read_bytes()
        (tmp_path / "B" / other).unlink()
        (tmp_path / "B" / other).write_bytes(data)
    with pytest.raises(RunDirError, match=rf"B/{name.replace('.', '[.]')}: has 2 hard links"):
        RunStore.resume(tmp_path / "B").close()


def test_the_resume_of_a_run_whose_journals_are_its_own_is_not_refused(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path / "A", MANIFEST)
    store._append(CASES, {"case": {"id": "a"}})
    store.close()
    shutil.copytree(tmp_path / "A", tmp_path / "B")  # cp -r
    RunStore.resume(tmp_path / "B").close()
