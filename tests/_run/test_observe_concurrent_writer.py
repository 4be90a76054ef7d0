"""A receipt's digest and its validator's result are of one file, whatever a concurrent writer does.

The writer is played by the validator itself (case 1) or by a wrapper around the validator's start (case 2):
deterministic stand-ins for an agent's background process that acts while ``oloproof receipt`` runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._run import observe
from oloproof_nb._run.observe import verify_contract_file

GOOD = b'{"total": 3}\n'
BAD = b'{"totl": 0}\n\n'  # as long as GOOD
#: A validator that, between reading the artifact and exiting, plays the writer: it puts the good report in the
#: file for its own read, then the bad one back with the file's modification time set back as it was.
REWRITING_CHECK = """
import json, os, sys
path = sys.argv[-1]
before = os.stat(path)
bad = open(path, "rb").read()
with open(path, "r+b") as fh:
    fh.write(GOOD)
ok = json.loads(open(path, "rb").read()).get("total") == 3
with open(path, "r+b") as fh:
    fh.write(bad)
os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
sys.exit(0 if ok else 1)
""".replace("GOOD", repr(GOOD))
#: A validator that passes a report with a total of 3 and fails any other.
CHECK = "import json, sys\nsys.exit(0 if json.load(open(sys.argv[-1])).get('total') == 3 else 1)\n"


def _contract(folder: Path, check: str) -> Path:
    (folder / "check.py").write_text(check)
    contract = folder / "contract.json"
    contract.write_text(json.dumps({"artifact_id": "report-r36", "locator": "report.json",
                                    "run_started_at": "2020-01-01T00:00:00Z",
                                    "validator": {"command": [sys.executable, "check.py"]}}))
    return contract


def test_a_file_rewritten_with_its_time_set_back_while_its_validator_ran_is_not_verified(tmp_path: Path) -> None:
    """Same inode, size and modification time before and after the validator: the status change time moved.
    Before, this bad report was ``verified`` (the validator had read the good one)."""
    (tmp_path / "report.json").write_bytes(BAD)
    contract = _contract(tmp_path, REWRITING_CHECK)
    receipt = verify_contract_file(contract)
    assert (tmp_path / "report.json").read_bytes() == BAD  # the writer put the bad one back
    assert receipt.status == "unverified"
    assert "replaced or changed while its validator ran" in receipt.reason


def test_the_validator_checks_the_file_read_not_where_a_link_points_later(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The locator is a symbolic link to the bad report when it is read; the writer points it at the good one
    before the validator starts and back at the bad one after it ends. Before, the validator was given the
    locator and read the good report, and the bad one was ``verified``; now it is given the file read."""
    (tmp_path / "good.json").write_bytes(GOOD)
    (tmp_path / "bad.json").write_bytes(BAD)
    link = tmp_path / "report.json"
    link.symlink_to("bad.json")
    contract = _contract(tmp_path, CHECK)
    seen: list[str] = []
    original: Callable[..., Any] = observe._run_named_validator

    def swapping(contract_: Any, path: Path, *args: Any) -> Any:
        link.unlink()
        link.symlink_to("good.json")
        seen.append(os.path.realpath(path))
        try:
            return original(contract_, path, *args)
        finally:
            link.unlink()
            link.symlink_to("bad.json")

    monkeypatch.setattr(observe, "_run_named_validator", swapping)
    receipt = verify_contract_file(contract)
    assert seen == [str((tmp_path / "bad.json").resolve())]
    assert receipt.observed_digest == hashlib.sha256(BAD).hexdigest()  # the receipt is of the bad report
    assert (receipt.status, receipt.validator_exit_code) == ("validator_failed", 1)


def test_an_untouched_file_still_verifies_through_a_link(tmp_path: Path) -> None:
    """The stricter version leaves a file nobody changes ``verified``, a symbolic link on its way included."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "good.json").write_bytes(GOOD)
    (tmp_path / "report.json").symlink_to(Path("real") / "good.json")
    receipt = verify_contract_file(_contract(tmp_path, CHECK))
    assert (receipt.status, receipt.validator_exit_code) == ("verified", 0)
