"""The test suite's layout, as README's Layout section states it: tests mirror the package
(``tests/<layer>/test_<module>[_<topic>].py``), and a file is named by what it tests, never by when it was written."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE, TESTS = ROOT / "oloproof_nb", ROOT / "tests"
#: Modules with nothing of their own to test: ``python -m oloproof_nb.cli`` calls ``main`` (the cli tests run it
#: through the console script), and ``_version`` holds one string.
NO_TESTS = {"cli/__main__.py", "_version.py"}


def test_every_module_has_a_test_file_named_after_it() -> None:
    missing = []
    for module in sorted(PACKAGE.rglob("*.py")):
        relative = module.relative_to(PACKAGE)
        if module.name == "__init__.py" or relative.as_posix() in NO_TESTS:
            continue
        folder = TESTS / relative.parent
        if not [*folder.glob(f"test_{module.stem}.py"), *folder.glob(f"test_{module.stem}_*.py")]:
            missing.append(relative.as_posix())
    assert missing == []


def test_no_test_file_is_named_after_a_review_round() -> None:
    # a suffix such as _m55 or _f62 (a review's letter and number) says nothing to a reader
    tagged = [p.relative_to(TESTS).as_posix() for p in TESTS.rglob("*.py") if re.search(r"_[a-z]\d+$", p.stem)]
    assert tagged == []


def test_the_layers_test_folders_exist() -> None:
    layers = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert layers == ["_analysis", "_config", "_core", "_display", "_run", "cli", "evaluators"]
    assert all((TESTS / layer).is_dir() for layer in layers)
