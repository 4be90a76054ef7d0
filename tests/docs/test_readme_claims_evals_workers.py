"""README sentences added on 6 Dec that no test pinned.

* Section 7 (Inspect AI): two evals of one task that ran the same samples (last week's log beside this week's) are
  refused in one line naming the other log (``sample 't01' epoch 1 is also in <log>``). The test beside it copied one
  log twice; here the two are two real evals, each with its own eval id.
* Section 8 (``--workers``): ``isolation: process`` hides a sandbox held at module level (each worker imports its
  own module), so such a desk passes every case on two workers.
* "Reliability": with ``isolation: process`` each worker drops its system before it exits, and one whose finaliser
  overruns is ended, the run finished.
* Section 1: a ``reset`` that leaves a table out shows in the baseline where an ``initial_state`` holds rows of it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from _inspect_logs import refund_desk, shared_logs, write_logs
from _reliability_systems import one_error_line

import oloproof_nb as op
from oloproof_nb.cli import main


@pytest.fixture(scope="module")
def eval_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The refund-desk log of tests/_inspect_task.py (read only: a test copies it)."""
    with shared_logs(tmp_path_factory, "refund-desk", refund_desk) as root:
        (found,) = sorted((root / "logs").glob("*.eval"))
        yield found


def test_two_inspect_evals_of_one_task_over_the_same_samples_are_refused_naming_the_other_log(
        eval_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The refund desk run again (another eval id, another file name) beside the shared log: its samples are the
    same, so pooled each would count twice. Exit 2, one line naming a sample and the other log; nothing written."""
    again = tmp_path / "again"
    write_logs(again, str(again / "logs"), str(again / "json"), log_dir=again / "logs")
    (second,) = sorted((again / "logs").glob("*.eval"))
    assert second.name != eval_file.name  # two evals, not one log copied
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy2(eval_file, folder / eval_file.name)
    shutil.copy2(second, folder / second.name)
    before = sorted(p.name for p in folder.iterdir())

    code = main(["gate", str(folder)])
    out, err = capsys.readouterr()
    assert code == 2 and "PASS" not in out
    line = one_error_line(err)
    first, later = sorted([eval_file.name, second.name])  # read in name order: the later one finds the first
    assert f"{later}: sample " in line and f"epoch 1 is also in {folder / first}" in line, line
    assert sorted(p.name for p in folder.iterdir()) == before
    with pytest.raises(op.OloproofError, match=r"epoch 1 is also in "):
        op.from_inspect(folder)


MODULE_DESK = '''
import oloproof_nb as op

WORLD = {"notes": {}}   # the sandbox at module level: one per process


class ModuleDesk(op.RecordedAgent):
    version = "module-desk-1"

    def reset(self, state):
        WORLD["notes"] = dict(state["notes"])

    def snapshot(self):
        return {"notes": dict(WORLD["notes"])}

    def write(self, note_id):
        WORLD["notes"][note_id] = "hi"
        return {"ok": True}

    def act(self, input, rec):
        rec.tool("write", self.write, note_id=input["id"])
        return "written"
'''

SLOW_FINALISER = '''
import os
import time
import weakref

import oloproof_nb as op


def _slow(marker):
    open(marker, "w").close()   # the worker dropped its system: the finaliser started
    time.sleep(600)


class SlowDesk(op.RecordedAgent):
    version = "slow-desk-1"

    def __init__(self):
        self.notes = {}
        weakref.finalize(self, _slow, os.path.join(os.environ["C19_MARKERS"], f"{os.getpid()}-{id(self)}"))

    def reset(self, state):
        self.notes = dict(state["notes"])

    def snapshot(self):
        return {"notes": dict(self.notes)}

    def write(self, note_id):
        self.notes[note_id] = "hi"
        return {"ok": True}

    def act(self, input, rec):
        rec.tool("write", self.write, note_id=input["id"])
        return "written"
'''


def _suite(root: Path, module: str, code: str, cls: str, n: int, timeout_s: int = 30) -> Path:
    root.mkdir()
    (root / f"{module}.py").write_text(code, encoding="utf-8")
    (root / "oloproof.yaml").write_text(
        f"name: c19\nsystem: {module}:{cls}\ncase_timeout_s: {timeout_s}\n"
        "evaluators:\n  - {type: state_matches, mode: changes}\n", encoding="utf-8")
    lines = [{"id": f"n{i}", "input": {"id": f"n{i}"}, "initial_state": {"notes": {}},
              "expected": {"state": {"notes": {f"n{i}": "hi"}}}} for i in range(n)]
    (root / "cases.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return root


def test_process_isolation_gives_each_worker_its_own_module_level_sandbox(tmp_path: Path) -> None:
    """Each case writes one note into the module's dict; every case sees only its own (a worker runs its cases
    one at a time, and the other worker's writes are in another process)."""
    root = _suite(tmp_path / "suite", "module_desk", MODULE_DESK, "ModuleDesk", 8)
    run = op.run(root, out=tmp_path / "run", progress=False, isolation="process", workers=2)
    assert list(run.verdicts["verdict"]) == ["pass"] * 8


def test_a_worker_whose_finaliser_overruns_is_ended_and_the_run_finishes(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The system's finaliser sleeps 600 s; the worker is asked to drop its system, the finaliser starts (its marker
    file), and the worker is ended: ``op.run`` returns a finished run, every case judged."""
    markers = tmp_path / "markers"
    markers.mkdir()
    monkeypatch.setenv("C19_MARKERS", str(markers))
    root = _suite(tmp_path / "suite", "slow_desk", SLOW_FINALISER, "SlowDesk", 3, timeout_s=2)
    run = op.run(root, out=tmp_path / "run", progress=False, isolation="process", workers=1)
    assert run.finished
    assert list(run.verdicts["verdict"]) == ["pass"] * 3
    assert len(list(markers.iterdir())) == 1  # the one worker's system was dropped, its finaliser started
