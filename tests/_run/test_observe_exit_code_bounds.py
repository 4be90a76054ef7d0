"""A callable validator's exit code beyond 64 bits stopped the run.

A registered Python validator that returned ``2**70`` (or called ``sys.exit(2**70)``), or a system whose
``observe()`` reported ``validator_exit_code: 2**70``, made evidence and a receipt that no ``Int64`` column holds:
``oloproof run`` stopped with ``OverflowError: Python int too large to convert to C long`` (exit 2, "finish it with
--resume", which stopped the same way) and the receipt was never judged. Such an exit code is no exit code: the
receipt is ``unverified``, naming why, and the run goes on. The boundaries (``2**63 - 1``, ``-2**63``) are exit codes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _outcome_systems import done_writer

import oloproof_nb as op
from oloproof_nb._core.receipts import OutcomeContract, classify_outcome
from oloproof_nb._run.observe import collect_evidence, observe_file

T0 = datetime(2026, 7, 25, 14, 0, tzinfo=timezone.utc)
OUTSIDE = "validator v returned an integer outside the 64-bit range of exit codes"


def _receipt(tmp_path: Path, validator: Callable[[Path], Any]) -> op.Receipt:
    artifact = tmp_path / "report.txt"
    artifact.write_text("all good\n", encoding="utf-8")
    contract = OutcomeContract(artifact_id="report", validator="v", require_fresh=False)
    evidence = observe_file(contract, artifact, validators={"v": validator})
    return classify_outcome(contract, evidence, run_started_at=T0)


@pytest.mark.parametrize("validator", [lambda p: 2**63, lambda p: -(2**63) - 1, lambda p: np.uint64(2**64 - 1),
                                       lambda p: sys.exit(2**70)],
                         ids=["2**63", "-2**63-1", "numpy-uint64-max", "sys.exit(2**70)"])
def test_an_exit_code_beyond_64_bits_is_no_exit_code(tmp_path: Path, validator: Callable[[Path], Any]) -> None:
    receipt = _receipt(tmp_path, validator)
    assert (receipt.status, receipt.validator_exit_code) == ("unverified", None)
    assert receipt.reason == f"unverified: {OUTSIDE}"


@pytest.mark.parametrize("code", [2**63 - 1, -(2**63)])
def test_the_64_bit_bounds_are_exit_codes(tmp_path: Path, code: int) -> None:
    receipt = _receipt(tmp_path, lambda p: code)
    assert (receipt.status, receipt.validator_exit_code) == ("validator_failed", code)


def test_an_observe_dict_with_an_exit_code_beyond_64_bits_is_invalid_evidence() -> None:
    class Reports:
        def observe(self, artifact_id: str) -> dict[str, Any]:
            now = datetime.now(timezone.utc)
            return {"artifact_id": artifact_id, "observed_at": now, "modified_at": now, "sha256": "ab" * 32,
                    "validator": "v", "validator_exit_code": 2**70}

    evidence, why = collect_evidence(OutcomeContract(artifact_id="report", validator="v"), Reports(),
                                     call=lambda f: f(), validators={}, timeout_s=None, suite_root=None)
    assert evidence is None
    assert why is not None and why.startswith("observe() returned invalid evidence: validator_exit_code: ")


SYSTEM = done_writer('def huge(path):\n    return 2**70\n')


def test_a_run_whose_validator_returns_2_to_the_70_finishes_with_the_receipt_unverified(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    root = make_suite([{"id": "c1", "input": {}, "expected": {"answer": "done"},
                        "outcome": {"artifact_id": "report", "locator": "report.txt", "validator": "v"}}],
                      evaluators=[{"type": "outcome_contract"}], system="sysmod:Writer", system_code=SYSTEM,
                      validators={"v": "sysmod:huge"})
    run = op.run(op.load_suite(root), out=tmp_path / "run", progress=False)  # OverflowError before the fix
    again = op.load_run(run.directory)
    for receipts in (run.receipts, again.receipts):
        assert receipts[["case_id", "status", "reason"]].to_dict("records") == [
            {"case_id": "c1", "status": "unverified", "reason": f"unverified: {OUTSIDE}"}]
        assert receipts["validator_exit_code"].isna().all()
    assert op.gate(run, criteria={"outcome_verified": 0.5}).verdict == "BLOCK"
