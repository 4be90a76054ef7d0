"""The bundled example suites and ``oloproof init``."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

from .errors import OloproofError

__all__ = ["EXAMPLES", "example_dir", "init_example"]

EXAMPLES: tuple[str, ...] = ("stateful-agent", "false-success")
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


def _check_overwrite(source: Path, target: Path, labels: list[Path]) -> None:
    """Refuse, before anything is written, a destination the example cannot be copied over whole: a folder where
    the example has a file, a file where it has a folder, a named pipe or device, or a symbolic link (written
    through, it would change a file outside the destination). Copying over it stopped half way, the files
    before the obstacle already overwritten."""
    for folder, dirs, files in os.walk(source):
        here = Path(folder)
        ignored = _SKIP(folder, dirs + files)
        dirs[:] = [d for d in dirs if d not in ignored]
        for entry in [*dirs, *(f for f in files if f not in ignored)]:
            there = target / (here / entry).relative_to(source)
            if there.is_symlink():
                raise OloproofError(f"{there}: is a symbolic link; init --force writes the example's own files "
                                    "there and never through a link (remove it, or choose another destination)")
            if not there.exists():
                continue
            want_dir = entry in dirs
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
    it was, and the error names ``dest`` in one line.
    """
    source = example_dir(name)
    target = Path(dest) if dest is not None else Path(name)
    if target.exists() and not target.is_dir():
        raise OloproofError(f"{target}: exists and is not a folder; choose another destination")
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
    staging = (target if target.exists() else target.parent) / f".oloproof-init-{uuid.uuid4().hex[:8]}"
    apart = [rel for rel in labels if not (source / rel).exists()]  # from the shipped labels/ folder
    try:
        try:
            shutil.copytree(source, staging, ignore=_SKIP, copy_function=_copy_or_stop)
            for rel in apart:
                (staging / rel).parent.mkdir(parents=True, exist_ok=True)
                _copy_or_stop(_data_root("labels") / rel.name, staging / rel)
        except (OSError, _CopyStopped) as exc:
            cause = exc.args[0] if isinstance(exc, _CopyStopped) else exc
            raise OloproofError(f"{target}: cannot copy the example there ({cause.strerror or type(cause).__name__}); "
                                "nothing was written") from None
        _move_into_place(staging, target, apart)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


class _CopyStopped(Exception):
    """An OSError met while copying a file, carried out of ``shutil.copytree`` (which would note it and go on)."""


def _copy_or_stop(src: str | Path, dst: str | Path) -> None:
    try:
        shutil.copy2(src, dst)
    except OSError as exc:
        raise _CopyStopped(exc) from None


def _move_into_place(staging: Path, target: Path, labels: list[Path]) -> None:
    """Move the example copied whole into ``staging`` to ``target``: the folder itself when there is none yet,
    else file by file (one rename each, so a file there is the old one or the example's, never half of one); a
    file of ``labels`` (the label files copied from the shipped ``labels/`` folder) already in ``target`` is
    kept."""
    if not target.exists():
        os.replace(staging, target)
        return
    for folder, _dirs, files in os.walk(staging):
        there = target / Path(folder).relative_to(staging)
        there.mkdir(exist_ok=True)
        for name in files:
            rel = (there / name).relative_to(target)
            if rel in labels and (target / rel).exists():
                continue
            os.replace(Path(folder) / name, there / name)
