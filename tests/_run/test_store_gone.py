"""A run whose folder is deleted or moved while it runs (a system that removed its own run folder was told to
free space and resume — neither helps: nothing is full, and there is no run left to resume; a folder moved whole
is resumed where it is now)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.errors import StoreWriteError

REMOVER = '''
import shutil
from pathlib import Path

class Remover:
    version = "1"
    def reset(self, state): self.state = dict(state)
    def snapshot(self): return dict(self.state)
    def run(self, input):
        if input["n"] == 1:  # the second case removes the run folder the first was written to
            shutil.rmtree(Path(input["out"]))
        return {"steps": [], "answer": "done", "status": "completed"}
'''


def test_a_run_folder_deleted_mid_run_says_so_not_free_space(make_suite: Callable[..., Path],
                                                               tmp_path: Path) -> None:
    out = tmp_path / "run"
    cases = [{"id": f"c{n}", "input": {"n": n, "out": str(out)}, "expected": {"answer": "done"}} for n in range(3)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Remover", system_code=REMOVER)
    with pytest.raises(StoreWriteError) as err:
        op.run(op.load_suite(root), out=out, progress=False)
    message = str(err.value)
    assert "cannot write (No such file or directory); the run stopped and nothing was blamed on the system" in message
    assert "was deleted or moved while the run went on" in message
    assert "if it was deleted, start the run again, into a folder nothing else removes" in message
    assert "Free space" not in message


MOVER = '''
import os

class Mover:
    version = "1"
    def reset(self, state): self.state = dict(state)
    def snapshot(self): return dict(self.state)
    def run(self, input):
        if input["n"] == 1 and os.path.isdir(input["out"]):  # the second case moves the run folder away
            os.rename(input["out"], input["out"] + "-moved")
        return {"steps": [], "answer": "done", "status": "completed"}
'''


def test_a_run_folder_moved_mid_run_is_told_to_resume_where_it_is_now(make_suite: Callable[..., Path],
                                                                    tmp_path: Path) -> None:
    """The message said only to start the run again, while a resume of the moved folder finishes the run."""
    out = tmp_path / "run"
    cases = [{"id": f"c{n}", "input": {"n": n, "out": str(out)}, "expected": {"answer": "done"}} for n in range(4)]
    root = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Mover", system_code=MOVER)
    with pytest.raises(StoreWriteError) as err:
        op.run(op.load_suite(root), out=out, progress=False)
    assert ("if it was moved, resume the run where it is now (resume=True, or --resume, with the new path as out)"
            in str(err.value))
    run = op.run(op.load_suite(root), out=tmp_path / "run-moved", resume=True, progress=False)
    assert sorted(run.cases["case_id"]) == ["c0", "c1", "c2", "c3"]
    assert list(run.cases["status"]) == ["completed"] * 4 and list(run.verdicts["verdict"]) == ["pass"] * 4
