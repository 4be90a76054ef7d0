"""Edges the other tests did not pin (found by mutation testing) for the columnar copy
(oloproof_nb._analysis.columnar)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from oloproof_nb._analysis.columnar import (
    FRAMES_DIR,
    CopyWriter,
    _host,
    frame_path,
    is_fresh,
    journal_fingerprint,
    sweep_abandoned,
)


def _journal(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "manifest.json").write_text("{}\n", encoding="utf-8")
    (directory / "cases.jsonl").write_text('{"a":1}\n', encoding="utf-8")
    (directory / "replays.jsonl").write_text('{"r":1}\n', encoding="utf-8")


def _commit(directory: Path) -> None:
    CopyWriter(directory, journal_fingerprint(directory)).commit()


def test_a_copy_is_stale_once_replays_jsonl_changes(tmp_path: Path) -> None:
    # the replays frame is built from replays.jsonl: a resume that rewrites it (orphan replays dropped) or a replay
    # appended makes the copy older than the journal
    run = tmp_path / "run"
    _journal(run)
    _commit(run)
    assert is_fresh(run)
    with (run / "replays.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"r":2}\n')
    assert not is_fresh(run)


def test_a_folder_standing_where_a_frame_file_goes_is_replaced(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _journal(run)
    blocker = frame_path(run, "cases")
    blocker.mkdir(parents=True)
    (blocker / "stray.txt").write_text("x", encoding="utf-8")
    _commit(run)
    assert blocker.is_file() and is_fresh(run)


def test_another_hosts_temporary_folder_is_never_swept(tmp_path: Path) -> None:
    # a run folder on a shared file system: the pid is dead here, but the folder belongs to a process on another
    # machine (it may be writing its copy right now)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    other = "another-" + _host()
    assert other != _host() and socket.gethostname()
    mine = tmp_path / f"{FRAMES_DIR}.tmp-{_host()}-{dead.pid}-0000abcd"
    theirs = tmp_path / f"{FRAMES_DIR}.tmp-{other}-{dead.pid}-0000abcd"
    mine.mkdir()
    theirs.mkdir()
    sweep_abandoned(tmp_path)
    assert not mine.exists()  # this host's, its process dead: swept
    assert theirs.exists()


def test_an_abandoned_temporary_folder_of_mode_0_is_swept(tmp_path: Path) -> None:
    """A copy under ``umask 777`` left an empty ``frames.tmp-…`` of mode 0 (one per load); once its
    process had ended, the sweep's ``rmtree`` could not open it, so it stayed for good. An empty one is removed
    whatever its mode (``rmdir`` needs only the run folder's permissions); one of another host still stays."""
    from _processes import without_root_powers

    prefix = without_root_powers()
    if prefix is None:
        pytest.skip("no way to run bound by file modes here (root without unshare -U, or Windows)")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    mine = tmp_path / f"{FRAMES_DIR}.tmp-{_host()}-{dead.pid}-0000abcd"
    theirs = tmp_path / f"{FRAMES_DIR}.tmp-another-{_host()}-{dead.pid}-0000abcd"
    for folder in (mine, theirs):
        folder.mkdir(mode=0)
    try:
        script = ("import sys\nfrom pathlib import Path\nfrom oloproof_nb._analysis.columnar import sweep_abandoned\n"
                  "sweep_abandoned(Path(sys.argv[1]))\n")
        done = subprocess.run([*prefix, sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        assert not mine.exists()
        assert theirs.exists()
    finally:
        for folder in (mine, theirs):
            if folder.exists():
                folder.chmod(0o755)


def test_a_copy_of_a_run_folder_removed_meanwhile_makes_no_folder(tmp_path: Path) -> None:
    """A copy's temporary folder is made in the run folder as it is (``parents=False``); a run
    folder removed since it was read (another process deleted it) is an error, never made again to hold a copy
    of frames."""
    gone = tmp_path / "run"
    with pytest.raises(FileNotFoundError):
        CopyWriter(gone, {})
    assert not gone.exists()


def test_a_named_pipe_where_a_frame_file_goes_is_refused_not_waited_on(tmp_path: Path) -> None:
    # Arrow opening a FIFO waits for a writer for ever; read_frame must refuse it by name (a thread bounds the wait)
    import os
    import threading

    import pytest

    from oloproof_nb._analysis.columnar import read_frame
    from oloproof_nb.errors import RunDirError

    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    run = tmp_path / "run"
    _journal(run)
    _commit(run)
    path = frame_path(run, "cases")
    path.unlink()
    os.mkfifo(path)
    outcome: list[BaseException | None] = []

    def read() -> None:
        try:
            read_frame(run, "cases")
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - reported below
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=10)
    if reader.is_alive():  # unblock the reader's open() so the thread can end, then fail
        with open(path, "wb"):
            pass
        reader.join(timeout=10)
        pytest.fail("read_frame waited on a named pipe")
    assert isinstance(outcome[0], RunDirError) and "not a regular file" in str(outcome[0])
