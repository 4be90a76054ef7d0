"""A YAML file with a byte that is not UTF-8 names the byte's own line and offset, after a byte-order mark too."""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof_nb._config.files import read_yaml
from oloproof_nb.errors import ConfigError


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_a_byte_not_utf8_on_the_third_line_is_named_on_line_3(tmp_path: Path, bom: bytes) -> None:
    path = tmp_path / "oloproof.yaml"
    path.write_bytes(bom + b"name: x\ncases: cases.jsonl\nsystem: desk\xff:Desk\n")
    with pytest.raises(ConfigError) as caught:
        read_yaml(path)
    # 8 + 19 + 12 bytes before it: line 3, byte 39 of the lines (it said 39 after a BOM too, the file's 42)
    assert str(caught.value).endswith(f"(invalid start byte at line 3, byte {len(bom) + 39})")
