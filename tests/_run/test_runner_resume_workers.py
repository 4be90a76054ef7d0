"""A resume with few case runs left builds no more system instances (or worker processes) than it
can use. Before, the cap on ``workers`` was the suite's whole count of case runs, taken before the run folder was
read: a resume of the last case of 8 with ``workers=4`` built 4 instances (threads) or started 4 worker processes
(``isolation: process``), 3 of them for nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._run.isolation import ProcessWorkers

#: Counts its instances in a file (a worker process builds its own, so a class attribute would not see them).
COUNTED = '''import os


class Desk:
    version = "desk"

    def __init__(self):
        with open(os.environ["L3_BUILT"], "a", encoding="utf-8") as f:
            f.write("built\\n")

    def run(self, input):
        return {"steps": [], "answer": "ok", "status": "completed"}
'''


def _interrupted(make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                 left: int) -> tuple[Path, Path]:
    """A suite of 8 cases and its run folder, as a run stopped with ``left`` case runs not recorded; the desk
    counts the instances built after it in ``built.txt``."""
    built = tmp_path / "built.txt"
    monkeypatch.setenv("L3_BUILT", str(built))
    cases = [{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": "ok"}} for i in range(8)]
    root = make_suite(cases, system="l3desk:Desk", system_code="", evaluators=[{"type": "answer_matches"}])
    (root / "l3desk.py").write_text(COUNTED, encoding="utf-8")
    out = tmp_path / "run"
    op.run(root, out=out, progress=False)
    lines = (out / "cases.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (out / "cases.jsonl").write_text("".join(lines[:8 - left]), encoding="utf-8")
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    manifest.pop("finished_at")
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    built.unlink()
    return root, out


@pytest.mark.parametrize("left", [1, 3])
def test_a_thread_resume_builds_no_more_instances_than_case_runs_left(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, left: int) -> None:
    root, out = _interrupted(make_suite, tmp_path, monkeypatch, left)
    run = op.run(root, out=out, progress=False, resume=True, workers=4)
    assert len(run.cases) == 8
    assert len((tmp_path / "built.txt").read_text(encoding="utf-8").splitlines()) == left  # before: 4 either way


def test_a_process_resume_starts_no_more_workers_than_case_runs_left(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, out = _interrupted(make_suite, tmp_path, monkeypatch, 1)
    spawned: list[int] = []
    spawn = ProcessWorkers._spawn

    def counted(self: ProcessWorkers, failures: int = 0) -> Any:
        spawned.append(failures)
        return spawn(self, failures)

    monkeypatch.setattr(ProcessWorkers, "_spawn", counted)
    run = op.run(root, out=out, progress=False, resume=True, workers=4, isolation="process")
    assert len(run.cases) == 8
    assert len(spawned) == 1  # before: 4 worker processes for the 1 case run left


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_a_resume_with_every_case_run_recorded_stamps_the_run_finished(
        make_suite: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolation: str) -> None:
    """A run stopped after its last record and before its end was stamped has 0 case runs left;
    the cap keeps 1 worker (not 0) and the resume stamps the run finished, building at most that one instance."""
    root, out = _interrupted(make_suite, tmp_path, monkeypatch, 0)
    run = op.run(root, out=out, progress=False, resume=True, workers=4, isolation=isolation)
    assert (len(run.cases), run.finished) == (8, True)
    built = tmp_path / "built.txt"
    assert (len(built.read_text(encoding="utf-8").splitlines()) if built.exists() else 0) <= 1


@pytest.mark.parametrize(("removed", "said"), [
    (["release.yaml"], "release.yaml was removed since this run started (the run would be gated by the copy it "
                       "started with, which the suite no longer has)"),
    (["labels/polite.jsonl", "release.yaml"], "labels/polite.jsonl, release.yaml were removed since this run "
                                              "started (release.yaml: the run would be gated by the copy it started "
                                              "with, which the suite no longer has; labels/polite.jsonl: the run's "
                                              "first cases were judged by a suite it no longer is)"),
    (["labels/polite.jsonl"], "labels/polite.jsonl was removed since this run started (the run's first cases were "
                              "judged by a suite it no longer is)"),
])
def test_a_resume_names_the_suite_files_removed_since_and_why_each_matters(tmp_path: Path, removed: list[str],
                                                                           said: str) -> None:
    from types import SimpleNamespace

    from oloproof_nb import __version__
    from oloproof_nb._run.runner import _check_resumable

    kept = {"cases.jsonl": "a", "oloproof.yaml": "b"}
    manifest = SimpleNamespace(suite="s", epochs=1, oloproof_nb=__version__,
                               digests={**kept, **{name: "x" for name in removed}})
    suite = SimpleNamespace(name="s", digests=kept)
    with pytest.raises(op.RunDirError) as err:
        _check_resumable(manifest, suite, None, None, tmp_path, None)  # type: ignore[arg-type]
    back = "put it back as it was" if len(removed) == 1 else "put them back as they were"  # one file, or two
    assert said in str(err.value) and str(err.value).endswith(f"; {back}, or start a new run instead")
