"""The word a case panel writes for a metamorphic relation's ``holds`` cell."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from oloproof_nb._display.panel import _holds_word


@pytest.mark.parametrize(("holds", "word"), [(True, "holds"), (False, "BROKEN"), (None, "missing"),
                                             (pd.NA, "missing"), (math.nan, "missing")])
def test_a_missing_holds_cell_reads_missing_never_holds_or_broken(holds: object, word: str) -> None:
    """A relation whose verdict is missing (None from the record, pd.NA in a nullable column, NaN in a float one)
    reads ``missing``: ``bool(nan)`` is True and ``bool(None)`` False, which would say ``holds`` or ``BROKEN``."""
    assert _holds_word(holds) == word
