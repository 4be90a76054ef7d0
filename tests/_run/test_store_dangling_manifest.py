"""A run folder whose ``manifest.json`` is a symbolic link to nothing (a copy that kept a link, a folder moved): it
was "not a run directory (no manifest.json)", which sent the user looking for a file that is there, as a link. It
now names the link and where it points, in the words every file read gives a dangling link
(``files.dangling_link``)."""

from __future__ import annotations

from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb._run.store import read_manifest
from oloproof_nb.errors import RunDirError


def test_a_manifest_that_is_a_dangling_link_names_the_link_and_where_it_points(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").symlink_to(tmp_path / "gone" / "manifest.json")
    expected = (f"{run / 'manifest.json'}: is a dangling symbolic link (it points to "
                f"'{tmp_path / 'gone' / 'manifest.json'}', which does not exist); point it at the file, or remove it")
    with pytest.raises(RunDirError) as caught:
        read_manifest(run)
    assert str(caught.value) == expected
    with pytest.raises(RunDirError) as caught:
        op.load_run(run)
    assert str(caught.value) == expected



def _a_run(folder: Path) -> Path:
    """A run folder as a run that was stopped leaves it: its manifest, no finish."""
    from oloproof_nb._core.records import Manifest
    from oloproof_nb._run.store import RunStore

    manifest = Manifest(suite="s", run_id="x", started_at="2026-01-01T00:00:00.000000Z", oloproof_nb="0", n_cases=0)
    RunStore.create(folder, manifest).close()
    return folder


def test_a_resume_names_a_dangling_manifest_or_run_folder_as_a_load_does(tmp_path: Path) -> None:
    """A resume said "not a run directory (no manifest.json)" of both, where ``op.load_run`` named the link: the
    same folder was two different mistakes depending on what was asked of it."""
    from oloproof_nb._run.store import RunStore

    run = _a_run(tmp_path / "run")
    (run / "manifest.json").unlink()
    (run / "manifest.json").symlink_to("../gone.json")
    with pytest.raises(RunDirError) as caught:
        RunStore.resume(run)
    assert str(caught.value) == (f"{run / 'manifest.json'}: is a dangling symbolic link (it points to "
                                 "'../gone.json', which does not exist); point it at the file, or remove it")
    (run / "manifest.json.tmp").write_text("{}", encoding="utf-8")  # a kill's leftover never replaces the link
    with pytest.raises(RunDirError, match="manifest.json: is a dangling symbolic link"):
        RunStore.resume(run)
    assert (run / "manifest.json").is_symlink()
    (tmp_path / "linked").symlink_to("moved")
    with pytest.raises(RunDirError) as caught:
        RunStore.resume(tmp_path / "linked")
    assert str(caught.value) == (f"{tmp_path / 'linked'}: is a dangling symbolic link (it points to 'moved', which "
                                 "does not exist); point it at a run directory, or remove it")


@pytest.mark.parametrize("journal", ["cases.jsonl", "replays.jsonl", "states.jsonl"])
def test_a_resume_refuses_a_journal_that_is_a_dangling_link_as_any_link(tmp_path: Path, journal: str) -> None:
    """Opened before the link was looked at, a dangling journal was told "point it at the file", and the resume
    then refused the link it pointed (a run folder's files are never written through a link)."""
    from oloproof_nb._run.store import RunStore

    run = _a_run(tmp_path / "run")
    if (run / journal).exists():
        (run / journal).unlink()
    (run / journal).symlink_to(tmp_path / "gone.jsonl")
    with pytest.raises(RunDirError) as caught:
        RunStore.resume(run)
    assert str(caught.value).startswith(f"{run / journal}: is a symbolic link; a run folder's files are written in "
                                        "place, never through a link")
    assert "point it at the file" not in str(caught.value)
