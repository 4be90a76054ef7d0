"""Expensive test data made once per test session, shared by pytest-xdist's workers.

A module-scoped fixture is made once per worker that runs one of its module's tests: on CI's two workers, the
same Inspect AI logs or executed notebooks were made twice. :func:`made_once` makes the folder once per session:
the first worker to ask makes it while the others wait on a lock, then all read it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

try:
    import fcntl
except ImportError:  # Windows: each worker makes its own (no lock to share one by)
    fcntl = None  # type: ignore[assignment]


def fingerprint(root: Path, leave_out: tuple[str, ...] = ()) -> str:
    """The digest of every file and folder under ``root`` (its path and bytes), the top-level names ``leave_out``
    left out."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.relative_to(root).parts[0] not in leave_out):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        if path.is_file():
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


@contextmanager
def made_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None],
              leave_out: tuple[str, ...] = ()) -> Iterator[Path]:
    """The folder ``build(folder)`` fills, made once per test session (see the module); a module-scoped fixture
    yields inside it. The tests only read it: one that changed, added or removed a file there (the top-level names
    ``leave_out`` aside: what the build's own tools keep) fails the module's teardown."""
    if fcntl is None:
        root = factory.mktemp(name)
        build(root)
        yield root
        return
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the session's own folder (xdist makes each worker's inside the controller's)
    root, done = base / f"shared-{name}", base / f"shared-{name}.done"
    with open(base / f"shared-{name}.lock", "a", encoding="utf-8") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(root, ignore_errors=True)  # what a worker that failed to make it left
            root.mkdir()
            build(root)
            done.write_text(fingerprint(root, leave_out), encoding="utf-8")
    yield root
    assert fingerprint(root, leave_out) == done.read_text(encoding="utf-8"), f"a test changed the shared {root}"


def times_put_back(path: Path, loaded: os.stat_result) -> os.stat_result:
    """Put ``path``'s access and modification times back to ``loaded``'s (a file rewritten in place by a tool that
    restores them), again until its status change time has moved off ``loaded``'s (a coarse clock's tick keeps it
    there at first); the stat after."""
    for _ in range(1000):
        os.utime(path, ns=(loaded.st_atime_ns, loaded.st_mtime_ns))
        now = os.stat(path)
        if now.st_ctime_ns != loaded.st_ctime_ns:
            break
        time.sleep(0.005)
    return now


def outside_desk(answer: str) -> str:
    """The code of a desk module kept outside the suite folder (an agent installed elsewhere) that answers
    ``answer``, saves its own file (an editor adding a comment) on a case whose input says ``save`` and raises on one
    that says ``raise`` (its instance is then replaced)."""
    return f'''
import pathlib

HERE = pathlib.Path(__file__)


class Desk:
    version = "desk-1"

    def run(self, input):
        if input.get("save"):  # an editor saving the file (a comment) while the run goes
            HERE.write_text(HERE.read_text() + "# saved\\n")
        if input.get("raise"):
            raise RuntimeError("the desk fell over")
        return {{"steps": [], "answer": "{answer}"}}
'''
