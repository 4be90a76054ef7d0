"""A run whose folder is deleted while it runs (a system that removed its own run folder was told to
free space and resume — neither helps: nothing is full, and there is no run left to resume)."""

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
    assert "was deleted or moved while the run went on" in message and "start the run again" in message
    assert "Free space" not in message and "resume" not in message
