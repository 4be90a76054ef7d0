"""The commands the command line tells its user to run (``next: oloproof run …`` after ``init``, ``finish it with:
oloproof run … --resume``) run as printed when pasted into a shell: a folder with a space is quoted, and one that
starts with '-' is written ``./-x``, which the parser takes for a path, not for an option."""

from __future__ import annotations

import argparse
import json
import os
import shlex
from pathlib import Path

import pytest

from oloproof_nb.cli import main
from oloproof_nb.cli.parser import build_parser
from oloproof_nb.cli.process import resume_hint


def _parsed(line: str) -> argparse.Namespace:
    """The command ``line`` (``oloproof …``) as a POSIX shell splits it and the command's parser reads it."""
    words = shlex.split(line)
    assert words[0] == "oloproof"
    return build_parser().parse_args(words[1:])


@pytest.mark.parametrize("dest", ["my suite", "-suite", "-my suite"])
def test_the_next_line_of_init_runs_the_suite_it_wrote(dest: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """It was ``next: oloproof run my suite`` (two arguments) and ``next: oloproof run -suite`` (an option)."""
    monkeypatch.chdir(tmp_path)
    assert main(["init", "--example", "stateful-agent", "--", dest]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith("next: ")
    args = _parsed(line.removeprefix("next: "))
    assert args.command == "run" and Path(args.suite).resolve() == (tmp_path / dest).resolve()


def test_the_resume_command_of_a_suite_that_starts_with_a_dash_resumes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``oloproof run -- -suite`` stopped: the line said ``finish it with: oloproof run -suite --out … --resume``,
    which the parser refused (the following arguments are required: suite)."""
    monkeypatch.chdir(tmp_path)
    run = Path("-suite") / "runs" / "-r1"  # relative, as `--out=-suite/runs/-r1` gives it
    run.mkdir(parents=True)
    (run / "manifest.json").write_text(json.dumps({}), encoding="utf-8")
    hint = resume_hint(argparse.Namespace(suite="-suite"), run)
    args = _parsed(hint.split("finish it with: ", 1)[1])
    assert args.command == "run" and args.resume
    assert os.path.samefile(args.suite, "-suite") and os.path.samefile(args.out, run)
