"""Whether a process the tests started (a worker, a validator's child) still runs, and waiting for it to end."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path


def running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie nobody has reaped yet has ended)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # it answered the signal: where /proc says nothing, it runs
    return state != "Z"


def gone_within(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` has ended (or is a zombie) within ``seconds``."""
    deadline = time.monotonic() + seconds
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not running(pid)


def without_root_powers() -> list[str] | None:
    """A prefix that runs a command bound by file modes (as root, in a user namespace of its own: ``unshare -U``);
    ``None`` when there is none."""
    if not hasattr(os, "geteuid"):
        return None
    if os.geteuid() != 0:
        return []
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-U", "true"], capture_output=True).returncode != 0:
        return None
    return [unshare, "-U"]


def bound_by_modes(argv: list[str], folder: Path, mode: int) -> subprocess.CompletedProcess[str]:
    """``argv`` run bound by file modes (:func:`without_root_powers`) while ``folder`` has ``mode``, its output
    captured as text; the folder gets mode 0o755 back after. Skips the test where nothing can run so bound."""
    import pytest

    prefix = without_root_powers()
    if prefix is None:
        pytest.skip("no way to run bound by file modes here (root without unshare -U, or Windows)")
    folder.chmod(mode)
    try:
        return subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=120)
    finally:
        folder.chmod(0o755)
