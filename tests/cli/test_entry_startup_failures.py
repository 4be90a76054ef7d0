"""The ``oloproof`` command exits 2 with one line when the package cannot be imported.

A broken install (a dependency missing, or of a version without a name the package imports) or a memory limit
that refuses a compiled module raised out of the console script's import of ``oloproof_nb``: Python printed its
traceback and exited 1. ``oloproof gate`` exits 1 for BLOCK, and a completion hook runner takes 1 for "not
blocking", so ``oloproof receipt`` let the agent stop with no outcome verified.

Each test starts the real console script with a ``sitecustomize`` module (on ``PYTHONPATH``) that makes the import
of ``oloproof_nb`` fail the way ``H4_FAIL`` names.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

#: The installed console script (``pip install .`` / ``-e .`` make it next to the interpreter).
SCRIPT = Path(sys.executable).with_name("oloproof")

#: Makes the first look-up of ``oloproof_nb`` raise what ``H4_FAIL`` names: ``ImportError`` (a dependency's name
#: missing; its message spans lines and holds an ESC), ``MemoryError`` (a memory limit), ``exit`` (a module that
#: calls ``sys.exit`` with a message, as some do on a Python they do not support), ``exit 0``, ``exit 1`` and
#: ``exit none`` (with a number, with none).
SITECUSTOMIZE = textwrap.dedent('''
    import os
    import sys

    _FAIL = os.environ.get("H4_FAIL")


    class _FailOnImport:
        def find_spec(self, fullname, path=None, target=None):
            if fullname == "oloproof_nb":
                sys.meta_path.remove(self)
                if _FAIL == "ImportError":
                    raise ImportError("cannot import name 'TypeAdapter' from 'pydantic'\\n\\x1b[31m(old)")
                if _FAIL == "MemoryError":
                    raise MemoryError()
                if _FAIL in ("exit 0", "exit 1"):
                    sys.exit(int(_FAIL[-1]))
                if _FAIL == "exit none":
                    sys.exit()
                sys.exit("this package needs another Python")
            return None


    if _FAIL:
        sys.meta_path.insert(0, _FailOnImport())
''')


@pytest.fixture
def oloproof(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the console script with the import of ``oloproof_nb`` failing as ``fail`` names."""
    assert SCRIPT.exists(), f"the console script is not installed next to {sys.executable}: pip install -e ."
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")

    def run(*args: str, fail: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hooks), *filter(None, [os.environ.get(
            "PYTHONPATH")])]), "PYTHONWARNINGS": "ignore", "H4_FAIL": fail}
        return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=120)

    return run


IMPORT_ERROR = ("oloproof: error: the oloproof_nb package could not be imported: ImportError: cannot import name "
                "'TypeAdapter' from 'pydantic' \\x1b[31m(old)\n")


