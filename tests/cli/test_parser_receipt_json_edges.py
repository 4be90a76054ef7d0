"""``oloproof receipt --json``'s errors (one JSON object on every exit 2): the kinds and abbreviations the other
tests leave open. In-process (``main``), as the console script runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from oloproof_nb._run import observe
from oloproof_nb.cli import main
from oloproof_nb.errors import InternalError


def test_an_internal_error_is_json_of_kind_internal_error(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """An ``InternalError`` (a bug oloproof_nb found in itself) is ``"internal error"`` in the JSON, as the
    uncaught RuntimeError is, and its stderr line keeps its own prefix ``oloproof: `` (not ``oloproof: error:``)."""

    def boom(path: Path) -> None:
        raise InternalError("internal error: the receipt index is inconsistent")

    monkeypatch.setattr(observe, "verify_contract_file", boom)
    assert main(["receipt", "c.json", "--json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out) == {"error": "internal error",
                               "message": "internal error: the receipt index is inconsistent"}
    assert err == "oloproof: internal error: the receipt index is inconsistent\n"


@pytest.mark.parametrize("flag", ["--j", "--jso", "--json"])
def test_every_abbreviation_argparse_takes_asks_for_json(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    """argparse reads ``--j`` (3 characters, the shortest prefix of ``--json`` no other option of ``receipt`` shares)
    as ``--json``: a missing contract is then one JSON object on stdout."""
    with pytest.raises(SystemExit) as done:
        main(["receipt", flag])
    assert done.value.code == 2
    out, err = capsys.readouterr()
    said = "the following arguments are required: contract (see `oloproof receipt --help`)"
    assert json.loads(out) == {"error": "usage error", "message": said}
    assert err == f"oloproof: error: {said}\n"


def test_a_json_error_to_a_reader_that_left_still_exits_2(tmp_path: Path) -> None:
    """``oloproof receipt --json | head -0``: the JSON line is lost, the exit code (2) and the stderr line stay (the
    docstring of ``print_json_error``); a print left in the buffer failed again at exit, exit code 120."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "oloproof_nb.cli", "receipt", "--json"], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120, cwd=tmp_path)
    finally:
        os.close(write)
    assert done.returncode == 2
    assert done.stderr == ("oloproof: error: the following arguments are required: contract "
                           "(see `oloproof receipt --help`)\n")


def test_an_error_of_the_top_level_parser_is_json_too(capsys: pytest.CaptureFixture[str]) -> None:
    """``receipt c.json --json --=x``: argparse's top-level parser reads every argument before the command's and
    refuses ``--=x`` itself (it could be its --help or --version); before, that exit 2 printed nothing on stdout,
    though --json was asked for (every exit 2 of ``receipt --json`` is one JSON object)."""
    with pytest.raises(SystemExit) as done:
        main(["receipt", "c.json", "--json", "--=x"])
    assert done.value.code == 2
    out, err = capsys.readouterr()
    said = "ambiguous option: --=x could match --help, --version (see `oloproof --help`)"
    assert json.loads(out) == {"error": "usage error", "message": said}
    assert err == f"oloproof: error: {said}\n"


@pytest.mark.parametrize("argv", [["--json", "receipt", "c.json"], ["receipt", "c.json", "--=x"]])
def test_json_is_asked_for_only_after_the_command(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """``--json`` before ``receipt`` is no option of receipt (argparse refuses it as unrecognized), and ``--=x`` no
    abbreviation of ``--json``: stdout stays empty, the one line is on stderr."""
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("oloproof: error: ") and err.count("\n") == 1


def test_a_one_dash_option_before_the_command_is_no_command(capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof -x receipt c.json --json``: the command is ``receipt`` (the first argument not starting with '-'),
    so the refusal of ``-x`` is JSON too (taking ``-x`` for the command read no --json there)."""
    with pytest.raises(SystemExit) as done:
        main(["-x", "receipt", "c.json", "--json"])
    assert done.value.code == 2
    out, err = capsys.readouterr()
    said = "unrecognized arguments: -x (see `oloproof receipt --help`)"
    assert json.loads(out) == {"error": "usage error", "message": said}
    assert err == f"oloproof: error: {said}\n"
