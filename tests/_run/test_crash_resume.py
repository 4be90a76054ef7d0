"""Crash safety: a run killed at any point leaves a directory that loads and resumes to the same frames.

Kills are real SIGKILLs: the test system kills its own process when it starts a
given case (or a given faulted replay), and one test kills a slow run from the
outside. Torn records (a write the process did not finish) are cut by hand at
chosen bytes, including inside a multi-byte UTF-8 character. What ran is counted
from the system's side-channel log, never from the tool's own output.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest
from _reliability_systems import (
    EVALUATORS,
    FAULT_EVALUATOR,
    assert_same_frames,
    cli_command,
    cli_env,
    kill_after_records,
    main_in_process,
    one_error_line,
    read_log,
    run_cli,
    runs_of,
    standard_cases,
    tree_snapshot,
    write_suite,
)

import oloproof_nb as op
from oloproof_nb import cli

N = 8
IDS = [f"c{i}" for i in range(N)]
SUITE_EVALUATORS = [*EVALUATORS, FAULT_EVALUATOR]


def _suite(root: Path) -> Path:
    return write_suite(root, standard_cases(N), evaluators=SUITE_EVALUATORS)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> op.Run:
    """An uninterrupted run of the same suite (its own folder, so nothing is shared)."""
    root = _suite(tmp_path_factory.mktemp("reference") / "suite")
    return op.run(root, out=root / "runs" / "clean", progress=False)


def _recorded_ids(directory: Path) -> list[str]:
    return [rec["case"]["id"] for rec in _records(directory / "cases.jsonl")]


def _records(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_bytes().split(b"\n")[:-1]]


def _assert_complete(directory: Path, reference: op.Run) -> op.Run:
    """Every case recorded exactly once, replays not doubled, and the frames equal the clean run's."""
    ids = _recorded_ids(directory)
    assert Counter(ids) == Counter(IDS), ids
    replays = [(r["case_id"], r["criterion"], r["kind"]) for r in _records(directory / "replays.jsonl")]
    doubled = [key for key, n in Counter(replays).items() if n > 1]
    assert not doubled, f"replay records appear twice: {doubled}"
    run = op.load_run(directory)
    assert run.finished
    assert list(run.cases["case_id"]) == IDS
    assert_same_frames(run, reference)
    return run


def _assert_reported_kill(proc: subprocess.CompletedProcess[str], root: Path, out: Path) -> None:
    """The system SIGKILLed the process running it: the command says so in one line, exit 2, with the resume command.

    (Before the run moved into a child process, the command itself died with -9 and printed nothing.)
    """
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    line = one_error_line(proc.stderr)
    assert "the process running the system was killed by signal SIGKILL" in line, line
    assert line.endswith(f"finish it with: oloproof run {root} --out {out} --resume"), line
    assert "gate:" not in proc.stdout


# -- SIGKILL at chosen points, then resume ---------------------------------------------------------

