"""What a worker asks of the kernel and of its orphan guard, checked in a worker-like process of its own.

The end-to-end test (``test_isolation_orphan_gil.py``) kills a run and sees its worker go; it cannot tell SIGKILL
from SIGTERM (both end a process holding the GIL), nor see the guard's own check, which only matters when the run's
process dies while the worker's interpreter is still starting (before it could ask the kernel anything).
"""

from __future__ import annotations

import multiprocessing
import signal
import subprocess
import sys

import pytest

#: Asks for the parent-death signal as a worker does, then reads back which signal the kernel will send.
ASK_AND_READ = """
import ctypes
from oloproof_nb._run.isolation import _die_with_parent
_die_with_parent()
sig = ctypes.c_int(-1)
ctypes.CDLL(None, use_errno=True).prctl(2, ctypes.byref(sig), 0, 0, 0)  # 2: PR_GET_PDEATHSIG
print(sig.value)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal is Linux's")
def test_a_worker_asks_the_kernel_for_sigkill_which_no_handler_of_the_system_can_catch() -> None:
    # SIGTERM would end a worker holding the GIL too, unless the system installed a handler for it (a server's
    # graceful shutdown): the handler's Python code waits for the GIL, and the worker outlives the run
    out = subprocess.run([sys.executable, "-c", ASK_AND_READ], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == int(signal.SIGKILL)


@pytest.mark.skipif(sys.platform == "win32", reason="isolation: process passes the pipe by its number (POSIX)")
def test_a_worker_whose_run_died_while_it_started_ends_on_its_own() -> None:
    # the run's process (a pid now gone) died before the worker could ask the kernel; the worker's parent is then
    # another process (here: this one), and the guard must compare with the run's pid, not the parent it finds
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    ours, theirs = multiprocessing.Pipe()
    code = f"from oloproof_nb._run.isolation import _worker_entry; _worker_entry({theirs.fileno()}, {gone.pid})"
    proc = subprocess.Popen([sys.executable, "-c", code], pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
    theirs.close()
    try:
        # it never hears from the run (this end stays open): only its guard can end it, with exit code 1
        assert proc.wait(timeout=30) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        ours.close()
