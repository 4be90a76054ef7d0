"""Evidence and receipts hold exit codes a 64-bit signed integer holds, as their frame's ``Int64``
column and its Parquet copy store them (``2**70`` made a receipt that stopped the run while it was written)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from pydantic import ValidationError

from oloproof_nb._core.receipts import EXIT_CODE_RANGE, Evidence, Receipt

T0 = datetime(2026, 7, 25, 14, 0, tzinfo=timezone.utc)


def test_the_range_is_that_of_a_signed_64_bit_integer() -> None:
    assert EXIT_CODE_RANGE == (-9223372036854775808, 9223372036854775807)  # numpy.iinfo(numpy.int64), by hand


@pytest.mark.parametrize("code", [-(2**63), 2**63 - 1])
def test_the_bounds_are_exit_codes(code: int) -> None:
    evidence = Evidence(artifact_id="a", observed_at=T0, validator="v", validator_exit_code=code, evidence_source="s")
    receipt = Receipt(artifact_id="a", run_started_at=T0, validator="v", validator_exit_code=code,
                      status="validator_failed", reason="validator_failed: validator v exited")
    assert evidence.validator_exit_code == receipt.validator_exit_code == code


@pytest.mark.parametrize("code", [-(2**63) - 1, 2**63, 2**70])
def test_beyond_the_bounds_is_refused(code: int) -> None:
    with pytest.raises(ValidationError, match="validator_exit_code"):
        Evidence(artifact_id="a", observed_at=T0, validator="v", validator_exit_code=code, evidence_source="s")
    with pytest.raises(ValidationError, match="validator_exit_code"):
        Receipt(artifact_id="a", run_started_at=T0, validator="v", validator_exit_code=code,
                status="validator_failed", reason="validator_failed: validator v exited")
