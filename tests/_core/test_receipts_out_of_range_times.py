"""A time that has no UTC value (before year 1 once converted: ``datetime.min`` at a positive offset, a common
"never" sentinel) is a ``ValueError`` naming it, as a naive time is, not an ``OverflowError``: a system's
``observe()`` that reported one stopped the whole run as an internal error."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

import oloproof_nb as op

PLUS_TWO = timezone(timedelta(hours=2))
NOW = datetime(2026, 7, 25, 14, tzinfo=timezone.utc)


@pytest.mark.parametrize("value", [datetime.min.replace(tzinfo=PLUS_TWO), "0001-01-01T00:00:00+02:00"])
@pytest.mark.parametrize("key", ["observed_at", "modified_at"])
def test_evidence_with_a_time_before_year_1_in_utc_is_invalid(key: str, value: object) -> None:
    fields: dict[str, object] = {"artifact_id": "a", "observed_at": NOW, "evidence_source": "db", key: value}
    with pytest.raises(ValidationError, match=r"datetime 0001-01-01T00:00:00\+02:00 is outside the years 1–9999 "
                                              r"in UTC") as caught:
        op.Evidence.model_validate(fields)
    assert caught.value.errors()[0]["loc"] == (key,)


def test_a_run_start_before_year_1_in_utc_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"^datetime 0001-01-01T00:00:00\+02:00 is outside the years 1–9999 in UTC$"):
        op.classify_outcome(op.OutcomeContract(artifact_id="a"), None,
                            run_started_at=datetime.min.replace(tzinfo=PLUS_TWO))


def test_the_first_moment_in_utc_is_still_a_time() -> None:
    first = datetime.min.replace(tzinfo=timezone.utc)
    ev = op.Evidence(artifact_id="a", observed_at=NOW, modified_at=first, evidence_source="db")
    assert ev.modified_at == first
    receipt = op.classify_outcome(op.OutcomeContract(artifact_id="a"), ev, run_started_at=NOW)
    assert receipt.status == "stale"
