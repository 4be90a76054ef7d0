"""``_top_imports``' size cap: the warning names the file's own size, not the bytes read."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

import pytest

from oloproof_nb._config import imports
from oloproof_nb._config.imports import MAX_IMPORT_SCAN_BYTES, _top_imports


def test_the_warning_names_the_files_size_not_the_bytes_read(tmp_path: Path) -> None:
    """A module of 1 MiB + 1,000 bytes: only 1 MiB + 1 are read, yet the warning says 1,049,576 bytes (a hand count:
    1,048,576 + 1,000), the size ``st_size`` gives; a message built from the bytes read said 1,048,577."""
    path = tmp_path / "big.py"
    head = b"from rules import LIMIT\n#"
    path.write_bytes(head + b"x" * (1_049_576 - len(head) - 1) + b"\n")
    assert path.stat().st_size == 1_049_576 == MAX_IMPORT_SCAN_BYTES + 1000
    with pytest.warns(UserWarning) as caught:
        assert _top_imports(path, "m41-big", "") == ()
    [warning] = caught
    assert str(warning.message).startswith(f"{path}: 1,049,576 bytes, over the 1,048,576 (1 MiB)")


class _Growing(io.BytesIO):
    """A module file that grew after it was stat'ed: ``size`` bytes now; records what each read asked for."""

    def __init__(self, size: int) -> None:
        super().__init__(b"#" * (size - 1) + b"\n")
        self.asked: list[int | None] = []
        self.got = 0

    def read(self, n: int | None = -1) -> bytes:  # type: ignore[override]
        self.asked.append(n)
        data = super().read(n)
        self.got = len(data)
        return data


def test_a_file_that_grew_after_its_stat_is_read_no_further_than_the_cap(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """stat said 10 bytes, the file now holds 3 MiB: one read of at most cap + 1 bytes (1,048,577), and the warning
    names the larger of the two sizes it saw (1,048,577, the bytes read; not the stat's 10)."""
    handle = _Growing(3 << 20)
    monkeypatch.setattr(imports, "open_regular", lambda path: (handle, SimpleNamespace(st_size=10)))
    with pytest.warns(UserWarning) as caught:
        assert _top_imports(tmp_path / "grew.py", "m41-grew", "") == ()
    assert handle.asked == [1_048_577] and handle.got == 1_048_577
    assert str(caught[0].message).startswith(f"{tmp_path / 'grew.py'}: 1,048,577 bytes, over the 1,048,576")
