"""Run-folder messages a CI job meets (a platform team gating every pull request).

- a retried job's ``--resume`` in a fresh workspace (no folder, or an empty one) said ``not a run directory (no
  manifest.json)``, not that there is nothing to resume and what to run instead;
- a read-only checkout's run said ``cannot create the run directory (Permission denied)``, not to give an ``--out``
  where the job can write;
- a journal another user wrote under ``umask 077`` said ``cannot read: Permission denied; a run directory holds only
  the files oloproof wrote there``, advice about a pipe put in a journal's place, not about its permissions.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

import oloproof_nb as op
from oloproof_nb._run import lock as lock_module
from oloproof_nb._run import store as store_module
from oloproof_nb.errors import RunDirError

CASES = [{"id": f"c{i}", "input": {"answer": f"done {i}"}, "initial_state": {}, "expected": {"answer": f"done {i}"}}
         for i in range(2)]


def test_a_resume_with_no_folder_says_there_is_nothing_to_resume_and_to_start_the_run(make_suite: Any,
                                                                                       tmp_path: Path) -> None:
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))
    out = tmp_path / "fresh workspace" / "pr-run"
    with pytest.raises(RunDirError) as caught:
        op.run(suite, out=out, resume=True, progress=False)
    # before: "…/pr-run: not a run directory (no manifest.json)"
    assert str(caught.value) == f"{out}: no run to resume (no such folder); start the run without resume=True"
    assert not out.exists()


def test_a_resume_of_an_empty_folder_says_to_start_the_run_which_then_reuses_it(make_suite: Any,
                                                                                 tmp_path: Path) -> None:
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))
    out = tmp_path / "pr-run"
    out.mkdir()  # a CI step's `mkdir -p`, or a kill before the manifest was written
    with pytest.raises(RunDirError) as caught:
        op.run(suite, out=out, resume=True, progress=False)
    assert str(caught.value) == (f"{out}: no run to resume (the folder holds no manifest.json: no run started there, "
                                 "or it was stopped before its manifest was written); start the run without "
                                 "resume=True, which reuses this folder")
    assert list(out.iterdir()) == []
    run = op.run(suite, out=out, progress=False)  # as the message says
    assert len(run.cases) == 2


def test_a_resume_of_a_folder_holding_other_files_is_still_no_run_directory(make_suite: Any, tmp_path: Path) -> None:
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))
    out = tmp_path / "notes"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")  # a new run would refuse it: not "start the run"
    with pytest.raises(RunDirError, match=r"notes: not a run directory \(no manifest\.json\)$"):
        op.run(suite, out=out, resume=True, progress=False)


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS])
def test_a_run_folder_that_may_not_be_made_says_to_choose_an_out_that_can_be_written(
        make_suite: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))

    def refused(directory: Path) -> None:  # a read-only checkout (root's tests cannot make one by its modes)
        raise OSError(code, os.strerror(code), str(directory))

    monkeypatch.setattr(store_module, "make_folders", refused)
    out = tmp_path / "ro" / "runs" / "r1"
    with pytest.raises(RunDirError) as caught:
        op.run(suite, out=out, progress=False)
    assert str(caught.value) == (f"{out}: cannot create the run directory ({os.strerror(code)}); choose another "
                                 "out= in a folder you can write (outside a read-only checkout)")


@pytest.mark.parametrize("code", [errno.EACCES, errno.EPERM, errno.EROFS])
def test_a_run_folder_whose_lock_may_not_be_opened_says_this_user_may_not_write_it(
        make_suite: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """An empty folder this user may not write (``mkdir ro; chmod a-w ro; --out ro``): the folder exists, so nothing
    is made, and the first thing written is the lock. It said only ``.lock: cannot open the run's lock file
    (Permission denied)``, where a folder that cannot be made says to choose an ``out=`` that can be written."""
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))
    real_open_fd = lock_module.open_fd

    def refused(path: Path, flags: int, mode: int = 0o644) -> int:  # root's tests cannot make one by its modes
        if path.name == ".lock":
            raise OSError(code, os.strerror(code), str(path))
        return real_open_fd(path, flags, mode)

    monkeypatch.setattr(lock_module, "open_fd", refused)
    out = tmp_path / "ro"
    out.mkdir()
    with pytest.raises(RunDirError) as caught:
        op.run(suite, out=out, progress=False)
    assert str(caught.value) == (f"{out / '.lock'}: cannot open the run's lock file ({os.strerror(code)}); this user "
                                 "may not write the run folder, which a run and its resume write into: choose another "
                                 "out= in a folder you can write, or make this one writable to resume its run")
    assert list(out.iterdir()) == []


def test_another_error_making_the_run_folder_gets_no_advice_about_permissions(
        make_suite: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))

    def full(directory: Path) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(directory))

    monkeypatch.setattr(store_module, "make_folders", full)
    out = tmp_path / "r1"
    with pytest.raises(RunDirError) as caught:
        op.run(suite, out=out, progress=False)
    assert str(caught.value) == f"{out}: cannot create the run directory ({os.strerror(errno.ENOSPC)})"


@pytest.mark.parametrize("name", ["cases.jsonl", "manifest.json"])
def test_a_run_file_this_user_may_not_read_says_so_not_that_oloproof_wrote_it(
        make_suite: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))
    out = tmp_path / "baseline"
    op.run(suite, out=out, progress=False)
    real_open = os.open

    def denied(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:  # another user's file, mode 0600
        if Path(os.fsdecode(path)) == out / name:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fsdecode(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(RunDirError) as caught:
        op.load_run(out)
    assert str(caught.value) == (f"{out / name}: cannot read: Permission denied; this user may not read the run "
                                 "folder's files: one another user wrote under umask 077 is theirs alone; have its "
                                 "owner make it readable (chmod -R a+rX), or unpack its archive as this user")


def test_a_resume_of_a_link_to_nothing_is_no_run_directory_not_a_missing_folder(make_suite: Any,
                                                                                tmp_path: Path) -> None:
    """``out`` a symbolic link whose target is gone is something there (os.path.lexists), not "no such
    folder" with the advice to start the run, which cannot make its folder there: the link, named with where it
    points, as a load names it (it said "not a run directory (no manifest.json)")."""
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))
    out = tmp_path / "pr-run"
    out.symlink_to(tmp_path / "gone")
    assert os.path.lexists(out) and not os.path.exists(out)
    with pytest.raises(RunDirError) as caught:
        op.run(suite, out=out, resume=True, progress=False)
    assert str(caught.value) == (f"{out}: is a dangling symbolic link (it points to '{tmp_path / 'gone'}', which does "
                                 "not exist); point it at a run directory, or remove it")


def test_a_resume_of_a_file_is_no_run_directory(make_suite: Any, tmp_path: Path) -> None:
    """A file at ``out`` (os.path.isfile) is no folder to list: no run directory, said as a file (it was "not a run
    directory (no manifest.json)", as if a manifest could be looked for in it), as a new run at a file says it."""
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))
    out = tmp_path / "pr-run"
    out.write_text("notes\n", encoding="utf-8")
    assert os.path.isfile(out)
    with pytest.raises(RunDirError) as caught:
        op.run(suite, out=out, resume=True, progress=False)
    assert str(caught.value) == (f"{out}: is a file, not a run directory; choose another out= (the run directory "
                                 "to resume)")
    assert out.read_text(encoding="utf-8") == "notes\n"


def test_a_resume_of_a_named_pipe_is_no_run_directory(make_suite: Any, tmp_path: Path) -> None:
    """A named pipe at ``out`` is no folder either: said as a new run at one says it (it was "not a run directory
    (no manifest.json)"), and never opened (a pipe with no writer would block)."""
    suite = op.load_suite(make_suite(CASES, evaluators=[{"type": "answer_matches"}]))
    out = tmp_path / "pr-run"
    os.mkfifo(out)
    with pytest.raises(RunDirError) as caught:
        op.run(suite, out=out, resume=True, progress=False)
    assert str(caught.value) == (f"{out}: is a file, not a run directory; choose another out= (the run directory "
                                 "to resume)")
