"""``--pass-threshold X|NAME=X``: the plain form's own error (argparse's words, as for
``type=float`` before NAME=X was taken)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def test_pass_threshold_on_a_run_folder_points_to_oloproof_yaml(make_suite: Any, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof gate RUN --pass-threshold 0.5`` on a run folder said the option was for Inspect AI
    logs only, and no word of where a python check's threshold goes: its ``pass_threshold:`` in oloproof.yaml, read
    when the suite runs. --cluster alone says nothing of thresholds. Nothing is written either way."""
    import oloproof_nb as op

    run = op.run(make_suite([{"id": "c1", "input": {"answer": "ok"}}]), out=tmp_path / "r", progress=False)
    before = sorted(p.name for p in run.directory.iterdir())
    assert main(["gate", str(run.directory), "--pass-threshold", "0.5"]) == 2
    assert capsys.readouterr().err == (
        f"oloproof: error: {run.directory}: --cluster, --state-key and --pass-threshold apply to Inspect AI logs only; "
        "this is not one; a python check's scores pass at its pass_threshold: in oloproof.yaml, read when the suite "
        "runs (set it there and run the suite again)\n")
    assert main(["gate", str(run.directory), "--cluster", "team"]) == 2
    assert "pass_threshold:" not in capsys.readouterr().err
    assert sorted(p.name for p in run.directory.iterdir()) == before
