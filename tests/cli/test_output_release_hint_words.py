"""The gate of a run made without release.yaml, once one is there, says to give it with ``--release PATH``: pasted
into a POSIX shell, PATH is one word though the suite's folder holds a space."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.cli import main

CASES = [{"id": f"c{i}", "input": {"answer": "done", "k": i}, "initial_state": {},
          "expected": {"answer": "done"}} for i in range(2)]


def test_the_release_file_written_since_is_named_as_one_word(make_suite: Callable[..., Path], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    made = make_suite(CASES, evaluators=[{"type": "answer_matches"}])
    root = made.rename(made.parent / "my suite")
    (root / "release.yaml").unlink(missing_ok=True)
    out = tmp_path / "run"
    op.run(op.load_suite(root), out=out, progress=False)
    (root / "release.yaml").write_text("criteria:\n  answer_matches: 0.5\n", encoding="utf-8")
    main(["gate", str(out)])
    text = " ".join(capsys.readouterr().out.split())  # the line may be wrapped to the width
    found = re.search(r"give it with --release (.+?) to gate this run with it", text)
    assert found is not None, text
    assert shlex.split(found.group(1)) == [str(root / "release.yaml")]
