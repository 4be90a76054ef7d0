"""What ``op.export_table`` does with what is already at its path.

Decided (DESIGN.md and the README said nothing; the docstring said "an existing file is overwritten"): a regular
file there is replaced, as ``DataFrame.to_csv`` replaces it (a notebook cell run again writes the same path), and
whole or not at all; a folder there, or a link to one, is refused in one line naming it before anything is
written (before: ``cannot write (Is a directory)`` for a folder, and a link to a folder was replaced by a file).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _hostile_files import bounded

import oloproof_nb as op
from oloproof_nb._display.export import EXPORT_SUFFIXES
from oloproof_nb.errors import ExportError

TABLE = pd.DataFrame({"criterion": ["answer_matches"], "rate": [0.75]})


def _dot_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(".*"))


@pytest.mark.parametrize("suffix", EXPORT_SUFFIXES)
def test_a_folder_at_the_path_is_refused_and_kept(tmp_path: Path, suffix: str) -> None:
    folder = tmp_path / f"gate{suffix}"
    folder.mkdir()
    (folder / "mine.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(ExportError) as info:
        op.export_table(TABLE, folder)
    assert str(info.value) == (f"{folder}: is a folder, not a file; give the export a file path (such as "
                               f"{folder / ('table' + suffix)}); the folder is left as it is")
    assert sorted(p.name for p in folder.iterdir()) == ["mine.txt"] and _dot_files(tmp_path) == []


def test_a_link_to_a_folder_is_refused_and_the_link_kept(tmp_path: Path) -> None:
    """Before, the link was replaced by the export (a file) without a word."""
    target = tmp_path / "reports"
    target.mkdir()
    link = tmp_path / "gate.md"
    link.symlink_to(target)
    with pytest.raises(ExportError, match=r"gate\.md: is a symbolic link to a folder, not a file; "):
        op.export_table(TABLE, link)
    assert link.is_symlink() and list(target.iterdir()) == [] and _dot_files(tmp_path) == []


def test_a_file_there_is_replaced_whole(tmp_path: Path) -> None:
    """The documented choice: the user named the path; the old content is gone, the new one complete."""
    path = tmp_path / "gate.csv"
    path.write_text("criterion,rate\nold,0.1\nolder,0.2\nlongest of all,0.3\n", encoding="utf-8")
    op.export_table(TABLE, path)
    assert path.read_text(encoding="utf-8") == "criterion,rate\nanswer_matches,0.75\n"


@pytest.mark.parametrize("suffix", EXPORT_SUFFIXES)
def test_a_write_that_fails_half_way_leaves_the_old_file_whole(tmp_path: Path, suffix: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Half the bytes reach the disk, then it is full: the earlier export is kept byte for byte, no temporary
    file is left, and one error names the path."""
    path = tmp_path / f"gate{suffix}"
    op.export_table(TABLE.assign(rate=[0.5]), path)
    before = path.read_bytes()
    real = os.fdopen

    def full_disk(fd: int, *args: Any, **kwargs: Any) -> Any:
        handle = real(fd, *args, **kwargs)

        def write(data: bytes) -> int:
            handle.raw.write(data[: len(data) // 2])
            raise OSError(28, "No space left on device")

        handle.write = write
        return handle

    monkeypatch.setattr(os, "fdopen", full_disk)
    with pytest.raises(ExportError, match=r"gate\.\w+: cannot write \(No space left on device\)$"):
        op.export_table(TABLE, path)
    assert path.read_bytes() == before and _dot_files(tmp_path) == []


def test_a_named_pipe_at_the_path_is_replaced_never_opened(tmp_path: Path) -> None:
    pipe = tmp_path / "gate.json"
    os.mkfifo(pipe)
    bounded(lambda: op.export_table(TABLE, pipe), 30, unblock=[pipe])
    assert pipe.is_file() and '"answer_matches"' in pipe.read_text(encoding="utf-8")


@pytest.mark.parametrize("linked", [False, True])
def test_a_read_only_file_at_the_path_is_refused_and_kept(tmp_path: Path, linked: bool) -> None:
    """``chmod a-w gate.csv``: ``DataFrame.to_csv`` refuses the file ("Permission denied"), but the export renamed a
    new file over it, which the folder allows whatever the file's mode, and the released table was gone. Run bound
    by file modes (as root, in a user namespace of its own), as a user is."""
    import subprocess
    import sys

    from _processes import without_root_powers

    prefix = without_root_powers()
    if prefix is None:
        pytest.skip("no way to run bound by file modes here (root without unshare -U, or Windows)")
    kept = tmp_path / "gate.csv"
    kept.write_text("criterion,rate\nreleased,0.9\n", encoding="utf-8")
    kept.chmod(0o444)
    path = tmp_path / "latest.csv" if linked else kept
    if linked:  # a link to the file is followed to it: the file is what is kept
        path.symlink_to(kept)
    script = ("import pandas as pd\nimport oloproof_nb as op\nfrom oloproof_nb.errors import ExportError\n"
              f"try:\n    op.export_table(pd.DataFrame({{'criterion': ['new'], 'rate': [0.1]}}), {str(path)!r})\n"
              "    print('written')\nexcept ExportError as exc:\n    print(exc)\n")
    done = subprocess.run([*prefix, sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout == (f"{path}: is read-only, so it is kept; make it writable first (chmod u+w), or choose "
                           "another path\n"), done.stderr
    assert kept.read_text(encoding="utf-8") == "criterion,rate\nreleased,0.9\n"
    assert _dot_files(tmp_path) == [] and (not linked or path.is_symlink())


def test_only_a_regular_file_is_read_only() -> None:
    """``read_only`` is of a file ``open(path, "w")`` would refuse: a folder or a named pipe without write permission
    is not one (a report replaces a pipe in its files folder, and names a folder as a folder), a file without it is.
    Run bound by file modes, as a user is."""
    import subprocess
    import sys

    from _processes import without_root_powers

    prefix = without_root_powers()
    if prefix is None or not hasattr(os, "mkfifo"):
        pytest.skip("no way to run bound by file modes here (root without unshare -U, or Windows)")
    script = ("import os, sys, tempfile\nfrom pathlib import Path\nfrom oloproof_nb._display.export import read_only\n"
              "root = Path(tempfile.mkdtemp())\n(root / 'folder').mkdir()\nos.mkfifo(root / 'pipe')\n"
              "(root / 'file').write_text('kept')\n"
              "for name in ('folder', 'pipe', 'file'):\n"
              "    os.chmod(root / name, 0o555 if name == 'folder' else 0o444)\n"
              "print([read_only(root / name) for name in ('folder', 'pipe', 'file', 'nothing')])\n"
              "for name in ('folder', 'pipe', 'file'):\n    os.chmod(root / name, 0o755)\n"
              "(root / 'folder').rmdir(); (root / 'pipe').unlink(); (root / 'file').unlink(); root.rmdir()\n")
    done = subprocess.run([*prefix, sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout == "[False, False, True, False]\n", done.stderr
