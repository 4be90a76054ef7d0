"""``oloproof receipt``'s stderr line for a receipt that is not verified is one line of at most 2,000 characters
after ``oloproof: `` (README: no message exceeds 2,000), whatever the contract names."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

PY = sys.executable


def test_a_validator_not_run_under_an_ignored_sigchld_says_one_cut_line(tmp_path: Path) -> None:
    """A hook runner that ignores SIGCHLD hands that on to the hook, whose command validator is then not run
    (``unverified``), and the reason names the program as the contract wrote it: 100,000 characters of it made a
    stderr line of 100,124 characters."""
    program = "x" * 100_000
    (tmp_path / "report.json").write_text("{}", encoding="utf-8")
    contract = tmp_path / "contract.json"
    contract.write_text(json.dumps({"artifact_id": "report", "locator": "report.json",
                                    "run_started_at": "2026-07-25T14:00:00Z", "validator": {"command": [program]}}),
                        encoding="utf-8")

    def ignore_sigchld() -> None:
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)

    done = subprocess.run([PY, "-m", "oloproof_nb.cli", "receipt", str(contract)], capture_output=True, text=True,
                          check=False, preexec_fn=ignore_sigchld)
    reason = (f"unverified: validator command ({program}) not run: this process ignores SIGCHLD, so a command's "
              "exit status cannot be read")
    assert done.returncode == 2
    assert json.loads(done.stdout)["reason"] == reason  # the receipt itself keeps its reason whole
    # cut in the middle: the first 999 characters, "…", the last 1,000
    assert done.stderr == "oloproof: " + reason[:999] + "…" + reason[-1000:] + "\n"
