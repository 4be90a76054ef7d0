"""Every error of the ``oloproof`` command is one line, at most ``MESSAGE_LIMIT`` characters of message.

Two paths printed what they were given as given: argparse's ``unrecognized arguments: …`` (a line break in an
argument split the error over two lines, an escape sequence was sent to the terminal raw) and an ``OSError`` naming
a path (``oloproof gate <5,000 characters>``: ``File name too long``, a line of 5,038 characters; README "Security
and reliability": no message exceeds 2,000).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from oloproof_nb.cli import main
from oloproof_nb.errors import MESSAGE_LIMIT, cut_middle

COMMAND = [sys.executable, "-m", "oloproof_nb.cli"]
PREFIX = "oloproof: error: "
HELP = " (see `oloproof gate --help`)"


def _stderr_line(argv: list[str], cwd: Path) -> str:
    done = subprocess.run([*COMMAND, *argv], capture_output=True, text=True, timeout=120, cwd=cwd)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_an_unrecognized_argument_is_shown_escaped_on_one_line(tmp_path: Path) -> None:
    line = _stderr_line(["gate", "somewhere", "--bogus", "a\nb\x1b[8mhidden"], tmp_path)
    assert "\x1b" not in line
    assert line == PREFIX + "unrecognized arguments: --bogus a\\nb\\x1b[8mhidden" + HELP


def test_a_long_unrecognized_argument_is_cut_in_the_middle(tmp_path: Path) -> None:
    """5,000 characters given: the message keeps its head and its tail, MESSAGE_LIMIT characters in all."""
    line = _stderr_line(["gate", "somewhere", "--bogus", "z" * 5000], tmp_path)
    assert line.startswith(PREFIX + "unrecognized arguments: --bogus zzz") and line.endswith("zzz" + HELP)
    assert len(line) == len(PREFIX) + MESSAGE_LIMIT + len(HELP)  # was len(PREFIX) + 5,032 + len(HELP)


@pytest.mark.parametrize("argv", [["gate", "{long}"], ["report", "{long}", "--out", "r.html"],
                                  ["report", "somewhere", "--out", "{long}.md"]])
def test_an_os_error_naming_a_long_path_is_cut_in_the_middle(tmp_path: Path, argv: list[str]) -> None:
    """A path of 5,000 characters: ``File name too long`` (the file system allows 255 per name) names it whole."""
    long = "z" * 5000
    line = _stderr_line([a.format(long=long) for a in argv], tmp_path)
    assert line.startswith(PREFIX + "zzz")
    assert line.endswith(": File name too long") or "no such file" in line
    assert len(line) <= len(PREFIX) + MESSAGE_LIMIT


def test_in_process_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``main`` called in Python gives the same line (it is what the console script runs)."""
    assert main(["gate", str(tmp_path / ("y" * 5000))]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert len(err.rstrip("\n")) <= len(PREFIX) + MESSAGE_LIMIT
    assert err.rstrip("\n").endswith("File name too long")


def test_cut_middle_keeps_head_and_tail() -> None:
    """A hand count: 2,000 = 999 head characters + "…" + 1,000 tail characters."""
    text = "h" * 3000 + "t" * 3000
    cut = cut_middle(text)
    assert len(cut) == 2000 and cut == "h" * 999 + "…" + "t" * 1000
    assert cut_middle("short") == "short"
