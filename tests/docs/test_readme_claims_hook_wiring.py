"""README section 8: the Claude Code settings that wire ``oloproof receipt`` as a ``Stop`` hook, run as written.

Claude Code starts a hook's command in the agent's current folder, which the agent's own ``cd`` moves. The settings
name the contract from the project's folder (``$CLAUDE_PROJECT_DIR``), so a contract the agent wrote in a folder of
its own is never the one read, and give the hook more time than its validator's 60 s.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._config.contracts import DEFAULT_OBSERVE_TIMEOUT_S
from oloproof_nb._run.observe import DEFAULT_VALIDATOR_TIMEOUT_S
from oloproof_nb.cli import main

README = Path(__file__).resolve().parent.parent.parent / "README.md"
#: The installed console script (``pip install -e .`` makes it next to the interpreter), as a hook runner finds it.
SCRIPT = Path(sys.executable).with_name("oloproof")


def stop_hook(text: str) -> dict[str, Any]:
    """The one command hook of the ``Stop`` event in the settings ``text`` holds."""
    settings = json.loads(text)
    (entry,) = settings["hooks"]["Stop"]
    (hook,) = entry["hooks"]
    return dict(hook)


def readme_hook() -> dict[str, Any]:
    blocks = re.findall(r"```json\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    (settings,) = [block for block in blocks if '"Stop"' in block]
    return stop_hook(settings)


def project(root: Path) -> Path:
    """A project whose task promises ``out/report.json`` (pinned to ``good``), and a folder ``sub/`` where the
    agent wrote a contract of its own: any file, fresh or not."""
    (root / ".oloproof").mkdir(parents=True)
    (root / "out").mkdir()
    started = datetime.now(timezone.utc) - timedelta(minutes=5)
    (root / ".oloproof" / "CONTRACT.json").write_text(json.dumps({
        "artifact_id": "report-t-001", "locator": "../out/report.json", "run_started_at": started.isoformat(),
        "expected_sha256": hashlib.sha256(b"good").hexdigest()}), encoding="utf-8")
    (root / "sub" / ".oloproof").mkdir(parents=True)
    (root / "sub" / "notes.txt").write_text("nothing promised", encoding="utf-8")
    (root / "sub" / ".oloproof" / "CONTRACT.json").write_text(json.dumps({
        "artifact_id": "report-t-001", "locator": "../notes.txt", "run_started_at": "2000-01-01T00:00:00Z",
        "require_fresh": False}), encoding="utf-8")
    return root


def run_hook(command: str, cwd: Path, root: Path) -> subprocess.CompletedProcess[str]:
    """The command as Claude Code runs it: through a shell, in the agent's current folder, with the project's."""
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(root),
           "PATH": str(SCRIPT.parent) + os.pathsep + os.environ.get("PATH", "")}
    return subprocess.run(["sh", "-c", command], cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, check=False, timeout=120)


def test_the_readme_hook_reads_the_projects_contract_wherever_the_agent_went(tmp_path: Path) -> None:
    root = project(tmp_path / "proj")
    command = readme_hook()["command"]
    for cwd in (root, root / "sub"):  # the agent's cd into sub/ must not choose the contract
        done = run_hook(command, cwd, root)
        assert (done.returncode, done.stderr) == (2, "oloproof: missing: no artifact observed\n"), cwd
    (root / "out" / "report.json").write_bytes(b"good")
    done = run_hook(command, root / "sub", root)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "verified"


def test_the_readme_hook_outlasts_its_read_and_its_validator() -> None:
    """The README: a validator may run 60 s, and a runner that ends the hook first takes it as not blocking. The
    validator starts only once the artifact was read, which may take the contract's ``observe_timeout_s``: a read
    that ends just inside its 60 s and a validator stopped at its 60 s came to more than the 120 s once suggested,
    with the command's start-up on top."""
    timeout = readme_hook()["timeout"]
    assert isinstance(timeout, int)
    assert timeout >= DEFAULT_OBSERVE_TIMEOUT_S + DEFAULT_VALIDATOR_TIMEOUT_S + 10  # start-up, the kill of the group


def test_the_help_wires_the_hook_as_the_readme_does(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["receipt", "--help"])
    text = capsys.readouterr().err  # a completion hook's help is on stderr (its stdout holds a receipt)
    settings = text[text.index('  {"hooks"'):]
    assert stop_hook(settings) == readme_hook()
