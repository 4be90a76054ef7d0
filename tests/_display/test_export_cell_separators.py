"""Exports as an agent's output channel: a CSV cell holding ``;`` or a tab is quoted, so a spreadsheet that splits
rows on them reads no formula."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

import oloproof_nb as op
from oloproof_nb._display.export import CSV_FORMULA_STARTS

#: An agent's texts that hide a formula after a separator a spreadsheet may split on: Excel's ``;`` (its list
#: separator where the decimal mark is a comma) and a tab. None has a comma or a quote, which were quoted before.
HIDDEN = ["x;=1+2;", "y\t=cmd|' /C calc'!A0", "ok;@SUM(1)", "a;-2+3"]


def _cells(path: Path, delimiter: str) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle, delimiter=delimiter))


def test_a_separator_inside_a_cell_starts_no_formula_where_a_spreadsheet_splits_on_it(tmp_path: Path) -> None:
    """Written bare, ``x;=1+2;,0.5`` was read with ``;`` as ``['x', '=1+2', ',0.5']`` and ``y<TAB>=cmd|…`` with a tab
    as ``['y', "=cmd|' /C calc'!A0,1.0"]``: a formula, and a DDE call, in a cell of their own (read with the csv
    module, split as a semicolon-locale spreadsheet splits). Now each such cell is quoted: one cell under either
    separator, and under ``,`` the values and numbers read back as given."""
    table = pd.DataFrame({"case_id": HIDDEN, "rate": [0.5, 1.0, -0.5, 0.25]})
    path = op.export_table(table, tmp_path / "t.csv")
    for delimiter in (";", "\t"):
        cells = [cell for row in _cells(path, delimiter) for cell in row]
        assert not [cell for cell in cells if cell.startswith(CSV_FORMULA_STARTS[:-1])], delimiter
    assert _cells(path, ",")[1:] == [[c, r] for c, r in zip(HIDDEN, ["0.5", "1.0", "-0.5", "0.25"], strict=True)]
    back = pd.read_csv(path)
    assert list(back["case_id"]) == HIDDEN and list(back["rate"]) == [0.5, 1.0, -0.5, 0.25]
