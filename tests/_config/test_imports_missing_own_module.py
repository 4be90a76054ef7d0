"""The system module's import of a module of the suite folder's own package that is not there.

A ``ModuleNotFoundError`` raised inside the system's module says "install the package that provides X in
the Python that runs oloproof". Where X is a module of a package the suite folder holds (``tools.fmt`` with the
folder's ``tools/`` imported, ``fmt.py`` left out of the copy), there is nothing to install: the line now names the
file the suite's package lacks. A look-alike case id names the line of the id it reads as, as a duplicate does.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.errors import ConfigError

DESK = '''
from tools.fmt import tidy


class Desk:
    version = "desk-f52"

    def run(self, input):
        return {"steps": [], "answer": "ok", "status": "completed"}
'''


def _suite(folder: Path, desk: str, package: str = "tools") -> Path:
    folder.mkdir()
    (folder / "desk.py").write_text(desk, encoding="utf-8")
    (folder / package).mkdir()
    (folder / package / "__init__.py").write_text("", encoding="utf-8")
    (folder / "oloproof.yaml").write_text("name: f52\nsystem: desk:Desk\nevaluators:\n  - {type: answer_matches}\n",
                                          encoding="utf-8")
    (folder / "cases.jsonl").write_text(json.dumps({"id": "c0", "input": {}, "expected": {"answer": "ok"}}) + "\n",
                                        encoding="utf-8")
    return folder


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_module_the_suites_own_package_lacks_is_named_as_a_file_not_a_package_to_install(tmp_path: Path) -> None:
    folder = _suite(tmp_path / "desk_f52_a", DESK.replace("tools", "tools_f52a"), package="tools_f52a")
    before = _files(folder)
    with pytest.raises(ConfigError) as caught:
        op.load_suite(folder)
    message = str(caught.value)
    # before: "… No module named 'tools_f52a.fmt': install the package that provides 'tools_f52a.fmt' in the Python …"
    assert "install the package" not in message
    assert caught.value.key == "system"
    assert ("importing 'desk' raised ModuleNotFoundError: No module named 'tools_f52a.fmt': the suite folder's "
            "package 'tools_f52a' has no tools_f52a/fmt.py (a module of its own, not a package to install); add the "
            "file, or fix the import") in message
    assert _files(folder) == before  # nothing written in the suite folder


def test_a_module_missing_from_an_installed_package_still_says_to_install_it(tmp_path: Path) -> None:
    """``json`` is the standard library's: a module it lacks is not the suite's to add (that line stands)."""
    folder = _suite(tmp_path / "desk_f52_b", DESK.replace("tools.fmt", "json.no_such_f52"))
    with pytest.raises(ConfigError) as caught:
        op.load_suite(folder)
    assert (f"install the package that provides 'json.no_such_f52' in the Python that runs oloproof "
            f"({sys.executable}), or fix the import") in str(caught.value)
