"""Where a command finds a run: a suite folder or a run directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof_nb._run import locate


def test_a_folder_that_cannot_be_read_is_no_suite_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run folder without read permission raised PermissionError from the suite-folder probe, and
    ``oloproof gate`` blamed ``<run>/oloproof.yaml``, a file that is not there. The probe says "not a suite
    folder", and loading the folder as a run names what cannot be read."""
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "oloproof.yaml").write_text("name: x\n", encoding="utf-8")
    assert locate.is_suite_folder(tmp_path / "suite")
    assert not locate.is_suite_folder(tmp_path)
    real = Path.is_file

    def denied(self: Path) -> bool:
        if self.parent.name == "locked":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "is_file", denied)
    assert not locate.is_suite_folder(tmp_path / "locked")
