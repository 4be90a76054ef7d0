"""A path that starts with '-' given where a command wants a path (``oloproof gate -r1``): argparse sets it aside as
an unknown option and says only that the path is missing; the line says why and how to give it."""

from __future__ import annotations

import json

import pytest

from oloproof_nb.cli import main

HINT = "was read as an option: a path that starts with '-' is given as ./{0} or after --"


@pytest.mark.parametrize(("argv", "missing", "taken"), [
    (["gate", "-r1"], "run_dir", "-r1"),
    (["gate", "--release=x.yaml", "-r1"], "run_dir", "-r1"),
    (["compare", "runs/v1", "-v2"], "candidate_run", "-v2"),
    (["report", "--out", "r.html", "-r1"], "run_dir", "-r1"),
    (["run", "-suite"], "suite", "-suite"),
])
def test_a_path_read_as_an_option_is_named_with_how_to_give_it(argv: list[str], missing: str, taken: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """It was ``the following arguments are required: run_dir``, of a command that had been given one."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    command = argv[0]
    assert capsys.readouterr().err == (f"oloproof: error: the following arguments are required: {missing}; {taken} "
                                       f"{HINT.format(taken)} (see `oloproof {command} --help`)\n")


def test_the_hint_is_in_the_json_error_too_and_only_where_it_applies(capsys: pytest.CaptureFixture[str]) -> None:
    """``receipt -c.json --json``: the usage error object says it too. Nothing is added where no argument was read
    as an option (nothing given, a negative number, a long option, the command's name missing)."""
    with pytest.raises(SystemExit):
        main(["receipt", "-c.json", "--json"])
    out, err = capsys.readouterr()
    assert json.loads(out)["message"] == ("the following arguments are required: contract; -c.json "
                                          f"{HINT.format('-c.json')} (see `oloproof receipt --help`)")
    assert err.count("\n") == 1
    for argv in (["gate"], ["gate", "--bogus"], ["compare", "-1"], ["-x"]):
        with pytest.raises(SystemExit):
            main(argv)
        assert "was read as an option" not in capsys.readouterr().err
