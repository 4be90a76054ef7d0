"""Every exit 2 of ``oloproof receipt --json`` prints one JSON object on stdout.

Before, an argument error (a missing contract, an unknown flag, a value given to ``--json``) printed argparse's
line on stderr and nothing on stdout, and so did an error the command's own handler did not catch: a hook that
reads stdout as JSON got nothing to parse. The command is called in this process (``cli.main``, argparse's exit
taken as the process's); an error the command's own handler does not catch runs the real command in a process of
its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _reliability_systems import cli_env, main_in_process


def _one_object(out: str) -> dict[str, Any]:
    lines = out.splitlines()
    assert len(lines) == 1, out
    body = json.loads(lines[0])
    assert isinstance(body, dict) and set(body) == {"error", "message"}
    return body


@pytest.mark.parametrize(("args", "said"), [
    (["receipt", "--json"], "the following arguments are required: contract"),  # missing required argument
    (["receipt", "c.json", "--json", "--bogus"], "unrecognized arguments: --bogus"),  # unknown flag
    (["receipt", "c.json", "--json=yes"], "argument --json: ignored explicit argument 'yes'"),  # a bad value
    (["receipt", "--json", "a.json", "b.json"], "unrecognized arguments: b.json"),  # one argument too many
    (["receipt", "--js"], "the following arguments are required: contract"),  # argparse's abbreviation of --json
    (["--bogus", "receipt", "c.json", "--json"], "unrecognized arguments: --bogus"),  # before the command
])
def test_an_argument_error_is_one_json_object_on_stdout(args: list[str], said: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    done = main_in_process(capsys, *args)
    assert done.returncode == 2
    body = _one_object(done.stdout)
    assert body == {"error": "usage error", "message": f"{said} (see `oloproof receipt --help`)"}
    # stderr is unchanged: the one line it always said
    assert done.stderr == f"oloproof: error: {said} (see `oloproof receipt --help`)\n"


@pytest.mark.parametrize("args", [["receipt"], ["receipt", "a.json", "--bogus"], ["receipt", "--", "--json"],
                                  ["run", "--json"]])
def test_without_json_stdout_stays_empty_on_an_argument_error(args: list[str],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """No --json (or a contract file named --json after ``--``, or a command that takes no --json): nothing on
    stdout (``gate`` and ``compare`` take it: ``tests/cli/test_output_json.py``)."""
    done = main_in_process(capsys, *args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("oloproof: error: ") and done.stderr.count("\n") == 1


@pytest.mark.parametrize(("raised", "kind", "said"), [
    ("OSError(5, 'Input/output error', 'c.json')", "error", "c.json: Input/output error"),
    ("RuntimeError('a bug in verify')", "internal error", "RuntimeError: a bug in verify"),
    ("MemoryError()", "error", "out of memory"),
    ("KeyboardInterrupt()", "interrupted", "stopped by SIGINT"),
])
def test_an_error_the_command_does_not_catch_itself_is_json_too(tmp_path: Path, raised: str, kind: str,
                                                                 said: str) -> None:
    """The command's verifier raises, in a real process: the JSON object names the kind and says the line's text."""
    code = ("import sys\nfrom oloproof_nb._run import observe\n"
            f"def boom(path):\n    raise {raised}\n"
            "observe.verify_contract_file = boom\n"
            "from oloproof_nb.cli import main\nsys.exit(main(['receipt', 'c.json', '--json']))\n")
    done = subprocess.run([sys.executable, "-c", code], env=cli_env(TMPDIR=str(tmp_path)), cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    body = _one_object(done.stdout)
    assert body["error"] == kind and said in body["message"], body
    assert done.stderr.count("\n") == 1 and said in done.stderr
    if kind == "internal error":  # the traceback's file is named in both, and holds it
        saved = Path(body["message"].split("the traceback is in ")[1].rstrip(")"))
        assert saved.parent == tmp_path and "a bug in verify" in saved.read_text(encoding="utf-8")


def test_a_contract_error_is_still_its_one_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The documented shape is kept: a missing contract file is one ``contract error`` object, nothing else."""
    done = main_in_process(capsys, "receipt", str(tmp_path / "none.json"), "--json")
    assert done.returncode == 2
    assert _one_object(done.stdout)["error"] == "contract error"
