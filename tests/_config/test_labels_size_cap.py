"""The label file's size cap is the README's "64 MiB for a label file" (67,108,864 bytes), to the byte
(a cap of 65 MiB or of 32 MiB passed every other test, which set the cap by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof_nb._config.labels import load_labels
from oloproof_nb.errors import LabelFileError

MIB_64 = 64 * 1024 * 1024  # README: "64 MiB for a label file"


def _sparse(path: Path, size: int) -> Path:
    with path.open("wb") as f:
        f.truncate(size)  # a hole: no disk written, the size as stat sees it
    return path


def test_a_label_file_one_byte_over_64_mib_is_refused_by_its_size(tmp_path: Path) -> None:
    refused = rf"cannot read the label file: is {MIB_64 + 1} bytes; .* at most {MIB_64}"
    with pytest.raises(LabelFileError, match=refused):
        load_labels(_sparse(tmp_path / "t.jsonl", MIB_64 + 1))


def test_a_label_file_of_exactly_64_mib_is_read(tmp_path: Path) -> None:
    """Read, so refused for what it holds (NUL bytes, no JSON), not for its size."""
    with pytest.raises(LabelFileError, match=r"line 1: not valid JSON"):
        load_labels(_sparse(tmp_path / "t.jsonl", MIB_64))
