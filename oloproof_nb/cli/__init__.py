"""The ``oloproof`` command: parse, call the library, print; exit 2 with one line on any user error.

Exit codes: 0 PASS, 1 BLOCK, 2 error (``oloproof receipt``: 0 verified, 2
anything else, a Ctrl-C, SIGTERM or SIGHUP included; ``oloproof compare``: 0
NO_REGRESSION, 1 REGRESSION or INSUFFICIENT_EVIDENCE); a Ctrl-C is exit 2 too. **Exit 0 means the run finished,
the gate was computed on it and said PASS — nothing else.** To make that true
whatever the system under test does, ``oloproof run`` never imports the
system: a child process loads the suite and runs it into the run directory,
and this process (which decides the exit code) loads the finished run from
disk and computes the gate. What the system does can end or hang only the
child: ``sys.exit`` or ``KeyboardInterrupt`` at import or in its constructor is
exit 2 naming ``oloproof.yaml: system``; any ``BaseException`` inside a case makes
that case ``error`` and the gate decides; ``os._exit``, a segfault or a kill
during the run is exit 2 with the exact resume command, and that resume records
the case runs in flight ``error`` when the system ended the process (an exit, a
fatal signal) rather than giving them another try; threads it leaves
behind keep nothing waiting (the child ends with ``os._exit``).
"""

from __future__ import annotations

from .dispatch import main

__all__ = ["main"]
