"""release.yaml bounds no other test pinned: the upper bound of ``bootstrap.resamples`` its own
refusal names, and the length at which a refused confidence is still written out in digits."""

from __future__ import annotations

import pytest

from oloproof_nb._config.release import parse_release
from oloproof_nb.errors import ConfigError


def test_the_largest_resample_count_the_refusal_names_is_accepted() -> None:
    """1,000,001 resamples are refused with "less than or equal to 1000000": so 1,000,000 itself must be accepted
    (``le=999_999`` kept the message's number out of reach)."""
    with pytest.raises(ConfigError, match=r"bootstrap\.resamples: .*less than or equal to 1000000 \(got 1000001\)"):
        parse_release({"bootstrap": {"resamples": 1_000_001}})
    assert parse_release({"bootstrap": {"resamples": 1_000_000}}).bootstrap.resamples == 1_000_000


@pytest.mark.parametrize(("confidence", "shown"), [
    (1.5e-21, "0.0000000000000000000015"),  # 24 characters (counted by hand): written out
    (1.5e-22, "1.5e-22"),  # 25 characters in digits: its exponent kept, the message one short line
])
def test_a_refused_confidence_of_24_digits_is_written_out_and_of_25_keeps_its_exponent(confidence: float,
                                                                                       shown: str) -> None:
    """The message writes a refused confidence in every digit up to 24 characters, and as ``:g`` beyond (a number
    like 1e-300 would fill the line with zeros): the edge itself, 24 characters, is written out."""
    if "e" not in shown:
        assert len(shown) == 24
    with pytest.raises(ConfigError) as caught:
        parse_release({"confidence": confidence})
    assert str(caught.value).startswith(f"release.yaml: confidence: {shown} is below 0.5: it is the confidence level")
