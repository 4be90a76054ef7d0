"""``pass_threshold={criterion: X}`` when reading Inspect AI logs: edges the per-criterion tests leave unpinned."""

from __future__ import annotations

from types import MappingProxyType

import pytest

import oloproof_nb as op
from oloproof_nb._analysis.inspect_log import _thresholds
from oloproof_nb._analysis.inspect_records import Reader


def test_a_name_in_logs_without_any_criterion_says_there_is_none() -> None:
    """Logs whose samples no scorer scored have no criterion: the error says so instead of ending in "their
    criteria: " and nothing."""
    reader = Reader(None, None, None, {"rating": 7.0})
    reader.criteria = {}
    with pytest.raises(op.OloproofError) as info:
        reader._check_threshold_names()
    assert str(info.value) == ("pass_threshold['rating']=7: these logs have no criterion 'rating'; their criteria: "
                               "(none: no scorer scored a sample)")


def test_any_mapping_is_a_mapping_of_thresholds() -> None:
    """The signature says ``Mapping[str, float]``: a read-only mapping (a frozen config's ``MappingProxyType``) is
    one, checked and copied to a dict of floats, not refused as "no finite number"."""
    got = _thresholds(MappingProxyType({"rating": 7, "exact": 0.5}))
    assert got == {"rating": 7.0, "exact": 0.5} and type(got) is dict
    assert [type(v) for v in got.values()] == [float, float]
