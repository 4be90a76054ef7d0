"""A case record whose receipt holds a whole number no ``int64`` column holds (a validator exit code of
``2**70``, edited in or left by a run before the fix) is named by its line, as any other damaged record; it was
``internal error: OverflowError: Python int too large to convert to C long (a bug in oloproof_nb ...)``."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from _outcome_systems import done_writer

import oloproof_nb as op
from oloproof_nb.errors import RunDirError

SYSTEM = done_writer('def ok(path):\n    return True\n')


def test_a_receipt_exit_code_beyond_int64_is_a_damaged_record_named_by_its_line(make_suite: Callable[..., Path],
                                                                                 tmp_path: Path) -> None:
    outcome = {"artifact_id": "report", "locator": "report.txt", "validator": "v"}
    root = make_suite([{"id": f"c{i}", "input": {"n": i}, "expected": {"answer": "done"}, "outcome": outcome}
                       for i in (1, 2)], evaluators=[{"type": "outcome_contract"}], system="sysmod:Writer",
                      system_code=SYSTEM, validators={"v": "sysmod:ok"})
    directory = op.run(op.load_suite(root), out=tmp_path / "run", progress=False).directory
    shutil.rmtree(directory / "frames")
    journal = directory / "cases.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[1])
    assert [r["validator_exit_code"] for r in record["receipts"]] == [0]
    record["receipts"][0]["validator_exit_code"] = 2**70
    lines[1] = json.dumps(record) + "\n"
    journal.write_text("".join(lines), encoding="utf-8")
    before = journal.read_bytes()
    with pytest.raises(RunDirError) as caught:
        op.load_run(directory)
    said = str(caught.value)
    assert said.startswith(f"{journal}: line 2: not a case record as oloproof_nb writes it (OverflowError: ")
    assert said.endswith("); the run directory is damaged")
    assert journal.read_bytes() == before
