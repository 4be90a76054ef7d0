"""What a live run offers evaluators that need the system (replays, outcome observation)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["Services", "CaseTimeout", "call_with_timeout"]

T = TypeVar("T")


class CaseTimeout(Exception):
    """A call into the system took longer than ``case_timeout_s``."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"timeout: exceeded case_timeout_s={seconds:g}")
        self.seconds = seconds


def call_with_timeout(fn: Callable[[], T], timeout_s: float | None) -> T:
    """Run ``fn()`` in a daemon thread and wait at most ``timeout_s`` seconds.

    An abandoned call keeps running in its daemon thread but never keeps the
    process alive, and its result is dropped. Exceptions propagate.
    """
    if timeout_s is None:
        return fn()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="oloproof-call", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise CaseTimeout(timeout_s)
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


@dataclass
class Services:
    """Run-level context handed to ``system``-scope evaluators while a case is live."""

    run_id: str
    system_version: str | None
    timeout_s: float | None
    suite_root: Path | None
    evaluators: list[Any]
    case_started_at: datetime
    append_replay: Callable[[dict[str, Any]], None] = lambda record: None
    validators: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def call(self, fn: Callable[[], T]) -> T:
        """Call into the system with the run's per-call timeout."""
        return call_with_timeout(fn, self.timeout_s)
