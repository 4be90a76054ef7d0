"""An internal error whose message quotes a name that is not UTF-8 (a lone surrogate, as Python decodes such a file
name): still one line and exit 2, its traceback kept in the file the line names."""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path

import pytest

from oloproof_nb.cli import commands, main


def _bug(args: argparse.Namespace) -> int:
    raise RuntimeError("no record for caf\udce9.json")  # b"caf\xe9.json" read as a file name


def test_an_internal_error_quoting_a_name_that_is_not_utf8_is_one_line_and_exit_2(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Writing the traceback as UTF-8 raised UnicodeEncodeError inside the handler: a Python traceback and exit 1,
    read as BLOCK."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the traceback file is made
    monkeypatch.setitem(commands.COMMANDS, "gate", _bug)
    assert main(["gate", "somewhere"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    found = re.fullmatch(r"oloproof: internal error: RuntimeError: no record for caf\\udce9\.json \(a bug in "
                         r"oloproof_nb; the traceback is in (\S+)\)\n", err)
    assert found is not None
    kept = Path(found.group(1))
    assert kept.parent == tmp_path
    assert "RuntimeError: no record for caf\\udce9.json" in kept.read_text(encoding="utf-8")
