"""Real Inspect AI logs for the tests: ``tests/_inspect_task.py`` run in a child process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from _shared import made_once

TESTS = Path(__file__).resolve().parent
TASK = TESTS / "_inspect_task.py"


def run_inspect(args: list[str], data: Path, log_dir: Path | None = None) -> None:
    """Run ``python ARGS`` (a script and its arguments, or ``-c SOURCE ...``) that makes Inspect AI logs, in a child
    process with Inspect's data under ``data / "xdg"``, no display and the tests' folder importable; ``log_dir`` is
    ``INSPECT_LOG_DIR`` where the script needs one. Fails the test with the script's last lines when it fails."""
    env = {**os.environ, "INSPECT_DISPLAY": "none", "XDG_DATA_HOME": str(data / "xdg"), "NO_PROXY": "*",
           # the tests' folder, as pytest's pythonpath gives it: a test module run as the script imports its helpers
           "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))}
    if log_dir is not None:
        env["INSPECT_LOG_DIR"] = str(log_dir)
    done = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def write_logs(root: Path, *args: str, log_dir: Path | None = None) -> None:
    """Run ``_inspect_task.py ARGS`` (its mode and folders) with Inspect's data under ``root`` (:func:`run_inspect`)."""
    run_inspect([str(TASK), *args], root, log_dir)


def made(folder: Path) -> Path:
    """``folder``, or a skip when the installed inspect-ai cannot write the log it would hold (an API it lacks)."""
    if not folder.is_dir():
        pytest.skip(f"this inspect-ai release cannot write the {folder.name} log")
    return folder


def read_by_hand(folder: Path) -> tuple[list[str], object]:
    """The run of ``folder`` (:func:`made`: skipped when this inspect-ai cannot write it) and the warnings reading it
    gave that say a score was edited or added by hand."""
    import warnings

    import oloproof_nb as op

    made(folder)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = op.from_inspect(folder)
    return [str(w.message) for w in caught if "by hand" in str(w.message)], run


def refund_desk(root: Path) -> None:
    """The refund desk's log (``_inspect_task.py`` with no mode): ``ROOT/logs`` (its ``INSPECT_LOG_DIR``) holds the
    ``.eval``, ``ROOT/json/refund_desk.json`` the same log as JSON."""
    write_logs(root, str(root / "logs"), str(root / "json"), log_dir=root / "logs")


def of_mode(mode: str) -> Callable[[Path], None]:
    """What makes the logs of ``_inspect_task.py MODE ROOT/logs`` in ``ROOT`` (for :func:`shared_logs`)."""
    return lambda root: write_logs(root, mode, str(root / "logs"))


@contextmanager
def shared_logs(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Iterator[Path]:
    """The folder ``build(folder)`` fills with logs, made once per test session whichever xdist worker asks first
    (``tests/_shared.py``); a module-scoped fixture yields inside it. Read only: a test that edits a log edits a
    copy under its own ``tmp_path`` (one that changed the folder fails the module's teardown)."""
    with made_once(factory, f"inspect-{name}", build, leave_out=("xdg",)) as root:
        yield root
