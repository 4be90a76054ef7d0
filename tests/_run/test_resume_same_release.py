"""A run is resumed only by the oloproof_nb release that started it.

The cases a run recorded before it stopped keep the verdicts that release gave; a resume by another release judges
the rest by its own rules, and the gate pools both. A change to which cases may run side by side showed it: a run
started by b874813 and resumed by b142b19 held 1 fault replay ``pass`` (``recovered`` on its answer alone) beside 3
``missing`` (``recovery_unobserved``) for the same agent. The replay cache is keyed by the release, and a resume of
another system version is refused, but ``_check_resumable`` never read the manifest's ``oloproof_nb``: now it
refuses in one line. (Both commits call themselves 0.1.0, so this guard would not have caught that pair.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op


def _answers(n: int) -> list[dict[str, Any]]:
    return [{"id": f"c{i}", "input": {"answer": i}, "expected": {"answer": i}} for i in range(n)]


def _stopped_run(make_suite: Any, tmp_path: Path, release: str | None) -> tuple[Path, Path]:
    """A finished run whose manifest says it was killed after its last record, started by ``release`` (None: this
    one)."""
    root = make_suite(_answers(2))
    out = tmp_path / "run"
    op.run(root, out=out, progress=False)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]  # as if killed after the last record
    if release is not None:
        manifest["oloproof_nb"] = release
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return root, out


def test_resume_refuses_a_run_another_release_started_and_says_which(make_suite: Any, tmp_path: Path) -> None:
    root, out = _stopped_run(make_suite, tmp_path, "0.0.9")
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    with pytest.raises(op.RunDirError) as caught:
        op.run(root, out=out, resume=True, progress=False)
    assert str(caught.value) == (f"{out}: this run was started by oloproof_nb 0.0.9, not by this {op.__version__} "
                                 "(its verdicts would mix two releases' rules); finish it with oloproof_nb 0.0.9, or "
                                 "start a new run")
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before  # refused before it is touched


def test_resume_by_the_release_that_started_the_run_finishes_it(make_suite: Any, tmp_path: Path) -> None:
    root, out = _stopped_run(make_suite, tmp_path, None)
    run = op.run(root, out=out, resume=True, progress=False)
    assert sorted(run.cases["case_id"]) == ["c0", "c1"]
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["oloproof_nb"] == op.__version__
