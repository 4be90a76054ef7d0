"""``isolation: process`` from a process whose standard output and error are closed (a daemon, ``>&- 2>&-``).

The pipe to a worker took the free numbers 1 and 2: the worker's end was its standard error, so a line the
system wrote there (a debugging print, a C library's warning) was read by the run as the start of a message, and
the run waited for good for the rest of it (no case timeout can fire while the run's process is blocked reading).
Both ends of the pipe now sit above 2, and the worker puts ``/dev/null`` on its closed standard descriptors.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _reliability_systems import cli_env, make_case, write_suite

#: Closes descriptors 1 and 2, runs the suite with process isolation, writes the statuses to a file (stopped,
#: with the stack it hung in, after 30 s).
SCRIPT = """
import faulthandler, json, os, sys
import oloproof_nb as op
root, out, result = sys.argv[1:]
with open(result, "w", encoding="utf-8") as fh:
    faulthandler.dump_traceback_later(30, file=fh, exit=True)
    os.close(1)
    os.close(2)
    run = op.run(root, out=out, progress=False, isolation="process")
    faulthandler.cancel_dump_traceback_later()
    fh.write(json.dumps(list(run.cases["status"])))
"""


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="isolation: process passes the pipe by its number (POSIX)")
def test_a_system_printing_to_its_stderr_never_reaches_the_pipe_when_the_runs_is_closed(tmp_path: Path) -> None:
    cases = [make_case("c0"), make_case("c1", op="print_std"), make_case("c2")]
    root = write_suite(tmp_path / "suite", cases)
    result = tmp_path / "result.txt"
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(root), str(tmp_path / "run"), str(result)],
                          env=cli_env(), timeout=120, stdin=subprocess.DEVNULL)
    text = result.read_text(encoding="utf-8")
    assert proc.returncode == 0, text  # it hung reading the system's line as a message (30 s, then stopped)
    assert json.loads(text) == ["completed", "completed", "completed"]
