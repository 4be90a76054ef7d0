"""Review F62: a stop that reaches ``oloproof run``'s run process as it starts is handled as a stop.

Round 67 passes a SIGTERM on to the run's process as the SIGTERM it was (M64), and the run's process handles it as
a Ctrl-C (``StopOnSignals`` in ``_child_run``). A stop that came in the run process's first moments (a SIGTERM or
Ctrl-C to the process group as the run started; here the stop the command passes on, at once) came before
``_child_run`` handled it: a Python traceback on stderr (``Process oloproof-run: Traceback … Stopped: SIGTERM``),
or an ``Exception ignored in: … Random.seed`` from the fork's own hooks, the stop lost and the run finished with its
gate's exit code (1, where the SIGTERM asks for 2): 4 of 6 tries. The stops are held back until each process
handles them (8 of 8 clean).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _reliability_systems import make_case, write_suite

from oloproof_nb.cli import main

PASSABLE = {"confidence": 0.95, "criteria": {"answer_matches": 0.3}}


def test_a_stop_as_the_run_s_process_starts_is_a_stop_never_a_traceback(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         capfd: pytest.CaptureFixture[str]) -> None:
    import multiprocessing.connection

    from oloproof_nb.cli import process
    from oloproof_nb.cli.process import Stopped

    root = write_suite(tmp_path / "suite", [make_case("c0")], release=PASSABLE)
    monkeypatch.setattr(process, "_PASS_ON_S", 0.0)  # passed on at once: the run's process is just starting
    real, command = multiprocessing.connection.wait, os.getpid()
    left: list[BaseException] = []

    def wait(*args: object, **kwargs: object) -> object:
        if left and os.getpid() == command:  # the command's first wait: a SIGTERM it got (not in the child)
            raise left.pop(0)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(multiprocessing.connection, "wait", wait)
    for attempt in range(3):  # the moment the stop lands varies: before, 4 of 6 tries went wrong
        left.append(Stopped("SIGTERM"))
        code = main(["run", str(root), "--out", str(tmp_path / f"run{attempt}"), "--quiet"])
        out, err = capfd.readouterr()  # the run's process writes to the descriptors
        assert code == 2, (code, out, err)  # stopped: never the gate's 0 or 1
        assert "Traceback" not in err and "Exception ignored" not in err, err
        assert err.startswith("oloproof: interrupted by SIGTERM"), err
