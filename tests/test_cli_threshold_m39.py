"""Mutation round M39 on ``--pass-threshold X|NAME=X``: the plain form's own error (argparse's words, as for
``type=float`` before NAME=X was taken)."""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof_nb.cli import main


@pytest.mark.parametrize("given", ["abc", "7,5"])
def test_a_plain_value_that_is_no_number_says_so_as_argparse_does(tmp_path: Path, given: str,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """No '=': the value was meant as X, so the line is argparse's "invalid float value" with the NAME=X form
    offered, not "'abc': 'abc' is not a number (give NAME=X)", which tells a user who gave no name to give one."""
    with pytest.raises(SystemExit) as info:
        main(["gate", str(tmp_path), "--pass-threshold", given])
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert err == (f"oloproof: error: argument --pass-threshold: invalid float value: {given!r} (give X, or NAME=X "
                   "for one criterion) (see `oloproof gate --help`)\n")
