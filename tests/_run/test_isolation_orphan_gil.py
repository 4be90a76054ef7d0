"""A worker whose system holds the GIL never outlives a run's process killed from outside.

The worker's guard against outliving the run is a thread that looks every 0.5 s whether its parent is gone; a
thread cannot run while the system holds the GIL (a pathological regular expression, a C extension). A run killed
with SIGKILL (the OOM killer, a cancelled CI job) during such a call left its worker running for as long as the
call ran: minutes here, years for a longer input. On Linux the kernel now kills the worker with its parent.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _processes import gone_within, running
from _reliability_systems import make_case, read_log, write_suite


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal is Linux's")
def test_a_worker_holding_the_gil_dies_with_a_run_killed_from_outside(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "system.log"
    monkeypatch.setenv("RELSYS_LOG", str(log))
    root = write_suite(tmp_path / "suite", [make_case("c0", op="gil_hog")], case_timeout_s=600)
    script = (f"import oloproof_nb as op; op.run({str(root)!r}, out={str(tmp_path / 'run')!r}, progress=False, "
              "isolation='process')")
    proc = subprocess.Popen([sys.executable, "-c", script])
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while not workers:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
            workers = {int(e[2].split("-")[0]) for e in read_log(log) if e[0] == "run"}
        [worker] = workers
        time.sleep(0.2)  # into the regular expression (logged just before it starts)
        assert worker != proc.pid and running(worker)
        proc.kill()
        proc.wait(timeout=30)
        assert gone_within(worker, 5)  # it ran on (the expression takes minutes)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        for worker in workers:
            if running(worker):
                os.kill(worker, signal.SIGKILL)
