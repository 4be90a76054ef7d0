"""Real Inspect AI logs for the tests: ``tests/_inspect_task.py`` run in a child process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TASK = Path(__file__).resolve().parent / "_inspect_task.py"


def write_logs(root: Path, *args: str, log_dir: Path | None = None) -> None:
    """Run ``_inspect_task.py ARGS`` (its mode and folders) with Inspect's data under ``root``; ``log_dir`` is
    ``INSPECT_LOG_DIR`` where the task needs one. Fails the test with the script's last lines when it fails."""
    env = {**os.environ, "INSPECT_DISPLAY": "none", "XDG_DATA_HOME": str(root / "xdg"), "NO_PROXY": "*"}
    if log_dir is not None:
        env["INSPECT_LOG_DIR"] = str(log_dir)
    done = subprocess.run([sys.executable, str(TASK), *args], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
