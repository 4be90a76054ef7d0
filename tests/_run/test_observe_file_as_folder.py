"""A locator that goes through a file as if it were a folder (``report.json/../draft.json``) names nothing: the
kernel says "not a directory". ``os.path.realpath`` takes the file for a folder before ``..`` and named the draft,
which was read, digested and ``verified`` without a validator, and ``unverified`` ("replaced or changed while its
validator ran") with one, where ``cat`` of the same path fails."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from oloproof_nb._core.receipts import OutcomeContract
from oloproof_nb._run.observe import observe_file, verify_contract_file

T0 = datetime(2026, 7, 25, 14, 0, tzinfo=timezone.utc)
DRAFT = b"a draft, not the report"


def _later() -> datetime:
    return T0 + timedelta(hours=1)


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    (tmp_path / "report.json").write_bytes(b"{}")
    (tmp_path / "draft.json").write_bytes(DRAFT)
    return tmp_path


def test_a_file_taken_for_a_folder_is_nothing_there(folder: Path) -> None:
    contract = OutcomeContract(artifact_id="report", expected_sha256=hashlib.sha256(DRAFT).hexdigest())
    with pytest.raises(NotADirectoryError):  # the path names nothing, as the kernel looks it up
        (folder / "report.json/../draft.json").read_bytes()
    assert observe_file(contract, folder / "report.json" / ".." / "draft.json", now=_later) is None


@pytest.mark.parametrize("validator", [None, {"command": ["true"]}])
def test_the_hook_says_missing_with_or_without_a_validator(folder: Path, validator: object) -> None:
    contract = folder / "contract.json"
    contract.write_text(json.dumps({"artifact_id": "report", "locator": "report.json/../draft.json",
                                    "run_started_at": "2020-01-01T00:00:00Z", "validator": validator}))
    receipt = verify_contract_file(contract)
    assert (receipt.status, receipt.observed_digest) == ("missing", None)


def test_a_link_to_a_folder_before_dotdot_is_still_followed(folder: Path) -> None:
    (folder / "sub").mkdir()
    (folder / "link").symlink_to(folder / "sub")
    contract = OutcomeContract(artifact_id="report")
    ev = observe_file(contract, folder / "link" / ".." / "draft.json", now=_later)
    assert ev is not None and ev.sha256 == hashlib.sha256(DRAFT).hexdigest()
