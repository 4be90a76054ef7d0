"""A receipt read back from JSON with an exit code beyond 64 bits is one line naming its key, not
pandas' ``OverflowError: Python int too large to convert to C long`` while the ``Int64`` column is built."""

from __future__ import annotations

import pytest

import oloproof_nb as op


def _receipt(code: int) -> dict[str, object]:
    return {"case_id": "c1", "artifact_id": "a", "run_started_at": "2026-07-25T14:00:00Z", "validator": "v",
            "validator_exit_code": code, "status": "validator_failed", "reason": "validator_failed: validator v exited"}


def test_an_exit_code_beyond_64_bits_is_named_by_its_key() -> None:
    with pytest.raises(ValueError, match=r"^receipts\[0\]: key 'validator_exit_code': Input should be less than or "
                                         r"equal to 9223372036854775807 \(got 1180591620717411303424\)$"):
        op.receipts_frame([_receipt(2**70)])


def test_the_largest_exit_code_is_kept_exactly() -> None:
    frame = op.receipts_frame([_receipt(2**63 - 1)])
    assert frame["validator_exit_code"].dtype == "Int64" and int(frame["validator_exit_code"].iloc[0]) == 2**63 - 1
