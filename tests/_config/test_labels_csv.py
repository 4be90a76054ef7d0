"""A label file written as CSV (a spreadsheet's export, ``case_id,valid`` a header): it was refused as
``not valid JSON`` at line 1, with no word that label files are JSON Lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof_nb._config.labels import load_labels
from oloproof_nb.errors import LabelFileError


@pytest.mark.parametrize("header", ["case_id,valid", '"case_id","valid","labeler"', "case_id\tvalid", "case_id;valid",
                                    "valid, case_id", 'labeler; "case_id"; valid'])
def test_a_csv_label_file_is_told_label_files_are_json_lines(tmp_path: Path, header: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(f"{header}\nc0~t,true\n", encoding="utf-8")
    with pytest.raises(LabelFileError) as caught:
        load_labels(path)
    assert caught.value.line == 1
    assert caught.value.message == (f"looks like a CSV header ({header!r}), not JSON; a label file is JSON Lines, one "
                                    'object a line: {"case_id": ..., "valid": true|false}')


def test_a_line_of_bad_json_after_judgements_keeps_its_message(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"case_id": "c0~t", "valid": true}\ncase_id,valid\n', encoding="utf-8")
    with pytest.raises(LabelFileError) as caught:
        load_labels(path)
    assert caught.value.line == 2 and caught.value.message.startswith("not valid JSON (")


def test_a_first_line_of_bad_json_naming_no_case_id_keeps_its_message(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text("c0~t,true\n", encoding="utf-8")
    with pytest.raises(LabelFileError) as caught:
        load_labels(path)
    assert caught.value.message.startswith("not valid JSON (")
