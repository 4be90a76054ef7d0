"""A run's process that ``oloproof run`` kills after a SIGTERM keeps the SIGTERM in its stop.

The signal a stop came by is kept in ``started.jsonl``'s stop line when the run's process notes it, so that
the resume's ``abrupt_ends`` says ``stopped by signal SIGTERM``. When the command kills that process before it noted
the stop (a Ctrl-C after the SIGTERM, or no stop within the grace time), the command notes the stop itself
(``note_stop``): it wrote no signal, so the command said ``interrupted by SIGTERM`` and the resume ``stopped by a
Ctrl-C or a signal to the run's process group``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _reliability_systems import make_case, write_suite

from oloproof_nb.cli import main

PASSABLE = {"confidence": 0.95, "criteria": {"answer_matches": 0.3}}


def test_a_run_killed_after_a_sigterm_keeps_the_sigterm_in_its_stop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import multiprocessing.connection

    from oloproof_nb.cli.process import Stopped

    root = write_suite(tmp_path / "suite", [make_case(f"c{i}") for i in range(2)], release=PASSABLE)
    out = tmp_path / "run"
    monkeypatch.setenv("RELSYS_SLEEP", "30")  # c0 is in flight when the stops come (the run's process is killed)
    real, command = multiprocessing.connection.wait, os.getpid()
    stops: list[BaseException] = [Stopped("SIGTERM"), KeyboardInterrupt()]  # a SIGTERM, then a Ctrl-C: kill it

    def wait(*args: object, **kwargs: object) -> object:
        started = out / "started.jsonl"
        if stops and os.getpid() == command and started.is_file() and b'"case"' in started.read_bytes():
            raise stops.pop(0)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(multiprocessing.connection, "wait", wait)
    assert main(["run", str(root), "--out", str(out), "--quiet"]) == 2
    assert capsys.readouterr().err.startswith("oloproof: interrupted by SIGTERM; the run is in ")
    last = json.loads((out / "started.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert last["stopped"] is True and last.get("signal") == "SIGTERM"  # was no "signal"
    monkeypatch.setenv("RELSYS_SLEEP", "0")
    monkeypatch.setattr(multiprocessing.connection, "wait", real)
    assert main(["run", str(root), "--out", str(out), "--quiet", "--resume"]) in (0, 1)  # a gate, either way
    ends = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["abrupt_ends"]
    assert ends == [{"how": "stopped by signal SIGTERM", "rerun": [["c0", 1]]}]  # was "stopped by a Ctrl-C or …"
