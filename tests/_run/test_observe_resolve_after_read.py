"""The re-resolve after reading (``test_observe_link_race.py``): a path that resolves to nothing after it was
read, opened when nothing was there to resolve, cannot name the file read."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._run import observe
from oloproof_nb._run.observe import verify_contract_file

GOOD = b'{"total": 3}\n'
CHECK = "import json, sys\nsys.exit(0 if json.load(open(sys.argv[-1])).get('total') == 3 else 1)\n"


def test_a_file_gone_before_it_could_be_resolved_is_not_verified(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing to resolve at first (a stand-in: ``realpath`` misses once), a good report opened through a link
    made in that moment, and the link removed before the path could be resolved again (the file itself unchanged):
    no validator is run on a path that names nothing."""
    (tmp_path / "data.json").write_bytes(GOOD)
    report = tmp_path / "report.json"
    report.symlink_to("data.json")
    (tmp_path / "check.py").write_text(CHECK)
    contract = tmp_path / "contract.json"
    contract.write_text(json.dumps({"artifact_id": "report-m48", "locator": "report.json",
                                    "run_started_at": "2020-01-01T00:00:00Z",
                                    "validator": {"command": [sys.executable, "check.py"]}}))
    real = os.path.realpath
    missed: list[bool] = []

    def realpath(path: Any, *args: Any, **kwargs: Any) -> Any:
        if Path(path) == report and not missed:
            missed.append(True)
            raise FileNotFoundError(2, "No such file or directory")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os.path, "realpath", realpath)
    opened = observe.open_regular

    def open_then_unlink(path: Any) -> Any:
        result = opened(path)
        report.unlink()
        return result

    ran: list[Path] = []
    monkeypatch.setattr(observe, "open_regular", open_then_unlink)
    monkeypatch.setattr(observe, "_run_named_validator", lambda contract_, path, *args: ran.append(path))
    receipt = verify_contract_file(contract)
    assert missed == [True]
    assert receipt.status == "unverified"
    assert "was replaced while it was opened" in receipt.reason
    assert ran == []


def test_a_link_resolved_before_it_was_opened_is_not_resolved_again(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The docstring's rule: a path resolved before it was opened is the file read and given to the validator,
    whatever the link points to later (re-pointed after the open, and back before the validator runs: the good
    report's receipt, not "replaced while it was opened")."""
    (tmp_path / "good.json").write_bytes(GOOD)
    (tmp_path / "bad.json").write_bytes(b'{"totl": 0}\n\n')
    report = tmp_path / "report.json"
    report.symlink_to("good.json")
    (tmp_path / "check.py").write_text(CHECK)
    contract = tmp_path / "contract.json"
    contract.write_text(json.dumps({"artifact_id": "report-m48", "locator": "report.json",
                                    "run_started_at": "2020-01-01T00:00:00Z",
                                    "validator": {"command": [sys.executable, "check.py"]}}))
    opened = observe.open_regular
    given: list[str] = []
    original = observe._run_named_validator

    def open_then_repoint(path: Any) -> Any:
        result = opened(path)
        report.unlink()
        report.symlink_to("bad.json")
        return result

    def recording(contract_: Any, path: Path, *args: Any) -> Any:
        given.append(str(path))
        report.unlink()
        report.symlink_to("good.json")
        return original(contract_, path, *args)

    monkeypatch.setattr(observe, "open_regular", open_then_repoint)
    monkeypatch.setattr(observe, "_run_named_validator", recording)
    receipt = verify_contract_file(contract)
    assert receipt.status == "verified", receipt.reason
    assert given == [str(tmp_path.resolve() / "good.json")]