KILL_POINTS = [
    pytest.param("run:c0", "cli", id="before-any-case"),
    pytest.param("run:c1", "api", id="after-one-case"),
    pytest.param("run:c4", "cli", id="after-some-cases"),
    pytest.param(f"run:c{N - 1}", "api", id="all-but-one"),
    pytest.param("replay:c2", "cli", id="inside-a-replay"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("kill", "how"), KILL_POINTS)
def test_sigkill_then_resume_equals_clean_run(tmp_path: Path, reference: op.Run, kill: str, how: str,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    root = _suite(tmp_path / "suite")
    out = tmp_path / "run"
    killed_log, resume_log = tmp_path / "killed.log", tmp_path / "resume.log"
    where, victim = kill.split(":")
    k = IDS.index(victim)

    proc = run_cli("run", str(root), "--out", str(out), "--quiet",
                   env=cli_env(RELSYS_LOG=str(killed_log), RELSYS_KILL=kill))
    _assert_reported_kill(proc, root, out)

    # what the crash left: the finished cases, nothing else, readable and marked unfinished
    assert runs_of(read_log(killed_log)) == IDS[: k + 1]
    interrupted = op.load_run(out)
    assert not interrupted.finished
    assert list(interrupted.cases["case_id"]) == IDS[:k]
    assert _recorded_ids(out) == IDS[:k]

    monkeypatch.setenv("RELSYS_LOG", str(resume_log))
    monkeypatch.delenv("RELSYS_KILL", raising=False)
    if how == "cli":
        done = main_in_process(capsys, "run", str(root), "--out", str(out), "--resume", "--quiet")
        assert done.returncode in (0, 1), done.stderr
        assert "Traceback" not in done.stderr
    else:
        op.run(root, out=out, resume=True, progress=False)

    # no finished case ran again; every unfinished one ran exactly once
    assert runs_of(read_log(resume_log)) == IDS[k:]
    replayed = [cid for event, cid, _, _ in read_log(resume_log) if event == "replay"]
    assert not set(replayed) & set(IDS[:k]), "a finished case was replayed again"
    _assert_complete(out, reference)
    # a SIGKILL may come from outside: the case run in flight ran again, and the run keeps that it did
    assert _abrupt_ends(out) == [{"how": "killed by signal SIGKILL", "rerun": [[victim, 1]]}]
    if how == "cli":
        assert "resumed after 1 abrupt end of the run's process (killed by signal SIGKILL); the 1 case run in " \
               f"flight was run again: case '{victim}'" in " ".join(done.stdout.split())


def _abrupt_ends(directory: Path) -> list[dict] | None:
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    assert not (directory / "started.jsonl").exists()  # settled by the resume, gone when it finished
    return manifest.get("abrupt_ends")


def test_resume_after_every_case_recorded_but_manifest_unfinished(tmp_path: Path, reference: op.Run,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed after the last record, before finished_at was written: resuming runs nothing."""
    root = _suite(tmp_path / "suite")
    out = tmp_path / "run"
    op.run(root, out=out, progress=False)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert not op.load_run(out).finished

    log = tmp_path / "resume.log"
    monkeypatch.setenv("RELSYS_LOG", str(log))
    op.run(root, out=out, resume=True, progress=False)
    assert runs_of(read_log(log)) == []
    _assert_complete(out, reference)


def test_resume_of_a_finished_run_runs_nothing(tmp_path: Path, reference: op.Run,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    root = _suite(tmp_path / "suite")
    out = tmp_path / "run"
    op.run(root, out=out, progress=False)
    cases_before = (out / "cases.jsonl").read_bytes()
    manifest_before = (out / "manifest.json").read_bytes()
    frames_before = {p.name: p.stat().st_mtime_ns for p in (out / "frames").iterdir()}
    log = tmp_path / "resume.log"
    monkeypatch.setenv("RELSYS_LOG", str(log))
    op.run(root, out=out, resume=True, progress=False)
    assert runs_of(read_log(log)) == []
    assert (out / "cases.jsonl").read_bytes() == cases_before
    # the manifest's finished_at was once stamped again, and the frames rebuilt: the run is left as it was
    assert (out / "manifest.json").read_bytes() == manifest_before
    assert {p.name: p.stat().st_mtime_ns for p in (out / "frames").iterdir()} == frames_before
    _assert_complete(out, reference)


@pytest.mark.slow
def test_kill_a_real_run_from_outside_mid_run(tmp_path: Path, reference: op.Run, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A slow run SIGKILLed by another process after a few records; --resume finishes it."""
    root = _suite(tmp_path / "suite")
    out = tmp_path / "run"
    killed_log, resume_log = tmp_path / "killed.log", tmp_path / "resume.log"
    kill_after_records(cli_command("run", str(root), "--out", str(out), "--quiet"),
                       cli_env(RELSYS_LOG=str(killed_log), RELSYS_SLEEP="0.3"), out)

    interrupted = op.load_run(out)  # a torn last line, if the kill hit a write, is ignored
    finished_before = list(interrupted.cases["case_id"])
    assert 3 <= len(finished_before) < N
    assert finished_before == IDS[: len(finished_before)]

    monkeypatch.setenv("RELSYS_LOG", str(resume_log))
    done = main_in_process(capsys, "run", str(root), "--out", str(out), "--resume", "--quiet")
    assert done.returncode in (0, 1), done.stderr
    assert runs_of(read_log(resume_log)) == IDS[len(finished_before):]
    _assert_complete(out, reference)
    # the command was killed with its child: nothing saw how the run's process ended; the case in flight ran again
    victim = IDS[len(finished_before)]
    assert _abrupt_ends(out) == [{"how": None, "rerun": [[victim, 1]]}]
    assert f"resumed after 1 abrupt end of the run's process (not seen by oloproof run); the 1 case run in flight " \
           f"was run again: case '{victim}'" in " ".join(done.stdout.split())


@pytest.mark.slow
def test_a_notebook_run_killed_mid_case_reruns_it_on_resume_and_says_so(tmp_path: Path, reference: op.Run,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """``op.run`` has no parent process to see how it ended (a kernel killed, an os._exit of the system): a resume
    runs what was in flight again, as before, and the manifest keeps the end; ``oloproof gate`` prints it."""
    root = _suite(tmp_path / "suite")
    out = tmp_path / "run"
    code = f"import oloproof_nb as op; op.run({str(root)!r}, out={str(out)!r}, progress=False)"
    killed = subprocess.run([sys.executable, "-c", code], env=cli_env(RELSYS_KILL="run:c4"), timeout=120)
    assert killed.returncode == -signal.SIGKILL
    monkeypatch.delenv("RELSYS_KILL", raising=False)
    op.run(root, out=out, resume=True, progress=False)
    _assert_complete(out, reference)
    assert _abrupt_ends(out) == [{"how": None, "rerun": [["c4", 1]]}]
    gated = main_in_process(capsys, "gate", str(out))
    assert gated.returncode in (0, 1)
    note = "resumed after 1 abrupt end of the run's process (not seen by oloproof run)"
    assert note in " ".join(gated.stdout.split())


@pytest.mark.slow
def test_a_resume_that_dies_building_the_system_does_not_blame_it_for_a_case_run_another_process_left(
        tmp_path: Path, reference: op.Run, capsys: pytest.CaptureFixture[str]) -> None:
    """``op.run`` killed from outside while it ran c4 (nothing saw how it ended), then ``oloproof run --resume``,
    whose system ended its process (``os._exit(3)`` in the constructor) before it ran a case: the command said
    ``exited with code 3 while running case 'c4', which --resume records as error`` and noted that end after c4,
    so the next resume recorded c4 ``error`` (all verdicts missing), a case run the system never ended. The end of
    the resume's process is its own: c4 runs again, as after any kill nothing saw."""
    root = _suite(tmp_path / "suite")
    out = tmp_path / "run"
    code = f"import oloproof_nb as op; op.run({str(root)!r}, out={str(out)!r}, progress=False)"
    killed = subprocess.run([sys.executable, "-c", code], env=cli_env(RELSYS_KILL="run:c4"), timeout=120)
    assert killed.returncode == -signal.SIGKILL
    crashed = run_cli("run", str(root), "--out", str(out), "--resume", "--quiet",
                      env=cli_env(RELSYS_INIT="exit_after:0"))
    assert crashed.returncode == 2
    line = one_error_line(crashed.stderr)
    assert "the process running the system exited with code 3;" in line and "c4" not in line
    resumed = main_in_process(capsys, "run", str(root), "--out", str(out), "--resume", "--quiet")
    assert resumed.returncode in (0, 1), resumed.stderr
    _assert_complete(out, reference)
    assert _abrupt_ends(out) == [{"how": None, "rerun": [["c4", 1]]}]



@pytest.mark.slow
def test_the_system_ending_a_resume_is_not_blamed_for_a_case_run_another_process_left_in_flight(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run killed from outside with c4 and c5 in flight (``workers=2``; nothing saw how it ended), then a serial
    resume that ran c4 again and whose system ended its process (``oloproof run`` noted ``exit code 3``): c5, which
    that process never started, was recorded ``error`` (all verdicts missing) beside c4. The end is c4's alone: c5
    runs again, kept in ``abrupt_ends`` as a case run whose end nothing saw."""
    from oloproof_nb._run.in_flight import note_end

    root = _suite(tmp_path / "suite")
    out = tmp_path / "run"
    code = f"import oloproof_nb as op; op.run({str(root)!r}, out={str(out)!r}, progress=False)"
    killed = subprocess.run([sys.executable, "-c", code], env=cli_env(RELSYS_KILL="run:c4"), timeout=120)
    assert killed.returncode == -signal.SIGKILL
    started = out / "started.jsonl"
    pid = json.loads(started.read_text(encoding="utf-8").splitlines()[-1])["pid"]
    resumed_pid = pid + 1
    with started.open("a", encoding="utf-8") as notes:  # c5 on the killed run's second worker, c4 on the resume
        notes.write(json.dumps({"case": "c5", "epoch": 1, "at": time.time(), "pid": pid}) + "\n")
        notes.write(json.dumps({"case": "c4", "epoch": 1, "at": time.time(), "pid": resumed_pid}) + "\n")
    ended = note_end(out, 3, pid=resumed_pid)
    assert ended is not None and list(ended.started) == [("c4", 1)] and ended.by_system
    monkeypatch.delenv("RELSYS_KILL", raising=False)

    run = op.run(root, out=out, resume=True, progress=False)

    status = run.cases.set_index("case_id")["status"]
    assert (status["c4"], status["c5"]) == ("error", "completed")
    assert _abrupt_ends(out) == [{"how": None, "rerun": [["c5", 1]]}]  # not the exit of a process that never ran it


@pytest.mark.slow
def test_a_kill_of_a_resume_notes_the_case_run_another_process_left_in_flight_as_run_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """As above, but the resume running c4 again is killed from outside (``oloproof run`` noted ``killed by signal
    SIGKILL``), an end a resume never blames on the system: c4 and c5 both run again, and ``abrupt_ends`` names
    both. c5 is no case run of the killed process, yet it ran again all the same: left out of the note, its second
    chance was one the gate's "resumed after … abrupt end" line never showed. It is kept under the end that left
    it in flight, which nothing saw, not under the resume's kill."""
    from oloproof_nb._run.in_flight import note_end

    root = _suite(tmp_path / "suite")
    out = tmp_path / "run"
    code = f"import oloproof_nb as op; op.run({str(root)!r}, out={str(out)!r}, progress=False)"
    killed = subprocess.run([sys.executable, "-c", code], env=cli_env(RELSYS_KILL="run:c4"), timeout=120)
    assert killed.returncode == -signal.SIGKILL
    started = out / "started.jsonl"
    pid = json.loads(started.read_text(encoding="utf-8").splitlines()[-1])["pid"]
    resumed_pid = pid + 1
    with started.open("a", encoding="utf-8") as notes:  # c5 on the killed run's second worker, c4 on the resume
        notes.write(json.dumps({"case": "c5", "epoch": 1, "at": time.time(), "pid": pid}) + "\n")
        notes.write(json.dumps({"case": "c4", "epoch": 1, "at": time.time(), "pid": resumed_pid}) + "\n")
    ended = note_end(out, -signal.SIGKILL, pid=resumed_pid)
    assert ended is not None and list(ended.started) == [("c4", 1)] and not ended.by_system
    monkeypatch.delenv("RELSYS_KILL", raising=False)

    run = op.run(root, out=out, resume=True, progress=False)

    status = run.cases.set_index("case_id")["status"]
    assert (status["c4"], status["c5"]) == ("completed", "completed")
    # two ends: the first run's, which nothing saw, left c5 in flight; the resume's kill cut c4 short
    assert _abrupt_ends(out) == [{"how": None, "rerun": [["c5", 1]]},
                                 {"how": "killed by signal SIGKILL", "rerun": [["c4", 1]]}]
    gated = main_in_process(capsys, "gate", str(out))
    assert gated.returncode in (0, 1)
    assert ("resumed after 2 abrupt ends of the run's process (killed by signal SIGKILL; not seen by oloproof run); "
            "the 2 case runs in flight were run again: cases 'c5', 'c4'") in " ".join(gated.stdout.split())


# -- torn records ------------------------------------------------------------------------------------

def _torn_copy(source: Path, target: Path, k: int, cut: int, *, orphan_replay: bool) -> bytes:
    """``target`` = ``source`` as a crash after ``k`` cases would leave it, plus ``cut`` bytes of record k+1.

    With ``orphan_replay`` the replay records of case k+1 (written before its case
    record) are kept too, and a torn replay line follows them.
    """
    target.mkdir()
    manifest = json.loads((source / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (target / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    lines = (source / "cases.jsonl").read_bytes().split(b"\n")[:-1]
    partial = lines[k][:cut]
    (target / "cases.jsonl").write_bytes(b"".join(line + b"\n" for line in lines[:k]) + partial)
    keep = set(IDS[: k + 1] if orphan_replay else IDS[:k])
    replay_lines = [line for line in (source / "replays.jsonl").read_bytes().split(b"\n")[:-1]
                    if json.loads(line)["case_id"] in keep]
    torn_replay = replay_lines[0][: len(replay_lines[0]) // 2] if orphan_replay else b""
    (target / "replays.jsonl").write_bytes(b"".join(line + b"\n" for line in replay_lines) + torn_replay)
    shutil.copy(source / "states.jsonl", target / "states.jsonl")  # states are written before their records
    return lines[k]


def _multibyte_cut(line: bytes) -> int:
    """A cut inside a multi-byte UTF-8 character of ``line``."""
    return line.index("☕".encode()) + 1


@pytest.mark.parametrize("where", ["first-byte", "middle", "inside-a-utf8-character", "all-but-the-newline"])
def test_torn_last_line_is_ignored_and_resumed(tmp_path: Path, reference: op.Run, where: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    root = _suite(tmp_path / "suite")
    full = tmp_path / "full"
    op.run(root, out=full, progress=False)
    k = 4
    line = (full / "cases.jsonl").read_bytes().split(b"\n")[k]
    cut = {"first-byte": 1, "middle": len(line) // 2, "inside-a-utf8-character": _multibyte_cut(line),
           "all-but-the-newline": len(line)}[where]
    out = tmp_path / "crashed"
    _torn_copy(full, out, k, cut, orphan_replay=True)

    loaded = op.load_run(out)
    assert list(loaded.cases["case_id"]) == IDS[:k]
    assert set(loaded.verdicts["case_id"]) == set(IDS[:k])
    assert {r["case_id"] for r in loaded.replay_records} <= set(IDS[:k])

    log = tmp_path / "resume.log"
    monkeypatch.setenv("RELSYS_LOG", str(log))
    op.run(root, out=out, resume=True, progress=False)
    assert runs_of(read_log(log)) == IDS[k:]
    _assert_complete(out, reference)


def test_a_power_loss_that_kept_records_whose_states_it_lost_resumes(tmp_path: Path, reference: op.Run,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """With fsync="finish" the journals are three files the operating system writes back in no set
    order, so a power loss may keep more of cases.jsonl than of states.jsonl. A record whose state was lost was
    taken as done: the resume ran nothing, stamped the run finished, and the run never loaded again ('no state
    ... referred to by a record'). Such a case (and one whose replay lost its state) runs again, as one a crash
    cut short does."""
    root = _suite(tmp_path / "suite")
    full = tmp_path / "full"
    op.run(root, out=full, progress=False)
    out = tmp_path / "lost"
    shutil.copytree(full, out, ignore=shutil.ignore_patterns("frames", ".lock"))
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    records = {rec["case"]["id"]: rec for rec in _records(out / "cases.jsonl")}
    replays = _records(out / "replays.jsonl")

    def refs(cid: str) -> set[str]:  # every state address case cid's record and its replays name, read by hand
        rec = records[cid]
        named = {rec["case"].get("initial_state_ref"), (rec.get("environment_state") or {}).get("state_ref")}
        named |= {(r.get("case") or {}).get("initial_state_ref") for r in replays if r["case_id"] == cid}
        named |= {(r.get("environment_state") or {}).get("state_ref") for r in replays if r["case_id"] == cid}
        return named - {None}

    states = (out / "states.jsonl").read_bytes().split(b"\n")[:-1]
    where = {json.loads(line)["ref"]: i for i, line in enumerate(states)}
    keep = max(where[ref] for cid in IDS[:4] for ref in refs(cid)) + 1  # the states of the first four cases survive
    (out / "states.jsonl").write_bytes(b"".join(line + b"\n" for line in states[:keep]))
    kept = {json.loads(line)["ref"] for line in states[:keep]}
    lost = [cid for cid in IDS if not refs(cid) <= kept]
    assert lost and lost[0] not in IDS[:4]
    with pytest.raises(op.OloproofError, match="no state"):
        op.load_run(out)

    log = tmp_path / "resume.log"
    monkeypatch.setenv("RELSYS_LOG", str(log))
    op.run(root, out=out, resume=True, progress=False)
    assert runs_of(read_log(log)) == lost
    _assert_complete(out, reference)


def test_a_finished_run_that_lost_a_state_is_not_rewritten_by_a_resume(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A finished run forced its journals to the disk before it was stamped finished, so a state missing there is
    damage, not a power loss: a resume drops no record of it (nothing runs again), and reading the states says
    what is missing."""
    root = _suite(tmp_path / "suite")
    out = tmp_path / "run"
    op.run(root, out=out, progress=False)
    last = _records(out / "cases.jsonl")[-1]["environment_state"]["state_ref"]
    states = (out / "states.jsonl").read_bytes().split(b"\n")[:-1]
    cut = next(i for i, line in enumerate(states) if json.loads(line)["ref"] == last)
    (out / "states.jsonl").write_bytes(b"".join(line + b"\n" for line in states[:cut]))  # the last case's state lost
    cases, replays = (out / "cases.jsonl").read_bytes(), (out / "replays.jsonl").read_bytes()
    log = tmp_path / "resume.log"
    monkeypatch.setenv("RELSYS_LOG", str(log))
    run = op.run(root, out=out, resume=True, progress=False)
    assert runs_of(read_log(log)) == []
    with pytest.raises(op.OloproofError, match="no state"):
        run.snapshots  # noqa: B018 - the states are read here
    assert (out / "cases.jsonl").read_bytes() == cases and (out / "replays.jsonl").read_bytes() == replays


def test_damaged_record_before_the_last_line_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    """Only the last line can be torn by a crash; garbage earlier is reported, with the file, in one line."""
    root = _suite(tmp_path / "suite")
    out = tmp_path / "run"
    op.run(root, out=out, progress=False)
    lines = (out / "cases.jsonl").read_bytes().split(b"\n")
    lines[2] = lines[2][:10]
    (out / "cases.jsonl").write_bytes(b"\n".join(lines))
    with pytest.raises(op.OloproofError, match="cases.jsonl"):
        op.load_run(out)


# -- refusing to overwrite, refusing to resume a changed suite ---------------------------------------

def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli.main(args)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("existing", ["finished-run", "interrupted-run", "unrelated-file", "a-file"])
def test_run_into_an_existing_directory_is_an_error_and_changes_nothing(
        tmp_path: Path, existing: str, capsys: pytest.CaptureFixture[str]) -> None:
    root = _suite(tmp_path / "suite")
    out = tmp_path / "out"
    if existing == "finished-run":
        op.run(root, out=out, progress=False)
    elif existing == "interrupted-run":
        op.run(root, out=out, progress=False)
        data = (out / "cases.jsonl").read_bytes()
        (out / "cases.jsonl").write_bytes(data[: len(data) // 2])
    elif existing == "unrelated-file":
        out.mkdir()
        (out / "notes.txt").write_text("mine, keep me", encoding="utf-8")
    else:
        out.write_text("a file, not a folder", encoding="utf-8")
    before = tree_snapshot(tmp_path, skip=())
    code, err = _cli(["run", str(root), "--out", str(out), "--quiet"], capsys)
    assert code == 2
    assert str(out) in one_error_line(err)
    assert tree_snapshot(tmp_path, skip=()) == before


def _edit(root: Path, what: str) -> str:
    if what == "cases.jsonl":
        path = root / "cases.jsonl"
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        rows[6]["expected"]["answer"] = "changed"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    elif what == "cases.jsonl (a case added)":
        path = root / "cases.jsonl"
        path.write_text(path.read_text(encoding="utf-8") + json.dumps({"id": "new", "input": {"cid": "new"}}) + "\n",
                        encoding="utf-8")
        return "cases.jsonl"
    elif what == "oloproof.yaml":
        path = root / "oloproof.yaml"
        path.write_text(path.read_text(encoding="utf-8").replace("bystander_untouched", "bystander_kept"),
                        encoding="utf-8")
    elif what == "release.yaml":
        (root / "release.yaml").write_text("criteria: {answer_matches: 0.5}\n", encoding="utf-8")
    elif what == "release.yaml (deleted)":  # once the resume went on, gated by the manifest's copy
        (root / "release.yaml").unlink()
        return "release.yaml was removed since this run started"
    elif what == "system version":  # the module is not a suite file: only its version tells
        path = root / "relsys.py"
        path.write_text(path.read_text(encoding="utf-8").replace("    version = None", '    version = "v2"'),
                        encoding="utf-8")
        return "version"
    return what


@pytest.mark.parametrize("what", ["cases.jsonl", "cases.jsonl (a case added)", "oloproof.yaml", "release.yaml",
                                  "release.yaml (deleted)", "system version"])
def test_resume_with_a_changed_suite_is_an_error(tmp_path: Path, what: str, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_suite(tmp_path / "suite", standard_cases(N), evaluators=SUITE_EVALUATORS,
                       release={"criteria": {"answer_matches": 0.9}})
    out = tmp_path / "run"
    op.run(root, out=out, progress=False)
    data = (out / "cases.jsonl").read_bytes()
    (out / "cases.jsonl").write_bytes(b"".join(line + b"\n" for line in data.split(b"\n")[:3]))
    named = _edit(root, what)
    before = tree_snapshot(out, skip=())
    log = tmp_path / "resume.log"
    monkeypatch.setenv("RELSYS_LOG", str(log))
    args = ["run", str(root), "--out", str(out), "--resume", "--quiet"]
    if what == "system version":  # a new process: this one has imported the old module already
        proc = run_cli(*args, env=cli_env(RELSYS_LOG=str(log)))
        code, err = proc.returncode, proc.stderr
    else:
        code, err = _cli(args, capsys)
    assert code == 2
    assert named in one_error_line(err)
    assert tree_snapshot(out, skip=()) == before
    assert runs_of(read_log(log)) == []


@pytest.mark.parametrize("case", ["no-such-directory", "not-a-run-directory", "no-out"])
def test_resume_without_a_run_directory_is_an_error(tmp_path: Path, case: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    root = _suite(tmp_path / "suite")
    out = tmp_path / "out"
    if case == "not-a-run-directory":
        out.mkdir()
        (out / "notes.txt").write_text("mine", encoding="utf-8")
    before = tree_snapshot(tmp_path, skip=())
    args = ["run", str(root), "--resume", "--quiet"] + ([] if case == "no-out" else ["--out", str(out)])
    code, err = _cli(args, capsys)
    assert code == 2
    one_error_line(err)
    assert tree_snapshot(tmp_path, skip=()) == before


def test_resume_from_a_moved_copy_of_the_suite(tmp_path: Path, reference: op.Run,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The same files in another folder are the same suite: the run resumes."""
    root = _suite(tmp_path / "suite")
    out = tmp_path / "run"
    op.run(root, out=out, progress=False)
    _torn_copy(out, tmp_path / "crashed", 2, 0, orphan_replay=False)
    moved = tmp_path / "moved"
    shutil.copytree(root, moved, ignore=shutil.ignore_patterns("runs", ".oloproof"))
    log = tmp_path / "resume.log"
    monkeypatch.setenv("RELSYS_LOG", str(log))
    op.run(moved, out=tmp_path / "crashed", resume=True, progress=False)
    assert runs_of(read_log(log)) == IDS[2:]
    _assert_complete(tmp_path / "crashed", reference)


@pytest.mark.slow
def test_killed_twice_with_workers_then_resumed(tmp_path: Path, reference: op.Run, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Three workers, killed mid-run, the resume killed again, then resumed to the end."""
    root = _suite(tmp_path / "suite")
    out = tmp_path / "run"
    logs = [tmp_path / f"phase{i}.log" for i in range(3)]
    args = ("run", str(root), "--out", str(out), "--quiet", "--workers", "3")

    first = run_cli(*args, env=cli_env(RELSYS_LOG=str(logs[0]), RELSYS_KILL="run:c4", RELSYS_SLEEP="0.05"))
    _assert_reported_kill(first, root, out)
    recorded = set(op.load_run(out).cases["case_id"])
    assert "c4" not in recorded
    left = [cid for cid in IDS if cid not in recorded]

    second = run_cli(*args, "--resume", env=cli_env(RELSYS_LOG=str(logs[1]), RELSYS_KILL=f"run:{left[-1]}",
                                                     RELSYS_SLEEP="0.05"))
    _assert_reported_kill(second, root, out)
    assert not set(runs_of(read_log(logs[1]))) & recorded
    recorded_after_two = set(op.load_run(out).cases["case_id"])
    assert recorded <= recorded_after_two

    monkeypatch.setenv("RELSYS_LOG", str(logs[2]))
    third = main_in_process(capsys, *args, "--resume")
    assert third.returncode in (0, 1), third.stderr
    assert sorted(runs_of(read_log(logs[2]))) == sorted(set(IDS) - recorded_after_two)
    _assert_complete(out, reference)


def test_the_example_suite_cut_mid_record_resumes_to_the_clean_frames(tmp_path: Path) -> None:
    """The bundled refund desk (metamorphic pairs, labels, cached fault replays): cut, resumed, equal."""
    from oloproof_nb.examples import init_example

    clean_root = init_example("stateful-agent", tmp_path / "clean")
    clean = op.run(clean_root, out=tmp_path / "clean-run", progress=False)
    assert not clean.pairs.empty and not clean.replays.empty

    crashed_root = init_example("stateful-agent", tmp_path / "crashed")  # its own, empty replay cache
    out = tmp_path / "crashed-run"
    out.mkdir()
    manifest = json.loads((tmp_path / "clean-run" / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    lines = (tmp_path / "clean-run" / "cases.jsonl").read_bytes().split(b"\n")[:-1]
    k = len(lines) // 2
    (out / "cases.jsonl").write_bytes(b"".join(line + b"\n" for line in lines[:k]) + lines[k][:-7])
    kept = {json.loads(line)["case"]["id"] for line in lines[: k + 1]}  # case k's replays were written
    replays = [line for line in (tmp_path / "clean-run" / "replays.jsonl").read_bytes().split(b"\n")[:-1]
               if json.loads(line)["case_id"] in kept]
    (out / "replays.jsonl").write_bytes(b"".join(line + b"\n" for line in replays))
    shutil.copy(tmp_path / "clean-run" / "states.jsonl", out / "states.jsonl")  # written before their records

    resumed = op.run(crashed_root, out=out, resume=True, progress=False)
    ids = [rec["case"]["id"] for rec in _records(out / "cases.jsonl")]
    assert len(ids) == len(set(ids)) == len(clean.records)
    keys = [(r["case_id"], r["criterion"], r["kind"]) for r in _records(out / "replays.jsonl")]
    assert len(keys) == len(set(keys))
    assert_same_frames(resumed, clean)


# -- what a resume does with started.jsonl ----------------------------------------------------------------------

def _stop_at(n: int):  # noqa: ANN202 - a progress callback that stops the run as a Ctrl-C does
    def progress(done: int, total: int) -> None:
        if done >= n:
            raise KeyboardInterrupt
    return progress


def _stopped_run(tmp_path: Path, **kw: object) -> tuple[Path, Path]:
    """A run of the suite stopped (Ctrl-C) after 3 recorded case runs: nothing in flight (started.jsonl names none)."""
    from oloproof_nb._run.in_flight import read_in_flight

    root = _suite(tmp_path / "suite")
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        op.run(root, out=out, progress=_stop_at(3), **kw)  # type: ignore[arg-type]
    assert len(_records(out / "cases.jsonl")) == 3 and read_in_flight(out) is None
    return root, out


def _as_if_killed(out: Path, *notes: dict) -> None:
    """started.jsonl as a process that died with these case runs in flight left it."""
    with (out / "started.jsonl").open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(note) + "\n" for note in notes)


def test_a_crash_the_system_caused_makes_each_case_run_in_flight_error_where_and_when_it_ran(
        tmp_path: Path) -> None:
    """Two case runs in flight (epoch 2 of c4, c5) when the system segfaulted the process, and one that had
    finished but was not recorded (c6): the two are error from when they started to when the process was seen
    to end, at their place in the run; c6 runs again, and the manifest says so."""
    from oloproof_nb._run.in_flight import note_end

    root, out = _stopped_run(tmp_path, epochs=2)  # recorded: (c0, 1), (c0, 2), (c1, 1)
    at = time.time() - 100
    _as_if_killed(out, {"case": "c4", "epoch": 2, "at": at}, {"case": "c5", "epoch": 1, "at": at + 1},
                  {"case": "c6", "epoch": 1, "at": at + 2}, {"case": "c6", "epoch": 1, "at": at + 3, "finished": True})
    assert note_end(out, -signal.SIGSEGV) is not None
    with pytest.raises(KeyboardInterrupt):  # stopped as soon as it has settled the end
        op.run(root, out=out, resume=True, progress=_stop_at(0))
    assert not (out / "started.jsonl").exists()  # settled: a later kill from outside is not taken for this crash
    records = {(r["case"]["id"], r["case"].get("epoch", 1)): r for r in _records(out / "cases.jsonl")[3:]}
    assert sorted(records) == [("c4", 2), ("c5", 1)]
    reason = ("the process running the system died while running the case (killed by signal SIGSEGV; 2 case runs "
              "were in flight in it)")
    # each case's epochs in a row: (c4, 2) is the 10th case run, (c5, 1) the 11th
    for key, index, started in ((("c4", 2), 9, at), (("c5", 1), 10, at + 1)):
        record = records[key]
        assert (record["status"], record["error"], record["index"]) == ("error", reason, index)
        assert record["started_at"] == datetime.fromtimestamp(started, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        assert record["duration_s"] >= 100 - (started - at)  # to the end note_end saw, 100 s after (c4, 2) started
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["abrupt_ends"] == [{"how": "killed by signal SIGSEGV", "rerun": [["c6", 1]]}]
    op.run(root, out=out, resume=True, progress=False)
    cases = op.load_run(out).cases
    errors = cases[cases["status"] == "error"]
    assert sorted(zip(errors["case_id"], errors["epoch"], strict=True)) == [("c3", 1), ("c3", 2), ("c4", 2), ("c5", 1)]


def test_ends_not_blamed_on_the_system_rerun_and_are_kept_in_the_order_they_happened(
        tmp_path: Path, reference: op.Run, capsys: pytest.CaptureFixture[str]) -> None:
    """A kill nobody saw (op.run's process), then a SIGKILL the command saw, each settled by a resume: both in the
    manifest in that order, the case run that had finished unrecorded among those run again, and the gate's
    line counts them all."""
    from oloproof_nb._run.in_flight import note_end

    root, out = _stopped_run(tmp_path)
    _as_if_killed(out, {"case": "c4", "epoch": 1, "at": time.time()})  # no end noted: nobody saw it
    with pytest.raises(KeyboardInterrupt):
        op.run(root, out=out, resume=True, progress=_stop_at(0))
    assert not (out / "started.jsonl").exists()
    _as_if_killed(out, {"case": "c7", "epoch": 1, "at": time.time()}, {"case": "c5", "epoch": 1, "at": time.time()},
                  {"case": "c5", "epoch": 1, "at": time.time(), "finished": True})
    assert note_end(out, -signal.SIGKILL) is not None
    with pytest.raises(KeyboardInterrupt):
        op.run(root, out=out, resume=True, progress=_stop_at(0))
    assert len(_records(out / "cases.jsonl")) == 3  # nothing recorded error: every one of them runs again
    op.run(root, out=out, resume=True, progress=False)
    _assert_complete(out, reference)
    ends = [{"how": None, "rerun": [["c4", 1]]}, {"how": "killed by signal SIGKILL", "rerun": [["c7", 1], ["c5", 1]]}]
    assert _abrupt_ends(out) == ends
    gated = main_in_process(capsys, "gate", str(out))
    assert ("resumed after 2 abrupt ends of the run's process (killed by signal SIGKILL; not seen by oloproof run); "
            "the 3 case runs in flight were run again: cases 'c4', 'c7', 'c5'; isolation: process judges a crash as "
            "the case's error") in " ".join(gated.stdout.split())


def test_each_case_run_is_noted_as_it_starts_and_as_it_finishes_on_a_worker_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With workers > 1 a case run's record is appended by another thread: it is noted finished first, so a crash
    before then does not make it error (it runs again); every epoch is noted as itself."""
    from oloproof_nb._run.store import RunStore

    notes: list[tuple[str, int, bool]] = []
    real = RunStore.note_case

    def spy(self: RunStore, case_id: str, epoch: int, finished: bool = False) -> None:
        notes.append((case_id, epoch, finished))
        real(self, case_id, epoch, finished)

    monkeypatch.setattr(RunStore, "note_case", spy)
    root = write_suite(tmp_path / "suite", standard_cases(3), evaluators=EVALUATORS)
    op.run(root, out=tmp_path / "run", workers=2, epochs=2, progress=False)
    keys = [(f"c{i}", epoch) for i in range(3) for epoch in (1, 2)]
    assert sorted(notes) == sorted([(*key, False) for key in keys] + [(*key, True) for key in keys])
    assert all(notes.index((*key, False)) < notes.index((*key, True)) for key in keys)
    notes.clear()
    op.run(root, out=tmp_path / "serial", epochs=2, progress=False)  # one thread: the record is appended at once
    assert notes == [(*key, False) for key in keys]


def test_an_end_settled_as_the_systems_is_not_taken_for_a_later_kill(tmp_path: Path) -> None:
    """The resume that records the case run in flight error forgets started.jsonl, even when nothing is to run
    again: a kill of its own process that nobody saw (op.run) must not be read as the system's earlier exit."""
    from oloproof_nb._run.in_flight import note_end

    root, out = _stopped_run(tmp_path)
    _as_if_killed(out, {"case": "c4", "epoch": 1, "at": time.time()})
    assert note_end(out, 3) is not None
    with pytest.raises(KeyboardInterrupt):  # stopped as soon as it has settled the end
        op.run(root, out=out, resume=True, progress=_stop_at(0))
    assert not (out / "started.jsonl").exists()
    _as_if_killed(out, {"case": "c5", "epoch": 1, "at": time.time()})  # the next process killed, unseen, in c5
    op.run(root, out=out, resume=True, progress=False)
    statuses = dict(zip(*(op.load_run(out).cases[c] for c in ("case_id", "status")), strict=True))
    assert (statuses["c4"], statuses["c5"]) == ("error", "completed")
    assert _abrupt_ends(out) == [{"how": None, "rerun": [["c5", 1]]}]


def test_a_ctrl_c_with_a_case_run_in_flight_reruns_it_and_keeps_the_stop_or_the_end_noted_after_it(
        tmp_path: Path) -> None:
    """A stop the run's process noted (a Ctrl-C) runs the case run in flight again, and abrupt_ends keeps it as a
    stop (a system that sends SIGINT to its own process group stops the run as a Ctrl-C does, and each
    resume gave the case a fresh try with no note, a silence an earlier test had pinned); a stop followed by an
    end oloproof run noted (the signal reached the run's process alone) is kept with how it ended."""
    from oloproof_nb._run.runner import STOPPED

    root, out = _stopped_run(tmp_path)
    _as_if_killed(out, {"case": "c4", "epoch": 1, "at": time.time()}, {"stopped": True, "at": time.time()})
    with pytest.raises(KeyboardInterrupt):  # stopped as soon as it has settled the stop
        op.run(root, out=out, resume=True, progress=_stop_at(0))
    assert not (out / "started.jsonl").exists()
    assert _abrupt_ends(out) == [{"how": STOPPED, "rerun": [["c4", 1]]}]
    alone = "stopped by a SIGINT, SIGTERM or SIGHUP sent to it alone"
    _as_if_killed(out, {"case": "c5", "epoch": 1, "at": time.time()}, {"stopped": True, "at": time.time()},
                  {"ended": alone, "by_system": False, "at": time.time()})
    with pytest.raises(KeyboardInterrupt):
        op.run(root, out=out, resume=True, progress=_stop_at(0))
    assert _abrupt_ends(out) == [{"how": STOPPED, "rerun": [["c4", 1]]}, {"how": alone, "rerun": [["c5", 1]]}]
    op.run(root, out=out, resume=True, progress=False)
    statuses = dict(zip(*(op.load_run(out).cases[c] for c in ("case_id", "status")), strict=True))
    assert (statuses["c4"], statuses["c5"]) == ("completed", "completed")
