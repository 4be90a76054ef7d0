"""The ``oloproof`` command under a hostile process environment: a standard error whose reader left, a current
folder deleted under the shell, a umask that takes the owner's own permissions."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from oloproof_nb.cli import main
from oloproof_nb.examples import init_example

COMMAND = [sys.executable, "-m", "oloproof_nb.cli"]


@pytest.fixture
def suite_with_a_run(tmp_path: Path) -> tuple[Path, Path]:
    """The false-success example (its gate BLOCKs: exit 1) and one finished run of it in its runs/."""
    folder = init_example("false-success", tmp_path / "suite")
    run = folder / "runs" / "first"
    assert main(["run", str(folder), "--out", str(run), "--quiet"]) == 1
    return folder, run


def _tree(folder: Path) -> set[str]:
    return {str(path.relative_to(folder)) for path in folder.rglob("*")}


@pytest.mark.parametrize("argv", [["gate", "{suite}"], ["report", "{suite}", "--out", "{tmp}/report.html"]])
def test_a_reader_of_standard_error_that_left_keeps_the_exit_code(suite_with_a_run: tuple[Path, Path],
                                                                   tmp_path: Path, argv: list[str]) -> None:
    """``oloproof gate SUITE`` whose stderr reader had gone (``2> >(head -0)``, a hook runner that closed it) exited 2,
    "Broken pipe", for a BLOCK: the line naming the latest run was printed past the one writer that loses a line and
    keeps the code. README: a closed stream, or one whose reader left, changes no exit code."""
    suite, run = suite_with_a_run
    read, write = os.pipe()
    os.close(read)  # the reader is gone before a line is written
    try:
        done = subprocess.run([*COMMAND, *(a.format(suite=suite, run=run, tmp=tmp_path) for a in argv)],
                              stdout=subprocess.DEVNULL, stderr=write, timeout=120)
    finally:
        os.close(write)
    assert done.returncode == 1  # the example's gate BLOCKs


def test_a_current_folder_deleted_under_the_shell_is_named_with_what_to_do(suite_with_a_run: tuple[Path, Path],
                                                                            tmp_path: Path) -> None:
    """``mkdir d; cd d; rmdir ../d; oloproof gate ../suite``: the path is made absolute against a folder that is
    gone and the line was ``oloproof: error: No such file or directory``, naming nothing and saying nothing to do."""
    suite, run = suite_with_a_run
    script = 'mkdir gone && cd gone && rmdir ../gone && exec "$@"'
    for argv in (["gate", "../suite"], ["run", "../suite", "--quiet", "--out", "../again"]):
        done = subprocess.run(["sh", "-c", script, "sh", *COMMAND, *argv], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 2
        last = done.stderr.splitlines()[-1]
        assert last.startswith("oloproof: error: the current folder no longer exists (deleted"), done.stderr
        assert "cd to a folder that exists" in last and "Traceback" not in done.stderr
    assert not (tmp_path / "again").exists()
    assert sorted(p.name for p in (suite / "runs").iterdir()) == [run.name]


@pytest.mark.parametrize("argv", [["init", "--example", "false-success", "{tmp}/new"],
                                  ["run", "{suite}", "--quiet"], ["run", "{suite}", "--quiet", "--out", "{tmp}/out"],
                                  ["report", "{run}", "--out", "{tmp}/report.md"], ["gate", "{run}"]])
def test_a_umask_that_takes_the_owners_permissions_is_refused_before_anything_is_made(
        suite_with_a_run: tuple[Path, Path], tmp_path: Path, argv: list[str]) -> None:
    """Under ``umask 777`` a run made a folder of mode 0 and stopped on ``…/.lock: Permission denied`` (as a user
    bound by file modes), leaving the empty folder; ``init`` left a ``.oloproof-init-…`` folder while saying
    "nothing was written"; ``gate`` left a ``frames.tmp-…`` folder in the run folder each time. As root each made
    files of mode 0 that no one else can read. Now: one line naming the umask and what to set, exit 2, nothing
    made."""
    suite, run = suite_with_a_run
    (run / "frames").rename(tmp_path / "frames-aside")  # gate would build the columnar copy again
    before = _tree(tmp_path)
    done = subprocess.run([*COMMAND, *(a.format(suite=suite, run=run, tmp=tmp_path) for a in argv)],
                          capture_output=True, text=True, timeout=120, umask=0o777)
    assert done.returncode == 2
    assert done.stderr == ("oloproof: error: umask 0777: the files and folders this command makes would be mode 0000 "
                           "and 0000, which their owner cannot read back; set a umask that leaves the owner read, "
                           "write and search (umask 022, or 077 to keep them private), then run the command again\n")
    assert _tree(tmp_path) == before


def test_the_umask_is_refused_exactly_when_it_takes_one_of_the_owners_permissions(
        suite_with_a_run: tuple[Path, Path], tmp_path: Path) -> None:
    """Boundary: umask 077 (private files; the owner keeps read, write and search) runs as usual and its files
    are 0o600; each of the owner's three bits is refused. ``receipt`` (a completion hook) makes no file, so the
    umask is none of its business."""
    suite, _ = suite_with_a_run
    for mask, code in [(0o077, 1), (0o100, 2), (0o200, 2), (0o400, 2)]:
        out = tmp_path / f"out-{mask:o}"
        done = subprocess.run([*COMMAND, "run", str(suite), "--quiet", "--out", str(out)],
                              capture_output=True, text=True, timeout=120, umask=mask)
        assert done.returncode == code, (mask, done.stderr)
        assert (f"oloproof: error: umask {mask:04o}:" in done.stderr) == (code == 2)
        assert out.exists() == (code == 1)
    assert (tmp_path / "out-77" / "manifest.json").stat().st_mode & 0o777 == 0o600  # 0o666 less the umask
    (tmp_path / "report.json").write_text("{}\n", encoding="utf-8")
    contract = tmp_path / "contract.json"
    contract.write_text('{"artifact_id": "r", "locator": "report.json", "run_started_at": "2020-01-01T00:00:00Z"}',
                        encoding="utf-8")
    done = subprocess.run([*COMMAND, "receipt", str(contract)], capture_output=True, text=True, timeout=120,
                          umask=0o777)
    assert done.returncode == 0, done.stderr


def test_an_error_of_no_file_in_a_deleted_current_folder_is_not_blamed_on_the_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """With the current folder deleted, every OSError naming no file was said to be the folder's
    ("the current folder no longer exists (deleted …: No space left on device)"), a full disk or a refused
    connection included. Only "No such file or directory" is (a relative path made absolute against the folder)."""
    import errno

    from oloproof_nb.cli import commands

    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    for exc in (OSError(errno.ENOSPC, "No space left on device"),
                ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")):
        def fails(_: object, exc: OSError = exc) -> int:
            raise exc
        monkeypatch.setitem(commands.COMMANDS, "receipt", fails)  # receipt: no umask check before it
        assert main(["receipt", str(tmp_path / "contract.json")]) == 2
        assert capsys.readouterr().err == f"oloproof: error: {exc.strerror}\n"
    monkeypatch.setitem(commands.COMMANDS, "receipt", lambda _: os.getcwd())  # the folder's own error still says so
    assert main(["receipt", str(tmp_path / "contract.json")]) == 2
    assert capsys.readouterr().err.startswith("oloproof: error: the current folder no longer exists (deleted")


@pytest.fixture
def umask_kept() -> Iterator[None]:
    """The process's umask put back after a test that sets its own."""
    old = os.umask(0o022)
    os.umask(old)
    try:
        yield
    finally:
        os.umask(old)


