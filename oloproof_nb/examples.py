"""The bundled example suites and ``oloproof init``."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

from ._config.files import file_above, folder_problem
from .errors import OloproofError

__all__ = ["EXAMPLES", "example_dir", "init_example"]

EXAMPLES: tuple[str, ...] = ("stateful-agent", "false-success", "wrapped-benchmark")
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "runs", "baselines", ".oloproof", ".ipynb_checkpoints")


def _data_root(kind: str) -> Path:
    """``examples`` or ``labels``: inside an installed wheel, else the source checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_data" / kind, here.parent / kind):
        if candidate.is_dir():
            return candidate
    raise OloproofError(f"the bundled {kind} folder is missing from this installation ({here})")


def example_dir(name: str) -> Path:
    """The folder of a bundled example."""
    if name not in EXAMPLES:
        raise OloproofError(f"example {name!r} is not known; allowed: {', '.join(EXAMPLES)}")
    path = _data_root("examples") / name
    if not path.is_dir():
        raise OloproofError(f"the example {name!r} is missing from this installation")
    return path


def _example_entries(source: Path) -> Iterator[tuple[Path, bool]]:
    """The example's folders and files under ``source`` (paths relative to it; ``True`` for a folder), each folder
    before what it holds, less :data:`_SKIP`."""
    for folder, dirs, files in os.walk(source):
        here = Path(folder)
        ignored = _SKIP(folder, dirs + files)
        dirs[:] = [d for d in dirs if d not in ignored]
        yield from (((here / d).relative_to(source), True) for d in dirs)
        yield from (((here / f).relative_to(source), False) for f in files if f not in ignored)


def _check_overwrite(source: Path, target: Path, labels: list[Path]) -> None:
    """Refuse, before anything is written, a destination the example cannot be copied over whole: a folder where
    the example has a file, a file where it has a folder, a named pipe or device, or a symbolic link (written
    through, it would change a file outside the destination). Copying over it stopped half way, the files
    before the obstacle already overwritten."""
    for rel, want_dir in _example_entries(source):
        there = target / rel
        if there.is_symlink():
            raise OloproofError(f"{there}: is a symbolic link; init --force writes the example's own files "
                                "there and never through a link (remove it, or choose another destination)")
        if not there.exists():
            continue
        if want_dir and not there.is_dir():
            raise OloproofError(f"{there}: the example has a folder there, and this is not one; move it away "
                                "or choose another destination")
        if not want_dir and not there.is_file():
            what = "a folder" if there.is_dir() else "not a regular file"
            raise OloproofError(f"{there}: the example has a file there, and this is {what}; move it away or "
                                "choose another destination")
    for rel in labels:  # the label files' folders (the files themselves are copied only where there are none)
        for parent in reversed((target / rel).relative_to(target).parents[:-1]):
            there = target / parent
            if there.is_symlink() or (there.exists() and not there.is_dir()):
                raise OloproofError(f"{there}: the example keeps its labels in a folder there, and this is not one "
                                    "(or is a link); move it away or choose another destination")


