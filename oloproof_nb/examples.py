"""The bundled example suites and ``oloproof init``."""

from __future__ import annotations

import shutil
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


def init_example(name: str, dest: str | Path | None = None, *, force: bool = False) -> Path:
    """Copy a bundled example suite to ``dest`` (default ``./<name>``) and return its path.

    The label files its transforms declare (``labels/<transform>.jsonl``) are
    copied from the shipped ``labels/`` folder. An existing, non-empty ``dest``
    is an error unless ``force``: then the example's files are written over
    the copies there (its ``runs/`` and any other file are kept).
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
    shutil.copytree(source, target, ignore=_SKIP, dirs_exist_ok=True)
    import yaml  # imported on first use: keeps ``import oloproof_nb`` fast

    config = yaml.safe_load((source / "oloproof.yaml").read_text(encoding="utf-8")) or {}
    for transform in (config.get("metamorphic") or {}).get("transforms") or []:
        rel = Path(transform["validity_labels"])
        if not (target / rel).exists():
            shipped = _data_root("labels") / rel.name
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shipped, target / rel)
    return target
