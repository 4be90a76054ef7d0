"""Edges of the edited-code logic (a suite loaded without its code, then given it) and of the message for a
module the system cannot import, that the other suite tests miss. Module names are this file's own (Python keeps
one module of a name per process)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import oloproof_nb as op
from oloproof_nb.errors import ConfigError

DESK = '''class Desk:
    version = "desk"

    def run(self, input):
        return {"steps": [], "answer": "no", "status": "completed"}
'''

ACCEPT_ALL = "def answer_ok(case, initial_state, final_state, trajectory):\n    return True\n"
REFUSE_ALL = ACCEPT_ALL.replace("True", "False")


def test_a_suite_loaded_without_its_code_then_given_it_runs_once_its_edit_is_undone(
        make_suite: Callable[..., Path], tmp_path: Path) -> None:
    """An edit undone after a second load, for a suite loaded with ``import_system_now=False`` and given its code
    by ``with_user_code``: the check edited, the suite loaded again, the edit undone. The first suite holds the
    file's code again and runs (3 of 3 pass, as ACCEPT_ALL says). Kills ``with_user_code`` dropping ``code_files``
    (then the check's module was looked up by name, the second load's, and the first suite was refused as edited)."""
    root = make_suite([{"id": f"c{i}", "input": {"n": i}} for i in range(3)],
                      evaluators=[{"type": "python", "name": "answer_ok", "check": "m55a_checks:answer_ok"}],
                      system="sysmod:Desk", system_code=DESK, folder="m55a")
    check = root / "m55a_checks.py"
    check.write_text(ACCEPT_ALL, encoding="utf-8")
    first = op.load_suite(root, import_system_now=False).with_user_code()
    check.write_text(REFUSE_ALL, encoding="utf-8")
    op.load_suite(root)
    check.write_text(ACCEPT_ALL, encoding="utf-8")
    run = op.run(first, out=tmp_path / "first", progress=False)
    assert list(run.verdicts["verdict"]) == ["pass"] * 3


def _system_folder(folder: Path, module: str, code: str) -> Path:
    folder.mkdir()
    (folder / f"{module}.py").write_text(code, encoding="utf-8")
    (folder / "oloproof.yaml").write_text(f"name: m55\nsystem: {module}:Desk\n"
                                          "evaluators:\n  - {type: answer_matches}\n", encoding="utf-8")
    (folder / "cases.jsonl").write_text('{"id": "c0", "input": {"q": "x"}, "expected": {"answer": "ok"}}\n',
                                        encoding="utf-8")
    return folder


def test_a_missing_dependency_whose_name_starts_the_module_s_is_still_named_as_such(tmp_path: Path) -> None:
    """``m55deskbot.py`` imports ``m55desk`` (not installed): the module was found, its dependency was not, so the
    line says which package to install. Kills ``startswith(missing)`` without the dot ('m55deskbot' starts with
    'm55desk', and the line said ``cannot import 'm55deskbot'`` as if the suite's module were missing)."""
    folder = _system_folder(tmp_path / "s", "m55deskbot", "import m55desk\n\n" + DESK)
    with pytest.raises(ConfigError) as caught:
        op.load_suite(folder)
    assert str(caught.value) == (
        f"{folder / 'oloproof.yaml'}: system: importing 'm55deskbot' raised ModuleNotFoundError: No module named "
        f"'m55desk': install the package that provides 'm55desk' in the Python that runs oloproof ({sys.executable}),"
        " or fix the import")


def test_a_dotted_system_whose_package_is_not_there_is_cannot_import(tmp_path: Path) -> None:
    """``system: m55nopkg.agent:Desk`` where no ``m55nopkg`` exists: the module named is what is missing (its
    package), not a dependency of it, so the line is ``cannot import`` as for a top-level module. Kills dropping
    the ``startswith(missing + ".")`` clause (the line told the user to install 'm55nopkg')."""
    folder = _system_folder(tmp_path / "s", "m55other", DESK)
    (folder / "oloproof.yaml").write_text("name: m55\nsystem: m55nopkg.agent:Desk\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        op.load_suite(folder)
    message = str(caught.value)
    assert message.startswith(f"{folder / 'oloproof.yaml'}: system: cannot import 'm55nopkg.agent' from ")
    assert message.endswith("No module named 'm55nopkg'")
    assert "install the package" not in message
