"""A receipt row whose status is none of the classifier's words (``"bogus"``, ``"VERIFIED"``, null) is damage, as a
verdict row reading ``"FAIL"`` is: refused naming the file, the line and the words allowed, exit 2. It was read
as it was, and the gate of the run stopped in ``outcome_summary`` as an internal error ("a bug in oloproof_nb")."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _reliability_systems import main_in_process, one_error_line

import oloproof_nb as op
from oloproof_nb.examples import init_example

WORDS = "missing, wrong_artifact, stale, hash_mismatch, validator_failed, unverified, verified, waiting"


@pytest.fixture(scope="module")
def outcome_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fs")
    suite = op.load_suite(init_example("false-success", root / "suite"))
    return op.run(suite, out=root / "run", progress=False).directory


@pytest.mark.parametrize(("word", "shown"), [("bogus", "'bogus'"), ("VERIFIED", "'VERIFIED'"), (None, "null")])
def test_a_receipt_status_the_classifier_never_gives_is_damage(outcome_run: Path, tmp_path: Path,
                                                               word: str | None, shown: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    directory = Path(shutil.copytree(outcome_run, tmp_path / "run"))
    journal = directory / "cases.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[1])
    record["receipts"][0]["status"] = word
    lines[1] = json.dumps(record, ensure_ascii=False) + "\n"
    journal.write_text("".join(lines), encoding="utf-8")
    before = journal.read_bytes()
    out = main_in_process(capsys, "gate", str(directory))
    assert out.returncode == 2
    assert one_error_line(out.stderr) == (
        f"oloproof: error: {journal}: line 2: not a case record as oloproof_nb writes it (ValueError: status {shown} "
        f"is not one of the words allowed: {WORDS}); the run directory is damaged")
    with pytest.raises(op.RunDirError, match="line 2: not a case record"):
        op.load_run(directory)
    assert journal.read_bytes() == before


def test_every_status_the_classifier_gives_is_read(outcome_run: Path) -> None:
    assert set(op.load_run(outcome_run).receipts["status"]) == {"verified", "missing", "stale", "hash_mismatch",
                                                                "validator_failed"}
