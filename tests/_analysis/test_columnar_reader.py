"""The frame files' reader: the pool it reads into, and that it reads what
``pq.read_table`` reads (the reference: the reader it replaced), dictionary-encoded columns included."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from oloproof_nb._analysis import columnar


def test_the_read_pool_is_the_c_librarys_allocator() -> None:
    """``read_pool`` is the system allocator (``malloc``), whatever the process's default pool is."""
    assert columnar.read_pool().backend_name == "system"


def test_read_table_reads_what_pq_read_table_reads(tmp_path: Path) -> None:
    path = tmp_path / "frame.parquet"
    table = pa.table({"case_id": ["c0", "c1", "c2", "c3"], "state": ['{"a": 1}', '{"a": 1}', None, '{"b": 2}'],
                      "score": [1.0, 0.5, None, 0.0], "extra": [1, 2, 3, 4]})
    pq.write_table(table, path, row_group_size=2)  # two row groups: two chunks
    columns, dictionary = ["case_id", "state", "score"], ["state"]
    with pa.OSFile(str(path), "rb") as handle:
        got = columnar._read_table(handle, columns, dictionary)
    want = pq.read_table(path, columns=columns, read_dictionary=dictionary)
    assert got.column_names == columns  # "extra" not read
    assert pa.types.is_dictionary(got.schema.field("state").type)
    assert got.schema.field("state").type == want.schema.field("state").type
    assert got.equals(want)
    assert got.to_pylist() == [{"case_id": "c0", "state": '{"a": 1}', "score": 1.0},  # written by hand
                               {"case_id": "c1", "state": '{"a": 1}', "score": 0.5},
                               {"case_id": "c2", "state": None, "score": None},
                               {"case_id": "c3", "state": '{"b": 2}', "score": 0.0}]
