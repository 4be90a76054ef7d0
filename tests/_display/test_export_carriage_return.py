"""A carriage return inside a CSV cell is quoted, so it cannot start a row (nor a formula)."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd

import oloproof_nb as op


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_a_carriage_return_inside_a_cell_stays_in_its_cell(tmp_path: Path) -> None:
    """A case id ``x\\r=2+5`` was written bare (the writer quotes only for ``\\n``, its line terminator): the
    csv module and ``pd.read_csv`` read 3 rows of 2 where there are 2, the third starting with ``=2+5`` (a
    formula the leading ``'`` never saw), and ``-0.5`` landed in another row. Now the cell is quoted."""
    table = pd.DataFrame({"case_id": ["ok", "x\r=2+5", "y\r\nz"], "rate": [0.5, -0.5, 1.0]})
    path = op.export_table(table, tmp_path / "t.csv")
    rows = _rows(path)
    assert rows == [["case_id", "rate"], ["ok", "0.5"], ["x\r=2+5", "-0.5"], ["y\r\nz", "1.0"]]
    assert not any(cell.startswith("=") for row in rows for cell in row)
    back = pd.read_csv(path)
    assert list(back["case_id"]) == ["ok", "x\r=2+5", "y\r\nz"] and list(back["rate"]) == [0.5, -0.5, 1.0]


def test_a_table_without_a_carriage_return_keeps_its_line_ends(tmp_path: Path) -> None:
    """Only a table that holds a carriage return is written with ``\\r\\n``: others keep ``\\n``, byte for byte."""
    table = pd.DataFrame({"case_id": ["a", "b\nc"], "rate": [0.25, -0.5]})
    path = op.export_table(table, tmp_path / "t.csv")
    assert path.read_bytes() == b'case_id,rate\na,0.25\n"b\nc",-0.5\n'