def test_the_umask_line_gives_the_modes_the_command_would_make(
        umask_kept: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Under umask 0230 (the owner's write bit taken) the line gives the modes of files and of
    folders, by hand: 0o666 & ~0o230 = 0o446 and 0o777 & ~0o230 = 0o547 (under umask 777 both were 0000)."""
    assert 0o666 & ~0o230 == 0o446 and 0o777 & ~0o230 == 0o547
    os.umask(0o230)
    assert main(["gate", str(tmp_path / "no-run")]) == 2
    assert capsys.readouterr().err.startswith("oloproof: error: umask 0230: the files and folders this command "
                                              "makes would be mode 0446 and 0547, which their owner cannot read back")


@pytest.mark.parametrize("argv", [["init", "--example", "false-success", "{tmp}/new"], ["run", "{tmp}/no-suite"],
                                  ["gate", "{tmp}/no-run"], ["report", "{tmp}/no-run", "--out", "{tmp}/r.md"],
                                  ["compare", "{tmp}/no-base", "{tmp}/no-candidate"]])
def test_every_command_that_makes_files_is_refused_under_a_blinding_umask(
        umask_kept: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    """Each of the five commands that make files (``compare`` opens two run folders, which
    builds their columnar copies) is refused before it looks at its arguments; ``receipt`` is not."""
    os.umask(0o700)
    assert main([a.format(tmp=tmp_path) for a in argv]) == 2
    assert capsys.readouterr().err.startswith("oloproof: error: umask 0700:")
    assert list(tmp_path.iterdir()) == []
    assert main(["receipt", str(tmp_path / "no-contract.json")]) == 2
    assert "contract error" in capsys.readouterr().err


def test_the_umask_is_read_and_left_as_it_was_where_proc_cannot_be_read(
        umask_kept: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``/proc/self/status`` (macOS, a container that hides it) the umask is read by
    setting it and putting it back: 0o027 read, and 0o027 still the process's afterwards."""
    from oloproof_nb.cli import dispatch

    tried: list[object] = []

    def no_proc(path: object, *_: object, **__: object) -> None:
        tried.append(path)
        raise FileNotFoundError(2, "No such file or directory", "/proc/self/status")
    monkeypatch.setattr(dispatch, "open", no_proc, raising=False)
    os.umask(0o027)
    assert dispatch._umask() == 0o027
    assert tried == ["/proc/self/status"]  # the fallback was what answered (/proc gives 0o027 too, where it is)
    assert os.umask(0o022) == 0o027


def test_an_os_error_naming_no_file_is_blamed_on_the_current_folder_only_when_it_is_gone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An OSError without a file name (a full disk when the output is flushed) is its own words
    while the current folder exists; once ``os.getcwd`` fails the line says the folder is gone, with the error's
    words and what to do."""
    from oloproof_nb.cli.output import os_error_line

    full = OSError(28, "No space left on device")
    assert os_error_line(full) == "No space left on device"

    def gone() -> str:
        raise FileNotFoundError(2, "No such file or directory")
    monkeypatch.setattr(os, "getcwd", gone)
    assert os_error_line(FileNotFoundError(2, "No such file or directory")) == (
        "the current folder no longer exists (deleted after the shell entered it: No such file or directory); cd to "
        "a folder that exists and run the command again, or give absolute paths")
    assert os_error_line(OSError(13, "Permission denied", "/x/y")) == "/x/y: Permission denied"  # a file named


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("buffered", [True, False])
@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["gate", "--help"]])
def test_help_and_version_lost_on_a_full_disk_are_exit_2(argv: list[str], buffered: bool) -> None:
    """``oloproof --version > /dev/full`` exited 0 having written nothing: argparse ignores an error of its write
    (unbuffered), and the buffered text failed only in the flush as the process ended, whose error was ignored
    too. Output that could not be written is exit 2 with one line, as a command's is; whether the stream is
    buffered does not change it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    with open("/dev/full", "wb") as full:
        done = subprocess.run([*COMMAND, *argv], stdout=full, stderr=subprocess.PIPE, env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr == b"oloproof: error: standard output: No space left on device\n"


@pytest.mark.parametrize("argv", [["--version"], ["--help"]])
def test_help_and_version_whose_reader_left_keep_exit_0(argv: list[str]) -> None:
    """A reader that left (``oloproof --help | head -c0``) loses the text and keeps the code, as a command's output
    does (README: a stream whose reader left changes no exit code); nothing is said on stderr."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([*COMMAND, *argv], stdout=write, stderr=subprocess.PIPE, timeout=120)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, b"")
