"""What a receipt takes for one version of a file, and where it looks after the validator."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._core.receipts import OutcomeContract
from oloproof_nb._run import observe
from oloproof_nb._run.observe import UnobservableArtifact, observe_file, verify_contract_file

GOOD = b'{"total": 3}\n'
BAD = b'{"totl": 0}\n\n'  # as long as GOOD
CHECK = "import json, sys\nsys.exit(0 if json.load(open(sys.argv[-1])).get('total') == 3 else 1)\n"


def _stat(**changed: int) -> os.stat_result:
    """A stat result (mode, ino, dev, nlink, uid, gid, size, atime, mtime, ctime and their _ns fields)."""
    fields = {"st_ino": 7, "st_dev": 3, "st_size": 13, "st_mtime_ns": 1_000, "st_ctime_ns": 2_000, **changed}
    base = [0o100644, fields["st_ino"], fields["st_dev"], 1, 0, 0, fields["st_size"], 0, 0, 0]
    extra = {"st_atime_ns": 0, "st_mtime_ns": fields["st_mtime_ns"], "st_ctime_ns": fields["st_ctime_ns"]}
    return os.stat_result(base, extra)


@pytest.mark.parametrize("field", ["st_ino", "st_dev", "st_size", "st_mtime_ns", "st_ctime_ns"])
def test_each_of_the_five_fields_makes_another_version(field: str) -> None:
    """The module says a version is device, inode, size, modification and status change time: each one moved
    alone is another version (a modification time set back within one coarse ctime tick keeps the ctime)."""
    assert observe._version(_stat()) == observe._version(_stat())
    assert observe._version(_stat(**{field: 99})) != observe._version(_stat())


def test_a_path_with_a_nul_byte_is_an_unobservable_artifact(tmp_path: Path) -> None:
    """os.path.realpath raises ValueError for a NUL byte: the path is then opened as it is, and the receipt's
    reason says it cannot be read (not a ValueError out of observe_file)."""
    with pytest.raises(UnobservableArtifact, match="embedded null byte"):
        observe_file(OutcomeContract(artifact_id="nul"), str(tmp_path / "a\x00b.json"))


def test_a_locator_pointed_elsewhere_after_the_validator_is_not_verified(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The locator links to the good report when it is read and validated; after the validator it links to the bad
    one, and stays so. The file read did not change, but the locator names another file now: ``unverified``
    (observe_file's Raises: ``path`` must still name the file digested), not ``verified``."""
    (tmp_path / "good.json").write_bytes(GOOD)
    (tmp_path / "bad.json").write_bytes(BAD)
    link = tmp_path / "report.json"
    link.symlink_to("good.json")
    (tmp_path / "check.py").write_text(CHECK)
    contract = tmp_path / "contract.json"
    contract.write_text(json.dumps({"artifact_id": "report-m39", "locator": "report.json",
                                    "run_started_at": "2020-01-01T00:00:00Z",
                                    "validator": {"command": [sys.executable, "check.py"]}}))
    original: Callable[..., Any] = observe._run_named_validator

    def repointing(contract_: Any, path: Path, *args: Any) -> Any:
        try:
            return original(contract_, path, *args)
        finally:
            link.unlink()
            link.symlink_to("bad.json")

    monkeypatch.setattr(observe, "_run_named_validator", repointing)
    receipt = verify_contract_file(contract)
    assert receipt.status == "unverified" and "replaced or changed while its validator ran" in receipt.reason
