"""The run directory: layout, record-by-record appends, torn lines, ABSENT encoding, and load_run round trips."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import oloproof_nb as op
from oloproof_nb._core.paths import ABSENT
from oloproof_nb._core.records import Manifest
from oloproof_nb._run.states import STATES, StateReader, read_state_refs, resolve_states
from oloproof_nb._run.store import RunStore, dumps, read_jsonl, read_manifest
from oloproof_nb.errors import RunDirError

MANIFEST = Manifest(suite="s", run_id="x", started_at="2026-01-01T00:00:00.000000Z", oloproof_nb="0", n_cases=0)

FRAMES = ["cases", "steps", "snapshots", "changes", "verdicts", "comparisons", "replays", "pairs", "receipts"]


def _assert_same_frames(a: op.Run, b: op.Run) -> None:
    for name in FRAMES:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), obj=f"run.{name}")


def _cases() -> list[dict[str, Any]]:
    return [
        {"id": "r1", "input": {"answer": "done", "writes": [{"path": ["o", "a.b"], "value": "é ☃"}]},
         "initial_state": {"o": {"x": 1, "gone": True}},
         "expected": {"answer": "done", "state": {"o": {"gone": True, "a.b": "é ☃", "x": 1}}},
         "metadata": {"kind": "unicode"}},
        {"id": "r2", "input": {"answer": "done", "deletes": [["o", "x"]]},
         "initial_state": {"o": {"x": 1}}, "expected": {"answer": "Done ", "state": {"o": {"x": 1, "y": None}}}},
        {"id": "r3", "input": {"answer": 3, "writes": [{"path": ["n"], "value": 0.1}]},
         "initial_state": {"n": 0.30000000000000004}, "expected": {"answer": 3.0, "state": {"n": 0.1}}},
    ]


EVALUATORS = [{"type": "answer_matches"}, {"type": "state_matches", "mode": "whole"},
              {"type": "state_unchanged", "criterion": "o_x_kept", "paths": ["o.x", "o.never"]}]


def test_run_directory_layout(make_suite) -> None:
    folder = make_suite(_cases(), evaluators=EVALUATORS)
    out = folder / "out"
    run = op.run(op.load_suite(folder), out=out)
    assert {p.name for p in out.iterdir()} >= {"manifest.json", "cases.jsonl"}
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["suite"] == "tiny" and manifest["run_id"] == run.run_id
    assert manifest["system_version"] == "scripted-1"
    assert "started_at" in manifest and "finished_at" in manifest and run.finished
    assert set(manifest["digests"]) >= {"oloproof.yaml", "cases.jsonl"}
    lines = (out / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and [json.loads(line)["case"]["id"] for line in lines] == ["r1", "r2", "r3"]


def test_load_run_round_trips_every_frame(make_suite, tmp_path: Path) -> None:
    folder = make_suite(_cases(), evaluators=EVALUATORS)
    out = tmp_path / "runs" / "x"
    run = op.run(op.load_suite(folder), out=out)
    _assert_same_frames(run, op.load_run(out))
    # the run directory alone is enough: moved elsewhere, with the suite folder gone
    moved = tmp_path / "moved"
    shutil.copytree(out, moved)
    shutil.rmtree(folder)
    again = op.load_run(moved)
    _assert_same_frames(run, again)
    assert again.criteria == ["answer_matches", "state_matches", "o_x_kept"]


def test_stored_values_survive(make_suite) -> None:
    folder = make_suite(_cases(), evaluators=EVALUATORS)
    run = op.load_run(op.run(op.load_suite(folder), out=folder / "out").directory)
    snaps = run.snapshots.set_index("case_id")["state"]
    assert snaps["r1"] == {"o": {"x": 1, "gone": True, "a.b": "é ☃"}}
    assert snaps["r3"] == {"n": 0.1}
    assert run.cases.set_index("case_id").loc["r1", "metadata"] == {"kind": "unicode"}
    comp = run.comparisons
    # absent is stored as {"$absent": true} and read back as the ABSENT sentinel, distinct from null
    row = comp[(comp.case_id == "r2") & (comp.path == "o.y")].iloc[0]
    assert row.expected is None and row.actual is ABSENT and not row.ok
    row = comp[(comp.case_id == "r2") & (comp.criterion == "o_x_kept") & (comp.path == "o.x")].iloc[0]
    assert row.expected == 1 and row.actual is ABSENT and not row.ok
    row = comp[(comp.case_id == "r1") & (comp.criterion == "o_x_kept") & (comp.path == "o.never")].iloc[0]
    assert row.expected is ABSENT and row.actual is ABSENT and row.ok
    changes = run.changes[run.changes.case_id == "r1"]
    assert list(changes[["path", "before", "after"]].itertuples(index=False, name=None)) == [
        ('o["a.b"]', ABSENT, "é ☃")]
    # hand count of verdicts: r1 passes all; r2 answer passes (normalised), whole-state fails, o.x deleted;
    # r3: 3 == 3.0, state n == 0.1, o.x absent before and after
    table = run.verdicts.pivot(index="case_id", columns="criterion", values="verdict")
    assert table.to_dict("index") == {
        "r1": {"answer_matches": "pass", "state_matches": "pass", "o_x_kept": "pass"},
        "r2": {"answer_matches": "pass", "state_matches": "fail", "o_x_kept": "fail"},
        "r3": {"answer_matches": "pass", "state_matches": "pass", "o_x_kept": "pass"},
    }


def test_example_round_trip_without_the_suite(example_suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "example-run"
    run = op.run(op.load_suite(example_suite), out=out)
    shutil.rmtree(example_suite)
    _assert_same_frames(run, op.load_run(out))


# -- the store itself ----------------------------------------------------------------------------------


def test_create_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(RunDirError, match="not empty"):
        RunStore.create(busy, MANIFEST)
    assert [p.name for p in busy.iterdir()] == ["keep.txt"]
    a_file = busy / "keep.txt"  # out= a file: "not empty; ... pass resume=True" could not help
    with pytest.raises(RunDirError, match=r"keep\.txt: is a file, not a folder; choose another out="):
        RunStore.create(a_file, MANIFEST)
    assert a_file.read_text(encoding="utf-8") == "mine"
    empty = tmp_path / "empty"
    empty.mkdir()
    RunStore.create(empty, MANIFEST).close()
    assert json.loads((empty / "manifest.json").read_text(encoding="utf-8"))["run_id"] == "x"


def test_records_are_flushed_one_at_a_time(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path / "r", MANIFEST)
    store.append_case({"case": {"id": "a"}, "n": 1})  # type: ignore[typeddict-item]
    # readable from disk before the store is closed
    assert list(read_jsonl(tmp_path / "r" / "cases.jsonl")) == [{"case": {"id": "a"}, "n": 1}]
    store.append_case({"case": {"id": "b"}, "n": 2})
    assert len(list(read_jsonl(tmp_path / "r" / "cases.jsonl"))) == 2
    store.finish(finished_at=datetime(2026, 1, 1, tzinfo=timezone.utc))
    assert json.loads((tmp_path / "r" / "manifest.json").read_text())["finished_at"] == "2026-01-01T00:00:00.000000Z"


def test_torn_last_line_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}\n{"a": 3, "b": [1, 2', encoding="utf-8")
    assert list(read_jsonl(path)) == [{"a": 1}, {"a": 2}]
    path.write_bytes('{"a": 1}\n{"a": "é'.encode()[:-1])  # cut inside a multi-byte character
    assert list(read_jsonl(path)) == [{"a": 1}]
    assert list(read_jsonl(tmp_path / "nope.jsonl")) == []


def test_load_run_ignores_a_torn_case_record(make_suite) -> None:
    folder = make_suite(_cases(), evaluators=EVALUATORS)
    out = folder / "out"
    op.run(op.load_suite(folder), out=out)
    with (out / "cases.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"index": 3, "case": {"id": "r4"')
    run = op.load_run(out)
    assert list(run.cases["case_id"]) == ["r1", "r2", "r3"]


def test_dumps_encodes_absent_and_keeps_nan() -> None:
    line = dumps({"v": ABSENT, "n": math.nan, "s": "é"})
    assert line == '{"v":{"$absent":true},"n":NaN,"s":"é"}'
    back = json.loads(line)
    assert back["v"] == {"$absent": True} and math.isnan(back["n"])


def test_load_run_errors(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match="no such run directory"):
        op.load_run(tmp_path / "nope")
    (tmp_path / "notes.md").write_text("x", encoding="utf-8")  # it exists: not "no such run directory"
    with pytest.raises(RunDirError, match=r"notes\.md: not a directory \(a run directory holds manifest\.json"):
        op.load_run(tmp_path / "notes.md")
    (tmp_path / "plain").mkdir()
    with pytest.raises(RunDirError, match="manifest.json"):
        op.load_run(tmp_path / "plain")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "manifest.json").write_text("{oops", encoding="utf-8")
    with pytest.raises(RunDirError, match="not valid JSON"):
        op.load_run(tmp_path / "bad")
    (tmp_path / "bad" / "manifest.json").write_text("[" * 20_000 + "]" * 20_000, encoding="utf-8")
    with pytest.raises(RunDirError, match=r"manifest.json: not valid JSON \(nested too deeply\)"):
        op.load_run(tmp_path / "bad")  # the parser's RecursionError, not a traceback


def test_a_manifest_saved_with_a_byte_order_mark_is_named_as_such(tmp_path: Path) -> None:
    """An editor that saves UTF-8 with a byte-order mark puts three bytes before the ``{``: ``json.loads`` says
    so, as the run's reader does (the decoder alone said ``Expecting value`` at the first character)."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({"run_id": "r1"}).encode())
    with pytest.raises(RunDirError, match=r"manifest\.json: not valid JSON \(Unexpected UTF-8 BOM \(decode using "
                                          r"utf-8-sig\): line 1 column 1 \(char 0\)\)$"):
        op.load_run(tmp_path / "run")


# -- runs on disk: one process at a time, recoverable creation, write errors, durability (issue 14) -----------

import errno  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import socket  # noqa: E402
import stat  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from collections import Counter  # noqa: E402
from collections.abc import Callable  # noqa: E402

from _reliability_systems import (  # noqa: E402
    EVALUATORS as DESK_EVALUATORS,
)
from _reliability_systems import (  # noqa: E402
    FAULT_EVALUATOR,
    assert_same_frames,
    cli_command,
    cli_env,
    main_in_process,
    make_case,
    one_error_line,
    standard_cases,
    write_suite,
)

from oloproof_nb._run import store as store_module  # noqa: E402
from oloproof_nb._run.lock import RunLock  # noqa: E402
from oloproof_nb.errors import RunLockedError, StoreWriteError  # noqa: E402

DESK = [*DESK_EVALUATORS, FAULT_EVALUATOR]


def _desk_suite(root: Path) -> Path:
    return write_suite(root, standard_cases(8), evaluators=DESK)


@pytest.fixture(scope="module")
def clean_desk(tmp_path_factory: pytest.TempPathFactory) -> op.Run:
    root = _desk_suite(tmp_path_factory.mktemp("clean") / "suite")
    return op.run(root, out=root / "runs" / "clean", progress=False)


def _interrupted(tmp_path: Path, clean: op.Run, keep: int) -> tuple[Path, Path]:
    """A suite and a copy of the clean run as a crash after ``keep`` cases leaves it."""
    root = _desk_suite(tmp_path / "suite")
    out = tmp_path / "run"
    out.mkdir()
    manifest = json.loads((clean.directory / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    lines = (clean.directory / "cases.jsonl").read_bytes().split(b"\n")[:keep]
    (out / "cases.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))
    if (clean.directory / "states.jsonl").exists():  # the states the kept records refer to (and a few more)
        (out / "states.jsonl").write_bytes((clean.directory / "states.jsonl").read_bytes())
    return root, out


class _Os:
    """The ``os`` module as the store sees it, with some functions replaced (a fake disk)."""

    def __init__(self, **replaced: Callable[..., object]) -> None:
        self._replaced = replaced

    def __getattr__(self, name: str) -> object:
        return self._replaced.get(name) or getattr(os, name)


def _path_of(fd: int) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd (Linux)")


def test_a_held_run_folder_refuses_another_process_naming_the_holder(tmp_path: Path, clean_desk: op.Run) -> None:
    root, out = _interrupted(tmp_path, clean_desk, keep=3)
    lock = RunLock.acquire(out)  # this process holds the folder, as a running `oloproof run --resume` would
    lock.note_holder()
    try:
        before = {p.name: p.read_bytes() for p in out.iterdir()}
        with pytest.raises(RunLockedError) as err:
            op.run(root, out=out, resume=True, progress=False)
        message = str(err.value)
        assert f"{out}: in use by another oloproof process (pid {os.getpid()} on host {socket.gethostname()}, " \
               "since 20" in message and "\n" not in message
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # refused before anything was touched
        with pytest.raises(RunLockedError, match=f"in use by another oloproof process \\(pid {os.getpid()} "):
            op.run(root, out=out, progress=False)  # a new run into the held folder: the holder is named too
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before
        empty = tmp_path / "empty"
        empty.mkdir()
        held = RunLock.acquire(empty)
        # two creations racing for one empty folder: one wins
        with pytest.raises(RunLockedError, match="in use by another oloproof process"):
            RunStore.create(empty, MANIFEST)
        held.release()
    finally:
        lock.release()
    resumed = op.run(root, out=out, resume=True, progress=False)  # released: it resumes
    assert_same_frames(resumed, clean_desk)


@pytest.mark.slow
def test_two_resumes_of_one_folder_never_double_a_record(tmp_path: Path, clean_desk: op.Run) -> None:
    """The issue's route (two --resume at once wrote ~200 duplicate records): one runs, the other is refused."""
    root, out = _interrupted(tmp_path, clean_desk, keep=2)
    args = cli_command("run", str(root), "--out", str(out), "--resume", "--quiet")
    env = cli_env(RELSYS_SLEEP="1.0")  # long enough that the second starts while the first holds the lock
    procs = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [p.communicate(timeout=120) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [1, 2], results  # the standard cases BLOCK (one raises)
    refused = next(err for p, (_, err) in zip(procs, results, strict=True) if p.returncode == 2)
    line = one_error_line(refused)
    assert f"{out}: in use by another oloproof process (pid " in line and socket.gethostname() in line
    ids = [json.loads(line)["case"]["id"] for line in (out / "cases.jsonl").read_text().splitlines()]
    assert Counter(ids) == Counter(f"c{i}" for i in range(8))
    assert_same_frames(op.load_run(out), clean_desk)


def test_resume_refuses_a_system_whose_code_changed_without_a_version_bump(
        tmp_path: Path, clean_desk: op.Run, capsys: pytest.CaptureFixture[str]) -> None:
    from oloproof_nb import cli

    root, out = _interrupted(tmp_path, clean_desk, keep=3)
    source = root / "relsys.py"
    source.write_text(source.read_text(encoding="utf-8").replace('"pay", self.pay', '"pay", self.escalate'),
                      encoding="utf-8")  # the agent changed; `version` did not
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert cli.main(["run", str(root), "--out", str(out), "--resume", "--quiet"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert f"{out}: the system's code changed since this run started" in line
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.name != ".lock"} == before
    assert len(op.load_run(out).records) == 3  # no new-code case joined the old-code ones


def test_a_creation_killed_before_its_manifest_was_renamed_resumes_or_is_reused(tmp_path: Path,
                                                                                 clean_desk: op.Run) -> None:
    root = _desk_suite(tmp_path / "suite")
    manifest = json.loads((clean_desk.directory / "manifest.json").read_text(encoding="utf-8"))
    del manifest["finished_at"]
    complete = tmp_path / "complete"
    complete.mkdir()
    (complete / "manifest.json.tmp").write_text(json.dumps(manifest), encoding="utf-8")
    (complete / ".lock").write_text("", encoding="utf-8")
    assert_same_frames(op.run(root, out=complete, resume=True, progress=False), clean_desk)  # promoted, resumed

    torn = tmp_path / "torn"
    torn.mkdir()
    (torn / "manifest.json.tmp").write_text(json.dumps(manifest)[:50], encoding="utf-8")
    with pytest.raises(RunDirError, match="stopped while it was being created, before any case ran; run again "
                                          "without resume=True"):
        op.run(root, out=torn, resume=True, progress=False)
    assert_same_frames(op.run(root, out=torn, progress=False), clean_desk)  # reused as a new run


KILL_AT_RENAME = '''
import os, signal, sys
from pathlib import Path
import oloproof_nb as op
from oloproof_nb._run import store

real = os.replace

class Os:
    def __getattr__(self, name):
        return getattr(os, name)

    def replace(self, src, dst):
        if str(dst).endswith("manifest.json"):
            os.kill(os.getpid(), signal.SIGKILL)  # killed between manifest.json.tmp and its rename
        return real(src, dst)

store.os = Os()
op.run(sys.argv[1], out=sys.argv[2], progress=False)
'''


@pytest.mark.slow
def test_a_real_kill_between_the_manifest_and_its_rename(tmp_path: Path, clean_desk: op.Run,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    root = _desk_suite(tmp_path / "suite")
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-c", KILL_AT_RENAME, str(root), str(out)], timeout=120, check=False,
                          env=cli_env())
    assert proc.returncode == -9
    assert sorted(p.name for p in out.iterdir()) == [".lock", "manifest.json.tmp"]
    resumed = main_in_process(capsys, "run", str(root), "--out", str(out), "--resume", "--quiet")
    assert resumed.returncode == 1, resumed.stderr
    assert_same_frames(op.load_run(out), clean_desk)


@needs_proc
def test_a_failed_write_stops_the_run_blames_nothing_on_the_system_and_resumes(
        tmp_path: Path, clean_desk: op.Run, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _desk_suite(tmp_path / "suite")
    out = tmp_path / "run"
    writes = Counter[str]()

    def write(fd: int, data: bytes) -> int:
        name = Path(_path_of(fd)).name
        writes[name] += 1
        if name == "replays.jsonl" and writes[name] == 5:
            os.write(fd, bytes(data)[:10])  # part of the line reached the disk, then it was full
            raise OSError(errno.ENOSPC, "No space left on device")
        return os.write(fd, data)

    monkeypatch.setattr(store_module, "os", _Os(write=write))
    with pytest.raises(StoreWriteError) as err:
        op.run(root, out=out, progress=False)
    assert str(err.value).startswith(f"{out / 'replays.jsonl'}: cannot write (No space left on device); the run "
                                     "stopped and nothing was blamed on the system")
    interrupted = op.load_run(out)
    assert not interrupted.finished and 0 < len(interrupted.records) < 8
    stored = (out / "cases.jsonl").read_text(encoding="utf-8") + (out / "replays.jsonl").read_text(encoding="utf-8")
    assert "system_raised" not in stored and "OSError" not in stored
    monkeypatch.undo()  # space freed
    assert_same_frames(op.run(root, out=out, resume=True, progress=False), clean_desk)


def test_a_full_disk_while_the_run_is_created_says_to_run_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    """The disk filling while the first manifest.json was written said "then resume the run",
    and --resume was then refused (the run was stopped while it was being created). It says to run again."""
    root = _desk_suite(tmp_path / "suite")
    out = tmp_path / "run"

    def full(src: object, dst: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_module, "os", _Os(replace=full))
    with pytest.raises(StoreWriteError) as err:
        op.run(root, out=out, progress=False)
    assert str(err.value) == (f"{out / 'manifest.json'}: cannot write (No space left on device); the run stopped and "
                              "nothing was blamed on the system. Free space (or fix the disk), then run again (the "
                              "run had not started; the folder is reused)")
    monkeypatch.undo()  # space freed
    assert op.run(root, out=out, progress=False).finished


def test_a_full_disk_in_a_real_process_is_one_line_and_exit_2(tmp_path: Path, clean_desk: op.Run,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """RLIMIT_FSIZE makes writes past 12 KB fail with EFBIG, as a full disk fails them with ENOSPC."""
    root = _desk_suite(tmp_path / "suite")
    out = tmp_path / "run"

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (12_000, 12_000))

    proc = subprocess.run(cli_command("run", str(root), "--out", str(out), "--quiet"), env=cli_env(),
                          capture_output=True, text=True, timeout=120, preexec_fn=small_files, check=False)
    assert proc.returncode == 2, proc.stderr
    line = one_error_line(proc.stderr)
    # it said "Free space (or fix the disk)", which does not help: the limit is the process's
    assert ": cannot write (File too large); the run stopped and nothing was blamed on the system. Raise the limit " \
           "on file size (ulimit -f), then resume the run" in line
    assert line.endswith(f"finish it with: oloproof run {root} --out {out} --resume")
    done = main_in_process(capsys, "run", str(root), "--out", str(out), "--resume", "--quiet")
    assert done.returncode == 1, done.stderr
    assert_same_frames(op.load_run(out), clean_desk)


def test_a_system_that_closes_its_stdout_and_stderr_never_prints_into_the_journal(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A system closes descriptors 1 and 2 (as a library detaching from the terminal does), then writes debugging
    lines to them. Before, ``os.open`` gave the run's next journals those free numbers: the lines went into
    ``replays.jsonl`` between its records, and the run stopped ("not valid JSON; the run directory is damaged")
    and never loaded. (With ``isolation: process`` the system closes a worker's descriptors, not the run's.)"""
    cases = [make_case("c0", op="close_std"), *(make_case(f"c{i}", op="print_std") for i in range(1, 6))]
    root = write_suite(tmp_path / "suite", cases, evaluators=DESK)
    out = tmp_path / "run"
    proc = main_in_process(capsys, "run", str(root), "--out", str(out), "--quiet")
    assert proc.returncode in (0, 1), proc.stderr
    for name in ("cases.jsonl", "replays.jsonl", "states.jsonl", "manifest.json", ".lock"):
        if (out / name).exists():
            assert b"debugging line" not in (out / name).read_bytes(), name
    run = op.load_run(out)
    assert run.finished
    assert sorted(run.cases["case_id"]) == [f"c{i}" for i in range(6)]
    assert set(run.cases["status"]) == {"completed"}  # the writes to the closed numbers failed quietly


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="lists the process's descriptors in /proc/self/fd")
def test_descriptors_closed_under_the_store_stop_the_run_on_its_one_error_and_keep_the_case_run_in_flight(
        tmp_path: Path) -> None:
    """A system on a thread that closes descriptors it did not open closes the run's. The next write said "Free
    space (or fix the disk)", then releasing the folder raised ``OSError: Bad file descriptor`` from the lock in
    place of that error, and ``started.jsonl`` was removed as at a clean stop: nothing told a resume the case run in
    flight had ended the run."""
    from oloproof_nb._run.in_flight import read_in_flight
    from oloproof_nb.errors import StoreWriteError

    folder = tmp_path / "run"
    store = RunStore.create(folder, MANIFEST)
    store.append_case({"case": {"id": "a"}})  # type: ignore[typeddict-item]
    store.note_case("b", 1)
    for name in os.listdir("/proc/self/fd"):  # every descriptor on the run folder's files, as os.closerange does
        try:
            if os.readlink(f"/proc/self/fd/{name}").startswith(str(folder)):
                os.close(int(name))
        except OSError:  # the descriptor that listed the folder, closed since
            pass
    with pytest.raises(StoreWriteError) as raised:
        store.append_case({"case": {"id": "b"}})  # type: ignore[typeddict-item]
    assert "cannot write (Bad file descriptor); the run stopped: something in this process closed a descriptor " \
           "the run holds" in str(raised.value)
    assert "Free space" not in str(raised.value) and "isolation: process" in str(raised.value)
    store.close()  # raised OSError (Bad file descriptor)
    seen = read_in_flight(folder)
    assert seen is not None and list(seen.started) == [("b", 1)]



def test_descriptors_closed_under_the_store_before_a_case_run_is_noted_keep_the_one_in_flight(
        tmp_path: Path) -> None:
    """The descriptors closed before the next case run is noted: that note is the write that finds them closed
    (``started.jsonl``), and the case run noted before it stays in flight for the resume, as after a journal's."""
    from oloproof_nb._run.in_flight import read_in_flight
    from oloproof_nb.errors import StoreWriteError

    folder = tmp_path / "run"
    store = RunStore.create(folder, MANIFEST)
    store.note_case("a", 1)
    for name in os.listdir("/proc/self/fd"):  # every descriptor on the run folder's files, as os.closerange does
        try:
            if os.readlink(f"/proc/self/fd/{name}").startswith(str(folder)):
                os.close(int(name))
        except OSError:  # the descriptor that listed the folder, closed since
            pass
    with pytest.raises(StoreWriteError, match="something in this process closed a descriptor"):
        store.note_case("b", 1)
    store.close()
    seen = read_in_flight(folder)
    assert seen is not None and list(seen.started) == [("a", 1)]

def test_a_system_that_closes_the_runs_descriptors_gets_its_case_recorded_error_not_run_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``os.closerange(3, ...)`` in a case of a thread run: the run stopped (exit 2) naming no case, and each
    ``--resume`` ran that case again and stopped the same way, so the run never finished. The stop now names the
    case run in flight, and the resume records it ``error``, as it does after an ``os._exit``."""
    cases = [make_case("c0"), make_case("c1", op="close_fds"), make_case("c2")]
    root = write_suite(tmp_path / "suite", cases, evaluators=DESK)
    out = tmp_path / "run"
    proc = main_in_process(capsys, "run", str(root), "--out", str(out), "--quiet")
    assert proc.returncode == 2, proc.stderr
    assert "while running case 'c1', which --resume records as error" in one_error_line(proc.stderr)
    done = main_in_process(capsys, "run", str(root), "--out", str(out), "--resume", "--quiet")
    assert done.returncode in (0, 1), done.stderr
    run = op.load_run(out)
    assert run.finished
    statuses = dict(zip(run.cases["case_id"], run.cases["status"], strict=True))
    assert statuses == {"c0": "completed", "c1": "error", "c2": "completed"}


def test_a_system_that_sets_the_umask_to_777_leaves_a_run_its_owner_can_read(tmp_path: Path) -> None:
    """The system runs in the run's process and the umask is the process's. One that set
    ``os.umask(0o777)`` made every file the run created after it mode 0 (``cases.jsonl``, ``states.jsonl``,
    ``replays.jsonl``, ``manifest.json``). Bound by file modes, the run then stamped itself ``journal_changed``
    ("something wrote into the run folder", exit 2) and ``oloproof gate`` could not read its manifest (exit 2, for
    good). Every file the run makes is now one its owner can read and write, and the run gates."""
    from _processes import without_root_powers

    prefix = without_root_powers() or []  # as root without a way to drop its powers, the modes are checked alone
    cases = [make_case("c0", op="umask_777"), *(make_case(f"c{i}") for i in range(1, 4))]
    root = write_suite(tmp_path / "suite", cases, evaluators=[*DESK_EVALUATORS, FAULT_EVALUATOR])
    out = tmp_path / "run"
    proc = subprocess.run([*prefix, *cli_command("run", str(root), "--out", str(out), "--quiet")], env=cli_env(),
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in out.rglob("*") if path.is_file()}
    assert {"cases.jsonl", "replays.jsonl", "states.jsonl", "manifest.json"} <= set(modes)
    assert {name: mode for name, mode in modes.items() if mode & 0o600 != 0o600} == {}
    assert read_manifest(out).journal_changed is None
    gate = subprocess.run([*prefix, *cli_command("gate", str(out))], env=cli_env(), capture_output=True, text=True,
                          timeout=120, check=False)
    assert gate.returncode == proc.returncode, gate.stderr
    run = op.load_run(out)
    assert run.finished and sorted(run.cases["case_id"]) == ["c0", "c1", "c2", "c3"]


def test_a_manifest_cut_short_by_a_file_size_limit_leaves_no_half_written_temporary_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """RLIMIT_FSIZE below the first manifest's size (EFBIG, as ENOSPC on a full disk): one line, exit 2, and the
    folder holds no half-written ``manifest.json.tmp`` (before: its first 2,000 bytes stayed in ``runs/``)."""
    root = _desk_suite(tmp_path / "suite")

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (2_000, 2_000))

    proc = subprocess.run(cli_command("run", str(root), "--quiet"), env=cli_env(), capture_output=True, text=True,
                          timeout=120, preexec_fn=small_files, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "manifest.json: cannot write (File too large)" in one_error_line(proc.stderr)
    (folder,) = (root / "runs").iterdir()
    assert sorted(p.name for p in folder.iterdir()) == [".lock"]
    done = main_in_process(capsys, "run", str(root), "--quiet")
    assert done.returncode == 1, done.stderr


@needs_proc
@pytest.mark.parametrize("fsync", ["finish", "record"])
def test_the_journal_and_manifest_are_forced_to_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     fsync: str) -> None:
    root = _desk_suite(tmp_path / "suite")
    synced: list[str] = []

    def record_fsync(fd: int) -> None:
        synced.append(_path_of(fd))
        os.fsync(fd)

    monkeypatch.setattr(store_module, "os", _Os(fsync=record_fsync))
    out = tmp_path / "run"
    op.run(root, out=out, progress=False, fsync=fsync)  # type: ignore[arg-type]
    names = Counter(Path(p).name for p in synced)
    per_record = fsync == "record"
    assert names["cases.jsonl"] == (8 + 1 if per_record else 1)  # each record, and once more at the finish
    n_replays = len((out / "replays.jsonl").read_text().splitlines())
    assert names["replays.jsonl"] == (n_replays + 1 if per_record else 1)
    assert names["manifest.json.tmp"] == 2  # created, then finished; each renamed into place after the fsync
    assert names[out.name] >= 2  # the folder itself, after each rename


# -- states stored once, by address ------------------------------------------------------------------------

BIG = {"catalog": {f"sku-{i:04d}": {"name": f"item {i}", "price": i / 4, "tags": ["a", "b"]} for i in range(300)}}


def _env(state: dict[str, Any], cid: str) -> dict[str, Any]:
    text = json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return {"schema": "environment_state/v1", "run_id": "x", "case_id": cid, "case_digest": "d" * 64,
            "system_version": None, "captured_at": "2026-01-01T00:00:00.000000Z",
            "state": json.loads(text), "state_digest": hashlib.sha256(text.encode()).hexdigest()}


def _record(cid: str, initial: dict[str, Any], final: dict[str, Any] | None) -> dict[str, Any]:
    return {"index": int(cid[1:]), "case": {"id": cid, "input": {}, "initial_state": initial, "cluster": cid},
            "status": "completed", "environment_state": None if final is None else _env(final, cid)}


def test_each_distinct_state_is_stored_once_and_read_back_exactly(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path / "r", MANIFEST)
    changed = {**BIG, "sold": {"sku-0001": 2}}
    records = [_record("c0", BIG, BIG), _record("c1", BIG, changed), _record("c2", BIG, changed),
               _record("c3", {"tiny": [1, 1.0]}, None)]
    originals = json.loads(json.dumps(records))
    for rec in records:
        store.append_case(rec)  # type: ignore[arg-type]
    store.append_replay({"case_id": "c1", "kind": "fault", "environment_state": _env(BIG, "c1")})  # type: ignore[typeddict-item]
    store.close()
    assert records == originals  # the records given are not changed

    stored = [json.loads(line) for line in (tmp_path / "r" / "cases.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all("initial_state" not in s["case"] for s in stored)
    refs = [s["case"]["initial_state_ref"] for s in stored]
    finals = [(s["environment_state"] or {}).get("state_ref") for s in stored]
    assert refs[0] == refs[1] == refs[2] == finals[0] != finals[1] == finals[2] and finals[3] is None
    assert len((tmp_path / "r" / "cases.jsonl").read_bytes()) < len(json.dumps(BIG))  # no state inline
    # BIG is used 6 times and `changed` twice: the state store holds about one BIG
    assert len(json.dumps(BIG)) < (tmp_path / "r" / STATES).stat().st_size < 1.2 * len(json.dumps(BIG))

    reader = StateReader(tmp_path / "r")
    back = [resolve_states(s, reader) for s in stored]
    assert back == originals
    assert [list(b["case"]) for b in back] == [list(o["case"]) for o in originals]  # key order too
    assert [type(v) for v in back[3]["case"]["initial_state"]["tiny"]] == [int, float]


def test_a_state_is_on_disk_before_the_record_that_refers_to_it(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    store = RunStore.create(tmp_path / "r", MANIFEST)
    real_append = RunStore._append
    seen: list[bool] = []

    def check(self: RunStore, name: str, record: Any) -> None:
        on_disk = read_state_refs(self.directory)
        refs = [record["case"].get("initial_state_ref"), (record.get("environment_state") or {}).get("state_ref")]
        seen.append(all(r in on_disk for r in refs if r is not None))
        real_append(self, name, record)

    monkeypatch.setattr(RunStore, "_append", check)
    store.append_case(_record("c0", BIG, {"other": 1}))  # type: ignore[arg-type]
    store.append_case(_record("c1", BIG, BIG))  # type: ignore[arg-type]
    assert seen == [True, True]


def test_resume_stores_no_state_twice_and_cuts_a_torn_state_line(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path / "r", MANIFEST)
    store.append_case(_record("c0", BIG, {"other": 1}))  # type: ignore[arg-type]
    store.close()
    nodes = read_state_refs(tmp_path / "r")
    size = (tmp_path / "r" / STATES).stat().st_size
    with (tmp_path / "r" / STATES).open("a", encoding="utf-8") as handle:
        handle.write('{"ref":"' + "0" * 64 + '","node":{"cut": ')  # the process died writing a state
    assert read_state_refs(tmp_path / "r") == nodes  # the torn line is not a state

    again = RunStore.resume(tmp_path / "r")
    assert (tmp_path / "r" / STATES).stat().st_size == size  # cut on resume
    again.append_case(_record("c1", BIG, {"other": 1}))  # type: ignore[arg-type]
    assert (tmp_path / "r" / STATES).stat().st_size == size  # nothing new to store
    again.append_case(_record("c2", BIG, {"new": True}))  # type: ignore[arg-type]
    again.close()
    lines = (tmp_path / "r" / STATES).read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(nodes) + 1 and json.loads(lines[-1])["node"] == {"new": True}


def test_a_record_whose_state_is_missing_is_an_error_naming_the_file(make_suite) -> None:
    folder = make_suite(_cases(), evaluators=EVALUATORS)
    out = folder / "out"
    op.run(op.load_suite(folder), out=out)
    lines = (out / STATES).read_text(encoding="utf-8").splitlines()
    (out / STATES).write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")  # a state lost
    shutil.rmtree(out / "frames")
    with pytest.raises(RunDirError, match=r"states\.jsonl: no state [0-9a-f]{64} \(referred to by a record\)"):
        op.load_run(out)


def test_states_by_address_shrink_a_run_of_shared_large_states(make_suite) -> None:
    """Forty cases over one large initial state: the run folder holds it once, not once per case."""
    cases = [{"id": f"k{i:02d}", "input": {"answer": "ok", "writes": [{"path": ["touched", f"k{i:02d}"], "value": i}]},
              "initial_state": BIG, "expected": {"answer": "ok"}} for i in range(40)]
    folder = make_suite(cases, evaluators=[{"type": "answer_matches"}])
    out = folder / "out"
    run = op.run(op.load_suite(folder), out=out)
    journal = sum((out / name).stat().st_size for name in ("cases.jsonl", "replays.jsonl", STATES)
                  if (out / name).exists())
    inline = sum(len(dumps(rec)) + 1 for rec in run.records)  # the same records with their states inline
    assert inline >= 5 * journal, (inline, journal)
    assert run.snapshots["state"].iloc[7]["touched"] == {"k07": 7}


def test_gate_on_a_run_still_running_says_so_not_resume(tmp_path: Path, clean_desk: op.Run,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof gate`` on a run another process is running told to finish it with --resume, which that process's
    lock refuses. It now says the run is still running, naming the holder; once free, the resume hint is back."""
    from oloproof_nb.cli import main

    _, out = _interrupted(tmp_path, clean_desk, keep=3)
    lock = RunLock.acquire(out)
    lock.note_holder()
    try:
        assert main(["gate", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"it is still running (pid {os.getpid()} on host {socket.gethostname()}, since 20" in err
        assert "--resume" not in err and err.count("\n") == 1
    finally:
        lock.release()
    assert main(["gate", str(out)]) == 2
    assert "--resume" in capsys.readouterr().err


def test_gate_on_a_run_that_finished_while_it_was_read_says_so_not_resume(tmp_path: Path, clean_desk: op.Run,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """``oloproof gate`` looped on a run as it finished said once "the run did not finish (40 of 40 cases
    recorded) …; finish it with: oloproof run … --resume": the run was read unfinished, then stamped finished and
    its lock let go before the holder was asked. It now says the run finished meanwhile (no resume to run)."""
    from oloproof_nb._run.runner import run_suite
    from oloproof_nb.cli import main

    root, out = _interrupted(tmp_path, clean_desk, keep=3)
    holder = RunLock.holder

    def finished_just_before(directory: Path) -> str | None:
        run_suite(op.load_suite(root), out=out, resume=True)  # the run's own process records the rest and finishes
        return holder(directory)
    monkeypatch.setattr(RunLock, "holder", staticmethod(finished_just_before))
    assert main(["gate", str(out)]) == 2
    err = capsys.readouterr().err
    assert "the run did not finish (3 of " in err
    assert "it finished while it was being read: run the command again" in err
    assert "--resume" not in err and err.count("\n") == 1
    monkeypatch.undo()
    assert main(["gate", str(out)]) in (0, 1)  # gated now
    assert "did not finish" not in capsys.readouterr().err


def test_an_internal_error_is_saved_in_the_run_folder_never_through_a_link(tmp_path: Path) -> None:
    """A run folder copied with its links (``cp -rs``) may hold ``internal-error.txt`` as a link to another run's
    file: a traceback is appended to a file of the folder itself, the link replaced, its target untouched (it was
    appended to through the link)."""
    store = RunStore.create(tmp_path / "r", MANIFEST)
    other = tmp_path / "other-internal-error.txt"
    other.write_text("another run's traceback\n", encoding="utf-8")
    (tmp_path / "r" / "internal-error.txt").symlink_to(other)
    path = store.save_internal_error("Traceback: a bug in oloproof")
    store.close()
    assert path == tmp_path / "r" / "internal-error.txt" and not path.is_symlink()
    assert path.read_text(encoding="utf-8").endswith("Traceback: a bug in oloproof\n")
    assert other.read_text(encoding="utf-8") == "another run's traceback\n"
    assert path.read_text(encoding="utf-8").startswith("--- ")  # the folder's own file, new


def test_a_suite_folder_named_in_bytes_that_are_not_utf8_runs(tmp_path: Path) -> None:
    """A suite folder named in Latin-1 (``suite\\xff``, read as ``suite\\udcff``) could be
    neither loaded (the system's module name was built from the folder's UTF-8, which it has none of: "importing
    'refund_desk' raised UnicodeEncodeError") nor run (manifest.json, which records the folder, could not be
    written as UTF-8: "the run stopped: UnicodeEncodeError"). The manifest now keeps the name by its JSON escape:
    valid UTF-8, read back as the same path."""
    from oloproof_nb.examples import init_example

    folder = tmp_path / os.fsdecode(b"suite\xff")
    try:
        folder.mkdir()
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system keeps only UTF-8 names")
    init_example("stateful-agent", folder)
    run = op.run(folder, progress=False)
    text = (run.directory / "manifest.json").read_bytes().decode("utf-8")  # strict: valid UTF-8
    assert "\\udcff" in text
    again = op.load_run(run.directory)
    assert again.suite_root == folder and os.fsencode(again.suite_root.name) == b"suite\xff"
    assert op.gate(again).verdict == op.gate(run).verdict


# --- a run folder written into by someone else during the run ---

_JOURNAL_FORGER = '''
import json
from pathlib import Path


class Forger:
    """Does nothing asked; before each case, turns the failing verdicts of its own run's journal into passes."""

    version = "forger-1"

    def __init__(self):
        self.state = {}

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        for manifest in Path(__file__).resolve().parent.glob("runs/*/manifest.json"):
            if "finished_at" not in json.loads(manifest.read_text()):
                journal = manifest.parent / "cases.jsonl"
                if journal.exists():  # same length, in place
                    data = journal.read_bytes()
                    with open(journal, "r+b") as handle:
                        handle.write(data.replace(b'"verdict":"fail"', b'"verdict":"pass"'))
        return {"steps": [], "answer": "sorry", "status": "completed"}
'''


def _forged_suite(make_suite) -> Path:
    cases = [{"id": f"c{i:02d}", "input": {"n": i}, "initial_state": {}, "expected": {"answer": "done"}}
             for i in range(30)]
    return make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Forger",
                      system_code=_JOURNAL_FORGER, release={"criteria": {"answer_matches": 0.8}})


def test_finish_names_a_journal_someone_else_changed_during_the_run(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path / "run", MANIFEST)
    store._append("cases.jsonl", {"verdict": "fail"})
    kept = (tmp_path / "run" / "cases.jsonl").read_bytes()
    store._append("cases.jsonl", {"verdict": "fail"})
    (tmp_path / "run" / "cases.jsonl").write_bytes(kept + b'{"verdict":"pass"}\n')  # same length, rewritten
    (tmp_path / "run" / "replays.jsonl").write_bytes(b'{"case_id":"a"}\n')  # a journal the run never wrote
    changed = store.finish(datetime(2026, 1, 1, tzinfo=timezone.utc))
    assert changed == [tmp_path / "run" / "cases.jsonl", tmp_path / "run" / "replays.jsonl"]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["journal_changed"] == ["cases.jsonl", "replays.jsonl"] and "finished_at" in manifest
    with pytest.raises(RunDirError, match=r"cases\.jsonl: changed while run x was running"):
        op.load_run(tmp_path / "run")
    with pytest.raises(RunDirError, match=r"cases\.jsonl: changed while run x was running"):
        RunStore.resume(tmp_path / "run")


def test_finish_of_an_untouched_run_names_none(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path / "run", MANIFEST)
    store._append("replays.jsonl", {"case_id": "a"})
    store._append("cases.jsonl", {"index": 0})
    with (tmp_path / "run" / "cases.jsonl").open("ab") as handle:  # a torn last line is no record: not a change
        handle.write(b'{"index": 1')
    assert store.finish(datetime(2026, 1, 1, tzinfo=timezone.utc)) == []
    assert "journal_changed" not in json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))


def test_a_resumed_run_counts_what_it_wrote_before(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path / "run", MANIFEST)
    store._append("cases.jsonl", {"index": 0, "case": {"id": "a"}})
    store.close()
    store = RunStore.resume(tmp_path / "run")
    store._append("cases.jsonl", {"index": 1, "case": {"id": "b"}})
    assert store.finish(datetime(2026, 1, 1, tzinfo=timezone.utc)) == []


def test_a_system_that_rewrites_its_run_journal_stops_the_run_and_the_folder_never_gates(make_suite,
                                                                                          tmp_path: Path) -> None:
    """Before: the run's own gate (its in-memory copy) said BLOCK, and the same folder copied elsewhere (mtimes
    not kept: the copy is rebuilt from the journal) said PASS, 29 of 30 — and nothing said anything odd."""
    folder = _forged_suite(make_suite)
    with pytest.raises(RunDirError, match=r"cases\.jsonl: changed while run .* was running by something other"):
        op.run(op.load_suite(folder), progress=False)
    (run_dir,) = (folder / "runs").iterdir()
    shutil.copytree(run_dir, tmp_path / "elsewhere")  # as a CI artifact is copied: new mtimes
    with pytest.raises(RunDirError, match=r"elsewhere/cases\.jsonl: changed while run"):
        op.gate(op.load_run(tmp_path / "elsewhere"))


def test_the_cli_run_gate_and_resume_of_a_rewritten_journal_exit_2_with_one_line(
        make_suite, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """README's table of what a system can do: a system that rewrites its own run's ``cases.jsonl`` gets exit 2
    and one line naming the file, from ``oloproof run``, then ``oloproof gate`` and ``--resume`` of that folder
    (the tests above call op.run and op.load_run)."""
    from oloproof_nb.cli import main

    folder = _forged_suite(make_suite)
    assert main(["run", str(folder)]) == 2
    (run_dir,) = (folder / "runs").iterdir()
    line = f"oloproof: error: {run_dir / 'cases.jsonl'}: changed while run {run_dir.name} was running by something"
    for argv in ([], ["gate", str(run_dir)], ["run", str(folder), "--out", str(run_dir), "--resume"]):
        if argv:
            assert main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.startswith(line) and err.count("\n") == 1, argv


def test_finish_names_a_journal_replaced_by_a_link_to_a_file_outside_the_run_folder(tmp_path: Path) -> None:
    """A journal moved out of the run folder and replaced by a symbolic link to it holds the very
    bytes the run wrote (the run keeps appending through its descriptor, into the moved file), so the digests
    agreed and the run finished clean; the file outside can be rewritten once the run is done, and a copy of
    the folder made with ``cp -r`` still points to it."""
    store = RunStore.create(tmp_path / "run", MANIFEST)
    store._append("cases.jsonl", {"verdict": "fail"})
    outside = tmp_path / "outside.jsonl"
    (tmp_path / "run" / "cases.jsonl").rename(outside)
    (tmp_path / "run" / "cases.jsonl").symlink_to(outside)
    store._append("cases.jsonl", {"verdict": "fail"})
    assert outside.read_bytes() == b'{"verdict":"fail"}\n' * 2  # what the run wrote, all of it
    assert store.finish(datetime(2026, 1, 1, tzinfo=timezone.utc)) == [tmp_path / "run" / "cases.jsonl"]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["journal_changed"] == ["cases.jsonl"]
    with pytest.raises(RunDirError, match=r"cases\.jsonl: changed while run x was running .* or is a symbolic "
                                          r"link to another file\)"):
        op.load_run(tmp_path / "run")


_JOURNAL_LINKER = '''
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent


class Linker:
    """Does nothing asked; before its run's first record, points the run's cases.jsonl at a file of its own."""

    version = "linker-1"

    def reset(self, state):
        self.state = state

    def snapshot(self):
        return dict(self.state)

    def run(self, input):
        for manifest in HERE.glob("runs/*/manifest.json"):
            journal = manifest.parent / "cases.jsonl"
            if not journal.exists() and not journal.is_symlink():
                os.symlink(HERE.parent / "mine.jsonl", journal)
        return {"steps": [], "answer": "sorry", "status": "completed"}
'''


def test_a_system_that_links_its_run_journal_elsewhere_stops_the_run(make_suite, tmp_path: Path) -> None:
    """The run wrote its records through the link into the system's own file, its digests agreed,
    and the run finished clean (gate BLOCK); the system's file, rewritten once the run was done, then gated the
    folder PASS, and a ``cp -r`` copy of it too."""
    cases = [{"id": f"c{i:02d}", "input": {"n": i}, "initial_state": {}, "expected": {"answer": "done"}}
             for i in range(5)]
    folder = make_suite(cases, evaluators=[{"type": "answer_matches"}], system="sysmod:Linker",
                        system_code=_JOURNAL_LINKER, release={"criteria": {"answer_matches": 0.8}})
    with pytest.raises(RunDirError, match=r"cases\.jsonl: changed while run .* or is a symbolic link to another"):
        op.run(op.load_suite(folder), progress=False)
    assert (folder.parent / "mine.jsonl").read_bytes().count(b"\n") == 5  # the records went through the link
    (run_dir,) = (folder / "runs").iterdir()
    with pytest.raises(RunDirError, match=r"changed while run"):
        op.load_run(run_dir)


def test_a_journal_edited_before_a_crash_is_taken_as_it_reads_by_the_resume(tmp_path: Path) -> None:
    """A limitation pinned, not a fix (README, "A run folder is evidence as written"): the digests live in the
    process that wrote the journal, so an edit followed by the end of that process (a system that rewrites its
    verdicts, then kills the process running it) is what the resume starts from, and the finished run gates it."""
    store = RunStore.create(tmp_path / "run", MANIFEST)
    store._append("cases.jsonl", {"index": 0, "case": {"id": "a"}, "verdict": "fail"})
    journal = tmp_path / "run" / "cases.jsonl"
    journal.write_bytes(journal.read_bytes().replace(b'"fail"', b'"pass"'))
    store.close()  # as a kill leaves it: never finished
    store = RunStore.resume(tmp_path / "run")
    store._append("cases.jsonl", {"index": 1, "case": {"id": "b"}, "verdict": "fail"})
    assert store.finish(datetime(2026, 1, 1, tzinfo=timezone.utc)) == []
    assert [rec["verdict"] for rec in read_jsonl(journal)] == ["pass", "fail"]


def test_a_stopped_run_takes_no_record_from_a_case_it_left_running(tmp_path: Path) -> None:
    """On Ctrl-C or an error a threaded run stops without waiting for the cases still running on its
    worker threads (``_run_threaded``); their replays were appended after the store was closed (the journal was
    opened again), into the run resumed meanwhile in the same process (a notebook), whose digests never saw them:
    the resumed honest run was refused as written into by something else, for good."""
    stopped = RunStore.create(tmp_path / "run", MANIFEST)
    stopped.append_replay({"case_id": "a", "environment_state": None})
    stopped.close()
    resumed = RunStore.resume(tmp_path / "run")
    with pytest.raises(RunDirError, match=r"the run stopped; a case still running then records nothing"):
        stopped.append_replay({"case_id": "b", "environment_state": None})  # the worker thread's late replay
    resumed.append_replay({"case_id": "b", "environment_state": None})
    assert resumed.finish(datetime(2026, 1, 1, tzinfo=timezone.utc)) == []
    assert [rec["case_id"] for rec in read_jsonl(tmp_path / "run" / "replays.jsonl")] == ["b"]  # 'a': an orphan


@pytest.mark.parametrize(("code", "why", "fix"), [
    (errno.EMFILE, "Too many open files", "Raise the limit on open files (ulimit -n)"),
    (errno.ENFILE, "Too many open files in system",
     "Close files other programs hold open (the system's table of open files is full)"),
    (errno.EIO, "Input/output error", "Free space (or fix the disk)"),
])
def test_a_write_refused_by_the_open_file_limits_names_them_not_free_space(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, why: str, fix: str) -> None:
    """A write refused by the process's open-file limit (EMFILE, ``ulimit -n``) or the system's
    table of open files (ENFILE) said "Free space", which frees nothing that matters; other errors keep it."""
    root = _desk_suite(tmp_path / "suite")
    out = tmp_path / "run"

    def refused(src: object, dst: object) -> None:
        raise OSError(code, why)

    monkeypatch.setattr(store_module, "os", _Os(replace=refused))
    with pytest.raises(StoreWriteError) as err:
        op.run(root, out=out, progress=False)
    assert str(err.value) == (f"{out / 'manifest.json'}: cannot write ({why}); the run stopped and nothing was "
                              f"blamed on the system. {fix}, then run again (the run had not started; the folder is "
                              "reused)")


# --- the journal digests and the store's lifetime ---


def test_states_jsonl_is_no_journal_finish_compares(tmp_path: Path) -> None:
    """``DIGESTED`` is ``cases.jsonl`` and ``replays.jsonl``: each state in ``states.jsonl`` is checked against its
    address when it is read, so a node stored there twice changes no record and no verdict, and the run is not
    refused for it (a run that compared ``states.jsonl`` too would pass every other test)."""
    store = RunStore.create(tmp_path / "run", MANIFEST)
    store.append_replay({"case_id": "a", "environment_state": {"state": {"n": 1}}})
    states = tmp_path / "run" / STATES
    with states.open("ab") as handle:  # the same node again, by something other than the run
        handle.write(states.read_bytes().splitlines(keepends=True)[-1])
    assert store.finish(datetime(2026, 1, 1, tzinfo=timezone.utc)) == []
    assert "journal_changed" not in json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("kind", ["folder", "pipe"])
def test_finish_names_a_journal_replaced_by_a_folder_or_a_pipe(tmp_path: Path, kind: str) -> None:
    """Something put a folder or a named pipe where ``cases.jsonl`` was: it is named as changed and the run is stamped
    finished with it (the pipe is never waited on), not left unfinished, its manifest silent, by
    the reader's error raised from finish."""
    store = RunStore.create(tmp_path / "run", MANIFEST)
    store._append("cases.jsonl", {"verdict": "fail"})
    journal = tmp_path / "run" / "cases.jsonl"
    journal.unlink()
    if kind == "folder":
        journal.mkdir()
    else:
        os.mkfifo(journal)
    assert store.finish(datetime(2026, 1, 1, tzinfo=timezone.utc)) == [journal]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["journal_changed"] == ["cases.jsonl"] and manifest["finished_at"]


def test_finish_names_a_journal_it_cannot_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An I/O error while ``cases.jsonl`` is read back to compare it: the run cannot show the journal holds what it
    wrote, so it is named as changed, as an unreadable file in its place is (the error must not escape
    finish and leave the run unfinished)."""
    import io

    from oloproof_nb._run import lines

    class Unreadable(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:
            raise OSError(errno.EIO, "Input/output error")

    store = RunStore.create(tmp_path / "run", MANIFEST)
    store._append("cases.jsonl", {"verdict": "fail"})
    store._append("replays.jsonl", {"case_id": "a"})
    real = lines.open_journal
    monkeypatch.setattr(lines, "open_journal", lambda path: Unreadable() if path.name == "cases.jsonl" else real(path))
    assert store.finish(datetime(2026, 1, 1, tzinfo=timezone.utc)) == [tmp_path / "run" / "cases.jsonl"]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["journal_changed"] == ["cases.jsonl"]


@pytest.mark.parametrize("name", ["cases.jsonl", "replays.jsonl", STATES])
def test_resume_refuses_a_journal_that_is_a_link_and_cuts_nothing_through_it(tmp_path: Path, name: str) -> None:
    """A run folder copied with its links (``cp -r`` of a folder whose journal is a link): the resume refuses it
    before it cuts a torn last line or appends a record, either of which would change the file outside the folder
    (without the refusal every other test passes, and the outside file loses its last line)."""
    RunStore.create(tmp_path / "run", MANIFEST).close()
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b'{"torn')  # a torn last line, which a resume cuts
    (tmp_path / "run" / name).symlink_to(outside)
    with pytest.raises(RunDirError, match=rf"{name}: is a symbolic link; a run folder's files are written in place"):
        RunStore.resume(tmp_path / "run")
    assert outside.read_bytes() == b'{"torn'


def test_a_finished_run_takes_no_record_from_a_case_still_running(tmp_path: Path) -> None:
    """``finish`` closes the store as ``close`` does: a replay a worker thread hands in afterwards is refused and the
    journal stays as it was compared (a finish that left the journals open would append it, after
    the digests were compared)."""
    store = RunStore.create(tmp_path / "run", MANIFEST)
    store.append_replay({"case_id": "a", "environment_state": None})
    assert store.finish(datetime(2026, 1, 1, tzinfo=timezone.utc)) == []
    journal = tmp_path / "run" / "replays.jsonl"
    with pytest.raises(RunDirError, match=r"the run stopped; a case still running then records nothing"):
        store.append_replay({"case_id": "b", "environment_state": None})
    assert journal.read_bytes() == b'{"case_id":"a","environment_state":null}\n'


def test_closing_a_store_twice_closes_no_descriptor_opened_since(tmp_path: Path) -> None:
    """The runner may close a store twice (a failure after the early close of a finished run's resume): the second
    close touches no descriptor, though the journal's old number now belongs to another file (a
    close that kept the numbers would close that file)."""
    store = RunStore.create(tmp_path / "run", MANIFEST)
    store._append("cases.jsonl", {"index": 0})
    (number,) = store._fds.values()
    store.close()
    other = tmp_path / "other.txt"
    other.write_bytes(b"someone else's file\n")
    fd = os.open(other, os.O_RDONLY)
    try:
        os.dup2(fd, number)  # the journal's old number, now another file's
        store.close()
        assert os.fstat(number).st_ino == other.stat().st_ino
    finally:
        os.close(fd)
        try:
            os.close(number)
        except OSError:
            pass


def test_run_suite_itself_refuses_a_run_whose_journal_changed(make_suite) -> None:
    """The runner raises once the run is finished, not only ``op.run``'s load of it: ``oloproof run``, whose child
    process calls ``run_suite``, reports the changed journal at once, before a ``--baseline`` run or the columnar
    copy (without the runner's own check only the load refuses it, and every other test passes)."""
    from oloproof_nb._run.runner import run_suite

    folder = _forged_suite(make_suite)
    with pytest.raises(RunDirError, match=r"cases\.jsonl: changed while run .* was running by something other"):
        run_suite(op.load_suite(folder))


def test_a_run_under_a_umask_that_takes_the_owners_permissions_leaves_no_folder(tmp_path: Path) -> None:
    """The CLI refuses ``umask 777`` up front, the library did not. ``op.run(suite, out=.../runs/r)``
    under it made ``runs`` of mode 0, could not make ``r`` in it, and stopped on "Permission denied", leaving
    ``runs`` of mode 0 in the suite (one run folder of mode 0 per call where ``runs`` existed), and then
    ``oloproof gate SUITE`` refused: "one run folder cannot be read". Now the folders it made are removed and the
    line names the umask."""
    import subprocess
    import sys

    from _processes import without_root_powers

    from oloproof_nb.examples import init_example

    prefix = without_root_powers()
    if prefix is None:
        pytest.skip("no way to run bound by file modes here (root without unshare -U, or Windows)")
    suite = init_example("stateful-agent", tmp_path / "suite")
    script = ("import os, sys\nimport oloproof_nb as op\nos.umask(0o777)\n"
              "for out in (sys.argv[1] + '/runs/r', None):\n"
              "    try:\n        op.run(sys.argv[1], out=out, progress=False)\n"
              "    except op.OloproofError as exc:\n        print(type(exc).__name__, exc)\n")
    done = subprocess.run([*prefix, sys.executable, "-c", script, str(suite)], capture_output=True, text=True,
                          timeout=120)
    said = ("cannot create the run directory (umask 0777: the folders made here are mode 0000, which their owner "
            "cannot read, write and search; set a umask that leaves the owner all three (umask 022, or 077 to keep "
            "them private))\n")
    lines = done.stdout.splitlines(keepends=True)
    assert len(lines) == 2, done.stderr
    assert lines[0] == f"RunDirError {suite / 'runs' / 'r'}: {said}"
    assert lines[1].startswith(f"RunDirError {suite / 'runs'}/") and lines[1].endswith(said)
    assert not (suite / "runs").exists()



def test_the_ends_of_a_process_the_system_caused_are_told_from_kills_from_outside() -> None:
    import signal

    from oloproof_nb._run.in_flight import ended_by_system, how_it_ended

    # an exit of any code before the child's last message, or a signal of what the process did itself
    by_system = {0: "exit code 0", 3: "exit code 3", -signal.SIGSEGV: "killed by signal SIGSEGV",
                 -signal.SIGABRT: "killed by signal SIGABRT", -signal.SIGBUS: "killed by signal SIGBUS",
                 -signal.SIGILL: "killed by signal SIGILL", -signal.SIGFPE: "killed by signal SIGFPE"}
    outside = {-signal.SIGKILL: "killed by signal SIGKILL", -signal.SIGTERM: "killed by signal SIGTERM",
               -signal.SIGINT: "killed by signal SIGINT", -signal.SIGHUP: "killed by signal SIGHUP"}
    assert {code: how_it_ended(code) for code in by_system} == by_system
    assert {code: how_it_ended(code) for code in outside} == outside
    assert all(ended_by_system(code) for code in by_system)
    assert not any(ended_by_system(code) for code in outside)


def test_a_clean_stop_forgets_the_case_runs_in_flight_and_a_crash_keeps_them(tmp_path: Path) -> None:
    from oloproof_nb._run.in_flight import note_end, read_in_flight
    from oloproof_nb._run.store import STARTED

    store = RunStore.create(tmp_path / "run", MANIFEST)
    store.note_case("a", 1)
    store.note_case("b", 2)
    store.close()  # a Ctrl-C or an error the process saw: nothing in flight is an abrupt end
    assert not (tmp_path / "run" / STARTED).exists() and read_in_flight(tmp_path / "run") is None

    crashed = RunStore.create(tmp_path / "crashed", MANIFEST)
    crashed.note_case("a", 1)
    crashed.note_case("b", 2)
    assert note_end(tmp_path / "crashed", 3) is None  # the run's own process still holds the folder: nothing noted
    crashed._run_lock.release()  # type: ignore[union-attr]  # as the process's death releases it, files left open
    with (tmp_path / "crashed" / STARTED).open("ab") as handle:
        handle.write(b'{"case":"c","ep')  # a line the death cut short
    seen = read_in_flight(tmp_path / "crashed")
    assert seen is not None and list(seen.started) == [("a", 1), ("b", 2)] and seen.how is None
    ended = note_end(tmp_path / "crashed", -11)
    assert ended is not None and (ended.how, ended.by_system) == ("killed by signal SIGSEGV", True)
    again = read_in_flight(tmp_path / "crashed")
    assert again is not None and list(again.started) == [("a", 1), ("b", 2)]
    assert (again.how, again.by_system) == ("killed by signal SIGSEGV", True)


def test_a_case_run_finished_on_another_worker_but_not_recorded_is_lost_not_in_flight(tmp_path: Path) -> None:
    """workers > 1: a case run that finished while its record waited for the loop's thread did not end the process;
    a resume runs it again instead of recording it error with the one that did."""
    from oloproof_nb._run.in_flight import read_in_flight

    store = RunStore.create(tmp_path / "run", MANIFEST)
    store.note_case("a", 1)
    store.note_case("b", 1)
    store.note_case("a", 1, finished=True)
    store._run_lock.release()  # type: ignore[union-attr]  # as the process's death releases it
    seen = read_in_flight(tmp_path / "run")
    assert seen is not None and list(seen.started) == [("b", 1)] and seen.lost == [("a", 1)]


def test_a_later_end_of_a_process_that_ran_no_case_does_not_replace_the_end_that_cut_the_case_runs_short(
        tmp_path: Path) -> None:
    """The system ended the run's process (exit code 3) while case 'a' ran; the resume after it was
    killed from outside (SIGKILL) before it settled anything (while it built the system). The second end appended
    'killed by signal SIGKILL' after the first, the last one read won, and the next resume ran 'a' again (a
    PASS, exit 0) instead of recording it error. The case runs in flight were ended by the first end after them;
    a process that started no case run notes nothing more (nor says they were running in it)."""
    from oloproof_nb._run.in_flight import note_end, read_in_flight

    crashed = RunStore.create(tmp_path / "run", MANIFEST)
    crashed.note_case("a", 1)
    crashed._run_lock.release()  # type: ignore[union-attr]  # as the process's death releases it
    first = note_end(tmp_path / "run", 3)
    assert first is not None and (first.how, first.by_system) == ("exit code 3", True)
    assert note_end(tmp_path / "run", -9) is None  # the resume killed before it settled: 'a' was not running in it
    seen = read_in_flight(tmp_path / "run")
    assert seen is not None and list(seen.started) == [("a", 1)]
    assert (seen.how, seen.by_system) == ("exit code 3", True)


def test_the_end_of_a_process_that_noted_none_of_the_case_runs_in_flight_is_not_noted_after_them(
        tmp_path: Path) -> None:
    """The case runs in flight were noted by one process (a notebook's op.run killed where nothing saw it); the end
    oloproof run saw of another (a resume whose system ended it while it was built) is not theirs: nothing is noted,
    and a resume runs them again. The end of the process that noted them is noted, as is an end whose process is
    not known."""
    from oloproof_nb._run.in_flight import note_end, note_stop, read_in_flight

    crashed = RunStore.create(tmp_path / "run", MANIFEST)
    crashed.note_case("a", 1)
    crashed._run_lock.release()  # type: ignore[union-attr]  # as the process's death releases it
    seen = read_in_flight(tmp_path / "run")
    assert seen is not None and seen.pid == os.getpid()
    other = os.getpid() + 1
    before = (tmp_path / "run" / "started.jsonl").read_bytes()
    assert note_end(tmp_path / "run", 3, pid=other) is None
    note_stop(tmp_path / "run", pid=other)
    assert (tmp_path / "run" / "started.jsonl").read_bytes() == before
    again = read_in_flight(tmp_path / "run")
    assert again is not None and list(again.started) == [("a", 1)] and (again.how, again.stopped) == (None, False)
    ended = note_end(tmp_path / "run", 3, pid=os.getpid())
    assert ended is not None and (ended.how, ended.by_system) == ("exit code 3", True)

    old = RunStore.create(tmp_path / "old", MANIFEST)  # notes written before they named their process
    old.note_case("a", 1)
    old._run_lock.release()  # type: ignore[union-attr]
    lines = (tmp_path / "old" / "started.jsonl").read_text(encoding="utf-8").splitlines()
    unnamed = [json.dumps({k: v for k, v in json.loads(line).items() if k != "pid"}) for line in lines]
    (tmp_path / "old" / "started.jsonl").write_text("".join(f"{line}\n" for line in unnamed), encoding="utf-8")
    ended = note_end(tmp_path / "old", 3, pid=other)
    assert ended is not None and ended.by_system


def test_an_end_is_not_noted_of_the_case_runs_another_process_left_in_flight(tmp_path: Path) -> None:
    """Two case runs in flight of a run killed where nothing saw it (``workers=2``), then a resume that ran the first
    again and whose system ended it: the end is of the case run that process noted; the other runs again."""
    from oloproof_nb._run.in_flight import note_end, read_in_flight
    from oloproof_nb._run.store import STARTED

    killed = RunStore.create(tmp_path / "run", MANIFEST)
    killed._run_lock.release()  # type: ignore[union-attr]  # as the process's death releases it
    notes = [{"case": "a", "epoch": 1, "at": 1.0, "pid": 11}, {"case": "b", "epoch": 1, "at": 2.0, "pid": 11},
             {"case": "a", "epoch": 1, "at": 3.0, "pid": 22}]
    (tmp_path / "run" / STARTED).write_text("".join(json.dumps(note) + "\n" for note in notes), encoding="utf-8")

    ended = note_end(tmp_path / "run", 3, pid=22)

    assert ended is not None and list(ended.started) == [("a", 1)] and ended.earlier == [("b", 1)]
    seen = read_in_flight(tmp_path / "run")
    assert seen is not None and (seen.how, seen.by_system) == ("exit code 3", True)
    assert list(seen.started) == [("a", 1)] and seen.earlier == [("b", 1)]



def test_an_end_before_the_case_runs_of_a_later_process_is_not_theirs(tmp_path: Path) -> None:
    """A started.jsonl a resume could not remove (its settle ignores the error): the case runs noted after an end
    were started by a later process, which that end did not stop; with no end of their own nothing blames them."""
    from oloproof_nb._run.in_flight import read_in_flight
    from oloproof_nb._run.store import STARTED

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / STARTED).write_text('{"case":"a","epoch":1,"at":1}\n{"ended":"exit code 3","by_system":true,'
                                            '"at":2}\n{"case":"b","epoch":1,"at":3}\n', encoding="utf-8")
    seen = read_in_flight(tmp_path / "run")
    assert seen is not None and list(seen.started) == [("a", 1), ("b", 1)]
    assert (seen.how, seen.by_system) == (None, False)


def test_a_ctrl_c_keeps_the_case_runs_in_flight_as_stopped_and_an_end_noted_after_it_replaces_the_stop(
        tmp_path: Path) -> None:
    """A Ctrl-C forgot started.jsonl, so when the stop had reached the run's process alone (not the
    command: the system's own SIGINT) nothing was left to say which case run was cut short. A stop is kept; a
    resume treats it as clean unless ``oloproof run`` notes an end after it."""
    from oloproof_nb._run.in_flight import note_end, read_in_flight
    from oloproof_nb._run.store import STARTED

    store = RunStore.create(tmp_path / "run", MANIFEST)
    store.note_case("a", 1)
    store.close(stopped=True)
    seen = read_in_flight(tmp_path / "run")
    assert seen is not None and list(seen.started) == [("a", 1)]
    assert (seen.stopped, seen.how, seen.by_system) == (True, None, False)
    assert note_end(tmp_path / "run", -9) is None  # a resume killed before it settled: the stop stays a clean one
    ended = note_end(tmp_path / "run", 0, "stopped by a signal sent to it alone")
    assert ended is not None and (ended.how, ended.by_system) == ("stopped by a signal sent to it alone", False)
    again = read_in_flight(tmp_path / "run")
    assert again is not None and (again.how, again.by_system) == ("stopped by a signal sent to it alone", False)
    store.close()  # closed already: the file stays for the resume to settle
    assert (tmp_path / "run" / STARTED).is_file()


# -- started.jsonl and the manifest's abrupt_ends ----------------------------------------------------------------

def test_a_signal_with_no_name_is_told_by_its_number_and_not_blamed_on_the_system() -> None:
    import signal

    from oloproof_nb._run.in_flight import ended_by_system, how_it_ended

    assert 99 not in {s.value for s in signal.Signals}  # no name for it: its number, as the kernel gave it
    assert how_it_ended(-99) == "killed by signal 99"
    assert not ended_by_system(-99)


def test_a_case_run_noted_after_the_store_closed_leaves_no_note(tmp_path: Path) -> None:
    """A worker thread of a stopped run may still finish (or start) a case run: its note would make a later resume
    take a clean stop for an abrupt end."""
    from oloproof_nb._run.store import STARTED

    store = RunStore.create(tmp_path / "run", MANIFEST)
    store.close()
    store.note_case("a", 1)
    store.note_case("b", 1, finished=True)
    assert not (tmp_path / "run" / STARTED).exists()
    # the same notes on a store still open are written, one line each (a note_case that wrote nothing passed above)
    open_store = RunStore.create(tmp_path / "open", MANIFEST)
    open_store.note_case("a", 1)
    open_store.note_case("b", 1, finished=True)
    notes = [json.loads(line) for line in (tmp_path / "open" / STARTED).read_text(encoding="utf-8").splitlines()]
    assert [(n["case"], n["epoch"], n.get("finished", False)) for n in notes] == [("a", 1, False), ("b", 1, True)]
    open_store.close()


def test_a_note_that_cannot_be_written_stops_the_run_naming_started_jsonl(tmp_path: Path) -> None:
    from oloproof_nb._run.store import STARTED
    from oloproof_nb.errors import StoreWriteError

    store = RunStore.create(tmp_path / "run", MANIFEST)
    (tmp_path / "run" / STARTED).mkdir()  # opened for writing: EISDIR
    with pytest.raises(StoreWriteError, match=r"started\.jsonl: cannot write"):
        store.note_case("a", 1)
    store.note_case("b", 1)  # the run has failed: no second error from a later case run
    store.close()


def test_each_abrupt_end_a_resume_settles_is_added_to_the_manifest_in_order(tmp_path: Path) -> None:
    from oloproof_nb._run.store import STARTED, InFlight

    store = RunStore.create(tmp_path / "run", MANIFEST)
    store.note_case("a", 1)
    store.settle_in_flight(InFlight({("a", 1): 1.0}, "killed by signal SIGKILL"))
    assert not (tmp_path / "run" / STARTED).exists()
    store.settle_in_flight(None)  # an end recorded as error: nothing ran again
    store.settle_in_flight(InFlight({}, "killed by signal SIGTERM"))  # nothing in flight ran again
    store.settle_in_flight(InFlight({("c", 2): 1.0, ("a", 1): 2.0}))  # a second end, not seen: kept in its order
    # one settling of two ends: case runs an earlier process left (its end not seen), then those of the end noted
    store.settle_in_flight(InFlight({("d", 1): 0.0}), None, InFlight({("e", 1): 0.0}, "exit code 3"))
    ends = [{"how": "killed by signal SIGKILL", "rerun": [["a", 1]]}, {"how": None, "rerun": [["c", 2], ["a", 1]]},
            {"how": None, "rerun": [["d", 1]]}, {"how": "exit code 3", "rerun": [["e", 1]]}]
    on_disk = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert on_disk["abrupt_ends"] == ends
    store.close()


def test_a_resume_that_stops_before_it_settles_keeps_the_case_runs_in_flight(tmp_path: Path) -> None:
    """close() removes started.jsonl only when this process started a case run: a resume that stopped before it
    settled the earlier end (a full disk while recording its case runs error) leaves it for the next resume."""
    from oloproof_nb._run.in_flight import note_end, read_in_flight
    from oloproof_nb._run.store import STARTED

    store = RunStore.create(tmp_path / "run", MANIFEST)
    store.note_case("a", 1)
    store._run_lock.release()  # type: ignore[union-attr]  # as the process's death releases it
    assert note_end(tmp_path / "run", 3) is not None
    resumed = RunStore.resume(tmp_path / "run")
    resumed.close()
    assert (tmp_path / "run" / STARTED).exists()
    seen = read_in_flight(tmp_path / "run")
    assert seen is not None and list(seen.started) == [("a", 1)] and (seen.how, seen.by_system) == ("exit code 3", True)


def test_a_process_that_ended_with_only_a_finished_case_run_unrecorded_is_noted(tmp_path: Path) -> None:
    """workers > 1: a system's constructor that ends the process while it replaces an instance, after the case run it
    had finished: nothing was in flight, but that case run's record was lost and a resume runs it again."""
    from oloproof_nb._run.in_flight import note_end, read_in_flight

    store = RunStore.create(tmp_path / "run", MANIFEST)
    store.note_case("a", 1)
    store.note_case("a", 1, finished=True)
    store._run_lock.release()  # type: ignore[union-attr]  # as the process's death releases it
    seen = read_in_flight(tmp_path / "run")
    assert seen is not None and seen.started == {} and seen.lost == [("a", 1)]
    ended = note_end(tmp_path / "run", 3)
    assert ended is not None and ended.by_system and ended.lost == [("a", 1)]
    again = read_in_flight(tmp_path / "run")
    assert again is not None and (again.how, again.by_system, again.lost) == ("exit code 3", True, [("a", 1)])


def test_a_line_of_started_jsonl_that_oloproof_did_not_write_names_no_case_run(tmp_path: Path) -> None:
    from oloproof_nb._run.in_flight import read_in_flight
    from oloproof_nb._run.store import STARTED

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / STARTED).write_bytes(
        b'{"case": "a", "epoch": "two", "at": 1}\n{"case": "b", "epoch": [1], "at": 1}\n'
        b'{"case": "c", "epoch": 1, "at": "noon"}\n{"ended": "exit code 3", "by_system": true, "at": "later"}\n'
        b'{"case": "d", "epoch": 2, "at": 5.5}\n')
    seen = read_in_flight(tmp_path / "run")
    assert seen is not None and seen.started == {("d", 2): 5.5} and (seen.how, seen.by_system) == (None, False)


def test_started_jsonl_as_a_link_is_refused(tmp_path: Path) -> None:
    from oloproof_nb._run.in_flight import read_in_flight
    from oloproof_nb._run.store import STARTED

    (tmp_path / "run").mkdir()
    (tmp_path / "elsewhere.jsonl").write_text('{"case": "a", "epoch": 1, "at": 1.0}\n', encoding="utf-8")
    (tmp_path / "run" / STARTED).symlink_to(tmp_path / "elsewhere.jsonl")
    with pytest.raises(RunDirError, match=r"started\.jsonl"):
        read_in_flight(tmp_path / "run")


def test_a_damaged_line_of_started_jsonl_does_not_refuse_the_resume(tmp_path: Path) -> None:
    """started.jsonl is written with no fsync: a power loss may leave zeros or garbage before lines it kept. Such a
    line names no case run (as one of the wrong shape); it made read_in_flight raise 'the run directory is damaged',
    and every resume of the run was refused, with nothing to say how to go on."""
    from oloproof_nb._run.in_flight import note_end, read_in_flight
    from oloproof_nb._run.store import STARTED

    store = RunStore.create(tmp_path / "run", MANIFEST)
    store.note_case("a", 1)
    store._run_lock.release()  # type: ignore[union-attr]  # as the process's death releases it
    with (tmp_path / "run" / STARTED).open("ab") as handle:
        handle.write(b"\x00\x00\x00\x00\n[1, 2]\nnot json\n\xff\xfe\n")
    store.note_case("b", 2)
    seen = read_in_flight(tmp_path / "run")  # what a resume reads first
    assert seen is not None and list(seen.started) == [("a", 1), ("b", 2)]
    ended = note_end(tmp_path / "run", 3)  # what oloproof run notes when the system ended the process
    assert ended is not None and list(ended.started) == [("a", 1), ("b", 2)] and ended.by_system


# -- the first end after the case runs in flight, stops, note_stop ------------------------------------------------

def test_of_two_ends_noted_after_the_case_runs_in_flight_the_first_is_theirs(tmp_path: Path) -> None:
    """The system's exit cut case 'a' short; a later end (a resume killed before it started a case run, noted by a
    command older than note_end's refusal) is of a process 'a' was not running in: 'a' stays the system's."""
    from oloproof_nb._run.in_flight import read_in_flight
    from oloproof_nb._run.store import STARTED

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / STARTED).write_text(
        '{"case":"a","epoch":1,"at":1}\n{"ended":"exit code 3","by_system":true,"at":2}\n'
        '{"ended":"killed by signal SIGKILL","by_system":false,"at":3}\n', encoding="utf-8")
    seen = read_in_flight(tmp_path / "run")
    assert seen is not None and list(seen.started) == [("a", 1)]
    assert (seen.how, seen.by_system, seen.ended_at) == ("exit code 3", True, 2.0)


def test_a_stop_before_the_case_runs_of_a_later_process_is_not_theirs(tmp_path: Path) -> None:
    """A Ctrl-C stopped the process that ran 'a'; a later process (its resume could not remove started.jsonl) ran
    'b' and was killed unseen: that end is not a clean stop, so a resume notes it (abrupt_ends)."""
    from oloproof_nb._run.in_flight import read_in_flight
    from oloproof_nb._run.store import STARTED

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / STARTED).write_text(
        '{"case":"a","epoch":1,"at":1}\n{"stopped":true,"at":2}\n{"case":"b","epoch":1,"at":3}\n', encoding="utf-8")
    seen = read_in_flight(tmp_path / "run")
    assert seen is not None and list(seen.started) == [("a", 1), ("b", 1)]
    assert (seen.stopped, seen.how) == (False, None)


def test_a_stop_by_a_signal_sent_to_a_resume_that_ran_no_case_leaves_the_systems_crash_noted(tmp_path: Path) -> None:
    """The system ended the process while 'a' ran (exit code 3, noted); the resume that followed was stopped by a
    SIGINT sent to its process alone before it started a case run. 'a' was not running in it: nothing is noted, and
    oloproof run does not say 'a' runs again (the next resume records it error)."""
    from oloproof_nb._run.in_flight import note_end, read_in_flight

    crashed = RunStore.create(tmp_path / "run", MANIFEST)
    crashed.note_case("a", 1)
    crashed._run_lock.release()  # type: ignore[union-attr]  # as the process's death releases it
    assert note_end(tmp_path / "run", 3) is not None
    assert note_end(tmp_path / "run", 0, "stopped by a SIGINT, SIGTERM or SIGHUP sent to it alone") is None
    seen = read_in_flight(tmp_path / "run")
    assert seen is not None and (seen.how, seen.by_system) == ("exit code 3", True)


def test_a_stop_that_cannot_be_written_forgets_the_case_runs_in_flight(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk when a Ctrl-C's stop is written: started.jsonl is removed, as a clean stop always removed it,
    rather than kept naming case runs in flight with no stop (a resume would note an end nobody saw)."""
    from oloproof_nb._run.in_flight import read_in_flight
    from oloproof_nb._run.store import STARTED

    store = RunStore.create(tmp_path / "run", MANIFEST)
    store.note_case("a", 1)
    real = os.write

    def full_disk(fd: int, data: bytes) -> int:
        if b'"stopped"' in data:
            raise OSError(28, "No space left on device")
        return real(fd, data)

    monkeypatch.setattr(os, "write", full_disk)
    store.close(stopped=True)
    monkeypatch.undo()
    assert not (tmp_path / "run" / STARTED).exists() and read_in_flight(tmp_path / "run") is None


def test_a_stop_the_command_notes_for_a_process_it_killed_is_noted_once_and_only_after_case_runs_in_flight(
        tmp_path: Path) -> None:
    """oloproof run kills the run's process on a second Ctrl-C (or when it does not stop in time) before that process
    noted its stop: the command notes it, so a resume runs the case runs in flight again with no note. Nothing is
    written when none was in flight, when a stop or an end is noted after them, or while the folder is held."""
    from oloproof_nb._run.in_flight import note_end, note_stop, read_in_flight
    from oloproof_nb._run.store import STARTED

    store = RunStore.create(tmp_path / "run", MANIFEST)
    store.note_case("a", 1)
    note_stop(tmp_path / "run")  # the run's own process still holds the folder: nothing noted
    store._run_lock.release()  # type: ignore[union-attr]  # as the process's death releases it
    before = (tmp_path / "run" / STARTED).read_bytes()
    assert b"stopped" not in before
    note_stop(tmp_path / "run")
    seen = read_in_flight(tmp_path / "run")
    assert seen is not None and list(seen.started) == [("a", 1)] and (seen.stopped, seen.how) == (True, None)
    stopped = (tmp_path / "run" / STARTED).read_bytes()
    note_stop(tmp_path / "run")  # noted already
    assert note_end(tmp_path / "run", -9) is None  # a stop, not a kill nobody saw
    assert (tmp_path / "run" / STARTED).read_bytes() == stopped and stopped.count(b"\n") == before.count(b"\n") + 1

    crashed = RunStore.create(tmp_path / "crashed", MANIFEST)
    crashed.note_case("a", 1)
    crashed._run_lock.release()  # type: ignore[union-attr]
    assert note_end(tmp_path / "crashed", 3) is not None
    ended = (tmp_path / "crashed" / STARTED).read_bytes()
    note_stop(tmp_path / "crashed")  # an end is noted after them: it stays the system's
    assert (tmp_path / "crashed" / STARTED).read_bytes() == ended

    done = RunStore.create(tmp_path / "done", MANIFEST)
    done.note_case("a", 1)
    done.note_case("a", 1, finished=True)
    done.append_case({"case": {"id": "a"}, "n": 1})  # type: ignore[typeddict-item]  # recorded: nothing in flight
    done._run_lock.release()  # type: ignore[union-attr]
    recorded = (tmp_path / "done" / STARTED).read_bytes()
    note_stop(tmp_path / "done")
    assert (tmp_path / "done" / STARTED).read_bytes() == recorded


# -- the note of a dead process is made under the folder's lock ---------------------------------------------------

@pytest.mark.parametrize("note", ["stop", "end"])
def test_a_note_of_a_dead_process_reads_and_appends_under_the_folders_lock(tmp_path: Path, note: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """oloproof run notes the stop or end of a run's process once it is dead; a resume started meanwhile (a script
    looping on the printed command) takes the folder's lock and settles started.jsonl. The note reads what was in
    flight and appends to it holding that lock, so no resume can take the folder between the read and the write."""
    from oloproof_nb._run import in_flight as in_flight_module
    from oloproof_nb._run.in_flight import note_end, note_stop
    from oloproof_nb._run.lock import RunLock

    store = RunStore.create(tmp_path / "run", MANIFEST)
    store.note_case("a", 1)
    store._run_lock.release()  # type: ignore[union-attr]  # as the process's death releases it
    held: list[bool] = []
    real = in_flight_module.read_in_flight

    def read_while_a_resume_tries(directory: Path) -> Any:
        try:
            RunLock.acquire(directory).release()
            held.append(False)
        except RunDirError:
            held.append(True)
        return real(directory)

    monkeypatch.setattr(in_flight_module, "read_in_flight", read_while_a_resume_tries)
    if note == "stop":
        note_stop(tmp_path / "run")
    else:
        assert note_end(tmp_path / "run", -9) is not None
    assert held == [True]
    RunLock.acquire(tmp_path / "run").release()  # released after the note


def test_a_note_on_a_started_jsonl_that_is_a_link_is_not_made_nor_raised(tmp_path: Path) -> None:
    """A run folder copied with its links, whose started.jsonl points elsewhere: oloproof run's note of how the
    process ended (or of the user's stop) reads it refused as a link, writes nothing through it and raises nothing
    (the command's stop line stays one line; the resume names the link)."""
    from oloproof_nb._run.in_flight import note_end, note_stop
    from oloproof_nb._run.store import STARTED

    (tmp_path / "run").mkdir()
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text('{"case": "a", "epoch": 1, "at": 1.0}\n', encoding="utf-8")
    (tmp_path / "run" / STARTED).symlink_to(elsewhere)
    assert note_end(tmp_path / "run", -9) is None
    note_stop(tmp_path / "run")
    assert elsewhere.read_text(encoding="utf-8") == '{"case": "a", "epoch": 1, "at": 1.0}\n'


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts this process's open files in /proc")
def test_a_run_that_finishes_or_is_stopped_leaves_no_handle_of_started_jsonl_open(tmp_path: Path) -> None:
    """A notebook runs many runs in one process: each close (finished, or stopped by a Ctrl-C) closes the handle of
    started.jsonl it opened for its case runs, which would otherwise stay open for the life of the kernel."""
    def open_files() -> set[str]:
        return {os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
                if os.path.exists(f"/proc/self/fd/{fd}")}

    before = open_files()
    for name, stopped in (("done", False), ("stopped", True)):
        store = RunStore.create(tmp_path / name, MANIFEST)
        store.note_case("a", 1)
        store.close(stopped=stopped)
    assert not {path for path in open_files() - before if "started.jsonl" in path}


def test_a_note_that_names_no_process_of_its_own_leaves_the_end_to_any(tmp_path: Path) -> None:
    """Only the last case run's note says which process the case runs in flight are of. A ``pid`` that is not a
    process id (``true``) names none, and neither does a last note with no ``pid`` after one of another process's
    notes: the end of any process is then noted, as in folders written before notes named their process."""
    from oloproof_nb._run.in_flight import note_end, read_in_flight

    for name, pids in [("boolean", [True]), ("last_unnamed", [os.getpid() + 1, None])]:
        store = RunStore.create(tmp_path / name, MANIFEST)
        for i, _ in enumerate(pids):
            store.note_case(f"c{i}", 1)
        store._run_lock.release()  # type: ignore[union-attr]  # as the process's death releases it
        journal = tmp_path / name / "started.jsonl"
        notes = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
        assert len(notes) == len(pids)
        for note, pid in zip(notes, pids, strict=True):
            note.pop("pid")
            if pid is not None:
                note["pid"] = pid
        journal.write_text("".join(json.dumps(note) + "\n" for note in notes), encoding="utf-8")
        seen = read_in_flight(tmp_path / name)
        assert seen is not None and seen.pid is None, name
        ended = note_end(tmp_path / name, 3, pid=os.getpid() + 2)
        assert ended is not None and ended.by_system, name
