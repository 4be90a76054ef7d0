"""``oloproof receipt`` says when the contract it verified checks no content (as the gate does)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb.cli import main

# printf '' | sha256sum
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def _contract(folder: Path, **fields: Any) -> Path:
    (folder / "report.json").write_bytes(b"")  # an empty report, written now: fresh
    (folder / "check.py").write_text("import sys\nsys.exit(0)\n")
    path = folder / "contract.json"
    path.write_text(json.dumps({"artifact_id": "report-r36", "locator": "report.json",
                                "run_started_at": "2020-01-01T00:00:00Z", **fields}))
    return path


def test_a_contract_that_checks_no_content_verifies_with_a_warning(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Before, an empty file verified with nothing on stderr: the hook's user could not tell it from a checked one."""
    code = main(["receipt", str(_contract(tmp_path))])
    out, err = capsys.readouterr()
    assert (code, json.loads(out)["status"]) == (0, "verified")
    assert err.count("\n") == 1
    assert err.startswith("oloproof: warning: outcome_content_unchecked: the contract has no expected_sha256 and no "
                          "validator")


@pytest.mark.parametrize("fields", [{"expected_sha256": EMPTY_SHA256},
                                    {"validator": {"command": [sys.executable, "check.py"]}}])
def test_a_contract_that_checks_content_verifies_quietly(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          fields: dict[str, Any]) -> None:
    code = main(["receipt", str(_contract(tmp_path, **fields))])
    out, err = capsys.readouterr()
    assert (code, json.loads(out)["status"], err) == (0, "verified", "")


def test_the_warning_never_changes_a_code_that_is_not_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _contract(tmp_path)
    (tmp_path / "report.json").unlink()
    code = main(["receipt", "--json", str(path)])
    out, err = capsys.readouterr()
    assert (code, json.loads(out)["receipt"]["status"]) == (2, "missing")
    assert "outcome_content_unchecked" not in err and err.startswith("oloproof: missing:")
