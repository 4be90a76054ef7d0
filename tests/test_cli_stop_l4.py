"""Review L4: ``oloproof run`` stopped by a SIGTERM (or SIGHUP) it got names the signal, as other commands do.

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
from oloproof_nb._run.runner import STOPPED
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


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_a_run_stopped_by_sigterm_names_it_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str], name: str) -> None:
    # a signal that came after main returned (it cannot: the run sleeps 1 s a case) must not end pytest
    before = {sig: signal.signal(sig, lambda *a: None) for sig in (signal.SIGTERM, signal.SIGHUP)}
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
    monkeypatch.setenv("RELSYS_SLEEP", "0")
    assert main(["run", str(root), "--out", str(out), "--quiet", "--resume"]) == 0
    ends = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["abrupt_ends"]
    assert [end["how"] for end in ends] == [STOPPED] and len(ends[0]["rerun"]) == 1
    assert len(op.load_run(out).records) == 4
