"""An index level that repeats a column: a value missing on one side only is a different value."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

import oloproof_nb as op
from oloproof_nb.errors import ExportError


@pytest.mark.parametrize(("level", "column"), [([0.5, math.nan], [0.5, 0.9]), ([0.5, 0.9], [0.5, math.nan])])
def test_a_level_missing_where_its_column_has_a_value_is_refused(tmp_path: Path, level: list[float],
                                                                 column: list[float]) -> None:
    """Row 2's rate is 0.9 on one side and missing on the other: writing the level once would lose one of
    them, so the export is refused (two missing values are one value; one missing value is not)."""
    table = pd.DataFrame({"rate": column, "k": [1, 2]}, index=pd.Index(level, name="rate"))
    with pytest.raises(ExportError, match="the index level 'rate' and the column 'rate' hold different values"):
        op.export_table(table, tmp_path / "t.csv")
    assert not (tmp_path / "t.csv").exists()
