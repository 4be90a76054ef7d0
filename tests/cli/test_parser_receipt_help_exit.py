"""``oloproof receipt`` is a completion hook whose exit 0 means "verified": its ``--help`` printed the help on stdout
and exited 0, so a hook written ``oloproof receipt CONTRACT.json -h`` read as a verified outcome on every stop. The
help goes to stderr (the hook runner shows it) and exits 2, as every outcome not verified; with ``--json`` stdout
holds the one usage error object every exit 2 prints. The other commands' help is unchanged."""

from __future__ import annotations

import json

import pytest

from oloproof_nb.cli import main


@pytest.mark.parametrize("argv", [
    ["receipt", "-h"], ["receipt", "--help"], ["receipt", "CONTRACT.json", "-h"], ["receipt", "--he", "CONTRACT.json"],
    ["--help", "receipt", "CONTRACT.json"], ["-h", "receipt"],
])
def test_a_receipt_asked_for_its_help_exits_2_with_the_help_on_stderr(argv: list[str],
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: oloproof")


def test_a_version_given_before_receipt_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version", "receipt", "CONTRACT.json"])
    assert stop.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("oloproof_nb ")


def test_with_json_stdout_holds_the_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["receipt", "CONTRACT.json", "--json", "--help"])
    assert stop.value.code == 2
    out, err = capsys.readouterr()
    assert json.loads(out) == {"error": "usage error", "message": "the help was printed on stderr and nothing was "
                                                                  "verified: exit 2, as for every outcome not verified"}
    assert "LAST ARGUMENT" in err


def test_with_json_a_version_given_before_receipt_is_named_in_the_usage_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof --version receipt c.json --json`` said "the help was printed", where the version was."""
    from oloproof_nb import __version__

    with pytest.raises(SystemExit) as stop:
        main(["--version", "receipt", "CONTRACT.json", "--json"])
    assert stop.value.code == 2
    out, err = capsys.readouterr()
    assert json.loads(out) == {"error": "usage error", "message": f"oloproof_nb {__version__} (the version, printed "
                                                                  "on stderr); nothing was verified: exit 2, as for "
                                                                  "every outcome not verified"}
    assert err == f"oloproof_nb {__version__}\n"


@pytest.mark.parametrize("argv", [["gate", "--help"], ["--help"], ["run", "-h"], ["--version"]])
def test_the_other_commands_help_is_on_stdout_with_exit_0(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 0
    out, err = capsys.readouterr()
    assert out and err == ""
