"""``oloproof gate`` of a run that did not finish says how to finish it: the command, pasted into a POSIX shell, gives
``oloproof run`` the suite's folder and the run's, each one word though both hold a space."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.cli import main

CASES = [{"id": f"c{i}", "input": {"answer": "done", "k": i}, "initial_state": {},
          "expected": {"answer": "done"}} for i in range(3)]


def test_the_finish_command_of_an_unfinished_run_splits_into_its_paths(make_suite: Callable[..., Path],
                                                                       tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    made = make_suite(CASES, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.5}})
    root = made.rename(made.parent / "my suite")
    out = tmp_path / "my run"
    assert op.run(op.load_suite(root), out=out, progress=False).finished
    lines = (out / "cases.jsonl").read_bytes().split(b"\n")[:2]  # as a crash after two cases leaves it
    (out / "cases.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert main(["gate", str(out)]) == 2
    line = capsys.readouterr().err.strip()
    command = line.split("finish it with: ", 1)[1]
    assert shlex.split(command) == ["oloproof", "run", str(root), "--out", str(out), "--resume"]
