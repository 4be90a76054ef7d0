"""Where a command finds a run: a suite folder or a run directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def test_the_latest_run_is_named_with_whether_it_finished_and_quoted_for_a_shell(
        make_suite: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hint of an error that wants the run to resume: the suite's latest run, stopped after its first case here
    (unfinished), as out='…' for Python and as a shell word for the command line (the folder's name has a space);
    nothing when there is no run, or when the runs cannot be listed (the error is given without it, no traceback)."""
    import oloproof_nb as op

    cases = [{"id": f"c{i}", "input": {"answer": "ok", "n": i}, "expected": {"answer": "ok"}} for i in range(3)]
    folder = make_suite(cases, folder="my suite")
    assert locate.latest_hint(folder) == ""

    def stop_after_one(done: int, total: int) -> None:
        if done >= 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        op.run(op.load_suite(folder), progress=stop_after_one)
    [latest] = (folder / "runs").iterdir()
    assert locate.latest_hint(folder) == f"; the suite's latest run is out={str(latest)!r} (unfinished)"
    assert locate.latest_hint(folder, flag=True) == f"; the suite's latest run is --out '{latest}' (unfinished)"
    real = Path.iterdir

    def denied(self: Path) -> Any:
        if self.name == "runs":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "iterdir", denied)
    assert locate.latest_hint(folder) == ""
