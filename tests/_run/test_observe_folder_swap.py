"""What a validator given the artifact's path cannot see: its folders swapped while it runs, and back after.

The hook (``oloproof receipt``, :func:`verify_contract_file`) digests the bytes it reads, then gives the validator
the file's real path and compares the file's version (device, inode, size, modification and status change time)
before and after. An agent that renames the artifact's folder away, a good copy's folder into its place, and both
back while the validator runs changes none of the file's own version: the validator checks the good copy, and
the bad file the hook read is ``verified``. README ("Security and reliability", validators) says so and names
``expected_sha256`` as the check made on the bytes the hook read: these tests pin both sentences. The validator
makes the swap itself here, a deterministic stand-in for the agent's process running beside it.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from oloproof_nb._run.observe import verify_contract_file

GOOD = b'{"total": 3}\n'
BAD = b'{"totl": 0}\n\n'  # as long as GOOD: nothing but the bytes tells them apart
#: Swaps the artifact's folder ``out`` with ``good`` (the agent's copy), checks the report, swaps both back.
SWAP = """import json, os, sys
report = sys.argv[-1]
out = os.path.dirname(report)
good = os.path.join(os.path.dirname(out), "good")
os.rename(out, out + ".away"); os.rename(good, out)
try:
    ok = json.load(open(report)).get("total") == 3
finally:
    os.rename(out, good); os.rename(out + ".away", out)
sys.exit(0 if ok else 1)
"""


def _contract(folder: Path, **keys: Any) -> Path:
    """``out/report.json`` holds the bad report, ``good/report.json`` the good one; the contract names the first."""
    for name, content in (("out", BAD), ("good", GOOD)):
        (folder / name).mkdir()
        (folder / name / "report.json").write_bytes(content)
    (folder / "swap.py").write_text(SWAP)
    contract = folder / "contract.json"
    contract.write_text(json.dumps({"artifact_id": "report-r12", "locator": "out/report.json",
                                    "run_started_at": "2020-01-01T00:00:00Z", **keys}))
    return contract


def test_a_command_validator_checks_the_folder_swapped_in_and_the_bad_file_is_verified(tmp_path: Path) -> None:
    contract = _contract(tmp_path, validator={"command": [sys.executable, "swap.py"]})
    receipt = verify_contract_file(contract)
    assert receipt.status == "verified", receipt.reason  # the limit README states: the swap is not seen
    assert receipt.observed_digest == hashlib.sha256(BAD).hexdigest()  # the digest is of the bad bytes
    assert (tmp_path / "out" / "report.json").read_bytes() == BAD  # swapped back: the bad report is what is there


def test_expected_sha256_is_checked_on_the_bytes_the_hook_read(tmp_path: Path) -> None:
    contract = _contract(tmp_path, validator={"command": [sys.executable, "swap.py"]},
                         expected_sha256=hashlib.sha256(GOOD).hexdigest())
    receipt = verify_contract_file(contract)
    assert receipt.status == "hash_mismatch", receipt.reason


def test_a_python_validator_is_given_the_path_too(tmp_path: Path) -> None:
    """A Python-callable validator gets the path, not the bytes the hook read: the same swap passes it."""
    contract = _contract(tmp_path, validator="schema")

    def swapping(path: Path) -> bool:
        out, good = path.parent, path.parent.parent / "good"
        out.rename(out.with_name("out.away"))
        good.rename(out)
        try:
            return bool(json.loads(path.read_bytes()).get("total") == 3)
        finally:
            out.rename(good)
            out.with_name("out.away").rename(out)

    assert verify_contract_file(contract, validators={"schema": swapping}).status == "verified"
    # the premise: left alone, the bad report fails the same check
    check = {"schema": lambda path: json.loads(path.read_bytes()).get("total") == 3}
    assert verify_contract_file(contract, validators=check).status == "validator_failed"
