"""A numeric option's value with a '_' in it is refused, one line, exit 2 (Python's int() and float()
skip a '_' between digits: ``--pass-threshold 1_0`` gated at 10, ``--workers 1_6`` ran 16 workers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof_nb.cli import main

FLOAT = "digits, with a '.' or an exponent as needed, e.g. 0.5, 7 or 1e-3"


@pytest.mark.parametrize(("command", "option", "value", "kind", "allowed"), [
    ("gate", "--pass-threshold", "1_0", "float", FLOAT),
    ("gate", "--pass-threshold", "0.7_5", "float", FLOAT),
    ("gate", "--pass-threshold", "judge=1_0", "float", FLOAT),
    ("run", "--workers", "1_6", "int", "digits only, e.g. 4"),
    ("run", "--epochs", "1_0", "int", "digits only, e.g. 4"),
])
def test_a_number_with_an_underscore_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                command: str, option: str, value: str, kind: str,
                                                                allowed: str) -> None:
    """Refused before anything is read or run (the folder does not exist), naming the option, the value as typed
    (its number, for NAME=X) and how a number is written."""
    folder = tmp_path / "nothing"
    with pytest.raises(SystemExit) as info:
        main([command, str(folder), option, value])
    number = value.rpartition("=")[2]
    assert info.value.code == 2
    assert capsys.readouterr().err == (f"oloproof: error: argument {option}: invalid {kind} value: {number!r} (a '_' "
                                       f"is refused, as Python would skip it: give {allowed}) "
                                       f"(see `oloproof {command} --help`)\n")
    assert not folder.exists()


@pytest.mark.parametrize(("option", "value"), [("--workers", "many"), ("--epochs", "2.5")])
def test_an_int_option_that_is_no_number_keeps_argparse_s_words(tmp_path: Path, option: str, value: str,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The helper's own reading keeps argparse's line for a value that is no number (not ``invalid _count value``)."""
    with pytest.raises(SystemExit) as info:
        main(["run", str(tmp_path), option, value])
    assert info.value.code == 2
    assert capsys.readouterr().err == (f"oloproof: error: argument {option}: invalid int value: {value!r} "
                                       "(see `oloproof run --help`)\n")


def test_plain_numbers_are_still_read() -> None:
    """Digits, a '.', an exponent and a sign still read as before (the helper refuses the '_' alone)."""
    from oloproof_nb.cli.parser import build_parser

    parser = build_parser()
    assert parser.parse_args(["gate", "x", "--pass-threshold", "7"]).pass_threshold == 7.0
    assert parser.parse_args(["gate", "x", "--pass-threshold", "judge=1e-1"]).pass_threshold == {"judge": 0.1}
    assert parser.parse_args(["gate", "x", "--pass-threshold=-0.5"]).pass_threshold == -0.5
    run = parser.parse_args(["run", "x", "--workers", "16", "--epochs", "3"])
    assert (run.workers, run.epochs) == (16, 3)


@pytest.mark.parametrize(("command", "option", "value", "kind", "allowed"), [
    ("run", "--epochs", "\uff11", "int", "digits only, e.g. 4"),  # a fullwidth 1
    ("run", "--workers", "\u0664", "int", "digits only, e.g. 4"),  # an Arabic-Indic 4
    ("run", "--workers", "\u00a04", "int", "digits only, e.g. 4"),  # a no-break space before the 4
    ("gate", "--pass-threshold", "\uff10.\uff19", "float", FLOAT),  # a fullwidth 0.9
    ("gate", "--pass-threshold", "judge=\u0660.\u0669", "float", FLOAT),  # an Arabic-Indic 0.9
])
def test_a_number_that_is_not_ascii_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             command: str, option: str, value: str, kind: str,
                                                             allowed: str) -> None:
    """Python's int() and float() read every Unicode digit and skip Unicode spaces (``--epochs=１`` ran 1 epoch),
    where a file's number is ASCII or it is text, refused: the command line is read as strictly."""
    folder = tmp_path / "nothing"
    with pytest.raises(SystemExit) as info:
        main([command, str(folder), option, value])
    number = value.rpartition("=")[2]
    assert info.value.code == 2
    assert capsys.readouterr().err == (f"oloproof: error: argument {option}: invalid {kind} value: {number!r} (a "
                                       "character other than ASCII is refused, as Python would read any Unicode "
                                       f"digit: give {allowed}) (see `oloproof {command} --help`)\n")
    assert not folder.exists()
