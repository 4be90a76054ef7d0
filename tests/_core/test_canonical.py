"""The one timestamp format and the canonical JSON of every digest (``_core/canonical.py``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from oloproof_nb._core.canonical import canonical_json, iso

ZONES = st.sampled_from([timezone.utc, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))])


@given(moment=st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=ZONES))
def test_iso_writes_what_strftime_writes_in_utc(moment: datetime) -> None:
    """The reference: ``strftime`` of the moment in UTC (years below 1000 padded to four digits, as ISO-8601 asks)."""
    utc = moment.astimezone(timezone.utc)
    expected = f"{utc.year:04d}" + utc.strftime("-%m-%dT%H:%M:%S.%fZ")
    assert iso(moment) == expected
    assert datetime.fromisoformat(iso(moment).replace("Z", "+00:00")) == moment  # and it reads back exactly


def test_iso_pins_the_edges() -> None:
    assert iso(datetime(2026, 12, 31, 23, 59, 59, 999_999, tzinfo=timezone.utc)) == "2026-12-31T23:59:59.999999Z"
    assert iso(datetime(2027, 1, 1, 5, 29, tzinfo=timezone(timedelta(hours=5, minutes=30)))) == \
        "2026-12-31T23:59:00.000000Z"  # another zone: converted to UTC, across a year boundary


def test_canonical_json_sorts_keys_and_keeps_unicode() -> None:
    assert canonical_json({"b": [1, 1.0], "a": "é"}) == '{"a":"é","b":[1,1.0]}'
