"""Whether a process the tests started (a worker, a validator's child) still runs, and waiting for it to end."""

from __future__ import annotations

import os
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
