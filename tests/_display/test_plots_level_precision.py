"""A plot's level label keeps a float32 level's own digits: ``_level`` widened it to a float before
``theme.fmt_level`` saw it, so ``confidence=np.float32(0.95)`` (or a table's ``attrs["confidence"]`` read from a
float32 column) labelled the axis ``94.9999988079071%``, where the user wrote 0.95."""

from __future__ import annotations

import numpy as np
import pandas as pd

from oloproof_nb._display.plots import _level


def test_a_float32_level_given_to_a_plot_is_labelled_as_written() -> None:
    assert _level(pd.DataFrame(), np.float32(0.95)) == "95% "


def test_a_tables_float32_level_is_labelled_as_written() -> None:
    table = pd.DataFrame({"rate": [0.5]})
    table.attrs["confidence"] = np.float32(0.9)
    assert _level(table) == "90% "
    table.attrs["confidence"] = 0.9  # a float as before
    assert _level(table) == "90% "