def init_example(name: str, dest: str | Path | None = None, *, force: bool = False) -> Path:
    """Copy a bundled example suite to ``dest`` (default ``./<name>``) and return its path.

    The label files its transforms declare (``labels/<transform>.jsonl``) are
    copied from the shipped ``labels/`` folder. An existing, non-empty ``dest``
    is an error unless ``force``: then the example's files are written over
    the copies there (its ``runs/`` and any other file are kept), after checking
    that every one can be: a folder where the example has a file (or the other
    way round), a named pipe or a symbolic link there is refused, nothing written.
    The example is copied whole into a temporary folder first, then moved into
    place: a copy that fails (a full disk) or is interrupted leaves ``dest`` as
    it was (the missing parent folders it made for ``dest`` are removed again,
    never one that was there before), and the error names ``dest`` in one
    line; so does a folder there that cannot be written in, a ``dest``
    that is a link to nothing, or one below a file or a link to nothing. The
    files' contents are copied, not the installation's permissions: the copy
    is its user's to edit, even from a read-only installation.
    """
    source = example_dir(name)
    target = Path(dest) if dest is not None else Path(name)
    problem = folder_problem(target)
    if problem is not None:
        raise OloproofError(f"{target}: {problem}; choose another destination")
    if target.is_symlink() and not target.exists():
        raise OloproofError(f"{target}: is a symbolic link to nothing; init writes the example into a folder of its "
                            "own, never through a link (remove it, or choose another destination)")
    if target.exists() and not target.is_dir():
        raise OloproofError(f"{target}: exists and is not a folder; choose another destination")
    above = file_above(target)  # below a file or a link to nothing, it said "cannot copy the example there (File
    if above is not None:  # exists)" or "(Not a directory)", naming no path that is in the way
        raise OloproofError(f"{target}: nothing can be made there: {above}; choose another destination")
    if target.exists() and any(target.iterdir()) and not force:
        if (target / "oloproof.yaml").is_file():
            raise OloproofError(f"{target}: already holds a suite (set up earlier?); run it as it is, "
                                f"choose another destination, or copy the example over it with force=True")
        raise OloproofError(f"{target}: already exists and is not empty; choose another destination "
                            f"or copy over it with force=True")
    import yaml  # imported on first use: keeps ``import oloproof_nb`` fast

    config = yaml.safe_load((source / "oloproof.yaml").read_text(encoding="utf-8")) or {}
    labels = [Path(t["validity_labels"]) for t in (config.get("metamorphic") or {}).get("transforms") or []]
    if force and target.exists():
        _check_overwrite(source, target, labels)
    # copied whole into a folder of its own first, then moved into place: a copy cut short (a full disk, Ctrl-C)
    # left a suite with a truncated cases.jsonl that the next `oloproof init` called "set up earlier; run it"
    existed = target.exists()  # else the copy is put there whole (never merged into a folder made meanwhile)
    staging = (target if existed else target.parent) / f".oloproof-init-{uuid.uuid4().hex[:8]}"
    apart = [rel for rel in labels if not (source / rel).exists()]  # from the shipped labels/ folder
    made = _missing_folders(staging.parent)  # made for the copy: removed again if it fails, never one that was there
    try:
        try:
            staging.mkdir(parents=True)
            # the contents only, never the installation's modes: copied from a read-only installation (0555
            # folders), the copy could not take its labels, its user could not edit it or remove it
            for rel, is_dir in _example_entries(source):
                if is_dir:
                    (staging / rel).mkdir()
                else:
                    shutil.copyfile(source / rel, staging / rel)
            for rel in apart:
                (staging / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(_data_root("labels") / rel.name, staging / rel)
        except OSError as exc:
            raise OloproofError(f"{target}: cannot copy the example there ({exc.strerror or type(exc).__name__}); "
                                "nothing was written") from None
        _move_into_place(staging, target, apart, whole=not existed)
        made = []  # they hold the example now
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        _remove_empty(made)
    return target


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those of its parents that do not exist yet, deepest first: the folders a
    ``mkdir(parents=True)`` of it would make."""
    missing: list[Path] = []
    for path in (folder, *folder.parents):
        if path.exists() or path.is_symlink():
            break
        missing.append(path)
    return missing


def _remove_empty(folders: list[Path]) -> None:
    """Remove each of ``folders`` (deepest first) that is still an empty folder; one that now holds anything (made
    meanwhile by someone else, or written into) is left, and so are all above it. One that is no folder (never
    made: the ``mkdir`` stopped above it, at a name too long) is passed over, not taken for one that holds
    something."""
    for folder in folders:
        if not os.path.isdir(folder):
            continue
        try:
            folder.rmdir()
        except OSError:
            return


def _move_into_place(staging: Path, target: Path, labels: list[Path], *, whole: bool) -> None:
    """Move the example copied whole into ``staging`` to ``target``: the folder itself when there was none
    (``whole``), else file by file (one rename each, so a file there is the old one or the example's, never half
    of one), once every folder it goes into is found writable; a file of ``labels`` (the label files copied from
    the shipped ``labels/`` folder) already in ``target`` is kept. An error is one line naming ``target`` or the
    file the move stopped at."""
    if whole:
        try:
            os.replace(staging, target)
        except OSError as exc:  # another init made it meanwhile, or a link was put there
            raise OloproofError(f"{target}: cannot put the example there ({exc.strerror or type(exc).__name__}); "
                                "nothing was written") from None
        return
    moves = [(Path(folder) / name, target / Path(folder).relative_to(staging) / name)
             for folder, _dirs, files in os.walk(staging) for name in files]
    moves = [(src, dst) for src, dst in moves if not (dst.relative_to(target) in labels and dst.exists())]
    for _, dst in moves:  # a folder it cannot write in stopped the move half way, the files before it replaced
        folder = next(p for p in dst.parents if p.exists())
        if not os.access(folder, os.W_OK | os.X_OK):
            raise OloproofError(f"{folder}: cannot write in this folder, where the example puts "
                                f"{dst.relative_to(target)}; make it writable or choose another destination "
                                "(nothing was written)")
    for src, dst in moves:
        try:
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dst)
        except OSError as exc:
            raise OloproofError(f"{dst}: cannot put the example's file there ({exc.strerror or type(exc).__name__});"
                                " the files before it are the example's, the rest as they were: run init --force "
                                "again") from None
