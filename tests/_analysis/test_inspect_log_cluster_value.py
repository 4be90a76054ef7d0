"""An Inspect AI log's ``--cluster`` value that reads as nothing is refused, as a case file's is."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

import oloproof_nb as op
from oloproof_nb._analysis.inspect_records import Reader


@pytest.mark.parametrize("value", ["", "  ", "\u200b"])
def test_a_nameless_cluster_value_is_refused(value: str, tmp_path: Path) -> None:
    reader = Reader("topic", None, None, None)
    log = tmp_path / "a.eval"
    assert reader._cluster(log, "s1", 1, SimpleNamespace(events=[], metadata={"topic": "billing"}), {}) == "billing"
    with pytest.raises(op.OloproofError) as info:
        reader._cluster(log, "s2", 1, SimpleNamespace(events=[], metadata={"topic": value}), {})
    assert str(info.value).startswith(f"{log}: cluster='topic': sample 's2' has topic {value!r}, a name that reads "
                                      "as nothing"), str(info.value)


@pytest.mark.parametrize(("value", "kind"), [(None, "null"), ({"a": 1}, "an object"), (["x"], "a list"),
                                             (float("nan"), "NaN (a missing value)")])
def test_a_cluster_value_that_is_not_a_name_is_refused(value: object, kind: str, tmp_path: Path) -> None:
    """Before: ``str(None)``, every sample whose key was null fell in one cluster named ``"None"``, and every sample
    whose key was NaN (a dataset made from a pandas frame with empty cells; the log keeps it) in one named ``"nan"``:
    three unrelated samples counted as one cluster."""
    reader = Reader("topic", None, None, None)
    log = tmp_path / "a.eval"
    assert reader._cluster(log, "s1", 1, SimpleNamespace(events=[], metadata={"topic": 7}), {}) == "7"
    with pytest.raises(op.OloproofError) as info:
        reader._cluster(log, "s2", 1, SimpleNamespace(events=[], metadata={"topic": value}), {})
    assert str(info.value).startswith(f"{log}: cluster='topic': sample 's2' has topic {kind}, not a name"), \
        str(info.value)
