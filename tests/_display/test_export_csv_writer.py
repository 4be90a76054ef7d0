"""The export writes each CSV line by itself (not through pandas' writer); these pin two behaviours of that writer
the other export tests leave open, each measured with ``pd.read_csv``/the bytes, not the writer itself."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import oloproof_nb as op


def test_a_row_of_one_empty_cell_is_a_row(tmp_path: Path) -> None:
    # written bare, the row is a blank line, which pd.read_csv (and a spreadsheet import) skips: 3 rows read as 1
    path = op.export_table(pd.DataFrame({"case_id": ["", "a", ""]}), tmp_path / "t.csv")
    back = pd.read_csv(path, keep_default_na=False, dtype=str)
    assert back["case_id"].tolist() == ["", "a", ""]


def test_a_table_with_a_carriage_return_in_a_cell_keeps_crlf_line_ends(tmp_path: Path) -> None:
    # the README: such a table is written with \r\n line ends (RFC 4180), as pandas' writer wrote it
    path = op.export_table(pd.DataFrame({"case_id": ["x\r=2+5", "b"]}), tmp_path / "t.csv")
    assert path.read_bytes().split(b"\r\n") == [b"case_id", b'"x\r=2+5"', b"b", b""]
    assert pd.read_csv(path, dtype=str)["case_id"].tolist() == ["x\r=2+5", "b"]
