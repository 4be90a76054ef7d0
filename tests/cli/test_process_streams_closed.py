"""What the system prints, when the reader of the command's standard error has left.

``oloproof run SUITE 2>&1 | head`` (or a hook runner that closed the pipe it read stderr from): the system's prints
go to stderr (README section 8), and there every ``print`` of a correct system raised ``BrokenPipeError`` inside its
case. Each case run was recorded ``error`` (verdicts ``missing``), the gate said BLOCK, exit 1, and the run folder kept
20 errors of a system that had made none. The output is the harness's, not the system's: what is printed after the
reader left goes nowhere, as for the command's own lines, and the case is judged as it would be anywhere else.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from oloproof_nb import load_run

COMMAND = [sys.executable, "-m", "oloproof_nb.cli"]

#: A correct system that talks on both streams in every call, past a pipe's 64 KiB buffer.
CHATTY = """
import sys


class Chatty:
    version = "chatty-r41"

    def __init__(self):
        print("hello from the constructor")

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return self.state

    def run(self, input):
        print("DEBUG acting on", input, "x" * 70_000)
        sys.stdout.flush()
        sys.stderr.write("warning: " + "y" * 70_000 + "\\n")
        sys.stderr.flush()
        return {"steps": [], "answer": input.get("answer"), "status": "completed"}
"""

CASES = [{"id": f"c{i:02d}", "input": {"answer": "done"}, "initial_state": {"n": i}, "expected": {"answer": "done"}}
         for i in range(6)]


def _gone_reader() -> tuple[int, int]:
    """A pipe whose reader has left before anything was written (``| head -0``): (read end closed, write end)."""
    read, write = os.pipe()
    os.close(read)
    return read, write


@pytest.mark.parametrize("isolation", ["thread", "process"])
@pytest.mark.parametrize("streams", ["stderr", "both"])
def test_a_reader_of_stderr_that_left_fails_no_case_of_the_system(make_suite, tmp_path: Path, isolation: str,
                                                                    streams: str) -> None:
    """Each of the 6 cases passes (a hand count: the system answers "done", as every case expects), as it does
    with stderr read to the end; before, all 6 were ``error: BrokenPipeError: [Errno 32] Broken pipe`` and the
    command exited 1 (BLOCK) instead of 0."""
    folder = make_suite(CASES, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.5}},
                        system="sysmod:Chatty", system_code=CHATTY)
    out = tmp_path / "run"
    _, write = _gone_reader()
    try:
        done = subprocess.run([*COMMAND, "run", str(folder), "--quiet", "--isolation", isolation, "--out", str(out)],
                              stdout=write if streams == "both" else subprocess.DEVNULL, stderr=write, timeout=180)
    finally:
        os.close(write)
    run = load_run(out)
    assert run.cases["error"].isna().all(), run.cases["error"].dropna().tolist()[:1]
    assert run.cases["status"].tolist() == ["completed"] * 6
    assert run.verdicts["verdict"].tolist() == ["pass"] * 6
    assert done.returncode == 0  # 6 of 6: Clopper-Pearson lower bound 0.025 ** (1 / 6) = 0.541 >= 0.5: PASS


def _closed(*fds: str) -> list[str]:
    """``sh -c 'exec "$@" <&- >&-'``: the command started with the standard descriptors ``fds`` closed (a daemon,
    a cron or CI runner that closed them, ``oloproof run … >&- 2>&-``)."""
    return ["sh", "-c", 'exec "$@" ' + " ".join(f"{fd}<&-" if fd == "0" else f"{fd}>&-" for fd in fds), "sh"]


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_closed_standard_descriptors_are_not_taken_by_the_runs_own_pipe(make_suite, tmp_path: Path,
                                                                         isolation: str) -> None:
    """``oloproof run SUITE >&- 2>&-``: the pipe on which the run's process reports to the command took the free
    descriptors 1 and 2, so every print of the system was written into that pipe, between the run's messages (the
    command read garbage, or cases failed on ``OSError: [Errno 9] Bad file descriptor``: exit 1 for a system whose
    6 cases all pass). Now a closed standard descriptor is /dev/null for the whole command: the prints go nowhere."""
    folder = make_suite(CASES, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.5}},
                        system="sysmod:Chatty", system_code=CHATTY)
    out = tmp_path / "run"
    done = subprocess.run([*_closed("1", "2"), *COMMAND, "run", str(folder), "--quiet", "--isolation", isolation,
                           "--out", str(out)], timeout=180)
    run = load_run(out)
    assert run.cases["error"].isna().all(), run.cases["error"].dropna().tolist()[:1]
    assert run.verdicts["verdict"].tolist() == ["pass"] * 6
    assert done.returncode == 0


def test_closed_stdin_and_stdout_keep_the_runs_messages_out_of_stderr(make_suite, tmp_path: Path) -> None:
    """``oloproof run SUITE <&- >&- 2>log``: the run's pipe took descriptors 0 and 1, and the run's process, pointing
    its descriptor 1 at stderr for the system's prints, pointed its own end of that pipe there too. Its messages
    (pickled) went into the log, the command heard nothing and said "the run stopped before it finished: the
    process running the system exited with code 0", exit 2, for a run that had finished and passed."""
    folder = make_suite(CASES, evaluators=[{"type": "answer_matches"}], release={"criteria": {"answer_matches": 0.5}})
    out = tmp_path / "run"
    log = tmp_path / "stderr.txt"
    with log.open("wb") as handle:
        done = subprocess.run([*_closed("0", "1"), *COMMAND, "run", str(folder), "--quiet", "--out", str(out)],
                              stderr=handle, timeout=180)
    text = log.read_bytes()
    assert b"directory" not in text and b"stopped before it finished" not in text, text[:300]
    assert load_run(out).verdicts["verdict"].tolist() == ["pass"] * 6
    assert done.returncode == 0
