"""The command line's error lines, edges the one-line and JSON-error tests leave open: cut after escaping, and each
kind of exit 2 said once, in its own words, on both streams where ``receipt --json`` asks for it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb.cli import commands, main
from oloproof_nb.errors import MESSAGE_LIMIT

PREFIX = "oloproof: error: "
BELS = "\x07" * 5000  # one character each, four once escaped (\x07)


def test_an_unrecognized_argument_of_control_characters_is_cut_after_escaping(
        capsys: pytest.CaptureFixture[str]) -> None:
    """5,000 BEL characters: escaped they are 20,000; cut before escaping, the line held 2,000 of them, 7,949
    characters in all (README: no message exceeds 2,000). A hand count: the message is exactly MESSAGE_LIMIT."""
    with pytest.raises(SystemExit):
        main(["gate", "somewhere", "--bogus", BELS])
    err = capsys.readouterr().err
    help_ = " (see `oloproof gate --help`)\n"
    assert err.startswith(PREFIX + "unrecognized arguments: --bogus \\x07\\x07") and err.endswith("\\x07" + help_)
    assert len(err) == len(PREFIX) + MESSAGE_LIMIT + len(help_)
    assert "\x07" not in err


def test_an_os_error_naming_a_path_of_control_characters_is_cut_after_escaping(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof gate DIR/<3,000 BEL>``: ``File name too long`` names the path, 12,000 characters escaped."""
    assert main(["gate", str(tmp_path / ("\x07" * 3000))]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith(": File name too long\n") and "\x07" not in err
    assert len(err) == len(PREFIX) + MESSAGE_LIMIT + 1


def _raising(exc: BaseException) -> Any:
    def command(args: argparse.Namespace) -> int:
        raise exc
    return command


@pytest.mark.parametrize(("exc", "kind", "line"), [
    (KeyboardInterrupt(), "interrupted", "oloproof: interrupted"),
    (RuntimeError("a bug"), "internal error", "oloproof: internal error: RuntimeError: a bug (a bug in oloproof_nb; "),
])
def test_each_kind_of_exit_2_in_its_own_words(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path, exc: BaseException, kind: str, line: str) -> None:
    """Raised by the command itself (not by the verifier, which catches a Ctrl-C on its own): ``receipt --json``
    prints ``{"error": kind, ...}`` and stderr keeps each kind's own prefix; without ``--json`` stdout stays empty
    (a receipt error is JSON only when asked for)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the traceback file of the internal error
    monkeypatch.setitem(commands.COMMANDS, "receipt", _raising(exc))
    assert main(["receipt", "c.json", "--json"]) == 2
    out, err = capsys.readouterr()
    body = json.loads(out)
    assert body["error"] == kind and err.startswith(line) and err.count("\n") == 1
    assert err.rstrip("\n").endswith(body["message"])
    assert main(["receipt", "c.json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(line)


def test_a_contract_error_naming_a_path_of_control_characters_is_cut_after_escaping(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof receipt <8 folders of 200 BEL>/c.json``: the contract error names the path, cut to 2,000 when
    built but escaped after, a line of 6,490 characters before. The JSON message is the text itself (JSON escapes
    it), at most MESSAGE_LIMIT characters."""
    path = "/".join([str(tmp_path)] + ["\x07" * 200] * 8) + "/c.json"
    assert main(["receipt", path, "--json"]) == 2
    out, err = capsys.readouterr()
    body = json.loads(out)
    assert body["error"] == "contract error" and len(body["message"]) <= MESSAGE_LIMIT
    head = PREFIX + "contract error: "
    assert err.startswith(head) and err.count("\n") == 1 and "\x07" not in err
    assert len(err) - 1 - len(head) == MESSAGE_LIMIT
