"""A command validator's environment is the ``environ`` given, without any contract's key."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from oloproof_nb._core.receipts import OutcomeContract
from oloproof_nb._run.observe import observe_file, verify_contract_file
from oloproof_nb.cli import main

PY = sys.executable
CONTENT = b"month,revenue\n2026-06,100\n"
KEYS = {"OLOPROOF_F37_KEY_A": "alpha-k3y-never-shown", "OLOPROOF_F37_KEY_B": "beta-k3y-never-shown"}
#: A real validator: writes the names of the environment variables it was started with to the file it is given.
SEEN_NAMES = """import json, os, sys
json.dump(sorted(os.environ), open(sys.argv[1], "w"))
"""


@pytest.fixture()
def seen_script(tmp_path: Path) -> Path:
    script = tmp_path / "seen_names.py"
    script.write_text(SEEN_NAMES, encoding="utf-8")
    return script


@pytest.fixture()
def keyed_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process holds both contracts' keys and an unrelated variable (a shell that exported them all)."""
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OLOPROOF_F37_UNRELATED", "plain")


def without(names: set[str]) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in names}


@pytest.mark.usefixtures("keyed_env")
def test_two_contracts_validators_see_neither_key(tmp_path: Path, seen_script: Path) -> None:
    """Contracts A and B each digest with their own key; each is observed with the environment its caller gives,
    which leaves the other contract's key out. Before: the validator got ``os.environ`` minus its own key whatever
    ``environ`` said, so B's key reached A's validator (and A's B's), which could then forge B's digests."""
    report = tmp_path / "report.csv"
    report.write_bytes(CONTENT)
    for own, other in (("OLOPROOF_F37_KEY_A", "OLOPROOF_F37_KEY_B"), ("OLOPROOF_F37_KEY_B", "OLOPROOF_F37_KEY_A")):
        seen = tmp_path / f"seen-{own}.json"
        contract = OutcomeContract(artifact_id=f"report-{own[-1]}", validator="names", digest_key_env=own)
        evidence = observe_file(contract, report, environ=without({other}),
                                validators={"names": [PY, str(seen_script), str(seen)]})
        assert evidence is not None and evidence.validator_exit_code == 0
        # the key read is the environment's own one: HMAC-SHA256 of the bytes under it (hmac, not the code's digest)
        assert evidence.sha256 == hmac.new(KEYS[own].encode(), CONTENT, hashlib.sha256).hexdigest()
        names = set(json.loads(seen.read_text(encoding="utf-8")))
        assert not names & set(KEYS), f"{sorted(names & set(KEYS))} reached the validator of {own}'s contract"
        assert "OLOPROOF_F37_UNRELATED" in names  # the rest of the environment is handed on


def test_the_validator_gets_the_environ_given_not_this_process(tmp_path: Path, seen_script: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """``verify_contract_file(environ=...)``: the key is read from ``environ`` and the validator inherits ``environ``
    (without the key); a variable only this process holds is not handed on. Before: this process's environment."""
    monkeypatch.setenv("OLOPROOF_F37_ONLY_HERE", "process")
    monkeypatch.delenv("OLOPROOF_F37_KEY_A", raising=False)
    folder = tmp_path / "contracts"
    folder.mkdir()
    (folder / "report.csv").write_bytes(CONTENT)
    key = KEYS["OLOPROOF_F37_KEY_A"]
    contract = folder / "contract.json"
    contract.write_text(json.dumps({
        "artifact_id": "report", "locator": "report.csv", "run_started_at": "2026-07-25T14:00:00Z",
        "expected_sha256": hmac.new(key.encode(), CONTENT, hashlib.sha256).hexdigest(),
        "digest_key_env": "OLOPROOF_F37_KEY_A", "require_fresh": False,
        "validator": {"command": [PY, str(seen_script), "seen.json"]}}), encoding="utf-8")
    given = {"PATH": os.environ.get("PATH", os.defpath), "OLOPROOF_F37_KEY_A": key, "OLOPROOF_F37_UNRELATED": "x"}
    receipt = verify_contract_file(contract, environ=given, now=lambda: datetime(2026, 7, 26, tzinfo=timezone.utc))
    assert receipt.status == "verified", receipt.reason
    names = json.loads((folder / "seen.json").read_text(encoding="utf-8"))
    assert "OLOPROOF_F37_UNRELATED" in names and "PATH" in names
    assert "OLOPROOF_F37_KEY_A" not in names and "OLOPROOF_F37_ONLY_HERE" not in names


@pytest.mark.usefixtures("keyed_env")
def test_the_receipt_hook_withholds_its_contract_key(tmp_path: Path, seen_script: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof receipt``: the validator gets this process's environment without the contract's key variable
    (the README's words; the hook knows its one contract, so a key variable only another contract names is not
    known to it)."""
    folder = tmp_path / "contracts"
    folder.mkdir()
    (folder / "report.csv").write_bytes(CONTENT)
    contract = folder / "contract.json"
    contract.write_text(json.dumps({
        "artifact_id": "report", "locator": "report.csv", "run_started_at": "2000-01-01T00:00:00Z",
        "digest_key_env": "OLOPROOF_F37_KEY_A", "validator": {"command": [PY, str(seen_script), "seen.json"]}}),
        encoding="utf-8")
    assert main(["receipt", str(contract), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["receipt"]["digest_kind"] == "hmac-sha256"
    names = json.loads((folder / "seen.json").read_text(encoding="utf-8"))
    assert "OLOPROOF_F37_KEY_A" not in names and "OLOPROOF_F37_UNRELATED" in names
