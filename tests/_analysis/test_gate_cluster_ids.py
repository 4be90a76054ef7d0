"""``_ids_repeat``, the gate's test of whether a run's cluster column clusters its rows.

A test that counted only ids whose repeated id was always the first one (``a, b, a``, ``a, b`` * 3): a mutant that
looked at the first id's rows alone (``np.bincount(codes)[:1]``) passed it. Each answer below is counted by hand:
whether some id, in Python's sense of equal (``1 == 1.0 == True``), is held by two rows or more.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

import oloproof_nb._analysis.gate as gate_module
from oloproof_nb._core.stats import is_clustered


@pytest.mark.parametrize(("ids", "dtype", "repeats"), [
    (["a", "b", "b"], "str", True),  # the repeated id is not the first
    (["a", "b", "c", "c"], "string", True),
    (["x", 1, True], "object", True),  # True == 1, as in a dict: one id (is_clustered's Counter agrees)
    (["x", 1, "1"], "object", False),  # the text "1" is not the number 1
    ([0, 2.5, False], "object", True),
    (["a", "b", "c"], "category", False),
    (["a", "b", "b"], "category", True),
])
def test_a_repeated_id_anywhere_in_the_column_makes_the_run_clustered(ids: list[Any], dtype: str,
                                                                       repeats: bool) -> None:
    column = pd.Series(ids, dtype=dtype)
    assert gate_module._ids_repeat(column) is repeats
    assert is_clustered(column) is repeats  # the function it stands in for says the same


def test_unused_categories_are_no_clusters() -> None:
    """A categorical column counts the ids its rows hold: categories no row holds add no cluster and no repeat."""
    column = pd.Series(pd.Categorical(["a", "b"], categories=["a", "b", "c", "d"]))
    assert gate_module._ids_repeat(column) is False
    assert gate_module._ids_repeat(pd.Series(pd.Categorical(["d", "a", "d"], categories=["a", "b", "c", "d"]))) is True
