"""``oloproof run`` stopped by a SIGTERM (or SIGHUP) it got names the signal, as other commands do.

The command stops the run as on a Ctrl-C (it passes a Ctrl-C on to the run's process after 1 s), exits 2 and
says how to resume; its line read ``oloproof: interrupted; …`` whatever stopped it, where ``gate``, ``report`` and
``compare`` say ``oloproof: interrupted by SIGTERM``. A CI job cancelled by its timeout told no Ctrl-C from it.
The journal keeps the stop (``started.jsonl``), and ``--resume`` runs the case run in flight again.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path

import pytest
from _reliability_systems import make_case, write_suite

import oloproof_nb as op
from oloproof_nb._run.runner import stopped_how
from oloproof_nb.cli import main

PASSABLE = {"confidence": 0.95, "criteria": {"answer_matches": 0.3}}


def _send_once_a_case_runs(out: Path, name: str, done: threading.Event) -> threading.Thread:
    """A thread that sends ``name`` to this process once the run has a case run in flight (``started.jsonl``)."""

    def send() -> None:
        deadline = time.monotonic() + 60
        while not done.is_set() and time.monotonic() < deadline:
            started = out / "started.jsonl"
            if started.is_file() and b'"case"' in started.read_bytes():
                signal.raise_signal(getattr(signal, name))
                return
            time.sleep(0.02)

    return threading.Thread(target=send, daemon=True)


@pytest.mark.parametrize(("name", "int_ignored"), [("SIGTERM", False), ("SIGHUP", False), ("SIGTERM", True)])
def test_a_run_stopped_by_sigterm_names_it_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str], name: str,
                                                       int_ignored: bool) -> None:
    """``int_ignored``: the command started with SIGINT ignored, as a script's background job (``oloproof run … &``)
    is, and its run's process with it: the stop passed on as a SIGINT was ignored, the run went on for the 5 s grace
    and, 4 cases of 1 s, finished: exit 0 where the SIGTERM asked for 2. It is passed on as the SIGTERM it was."""
    # a signal that came after main returned (it cannot: the run sleeps 1 s a case) must not end pytest
    before = {sig: signal.signal(sig, lambda *a: None) for sig in (signal.SIGTERM, signal.SIGHUP)}
    if int_ignored:
        before[signal.SIGINT] = signal.signal(signal.SIGINT, signal.SIG_IGN)
    root = write_suite(tmp_path / "suite", [make_case(f"c{i}") for i in range(4)], release=PASSABLE)
    out = tmp_path / "run"
    monkeypatch.setenv("RELSYS_SLEEP", "1")
    done = threading.Event()
    sender = _send_once_a_case_runs(out, name, done)
    try:
        sender.start()
        code = main(["run", str(root), "--out", str(out), "--quiet"])
    finally:
        done.set()
        sender.join()
        for sig, handler in before.items():
            signal.signal(sig, handler)
    err = capsys.readouterr().err
    assert code == 2  # 0 PASS, 1 BLOCK, 2 anything else: never 143 (or 129)
    assert err == (f"oloproof: interrupted by {name}; the run is in {out} — finish it with: oloproof run {root} "
                   f"--out {out} --resume\n")
    notes = [json.loads(line) for line in (out / "started.jsonl").read_text(encoding="utf-8").splitlines()]
    assert notes[-1].get("stopped") is True and not any("ended" in note for note in notes), notes
    assert notes[-1].get("signal") == name  # the stop says which signal it came by
    monkeypatch.setenv("RELSYS_SLEEP", "0")
    assert main(["run", str(root), "--out", str(out), "--quiet", "--resume"]) == 0
    ends = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["abrupt_ends"]
    # "stopped by signal SIGTERM", not "a Ctrl-C or a signal"
    assert [end["how"] for end in ends] == [stopped_how(name)] == [f"stopped by signal {name}"]
    assert len(ends[0]["rerun"]) == 1
    assert len(op.load_run(out).records) == 4


def _stops_while_waiting(monkeypatch: pytest.MonkeyPatch, *stops: BaseException) -> None:
    """The command's first waits for its run's process raise ``stops`` (a SIGTERM is ``Stopped('SIGTERM')``, as
    StopOnSignals raises it; a Ctrl-C ``KeyboardInterrupt``), one a wait; the waits after are the real ones."""
    import multiprocessing.connection

    real, left = multiprocessing.connection.wait, list(stops)

    def wait(*args: object, **kwargs: object) -> object:
        if left:
            raise left.pop(0)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(multiprocessing.connection, "wait", wait)


def test_a_ctrl_c_after_the_sigterm_keeps_the_signal_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A second stop (a Ctrl-C, which kills the run's process at once) after a SIGTERM: what stopped the
    run is the SIGTERM, still named (the signal was taken from each stop, and the Ctrl-C's none erased it)."""
    from oloproof_nb.cli.process import Stopped

    root = write_suite(tmp_path / "suite", [make_case("c0")], release=PASSABLE)
    _stops_while_waiting(monkeypatch, Stopped("SIGTERM"), KeyboardInterrupt())
    code = main(["run", str(root), "--out", str(tmp_path / "run"), "--quiet"])
    assert code == 2 and capsys.readouterr().err.startswith("oloproof: interrupted by SIGTERM")


def test_a_run_that_finishes_after_the_sigterm_keeps_its_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A SIGTERM as the run ends, whose process then reports the run done: the run's gate stands (its
    exit code and table), as after a Ctrl-C; only a run the stop interrupted is said to be stopped by the signal.
    The stop the command passes on (after 1 s; 0.3 s here, while the run's case of 0.6 s runs) is not sent, so the
    run goes through however slowly its process starts (the stop passed on is the SIGTERM itself, and when only a
    Ctrl-C was held back here, a run slower than 1 s was stopped, 0 records)."""
    import os

    from oloproof_nb.cli import process
    from oloproof_nb.cli.process import Stopped

    root = write_suite(tmp_path / "suite", [make_case("c0")], release=PASSABLE)
    monkeypatch.setattr(process, "_STOP_GRACE_S", 120.0)
    monkeypatch.setattr(process, "_PASS_ON_S", 0.3)
    monkeypatch.setenv("RELSYS_SLEEP", "0.6")  # the run is still running when the stop would be passed on
    kill = os.kill
    monkeypatch.setattr(os, "kill", lambda pid, sig: None if sig in (signal.SIGINT, signal.SIGTERM) else kill(pid, sig))
    _stops_while_waiting(monkeypatch, Stopped("SIGTERM"))
    code = main(["run", str(root), "--out", str(tmp_path / "run"), "--quiet"])
    out, err = capsys.readouterr()
    run = op.load_run(tmp_path / "run")
    assert len(run.records) == 1 and op.gate(run).verdict == "BLOCK"  # 1 case: too few to pass
    assert code == 1 and "interrupted" not in err, err  # the gate's code, not the stop's 2
    assert out.splitlines()[-1].startswith("gate: BLOCK — exit 1")
