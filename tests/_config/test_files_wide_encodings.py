"""A file saved as UTF-16 or UTF-32 with its byte-order mark (Windows PowerShell's ``>``, Notepad's "Unicode") is
named as such, with the encoding to save it in: every reader said only "not UTF-8 text (invalid start byte)"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof_nb._config.cases import load_cases
from oloproof_nb._config.contracts import load_contract_file
from oloproof_nb._config.files import read_yaml
from oloproof_nb._config.labels import load_labels
from oloproof_nb.errors import CaseFileError, ConfigError, ContractFileError, LabelFileError

ENCODINGS = [("utf-16", "UTF-16"), ("utf-16-le", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32", "UTF-32"),
             ("utf-32-be", "UTF-32")]
SAID = "not UTF-8 text: it is {} (it starts with a {} byte-order mark); save it as UTF-8"


def _saved(path: Path, text: str, encoding: str) -> Path:
    # the -le/-be codecs write no mark of their own: the editor's is written by hand
    mark = "\ufeff" if encoding.endswith(("-le", "-be")) else ""
    path.write_bytes((mark + text).encode(encoding))
    return path


@pytest.mark.parametrize(("encoding", "name"), ENCODINGS)
def test_a_yaml_file_saved_wide_is_named_so(tmp_path: Path, encoding: str, name: str) -> None:
    path = _saved(tmp_path / "release.yaml", "confidence: 0.95\n", encoding)
    with pytest.raises(ConfigError) as caught:
        read_yaml(path)
    assert str(caught.value) == f"{path}: cannot read: {SAID.format(name, name)}"


@pytest.mark.parametrize(("encoding", "name"), ENCODINGS)
def test_a_case_file_saved_wide_is_named_so_at_line_1(tmp_path: Path, encoding: str, name: str) -> None:
    line = json.dumps({"id": "c1", "input": {"q": "hi"}}) + "\n"
    path = _saved(tmp_path / "cases.jsonl", line * 2, encoding)
    with pytest.raises(CaseFileError) as caught:
        load_cases(path)
    assert str(caught.value) == f"{path}: line 1: {SAID.format(name, name)}"


def test_a_long_first_line_saved_wide_is_named_so_too(tmp_path: Path) -> None:
    """A first line longer than one read piece: refused as such before it is read as a line not starting ``{``."""
    line = json.dumps({"id": "c1", "input": {"q": "x" * 100_000}}) + "\n"
    path = _saved(tmp_path / "cases.jsonl", line, "utf-16")
    with pytest.raises(CaseFileError) as caught:
        load_cases(path)
    assert caught.value.message == SAID.format("UTF-16", "UTF-16")


@pytest.mark.parametrize(("encoding", "name"), ENCODINGS[:2])
def test_a_label_file_saved_wide_is_named_so_at_line_1(tmp_path: Path, encoding: str, name: str) -> None:
    path = _saved(tmp_path / "injected.jsonl", '{"case_id": "c1~injected", "valid": true}\n', encoding)
    with pytest.raises(LabelFileError) as caught:
        load_labels(path)
    assert str(caught.value) == f"{path}: line 1: {SAID.format(name, name)}"


@pytest.mark.parametrize(("encoding", "name"), ENCODINGS[:2])
def test_a_contract_file_saved_wide_is_named_so(tmp_path: Path, encoding: str, name: str) -> None:
    path = _saved(tmp_path / "CONTRACT.json", '{"artifact_id": "a", "locator": "report.json"}', encoding)
    with pytest.raises(ContractFileError) as caught:
        load_contract_file(path)
    assert str(caught.value) == f"{path}: contract file is {SAID.format(name, name)}"


def test_a_stray_byte_at_the_start_is_still_named_by_its_place(tmp_path: Path) -> None:
    """Only a byte-order mark names an encoding: a lone 0xFF is a byte that is not UTF-8, at its line and byte."""
    path = tmp_path / "release.yaml"
    path.write_bytes(b"\xffconfidence: 0.95\n")
    with pytest.raises(ConfigError) as caught:
        read_yaml(path)
    assert str(caught.value).endswith("cannot read: not UTF-8 text (invalid start byte at line 1, byte 0)")