def write_contract(folder: Path) -> Path:
    """A contract whose artifact is there and fresh: it would verify."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.json").write_text('{"total": 3}\n', encoding="utf-8")
    contract = folder / "contract.json"
    contract.write_text(json.dumps({"artifact_id": "report", "locator": "report.json",
                                    "run_started_at": "2020-01-01T00:00:00Z"}), encoding="utf-8")
    return contract


def test_a_hook_whose_package_cannot_be_imported_blocks_with_one_line(oloproof: Callable[..., Any],
                                                                      tmp_path: Path) -> None:
    """Before: the traceback and exit 1, which a hook runner does not block on."""
    done = oloproof("receipt", str(write_contract(tmp_path / "task")), fail="ImportError")
    assert (done.returncode, done.stdout, done.stderr) == (2, "", IMPORT_ERROR)


def test_a_hook_whose_package_cannot_be_imported_says_so_in_json(oloproof: Callable[..., Any],
                                                                 tmp_path: Path) -> None:
    """``oloproof receipt --json`` gives one JSON object on every exit 2, this one included."""
    done = oloproof("receipt", str(write_contract(tmp_path / "task")), "--json", fail="ImportError")
    assert done.returncode == 2, done.stderr
    assert done.stdout.count("\n") == 1
    assert json.loads(done.stdout) == {"error": "error", "message": IMPORT_ERROR[len("oloproof: error: "):-1]}
    assert done.stderr == IMPORT_ERROR


@pytest.mark.parametrize(("fail", "line"), [
    ("MemoryError", "oloproof: error: the oloproof_nb package could not be imported: MemoryError\n"),
    ("exit", "oloproof: error: this package needs another Python\n"),
])
def test_a_package_that_cannot_be_imported_is_exit_2_for_every_command(oloproof: Callable[..., Any],
                                                                       tmp_path: Path, fail: str,
                                                                       line: str) -> None:
    """``oloproof gate`` exited 1, its BLOCK, with the traceback (or the module's message): an error is 2."""
    for args in (["gate", str(tmp_path / "run")], ["receipt", str(write_contract(tmp_path / "task"))]):
        done = oloproof(*args, fail=fail)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", line), args


@pytest.mark.parametrize("fail", ["exit 0", "exit 1"])
@pytest.mark.parametrize("as_json", [False, True])
def test_a_module_that_exits_with_a_number_while_the_package_imports_is_exit_2_naming_it(
        oloproof: Callable[..., Any], tmp_path: Path, fail: str, as_json: bool) -> None:
    """``sys.exit(1)`` in a module the package imports was the command's exit code: ``oloproof gate``'s BLOCK with no
    line (``sys.exit(0)``: PASS, for a gate that never ran)."""
    done = oloproof("gate", str(tmp_path / "run"), *(["--json"] if as_json else []), fail=fail)
    message = (f"the oloproof_nb package could not be imported: SystemExit: {fail[-1]}, raised in module "
               f"'sitecustomize' ({tmp_path / 'hooks' / 'sitecustomize.py'})")
    assert (done.returncode, done.stderr) == (2, f"oloproof: error: {message}\n")
    assert done.stdout == (json.dumps({"error": "error", "message": message}) + "\n" if as_json else "")



def test_a_module_that_exits_without_a_code_while_the_package_imports_is_exit_2_naming_it(
        oloproof: Callable[..., Any], tmp_path: Path) -> None:
    """``sys.exit()`` is exit 0, a PASS for a gate that never ran: the line names the exit without a code."""
    done = oloproof("gate", str(tmp_path / "run"), fail="exit none")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("oloproof: error: the oloproof_nb package could not be imported: SystemExit, raised in "
                           f"module 'sitecustomize' ({tmp_path / 'hooks' / 'sitecustomize.py'})\n")

#: Runs the console script's entry with the package imported and its parser broken: a bug of the command's raised
#: before the command's own handling of its bugs.
BROKEN_PARSER = textwrap.dedent('''
    import sys

    import oloproof_nb.cli.dispatch as dispatch


    def build_parser(**_):
        raise RuntimeError("parser broken\\nat \\x1b[31mline 2")


    dispatch.build_parser = build_parser
    sys.argv = ["oloproof", *sys.argv[1:]]
    import _oloproof_nb_entry

    _oloproof_nb_entry.main()
''')


@pytest.mark.parametrize("as_json", [False, True])
def test_a_bug_after_the_package_is_imported_keeps_its_traceback(tmp_path: Path, as_json: bool) -> None:
    """A bug the command raised past its own handling was ``oloproof: error: RuntimeError: …``: an error of the
    user's, its traceback in no file. It is an internal error naming the file that keeps the traceback, as the
    command says of a bug it handles."""
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONWARNINGS": "ignore"}
    args = ["receipt", str(write_contract(tmp_path / "task")), *(["--json"] if as_json else [])]
    done = subprocess.run([sys.executable, "-c", BROKEN_PARSER, *args], capture_output=True, text=True, env=env,
                          timeout=120)
    kept = sorted(tmp_path.glob("oloproof-internal-error-*.txt"))
    assert len(kept) == 1, done.stderr
    line = (f"oloproof: internal error: RuntimeError: parser broken at \\x1b[31mline 2 (a bug in oloproof_nb; the "
            f"traceback is in {kept[0]})\n")
    assert (done.returncode, done.stderr) == (2, line)
    assert done.stdout == ("" if not as_json else json.dumps({"error": "internal error",
                                                                "message": line[len("oloproof: internal error: "):-1]})
                           + "\n")
    text = kept[0].read_text(encoding="utf-8")
    assert text.startswith("Traceback (most recent call last):") and "in build_parser" in text
    assert text.rstrip().endswith("RuntimeError: parser broken\nat \x1b[31mline 2")
