"""An artifact made (as a link) between resolving its path and opening it.

``oloproof receipt`` resolves the locator's links once, before it opens the file, and gives the validator that
real path. When nothing was there to resolve, the locator itself was opened and handed on: a link made in that
moment (by an agent's background process) reached the validator as a link, which could be pointed elsewhere
while it ran and back after. A stand-in for the race: ``realpath`` finds nothing the first time it is asked.
"""

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
BAD = b'{"totl": 0}\n\n'  # as long as GOOD
#: Passes a report with a total of 3, fails any other.
CHECK = "import json, sys\nsys.exit(0 if json.load(open(sys.argv[-1])).get('total') == 3 else 1)\n"


def _contract(folder: Path) -> Path:
    (folder / "check.py").write_text(CHECK)
    contract = folder / "contract.json"
    contract.write_text(json.dumps({"artifact_id": "report-r49", "locator": "report.json",
                                    "run_started_at": "2020-01-01T00:00:00Z",
                                    "validator": {"command": [sys.executable, "check.py"]}}))
    return contract


def _realpath_misses_once(monkeypatch: pytest.MonkeyPatch, link: Path) -> None:
    """The first resolution of ``link`` finds nothing (the link was made right after it)."""
    real = os.path.realpath
    missed: list[bool] = []

    def realpath(path: Any, *args: Any, **kwargs: Any) -> Any:
        if Path(path) == link and not missed:
            missed.append(True)
            raise FileNotFoundError(2, "No such file or directory")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os.path, "realpath", realpath)


def _racing_link(folder: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The good and the bad report, the locator a link to the bad one that the first resolution misses, and the
    contract: ``(link, contract)``."""
    (folder / "good.json").write_bytes(GOOD)
    (folder / "bad.json").write_bytes(BAD)
    link = folder / "report.json"
    link.symlink_to("bad.json")
    _realpath_misses_once(monkeypatch, link)
    return link, _contract(folder)


def test_a_link_made_after_its_path_was_resolved_reaches_the_validator_resolved(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The link points at the bad report when it is opened and digested; the writer points it at the good one
    while the validator runs and back after. Before, the validator was given the link, read the good report, and
    the bad one was ``verified``."""
    link, contract = _racing_link(tmp_path, monkeypatch)
    given: list[str] = []
    original = observe._run_named_validator

    def swapping(contract_: Any, path: Path, *args: Any) -> Any:
        given.append(str(path))
        link.unlink()
        link.symlink_to("good.json")
        try:
            return original(contract_, path, *args)
        finally:
            link.unlink()
            link.symlink_to("bad.json")

    monkeypatch.setattr(observe, "_run_named_validator", swapping)
    receipt = verify_contract_file(contract)
    assert receipt.status == "validator_failed", receipt.reason
    assert given == [str(tmp_path.resolve() / "bad.json")]  # the file read, not the link


def test_a_file_swapped_in_after_it_was_opened_unresolved_is_not_verified(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opened through a link made in that moment, and the link pointed elsewhere before it could be resolved:
    what was read cannot be named, so the receipt is ``unverified`` before any validator runs (before, the link
    went to the validator, which read the good report; only the check after it made the receipt ``unverified``)."""
    link, contract = _racing_link(tmp_path, monkeypatch)
    opened = observe.open_regular

    def open_then_repoint(path: Any) -> Any:
        result = opened(path)
        link.unlink()
        link.symlink_to("good.json")
        return result

    monkeypatch.setattr(observe, "open_regular", open_then_repoint)
    receipt = verify_contract_file(contract)
    assert receipt.status == "unverified"
    assert "was replaced while it was opened" in receipt.reason
