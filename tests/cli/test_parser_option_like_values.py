"""The usage error names an argument read as an option only where argparse did read one so: an argument with a space
in it and ``-`` are taken as values (a path), and an error other than a missing argument gets no such clause."""

from __future__ import annotations

import pytest

from oloproof_nb.cli import main


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("value", ["-my runs", "-"])
def test_a_value_argparse_takes_as_a_path_is_not_named(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    # argparse gave the value to base_run: only candidate_run is missing, and nothing was read as an option
    err = _error(["compare", value], capsys)
    assert err == ("oloproof: error: the following arguments are required: candidate_run "
                   "(see `oloproof compare --help`)\n")


def test_another_usage_error_gets_no_clause(capsys: pytest.CaptureFixture[str]) -> None:
    err = _error(["gate", "-r1", "--release"], capsys)
    assert err.startswith("oloproof: error: argument --release: expected one argument")
    assert "was read as an option" not in err


def test_the_first_argument_read_as_an_option_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    err = _error(["compare", "-v1", "-v2"], capsys)
    assert err.startswith("oloproof: error: the following arguments are required: base_run, candidate_run; -v1 was "
                          "read as an option: a path that starts with '-' is given as ./-v1 or after --")
