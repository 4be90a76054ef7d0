"""An artifact whose path is a symbolic link to nothing is ``missing`` ("no artifact observed", DESIGN's first
status), as when nothing is there: reading a file, a link to nothing now names the link (``files.dangling_link``)
instead of "file not found", and the observer must not take that for an artifact that cannot be read
(``unverified``)."""

from __future__ import annotations

import json
from pathlib import Path

from oloproof_nb._run.observe import verify_contract_file


def test_an_artifact_that_is_a_dangling_link_is_missing(tmp_path: Path) -> None:
    (tmp_path / "report.json").symlink_to("moved/report.json")
    contract = tmp_path / "contract.json"
    contract.write_text(json.dumps({"artifact_id": "report-1", "locator": "report.json",
                                    "run_started_at": "2020-01-01T00:00:00Z"}), encoding="utf-8")
    receipt = verify_contract_file(contract)
    assert (receipt.status, receipt.reason) == ("missing", "missing: no artifact observed")
