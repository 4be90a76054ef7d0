"""README claims on ``oloproof receipt`` as a completion hook, with a validator that hangs or crashes.

A hook runner ends a hook that outlasts its own timeout and takes that as not blocking, so the README says how long
the hook's validator may run (60 s, which a contract file cannot change) and what a hang and a crash give.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from oloproof_nb._run import observe
from oloproof_nb.cli import main

PY = sys.executable


def contract(folder: Path, command: list[str]) -> Path:
    """A fresh report and a contract whose validator is ``command``."""
    started = datetime.now(timezone.utc) - timedelta(minutes=5)
    (folder / "report.json").write_text('{"ticket": "t-001", "action": "close"}', encoding="utf-8")
    path = folder / "contract.json"
    path.write_text(json.dumps({"artifact_id": "report-t-001", "locator": "report.json",
                                "run_started_at": started.isoformat(), "validator": {"command": command}}),
                    encoding="utf-8")
    return path


def test_the_hooks_validator_may_run_60_s_and_a_hang_is_unverified_exit_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    waited: list[float] = []

    def times_out(proc: subprocess.Popen[bytes], timeout_s: float) -> None:  # the wait, without waiting 60 s
        waited.append(timeout_s)
        raise subprocess.TimeoutExpired(proc.args, timeout_s)

    monkeypatch.setattr(observe, "_exited", times_out)
    code = main(["receipt", "--json", str(contract(tmp_path, [PY, "-c", "import time; time.sleep(600)"]))])
    out, err = capsys.readouterr()
    assert (code, waited) == (2, [60.0])
    receipt = json.loads(out)["receipt"]
    program = Path(PY).name
    assert (receipt["status"], receipt["reason"]) == (
        "unverified", f"unverified: validator command ({program}) timed out after 60s")
    assert err == f"oloproof: unverified: validator command ({program}) timed out after 60s\n"


@pytest.mark.parametrize(("script", "status"), [
    ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "unverified"),  # a crash: no exit code
    ("raise RuntimeError('a bug in the validator')", "validator_failed"),         # a traceback: exit 1
])
def test_a_crashing_validator_never_verifies(tmp_path: Path, capsys: pytest.CaptureFixture[str], script: str,
                                             status: str) -> None:
    code = main(["receipt", "--json", str(contract(tmp_path, [PY, "-c", script]))])
    receipt: dict[str, Any] = json.loads(capsys.readouterr().out)["receipt"]
    assert (code, receipt["status"]) == (2, status)
